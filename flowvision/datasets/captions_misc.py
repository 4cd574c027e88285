"""Flickr8k / Flickr30k captions, CLEVR object counting and Moving MNIST sequences."""
import glob
import json
import os
import pathlib
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from ._base import download_unless_present, require
from .folder import default_loader
from .utils import CorruptDatasetError, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["Flickr8k", "Flickr30k", "CLEVRClassification", "MovingMNIST"]


class _Flickr8kParser(HTMLParser):
    """Collects ``{image path: [captions]}`` from the Flickr8k annotation page's table."""

    def __init__(self, root: str) -> None:
        super().__init__()
        self.root = root
        self.annotations: Dict[str, List[str]] = {}
        self.in_table = False
        self.current_tag: Optional[str] = None
        self.current_img: Optional[str] = None

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.current_tag = tag
        if tag == "table":
            self.in_table = True

    def handle_endtag(self, tag: str) -> None:
        self.current_tag = None
        if tag == "table":
            self.in_table = False

    def handle_data(self, data: str) -> None:
        if not self.in_table:
            return
        if data == "Image Not Found":
            self.current_img = None
        elif self.current_tag == "a":
            # the link names the Flickr photo id; the image file is "<id>_<secret>.jpg"
            matches = glob.glob(os.path.join(self.root, data.split("/")[-2] + "_*.jpg"))
            if not matches:
                raise CorruptDatasetError(f"no image {data.split('/')[-2]}_*.jpg in {self.root} for {data}")
            self.current_img = matches[0]
            self.annotations[self.current_img] = []
        elif self.current_tag == "li" and self.current_img:
            self.annotations[self.current_img].append(data.strip())


class Flickr8k(VisionDataset):
    """`Flickr8k <http://hockenmaier.cs.illinois.edu/8k-pictures.html>`_: ``(PIL image, list of captions)``.

    Args: root (the image folder), ann_file (the annotation HTML page), transform, target_transform, loader.
    """

    def __init__(self, root: Union[str, Path], ann_file: str, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        require(os.path.isfile(self.ann_file), self.ann_file)
        parser = _Flickr8kParser(self.root)
        with open(self.ann_file) as fh:
            parser.feed(fh.read())
        self.annotations = parser.annotations
        self.ids = sorted(self.annotations)
        self.loader = loader

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, captions)``."""
        img_id = self.ids[index]
        img, target = self.loader(img_id), self.annotations[img_id]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.ids)


class Flickr30k(VisionDataset):
    """`Flickr30k <https://shannon.cs.illinois.edu/DenotationGraph/>`_: ``(PIL image, list of captions)``.

    Args: root (the image folder), ann_file (``results_20130124.token``: ``<image>#<n>\\t<caption>`` lines),
    transform, target_transform, loader.
    """

    def __init__(self, root: str, ann_file: str, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        require(os.path.isfile(self.ann_file), self.ann_file)
        self.annotations: Dict[str, List[str]] = defaultdict(list)
        with open(self.ann_file) as fh:
            for n, line in enumerate(fh):
                try:
                    img_id, caption = line.strip().split("\t")
                except ValueError:
                    raise CorruptDatasetError(f"{self.ann_file}: line {n + 1} is not '<image>#<n>\\t<caption>'") \
                        from None
                self.annotations[img_id[:-2]].append(caption)
        self.ids = sorted(self.annotations)
        self.loader = loader

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, captions)``."""
        img_id = self.ids[index]
        img, target = self.loader(os.path.join(self.root, img_id)), self.annotations[img_id]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.ids)


class CLEVRClassification(VisionDataset):
    """`CLEVR <https://cs.stanford.edu/people/jcjohns/clevr/>`_ object counting: ``(PIL image, number of objects)``.

    Args: root (holding ``clevr/CLEVR_v1.0``), split (``train``/``val``/``test``: targets None), transform,
    target_transform, download, loader.
    """

    _URL = "https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip"
    _MD5 = "b11922020e72d0cd9154779b2d3d07d2"

    def __init__(self, root: Union[str, Path], split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[Union[str, Path]], Any] = default_loader) -> None:
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.loader = loader
        self._base_folder = pathlib.Path(self.root) / "clevr"
        self._data_folder = self._base_folder / "CLEVR_v1.0"
        download_unless_present(self._data_folder.is_dir, download, str(self._data_folder), self._URL, self._MD5,
                                self._base_folder)
        self._image_files = sorted(self._data_folder.joinpath("images", self._split).glob("*"))
        self._labels: List[Optional[int]]
        if self._split != "test":
            path = self._data_folder / "scenes" / f"CLEVR_{self._split}_scenes.json"
            try:
                with open(path) as f:
                    scenes = json.load(f)["scenes"]
                counts = {s["image_filename"]: len(s["objects"]) for s in scenes}
                self._labels = [counts[p.name] for p in self._image_files]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise CorruptDatasetError(f"{path}: not a CLEVR scenes file covering every image ({e})") from e
        else:
            self._labels = [None] * len(self._image_files)

    def __len__(self) -> int:
        return len(self._image_files)

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        """``(PIL image, number of objects or None)``."""
        image, label = self.loader(self._image_files[idx]), self._labels[idx]
        return self._apply_transforms(image, label)

    def extra_repr(self) -> str:
        return f"split={self._split}"


class MovingMNIST(VisionDataset):
    """`Moving MNIST <http://www.cs.toronto.edu/~nitish/unsupervised_video/>`_: uint8 sequences ``T x 1 x 64 x 64``.

    Args:
        root: the directory holding ``MovingMNIST/mnist_test_seq.npy`` (a ``20 x N x 64 x 64`` array).
        split: None (all 20 frames), ``train`` (the first ``split_ratio`` frames) or ``test`` (the rest).
        split_ratio: frames in the train part, 1-19.
        transform: applied to the sequence (a flowvision tensor).
        download: fetch the md5-verified file when missing.

    The file is loaded with ``allow_pickle=False``.
    """

    _URL = "http://www.cs.toronto.edu/~nitish/unsupervised_video/mnist_test_seq.npy"

    def __init__(self, root: Union[str, Path], split: Optional[str] = None, split_ratio: int = 10,
                 transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform)
        self._base_folder = os.path.join(self.root, self.__class__.__name__)
        self._filename = self._URL.split("/")[-1]
        if split is not None:
            verify_str_arg(split, "split", ("train", "test"))
        self.split = split
        if not isinstance(split_ratio, int):
            raise TypeError(f"`split_ratio` should be an integer, but got {type(split_ratio)}")
        if not 1 <= split_ratio <= 19:
            raise ValueError(f"`split_ratio` should be `1 <= split_ratio <= 19`, but got {split_ratio} instead.")
        self.split_ratio = split_ratio
        path = os.path.join(self._base_folder, self._filename)
        if download and not os.path.exists(path):
            download_url(url=self._URL, root=self._base_folder, filename=self._filename,
                         md5="be083ec986bfe91a449d63653c411eb2")
        require(os.path.exists(path), path, self._URL, "be083ec986bfe91a449d63653c411eb2", self._base_folder)
        try:
            data = np.load(path, allow_pickle=False)
        except ValueError as e:
            raise CorruptDatasetError(f"{path} is not a readable .npy file: {e}") from e
        if data.ndim != 4:
            raise CorruptDatasetError(f"{path}: expected frames x sequences x H x W, got shape {data.shape}")
        if self.split == "train":
            data = data[: self.split_ratio]
        elif self.split == "test":
            data = data[self.split_ratio:]
        from .. import backend
        self.data = backend.from_numpy(np.ascontiguousarray(data.transpose(1, 0, 2, 3)[:, :, None]))

    def __getitem__(self, idx: int) -> Any:
        """The ``T x 1 x 64 x 64`` uint8 sequence ``idx``."""
        data = self.data[idx]
        if self.transform is not None:
            data = self.transform(data)
        return data

    def __len__(self) -> int:
        return len(self.data)
