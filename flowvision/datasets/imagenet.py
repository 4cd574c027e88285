"""ImageNet 2012 classification from the official archives (devkit ``meta.mat``, train/val tars)."""
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from ._readers import load_mat
from .folder import ImageFolder
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, extract_archive, verify_str_arg

__all__ = ["ImageNet", "load_meta_file", "parse_devkit_archive", "parse_train_archive", "parse_val_archive"]

ARCHIVE_META = {
    "train": ("ILSVRC2012_img_train.tar", "1d675b47d978889d74fa0da5fadfb00e"),
    "val": ("ILSVRC2012_img_val.tar", "29b22e2961454d5413ddabcf34fc5622"),
    "devkit": ("ILSVRC2012_devkit_t12.tar.gz", "fa75699e90414af021442c21a62c3abf"),
}
TORCH_META_FILE = "meta.bin"  # written by torchvision (torch.save); read without torch when present
META_FILE = "meta.json"  # written by flowvision


class ImageNet(ImageFolder):
    """`ImageNet <http://image-net.org/>`_ 2012 classification.

    Put ``ILSVRC2012_devkit_t12.tar.gz`` and ``ILSVRC2012_img_train.tar`` and/or ``ILSVRC2012_img_val.tar`` in
    ``root`` (the archives cannot be downloaded without an account); on first use they are checked (md5),
    extracted safely into ``root/train`` / ``root/val`` (one folder per WordNet id) and the devkit's class
    names are saved to ``root/meta.json``. A root prepared by torchvision (``meta.bin`` + folders) is used as is.

    Args:
        root: the directory holding the archives or the prepared folders.
        split: ``train`` or ``val``.
        **kwargs: as :class:`ImageFolder` (``transform``, ``target_transform``, ``loader``, ...).

    Attributes: ``classes`` (tuples of names), ``class_to_idx`` (every name -> index), ``wnids``,
    ``wnid_to_idx``, ``imgs``/``samples``, ``targets``. Parsing the devkit needs scipy.
    """

    def __init__(self, root: Union[str, Path], split: str = "train", **kwargs: Any) -> None:
        root = self.root = os.path.expanduser(root)
        self.split = verify_str_arg(split, "split", ("train", "val"))
        self.parse_archives()
        wnid_to_classes = load_meta_file(self.root)[0]
        super().__init__(self.split_folder, **kwargs)
        self.root = root
        self.wnids = self.classes
        self.wnid_to_idx = self.class_to_idx
        self.classes = [wnid_to_classes[wnid] for wnid in self.wnids]
        self.class_to_idx = {cls: idx for idx, clss in enumerate(self.classes) for cls in clss}

    def parse_archives(self) -> None:
        """Prepare the meta file and the split folder from the archives when they are missing."""
        if not (check_integrity(os.path.join(self.root, TORCH_META_FILE))
                or check_integrity(os.path.join(self.root, META_FILE))):
            parse_devkit_archive(self.root)
        if not os.path.isdir(self.split_folder):
            if self.split == "train":
                parse_train_archive(self.root)
            else:
                parse_val_archive(self.root)

    @property
    def split_folder(self) -> str:
        return os.path.join(self.root, self.split)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"


def load_meta_file(root: Union[str, Path], file: Optional[str] = None) -> Tuple[Dict[str, Tuple[str, ...]], List[str]]:
    """``(wnid_to_classes, val_wnids)`` from ``meta.json`` (flowvision) or torchvision's ``meta.bin``."""
    candidates = [file] if file is not None else [META_FILE, TORCH_META_FILE]
    for name in candidates:
        path = os.path.join(root, name)
        if not check_integrity(path):
            continue
        if name.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                meta = json.load(f)
            return {k: tuple(v) for k, v in meta["wnid_to_classes"].items()}, list(meta["val_wnids"])
        from ..hub.pickle_reader import read_torch_checkpoint
        from ..hub.errors import CheckpointError
        try:
            wnid_to_classes, val_wnids = read_torch_checkpoint(path)
        except (CheckpointError, ValueError, TypeError) as e:
            raise CorruptDatasetError(f"{path} is not an ImageNet meta file: {e}") from e
        return {k: tuple(v) for k, v in wnid_to_classes.items()}, list(val_wnids)
    raise DatasetNotFoundError(f"The meta file ({' or '.join(candidates)}) is not present in {root}; it is created "
                               f"from {ARCHIVE_META['devkit'][0]} by the ImageNet dataset.")


def _verify_archive(root: str, file: str, md5: Optional[str]) -> str:
    path = os.path.join(root, file)
    if not check_integrity(path, md5):
        raise DatasetNotFoundError(
            f"The archive {file} is not present in {root} or is corrupted (md5 must be {md5}). ImageNet cannot be "
            f"downloaded automatically: get it from https://image-net.org/challenges/LSVRC/2012/2012-downloads.php "
            f"and put it at {path}.", [(None, path, md5)])
    return path


def parse_devkit_archive(root: Union[str, Path], file: Optional[str] = None) -> None:
    """Read ``data/meta.mat`` and the validation ground truth of the devkit into ``root/meta.json``."""
    root = os.fspath(root)
    name, md5 = ARCHIVE_META["devkit"]
    archive = _verify_archive(root, file or name, md5 if file is None else None)
    tmp_dir = tempfile.mkdtemp(prefix=".devkit-", dir=root)
    try:
        extract_archive(archive, tmp_dir)
        devkit = os.path.join(tmp_dir, "ILSVRC2012_devkit_t12", "data")
        synsets = load_mat(os.path.join(devkit, "meta.mat"), squeeze_me=True).get("synsets")
        if synsets is None:
            raise CorruptDatasetError(f"{archive}: data/meta.mat has no 'synsets' variable")
        leaves = [s for s in synsets if int(s[4]) == 0]  # num_children == 0: the 1000 classes
        idx_to_wnid = {int(s[0]): str(s[1]) for s in leaves}
        wnid_to_classes = {str(s[1]): str(s[2]).split(", ") for s in leaves}
        with open(os.path.join(devkit, "ILSVRC2012_validation_ground_truth.txt")) as f:
            val_wnids = [idx_to_wnid[int(line)] for line in f if line.strip()]
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp = os.path.join(root, META_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"wnid_to_classes": wnid_to_classes, "val_wnids": val_wnids}, f)
    os.replace(tmp, os.path.join(root, META_FILE))


def parse_train_archive(root: Union[str, Path], file: Optional[str] = None, folder: str = "train") -> None:
    """Extract the train tar (one tar per class inside) into ``root/folder/<wnid>/``."""
    root = os.fspath(root)
    name, md5 = ARCHIVE_META["train"]
    archive = _verify_archive(root, file or name, md5 if file is None else None)
    staging = tempfile.mkdtemp(prefix=f".{folder}-", dir=root)
    try:
        extract_archive(archive, staging)
        for inner in sorted(os.listdir(staging)):
            path = os.path.join(staging, inner)
            if inner.endswith(".tar"):
                extract_archive(path, os.path.splitext(path)[0], remove_finished=True)
        os.replace(staging, os.path.join(root, folder))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def parse_val_archive(root: Union[str, Path], file: Optional[str] = None, wnids: Optional[List[str]] = None,
                      folder: str = "val") -> None:
    """Extract the val tar and sort its images (by file name) into ``root/folder/<wnid>/``."""
    root = os.fspath(root)
    name, md5 = ARCHIVE_META["val"]
    if wnids is None:
        wnids = load_meta_file(root)[1]
    archive = _verify_archive(root, file or name, md5 if file is None else None)
    staging = tempfile.mkdtemp(prefix=f".{folder}-", dir=root)
    try:
        extract_archive(archive, staging)
        images = sorted(os.listdir(staging))
        if len(images) != len(wnids):
            raise CorruptDatasetError(f"{archive}: {len(images)} images but the devkit lists {len(wnids)} labels")
        for wnid in set(wnids):
            os.mkdir(os.path.join(staging, wnid))
        for wnid, img in zip(wnids, images):
            os.replace(os.path.join(staging, img), os.path.join(staging, wnid, img))
        os.replace(staging, os.path.join(root, folder))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
