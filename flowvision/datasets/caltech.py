"""Caltech101 (with optional contour annotations from .mat files) and Caltech256."""
import os
import shutil
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

from PIL import Image

from ._base import download_unless_present, require
from ._readers import load_mat
from .utils import download_and_extract_archive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["Caltech101", "Caltech256"]


class Caltech101(VisionDataset):
    """`Caltech 101 <https://data.caltech.edu/records/mzrjq-6wc02>`_: ``caltech101/101_ObjectCategories/<class>/``.

    Args:
        root: the directory holding ``caltech101``.
        target_type: ``category``, ``annotation`` (the object contour from ``Annotations/*.mat``, needs scipy) or a
            list of them.
        transform: as usual.
        target_transform: as usual.
        download: as usual.

    Images are returned as stored (some are greyscale), like torchvision.
    """

    def __init__(self, root: Union[str, Path], target_type: Union[List[str], str] = "category",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(os.path.join(root, "caltech101"), transform=transform, target_transform=target_transform)
        os.makedirs(self.root, exist_ok=True)
        if isinstance(target_type, str):
            target_type = [target_type]
        self.target_type = [verify_str_arg(t, "target_type", ("category", "annotation")) for t in target_type]
        if download:
            self.download()
        folder = os.path.join(self.root, "101_ObjectCategories")
        require(os.path.isdir(folder), folder, "https://data.caltech.edu/records/mzrjq-6wc02/files/caltech-101.zip",
                "3138e1922a9193bfa496528edbbc45d0", self.root)
        self.categories = sorted(os.listdir(folder))
        if "BACKGROUND_Google" in self.categories:
            self.categories.remove("BACKGROUND_Google")  # clutter, not a class
        name_map = {"Faces": "Faces_2", "Faces_easy": "Faces_3", "Motorbikes": "Motorbikes_16",
                    "airplanes": "Airplanes_Side_2"}
        self.annotation_categories = [name_map.get(c, c) for c in self.categories]
        self.index: List[int] = []
        self.y: List[int] = []
        for i, c in enumerate(self.categories):
            n = len(os.listdir(os.path.join(folder, c)))
            self.index.extend(range(1, n + 1))
            self.y.extend(n * [i])

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, target)``; several target types give a tuple."""
        c, k = self.y[index], self.index[index]
        img = Image.open(os.path.join(self.root, "101_ObjectCategories", self.categories[c], f"image_{k:04d}.jpg"))
        target: Any = []
        for t in self.target_type:
            if t == "category":
                target.append(c)
            else:
                path = os.path.join(self.root, "Annotations", self.annotation_categories[c], f"annotation_{k:04d}.mat")
                target.append(load_mat(path)["obj_contour"])
        target = tuple(target) if len(target) > 1 else target[0]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.index)

    def download(self) -> None:
        """Download (md5-verified) the zip and safely extract the images and annotations it holds."""
        if os.path.isdir(os.path.join(self.root, "101_ObjectCategories")):
            return
        download_and_extract_archive("https://data.caltech.edu/records/mzrjq-6wc02/files/caltech-101.zip",
                                     download_root=self.root, filename="caltech-101.zip",
                                     md5="3138e1922a9193bfa496528edbbc45d0")
        inner = os.path.join(self.root, "caltech-101")
        for name in sorted(os.listdir(inner)):
            # the zip holds 101_ObjectCategories.tar.gz and Annotations.tar (torchvision skips the latter)
            if name.endswith((".gz", ".tar")):
                extract_archive(os.path.join(inner, name), self.root)
        shutil.rmtree(inner)
        os.remove(os.path.join(self.root, "caltech-101.zip"))

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}"


class Caltech256(VisionDataset):
    """`Caltech 256 <https://data.caltech.edu/records/nyy15-4j048>`_: ``caltech256/256_ObjectCategories/``.

    Args: root, transform, target_transform, download.
    """

    def __init__(self, root: str, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(os.path.join(root, "caltech256"), transform=transform, target_transform=target_transform)
        os.makedirs(self.root, exist_ok=True)
        folder = os.path.join(self.root, "256_ObjectCategories")
        download_unless_present(lambda: os.path.isdir(folder), download, folder,
                                "https://data.caltech.edu/records/nyy15-4j048/files/256_ObjectCategories.tar",
                                "67b4f42ca05d46448c6bb8ecd2220f6d", self.root)
        self.categories = sorted(os.listdir(folder))
        self.index: List[int] = []
        self.y: List[int] = []
        for i, c in enumerate(self.categories):
            n = len([f for f in os.listdir(os.path.join(folder, c)) if f.endswith(".jpg")])
            self.index.extend(range(1, n + 1))
            self.y.extend(n * [i])

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, int category)``."""
        c, k = self.y[index], self.index[index]
        img = Image.open(os.path.join(self.root, "256_ObjectCategories", self.categories[c], f"{c + 1:03d}_{k:04d}.jpg"))
        target = c
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.index)
