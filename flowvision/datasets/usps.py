"""USPS (bz2-compressed libsvm text) and SEMEION (whitespace-separated text) handwritten digits."""
import bz2
import os
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
from PIL import Image

from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_url
from .vision import VisionDataset

__all__ = ["USPS", "SEMEION"]


def _parse_libsvm(lines, n_features: int, path: str) -> Tuple[np.ndarray, np.ndarray]:
    """Dense ``(N, n_features)`` float32 values and the int labels of libsvm ``label idx:value ...`` lines."""
    rows = [ln.split() for ln in lines if ln.strip()]
    labels = np.empty(len(rows), dtype=np.int64)
    values = np.zeros((len(rows), n_features), dtype=np.float32)
    try:
        for i, row in enumerate(rows):
            labels[i] = int(float(row[0]))
            pairs = np.array([p.split(b":") for p in row[1:]], dtype=np.float64).reshape(-1, 2)
            values[i, pairs[:, 0].astype(np.int64) - 1] = pairs[:, 1]
    except (ValueError, IndexError) as e:
        raise CorruptDatasetError(f"{path}: line {i + 1} is not a libsvm record with {n_features} features: {e}") \
            from e
    return values, labels


class USPS(VisionDataset):
    """`USPS <https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#usps>`_ 16x16 grey digits.

    Args:
        root: the directory holding ``usps.bz2`` (train) and ``usps.t.bz2`` (test).
        train: the 7291 training digits, else the 2007 test digits.
        transform: applied to the PIL image (mode ``L``).
        target_transform: applied to the int target.
        download: fetch the md5-verified file when missing.

    Values in [-1, 1] are mapped to uint8 as ``(v + 1) / 2 * 255`` in float32, truncated, like torchvision.
    """

    split_list = {
        "train": ["https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2", "usps.bz2",
                  "ec16c51db3855ca6c91edd34d0e9b197"],
        "test": ["https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2", "usps.t.bz2",
                 "8ea070ee2aca1ac39742fdd1ef5ed118"],
    }

    def __init__(self, root: Union[str, Path], train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        url, filename, checksum = self.split_list["train" if train else "test"]
        full_path = os.path.join(self.root, filename)
        if download and not os.path.exists(full_path):
            download_url(url, self.root, filename, md5=checksum)
        if not os.path.isfile(full_path):
            raise DatasetNotFoundError(f"Dataset not found: {full_path} (md5 {checksum}). You can use download=True "
                                       f"to download it from {url}")
        try:
            with bz2.open(full_path) as fp:
                lines = fp.read().splitlines()
        except (OSError, EOFError) as e:
            raise CorruptDatasetError(f"{full_path} cannot be decompressed (truncated or corrupt): {e}") from e
        values, labels = _parse_libsvm(lines, 256, full_path)
        self.data = ((values.reshape(-1, 16, 16) + 1) / 2 * 255).astype(np.uint8)
        self.targets = [int(t) - 1 for t in labels]

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL L image, int digit)``."""
        img, target = Image.fromarray(self.data[index]), int(self.targets[index])
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.data)


class SEMEION(VisionDataset):
    """`SEMEION <http://archive.ics.uci.edu/ml/datasets/semeion+handwritten+digit>`_ 16x16 binary digits.

    Args:
        root: the directory holding ``semeion.data`` (256 pixel values then a 10-way one-hot label per line).
        transform: applied to the PIL image (mode ``L``).
        target_transform: applied to the int target.
        download: fetch the md5-verified file when missing (default True, like torchvision).
    """

    url = "http://archive.ics.uci.edu/ml/machine-learning-databases/semeion/semeion.data"
    filename = "semeion.data"
    md5_checksum = "cb545d371d2ce14ec121470795a77432"

    def __init__(self, root: Union[str, Path], transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = True) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        if download:
            self.download()
        if not self._check_integrity():
            raise DatasetNotFoundError(f"Dataset not found or corrupted: {os.path.join(self.root, self.filename)} "
                                       f"(md5 {self.md5_checksum}). You can use download=True to download it from "
                                       f"{self.url}")
        path = os.path.join(self.root, self.filename)
        try:
            data = np.loadtxt(path, ndmin=2)
        except ValueError as e:
            raise CorruptDatasetError(f"{path}: not a SEMEION text file: {e}") from e
        if data.shape[1] != 266:
            raise CorruptDatasetError(f"{path}: expected 266 values per line, got {data.shape[1]}")
        self.data = (data[:, :256] * 255).astype("uint8").reshape(-1, 16, 16)
        self.labels = np.nonzero(data[:, 256:])[1]

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL L image, int digit)``."""
        img, target = Image.fromarray(self.data[index]), int(self.labels[index])
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.md5_checksum)

    def download(self) -> None:
        """Download the md5-verified file unless it is already there."""
        if self._check_integrity():
            return
        download_url(self.url, self.root, self.filename, self.md5_checksum)
