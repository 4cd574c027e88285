"""Flowers102 and StanfordCars: image folders labelled by MATLAB files (needs scipy, an optional dependency)."""
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

from ._base import FileListDataset, require
from ._readers import load_mat
from .folder import default_loader
from .utils import CorruptDatasetError, check_integrity, download_and_extract_archive, download_url, verify_str_arg

__all__ = ["Flowers102", "StanfordCars"]

PathT = Union[str, Path]


class Flowers102(FileListDataset):
    """`Oxford 102 Flowers <https://www.robots.ox.ac.uk/~vgg/data/flowers/102/>`_: ``flowers-102/jpg/image_*.jpg``
    labelled by ``imagelabels.mat``, split by ``setid.mat``.

    Args: root, split (``train``/``val``/``test``), transform, target_transform, download, loader.
    """

    _download_url_prefix = "https://www.robots.ox.ac.uk/~vgg/data/flowers/102/"
    _file_dict = {
        "image": ("102flowers.tgz", "52808999861908f626f3c1f4e79d11fa"),
        "label": ("imagelabels.mat", "e0620be6f572b9609742df49c70aed4d"),
        "setid": ("setid.mat", "a5357ecc9cb78c4bef273ce3793fc85c"),
    }
    _splits_map = {"train": "trnid", "val": "valid", "test": "tstid"}

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[PathT], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._base_folder = Path(self.root) / "flowers-102"
        self._images_folder = self._base_folder / "jpg"
        if download:
            self.download()
        require(self._check_integrity(), f"{self._images_folder}, imagelabels.mat or setid.mat (or a wrong md5)",
                self._download_url_prefix + self._file_dict["image"][0], self._file_dict["image"][1],
                self._base_folder)
        set_ids = load_mat(str(self._base_folder / self._file_dict["setid"][0]), squeeze_me=True)
        labels = load_mat(str(self._base_folder / self._file_dict["label"][0]), squeeze_me=True)
        try:
            image_ids = np.atleast_1d(set_ids[self._splits_map[self._split]]).tolist()
            id_to_label = dict(enumerate((np.atleast_1d(labels["labels"]) - 1).tolist(), 1))
            self._labels = [id_to_label[i] for i in image_ids]
        except KeyError as e:
            raise CorruptDatasetError(f"{self._base_folder}: setid.mat / imagelabels.mat lack {e}") from e
        self._image_files = [self._images_folder / f"image_{i:05d}.jpg" for i in image_ids]
        self.loader = loader

    def _check_integrity(self) -> bool:
        if not self._images_folder.is_dir():
            return False
        return all(check_integrity(str(self._base_folder / self._file_dict[k][0]), self._file_dict[k][1])
                   for k in ("label", "setid"))

    def download(self) -> None:
        """Download (md5-verified) and safely extract the images and the two .mat files unless present."""
        if self._check_integrity():
            return
        name, md5 = self._file_dict["image"]
        download_and_extract_archive(self._download_url_prefix + name, str(self._base_folder), md5=md5)
        for key in ("label", "setid"):
            name, md5 = self._file_dict[key]
            download_url(self._download_url_prefix + name, str(self._base_folder), md5=md5)

    def extra_repr(self) -> str:
        return f"split={self._split}"

    classes = [
        'pink primrose', 'hard-leaved pocket orchid', 'canterbury bells', 'sweet pea', 'english marigold',
        'tiger lily', 'moon orchid', 'bird of paradise', 'monkshood', 'globe thistle', 'snapdragon',
        "colt's foot", 'king protea', 'spear thistle', 'yellow iris', 'globe-flower', 'purple coneflower',
        'peruvian lily', 'balloon flower', 'giant white arum lily', 'fire lily', 'pincushion flower',
        'fritillary', 'red ginger', 'grape hyacinth', 'corn poppy', 'prince of wales feathers',
        'stemless gentian', 'artichoke', 'sweet william', 'carnation', 'garden phlox', 'love in the mist',
        'mexican aster', 'alpine sea holly', 'ruby-lipped cattleya', 'cape flower', 'great masterwort',
        'siam tulip', 'lenten rose', 'barbeton daisy', 'daffodil', 'sword lily', 'poinsettia',
        'bolero deep blue', 'wallflower', 'marigold', 'buttercup', 'oxeye daisy', 'common dandelion', 'petunia',
        'wild pansy', 'primula', 'sunflower', 'pelargonium', 'bishop of llandaff', 'gaura', 'geranium',
        'orange dahlia', 'pink-yellow dahlia?', 'cautleya spicata', 'japanese anemone', 'black-eyed susan',
        'silverbush', 'californian poppy', 'osteospermum', 'spring crocus', 'bearded iris', 'windflower',
        'tree poppy', 'gazania', 'azalea', 'water lily', 'rose', 'thorn apple', 'morning glory',
        'passion flower', 'lotus', 'toad lily', 'anthurium', 'frangipani', 'clematis', 'hibiscus', 'columbine',
        'desert-rose', 'tree mallow', 'magnolia', 'cyclamen', 'watercress', 'canna lily', 'hippeastrum',
        'bee balm', 'ball moss', 'foxglove', 'bougainvillea', 'camellia', 'mallow', 'mexican petunia',
        'bromelia', 'blanket flower', 'trumpet creeper', 'blackberry lily',
    ]


class StanfordCars(FileListDataset):
    """`Stanford Cars <https://ai.stanford.edu/~jkrause/cars/car_dataset.html>`_: ``stanford_cars/devkit/*.mat``
    and ``cars_train``/``cars_test`` folders. The original URL is gone: there is no download.

    Args: root, split (``train``/``test``), transform, target_transform, download (raises), loader.
    """

    def __init__(self, root: PathT, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Callable[[PathT], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(root) / "stanford_cars"
        devkit = self._base_folder / "devkit"
        if self._split == "train":
            self._annotations_mat_path = devkit / "cars_train_annos.mat"
            self._images_base_path = self._base_folder / "cars_train"
        else:
            self._annotations_mat_path = self._base_folder / "cars_test_annos_withlabels.mat"
            self._images_base_path = self._base_folder / "cars_test"
        if download:
            self.download()
        require(devkit.is_dir() and self._annotations_mat_path.exists() and self._images_base_path.is_dir(),
                f"{devkit}, {self._annotations_mat_path} or {self._images_base_path}")
        annotations = np.atleast_1d(load_mat(str(self._annotations_mat_path), squeeze_me=True)["annotations"])
        samples = [(str(self._images_base_path / a["fname"]), int(a["class"]) - 1) for a in annotations]
        self._image_files, self._labels = [p for p, _ in samples], [t for _, t in samples]
        self.classes = np.atleast_1d(load_mat(str(devkit / "cars_meta.mat"), squeeze_me=True)["class_names"]).tolist()
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.loader = loader

    def download(self) -> None:
        """The original URL is broken: raise, saying where to put the files."""
        raise ValueError("The original URL is broken so the StanfordCars dataset cannot be downloaded anymore; put "
                         f"devkit/, cars_train/, cars_test/ and cars_test_annos_withlabels.mat in {self._base_folder}")
