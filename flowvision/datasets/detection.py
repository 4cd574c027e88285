"""Detection datasets with text annotations: Kitti (object labels) and WIDERFace (face boxes)."""
import csv
import os
from os.path import abspath, expanduser
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from .utils import CorruptDatasetError, DatasetNotFoundError, download_and_extract_archive, \
    download_file_from_google_drive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["Kitti", "WIDERFace"]


def _tensor(arr: np.ndarray):
    from .. import backend
    return backend.from_numpy(np.ascontiguousarray(arr))


class Kitti(VisionDataset):
    """`KITTI <http://www.cvlibs.net/datasets/kitti/eval_object.php>`_ 2D objects: ``Kitti/raw/{training,testing}/
    image_2`` and ``label_2``.

    Args:
        root: the directory holding ``Kitti/raw``.
        train: the training images (with labels), else the testing images (target None).
        transform: as usual.
        target_transform: as usual.
        transforms: as usual.
        download: as usual.

    Images are listed in sorted order (torchvision uses the file system's order).
    """

    data_url = "https://s3.eu-central-1.amazonaws.com/avg-kitti/"
    resources = ["data_object_image_2.zip", "data_object_label_2.zip"]
    image_dir_name = "image_2"
    labels_dir_name = "label_2"

    def __init__(self, root: Union[str, Path], train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, transforms: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform, transforms=transforms)
        self.images: List[str] = []
        self.targets: List[str] = []
        self.train = train
        self._location = "training" if self.train else "testing"
        if download:
            self.download()
        if not self._check_exists():
            raise DatasetNotFoundError(f"Dataset not found in {os.path.join(self._raw_folder, self._location)}. You "
                                       f"may use download=True to download {', '.join(self.resources)} from "
                                       f"{self.data_url}")
        image_dir = os.path.join(self._raw_folder, self._location, self.image_dir_name)
        labels_dir = os.path.join(self._raw_folder, self._location, self.labels_dir_name)
        for img_file in sorted(os.listdir(image_dir)):
            self.images.append(os.path.join(image_dir, img_file))
            if self.train:
                self.targets.append(os.path.join(labels_dir, f"{img_file.split('.')[0]}.txt"))

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, list of object dicts or None)``."""
        image = Image.open(self.images[index])
        target = self._parse_target(index) if self.train else None
        return self._apply_joint_transforms(image, target)

    def _parse_target(self, index: int) -> List[Dict[str, Any]]:
        path = self.targets[index]
        target = []
        with open(path) as f:
            for n, line in enumerate(csv.reader(f, delimiter=" ")):
                try:
                    target.append({
                        "type": line[0], "truncated": float(line[1]), "occluded": int(line[2]),
                        "alpha": float(line[3]), "bbox": [float(x) for x in line[4:8]],
                        "dimensions": [float(x) for x in line[8:11]], "location": [float(x) for x in line[11:14]],
                        "rotation_y": float(line[14]),
                    })
                except (ValueError, IndexError) as e:
                    raise CorruptDatasetError(f"{path}: line {n + 1} is not a KITTI object label: {e}") from e
        return target

    def __len__(self) -> int:
        return len(self.images)

    @property
    def _raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    def _check_exists(self) -> bool:
        folders = [self.image_dir_name] + ([self.labels_dir_name] if self.train else [])
        return all(os.path.isdir(os.path.join(self._raw_folder, self._location, f)) for f in folders)

    def download(self) -> None:
        """Download and safely extract the image and label archives unless present (no published checksums)."""
        if self._check_exists():
            return
        os.makedirs(self._raw_folder, exist_ok=True)
        for fname in self.resources:
            download_and_extract_archive(url=f"{self.data_url}{fname}", download_root=self._raw_folder, filename=fname)


class WIDERFace(VisionDataset):
    """`WIDER FACE <http://shuoyang1213.me/WIDERFACE/>`_: ``widerface/WIDER_<split>/images`` and
    ``widerface/wider_face_split/*.txt``.

    Args:
        root: the directory holding ``widerface``.
        split: ``train``, ``val`` or ``test`` (target None).
        transform: as usual.
        target_transform: as usual.
        download: the annotations are fetched (md5-verified); the image zips live on Google Drive: present ones
            are verified and extracted, missing ones are listed with their URL, destination and md5.

    Targets are dicts of int64 flowvision tensors: ``bbox`` (x, y, w, h), ``blur``, ``expression``,
    ``illumination``, ``occlusion``, ``pose``, ``invalid``.
    """

    BASE_FOLDER = "widerface"
    FILE_LIST = [
        ("15hGDLhsx8bLgLcIRD5DhYt5iBxnjNF1M", "3fedf70df600953d25982bcd13d91ba2", "WIDER_train.zip"),
        ("1GUCogbp16PMGa39thoMMeWxp7Rp5oM8Q", "dfa7d7e790efa35df3788964cf0bbaea", "WIDER_val.zip"),
        ("1HIfDbVEWKmsYKJZm4lchTBDLW5N7dY5T", "e5d8f4248ed24c334bbd12f49c29dd40", "WIDER_test.zip"),
    ]
    ANNOTATIONS_FILE = ("http://shuoyang1213.me/WIDERFACE/support/bbx_annotation/wider_face_split.zip",
                        "0e3767bcf0e326556d407bf5bff5d27c", "wider_face_split.zip")

    def __init__(self, root: Union[str, Path], split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root=os.path.join(root, self.BASE_FOLDER), transform=transform,
                         target_transform=target_transform)
        self.split = verify_str_arg(split, "split", ("train", "val", "test"))
        if download:
            self.download()
        if not self._check_integrity():
            need = [os.path.splitext(f)[0] for _, _, f in self.FILE_LIST + [self.ANNOTATIONS_FILE]]
            raise DatasetNotFoundError(f"Dataset not found or incomplete: {', '.join(need)} must be folders in "
                                       f"{self.root}. You can use download=True to download and prepare it")
        self.img_info: List[Dict[str, Any]] = []
        if self.split in ("train", "val"):
            self.parse_train_val_annotations_file()
        else:
            self.parse_test_annotations_file()

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, annotation dict or None)``."""
        img = Image.open(self.img_info[index]["img_path"])
        target = None if self.split == "test" else self.img_info[index]["annotations"]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.img_info)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"

    def parse_train_val_annotations_file(self) -> None:
        """Read ``wider_face_<split>_bbx_gt.txt``: a file name, a box count, then that many rows of 10 integers
        (one all-zero row when the count is 0)."""
        filename = "wider_face_train_bbx_gt.txt" if self.split == "train" else "wider_face_val_bbx_gt.txt"
        filepath = os.path.join(self.root, "wider_face_split", filename)
        with open(filepath) as f:
            lines = [line.rstrip() for line in f]
        i = 0
        try:
            while i < len(lines):
                if not lines[i]:
                    i += 1
                    continue
                img_path = abspath(expanduser(os.path.join(self.root, "WIDER_" + self.split, "images", lines[i])))
                num_boxes = int(lines[i + 1])
                rows = max(num_boxes, 1)
                labels = np.array([[int(x) for x in lines[i + 2 + k].split(" ")] for k in range(rows)], dtype=np.int64)
                if labels.shape[1] != 10:
                    raise ValueError(f"{labels.shape[1]} values per box instead of 10")
                i += 2 + rows
                self.img_info.append({"img_path": img_path, "annotations": {
                    "bbox": _tensor(labels[:, 0:4]), "blur": _tensor(labels[:, 4]),
                    "expression": _tensor(labels[:, 5]), "illumination": _tensor(labels[:, 6]),
                    "occlusion": _tensor(labels[:, 7]), "pose": _tensor(labels[:, 8]),
                    "invalid": _tensor(labels[:, 9])}})
        except (ValueError, IndexError) as e:
            raise CorruptDatasetError(f"Error parsing annotation file {filepath} near line {i + 1}: {e}") from e

    def parse_test_annotations_file(self) -> None:
        """Read ``wider_face_test_filelist.txt``: one image path per line."""
        filepath = abspath(expanduser(os.path.join(self.root, "wider_face_split", "wider_face_test_filelist.txt")))
        with open(filepath) as f:
            for line in f:
                line = line.rstrip()
                if line:
                    self.img_info.append(
                        {"img_path": abspath(expanduser(os.path.join(self.root, "WIDER_test", "images", line)))})

    def _check_integrity(self) -> bool:
        return all(os.path.exists(os.path.join(self.root, os.path.splitext(f)[0]))
                   for _, _, f in self.FILE_LIST + [self.ANNOTATIONS_FILE])

    def download(self) -> None:
        """Fetch the annotations; verify/extract present image zips; list the missing ones."""
        if self._check_integrity():
            return
        missing = []
        for file_id, md5, filename in self.FILE_LIST:
            if os.path.isdir(os.path.join(self.root, os.path.splitext(filename)[0])):
                continue
            try:
                download_file_from_google_drive(file_id, self.root, filename, md5)
            except DatasetNotFoundError as e:
                missing += e.missing
                continue
            extract_archive(os.path.join(self.root, filename))
        if not os.path.isdir(os.path.join(self.root, "wider_face_split")):
            download_and_extract_archive(url=self.ANNOTATIONS_FILE[0], download_root=self.root,
                                         md5=self.ANNOTATIONS_FILE[1])
        if missing:
            raise DatasetNotFoundError("WIDER FACE images are hosted on Google Drive, which flowvision does not "
                                       "download from. Download each file below and put it at the path shown:\n"
                                       + "\n".join(f"  {u}\n    -> {p}  (md5 {m})" for u, p, m in missing), missing)
