"""Tiny on-disk datasets in the original formats, so scripts that open real dataset paths run offline."""
from __future__ import annotations

import os
import struct

import numpy as np
from PIL import Image


def write_mnist_raw(root: str, n_train: int = 256, n_test: int = 128, folder: str = "MNIST") -> str:
    """Write ``root/<folder>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte`` (uncompressed idx files).

    Class ``k`` is a bright bar at row band ``k`` over noise, so a model can learn it in a few steps.
    Returns the raw folder.
    """
    raw = os.path.join(root, folder, "raw")
    os.makedirs(raw, exist_ok=True)
    for prefix, n, seed in (("train", n_train, 0), ("t10k", n_test, 1)):
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for k in range(10):
            images[labels == k, 2 + 2 * k:4 + 2 * k, 4:24] = 255
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    return raw


def write_image_folder(root: str, classes=("a", "b"), per_class: int = 4, size=(40, 48), seed: int = 0) -> str:
    """Write ``root/<class>/<i>.png`` RGB images (torchvision ImageFolder layout); returns ``root``."""
    rng = np.random.default_rng(seed)
    for c in classes:
        os.makedirs(os.path.join(root, c), exist_ok=True)
        for i in range(per_class):
            arr = rng.integers(0, 256, (size[0], size[1], 3), dtype=np.uint8)
            Image.fromarray(arr).save(os.path.join(root, c, f"{i}.png"))
    return root
