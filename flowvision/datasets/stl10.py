"""STL10 from its binary files (``stl10_binary/*.bin``)."""
import os
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._base import ArchiveFilesMixin
from .utils import CorruptDatasetError, DatasetNotFoundError, verify_str_arg
from .vision import VisionDataset

__all__ = ["STL10"]

_IMG_BYTES = 3 * 96 * 96


class STL10(ArchiveFilesMixin, VisionDataset):
    """`STL10 <https://cs.stanford.edu/~acoates/stl10/>`_: 96x96 colour images, 10 classes plus unlabeled data.

    Args:
        root: the directory holding ``stl10_binary``.
        split: ``train``, ``train+unlabeled``, ``unlabeled`` or ``test``.
        folds: one of the 10 predefined 1k-sample training folds (``fold_indices.txt``), or None for all.
        transform: applied to the PIL image.
        target_transform: applied to the target (-1 for unlabeled images).
        download: fetch and safely extract the md5-verified archive when missing.
    """

    base_folder = "stl10_binary"
    url = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
    filename = "stl10_binary.tar.gz"
    tgz_md5 = "91f7769df0f17e558f3565bffb0c7dfb"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    train_list = [
        ["train_X.bin", "918c2871b30a85fa023e0c44e0bee87f"],
        ["train_y.bin", "5a34089d4802c674881badbb80307741"],
        ["unlabeled_X.bin", "5242ba1fed5e4be9e1e742405eb56ca4"],
    ]
    test_list = [["test_X.bin", "7f263ba9f9e0b06b93213547f721ac82"], ["test_y.bin", "36f9794fa4beb8a2c72628de14fa638e"]]
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(self, root: Union[str, Path], split: str = "train", folds: Optional[int] = None,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        if download:
            self.download()
        elif not self._check_integrity():
            raise DatasetNotFoundError(f"Dataset not found or corrupted in {os.path.join(self.root, self.base_folder)}."
                                       f" You can use download=True to download it ({self.url}, md5 {self.tgz_md5})")
        if self.split in ("train", "train+unlabeled"):
            self.data, self.labels = self._loadfile("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if self.split == "train+unlabeled":
                unlabeled, _ = self._loadfile("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                self.labels = np.concatenate((self.labels, np.full(len(unlabeled), -1, dtype=np.int64)))
        elif self.split == "unlabeled":
            self.data, _ = self._loadfile("unlabeled_X.bin")
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self._loadfile("test_X.bin", "test_y.bin")
        class_file = os.path.join(self.root, self.base_folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    @staticmethod
    def _verify_folds(folds: Optional[int]) -> Optional[int]:
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError(f"Value for argument folds should be in the range [0, 10), but got {folds}.")
        raise ValueError(f"Expected type None or int for argument folds, but got type {type(folds)}.")

    def _loadfile(self, data_file: str, labels_file: Optional[str] = None) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        labels = None
        if labels_file:
            labels = np.fromfile(os.path.join(self.root, self.base_folder, labels_file), dtype=np.uint8) - 1
        path = os.path.join(self.root, self.base_folder, data_file)
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size % _IMG_BYTES:
            raise CorruptDatasetError(f"{path}: {raw.size} bytes is not a whole number of 3x96x96 images "
                                      "(truncated or corrupt)")
        images = raw.reshape(-1, 3, 96, 96).transpose(0, 1, 3, 2)  # stored column-major per channel
        if labels is not None and len(labels) != len(images):
            raise CorruptDatasetError(f"{path}: {len(images)} images but {len(labels)} labels in {labels_file}")
        return images, labels

    def _load_folds(self, folds: Optional[int]) -> None:
        if folds is None:
            return
        path = os.path.join(self.root, self.base_folder, self.folds_list_file)
        with open(path) as f:
            line = f.read().splitlines()[folds]
        idx = np.array(line.split(), dtype=np.int64)
        self.data = self.data[idx]
        if self.labels is not None:
            self.labels = self.labels[idx]

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, int target or -1 / None)``."""
        img = Image.fromarray(np.transpose(self.data[index], (1, 2, 0)))
        target = int(self.labels[index]) if self.labels is not None else None
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return self.data.shape[0]

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
