"""Exceptions raised by :mod:`flowvision.hub`.

Every download failure names the URL and the cache path where the file is expected, so a
user behind a firewall can fetch the file by other means and put it in place.
"""


class HubError(RuntimeError):
    """Base class of every error raised by flowvision.hub (a RuntimeError, like torch.hub's)."""


class DownloadError(HubError):
    """A file could not be fetched (after retries), or the answer was unusable.

    Attributes: ``url``, ``path`` (where the file is expected in the cache) and ``status``
    (the HTTP status code when there was one).
    """

    def __init__(self, message, url=None, path=None, status=None):
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

    def __init__(self, message, url=None, path=None, expected=None, actual=None):
        self.expected = expected
        self.actual = actual
        super().__init__(message, url=url, path=path)


class OfflineError(DownloadError):
    """Offline mode is on (FLOWVISION_OFFLINE=1 or HF_HUB_OFFLINE=1) and the file is not cached."""


class CheckpointError(HubError, ValueError):
    """A checkpoint file is corrupt, truncated, of an unknown format or otherwise unreadable."""

    def __init__(self, message, path=None):
        self.path = None if path is None else str(path)
        if path is not None and str(path) not in message:
            message = f"{path}: {message}"
        super().__init__(message)


class UnsafeCheckpointError(CheckpointError):
    """A pickled checkpoint references a global outside the allow-list (code execution refused).

    ``name`` is the ``module.qualname`` of the refused global.
    """

    def __init__(self, message, path=None, name=None):
        self.name = name
        super().__init__(message, path=path)
