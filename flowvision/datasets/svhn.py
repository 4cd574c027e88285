"""SVHN (cropped digits) from its MATLAB files; needs scipy (an optional dependency)."""
import os
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._readers import load_mat
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["SVHN"]


class SVHN(VisionDataset):
    """`SVHN <http://ufldl.stanford.edu/housenumbers/>`_ cropped 32x32 digits; label 10 is mapped to 0.

    Args:
        root: the directory holding ``train_32x32.mat`` / ``test_32x32.mat`` / ``extra_32x32.mat``.
        split: ``train``, ``test`` or ``extra``.
        transform: applied to the PIL image.
        target_transform: applied to the int target.
        download: fetch the md5-verified file when missing.

    Reading the ``.mat`` files needs scipy (``pip install 'flowvision[datasets]'``).
    """

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root: Union[str, Path], split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise DatasetNotFoundError(f"Dataset not found or corrupted: {os.path.join(self.root, self.filename)} "
                                       f"(md5 {self.file_md5}). You can use download=True to download it from "
                                       f"{self.url}")
        path = os.path.join(self.root, self.filename)
        mat = load_mat(path)
        if "X" not in mat or "y" not in mat:
            raise CorruptDatasetError(f"{path}: expected the variables X and y")
        self.data = np.transpose(mat["X"], (3, 2, 0, 1))  # N x C x H x W
        self.labels = mat["y"].astype(np.int64).squeeze(-1) if mat["y"].ndim == 2 else mat["y"].astype(np.int64)
        np.place(self.labels, self.labels == 10, 0)
        if len(self.labels) != len(self.data):
            raise CorruptDatasetError(f"{path}: {len(self.data)} images but {len(self.labels)} labels")

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, int digit)``."""
        img = Image.fromarray(np.transpose(self.data[index], (1, 2, 0)))
        target = int(self.labels[index])
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def download(self) -> None:
        """Download the split's file (md5-verified) unless it is already there."""
        download_url(self.url, self.root, self.filename, self.file_md5)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
