"""Image-file classification datasets described by text/json/csv lists: Food101, DTD, FGVCAircraft, SUN397,
GTSRB, FER2013, OxfordIIITPet, RenderedSST2, Imagenette, EuroSAT, Country211."""
import csv
import json
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np
from PIL import Image

from ._base import FileListDataset, download_unless_present, read_lines, require, split_pairs
from .folder import ImageFolder, default_loader, find_classes, make_dataset
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_and_extract_archive, \
    verify_str_arg
from .vision import VisionDataset

__all__ = ["Food101", "DTD", "FGVCAircraft", "SUN397", "GTSRB", "FER2013", "OxfordIIITPet", "RenderedSST2",
           "Imagenette", "EuroSAT", "Country211"]

PathT = Union[str, Path]


def _open_rgb(path: PathT) -> Image.Image:
    return Image.open(path).convert("RGB")


class Food101(FileListDataset):
    """`Food-101 <https://data.vision.ee.ethz.ch/cvl/datasets_extra/food-101/>`_: ``food-101/meta/{split}.json``
    maps each class to its images (``food-101/images/<class>/<id>.jpg``).

    Args: root, split (``train``/``test``), transform, target_transform, download, loader.
    """

    _URL = "http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz"
    _MD5 = "85eeb15f3717b99a5da872d97d918f87"

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[PathT], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(self.root) / "food-101"
        self._meta_folder, self._images_folder = self._base_folder / "meta", self._base_folder / "images"
        download_unless_present(self._check_exists, download, f"{self._meta_folder} or {self._images_folder}",
                                self._URL, self._MD5, self.root)
        path = self._meta_folder / f"{split}.json"
        try:
            with open(path) as f:
                metadata = json.load(f)
        except json.JSONDecodeError as e:
            raise CorruptDatasetError(f"{path} is not valid json: {e}") from e
        self.classes = sorted(metadata.keys())
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._labels, self._image_files = [], []
        for label, rel_paths in metadata.items():
            self._labels += [self.class_to_idx[label]] * len(rel_paths)
            self._image_files += [self._images_folder.joinpath(*f"{p}.jpg".split("/")) for p in rel_paths]
        self.loader = loader

    def _check_exists(self) -> bool:
        return self._meta_folder.is_dir() and self._images_folder.is_dir()

    def extra_repr(self) -> str:
        return f"split={self._split}"


class DTD(FileListDataset):
    """`Describable Textures <https://www.robots.ox.ac.uk/~vgg/data/dtd/>`_: ``dtd/dtd/labels/{split}{partition}.txt``.

    Args: root, split (``train``/``val``/``test``), partition (1-10), transform, target_transform, download, loader.
    """

    _URL = "https://www.robots.ox.ac.uk/~vgg/data/dtd/download/dtd-r1.0.1.tar.gz"
    _MD5 = "fff73e5086ae6bdbea199a49dfb8a4c1"

    def __init__(self, root: PathT, split: str = "train", partition: int = 1, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[PathT], Any] = default_loader) -> None:
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        if not isinstance(partition, int) or not 1 <= partition <= 10:
            raise ValueError(f"Parameter 'partition' should be an integer with `1 <= partition <= 10`, "
                             f"but got {partition} instead")
        self._partition = partition
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = Path(self.root) / type(self).__name__.lower()
        self._data_folder = self._base_folder / "dtd"
        self._meta_folder, self._images_folder = self._data_folder / "labels", self._data_folder / "images"
        download_unless_present(self._data_folder.is_dir, download, str(self._data_folder), self._URL, self._MD5,
                                self._base_folder)
        path = self._meta_folder / f"{self._split}{self._partition}.txt"
        classes = []
        self._image_files = []
        for cls, name in split_pairs(read_lines(path), path, "/", n=2):
            self._image_files.append(self._images_folder.joinpath(cls, name))
            classes.append(cls)
        self.classes = sorted(set(classes))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._labels = [self.class_to_idx[c] for c in classes]
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}, partition={self._partition}"


class FGVCAircraft(FileListDataset):
    """`FGVC-Aircraft <https://www.robots.ox.ac.uk/~vgg/data/fgvc-aircraft/>`_ 2013b.

    Args: root, split (``train``/``val``/``trainval``/``test``), annotation_level (``variant``/``family``/
    ``manufacturer``), transform, target_transform, download, loader.
    """

    _URL = "https://www.robots.ox.ac.uk/~vgg/data/fgvc-aircraft/archives/fgvc-aircraft-2013b.tar.gz"

    def __init__(self, root: PathT, split: str = "trainval", annotation_level: str = "variant",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Callable[[PathT], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "trainval", "test"))
        self._annotation_level = verify_str_arg(annotation_level, "annotation_level",
                                                ("variant", "family", "manufacturer"))
        self._data_path = os.path.join(self.root, "fgvc-aircraft-2013b")
        download_unless_present(lambda: os.path.isdir(self._data_path), download, self._data_path, self._URL, None,
                                self.root)
        names = {"variant": "variants.txt", "family": "families.txt", "manufacturer": "manufacturers.txt"}
        with open(os.path.join(self._data_path, "data", names[self._annotation_level])) as f:
            self.classes = [line.strip() for line in f]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        images = os.path.join(self._data_path, "data", "images")
        path = os.path.join(self._data_path, "data", f"images_{self._annotation_level}_{self._split}.txt")
        self._image_files, self._labels = [], []
        for image_name, label in split_pairs(read_lines(path), path, " ", 1, n=2):
            self._image_files.append(os.path.join(images, f"{image_name}.jpg"))
            self._labels.append(self.class_to_idx[label])
        self.loader = loader


class SUN397(FileListDataset):
    """`SUN397 <https://vision.princeton.edu/projects/2010/SUN/>`_ scenes: ``SUN397/ClassName.txt`` and
    ``SUN397/<letter>/<class path>/sun_*.jpg``. Images are listed in sorted path order (torchvision lists them in
    the file system's order).

    Args: root, transform, target_transform, download, loader.
    """

    _DATASET_URL = "http://vision.princeton.edu/projects/2010/SUN/SUN397.tar.gz"
    _DATASET_MD5 = "8ca2778205c41d23104230ba66911c7a"

    def __init__(self, root: PathT, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Callable[[PathT], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._data_dir = Path(self.root) / "SUN397"
        download_unless_present(self._data_dir.is_dir, download, str(self._data_dir), self._DATASET_URL,
                                self._DATASET_MD5, self.root)
        with open(self._data_dir / "ClassName.txt") as f:
            self.classes = [c[3:].strip() for c in f]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._image_files = sorted(self._data_dir.rglob("sun_*.jpg"))
        try:
            self._labels = [self.class_to_idx["/".join(p.relative_to(self._data_dir).parts[1:-1])]
                            for p in self._image_files]
        except KeyError as e:
            raise CorruptDatasetError(f"{self._data_dir}: image folder {e} is not listed in ClassName.txt") from e
        self.loader = loader


class GTSRB(FileListDataset):
    """`German Traffic Sign Recognition Benchmark <https://benchmark.ini.rub.de/>`_: training ``.ppm`` files in
    ``gtsrb/GTSRB/Training/<class>/``, test labels in ``gtsrb/GT-final_test.csv``.

    Args: root, split (``train``/``test``), transform, target_transform, download.
    """

    _BASE_URL = "https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370/"

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(self.root) / "gtsrb"
        self._target_folder = self._base_folder / "GTSRB" / ("Training" if self._split == "train" else "Final_Test/Images")
        if download:
            self.download()
        require(self._target_folder.is_dir(), str(self._target_folder), self._BASE_URL, None, self._base_folder)
        if self._split == "train":
            samples = make_dataset(str(self._target_folder), extensions=(".ppm",))
        else:
            with open(self._base_folder / "GT-final_test.csv") as f:
                samples = [(str(self._target_folder / row["Filename"]), int(row["ClassId"]))
                           for row in csv.DictReader(f, delimiter=";", skipinitialspace=True)]
        self._image_files = [p for p, _ in samples]
        self._labels = [t for _, t in samples]
        self.loader = _open_rgb

    def download(self) -> None:
        """Download (md5-verified) and safely extract the split's archives unless present."""
        if self._target_folder.is_dir():
            return
        files = ([("GTSRB-Training_fixed.zip", "513f3c79a4c5141765e10e952eaa2478")] if self._split == "train" else
                 [("GTSRB_Final_Test_Images.zip", "c7e4e6327067d32654124b0fe9e82185"),
                  ("GTSRB_Final_Test_GT.zip", "fe31e9c9270bbcd7b84b7f21a9d9d9e5")])
        for name, md5 in files:
            download_and_extract_archive(self._BASE_URL + name, download_root=str(self._base_folder), md5=md5)


class FER2013(VisionDataset):
    """`FER2013 <https://www.kaggle.com/c/challenges-in-representation-learning-facial-expression-recognition-challenge>`_
    48x48 grey faces from the Kaggle csv files in ``root/fer2013`` (``train.csv``/``test.csv``, or the combined
    ``fer2013.csv`` / ``icml_face_data.csv``). Kaggle needs a login, so there is no ``download``.

    Args: root, split (``train``/``test``), transform, target_transform.
    """

    _RESOURCES = {
        "train": ("train.csv", "3f0dfb3d3fd99c811a1299cb947e3131"),
        "test": ("test.csv", "b02c2298636a634e8c2faabbf3ea9a23"),
        "fer": ("fer2013.csv", "f8428a1edbd21e88f42c73edd2a14f95"),
        "icml": ("icml_face_data.csv", "b114b9e04e6949e5fe8b6a98b3892b1d"),
    }

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        self._split = verify_str_arg(split, "split", ("train", "test"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        base = Path(self.root) / "fer2013"
        use_fer = (base / self._RESOURCES["fer"][0]).exists()
        use_icml = not use_fer and (base / self._RESOURCES["icml"][0]).exists()
        file_name, md5 = self._RESOURCES["fer" if use_fer else "icml" if use_icml else self._split]
        data_file = base / file_name
        if not check_integrity(str(data_file), md5=md5):
            raise DatasetNotFoundError(
                f"{file_name} not found in {base} or corrupted (md5 must be {md5}). You can download it from "
                "https://www.kaggle.com/c/challenges-in-representation-learning-facial-expression-recognition-challenge")
        pixels_key, usage_key = (" pixels", " Usage") if use_icml else ("pixels", "Usage")
        with_label = use_fer or use_icml or self._split == "train"
        with open(data_file, newline="") as f:
            rows = list(csv.DictReader(f))
        if use_fer or use_icml:
            keep = ("Training",) if self._split == "train" else ("PublicTest", "PrivateTest")
            rows = [r for r in rows if r[usage_key] in keep]
        self._samples = []
        for i, row in enumerate(rows):
            try:
                img = np.array(row[pixels_key].split(), dtype=np.int64).astype(np.uint8).reshape(48, 48)
            except (ValueError, KeyError, AttributeError) as e:
                raise CorruptDatasetError(f"{data_file}: row {i + 2} has no 48x48 '{pixels_key}' field: {e}") from e
            self._samples.append((img, int(row["emotion"]) if with_label else None))

    def __len__(self) -> int:
        return len(self._samples)

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        """``(PIL L image, emotion index or None)``."""
        pixels, target = self._samples[idx]
        image = Image.fromarray(pixels)
        return self._apply_transforms(image, target)

    def extra_repr(self) -> str:
        return f"split={self._split}"


class OxfordIIITPet(VisionDataset):
    """`Oxford-IIIT Pet <https://www.robots.ox.ac.uk/~vgg/data/pets/>`_: breeds, cat/dog and trimaps.

    Args:
        root: the directory holding ``oxford-iiit-pet/{images,annotations}``.
        split: ``trainval`` or ``test``.
        target_types: ``category``, ``binary-category``, ``segmentation`` (a PIL trimap) or a list of them.
        transforms: as usual.
        transform: as usual.
        target_transform: as usual.
        download: as usual.
    """

    _RESOURCES = (
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/images.tar.gz", "5c4f3ee8e5d25df40f4fd59a7f44e54c"),
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/annotations.tar.gz", "95a8c909bbe2e81eed6a22bccdf3f68f"),
    )
    _VALID_TARGET_TYPES = ("category", "binary-category", "segmentation")

    def __init__(self, root: PathT, split: str = "trainval", target_types: Union[Sequence[str], str] = "category",
                 transforms: Optional[Callable] = None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        self._split = verify_str_arg(split, "split", ("trainval", "test"))
        if isinstance(target_types, str):
            target_types = [target_types]
        self._target_types = [verify_str_arg(t, "target_types", self._VALID_TARGET_TYPES) for t in target_types]
        super().__init__(root, transforms=transforms, transform=transform, target_transform=target_transform)
        self._base_folder = Path(self.root) / "oxford-iiit-pet"
        self._images_folder = self._base_folder / "images"
        self._anns_folder = self._base_folder / "annotations"
        self._segs_folder = self._anns_folder / "trimaps"
        if download and not self._check_exists():
            for url, md5 in self._RESOURCES:
                download_and_extract_archive(url, download_root=str(self._base_folder), md5=md5)
        require(self._check_exists(), f"{self._images_folder} or {self._anns_folder}", self._RESOURCES[0][0],
                self._RESOURCES[0][1], self._base_folder)
        path = self._anns_folder / f"{self._split}.txt"
        image_ids, self._labels, self._bin_labels = [], [], []
        for image_id, label, bin_label, _ in split_pairs(read_lines(path), path, n=4):
            image_ids.append(image_id)
            self._labels.append(int(label) - 1)
            self._bin_labels.append(int(bin_label) - 1)
        self.bin_classes = ["Cat", "Dog"]
        breeds = sorted({(i.rsplit("_", 1)[0], lab) for i, lab in zip(image_ids, self._labels)}, key=lambda x: x[1])
        self.classes = [" ".join(part.title() for part in raw.split("_")) for raw, _ in breeds]
        self.bin_class_to_idx = dict(zip(self.bin_classes, range(len(self.bin_classes))))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._images = [self._images_folder / f"{i}.jpg" for i in image_ids]
        self._segs = [self._segs_folder / f"{i}.png" for i in image_ids]

    def _check_exists(self) -> bool:
        return self._images_folder.is_dir() and self._anns_folder.is_dir()

    def __len__(self) -> int:
        return len(self._images)

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, target)``; several target types give a tuple."""
        image = Image.open(self._images[idx]).convert("RGB")
        target: List[Any] = []
        for t in self._target_types:
            if t == "category":
                target.append(self._labels[idx])
            elif t == "binary-category":
                target.append(self._bin_labels[idx])
            else:
                target.append(Image.open(self._segs[idx]))
        out: Any = None if not target else target[0] if len(target) == 1 else tuple(target)
        return self._apply_joint_transforms(image, out)


class RenderedSST2(FileListDataset):
    """`Rendered SST2 <https://github.com/openai/CLIP/blob/main/data/rendered-sst2.md>`_: sentences rendered as
    images in ``rendered-sst2/{train,valid,test}/{negative,positive}/*.png``.

    Args: root, split (``train``/``val``/``test``), transform, target_transform, download, loader.
    """

    _URL = "https://openaipublic.azureedge.net/clip/data/rendered-sst2.tgz"
    _MD5 = "2384d08e9dcfa4bd55b324e610496ee5"

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        folder = Path(self.root) / "rendered-sst2" / {"train": "train", "val": "valid", "test": "test"}[self._split]
        self.classes = ["negative", "positive"]
        self.class_to_idx = {"negative": 0, "positive": 1}
        download_unless_present(lambda: all((folder / c).is_dir() for c in self.classes), download,
                                f"{folder}/{{negative,positive}}", self._URL, self._MD5, self.root)
        samples = make_dataset(str(folder), extensions=("png",))
        self._image_files, self._labels = [p for p, _ in samples], [t for _, t in samples]
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}"


class Imagenette(FileListDataset):
    """`Imagenette <https://github.com/fastai/imagenette>`_: 10 ImageNet classes, ``imagenette2[-320|-160]/{train,val}``.

    Args: root, split (``train``/``val``), size (``full``/``320px``/``160px``), download, transform,
    target_transform, loader.
    """

    _ARCHIVES = {
        "full": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2.tgz", "fe2fc210e6bb7c5664d602c3cd71e612"),
        "320px": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-320.tgz", "3df6f0d01a2c9592104656642f5e78a3"),
        "160px": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-160.tgz", "e793b78cc4c9e9a4ccc0c1155377a412"),
    }
    _WNID_TO_CLASS = {
        "n01440764": ("tench", "Tinca tinca"),
        "n02102040": ("English springer", "English springer spaniel"),
        "n02979186": ("cassette player",),
        "n03000684": ("chain saw", "chainsaw"),
        "n03028079": ("church", "church building"),
        "n03394916": ("French horn", "horn"),
        "n03417042": ("garbage truck", "dustcart"),
        "n03425413": ("gas pump", "gasoline pump", "petrol pump", "island dispenser"),
        "n03445777": ("golf ball",),
        "n03888257": ("parachute", "chute"),
    }

    def __init__(self, root: PathT, split: str = "train", size: str = "full", download: bool = False,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ["train", "val"])
        self._size = verify_str_arg(size, "size", ["full", "320px", "160px"])
        self._url, self._md5 = self._ARCHIVES[self._size]
        self._size_root = Path(self.root) / Path(self._url).stem
        self._image_root = str(self._size_root / self._split)
        download_unless_present(self._size_root.exists, download, str(self._size_root), self._url, self._md5,
                                self.root)
        self.wnids, self.wnid_to_idx = find_classes(self._image_root)
        self.classes = [self._WNID_TO_CLASS[w] for w in self.wnids]
        self.class_to_idx = {name: idx for w, idx in self.wnid_to_idx.items() for name in self._WNID_TO_CLASS[w]}
        samples = make_dataset(self._image_root, self.wnid_to_idx, extensions=".jpeg")
        self._image_files, self._labels = [p for p, _ in samples], [t for _, t in samples]
        self.loader = loader


class EuroSAT(ImageFolder):
    """`EuroSAT <https://github.com/phelber/eurosat>`_ RGB: an ImageFolder at ``eurosat/2750``.

    Args: root, transform, target_transform, download, loader.
    """

    _URL = ("https://huggingface.co/datasets/torchgeo/eurosat/resolve/c877bcd43f099cd0196738f714544e355477f3fd/"
            "EuroSAT.zip")
    _MD5 = "c8fa014336c82ac7804f0398fcb19387"

    def __init__(self, root: PathT, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Callable[[str], Any] = default_loader) -> None:
        self.root = os.path.expanduser(root)
        self._base_folder = os.path.join(self.root, "eurosat")
        self._data_folder = os.path.join(self._base_folder, "2750")
        if download and not os.path.exists(self._data_folder):
            os.makedirs(self._base_folder, exist_ok=True)
            download_and_extract_archive(self._URL, download_root=self._base_folder, md5=self._MD5)
        require(os.path.exists(self._data_folder), self._data_folder, self._URL, self._MD5, self._base_folder)
        super().__init__(self._data_folder, transform=transform, target_transform=target_transform, loader=loader)
        self.root = os.path.expanduser(root)


class Country211(ImageFolder):
    """`Country211 <https://github.com/openai/CLIP/blob/main/data/country211.md>`_: ImageFolders at
    ``country211/{train,valid,test}``.

    Args: root, split (``train``/``valid``/``test``), transform, target_transform, download, loader.
    """

    _URL = "https://openaipublic.azureedge.net/clip/data/country211.tgz"
    _MD5 = "84988d7644798601126c29e9877aab6a"

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[str], Any] = default_loader) -> None:
        self._split = verify_str_arg(split, "split", ("train", "valid", "test"))
        root = Path(root).expanduser()
        self.root = str(root)
        self._base_folder = root / "country211"
        download_unless_present(self._base_folder.is_dir, download, str(self._base_folder), self._URL, self._MD5,
                                self.root)
        super().__init__(str(self._base_folder / self._split), transform=transform,
                         target_transform=target_transform, loader=loader)
        self.root = str(root)
