"""MS COCO detection and captions, annotations parsed with the stdlib json module (pycocotools not needed)."""
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from PIL import Image

from .utils import CorruptDatasetError, DatasetNotFoundError
from .vision import VisionDataset

__all__ = ["CocoDetection", "CocoCaptions", "CocoIndex"]


class CocoIndex:
    """The part of pycocotools' ``COCO`` index the datasets use: ``imgs``, ``anns``, ``cats``, ``imgToAnns``.

    Annotations of an image keep their order in the file, as pycocotools does.
    """

    def __init__(self, annotation_file: Union[str, Path]) -> None:
        path = os.fspath(annotation_file)
        if not os.path.isfile(path):
            raise DatasetNotFoundError(f"COCO annotation file {path} not found")
        try:
            with open(path, encoding="utf-8") as f:
                self.dataset = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise CorruptDatasetError(f"{path} is not a readable COCO json file: {e}") from e
        if not isinstance(self.dataset, dict):
            raise CorruptDatasetError(f"{path}: expected a json object at the top level")
        self.imgs: Dict[int, Dict[str, Any]] = {}
        self.anns: Dict[int, Dict[str, Any]] = {}
        self.cats: Dict[int, Dict[str, Any]] = {}
        self.imgToAnns: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
        try:
            for ann in self.dataset.get("annotations", []):
                self.imgToAnns[ann["image_id"]].append(ann)
                self.anns[ann["id"]] = ann
            for img in self.dataset.get("images", []):
                self.imgs[img["id"]] = img
            for cat in self.dataset.get("categories", []):
                self.cats[cat["id"]] = cat
        except (KeyError, TypeError) as e:
            raise CorruptDatasetError(f"{path}: malformed COCO record (missing {e})") from e

    def getAnnIds(self, imgIds: Union[int, List[int]]) -> List[int]:  # noqa: N802 - pycocotools' name
        """The annotation ids of one image id or a list of them, in file order."""
        ids = [imgIds] if isinstance(imgIds, int) else imgIds
        return [a["id"] for i in ids for a in self.imgToAnns.get(i, [])]

    def loadAnns(self, ids: Union[int, List[int]]) -> List[Dict[str, Any]]:  # noqa: N802
        """The annotation records of one id or a list of ids."""
        return [self.anns[i] for i in ([ids] if isinstance(ids, int) else ids)]

    def loadImgs(self, ids: Union[int, List[int]]) -> List[Dict[str, Any]]:  # noqa: N802
        """The image records of one id or a list of ids."""
        return [self.imgs[i] for i in ([ids] if isinstance(ids, int) else ids)]


class CocoDetection(VisionDataset):
    """`MS COCO <https://cocodataset.org/#detection-2016>`_ detection: ``(RGB image, list of annotation dicts)``.

    Args:
        root: the image folder (``file_name`` of each image is relative to it).
        annFile: the ``instances_*.json`` annotation file.
        transform: as :class:`VisionDataset`.
        target_transform: as :class:`VisionDataset`.
        transforms: as :class:`VisionDataset`.

    ``ids`` are the sorted image ids; ``coco`` is a :class:`CocoIndex` (pycocotools-compatible attributes).
    """

    def __init__(self, root: Union[str, Path], annFile: str, transform: Optional[Callable] = None,  # noqa: N803
                 target_transform: Optional[Callable] = None, transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms, transform, target_transform)
        self.coco = CocoIndex(annFile)
        self.ids = sorted(self.coco.imgs.keys())

    def _load_image(self, id: int) -> Image.Image:
        path = self.coco.loadImgs(id)[0]["file_name"]
        return Image.open(os.path.join(self.root, path)).convert("RGB")

    def _load_target(self, id: int) -> List[Any]:
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, target)``."""
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        image, target = self._load_image(id), self._load_target(id)
        return self._apply_joint_transforms(image, target)

    def __len__(self) -> int:
        return len(self.ids)


class CocoCaptions(CocoDetection):
    """`MS COCO captions <https://cocodataset.org/#captions-2015>`_: ``(RGB image, list of caption strings)``."""

    def _load_target(self, id: int) -> List[str]:
        return [ann["caption"] for ann in super()._load_target(id)]
