"""``DatasetFolder`` / ``ImageFolder``: one sub-directory per class (torchvision's layout and contract)."""
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from PIL import Image

from .utils import CorruptDatasetError
from .vision import VisionDataset

__all__ = ["IMG_EXTENSIONS", "has_file_allowed_extension", "is_image_file", "find_classes", "make_dataset",
           "DatasetFolder", "ImageFolder", "pil_loader", "default_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename: str, extensions: Union[str, Tuple[str, ...]]) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive)."""
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def is_image_file(filename: str) -> bool:
    """Whether ``filename`` has one of :data:`IMG_EXTENSIONS`."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory: Union[str, Path]) -> Tuple[List[str], Dict[str, int]]:
    """The sorted class folder names in ``directory`` and their indices.

    Raises:
        FileNotFoundError: ``directory`` does not exist or holds no sub-directory.
    """
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Dataset folder {directory} does not exist or is not a directory.")
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {cls_name: i for i, cls_name in enumerate(classes)}


def make_dataset(directory: Union[str, Path], class_to_idx: Optional[Dict[str, int]] = None,
                 extensions: Optional[Union[str, Tuple[str, ...]]] = None,
                 is_valid_file: Optional[Callable[[str], bool]] = None,
                 allow_empty: bool = False) -> List[Tuple[str, int]]:
    """The ``(path, class_index)`` samples under ``directory/<class>/**`` in sorted order.

    Args:
        directory: the root folder.
        class_to_idx: class folder name -> index (default: :func:`find_classes`).
        extensions: accepted file endings; exactly one of ``extensions`` and ``is_valid_file`` must be given.
        is_valid_file: a predicate on the file path.
        allow_empty: accept classes without any valid file (else FileNotFoundError names them).
    """
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        def is_valid_file(x: str) -> bool:
            return has_file_allowed_extension(x, extensions)

    instances = []
    available = set()
    for target_class in sorted(class_to_idx):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available.add(target_class)
    empty = set(class_to_idx) - available
    if empty and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            msg += f"Supported extensions are: {extensions if isinstance(extensions, str) else ', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


def pil_loader(path: Union[str, Path]) -> Image.Image:
    """Open an image with Pillow and convert it to RGB (the file is closed before returning)."""
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def default_loader(path: Union[str, Path]) -> Any:
    """The loader of :class:`ImageFolder`: :func:`pil_loader`."""
    return pil_loader(path)


class DatasetFolder(VisionDataset):
    """A generic dataset of files arranged as ``root/<class>/**/<file>``.

    Args:
        root: the root folder.
        loader: loads a sample from its path.
        extensions: accepted file endings (exclusive with ``is_valid_file``).
        transform: applied to the loaded sample.
        target_transform: applied to the class index.
        is_valid_file: a predicate on the path (exclusive with ``extensions``).
        allow_empty: accept empty class folders.
        skip_corrupt: when the loader fails on a file, warn (naming it) and return the next readable sample
            instead of raising :class:`~flowvision.datasets.utils.CorruptDatasetError`.

    Attributes: ``classes``, ``class_to_idx``, ``samples`` (``(path, class_index)`` list) and ``targets``.
    """

    def __init__(self, root: Union[str, Path], loader: Callable[[str], Any],
                 extensions: Optional[Tuple[str, ...]] = None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, is_valid_file: Optional[Callable[[str], bool]] = None,
                 allow_empty: bool = False, skip_corrupt: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]
        self.skip_corrupt = skip_corrupt

    @staticmethod
    def make_dataset(directory: Union[str, Path], class_to_idx: Dict[str, int],
                     extensions: Optional[Tuple[str, ...]] = None,
                     is_valid_file: Optional[Callable[[str], bool]] = None,
                     allow_empty: bool = False) -> List[Tuple[str, int]]:
        """The ``(path, class_index)`` samples; override to change how files are collected."""
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions, is_valid_file=is_valid_file,
                            allow_empty=allow_empty)

    def find_classes(self, directory: Union[str, Path]) -> Tuple[List[str], Dict[str, int]]:
        """The class names and their indices; override for a different layout."""
        return find_classes(directory)

    def _load(self, path: str) -> Any:
        try:
            return self.loader(path)
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
            raise CorruptDatasetError(f"cannot load {path}: {type(e).__name__}: {e}") from e

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(sample, class_index)`` with the transforms applied."""
        path, target = self.samples[index]
        if self.skip_corrupt:
            sample = None
            for step in range(len(self.samples)):
                path, target = self.samples[(index + step) % len(self.samples)]
                try:
                    sample = self._load(path)
                    break
                except CorruptDatasetError as e:
                    warnings.warn(f"skipping a corrupt sample: {e}", RuntimeWarning, stacklevel=2)
            else:
                raise CorruptDatasetError(f"no sample of {self.root} could be loaded")
        else:
            sample = self._load(path)
        return self._apply_transforms(sample, target)

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(DatasetFolder):
    """Images arranged as ``root/<class>/**/<image>`` with one of :data:`IMG_EXTENSIONS`.

    Args:
        root: the root folder.
        transform: applied to the PIL image.
        target_transform: applied to the class index.
        loader: loads an image from its path (default: Pillow, converted to RGB).
        is_valid_file: a predicate on the path replacing the extension check.
        allow_empty: accept empty class folders.
        skip_corrupt: warn about and skip unreadable images instead of raising.

    Attributes: as :class:`DatasetFolder`, plus ``imgs`` (the same list as ``samples``).
    """

    def __init__(self, root: Union[str, Path], transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader,
                 is_valid_file: Optional[Callable[[str], bool]] = None, allow_empty: bool = False,
                 skip_corrupt: bool = False) -> None:
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty,
                         skip_corrupt=skip_corrupt)
        self.imgs = self.samples
