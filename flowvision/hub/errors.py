"""Exceptions raised by :mod:`flowvision.hub`.

Every download failure names the URL and the cache path where the file is expected, so a
user behind a firewall can fetch the file by other means and put it in place.
"""
import functools
import lzma
import os
import struct
import zipfile
import zlib
from typing import Optional, Union


class HubError(RuntimeError):
    """Base class of every error raised by flowvision.hub (a RuntimeError, like torch.hub's)."""


class DownloadError(HubError):
    """A file could not be fetched (after retries), or the answer was unusable.

    Attributes: ``url``, ``path`` (where the file is expected in the cache) and ``status``
    (the HTTP status code when there was one).
    """

    def __init__(self, message: str, url: Optional[str] = None, path: Optional[Union[str, os.PathLike]] = None,
                 status: Optional[int] = None) -> None:
        self.url = url
        self.path = None if path is None else str(path)
        self.status = status
        parts = [message]
        if url is not None and str(url) not in message:
            parts.append(f"URL: {url}")
        if path is not None and str(path) not in message:
            parts.append(f"expected at: {path}")
        super().__init__("\n  ".join(parts))


class HashMismatchError(DownloadError):
    """The downloaded (or cached) bytes do not have the expected sha256."""

    def __init__(self, message: str, url: Optional[str] = None, path: Optional[Union[str, os.PathLike]] = None,
                 expected: Optional[str] = None, actual: Optional[str] = None) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(message, url=url, path=path)


class OfflineError(DownloadError):
    """Offline mode is on (FLOWVISION_OFFLINE=1 or HF_HUB_OFFLINE=1) and the file is not cached."""


REDOWNLOAD_ADVICE = ("the file is damaged or incomplete: delete it and download it again "
                     "(or save it again if you wrote it yourself)")
UNSAFE_ADVICE = ("if it should hold plain tensors, it may be damaged: delete it and download it again; "
                 "only unpickle it with torch.load(weights_only=False) if you trust where it came from")


class CheckpointError(HubError, ValueError):
    """A checkpoint file is corrupt, truncated, of an unknown format or otherwise unreadable."""

    def __init__(self, message: str, path: Optional[Union[str, os.PathLike]] = None) -> None:
        self.path = None if path is None else str(path)
        if path is not None and str(path) not in message:
            message = f"{path}: {message}"
        super().__init__(message)

    def for_file(self, path, advice=REDOWNLOAD_ADVICE):
        """This error, naming ``path`` (when it does not yet) and ending with ``advice`` (once).

        Errors raised deep inside a reader (a tensor-record check) do not know the file; the
        reader's entry point adds it here, so every message a user sees says which file to delete.
        """
        path = str(path)
        message = str(self)
        if path not in message:
            message = f"{path}: {message}"
        if advice and advice not in message:
            message = f"{message}\n  {advice}"
        self.path = path
        self.args = (message,)
        return self


class UnsafeCheckpointError(CheckpointError):
    """A pickled checkpoint references a global outside the allow-list (code execution refused).

    ``name`` is the ``module.qualname`` of the refused global.
    """

    def __init__(self, message: str, path: Optional[Union[str, os.PathLike]] = None,
                 name: Optional[str] = None) -> None:
        self.name = name
        super().__init__(message, path=path)


# What reading a damaged zip member raises. zipfile itself raises BadZipFile, OSError (seek to a bad
# offset), NotImplementedError (a garbled "version needed" or compression method), RuntimeError (a
# flipped "encrypted" flag), EOFError and UnicodeDecodeError (a member name that is not UTF-8); each
# compression method's decoder has its own error (deflate: zlib.error, LZMA: LZMAError, bzip2: OSError).
ZIP_MEMBER_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError,
                     zlib.error, lzma.LZMAError)
# ... and what the standard library and numpy raise for damaged bytes anywhere in a checkpoint
RAW_READ_ERRORS = ZIP_MEMBER_ERRORS + (MemoryError, OverflowError, IndexError, KeyError, struct.error)


def raw_to_checkpoint_error(exc, path, what="corrupt or unreadable checkpoint"):
    """A :class:`CheckpointError` for ``exc`` (a raw parse failure of ``path``) with the re-download advice."""
    detail = str(exc) or "no details"
    return CheckpointError(f"{what} ({type(exc).__name__}: {detail})", path=path).for_file(path)


def checkpoint_reader(fn):
    """Decorate a ``fn(path, ...)`` checkpoint reader so every parse failure is a :class:`CheckpointError`.

    The error names ``path`` and (unless the file is missing or refused as unsafe) says to delete and
    re-download it; the original exception stays attached as ``__cause__``.
    """
    @functools.wraps(fn)
    def wrapper(path, *args, **kwargs):
        try:
            return fn(path, *args, **kwargs)
        except RAW_READ_ERRORS as e:  # CheckpointError is one too (a RuntimeError and a ValueError)
            where = os.fspath(path)
            if isinstance(e, CheckpointError):
                if not os.path.isfile(where):
                    advice = None
                elif isinstance(e, UnsafeCheckpointError):
                    advice = UNSAFE_ADVICE
                else:
                    advice = REDOWNLOAD_ADVICE
                raise e.for_file(where, advice=advice)
            raise raw_to_checkpoint_error(e, where) from e
    return wrapper
