"""PASCAL VOC detection (XML annotations) and segmentation (palette PNG masks), years 2007-2012."""
import collections
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
from xml.etree.ElementTree import Element, ParseError
from xml.etree.ElementTree import parse as _et_parse

from PIL import Image

from .utils import CorruptDatasetError, DatasetNotFoundError, download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["VOCDetection", "VOCSegmentation", "DATASET_YEAR_DICT"]

_BASE = "https://thor.robots.ox.ac.uk/pascal/VOC/"
DATASET_YEAR_DICT = {
    "2012": {"url": _BASE + "voc2012/VOCtrainval_11-May-2012.tar", "filename": "VOCtrainval_11-May-2012.tar",
             "md5": "6cd6e144f989b92b3379bac3b3de84fd", "base_dir": os.path.join("VOCdevkit", "VOC2012")},
    "2011": {"url": _BASE + "voc2011/VOCtrainval_25-May-2011.tar", "filename": "VOCtrainval_25-May-2011.tar",
             "md5": "6c3384ef61512963050cb5d687e5bf1e", "base_dir": os.path.join("TrainVal", "VOCdevkit", "VOC2011")},
    "2010": {"url": _BASE + "voc2010/VOCtrainval_03-May-2010.tar", "filename": "VOCtrainval_03-May-2010.tar",
             "md5": "da459979d0c395079b5c75ee67908abb", "base_dir": os.path.join("VOCdevkit", "VOC2010")},
    "2009": {"url": _BASE + "voc2009/VOCtrainval_11-May-2009.tar", "filename": "VOCtrainval_11-May-2009.tar",
             "md5": "a3e00b113cfcfebf17e343f59da3caa1", "base_dir": os.path.join("VOCdevkit", "VOC2009")},
    "2008": {"url": _BASE + "voc2008/VOCtrainval_14-Jul-2008.tar", "filename": "VOCtrainval_11-May-2012.tar",
             "md5": "2629fa636546599198acfcfbfcf1904a", "base_dir": os.path.join("VOCdevkit", "VOC2008")},
    "2007": {"url": _BASE + "voc2007/VOCtrainval_06-Nov-2007.tar", "filename": "VOCtrainval_06-Nov-2007.tar",
             "md5": "c52e279531787c972589f7e41ab4ae64", "base_dir": os.path.join("VOCdevkit", "VOC2007")},
    "2007-test": {"url": _BASE + "voc2007/VOCtest_06-Nov-2007.tar", "filename": "VOCtest_06-Nov-2007.tar",
                  "md5": "b6e924de25625d8de591ea690078ad9f", "base_dir": os.path.join("VOCdevkit", "VOC2007")},
}


class _VOCBase(VisionDataset):
    _SPLITS_DIR: str
    _TARGET_DIR: str
    _TARGET_FILE_EXT: str

    def __init__(self, root: Union[str, Path], year: str = "2012", image_set: str = "train", download: bool = False,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year", valid_values=[str(y) for y in range(2007, 2013)])
        valid = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set = verify_str_arg(image_set, "image_set", valid)
        info = DATASET_YEAR_DICT["2007-test" if year == "2007" and image_set == "test" else year]
        self.url, self.filename, self.md5 = info["url"], info["filename"], info["md5"]
        voc_root = os.path.join(self.root, info["base_dir"])
        if download:
            download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.md5)
        split_f = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR, image_set + ".txt")
        if not os.path.isdir(voc_root) or not os.path.isfile(split_f):
            raise DatasetNotFoundError(f"Dataset not found: {split_f} is missing. You can use download=True to "
                                       f"download {self.url} (md5 {self.md5}) into {self.root}")
        with open(split_f) as f:
            file_names = [x.strip() for x in f if x.strip()]
        self.images = [os.path.join(voc_root, "JPEGImages", x + ".jpg") for x in file_names]
        self.targets = [os.path.join(voc_root, self._TARGET_DIR, x + self._TARGET_FILE_EXT) for x in file_names]

    def __len__(self) -> int:
        return len(self.images)


class VOCSegmentation(_VOCBase):
    """`Pascal VOC <http://host.robots.ox.ac.uk/pascal/VOC/>`_ segmentation: ``(RGB image, palette mask)``.

    Args:
        root: the directory holding ``VOCdevkit``.
        year: ``"2007"`` to ``"2012"``.
        image_set: ``train``, ``trainval``, ``val`` (and ``test`` for 2007).
        download: fetch and safely extract the md5-verified archive.
        transform: as :class:`VisionDataset`.
        target_transform: as :class:`VisionDataset`.
        transforms: as :class:`VisionDataset`.
    """

    _SPLITS_DIR = "Segmentation"
    _TARGET_DIR = "SegmentationClass"
    _TARGET_FILE_EXT = ".png"

    @property
    def masks(self) -> List[str]:
        return self.targets

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, PIL mask in mode P)``."""
        img = Image.open(self.images[index]).convert("RGB")
        target = Image.open(self.masks[index])
        return self._apply_joint_transforms(img, target)


class VOCDetection(_VOCBase):
    """`Pascal VOC <http://host.robots.ox.ac.uk/pascal/VOC/>`_ detection: ``(RGB image, annotation dict)``.

    The target is the XML annotation as nested dicts (``{"annotation": {..., "object": [...]}}``), as
    torchvision returns it; ``wrap_dataset_for_transforms_v2`` turns it into boxes and labels.
    """

    _SPLITS_DIR = "Main"
    _TARGET_DIR = "Annotations"
    _TARGET_FILE_EXT = ".xml"

    @property
    def annotations(self) -> List[str]:
        return self.targets

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, annotation dict)``."""
        img = Image.open(self.images[index]).convert("RGB")
        path = self.annotations[index]
        try:
            # expat (>= 2.4.1, bundled with supported Pythons) refuses entity-expansion bombs; no external entities
            root = _et_parse(path).getroot()
        except ParseError as e:
            raise CorruptDatasetError(f"{path} is not a readable VOC annotation: {e}") from e
        target = self.parse_voc_xml(root)
        return self._apply_joint_transforms(img, target)

    @staticmethod
    def parse_voc_xml(node: Element) -> Dict[str, Any]:
        """An XML element as nested dicts; repeated children become lists, ``object`` is always a list."""
        voc_dict: Dict[str, Any] = {}
        children = list(node)
        if children:
            grouped: Dict[str, Any] = collections.defaultdict(list)
            for child in map(VOCDetection.parse_voc_xml, children):
                for key, value in child.items():
                    grouped[key].append(value)
            if node.tag == "annotation":
                grouped["object"] = [grouped["object"]]
            voc_dict = {node.tag: {k: v[0] if len(v) == 1 else v for k, v in grouped.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict
