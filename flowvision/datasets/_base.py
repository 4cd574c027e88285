"""Shared pieces of the file-list datasets: a ``(path, label)`` list read with a loader."""
import os
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from .folder import default_loader
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_and_extract_archive
from .vision import VisionDataset


class FileListDataset(VisionDataset):
    """A dataset over ``self._image_files`` / ``self._labels`` whose samples are ``(loader(path), label)``."""

    _image_files: List[Any]
    _labels: List[Any]
    loader: Callable[[str], Any] = staticmethod(default_loader)

    def __len__(self) -> int:
        return len(self._image_files)

    def _load(self, path: Any) -> Any:
        try:
            return self.loader(path)
        except (OSError, SyntaxError, ValueError) as e:
            raise CorruptDatasetError(f"cannot load {path}: {type(e).__name__}: {e}") from e

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        """``(loaded sample, label)`` with the transforms applied."""
        image, label = self._load(self._image_files[idx]), self._labels[idx]
        return self._apply_transforms(image, label)


class ArchiveFilesMixin:
    """Integrity check and download of the datasets whose md5-listed files come from one archive.

    The class declares ``base_folder`` (where the files lie under ``root``), ``train_list`` / ``test_list``
    (``[name, md5]`` pairs) and the archive's ``url``, ``filename`` and ``tgz_md5`` (CIFAR10/100, STL10).
    """

    root: str
    base_folder: str
    train_list: List[List[str]]
    test_list: List[List[str]]
    url: str
    filename: str
    tgz_md5: str

    def _check_integrity(self) -> bool:
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self) -> None:
        """Download (md5-verified) and safely extract the archive unless all its files are already there."""
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.tgz_md5)


def require(condition: bool, what: str, url: Optional[str] = None, md5: Optional[str] = None,
            where: Optional[Union[str, os.PathLike]] = None) -> None:
    """Raise DatasetNotFoundError naming ``what`` (and the archive to fetch) unless ``condition``."""
    if condition:
        return
    msg = f"Dataset not found: {what} is missing."
    if url:
        msg += f" You can use download=True to download {url}" + (f" (md5 {md5})" if md5 else "") + \
            (f" into {where}" if where else "") + "."
    raise DatasetNotFoundError(msg)


def download_unless_present(present: Callable[[], bool], download: bool, what: str, url: str, md5: Optional[str],
                            root: Union[str, os.PathLike]) -> None:
    """Fetch and safely extract the archive ``url`` into ``root`` when asked to and the data is absent.

    Args:
        present: tells whether the extracted data is there (asked again after a download).
        download: the dataset's ``download`` argument.
        what: what is missing, for the error message.
        url: the archive's URL.
        md5: its md5, or None where the dataset publishes none.
        root: where the archive is saved and extracted.

    Raises:
        DatasetNotFoundError: the data is still absent, naming ``what`` and the archive to fetch.
    """
    if download and not present():
        download_and_extract_archive(url, download_root=root, md5=md5)
    require(present(), what, url, md5, root)


def read_lines(path: Union[str, os.PathLike]) -> List[str]:
    """The stripped, non-empty lines of a text file; a missing file raises DatasetNotFoundError."""
    if not os.path.isfile(path):
        raise DatasetNotFoundError(f"Dataset file {path} not found")
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def split_pairs(lines: Sequence[str], path: Union[str, os.PathLike], sep: Optional[str] = None,
                maxsplit: int = -1, n: Optional[int] = None) -> List[List[str]]:
    """Split each line; CorruptDatasetError names the file and line when a line has the wrong field count."""
    out = []
    for i, line in enumerate(lines):
        parts = line.split(sep, maxsplit)
        if n is not None and len(parts) != n:
            raise CorruptDatasetError(f"{path}: line {i + 1} {line!r} does not have {n} fields")
        out.append(parts)
    return out
