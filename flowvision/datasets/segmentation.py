"""Segmentation datasets: Cityscapes (label PNGs and polygon json) and SBDataset (MATLAB .mat masks)."""
import json
import os
import shutil
from collections import namedtuple
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._base import read_lines
from ._readers import load_mat
from .utils import CorruptDatasetError, DatasetNotFoundError, download_and_extract_archive, download_url, \
    extract_archive, iterable_to_str, verify_str_arg
from .vision import VisionDataset

__all__ = ["Cityscapes", "SBDataset"]


class Cityscapes(VisionDataset):
    """`Cityscapes <https://www.cityscapes-dataset.com/>`_: ``leftImg8bit/<split>/<city>/`` with
    ``gtFine``/``gtCoarse`` targets.

    Args:
        root: the directory holding ``leftImg8bit`` and ``gtFine``/``gtCoarse`` (or their zips, extracted safely on
            first use; the site needs a login, so there is no download).
        split: ``train``/``val``/``test`` (fine) or ``train``/``train_extra``/``val`` (coarse).
        mode: ``fine`` or ``coarse``.
        target_type: ``instance``, ``semantic``, ``color``, ``polygon`` (json dict) or a list of them.
        transform: as usual.
        target_transform: as usual.
        transforms: as usual.

    Cities and files are listed in sorted order (torchvision uses the file system's order).
    """

    CityscapesClass = namedtuple("CityscapesClass", ["name", "id", "train_id", "category", "category_id",
                                                     "has_instances", "ignore_in_eval", "color"])
    classes = [
        CityscapesClass('unlabeled', 0, 255, 'void', 0, False, True, (0, 0, 0)),
        CityscapesClass('ego vehicle', 1, 255, 'void', 0, False, True, (0, 0, 0)),
        CityscapesClass('rectification border', 2, 255, 'void', 0, False, True, (0, 0, 0)),
        CityscapesClass('out of roi', 3, 255, 'void', 0, False, True, (0, 0, 0)),
        CityscapesClass('static', 4, 255, 'void', 0, False, True, (0, 0, 0)),
        CityscapesClass('dynamic', 5, 255, 'void', 0, False, True, (111, 74, 0)),
        CityscapesClass('ground', 6, 255, 'void', 0, False, True, (81, 0, 81)),
        CityscapesClass('road', 7, 0, 'flat', 1, False, False, (128, 64, 128)),
        CityscapesClass('sidewalk', 8, 1, 'flat', 1, False, False, (244, 35, 232)),
        CityscapesClass('parking', 9, 255, 'flat', 1, False, True, (250, 170, 160)),
        CityscapesClass('rail track', 10, 255, 'flat', 1, False, True, (230, 150, 140)),
        CityscapesClass('building', 11, 2, 'construction', 2, False, False, (70, 70, 70)),
        CityscapesClass('wall', 12, 3, 'construction', 2, False, False, (102, 102, 156)),
        CityscapesClass('fence', 13, 4, 'construction', 2, False, False, (190, 153, 153)),
        CityscapesClass('guard rail', 14, 255, 'construction', 2, False, True, (180, 165, 180)),
        CityscapesClass('bridge', 15, 255, 'construction', 2, False, True, (150, 100, 100)),
        CityscapesClass('tunnel', 16, 255, 'construction', 2, False, True, (150, 120, 90)),
        CityscapesClass('pole', 17, 5, 'object', 3, False, False, (153, 153, 153)),
        CityscapesClass('polegroup', 18, 255, 'object', 3, False, True, (153, 153, 153)),
        CityscapesClass('traffic light', 19, 6, 'object', 3, False, False, (250, 170, 30)),
        CityscapesClass('traffic sign', 20, 7, 'object', 3, False, False, (220, 220, 0)),
        CityscapesClass('vegetation', 21, 8, 'nature', 4, False, False, (107, 142, 35)),
        CityscapesClass('terrain', 22, 9, 'nature', 4, False, False, (152, 251, 152)),
        CityscapesClass('sky', 23, 10, 'sky', 5, False, False, (70, 130, 180)),
        CityscapesClass('person', 24, 11, 'human', 6, True, False, (220, 20, 60)),
        CityscapesClass('rider', 25, 12, 'human', 6, True, False, (255, 0, 0)),
        CityscapesClass('car', 26, 13, 'vehicle', 7, True, False, (0, 0, 142)),
        CityscapesClass('truck', 27, 14, 'vehicle', 7, True, False, (0, 0, 70)),
        CityscapesClass('bus', 28, 15, 'vehicle', 7, True, False, (0, 60, 100)),
        CityscapesClass('caravan', 29, 255, 'vehicle', 7, True, True, (0, 0, 90)),
        CityscapesClass('trailer', 30, 255, 'vehicle', 7, True, True, (0, 0, 110)),
        CityscapesClass('train', 31, 16, 'vehicle', 7, True, False, (0, 80, 100)),
        CityscapesClass('motorcycle', 32, 17, 'vehicle', 7, True, False, (0, 0, 230)),
        CityscapesClass('bicycle', 33, 18, 'vehicle', 7, True, False, (119, 11, 32)),
        CityscapesClass('license plate', -1, -1, 'vehicle', 7, False, True, (0, 0, 142)),
    ]

    def __init__(self, root: Union[str, Path], split: str = "train", mode: str = "fine",
                 target_type: Union[List[str], str] = "instance", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms, transform, target_transform)
        verify_str_arg(mode, "mode", ("fine", "coarse"))
        self.mode = "gtFine" if mode == "fine" else "gtCoarse"
        valid = ("train", "test", "val") if mode == "fine" else ("train", "train_extra", "val")
        verify_str_arg(split, "split", valid, f"Unknown value '{split}' for argument split if mode is '{mode}'. "
                       f"Valid values are {{{iterable_to_str(valid)}}}.")
        self.split = split
        self.images_dir = os.path.join(self.root, "leftImg8bit", split)
        self.targets_dir = os.path.join(self.root, self.mode, split)
        self.target_type = target_type if isinstance(target_type, list) else [target_type]
        for t in self.target_type:
            verify_str_arg(t, "target_type", ("instance", "semantic", "polygon", "color"))
        if not os.path.isdir(self.images_dir) or not os.path.isdir(self.targets_dir):
            image_zip = os.path.join(self.root, "leftImg8bit_trainextra.zip" if split == "train_extra"
                                     else "leftImg8bit_trainvaltest.zip")
            target_zip = os.path.join(self.root, "gtFine_trainvaltest.zip" if self.mode == "gtFine" else "gtCoarse.zip")
            if not (os.path.isfile(image_zip) and os.path.isfile(target_zip)):
                raise DatasetNotFoundError(
                    f"Dataset not found or incomplete: {self.images_dir} and {self.targets_dir} (or "
                    f"{os.path.basename(image_zip)} and {os.path.basename(target_zip)} in {self.root}) are needed. "
                    "Download them from https://www.cityscapes-dataset.com/downloads/ (login required).")
            extract_archive(image_zip, self.root)
            extract_archive(target_zip, self.root)
        self.images: List[str] = []
        self.targets: List[List[str]] = []
        for city in sorted(os.listdir(self.images_dir)):
            img_dir, target_dir = os.path.join(self.images_dir, city), os.path.join(self.targets_dir, city)
            for file_name in sorted(os.listdir(img_dir)):
                stem = file_name.split("_leftImg8bit")[0]
                self.images.append(os.path.join(img_dir, file_name))
                self.targets.append([os.path.join(target_dir, f"{stem}_{self._get_target_suffix(self.mode, t)}")
                                     for t in self.target_type])

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, target)``; several target types give a tuple."""
        image = Image.open(self.images[index]).convert("RGB")
        targets: List[Any] = []
        for i, t in enumerate(self.target_type):
            path = self.targets[index][i]
            targets.append(self._load_json(path) if t == "polygon" else Image.open(path))
        target = tuple(targets) if len(targets) > 1 else targets[0]
        return self._apply_joint_transforms(image, target)

    def __len__(self) -> int:
        return len(self.images)

    def extra_repr(self) -> str:
        return f"Split: {self.split}\nMode: {self.mode}\nType: {self.target_type}"

    @staticmethod
    def _load_json(path: str) -> Dict[str, Any]:
        try:
            with open(path) as f:
                return json.load(f)
        except json.JSONDecodeError as e:
            raise CorruptDatasetError(f"{path} is not valid json: {e}") from e

    @staticmethod
    def _get_target_suffix(mode: str, target_type: str) -> str:
        return {"instance": f"{mode}_instanceIds.png", "semantic": f"{mode}_labelIds.png",
                "color": f"{mode}_color.png"}.get(target_type, f"{mode}_polygons.json")


class SBDataset(VisionDataset):
    """`Semantic Boundaries Dataset <http://home.bharathh.info/pubs/codes/SBD/download.html>`_ (needs scipy).

    Args:
        root: the directory holding ``img/``, ``cls/`` and the split lists.
        image_set: ``train``, ``val`` or ``train_noval``.
        mode: ``segmentation`` (a PIL mask) or ``boundaries`` (a ``20 x H x W`` array).
        download: fetch (md5-verified) and safely extract the benchmark archive.
        transforms: a callable on ``(image, target)``.
    """

    url = "https://www2.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/semantic_contours/benchmark.tgz"
    md5 = "82b4d87ceb2ed10f6038a1cba92111cb"
    filename = "benchmark.tgz"
    voc_train_url = "https://www.cs.cornell.edu/~bharathh/train_noval.txt"
    voc_split_filename = "train_noval.txt"
    voc_split_md5 = "79bff800c5f0b1ec6b21080a3c066722"

    def __init__(self, root: Union[str, Path], image_set: str = "train", mode: str = "boundaries",
                 download: bool = False, transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        self.image_set = verify_str_arg(image_set, "image_set", ("train", "val", "train_noval"))
        self.mode = verify_str_arg(mode, "mode", ("segmentation", "boundaries"))
        self.num_classes = 20
        sbd_root = self.root
        if download:
            download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.md5)
            extracted = os.path.join(self.root, "benchmark_RELEASE", "dataset")
            for f in ["cls", "img", "inst", "train.txt", "val.txt"]:
                shutil.move(os.path.join(extracted, f), sbd_root)
            if self.image_set == "train_noval":
                download_url(self.voc_train_url, sbd_root, self.voc_split_filename, self.voc_split_md5)
        split_f = os.path.join(sbd_root, image_set + ".txt")
        if not os.path.isfile(split_f):
            raise DatasetNotFoundError(f"Dataset not found: {split_f} is missing. You can use download=True to "
                                       f"download {self.url} (md5 {self.md5})")
        names = read_lines(split_f)
        self.images = [os.path.join(sbd_root, "img", x + ".jpg") for x in names]
        self.masks = [os.path.join(sbd_root, "cls", x + ".mat") for x in names]
        self._get_target = self._get_segmentation_target if self.mode == "segmentation" else self._get_boundaries_target

    @staticmethod
    def _gtcls(filepath: str) -> Any:
        mat = load_mat(filepath)
        if "GTcls" not in mat:
            raise CorruptDatasetError(f"{filepath}: no GTcls struct")
        return mat["GTcls"][0]

    def _get_segmentation_target(self, filepath: str) -> Image.Image:
        return Image.fromarray(self._gtcls(filepath)["Segmentation"][0])

    def _get_boundaries_target(self, filepath: str) -> np.ndarray:
        boundaries = self._gtcls(filepath)["Boundaries"][0]
        return np.concatenate([boundaries[i][0].toarray()[None] for i in range(self.num_classes)], axis=0)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, mask or boundaries)``."""
        img = Image.open(self.images[index]).convert("RGB")
        target = self._get_target(self.masks[index])
        return self._apply_joint_transforms(img, target)

    def __len__(self) -> int:
        return len(self.images)

    def extra_repr(self) -> str:
        return f"Image set: {self.image_set}\nMode: {self.mode}"
