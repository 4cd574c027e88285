"""CIFAR10 and CIFAR100 from their python pickle batches, read through the hub's restricted unpickler."""
import os
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._base import ArchiveFilesMixin
from ._readers import read_restricted_pickle
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(ArchiveFilesMixin, VisionDataset):
    """`CIFAR10 <https://www.cs.toronto.edu/~kriz/cifar.html>`_: 32x32 colour images in 10 classes.

    Args:
        root: the directory holding ``cifar-10-batches-py``.
        train: the five training batches, else ``test_batch``.
        transform: applied to the PIL image.
        target_transform: applied to the int target.
        download: fetch and safely extract the md5-verified archive when the batches are missing.

    The batches are python-2 pickles; they are read without running pickle code (only containers, strings,
    numbers and plain numpy arrays are accepted) and each file's md5 is checked first, as torchvision does.
    ``data`` is the ``N x 32 x 32 x 3`` uint8 array and ``targets`` a list of ints.
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root: Union[str, Path], train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            bad = [name for name, md5 in self.train_list + self.test_list
                   if not check_integrity(os.path.join(self.root, self.base_folder, name), md5)]
            raise DatasetNotFoundError(
                f"Dataset not found or corrupted: {', '.join(bad)} missing from {os.path.join(self.root, self.base_folder)}"
                f" or failing its md5. You can use download=True to download it ({self.url}, md5 {self.tgz_md5}).")
        data, targets = [], []
        for file_name, _ in (self.train_list if self.train else self.test_list):
            path = os.path.join(self.root, self.base_folder, file_name)
            entry = read_restricted_pickle(path)
            try:
                arr = np.asarray(entry["data"], dtype=np.uint8)
                labels = entry["labels"] if "labels" in entry else entry["fine_labels"]
            except (KeyError, TypeError) as e:
                raise CorruptDatasetError(f"{path}: not a CIFAR batch (no 'data' and labels): {e}") from e
            if arr.ndim != 2 or arr.shape[1] != 3 * 32 * 32 or len(labels) != len(arr):
                raise CorruptDatasetError(f"{path}: expected data of shape (N, 3072) and N labels, got "
                                          f"{arr.shape} and {len(labels)} labels")
            data.append(arr)
            targets.extend(int(t) for t in labels)
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))  # HWC
        self.targets = targets
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise DatasetNotFoundError(f"Dataset metadata file {path} not found or corrupted. You can use "
                                       "download=True to download it")
        entry = read_restricted_pickle(path)
        try:
            self.classes = list(entry[self.meta["key"]])
        except (KeyError, TypeError) as e:
            raise CorruptDatasetError(f"{path}: no {self.meta['key']!r} entry") from e
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, int class index)``."""
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """`CIFAR100 <https://www.cs.toronto.edu/~kriz/cifar.html>`_: 100 fine classes (targets are the fine labels)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
