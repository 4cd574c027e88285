"""Places365 (file lists + image folders) and iNaturalist 2017-2021 (category directories)."""
import os
from os import path
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
from urllib.parse import urljoin

from PIL import Image

from .folder import default_loader
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_and_extract_archive, \
    verify_str_arg
from .vision import VisionDataset

__all__ = ["Places365", "INaturalist"]


class Places365(VisionDataset):
    """`Places365 <http://places2.csail.mit.edu/>`_ scenes.

    Args:
        root: the directory holding ``categories_places365.txt``, the file lists and the image folders.
        split: ``train-standard``, ``train-challenge``, ``val`` or ``test``.
        small: the 256x256 images instead of the high-resolution ones.
        download: fetch (md5-verified) and safely extract the devkit and the split's images.
        transform: as usual.
        target_transform: as usual.
        loader: as usual.
    """

    _SPLITS = ("train-standard", "train-challenge", "val", "test")
    _BASE_URL = "http://data.csail.mit.edu/places/places365/"
    _DEVKIT_META = {
        "standard": ("filelist_places365-standard.tar", "35a0585fee1fa656440f3ab298f8479c"),
        "challenge": ("filelist_places365-challenge.tar", "70a8307e459c3de41690a7c76c931734"),
    }
    _CATEGORIES_META = ("categories_places365.txt", "06c963b85866bd0649f97cb43dd16673")
    _FILE_LIST_META = {
        "train-standard": ("places365_train_standard.txt", "30f37515461640559006b8329efbed1a"),
        "train-challenge": ("places365_train_challenge.txt", "b2931dc997b8c33c27e7329c073a6b57"),
        "val": ("places365_val.txt", "e9f2fd57bfd9d07630173f4e8708e4b1"),
        "test": ("places365_test.txt", "2fce8233fe493576d724142e45d93653"),
    }
    _IMAGES_META = {
        ("train-standard", False): ("train_large_places365standard.tar", "67e186b496a84c929568076ed01a8aa1"),
        ("train-challenge", False): ("train_large_places365challenge.tar", "605f18e68e510c82b958664ea134545f"),
        ("val", False): ("val_large.tar", "9b71c4993ad89d2d8bcbdc4aef38042f"),
        ("test", False): ("test_large.tar", "41a4b6b724b1d2cd862fb3871ed59913"),
        ("train-standard", True): ("train_256_places365standard.tar", "53ca1c756c3d1e7809517cc47c5561c5"),
        ("train-challenge", True): ("train_256_places365challenge.tar", "741915038a5e3471ec7332404dfb64ef"),
        ("val", True): ("val_256.tar", "e27b17d8d44f4af9a78502beb927f808"),
        ("test", True): ("test_256.tar", "f532f6ad7b582262a2ec8009075e186b"),
    }

    def __init__(self, root: Union[str, Path], split: str = "train-standard", small: bool = False,
                 download: bool = False, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self._SPLITS)
        self.small = small
        self.loader = loader
        self.classes, self.class_to_idx = self.load_categories(download)
        self.imgs, self.targets = self.load_file_list(download)
        if download:
            self.download_images()

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, class index or None for test)``."""
        file, target = self.imgs[index]
        image = self.loader(file)
        return self._apply_joint_transforms(image, target)

    def __len__(self) -> int:
        return len(self.imgs)

    @property
    def variant(self) -> str:
        return "challenge" if "challenge" in self.split else "standard"

    @property
    def images_dir(self) -> str:
        size = "256" if self.small else "large"
        return path.join(self.root, f"data_{size}_{self.variant}" if self.split.startswith("train")
                         else f"{self.split}_{size}")

    def _ensure(self, file: str, md5: str, download: bool) -> None:
        if check_integrity(file, md5):
            return
        if not download:
            name, archive_md5 = self._DEVKIT_META[self.variant]
            raise DatasetNotFoundError(f"The file {file} does not exist or is corrupted (md5 must be {md5}). You can "
                                       f"set download=True to download {urljoin(self._BASE_URL, name)} (md5 "
                                       f"{archive_md5}) into {self.root}.")
        self.download_devkit()

    def load_categories(self, download: bool = True) -> Tuple[List[str], Dict[str, int]]:
        """Class names (sorted) and ``class -> index`` from ``categories_places365.txt``."""
        file, md5 = self._CATEGORIES_META
        file = path.join(self.root, file)
        self._ensure(file, md5, download)
        with open(file) as fh:
            try:
                class_to_idx = {cls: int(idx) for cls, idx in (line.split() for line in fh if line.strip())}
            except ValueError as e:
                raise CorruptDatasetError(f"{file}: lines must be '<class> <index>': {e}") from e
        return sorted(class_to_idx), class_to_idx

    def load_file_list(self, download: bool = True) -> Tuple[List[Tuple[str, Optional[int]]], List[Optional[int]]]:
        """``(path, index or None)`` of every image of the split, from its file list."""
        file, md5 = self._FILE_LIST_META[self.split]
        file = path.join(self.root, file)
        self._ensure(file, md5, download)
        images = []
        with open(file) as fh:
            for line in fh:
                image, idx = (line.split() + [None])[:2]
                images.append((path.join(self.images_dir, image.lstrip("/").replace("/", os.sep)),
                               int(idx) if idx is not None else None))
        return images, [t for _, t in images]

    def download_devkit(self) -> None:
        """Download (md5-verified) and safely extract the file lists of the split's variant."""
        file, md5 = self._DEVKIT_META[self.variant]
        download_and_extract_archive(urljoin(self._BASE_URL, file), self.root, md5=md5)

    def download_images(self) -> None:
        """Download (md5-verified) and safely extract the split's images unless present."""
        if path.exists(self.images_dir):
            return
        file, md5 = self._IMAGES_META[(self.split, self.small)]
        download_and_extract_archive(urljoin(self._BASE_URL, file), self.root, md5=md5)
        if self.split.startswith("train"):
            os.rename(self.images_dir.rsplit("_", 1)[0], self.images_dir)

    def extra_repr(self) -> str:
        return f"Split: {self.split}\nSmall: {self.small}"


CATEGORIES_2021 = ["kingdom", "phylum", "class", "order", "family", "genus"]
DATASET_URLS = {
    "2017": "https://ml-inat-competition-datasets.s3.amazonaws.com/2017/train_val_images.tar.gz",
    "2018": "https://ml-inat-competition-datasets.s3.amazonaws.com/2018/train_val2018.tar.gz",
    "2019": "https://ml-inat-competition-datasets.s3.amazonaws.com/2019/train_val2019.tar.gz",
    "2021_train": "https://ml-inat-competition-datasets.s3.amazonaws.com/2021/train.tar.gz",
    "2021_train_mini": "https://ml-inat-competition-datasets.s3.amazonaws.com/2021/train_mini.tar.gz",
    "2021_valid": "https://ml-inat-competition-datasets.s3.amazonaws.com/2021/val.tar.gz",
}
DATASET_MD5 = {
    "2017": "7c784ea5e424efaec655bd392f87301f",
    "2018": "b1c6952ce38f31868cc50ea72d066cc3",
    "2019": "c60a6e2962c9b8ccbd458d12c8582644",
    "2021_train": "e0526d53c7f7b2e3167b2b43bb2690ed",
    "2021_train_mini": "db6ed8330e634445efc8fec83ae81442",
    "2021_valid": "f6f6e0e242e3d4c9569ba56400938afc",
}


class INaturalist(VisionDataset):
    """`iNaturalist <https://github.com/visipedia/inat_comp>`_ 2017, 2018, 2019 and 2021 (``root/<version>/``).

    Args:
        root: the directory holding the ``<version>`` folder.
        version: ``2017``, ``2018``, ``2019``, ``2021_train``, ``2021_train_mini`` or ``2021_valid``.
        target_type: ``full`` (the species), 2021: ``kingdom`` ... ``genus``; earlier: ``super``; or a list.
        transform: as usual.
        target_transform: as usual.
        download: as usual.
        loader: as usual.

    Images of a category are listed in sorted order (torchvision uses the file system's order).
    """

    def __init__(self, root: Union[str, Path], version: str = "2021_train", target_type: Union[List[str], str] = "full",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Optional[Callable[[Union[str, Path]], Any]] = None) -> None:
        self.version = verify_str_arg(version, "version", DATASET_URLS.keys())
        super().__init__(os.path.join(root, version), transform=transform, target_transform=target_transform)
        os.makedirs(root, exist_ok=True)
        if download:
            self.download()
        if not self._check_exists():
            raise DatasetNotFoundError(f"Dataset not found in {self.root}. You can use download=True to download "
                                       f"{DATASET_URLS[self.version]} (md5 {DATASET_MD5[self.version]})")
        self.all_categories: List[str] = []
        self.categories_index: Dict[str, Dict[str, int]] = {}
        self.categories_map: List[Dict[str, int]] = []
        target_type = target_type if isinstance(target_type, list) else [target_type]
        if self.version.startswith("2021"):
            self.target_type = [verify_str_arg(t, "target_type", ("full", *CATEGORIES_2021)) for t in target_type]
            self._init_2021()
        else:
            self.target_type = [verify_str_arg(t, "target_type", ("full", "super")) for t in target_type]
            self._init_pre2021()
        self.index: List[Tuple[int, str]] = [(i, f) for i, d in enumerate(self.all_categories)
                                             for f in sorted(os.listdir(os.path.join(self.root, d)))]
        self.loader = loader

    def _init_2021(self) -> None:
        self.all_categories = sorted(os.listdir(self.root))
        self.categories_index = {k: {} for k in CATEGORIES_2021}
        for i, name in enumerate(self.all_categories):
            pieces = name.split("_")
            if len(pieces) != 8:
                raise CorruptDatasetError(f"Unexpected category name {name}, wrong number of pieces")
            if pieces[0] != f"{i:05d}":
                raise CorruptDatasetError(f"Unexpected category id {pieces[0]}, expecting {i:05d}")
            cat_map = {}
            for cat, part in zip(CATEGORIES_2021, pieces[1:7]):
                cat_map[cat] = self.categories_index[cat].setdefault(part, len(self.categories_index[cat]))
            self.categories_map.append(cat_map)

    def _init_pre2021(self) -> None:
        self.categories_index = {"super": {}}
        cat_index = 0
        for sindex, scat in enumerate(sorted(os.listdir(self.root))):
            self.categories_index["super"][scat] = sindex
            for subcat in sorted(os.listdir(os.path.join(self.root, scat))):
                if self.version == "2017":
                    subcat_i, cat_index = cat_index, cat_index + 1
                else:
                    try:
                        subcat_i = int(subcat)
                    except ValueError:
                        raise CorruptDatasetError(f"Unexpected non-numeric dir name: {subcat}") from None
                if subcat_i >= len(self.categories_map):
                    grow = subcat_i - len(self.categories_map) + 1
                    self.categories_map.extend([{}] * grow)
                    self.all_categories.extend([""] * grow)
                if self.categories_map[subcat_i]:
                    raise CorruptDatasetError(f"Duplicate category {subcat}")
                self.categories_map[subcat_i] = {"super": sindex}
                self.all_categories[subcat_i] = os.path.join(scat, subcat)
        for i, c in enumerate(self.categories_map):
            if not c:
                raise CorruptDatasetError(f"Missing category {i}")

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, target)``; several target types give a tuple."""
        cat_id, fname = self.index[index]
        image_path = os.path.join(self.root, self.all_categories[cat_id], fname)
        img = self.loader(image_path) if self.loader is not None else Image.open(image_path)
        target: Any = [cat_id if t == "full" else self.categories_map[cat_id][t] for t in self.target_type]
        target = tuple(target) if len(target) > 1 else target[0]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.index)

    def category_name(self, category_type: str, category_id: int) -> str:
        """The name of a category id of ``category_type`` (``full`` or a rank)."""
        if category_type == "full":
            return self.all_categories[category_id]
        if category_type not in self.categories_index:
            raise ValueError(f"Invalid category type '{category_type}'")
        for name, i in self.categories_index[category_type].items():
            if i == category_id:
                return name
        raise ValueError(f"Invalid category id {category_id} for {category_type}")

    def _check_exists(self) -> bool:
        return os.path.isdir(self.root) and len(os.listdir(self.root)) > 0

    def download(self) -> None:
        """Download (md5-verified), safely extract and rename the version's archive unless present."""
        if self._check_exists():
            return
        base_root = os.path.dirname(self.root)
        download_and_extract_archive(DATASET_URLS[self.version], base_root, filename=f"{self.version}.tgz",
                                     md5=DATASET_MD5[self.version])
        orig = os.path.join(base_root, os.path.basename(DATASET_URLS[self.version])[: -len(".tar.gz")])
        if not os.path.exists(orig):
            raise CorruptDatasetError(f"Unable to find downloaded files at {orig}")
        os.rename(orig, self.root)
