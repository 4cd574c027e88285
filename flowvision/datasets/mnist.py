"""MNIST, FashionMNIST, KMNIST, EMNIST and QMNIST, read from their idx files (``<root>/<Class>/raw/``)."""
import os
import shutil
import string
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._readers import read_image_file, read_label_file, read_sn3_pascalvincent
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_resources, \
    extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST"]

_DIGITS = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
           "8 - eight", "9 - nine"]


def _tensor(arr: np.ndarray):
    from .. import backend
    return backend.from_numpy(np.ascontiguousarray(arr))


class MNIST(VisionDataset):
    """`MNIST <http://yann.lecun.com/exdb/mnist/>`_: 28x28 grey digits.

    Args:
        root: the directory holding ``MNIST/raw/train-images-idx3-ubyte`` etc. (the ``.gz`` files are
            decompressed there on download).
        train: the 60k training split, else the 10k test split.
        transform: applied to the PIL image (mode ``L``).
        target_transform: applied to the int target.
        download: fetch the files (md5-verified) when missing.

    ``data`` (uint8 ``N x 28 x 28``) and ``targets`` (int64 ``N``) are flowvision tensors, like torchvision's
    torch tensors.
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = _DIGITS

    def __init__(self, root: Union[str, Path], train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise DatasetNotFoundError(f"Dataset not found in {self.raw_folder}. You can use download=True to "
                                       f"download it, or put the decompressed idx files there: "
                                       f"{', '.join(os.path.basename(f) for f in self._needed_files())}")
        data, targets = self._load_data()
        self.data, self.targets = _tensor(data), _tensor(targets)

    def _needed_files(self) -> List[str]:
        return [os.path.join(self.raw_folder, os.path.splitext(os.path.basename(name))[0])
                for name, _ in self.resources]

    def _load_data(self) -> Tuple[np.ndarray, np.ndarray]:
        prefix = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))
        _check_lengths(data, targets, self.raw_folder)
        return data, targets

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, int class index)``."""
        img = Image.fromarray(self.data[index].numpy())
        target = int(self.targets[index])
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def raw_folder(self) -> str:
        """``<root>/<Class>/raw``: where the idx files are."""
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self) -> str:
        """``<root>/<Class>/processed`` (torchvision's legacy location; not used)."""
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self) -> Dict[str, int]:
        """Class name -> index."""
        return {c: i for i, c in enumerate(self.classes)}

    def _check_exists(self) -> bool:
        return all(check_integrity(f) for f in self._needed_files())

    def download(self) -> None:
        """Download the ``.gz`` files (each tried on every mirror, md5-verified) and decompress them."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_resources([([m + name for m in self.mirrors], os.path.join(self.raw_folder, name), md5)
                            for name, md5 in self.resources])
        for name, _ in self.resources:
            extract_archive(os.path.join(self.raw_folder, name), self.raw_folder)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


def _check_lengths(data: np.ndarray, targets: np.ndarray, where: str) -> None:
    if len(data) != len(targets):
        raise CorruptDatasetError(f"{where}: {len(data)} images but {len(targets)} labels")


class FashionMNIST(MNIST):
    """`Fashion-MNIST <https://github.com/zalandoresearch/fashion-mnist>`_ (same layout as :class:`MNIST`)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """`Kuzushiji-MNIST <https://github.com/rois-codh/kmnist>`_ (same layout as :class:`MNIST`)."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """`EMNIST <https://www.nist.gov/itl/products-and-services/emnist-dataset>`_: letters and digits.

    Args:
        root: the directory holding ``EMNIST/raw/emnist-<split>-<train|test>-images-idx3-ubyte`` etc.
        split: ``byclass``, ``bymerge``, ``balanced``, ``letters``, ``digits`` or ``mnist``.
        **kwargs: as :class:`MNIST` (``train``, ``transform``, ``target_transform``, ``download``).

    Images are stored transposed in the files and returned as stored, like torchvision does.
    """

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root: Union[str, Path], split: str, **kwargs: Any) -> None:
        self.split = verify_str_arg(split, "split", self.splits)
        self.classes = self.classes_split_dict[self.split]
        super().__init__(root, **kwargs)

    @property
    def _file_prefix(self) -> str:
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-images-idx3-ubyte")

    @property
    def labels_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-labels-idx1-ubyte")

    def _needed_files(self) -> List[str]:
        return [self.images_file, self.labels_file]

    def _load_data(self) -> Tuple[np.ndarray, np.ndarray]:
        data, targets = read_image_file(self.images_file), read_label_file(self.labels_file)
        _check_lengths(data, targets, self.raw_folder)
        return data, targets

    def download(self) -> None:
        """Download ``gzip.zip`` (md5-verified), extract it and decompress its idx files into ``raw``."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_resources([(self.url, os.path.join(self.raw_folder, "gzip.zip"), self.md5)])
        extract_archive(os.path.join(self.raw_folder, "gzip.zip"), self.raw_folder)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in sorted(os.listdir(gzip_folder)):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)


class QMNIST(MNIST):
    """`QMNIST <https://github.com/facebookresearch/qmnist>`_: MNIST with the full NIST provenance of each digit.

    Args:
        root: the directory holding ``QMNIST/raw/qmnist-train-images-idx3-ubyte`` etc.
        what: ``train``, ``test`` (60k), ``test10k``, ``test50k`` or ``nist``; default from ``train``.
        compat: the target is the class index (else the row of 8 int64 provenance fields as a tensor).
        train: picks ``train``/``test`` when ``what`` is None.
        **kwargs: ``transform``, ``target_transform``, ``download``.
    """

    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test", "nist": "nist"}
    resources: Dict[str, List[Tuple[str, str]]] = {  # type: ignore[assignment]
        "train": [
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/qmnist-train-images-idx3-ubyte.gz",
             "ed72d4157d28c017586c42bc6afe6370"),
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/qmnist-train-labels-idx2-int.gz",
             "0058f8dd561b90ffdd0f734c6a30e5e4"),
        ],
        "test": [
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/qmnist-test-images-idx3-ubyte.gz",
             "1394631089c404de565df7b7aeaf9412"),
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/qmnist-test-labels-idx2-int.gz",
             "5b5b05890a5e13444e108efe57b788aa"),
        ],
        "nist": [
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/xnist-images-idx3-ubyte.xz",
             "7f124b3b8ab81486c9d8c2749c17f834"),
            ("https://raw.githubusercontent.com/facebookresearch/qmnist/master/xnist-labels-idx2-int.xz",
             "5ed0e788978e45d4a8bd4b7caec3d79d"),
        ],
    }
    classes = _DIGITS

    def __init__(self, root: Union[str, Path], what: Optional[str] = None, compat: bool = True,
                 train: bool = True, **kwargs: Any) -> None:
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        super().__init__(root, train, **kwargs)

    def _raw_name(self, i: int) -> str:
        url, _ = self.resources[self.subsets[self.what]][i]
        return os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0])

    @property
    def images_file(self) -> str:
        return self._raw_name(0)

    @property
    def labels_file(self) -> str:
        return self._raw_name(1)

    def _needed_files(self) -> List[str]:
        return [self.images_file, self.labels_file]

    def _load_data(self) -> Tuple[np.ndarray, np.ndarray]:
        data = read_sn3_pascalvincent(self.images_file)
        if data.dtype != np.uint8 or data.ndim != 3:
            raise CorruptDatasetError(f"{self.images_file}: expected uint8 images of 3 dimensions")
        targets = read_sn3_pascalvincent(self.labels_file).astype(np.int64)
        if targets.ndim != 2:
            raise CorruptDatasetError(f"{self.labels_file}: expected 2-dimensional labels, got {targets.shape}")
        _check_lengths(data, targets, self.raw_folder)
        if self.what == "test10k":
            data, targets = data[:10000], targets[:10000]
        elif self.what == "test50k":
            data, targets = data[10000:], targets[10000:]
        return data, targets

    def download(self) -> None:
        """Download (md5-verified) and decompress the two files of ``what``."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        files = self.resources[self.subsets[self.what]]
        download_resources([(url, os.path.join(self.raw_folder, os.path.basename(url)), md5) for url, md5 in files])
        for url, _ in files:
            extract_archive(os.path.join(self.raw_folder, os.path.basename(url)), self.raw_folder)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, target)``: the class index when ``compat``, else the provenance row."""
        img = Image.fromarray(self.data[index].numpy())
        target = self.targets[index]
        if self.compat:
            target = int(target[0])
        return self._apply_transforms(img, target)

    def extra_repr(self) -> str:
        return f"Split: {self.what}"
