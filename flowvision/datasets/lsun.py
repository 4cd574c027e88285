"""LSUN scenes from their LMDB databases (needs the lmdb package, an optional dependency)."""
import bisect
import io
import os
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Tuple, Union

from PIL import Image

from ._readers import import_optional
from .utils import CorruptDatasetError, DatasetNotFoundError, iterable_to_str, verify_str_arg
from .vision import VisionDataset

__all__ = ["LSUN", "LSUNClass"]

_CATEGORIES = ["bedroom", "bridge", "church_outdoor", "classroom", "conference_room", "dining_room", "kitchen",
               "living_room", "restaurant", "tower"]


def _lmdb():
    return import_optional("lmdb", "LSUN reads LMDB databases")


class LSUNClass(VisionDataset):
    """One LSUN LMDB database: ``(PIL RGB image, None)`` per entry, in key order.

    Args: root (the ``<category>_<split>_lmdb`` directory), transform, target_transform.

    The keys are read from the database when the dataset is built (torchvision caches them in a pickle file in
    the working directory and unpickles it on later runs; flowvision writes and unpickles nothing).
    """

    def __init__(self, root: str, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        lmdb = _lmdb()
        super().__init__(root, transform=transform, target_transform=target_transform)
        if not os.path.isdir(root):
            raise DatasetNotFoundError(f"LSUN database {root} not found; get it with the download script of "
                                       "https://github.com/fyu/lsun")
        try:
            self.env = lmdb.open(root, max_readers=1, readonly=True, lock=False, readahead=False, meminit=False)
            with self.env.begin(write=False) as txn:
                self.length = txn.stat()["entries"]
                self.keys = [key for key in txn.cursor().iternext(keys=True, values=False)]
        except lmdb.Error as e:
            raise CorruptDatasetError(f"{root} is not a readable LMDB database: {e}") from e

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, None)`` (or the transformed target)."""
        if self.env is None:  # unpickled in a spawned DataLoader worker: open the database there
            self.env = _lmdb().open(self.root, max_readers=1, readonly=True, lock=False, readahead=False,
                                    meminit=False)
        with self.env.begin(write=False) as txn:
            imgbuf = txn.get(self.keys[index])
        try:
            img = Image.open(io.BytesIO(imgbuf)).convert("RGB")
        except (OSError, TypeError) as e:
            raise CorruptDatasetError(f"{self.root}: entry {self.keys[index]!r} is not an image: {e}") from e
        target = None
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return self.length

    def __getstate__(self):
        # an LMDB environment cannot cross a process boundary: DataLoader workers reopen it
        state = dict(self.__dict__)
        state["env"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


class LSUN(VisionDataset):
    """`LSUN <https://www.yf.io/p/lsun>`_ scenes: ``(PIL RGB image, class index)``.

    Args:
        root: the directory holding the ``<category>_<split>_lmdb`` databases.
        classes: ``train``, ``val`` or ``test`` (all ten categories of that split), or a list such as
            ``["bedroom_train", "church_outdoor_train"]``.
        transform: as usual.
        target_transform: as usual.
    """

    def __init__(self, root: Union[str, Path], classes: Union[str, List[str]] = "train",
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes = self._verify_classes(classes)
        self.dbs = [LSUNClass(root=os.path.join(root, f"{c}_lmdb"), transform=transform) for c in self.classes]
        self.indices: List[int] = []
        count = 0
        for db in self.dbs:
            count += len(db)
            self.indices.append(count)
        self.length = count

    @staticmethod
    def _verify_classes(classes: Union[str, Iterable[str]]) -> List[str]:
        splits = ["train", "val", "test"]
        if isinstance(classes, str) and classes in splits:
            return [classes] if classes == "test" else [f"{c}_{classes}" for c in _CATEGORIES]
        if isinstance(classes, str) or not isinstance(classes, Iterable):
            if isinstance(classes, str):
                verify_str_arg(classes, "classes", splits)
            raise ValueError(f"Expected type str or Iterable for argument classes, but got type {type(classes)}.")
        classes = list(classes)
        for c in classes:
            verify_str_arg(c, custom_msg=f"Expected type str for elements in argument classes, but got type {type(c)}.")
            parts = c.split("_")
            category, split = "_".join(parts[:-1]), parts[-1]
            verify_str_arg(category, valid_values=_CATEGORIES, custom_msg=(
                f"Unknown value '{category}' for LSUN class. Valid values are {{{iterable_to_str(_CATEGORIES)}}}."))
            verify_str_arg(split, valid_values=splits, custom_msg=(
                f"Unknown value '{split}' for postfix. Valid values are {{{iterable_to_str(splits)}}}."))
        return classes

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, index of its database in classes)``."""
        target = bisect.bisect_right(self.indices, index)
        sub = self.indices[target - 1] if target > 0 else 0
        img, _ = self.dbs[target][index - sub]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return self.length

    def extra_repr(self) -> str:
        return f"Classes: {self.classes}"
