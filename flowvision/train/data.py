"""Datasets for ``flowvision train``: an image folder, torchvision's CIFAR files, or scikit-learn's bundled
handwritten digits (real data that installs with ``pip install scikit-learn``, no download).

Every dataset yields ``(PIL image, int label)`` and has a settable ``transform`` so
``flowvision.data.create_loader`` can install its transform, and ``classes`` for the head-size check.
"""
from __future__ import annotations

import os
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
from PIL import Image

__all__ = ["ArrayImageDataset", "load_digits_split", "create_dataset", "DATASETS"]

#: named datasets understood by :func:`create_dataset` besides ``folder``
DATASETS = ("folder", "digits", "cifar10", "cifar100")


class ArrayImageDataset:
    """Images held in memory as a uint8 ``(N, H, W, C)`` array, served as RGB PIL images.

    Args:
        images: uint8 array ``(N, H, W)`` or ``(N, H, W, 1|3)``.
        targets: ``N`` integer labels.
        classes: class names (their count is the number of classes).
        transform: applied to each PIL image (``create_loader`` replaces it).
    """

    def __init__(self, images: np.ndarray, targets: Sequence[int], classes: Sequence[str],
                 transform: Optional[Callable] = None):
        images = np.asarray(images)
        if images.dtype != np.uint8 or images.ndim not in (3, 4):
            raise ValueError(f"images must be uint8 (N, H, W[, C]), got {images.dtype} {images.shape}")
        if images.ndim == 3:
            images = images[..., None]
        if images.shape[-1] == 1:
            images = np.repeat(images, 3, axis=-1)
        self.images = np.ascontiguousarray(images)
        self.targets = [int(t) for t in targets]
        if len(self.targets) != len(self.images):
            raise ValueError(f"{len(self.images)} images but {len(self.targets)} targets")
        self.classes = list(classes)
        self.transform = transform

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int) -> Tuple[object, int]:
        img = Image.fromarray(self.images[i], "RGB")
        if self.transform is not None:
            img = self.transform(img)
        return img, self.targets[i]


def load_digits_split(size: int = 32, val_fraction: float = 0.2, split_seed: int = 0
                      ) -> Tuple[ArrayImageDataset, ArrayImageDataset]:
    """scikit-learn's 1,797 real 8x8 handwritten digits, upsampled to ``size``, split train/validation.

    The split is ``sklearn.model_selection.train_test_split`` stratified by label with ``split_seed``
    (80/20 by default), so every run and every framework sees the same held-out images.

    Returns:
        ``(train, validation)`` :class:`ArrayImageDataset` with classes ``'0'``..``'9'``.
    """
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("the 'digits' dataset ships with scikit-learn: pip install \"flowvision[train]\"") from e
    d = load_digits()
    # 0..16 gray levels -> 0..255, then one bilinear upsampling per image (done once, not per epoch)
    small = np.round(d.images * (255.0 / 16.0)).astype(np.uint8)
    big = np.stack([np.asarray(Image.fromarray(im, "L").resize((size, size), Image.BILINEAR)) for im in small])
    idx = np.arange(len(big))
    tr, va = train_test_split(idx, test_size=val_fraction, random_state=split_seed, stratify=d.target)
    classes = [str(c) for c in range(10)]
    return (ArrayImageDataset(big[tr], d.target[tr], classes), ArrayImageDataset(big[va], d.target[va], classes))


def _folder_split(root: str, split: str):
    from flowvision.datasets import ImageFolder
    path = os.path.join(root, split) if split else root
    if not os.path.isdir(path):
        raise FileNotFoundError(f"dataset folder {path!r} does not exist (expected <data-dir>/<split>/<class>/*.jpg)")
    return ImageFolder(path)


def create_dataset(name: str, root: Optional[str], split: str, is_training: bool, img_size: int = 32,
                   split_seed: int = 0):
    """Build one split of a dataset by name.

    Args:
        name: ``folder`` (``root/split/<class>/image``), ``digits``, ``cifar10`` or ``cifar100``
            (torchvision's python-pickle batches under ``root``).
        root: data directory (unused for ``digits``).
        split: folder name for ``folder``; for the others ``train`` selects the training part and
            anything else the held-out part.
        is_training: only used to pick the part of ``digits``/``cifar`` when ``split`` is empty.
        img_size: ``digits`` upsampling size.
        split_seed: ``digits`` train/validation split seed.

    Returns:
        A dataset with ``transform``, ``classes`` and ``__getitem__ -> (PIL image, label)``.
    """
    name = name.lower()
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    train_part = split == "train" if split else is_training
    if name == "digits":
        tr, va = load_digits_split(size=img_size, split_seed=split_seed)
        return tr if train_part else va
    if not root:
        raise ValueError(f"dataset {name!r} needs --data-dir")
    if name == "folder":
        return _folder_split(root, split)
    from flowvision.datasets import CIFAR10, CIFAR100
    cls = CIFAR10 if name == "cifar10" else CIFAR100
    return cls(root, train=train_part)


def dataset_classes(ds) -> List[str]:
    """The class names of a dataset (``classes`` attribute), or numbered names from its largest label."""
    classes = getattr(ds, "classes", None)
    if classes:
        return list(classes)
    targets = getattr(ds, "targets", None)
    if targets is None:
        raise ValueError("the dataset has neither 'classes' nor 'targets'; cannot tell its class count")
    return [str(i) for i in range(int(max(targets)) + 1)]
