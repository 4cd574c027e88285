"""Labeled Faces in the Wild: people (identity classification) and pairs (verification) views."""
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._base import read_lines
from .folder import default_loader
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, verify_str_arg
from .vision import VisionDataset

__all__ = ["LFWPeople", "LFWPairs"]


class _LFW(VisionDataset):
    base_folder = "lfw-py"
    download_url_prefix = "http://vis-www.cs.umass.edu/lfw/"
    file_dict = {
        "original": ("lfw", "lfw.tgz", "a17d05bd522c52d84eca14327a23d494"),
        "funneled": ("lfw_funneled", "lfw-funneled.tgz", "1b42dfed7d15c9b2dd63d5e5840c86ad"),
        "deepfunneled": ("lfw-deepfunneled", "lfw-deepfunneled.tgz", "68331da3eb755a505a502b5aacb3c201"),
    }
    checksums = {
        "pairs.txt": "9f1ba174e4e1c508ff7cdf10ac338a7d",
        "pairsDevTest.txt": "5132f7440eb68cf58910c8a45a2ac10b",
        "pairsDevTrain.txt": "4f27cbf15b2da4a85c1907eb4181ad21",
        "people.txt": "450f0863dd89e85e73936a6d71a3474b",
        "peopleDevTest.txt": "e4bf5be0a43b5dcd9dc5ccfcb8fb19c5",
        "peopleDevTrain.txt": "54eaac34beb6d042ed3a7d883e247a21",
        "lfw-names.txt": "a6d0a479bd074669f656265a6e693f6d",
    }
    annot_file = {"10fold": "", "train": "DevTrain", "test": "DevTest"}
    names = "lfw-names.txt"

    def __init__(self, root: str, split: str, image_set: str, view: str, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(os.path.join(root, self.base_folder), transform=transform, target_transform=target_transform)
        self.image_set = verify_str_arg(image_set.lower(), "image_set", self.file_dict.keys())
        images_dir, self.filename, self.md5 = self.file_dict[self.image_set]
        self.view = verify_str_arg(view.lower(), "view", ["people", "pairs"])
        self.split = verify_str_arg(split.lower(), "split", ["10fold", "train", "test"])
        self.labels_file = f"{self.view}{self.annot_file[self.split]}.txt"
        self.data: List[Any] = []
        self.images_dir = os.path.join(self.root, images_dir)
        if download:
            raise ValueError("LFW is no longer available for automatic download. Download it manually (a commonly "
                             "used mirror: https://www.kaggle.com/datasets/jessicali9530/lfw-dataset) and put "
                             f"{images_dir}/ (or {self.filename}), {self.labels_file} and {self.names} in {self.root}")
        if not self._check_integrity():
            raise DatasetNotFoundError(
                f"Dataset not found or corrupted in {self.root}: expected {images_dir}/ (or {self.filename}, md5 "
                f"{self.md5}) and {self.labels_file} (md5 {self.checksums[self.labels_file]})"
                + (f" and {self.names}" if self.view == "people" else ""))
        self._loader = loader

    def _check_integrity(self) -> bool:
        images = os.path.isdir(self.images_dir) or check_integrity(os.path.join(self.root, self.filename), self.md5)
        labels = check_integrity(os.path.join(self.root, self.labels_file), self.checksums[self.labels_file])
        if not images or not labels:
            return False
        return self.view != "people" or check_integrity(os.path.join(self.root, self.names), self.checksums[self.names])

    def _get_path(self, identity: str, no: Union[int, str]) -> str:
        return os.path.join(self.images_dir, identity, f"{identity}_{int(no):04d}.jpg")

    def _lines(self) -> List[str]:
        with open(os.path.join(self.root, self.labels_file)) as f:
            return f.readlines()

    def extra_repr(self) -> str:
        return f"Alignment: {self.image_set}\nSplit: {self.split}"

    def __len__(self) -> int:
        return len(self.data)


class LFWPeople(_LFW):
    """`LFW <http://vis-www.cs.umass.edu/lfw/>`_ people view: ``(face image, identity index)``.

    Args: root (holding ``lfw-py``), split (``10fold``/``train``/``test``), image_set (``original``/``funneled``/
    ``deepfunneled``), transform, target_transform, download (raises: no public URL any more), loader.
    """

    def __init__(self, root: str, split: str = "10fold", image_set: str = "funneled",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, split, image_set, "people", transform, target_transform, download, loader=loader)
        self.class_to_idx = self._get_classes()
        self.data, self.targets = self._get_people()

    def _get_people(self) -> Tuple[List[str], List[int]]:
        data, targets = [], []
        lines = self._lines()
        path = os.path.join(self.root, self.labels_file)
        try:
            n_folds, s = (int(lines[0]), 1) if self.split == "10fold" else (1, 0)
            for _ in range(n_folds):
                n = int(lines[s])
                for identity, num in (ln.strip().split("\t") for ln in lines[s + 1: s + n + 1]):
                    for k in range(1, int(num) + 1):
                        data.append(self._get_path(identity, k))
                        targets.append(self.class_to_idx[identity])
                s += n + 1
        except (ValueError, IndexError, KeyError) as e:
            raise CorruptDatasetError(f"{path}: malformed people list ({type(e).__name__}: {e})") from e
        return data, targets

    def _get_classes(self) -> Dict[str, int]:
        names = [line.split()[0] for line in read_lines(os.path.join(self.root, self.names))]
        return {name: i for i, name in enumerate(names)}

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, identity index)``."""
        img, target = self._loader(self.data[index]), self.targets[index]
        return self._apply_transforms(img, target)

    def extra_repr(self) -> str:
        return super().extra_repr() + f"\nClasses (identities): {len(self.class_to_idx)}"


class LFWPairs(_LFW):
    """`LFW <http://vis-www.cs.umass.edu/lfw/>`_ pairs view: ``(image 1, image 2, 1 if same person else 0)``.

    Args: as :class:`LFWPeople`.
    """

    def __init__(self, root: str, split: str = "10fold", image_set: str = "funneled",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 download: bool = False, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, split, image_set, "pairs", transform, target_transform, download, loader=loader)
        self.pair_names, self.data, self.targets = self._get_pairs()

    def _get_pairs(self) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]], List[int]]:
        pair_names, data, targets = [], [], []
        lines = self._lines()
        path = os.path.join(self.root, self.labels_file)
        try:
            if self.split == "10fold":
                n_folds, n_pairs = (int(v) for v in lines[0].split("\t"))
            else:
                n_folds, n_pairs = 1, int(lines[0])
            s = 1
            for _ in range(n_folds):
                matched = [ln.strip().split("\t") for ln in lines[s: s + n_pairs]]
                unmatched = [ln.strip().split("\t") for ln in lines[s + n_pairs: s + 2 * n_pairs]]
                s += 2 * n_pairs
                for p in matched:
                    pair_names.append((p[0], p[0]))
                    data.append((self._get_path(p[0], p[1]), self._get_path(p[0], p[2])))
                    targets.append(1)
                for p in unmatched:
                    pair_names.append((p[0], p[2]))
                    data.append((self._get_path(p[0], p[1]), self._get_path(p[2], p[3])))
                    targets.append(0)
        except (ValueError, IndexError) as e:
            raise CorruptDatasetError(f"{path}: malformed pairs list ({type(e).__name__}: {e})") from e
        return pair_names, data, targets

    def __getitem__(self, index: int) -> Tuple[Any, Any, int]:
        """``(PIL image 1, PIL image 2, same)``."""
        a, b = self.data[index]
        img1, img2, target = self._loader(a), self._loader(b), self.targets[index]
        if self.transform is not None:
            img1, img2 = self.transform(img1), self.transform(img2)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img1, img2, target
