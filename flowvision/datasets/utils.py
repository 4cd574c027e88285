"""Download, verification and safe extraction helpers of :mod:`flowvision.datasets` (torchvision's ``datasets.utils``).

Downloads go through :mod:`flowvision.hub`'s downloader (streamed, resumable ``.partial`` files, retries,
a cross-process lock); the md5 torchvision publishes for each file is checked before the file is moved into
place, so a dataset root never holds an unverified download under its final name.

Archives are extracted defensively: every member is checked *before* anything is written (absolute paths,
``..`` components, links that leave the destination, device files and FIFOs are refused), the archive is
unpacked into a temporary directory inside the destination and moved into place only once it was read to the
end, so a truncated or corrupt archive leaves nothing half-extracted behind.
"""
import bz2
import gzip
import hashlib
import lzma
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from ..hub._env import offline_reason
from ..hub.download import download_url_to_file, file_lock
from ..hub.errors import DownloadError

__all__ = [
    "DatasetNotFoundError", "UnsafeArchiveError", "CorruptDatasetError",
    "calculate_md5", "check_md5", "check_integrity", "download_url", "download_resources",
    "download_and_extract_archive", "download_file_from_google_drive", "extract_archive",
    "list_dir", "list_files", "verify_str_arg", "iterable_to_str",
]

PathLike = Union[str, Path]


class DatasetNotFoundError(RuntimeError):
    """The dataset's files are missing (or fail their checksum) and could not be downloaded.

    ``missing`` lists ``(url, path, md5)`` for every file the user has to provide.
    """

    def __init__(self, message: str, missing: Sequence[Tuple[Optional[str], str, Optional[str]]] = ()):
        self.missing = list(missing)
        super().__init__(message)


class UnsafeArchiveError(RuntimeError):
    """An archive member would be written outside the destination (or is a link/device file); nothing was written."""


class CorruptDatasetError(RuntimeError):
    """A dataset file is truncated, has a wrong header or is otherwise unreadable; the message names the file."""


# ---------------------------------------------------------------------------------------------
# integrity

def calculate_md5(fpath: PathLike, chunk_size: int = 1024 * 1024) -> str:
    """The hex md5 of a file, read in chunks."""
    md5 = hashlib.md5(usedforsecurity=False) if _md5_takes_flag() else hashlib.md5()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def _md5_takes_flag() -> bool:
    try:
        hashlib.md5(usedforsecurity=False)
        return True
    except TypeError:  # pragma: no cover - Python < 3.9 builds
        return False


def check_md5(fpath: PathLike, md5: str, **kwargs: Any) -> bool:
    """Whether the file's md5 equals ``md5``."""
    return md5.lower() == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: PathLike, md5: Optional[str] = None) -> bool:
    """True when ``fpath`` is a file and (if ``md5`` is given) its md5 matches."""
    if not os.path.isfile(fpath):
        return False
    if md5 is None:
        return True
    return check_md5(fpath, md5)


def verify_str_arg(value: Any, arg: Optional[str] = None, valid_values: Optional[Iterable[str]] = None,
                   custom_msg: Optional[str] = None) -> str:
    """Return ``value`` if it is a str among ``valid_values``; else raise ValueError naming the valid ones."""
    if not isinstance(value, str):
        msg = "Expected type str" + (f" for argument {arg}" if arg is not None else "") + f", but got type {type(value)}."
        raise ValueError(msg)
    if valid_values is None:
        return value
    valid_values = tuple(valid_values)
    if value not in valid_values:
        if custom_msg is not None:
            raise ValueError(custom_msg)
        raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are {{{iterable_to_str(valid_values)}}}.")
    return value


def iterable_to_str(iterable: Iterable) -> str:
    """``'a', 'b', 'c'``: the items quoted and comma-separated (for error messages)."""
    return "'" + "', '".join([str(item) for item in iterable]) + "'"


def list_dir(root: PathLike, prefix: bool = False) -> List[str]:
    """The directories directly inside ``root`` (joined with ``root`` when ``prefix``)."""
    root = os.path.expanduser(root)
    directories = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in directories] if prefix else directories


def list_files(root: PathLike, suffix: Union[str, Tuple[str, ...]], prefix: bool = False) -> List[str]:
    """The files directly inside ``root`` whose name ends with ``suffix``."""
    root = os.path.expanduser(root)
    files = [p for p in os.listdir(root) if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, f) for f in files] if prefix else files


# ---------------------------------------------------------------------------------------------
# downloads

def _missing_message(missing, reason: str) -> str:
    lines = [f"Dataset files are missing and could not be downloaded ({reason}).",
             "Download each file below by other means and put it at the path shown:"]
    for url, path, md5 in missing:
        lines.append(f"  {url or '(no public URL)'}\n    -> {path}" + (f"  (md5 {md5})" if md5 else ""))
    return "\n".join(lines)


def _fetch_verified(url: str, fpath: str, md5: Optional[str]) -> None:
    """Download ``url`` to ``fpath`` through the hub downloader; verify ``md5`` before the file takes its name."""
    tmp = fpath + ".download"
    try:
        with file_lock(fpath + ".lock", url):
            if check_integrity(fpath, md5):
                return  # another process finished it while this one waited for the lock
            download_url_to_file(url, tmp, progress=True)
            if md5 is not None:
                got = calculate_md5(tmp)
                if got != md5.lower():
                    os.remove(tmp)
                    raise DownloadError(f"md5 mismatch for {url}: expected {md5}, got {got}; the download was "
                                        f"discarded and nothing was written to {fpath}", url=url, path=fpath)
            os.replace(tmp, fpath)
    finally:
        # the locks only serialise this download; a waiter re-checks the verified file after taking the lock
        _remove_quietly(fpath + ".lock", tmp + ".lock")


def _remove_quietly(*paths: str) -> None:
    for p in paths:
        try:
            os.remove(p)
        except OSError:
            pass


def download_resources(resources: Sequence[Tuple[Union[str, Sequence[str]], str, Optional[str]]]) -> None:
    """Download every ``(url or mirror urls, destination path, md5)`` not already present and verified.

    Files already verified are not fetched again. When offline, or when a file cannot be fetched from any of
    its URLs, one :class:`DatasetNotFoundError` lists every file still missing, where it goes and its md5.
    """
    missing = []
    errors = []
    reason = offline_reason()
    for urls, fpath, md5 in resources:
        urls = [urls] if isinstance(urls, str) else list(urls)
        fpath = os.path.abspath(os.path.expanduser(str(fpath)))
        if check_integrity(fpath, md5):
            continue
        if reason is None and urls and urls[0]:
            os.makedirs(os.path.dirname(fpath), exist_ok=True)
            for url in urls:
                try:
                    _fetch_verified(url, fpath, md5)
                    break
                except (DownloadError, OSError) as e:
                    errors.append(f"{url}: {e}")
            else:
                missing.append((urls[0], fpath, md5))
        else:
            missing.append((urls[0] if urls else None, fpath, md5))
    if missing:
        why = f"offline mode is on: {reason}" if reason else "; ".join(errors) or "no URL"
        raise DatasetNotFoundError(_missing_message(missing, why), missing)


def download_url(url: str, root: PathLike, filename: Optional[str] = None, md5: Optional[str] = None,
                 max_redirect_hops: int = 3) -> None:
    """Download ``url`` into ``root/filename`` unless a file with the right md5 is already there.

    Args:
        url: the file's URL.
        root: the directory to put it in.
        filename: the name to save it under (default: the URL's basename).
        md5: the expected md5; a file that fails it is never kept.
        max_redirect_hops: accepted for torchvision compatibility (the downloader follows redirects).
    """
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url.split("?")[0])
    download_resources([(url, os.path.join(root, filename), md5)])


def download_file_from_google_drive(file_id: str, root: PathLike, filename: Optional[str] = None,
                                    md5: Optional[str] = None) -> None:
    """Google Drive files need an interactive confirmation page; flowvision does not script it.

    An already present, verified file is accepted; otherwise the error names the Drive URL, the destination
    path and the md5.
    """
    root = os.path.expanduser(root)
    fpath = os.path.join(root, filename or file_id)
    if check_integrity(fpath, md5):
        return
    url = f"https://drive.google.com/file/d/{file_id}/view"
    raise DatasetNotFoundError(_missing_message([(url, os.path.abspath(fpath), md5)],
                                                "files hosted on Google Drive are not downloaded automatically"),
                               [(url, os.path.abspath(fpath), md5)])


def download_and_extract_archive(url: str, download_root: PathLike, extract_root: Optional[PathLike] = None,
                                 filename: Optional[str] = None, md5: Optional[str] = None,
                                 remove_finished: bool = False) -> None:
    """Download an archive (skipped when already verified) and extract it safely into ``extract_root``."""
    download_root = os.path.expanduser(download_root)
    if extract_root is None:
        extract_root = download_root
    filename = filename or os.path.basename(url.split("?")[0])
    download_url(url, download_root, filename, md5)
    archive = os.path.join(download_root, filename)
    extract_archive(archive, extract_root, remove_finished)


# ---------------------------------------------------------------------------------------------
# safe extraction

_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_TAR_SUFFIXES = {".tar": "r:", ".tgz": "r:gz", ".tbz": "r:bz2", ".tbz2": "r:bz2", ".txz": "r:xz",
                 ".tar.gz": "r:gz", ".tar.bz2": "r:bz2", ".tar.xz": "r:xz"}


def _archive_kind(path: str) -> Tuple[str, str]:
    name = os.path.basename(path).lower()
    for suffix in sorted(_TAR_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return "tar", _TAR_SUFFIXES[suffix]
    if name.endswith(".zip"):
        return "zip", ""
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            return "single", suffix
    raise RuntimeError(f"Extraction of {path} not supported: the name does not end in one of "
                       f"{sorted(_TAR_SUFFIXES) + ['.zip'] + sorted(_COMPRESSED)}")


def _check_member_name(name: str, archive: str) -> str:
    """The member's normalised relative path; raise UnsafeArchiveError for absolute or ``..`` paths."""
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":") or os.path.isabs(name):
        raise UnsafeArchiveError(f"{archive}: member {name!r} has an absolute path; refusing to extract the archive")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafeArchiveError(f"{archive}: member {name!r} contains '..'; refusing to extract the archive")
    return "/".join(parts)


def _check_tar_members(tar: tarfile.TarFile, archive: str) -> None:
    earlier = set()  # normalised names of the members before this one: what a hard link may point to
    for m in tar.getmembers():
        rel = _check_member_name(m.name, archive)
        if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
            raise UnsafeArchiveError(f"{archive}: member {m.name!r} is a device file or FIFO; refusing to extract")
        if m.issym() or m.islnk():
            if not m.linkname:  # tarfile falls back to extracting the link as its own target, forever
                raise CorruptDatasetError(f"{archive}: link {m.name!r} has an empty target (corrupt tar archive)")
            target = m.linkname.replace("\\", "/")
            if target.startswith("/") or os.path.isabs(m.linkname):
                raise UnsafeArchiveError(f"{archive}: link {m.name!r} points to the absolute path {m.linkname!r}; "
                                         "refusing to extract")
            # a symlink resolves against its own directory, a hard link against the archive root
            base = os.path.dirname(rel) if m.issym() else ""
            resolved = os.path.normpath(os.path.join(base, target))
            if resolved == ".." or resolved.startswith("../") or resolved.startswith(".." + os.sep):
                raise UnsafeArchiveError(f"{archive}: link {m.name!r} -> {m.linkname!r} points outside the "
                                         "extraction directory; refusing to extract")
        if m.islnk() and os.path.normpath(m.linkname.replace("\\", "/")).replace(os.sep, "/") not in earlier:
            # tarfile would fail with a bare KeyError while extracting
            raise CorruptDatasetError(f"{archive}: hard link {m.name!r} points to {m.linkname!r}, which is not an "
                                      "earlier member of the archive (corrupt tar archive)")
        earlier.add(rel)


def _check_zip_members(zf: zipfile.ZipFile, archive: str) -> None:
    for info in zf.infolist():
        if not info.filename:  # zipfile itself fails on it with an IndexError
            raise CorruptDatasetError(f"{archive}: a member has an empty name (corrupt zip archive)")
        _check_member_name(info.filename, archive)
        mode = (info.external_attr >> 16) & 0xFFFF
        if mode and (stat.S_ISLNK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)):
            raise UnsafeArchiveError(f"{archive}: member {info.filename!r} is a link or device file; "
                                     "refusing to extract")


def _move_merge(src: str, dst: str) -> None:
    """Move the tree ``src`` onto ``dst``, merging into directories that already exist."""
    if os.path.isdir(src) and not os.path.islink(src) and os.path.isdir(dst) and not os.path.islink(dst):
        for name in os.listdir(src):
            _move_merge(os.path.join(src, name), os.path.join(dst, name))
        os.rmdir(src)
    else:
        if os.path.isdir(dst) and not os.path.islink(dst):
            shutil.rmtree(dst)
        os.replace(src, dst)


def _progress(members: list, archive: str):
    """The members behind a per-file progress bar on stderr (shown on a terminal only)."""
    from tqdm.auto import tqdm
    return tqdm(members, desc=f"extracting {os.path.basename(archive)}", unit="file", disable=None, leave=False)


def _extract_tar(path: str, mode: str, staging: str) -> None:
    try:
        with tarfile.open(path, mode) as tar:
            _check_tar_members(tar, path)
            members = _progress(tar.getmembers(), path)
            if hasattr(tarfile, "data_filter"):
                tar.extractall(staging, members=members, filter="data")  # second line of defence after the checks
            else:  # pragma: no cover - Python without PEP 706
                tar.extractall(staging, members=members)
    except (UnsafeArchiveError, CorruptDatasetError):
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError, OverflowError, zlib.error, lzma.LZMAError) as e:
        # ValueError / OverflowError: header fields too large for a file offset
        if isinstance(e, tarfile.FilterError):
            raise UnsafeArchiveError(f"{path}: {e}; refusing to extract") from e
        raise CorruptDatasetError(f"{path} is not a readable tar archive (truncated or corrupt): "
                                  f"{type(e).__name__}: {e}") from e


def _extract_zip(path: str, staging: str) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            _check_zip_members(zf, path)
            zf.extractall(staging, members=_progress(zf.infolist(), path))
    except (UnsafeArchiveError, CorruptDatasetError):
        raise
    except RuntimeError as e:  # zipfile's "File ... is encrypted, password required for extraction"
        raise CorruptDatasetError(f"{path}: cannot extract an encrypted member: {e}") from e
    # ValueError: a member name flagged UTF-8 that is not, or a header offset too large to seek to
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error, lzma.LZMAError, NotImplementedError, ValueError,
            OverflowError) as e:
        raise CorruptDatasetError(f"{path} is not a readable zip archive (truncated or corrupt): "
                                  f"{type(e).__name__}: {e}") from e


def _decompress(path: str, suffix: str, out_path: str) -> None:
    tmp = out_path + ".extracting"
    try:
        with _COMPRESSED[suffix](path, "rb") as rf, open(tmp, "wb") as wf:
            shutil.copyfileobj(rf, wf, 1 << 20)
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as e:
        _remove_quietly(tmp)
        raise CorruptDatasetError(f"{path} cannot be decompressed (truncated or corrupt): {type(e).__name__}: {e}") \
            from e
    os.replace(tmp, out_path)


def extract_archive(from_path: PathLike, to_path: Optional[PathLike] = None, remove_finished: bool = False) -> str:
    """Extract a tar/zip archive or decompress a ``.gz``/``.bz2``/``.xz`` file into ``to_path``, safely.

    Args:
        from_path: the archive.
        to_path: the destination directory (default: the archive's directory).
        remove_finished: delete the archive after a successful extraction.

    Returns:
        ``to_path``.

    Raises:
        UnsafeArchiveError: a member has an absolute path, a ``..`` component, is a device file or a link that
            leaves ``to_path``; nothing was written.
        CorruptDatasetError: the archive is truncated or corrupt; nothing was left in ``to_path``.
    """
    from_path = os.fspath(from_path)
    to_path = os.path.dirname(from_path) if to_path is None else os.fspath(to_path)
    kind, arg = _archive_kind(from_path)
    os.makedirs(to_path, exist_ok=True)
    if kind == "single":
        out = os.path.join(to_path, os.path.basename(from_path)[: -len(arg)])
        _decompress(from_path, arg, out)
    else:
        staging = tempfile.mkdtemp(prefix=".extracting-", dir=to_path)
        try:
            if kind == "tar":
                _extract_tar(from_path, arg, staging)
            else:
                _extract_zip(from_path, staging)
            for name in os.listdir(staging):
                _move_merge(os.path.join(staging, name), os.path.join(to_path, name))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if remove_finished:
        os.remove(from_path)
    return to_path
