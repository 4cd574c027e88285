"""Omniglot handwritten characters (``omniglot-py/images_{background,evaluation}/<alphabet>/<character>/``)."""
import os
from os.path import join
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

from PIL import Image

from .utils import DatasetNotFoundError, check_integrity, download_and_extract_archive, list_dir, list_files
from .vision import VisionDataset

__all__ = ["Omniglot"]


class Omniglot(VisionDataset):
    """`Omniglot <https://github.com/brendenlake/omniglot>`_: ``(PIL L image, character index)``.

    Args:
        root: the directory holding ``omniglot-py``.
        background: the 30-alphabet background set, else the 20-alphabet evaluation set.
        transform: as usual.
        target_transform: as usual.
        download: as usual.
        loader: as usual.

    Alphabets, characters and images are listed in sorted order (torchvision uses the file system's order, so
    character indices can differ between machines there).
    """

    folder = "omniglot-py"
    download_url_prefix = "https://raw.githubusercontent.com/brendenlake/omniglot/master/python"
    zips_md5 = {"images_background": "68d2efa1b9178cc56df9314c21c6e718",
                "images_evaluation": "6b91aef0f799c5bb55b94e3f2daec811"}

    def __init__(self, root: Union[str, Path], background: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False,
                 loader: Optional[Callable[[Union[str, Path]], Any]] = None) -> None:
        super().__init__(join(root, self.folder), transform=transform, target_transform=target_transform)
        self.background = background
        name = self._get_target_folder()
        if download:
            self.download()
        self.target_folder = join(self.root, name)
        if not self._check_integrity():
            raise DatasetNotFoundError(
                f"Dataset not found or corrupted: {self.target_folder} (or {name}.zip, md5 {self.zips_md5[name]}). "
                f"You can use download=True to download {self.download_url_prefix}/{name}.zip")
        self._alphabets = sorted(list_dir(self.target_folder))
        self._characters: List[str] = [join(a, c) for a in self._alphabets
                                       for c in sorted(list_dir(join(self.target_folder, a)))]
        self._character_images = [[(img, idx) for img in sorted(list_files(join(self.target_folder, ch), ".png"))]
                                  for idx, ch in enumerate(self._characters)]
        self._flat_character_images: List[Tuple[str, int]] = [x for imgs in self._character_images for x in imgs]
        self.loader = loader

    def __len__(self) -> int:
        return len(self._flat_character_images)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL L image, character index)``."""
        image_name, character_class = self._flat_character_images[index]
        path = join(self.target_folder, self._characters[character_class], image_name)
        image = Image.open(path, mode="r").convert("L") if self.loader is None else self.loader(path)
        return self._apply_transforms(image, character_class)

    def _check_integrity(self) -> bool:
        name = self._get_target_folder()
        return os.path.isdir(join(self.root, name)) or check_integrity(join(self.root, name + ".zip"),
                                                                        self.zips_md5[name])

    def download(self) -> None:
        """Download (md5-verified) and safely extract the set's zip unless present."""
        name = self._get_target_folder()
        if os.path.isdir(join(self.root, name)):
            return
        download_and_extract_archive(f"{self.download_url_prefix}/{name}.zip", self.root, filename=name + ".zip",
                                     md5=self.zips_md5[name])

    def _get_target_folder(self) -> str:
        return "images_background" if self.background else "images_evaluation"
