"""Detect objects in an image and save it with the boxes drawn.

    python examples/detect_draw.py examples/coffee.jpg drawn.png --model fasterrcnn_mobilenet_v3_large_fpn

Pretrained COCO weights are downloaded on first use (``--no-pretrained`` tries the pipeline with random weights).
"""
import argparse

import numpy as np
from PIL import Image

import flowvision
from flowvision import backend as flow
from flowvision.utils import draw_bounding_boxes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image")
    ap.add_argument("out")
    ap.add_argument("--model", default="ssdlite320_mobilenet_v3_large")
    ap.add_argument("--score-thresh", type=float, default=0.5)
    ap.add_argument("--no-pretrained", action="store_true")
    args = ap.parse_args()

    if args.no_pretrained:
        model = flowvision.models.get_model(args.model, weights=None, weights_backbone=None)
        categories = None
    else:
        weights = flowvision.models.get_model_weights(args.model).DEFAULT
        model = flowvision.models.get_model(args.model, weights=weights)
        categories = weights.meta["categories"]
    model.eval()

    rgb = np.asarray(Image.open(args.image).convert("RGB"))
    x = flow.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1), dtype=np.float32) / 255.0)
    with flow.no_grad():
        (det,) = model([x])
    keep = det["scores"] >= args.score_thresh
    boxes, labels, scores = det["boxes"][keep], det["labels"][keep].tolist(), det["scores"][keep].tolist()
    names = [f"{categories[i] if categories else i} {s:.2f}" for i, s in zip(labels, scores)]
    drawn = draw_bounding_boxes(flow.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1))), boxes,
                                labels=names, width=3)
    Image.fromarray(np.ascontiguousarray(drawn.numpy().transpose(1, 2, 0))).save(args.out)
    print(f"{len(names)} detection(s) -> {args.out}")
    for n, b in zip(names, boxes.tolist()):
        print(f"  {n}: {[round(v, 1) for v in b]}")


if __name__ == "__main__":
    main()
