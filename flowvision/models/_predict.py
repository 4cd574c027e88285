"""``flowvision predict`` and ``flowvision models``."""
import json
import sys
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

DEFAULT_MODEL = "tf_efficientnet_lite0"


def _read_rgb(path: str):
    from PIL import Image
    with Image.open(path) as im:
        return im.convert("RGB")


def classify(images: Sequence[str], model_name: str = DEFAULT_MODEL, topk: int = 5, model: Any = None,
             batch_size: int = 16, errors: Optional[List[Tuple[str, str]]] = None):
    """Top-k ImageNet labels of image files with a model's own preprocessing.

    Args:
        images: image file paths.
        model_name: a registered model name (``name`` or ``name.tag``); pretrained weights are loaded.
        topk: how many labels per image.
        model: an already-built model to use instead of ``model_name``.
        batch_size: images per forward pass.
        errors: if given, images that cannot be read are skipped and ``(path, message)`` is appended here;
            otherwise the first unreadable image raises.

    Returns:
        ``[(path, [(label, probability, class_index), ...]), ...]`` in the order of ``images``.
    """
    from flowvision import backend as flow

    from ._data import create_eval_transform, imagenet_class_names, resolve_data_config, softmax_np
    from ._factory import create_model

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if model is None:
        model = create_model(model_name, pretrained=True)
    model.eval()
    transform = create_eval_transform(**resolve_data_config(model))
    num_classes = getattr(model, "num_classes", 1000)
    names = imagenet_class_names() if num_classes == 1000 else [f"class {i}" for i in range(num_classes)]
    topk = max(1, min(int(topk), num_classes))
    results = []
    for start in range(0, len(images), batch_size):
        batch, tensors = [], []
        for path in images[start:start + batch_size]:
            try:
                tensors.append(transform(_read_rgb(path)))
                batch.append(path)
            except (OSError, ValueError) as e:  # PIL's UnidentifiedImageError is an OSError
                if errors is None:
                    raise
                errors.append((path, f"cannot read image: {e}"))
        if not tensors:
            continue
        with flow.no_grad():
            logits = model(flow.stack(tensors)).numpy()
        for path, row in zip(batch, logits):
            probs = softmax_np(row)
            order = np.argsort(-probs, kind="stable")[:topk]
            results.append((path, [(names[i], float(probs[i]), int(i)) for i in order]))
    return results


def _print_classification(results, model_name, as_json):
    if as_json:
        print(json.dumps([{"path": p, "model": model_name, "task": "classification",
                           "top": [{"label": lb, "prob": pr, "index": ix} for lb, pr, ix in top]}
                          for p, top in results], indent=1))
        return
    for path, top in results:
        print(f"{path}  ({model_name})")
        for rank, (label, prob, idx) in enumerate(top, 1):
            print(f"  {rank}. {prob * 100:6.2f}%  {label}  [{idx}]")


def predict_main(args) -> int:
    """``flowvision predict``: exit status 0, 1 (some images or the model failed) or 2 (bad arguments)."""
    from ._predict_inputs import expand_image_args
    from ._predict_tasks import model_task, run_dense_task

    paths, problems = expand_image_args(args.image)
    for msg in problems:
        print(f"flowvision predict: {msg}", file=sys.stderr)
    if problems or not paths:
        return 2
    if args.batch_size < 1:
        print(f"flowvision predict: --batch-size must be >= 1, got {args.batch_size}", file=sys.stderr)
        return 2
    task = model_task(args.model)
    if task is None:
        from ._registry import model_entrypoint
        try:
            model_entrypoint(args.model)
        except RuntimeError as e:
            print(f"flowvision predict: {e}", file=sys.stderr)
        return 2
    if task == "classification" and args.save_dir:
        print("flowvision predict: --save-dir draws boxes or masks; it needs a detection or segmentation model "
              "(flowvision models --task detection)", file=sys.stderr)
        return 2
    errors: List[Tuple[str, str]] = []
    try:
        if task == "classification":
            model = None
            if args.checkpoint or not args.pretrained:
                from ._factory import create_model
                model = create_model(args.model, pretrained=False)
                if args.checkpoint:
                    from ._builder import load_checkpoint
                    load_checkpoint(model, args.checkpoint)
            results = classify(paths, args.model, args.topk, model=model, batch_size=args.batch_size, errors=errors)
            _print_classification(results, args.model, args.json)
        else:
            run_dense_task(task, paths, args, errors)
    except Exception as e:  # weights missing offline, a damaged checkpoint, ...
        print(f"flowvision predict: {type(e).__name__}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    for path, msg in errors:
        print(f"flowvision predict: {path}: {msg}", file=sys.stderr)
    return 1 if errors else 0


def _fmt_params(n):
    return f"{n / 1e6:.1f}M" if n is not None else "?"


def models_main(args) -> int:
    """``flowvision models``: a table of registered models (params, GFLOPs, input, weights availability)."""
    from ._availability import weights_availability, zoo_stats
    from ._registry import get_pretrained_cfg, list_models
    if args.pretrained:
        names = list_models(args.pattern or "", pretrained=True)
    else:  # every name create_model accepts: registered models, aliases (the original flowvision's), builders
        from ._original_zoo import resolvable_names
        names = resolvable_names(args.pattern or "")
    if not names:
        print(f"no models match {args.pattern!r}", file=sys.stderr)
        return 1
    rows = []
    for n in names:
        try:
            cfg = get_pretrained_cfg(n)
        except RuntimeError:  # a torchvision or task builder: no timm cfg
            cfg = None
        st = zoo_stats(n) or {}
        params = _fmt_params(st.get("params")) if st else "?"
        gflops = f"{st['gflops']:.2f}" if st.get("gflops") is not None else "?"
        if cfg is None:
            rows.append((n, params, gflops, "", "", "", "-"))
            continue
        size = "x".join(str(s) for s in cfg.input_size[1:])
        rows.append((n, params, gflops, size, f"{cfg.crop_pct:g}", cfg.interpolation, weights_availability(cfg)))
    head = ("model", "params", "GFLOPs", "input", "crop", "interp", "weights")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    offline = sum(r[-1].startswith("offline") for r in rows)
    print(f"{len(rows)} model{'s' if len(rows) != 1 else ''}; weights loadable without network now: {offline} "
          "(offline:package = an installed package, offline:cache = already downloaded; online = needs a download)")
    return 0
