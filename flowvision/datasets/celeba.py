"""CelebA from its text annotation files (attributes, identities, boxes, landmarks, partitions)."""
import csv
import os
from collections import namedtuple
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_file_from_google_drive, \
    extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["CelebA"]

CSV = namedtuple("CSV", ["header", "index", "data"])


def _tensor(arr: np.ndarray):
    from .. import backend
    return backend.from_numpy(np.ascontiguousarray(arr))


class CelebA(VisionDataset):
    """`CelebA <http://mmlab.ie.cuhk.edu.hk/projects/CelebA.html>`_ aligned faces, ``root/celeba/``.

    Args:
        root: the directory holding ``celeba`` (``img_align_celeba/`` and the ``list_*.txt`` files).
        split: ``train``, ``valid``, ``test`` or ``all``.
        target_type: ``attr`` (40 binary attributes), ``identity``, ``bbox``, ``landmarks`` or a list of them.
        transform: as usual.
        target_transform: as usual.
        download: the files live on Google Drive, which flowvision does not script: already present files are
            verified, missing ones are listed with their Drive URL, destination and md5.

    Targets are int64 flowvision tensors (torchvision returns torch tensors).
    """

    base_folder = "celeba"
    file_list = [
        ("0B7EVK8r0v71pZjFTYXZWM3FlRnM", "00d2c5bc6d35e252742224ab0c1e8fcb", "img_align_celeba.zip"),
        ("0B7EVK8r0v71pblRyaVFSWGxPY0U", "75e246fa4810816ffd6ee81facbd244c", "list_attr_celeba.txt"),
        ("1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS", "32bd1bd63d3c78cd57e08160ec5ed1e2", "identity_CelebA.txt"),
        ("0B7EVK8r0v71pbThiMVRxWXZ4dU0", "00566efa6fedff7a56946cd1c10f1c16", "list_bbox_celeba.txt"),
        ("0B7EVK8r0v71pd0FJY3Blby1HUTQ", "cc24ecafdb5b50baae59b03474781f8c", "list_landmarks_align_celeba.txt"),
        ("0B7EVK8r0v71pY0NSMzRuSXJEVkk", "d32c9cbf5e040fd4025c592c306e6668", "list_eval_partition.txt"),
    ]

    def __init__(self, root: Union[str, Path], split: str = "train", target_type: Union[List[str], str] = "attr",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = list(target_type) if isinstance(target_type, list) else [target_type]
        for t in self.target_type:
            verify_str_arg(t, "target_type", ("attr", "identity", "bbox", "landmarks"))
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download:
            self.download()
        if not self._check_integrity():
            bad = [f for _, md5, f in self.file_list if not f.endswith(".zip")
                   and not check_integrity(os.path.join(self.root, self.base_folder, f), md5)]
            raise DatasetNotFoundError(f"Dataset not found or corrupted in {os.path.join(self.root, self.base_folder)}:"
                                       f" {', '.join(bad) or 'img_align_celeba/'} missing or failing its md5. You can "
                                       "use download=True to see where to get each file.")
        split_ = {"train": 0, "valid": 1, "test": 2, "all": None}[
            verify_str_arg(split.lower() if isinstance(split, str) else split, "split", ("train", "valid", "test", "all"))]
        splits = self._load_csv("list_eval_partition.txt")
        identity = self._load_csv("identity_CelebA.txt")
        bbox = self._load_csv("list_bbox_celeba.txt", header=1)
        landmarks = self._load_csv("list_landmarks_align_celeba.txt", header=1)
        attr = self._load_csv("list_attr_celeba.txt", header=1)
        mask = slice(None) if split_ is None else (splits.data[:, 0] == split_)
        self.filename = splits.index if split_ is None else [splits.index[i] for i in np.flatnonzero(mask)]
        self.identity = _tensor(identity.data[mask])
        self.bbox = _tensor(bbox.data[mask])
        self.landmarks_align = _tensor(landmarks.data[mask])
        self.attr = _tensor(np.floor_divide(attr.data[mask] + 1, 2))
        self.attr_names = attr.header

    def _load_csv(self, filename: str, header: Optional[int] = None) -> CSV:
        path = os.path.join(self.root, self.base_folder, filename)
        with open(path) as f:
            rows = list(csv.reader(f, delimiter=" ", skipinitialspace=True))
        headers: List[str] = []
        if header is not None:
            headers, rows = rows[header], rows[header + 1:]
        try:
            data = np.array([[int(v) for v in row[1:]] for row in rows], dtype=np.int64)
        except ValueError as e:
            raise CorruptDatasetError(f"{path}: a row is not a file name followed by integers: {e}") from e
        if data.ndim != 2:
            raise CorruptDatasetError(f"{path}: rows have different numbers of values")
        return CSV(headers, [row[0] for row in rows], data)

    def _check_integrity(self) -> bool:
        for _, md5, filename in self.file_list:
            if os.path.splitext(filename)[1] not in (".zip", ".7z") and \
                    not check_integrity(os.path.join(self.root, self.base_folder, filename), md5):
                return False
        return os.path.isdir(os.path.join(self.root, self.base_folder, "img_align_celeba"))

    def download(self) -> None:
        """Verify the files present; name the Google Drive URL, destination and md5 of each missing one."""
        if self._check_integrity():
            return
        folder = os.path.join(self.root, self.base_folder)
        missing = []
        for file_id, md5, filename in self.file_list:
            try:
                download_file_from_google_drive(file_id, folder, filename, md5)
            except DatasetNotFoundError as e:
                missing += e.missing
        if missing:
            raise DatasetNotFoundError(
                "CelebA is hosted on Google Drive, which flowvision does not download from. Download each file below "
                "and put it at the path shown:\n" + "\n".join(f"  {u}\n    -> {p}  (md5 {m})" for u, p, m in missing),
                missing)
        extract_archive(os.path.join(folder, "img_align_celeba.zip"))

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, target)``; several target types give a tuple, none gives None."""
        X = Image.open(os.path.join(self.root, self.base_folder, "img_align_celeba", self.filename[index]))
        target: Any = []
        for t in self.target_type:
            if t == "attr":
                target.append(self.attr[index, :])
            elif t == "identity":
                target.append(self.identity[index, 0])
            elif t == "bbox":
                target.append(self.bbox[index, :])
            else:
                target.append(self.landmarks_align[index, :])
        if self.transform is not None:
            X = self.transform(X)
        if target:
            target = tuple(target) if len(target) > 1 else target[0]
            if self.target_transform is not None:
                target = self.target_transform(target)
        else:
            target = None
        return X, target

    def __len__(self) -> int:
        return len(self.attr)

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}\nSplit: {self.split}"
