"""``flowvision predict`` for detection and segmentation models: results as text/JSON, drawn images saved."""
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

__all__ = ["model_task", "run_dense_task"]


def model_task(name: str) -> Optional[str]:
    """``"classification"``, ``"detection"``, ``"segmentation"`` or None for a name no registry knows."""
    from . import detection, segmentation
    from ._api import list_builders
    from ._registry import is_model

    if name in list_builders(detection):
        return "detection"
    if name in list_builders(segmentation):
        return "segmentation"
    if is_model(name):
        return "classification"
    return None


def _build(name: str, pretrained: bool, checkpoint: Optional[str]) -> Tuple[Any, List[str]]:
    """(model in eval mode, category names) for a torchvision detection/segmentation builder."""
    from flowvision import hub

    from ._api import get_model, get_model_weights

    if pretrained and not checkpoint:
        weights = get_model_weights(name)["DEFAULT"]
        model = get_model(name, weights=weights)
        categories = list(weights.meta["categories"])
    else:
        model = get_model(name, weights=None, weights_backbone=None)
        if checkpoint:
            model.load_state_dict(hub.to_backend(hub.load_checkpoint(checkpoint)))
        categories = []
    return model.eval(), categories


def _label(categories: Sequence[str], index: int) -> str:
    return categories[index] if 0 <= index < len(categories) else f"class {index}"


def _to_chw_float(rgb: np.ndarray):
    from flowvision import backend as flow
    return flow.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1), dtype=np.float32) / 255.0)


def _detect(model, images: List[np.ndarray], thresh: float, categories: Sequence[str]) -> List[List[Dict]]:
    from flowvision import backend as flow
    with flow.no_grad():
        outs = model([_to_chw_float(im) for im in images])
    results = []
    for out in outs:
        boxes = out["boxes"].numpy()
        scores = out["scores"].numpy()
        labels = out["labels"].numpy()
        keep = scores >= thresh
        results.append([{"box": [round(float(v), 2) for v in b], "label": _label(categories, int(c)),
                         "index": int(c), "score": round(float(s), 4)}
                        for b, s, c in zip(boxes[keep], scores[keep], labels[keep])])
    return results


def _segment(model, image: np.ndarray) -> np.ndarray:
    """(H, W) class index per pixel."""
    from flowvision import backend as flow
    x = (image.astype(np.float32) / 255.0 - np.asarray(IMAGENET_MEAN, np.float32)) / np.asarray(IMAGENET_STD,
                                                                                                np.float32)
    with flow.no_grad():
        out = model(flow.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None])))["out"].numpy()[0]
    return out.argmax(0)


def _save_path(save_dir: str, path: str, used: set) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    name, i = f"{stem}.png", 1
    while name in used:  # same file name in two input directories
        i += 1
        name = f"{stem}-{i}.png"
    used.add(name)
    return os.path.join(save_dir, name)


def _write(image_chw: np.ndarray, dst: str) -> None:
    from PIL import Image
    Image.fromarray(np.ascontiguousarray(image_chw.transpose(1, 2, 0))).save(dst)


def run_dense_task(task: str, paths: Sequence[str], args: Any, errors: List[Tuple[str, str]]) -> None:
    """Run a detection or segmentation model over ``paths`` and print (and with ``--save-dir`` draw) the results.

    Args:
        task: ``"detection"`` or ``"segmentation"``.
        paths: image files.
        args: the parsed ``flowvision predict`` arguments (model, pretrained, checkpoint, batch_size, json,
            save_dir, score_thresh).
        errors: ``(path, message)`` is appended for every image that cannot be read.
    """
    from PIL import Image

    from flowvision.utils import draw_bounding_boxes, draw_segmentation_masks

    model, categories = _build(args.model, args.pretrained, args.checkpoint)
    if args.save_dir:
        os.makedirs(args.save_dir, exist_ok=True)
    used: set = set()
    records = []
    for start in range(0, len(paths), args.batch_size):
        batch, images = [], []
        for p in paths[start:start + args.batch_size]:
            try:
                with Image.open(p) as pil:
                    images.append(np.asarray(pil.convert("RGB")))
                batch.append(p)
            except (OSError, ValueError) as e:
                errors.append((p, f"cannot read image: {e}"))
        if not images:
            continue
        if task == "detection":
            for p, im, dets in zip(batch, images, _detect(model, images, args.score_thresh, categories)):
                rec = {"path": p, "model": args.model, "task": task, "detections": dets}
                if args.save_dir:
                    drawn = draw_bounding_boxes(im.transpose(2, 0, 1).copy(),
                                                np.asarray([d["box"] for d in dets], np.float32).reshape(-1, 4),
                                                labels=[f"{d['label']} {d['score']:.2f}" for d in dets], width=2)
                    rec["saved"] = _save_path(args.save_dir, p, used)
                    _write(np.asarray(drawn), rec["saved"])
                records.append(rec)
        else:
            for p, im in zip(batch, images):
                classes = _segment(model, im)
                present, counts = np.unique(classes, return_counts=True)
                rec = {"path": p, "model": args.model, "task": task,
                       "classes": [{"label": _label(categories, int(c)), "index": int(c), "pixels": int(n)}
                                   for c, n in zip(present, counts)]}
                if args.save_dir:
                    shown = [int(c) for c in present if c != 0]  # class 0 is the background
                    masks = np.stack([classes == c for c in shown]) if shown else np.zeros((0,) + classes.shape, bool)
                    drawn = draw_segmentation_masks(im.transpose(2, 0, 1).copy(), masks, alpha=0.5)
                    rec["saved"] = _save_path(args.save_dir, p, used)
                    _write(np.asarray(drawn), rec["saved"])
                records.append(rec)
    if args.json:
        print(json.dumps(records, indent=1))
        return
    for rec in records:
        print(f"{rec['path']}  ({rec['model']}, {task})" + (f" -> {rec['saved']}" if "saved" in rec else ""))
        if task == "detection":
            for d in rec["detections"]:
                print(f"  {d['score'] * 100:6.2f}%  {d['label']}  [{d['index']}]  box {d['box']}")
            if not rec["detections"]:
                print(f"  no detection scored >= {args.score_thresh}")
        else:
            for c in rec["classes"]:
                print(f"  {c['pixels'] / sum(x['pixels'] for x in rec['classes']) * 100:6.2f}% of pixels  "
                      f"{c['label']}  [{c['index']}]")
