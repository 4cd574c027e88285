"""Classify every image in a folder with a pretrained model (offline by default: tf_efficientnet_lite0's weights
install with flowvision).

    python examples/classify_folder.py examples/ --model tf_efficientnet_lite0 --batch-size 8
"""
import argparse
import os

import numpy as np
from PIL import Image

import flowvision
from flowvision import backend as flow

EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args()

    paths = sorted(os.path.join(root, f) for root, _, files in os.walk(args.folder) for f in files
                   if f.lower().endswith(EXTENSIONS))
    model = flowvision.models.create_model(args.model, pretrained=True).eval()
    # the preprocessing the weights were trained with: input size, resize/crop, interpolation, mean/std
    transform = flowvision.data.create_transform(**flowvision.data.resolve_data_config(model=model))
    labels = flowvision.models.imagenet_class_names()
    for start in range(0, len(paths), args.batch_size):
        batch = paths[start:start + args.batch_size]
        x = flow.stack([transform(Image.open(p).convert("RGB")) for p in batch])
        with flow.no_grad():
            probs = model(x).softmax(-1).numpy()
        for p, row in zip(batch, probs):
            top = int(np.argmax(row))
            print(f"{p}: {labels[top]} ({row[top] * 100:.1f}%)")


if __name__ == "__main__":
    main()
