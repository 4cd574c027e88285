"""Dataset-scale batch inference on Ray Data: a captured model per actor, fed by ``map_batches``.

    import ray, ray.data
    from flowvision.distributed.ray import BatchClassifier
    ds = ray.data.read_images("s3://bucket/images/", mode="RGB", include_paths=True)
    preds = ds.map_batches(BatchClassifier, fn_constructor_kwargs={"model_name": "resnet50"},
                           batch_size=32, concurrency=4, num_cpus=2)

Each actor builds the model once, captures it with ``flowvision.compile`` and then classifies whole batches;
Ray schedules the actors on the local machine or on a cluster (``ray.init(address=...)``) and restarts an actor
that crashes, retrying its batch. The command line is ``flowvision predict --ray DIR_OR_GLOB --out FILE``.
Install: ``pip install "flowvision[ray]"``.
"""
from __future__ import annotations

import glob
import json
import math
import os
import sys
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

INSTALL_HINT = 'pip install "flowvision[ray]"  (brings ray[data], i.e. ray, pyarrow and pandas)'
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif", ".ppm")

__all__ = ["BatchClassifier", "image_paths", "classify_dataset", "write_results", "predict_main"]


def _import_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as e:
        raise ImportError(f"flowvision.distributed.ray needs Ray Data: {INSTALL_HINT}") from e
    return ray


class BatchClassifier:
    """Callable class for ``Dataset.map_batches``: classifies a batch of decoded images with a captured model.

    Args:
        model_name: registry name (``flowvision models``), optionally with a weights tag.
        topk: labels kept per image.
        pretrained: load the model's weights (local file, cache, installed package or hub, as ``create_model``).
        compile: capture the model with ``flowvision.compile`` (False runs it eagerly).
        num_threads: kernel threads in this actor (default: ``FLOWVISION_NUM_THREADS`` or the CPUs it may use;
            give the same number as the actor's ``num_cpus``).
        image_column: the column holding HWC uint8 images (``read_images`` calls it ``image``).
        path_column: a column passed through to the output when present.
        model_kwargs: extra keyword arguments of ``create_model``.
    """

    def __init__(self, model_name: str = "tf_efficientnet_lite0", topk: int = 5, pretrained: bool = True,
                 compile: bool = True, num_threads: Optional[int] = None, image_column: str = "image",
                 path_column: str = "path", model_kwargs: Optional[Dict[str, Any]] = None):
        from flowvision import backend as flow
        from flowvision.models._data import create_eval_transform, imagenet_class_names, resolve_data_config
        from flowvision.models._factory import create_model

        if num_threads:
            flow.set_num_threads(int(num_threads))
        model = create_model(model_name, pretrained=pretrained, **(model_kwargs or {})).eval()
        cfg = resolve_data_config(model)
        self.transform = create_eval_transform(**cfg)
        n_cls = int(getattr(model, "num_classes", 1000))
        self.names = np.array(imagenet_class_names() if n_cls == 1000 else [f"class {i}" for i in range(n_cls)],
                              dtype=object)
        self.topk = max(1, min(int(topk), n_cls))
        self.image_column, self.path_column = image_column, path_column
        if compile:
            self.run = flow.compile(model, flow.zeros(1, *cfg["input_size"]))
        else:
            self.run = model
        self.pid = os.getpid()

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        from PIL import Image

        from flowvision import backend as flow
        from flowvision.models._data import softmax_np

        if self.image_column not in batch:
            raise KeyError(f"batch has no {self.image_column!r} column (columns: {sorted(batch)}); read the "
                           "images with ray.data.read_images(..., mode='RGB') or pass image_column=")
        images = batch[self.image_column]
        xs = []
        for img in images:
            arr = np.asarray(img)
            if arr.dtype != np.uint8 or arr.ndim not in (2, 3):
                raise ValueError(f"expected HWC uint8 images, got {arr.dtype} of shape {arr.shape}")
            # the same PIL path as single-image predict, so both give identical inputs
            xs.append(self.transform(Image.fromarray(arr).convert("RGB")))
        with flow.no_grad():
            logits = self.run(flow.stack(xs)).numpy()
        probs = softmax_np(logits)
        order = np.argsort(-probs, axis=1, kind="stable")[:, :self.topk]
        out = {
            "top_indices": order.astype(np.int64),
            "top_probs": np.take_along_axis(probs, order, axis=1).astype(np.float32),
            "top_labels": self.names[order],
            "actor_pid": np.full(len(order), self.pid, np.int64),
        }
        if self.path_column in batch:
            out["path"] = np.asarray(batch[self.path_column])
        return out


def image_paths(source: str) -> List[str]:
    """Image files under a directory (recursive) or matching a glob, sorted; raises when there are none."""
    if os.path.isdir(source):
        found = [os.path.join(root, f) for root, _, files in os.walk(source) for f in files
                 if f.lower().endswith(IMAGE_EXTENSIONS)]
    else:
        found = [p for p in glob.glob(source, recursive=True) if os.path.isfile(p)]
    if not found:
        raise FileNotFoundError(f"no image files found at {source!r} (a directory or a glob such as 'imgs/*.jpg')")
    return sorted(os.path.abspath(p) for p in found)


def classify_dataset(paths: List[str], model_name: str = "tf_efficientnet_lite0", topk: int = 5,
                     actors: int = 2, cpus_per_actor: float = 1, batch_size: int = 16, compile: bool = True,
                     max_restarts: int = 3, read_cpus: float = 0.5, **classifier_kwargs: Any):
    """A Ray Dataset of top-k predictions for ``paths`` (lazy: consume it with ``iter_batches`` or a writer).

    Ray must already be initialised (``ray.init``) with at least ``actors * cpus_per_actor + read_cpus`` CPUs:
    the actors hold their CPUs for the whole run, and image decoding needs some left over or the pipeline
    stalls. A crashed actor is restarted up to ``max_restarts`` times and its batch retried; a model that
    crashes every time fails the job instead of looping forever.
    """
    ray = _import_ray()
    ds = ray.data.read_images(paths, mode="RGB", include_paths=True, num_cpus=read_cpus)
    kwargs = dict(model_name=model_name, topk=topk, compile=compile, num_threads=max(1, round(cpus_per_actor)),
                  **classifier_kwargs)
    with warnings.catch_warnings():
        # Ray Data restarts crashed actors forever by default; bounding it goes through ray_remote_args, which
        # recent releases flag as deprecated while offering no named parameter for it yet
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
        return ds.map_batches(BatchClassifier, fn_constructor_kwargs=kwargs, batch_size=batch_size,
                              compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=cpus_per_actor,
                              batch_format="numpy", max_restarts=max_restarts, max_task_retries=max_restarts)


def write_results(batches, out: str) -> Dict[str, Any]:
    """Write prediction batches to ``out`` (``.parquet`` or ``.jsonl``), sorted by path, atomically.

    Returns a summary: ``{"images": N, "actor_pids": [...]}`` (more pids than actors means Ray restarted one).
    """
    rows: Dict[str, list] = {"path": [], "top_indices": [], "top_labels": [], "top_probs": []}
    pids = set()
    for b in batches:
        rows["path"].extend(str(p) for p in b["path"])
        rows["top_indices"].extend(np.asarray(b["top_indices"]).tolist())
        rows["top_labels"].extend([str(s) for s in r] for r in np.asarray(b["top_labels"]))
        rows["top_probs"].extend(np.asarray(b["top_probs"], np.float64).tolist())
        pids.update(int(p) for p in b["actor_pid"])
    order = sorted(range(len(rows["path"])), key=rows["path"].__getitem__)
    rows = {k: [v[i] for i in order] for k, v in rows.items()}
    tmp = f"{out}.tmp{os.getpid()}"
    if out.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.table(rows), tmp)
    elif out.endswith(".jsonl"):
        with open(tmp, "w", encoding="utf-8") as f:
            for i in range(len(rows["path"])):
                f.write(json.dumps({k: rows[k][i] for k in rows}) + "\n")
    else:
        raise ValueError(f"--out must end in .parquet or .jsonl, got {out!r}")
    os.replace(tmp, out)
    return {"images": len(order), "actor_pids": sorted(pids)}


def predict_main(args) -> int:
    """``flowvision predict --ray SOURCE --out FILE``: returns the process exit code."""
    if not args.out or not args.out.endswith((".parquet", ".jsonl")):
        print("flowvision predict --ray: give --out results.parquet or --out results.jsonl", file=sys.stderr)
        return 2
    try:
        paths = image_paths(args.ray)
        ray = _import_ray()
    except (FileNotFoundError, ImportError) as e:
        print(f"flowvision predict --ray: {e}", file=sys.stderr)
        return 2
    started = False
    if not ray.is_initialized():
        if args.ray_address:
            ray.init(address=args.ray_address, log_to_driver=False)
        else:
            # one CPU on top of the actors' for reading and decoding the images
            ray.init(num_cpus=math.ceil(args.actors * args.cpus_per_actor) + 1, include_dashboard=False,
                     log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        started = True
    try:
        ds = classify_dataset(paths, args.model, args.topk, actors=args.actors, cpus_per_actor=args.cpus_per_actor,
                              batch_size=args.batch_size)
        summary = write_results(ds.iter_batches(batch_size=None, batch_format="numpy"), args.out)
    except Exception as e:  # a model that fails in every retry, unreadable images, ...
        print(f"flowvision predict --ray: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        if started:
            ray.shutdown()
    restarts = max(0, len(summary["actor_pids"]) - args.actors)
    print(f"{summary['images']} images -> {args.out} ({args.model}, {args.actors} actors"
          f"{f', {restarts} actor restart(s) retried by Ray' if restarts else ''})")
    return 0
