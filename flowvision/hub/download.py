"""A cached, verified, resumable downloader.

One code path fetches every file flowvision downloads:

* streamed with ``requests`` (connect/read timeouts) behind a tqdm bytes progress bar;
* transient failures (connection drops, timeouts, 5xx, 429) are retried with exponential
  backoff, honouring ``Retry-After``; other 4xx, a host that does not resolve, a refused
  connection and an unroutable network fail at once;
* bytes go to ``<dst>.partial``; a retry (or a later call) resumes it with an HTTP ``Range``
  request -- a 206 answer is appended, a server that ignores Range (answers 200) restarts it;
* the result is checked against a full sha256 or a torch-style hash prefix and only then
  moved into place with ``os.replace`` -- the final path never holds a partial file;
* an exclusive ``fcntl`` lock on ``<dst>.lock`` makes concurrent processes download once.

Every error names the URL and the path where the file is expected.
"""
import contextlib
import email.utils
import errno
import hashlib
import logging
import os
import random
import re
import time
from typing import Any, Dict, Iterator, Optional, Tuple, Union

from ._env import download_settings, offline_reason
from ._neterr import short_reason, unreachable_reason
from .errors import DownloadError, HashMismatchError, OfflineError

__all__ = [
    "download_url_to_file", "cached_download", "file_lock", "sha256_file",
    "hash_prefix_from_filename", "verify_file",
]

logger = logging.getLogger("flowvision.hub")

_CHUNK = 1 << 16  # small enough that a dropped connection loses little
# torch.hub's convention: "resnet50-0676ba61.pth" carries the first hex digits of its sha256.
_HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
_MAX_ATTEMPTS_TOTAL = 100  # a hard cap even when every attempt makes progress


def hash_prefix_from_filename(filename: Union[str, os.PathLike]) -> Optional[str]:
    """The hash prefix a torch-style file name carries (``name-<hex>.ext``), or None."""
    m = _HASH_REGEX.search(os.path.basename(str(filename)))
    return m.group(1) if m and m.group(1) else None


def sha256_file(path: Union[str, os.PathLike], chunk_size: int = 1 << 20) -> str:
    """The hex sha256 of a file, read in ``chunk_size`` blocks.

    Args:
        path: the file.
        chunk_size: bytes read at a time.

    Returns:
        64 lowercase hex digits.

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def _normalize_hash(sha256, hash_prefix):
    sha256 = sha256.strip().lower() if sha256 else None
    hash_prefix = hash_prefix.strip().lower() if hash_prefix else None
    return sha256, hash_prefix


def verify_file(path: Union[str, os.PathLike], sha256: Optional[str] = None,
                hash_prefix: Optional[str] = None) -> Tuple[bool, Optional[str]]:
    """``(ok, digest)``: whether the file's sha256 equals ``sha256`` / starts with ``hash_prefix``.

    With neither given there is nothing to check: ``(True, None)`` without reading the file.
    """
    sha256, hash_prefix = _normalize_hash(sha256, hash_prefix)
    if not sha256 and not hash_prefix:
        return True, None
    digest = sha256_file(path)
    if sha256 and digest != sha256:
        return False, digest
    if hash_prefix and not digest.startswith(hash_prefix):
        return False, digest
    return True, digest


# ---------------------------------------------------------------------------------------------
# cross-process lock

@contextlib.contextmanager
def file_lock(lock_path: str, url: Optional[str] = None) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_path`` (created if missing) for the block.

    fcntl.flock on POSIX, msvcrt.locking on Windows. The lock file is left in place: deleting
    it would race with a process that has just opened it.
    """
    os.makedirs(os.path.dirname(os.path.abspath(lock_path)) or ".", exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            fcntl = None  # type: ignore[assignment]  # no POSIX locks: the msvcrt branch below
        if fcntl is not None:
            locked = True
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except (BlockingIOError, PermissionError):
                logger.info("waiting for another process downloading %s (lock %s)", url or "", lock_path)
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as e:
                if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                    raise
                # a file system without locks (some network mounts): still atomic, maybe not download-once
                logger.warning("file locks are not supported for %s (%s); continuing without one", lock_path, e)
                locked = False
            try:
                yield
            finally:
                if locked:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        else:  # pragma: no cover - Windows
            import msvcrt
            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    time.sleep(0.1)
            try:
                yield
            finally:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# transfer

class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's requested delay in seconds."""

    def __init__(self, message, retry_after=None, status=None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


def _parse_retry_after(value):
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _parse_content_range(value):
    """``(start, end, total)`` from ``bytes a-b/N`` (total None for ``*``), or None."""
    m = _CONTENT_RANGE.match((value or "").strip())
    if not m:
        return None
    total = None if m.group(3) == "*" else int(m.group(3))
    return int(m.group(1)), int(m.group(2)), total


def _unsatisfiable_total(value):
    m = re.match(r"bytes\s+\*/(\d+)", (value or "").strip())
    return int(m.group(1)) if m else None


def _user_agent():
    try:
        from flowvision import __version__
    except Exception:  # pragma: no cover
        __version__ = "unknown"
    return f"flowvision/{__version__}"


def _transfer(session, url, partial, dst, progress, headers, settings):
    """One HTTP attempt into ``partial``; returns whether it resumed earlier bytes.

    Raises _Transient for retryable failures (the partial file keeps what arrived) and
    DownloadError for permanent ones.
    """
    import requests

    offset = os.path.getsize(partial) if os.path.exists(partial) else 0
    req_headers = {"User-Agent": _user_agent(), "Accept-Encoding": "identity"}
    req_headers.update(headers or {})
    validator_file = partial + ".validator"
    if offset:
        req_headers["Range"] = f"bytes={offset}-"
        validator = _read_validator(validator_file)
        if validator:
            # the server sends the whole file (200) instead of the range if it changed since the partial began
            req_headers["If-Range"] = validator
    timeout = (settings["connect_timeout"], settings["read_timeout"])
    try:
        resp = session.get(url, stream=True, timeout=timeout, headers=req_headers, allow_redirects=True)
    except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
            requests.exceptions.InvalidSchema, requests.exceptions.TooManyRedirects) as e:
        raise DownloadError(f"cannot download {url}: {e}", url=url, path=dst) from e
    except requests.exceptions.RequestException as e:
        reason = unreachable_reason(e, url)
        if reason:  # DNS failure, refused, unroutable: a retry seconds later meets the same answer
            raise DownloadError(f"cannot download {url}: {reason}", url=url, path=dst) from e
        raise _Transient(short_reason(e)) from e

    with contextlib.closing(resp):
        status = resp.status_code
        if status == 416 and offset:
            total = _unsatisfiable_total(resp.headers.get("Content-Range"))
            if total is not None and total == offset:
                return True  # the partial file already holds every byte; verification decides
            os.remove(partial)
            raise _Transient("server refused the resume range; restarting from byte 0", retry_after=0)
        if status in _RETRY_STATUS or status >= 500:
            raise _Transient(f"HTTP {status} {resp.reason or ''}".strip(),
                             retry_after=_parse_retry_after(resp.headers.get("Retry-After")), status=status)
        if status >= 400:
            hint = ""
            if status in (401, 403):
                hint = " (the file needs authentication; for a gated or private Hugging Face repo set HF_TOKEN)"
            raise DownloadError(f"HTTP {status} {resp.reason or ''} while downloading {url}{hint}".rstrip(),
                                url=url, path=dst, status=status)
        resumed = False
        total = None
        if status == 206 and offset:
            cr = _parse_content_range(resp.headers.get("Content-Range"))
            if cr is None or cr[0] != offset:
                os.remove(partial)
                raise _Transient(f"server answered the resume with range {resp.headers.get('Content-Range')!r}"
                                 f" instead of starting at byte {offset}; restarting", retry_after=0)
            total = cr[2]
            mode, resumed = "ab", True
            logger.info("resuming %s at byte %d", url, offset)
        elif status == 200:
            if offset:
                logger.info("server ignored the Range request for %s; downloading from the start", url)
            offset = 0
            mode = "wb"
            cl = resp.headers.get("Content-Length")
            total = int(cl) if cl and cl.isascii() and cl.isdigit() else None
            _write_validator(validator_file, resp.headers)
        else:
            raise DownloadError(f"unexpected HTTP {status} while downloading {url}", url=url, path=dst, status=status)

        from tqdm.auto import tqdm

        written = 0
        try:
            with open(partial, mode) as f, tqdm(total=total, initial=offset, unit="B", unit_scale=True,
                                                unit_divisor=1024, disable=not progress,
                                                desc=os.path.basename(dst), leave=True) as bar:
                for chunk in resp.iter_content(chunk_size=_CHUNK):
                    if not chunk:
                        continue
                    f.write(chunk)
                    written += len(chunk)
                    bar.update(len(chunk))
                f.flush()
                os.fsync(f.fileno())
        except requests.exceptions.RequestException as e:
            raise _Transient(f"connection broken after {offset + written} bytes: {short_reason(e)}",
                             retry_after=None) from e
        except OSError as e:
            if isinstance(e, (ConnectionError, TimeoutError)):
                raise _Transient(f"connection broken after {offset + written} bytes: {e}") from e
            raise DownloadError(f"cannot write {partial}: {e}", url=url, path=dst) from e
        got = offset + written
        if total is not None and got < total:
            raise _Transient(f"connection closed after {got} of {total} bytes")
        if total is not None and got > total:
            os.remove(partial)
            raise _Transient(f"received {got} bytes but the server announced {total}; restarting")
        return resumed


def _read_validator(path):
    try:
        with open(path, encoding="utf-8") as f:
            value = f.read().strip()
    except OSError:
        return None
    # only strong ETags and dates are valid in If-Range
    return value if value and not value.startswith("W/") and "\n" not in value else None


def _write_validator(path, headers):
    value = headers.get("ETag") or headers.get("Last-Modified")
    try:
        if value:
            with open(path, "w", encoding="utf-8") as f:
                f.write(value)
        elif os.path.exists(path):
            os.remove(path)
    except OSError:  # the validator only makes resuming safer; never fail a download over it
        pass


def _remove_quietly(*paths):
    for p in paths:
        try:
            os.remove(p)
        except OSError:
            pass


def _fsync_dir(path):
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _download_locked(url, dst, sha256, hash_prefix, progress, headers, session):
    """Download ``url`` to ``dst`` (the caller holds the lock). Returns ``dst``."""
    import requests

    settings = download_settings()
    partial = dst + ".partial"
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    own_session = session is None
    if own_session:
        session = requests.Session()
    failures = 0
    attempts = 0
    restarted_after_mismatch = False
    try:
        while True:
            attempts += 1
            before = os.path.getsize(partial) if os.path.exists(partial) else 0
            try:
                resumed = _transfer(session, url, partial, dst, progress, headers, settings)
            except _Transient as e:
                now = os.path.getsize(partial) if os.path.exists(partial) else 0
                if now > before:
                    failures = 0  # progress was made: a flaky link that keeps delivering is not failing
                failures += 1
                if failures > settings["retries"] or attempts >= _MAX_ATTEMPTS_TOTAL:
                    raise DownloadError(
                        f"failed to download {url} after {attempts} attempt(s): {e}"
                        + (f" ({now} bytes kept in {partial} for a later resume)" if now else ""),
                        url=url, path=dst, status=e.status) from None
                if e.retry_after is not None:
                    delay = min(e.retry_after, settings["max_backoff"])
                else:
                    delay = min(settings["backoff"] * (2 ** (failures - 1)), settings["max_backoff"])
                    delay += random.uniform(0, 0.1 * delay)
                logger.warning("download of %s failed (%s); retry %d/%d in %.1fs",
                               url, e, failures, settings["retries"], delay)
                if delay > 0:
                    time.sleep(delay)
                continue

            ok, digest = verify_file(partial, sha256, hash_prefix)
            if not ok:
                _remove_quietly(partial, partial + ".validator")
                if resumed and not restarted_after_mismatch:
                    # stale bytes from an older partial file may be the cause: start over once
                    restarted_after_mismatch = True
                    logger.warning("sha256 mismatch for %s after a resumed download; downloading again", url)
                    continue
                expected = sha256 or f"{hash_prefix}..."
                raise HashMismatchError(
                    f"sha256 mismatch for {url}: expected {expected}, got {digest}; "
                    f"the download was discarded and nothing was written to {dst}",
                    url=url, path=dst, expected=sha256 or hash_prefix, actual=digest)
            os.replace(partial, dst)
            _remove_quietly(partial + ".validator")
            _fsync_dir(dst)
            return dst
    finally:
        if own_session:
            session.close()


def download_url_to_file(url: str, dst: Union[str, os.PathLike], hash_prefix: Optional[str] = None,
                         progress: bool = True, *, sha256: Optional[str] = None,
                         headers: Optional[Dict[str, str]] = None, session: Any = None) -> str:
    """Download ``url`` to the file ``dst`` (torch.hub-compatible signature).

    Args:
        url: http(s) URL.
        dst: destination path; written atomically (a ``.partial`` file is renamed into place).
        hash_prefix: if given, the sha256 of the file must start with it.
        progress: show a tqdm progress bar on stderr.
        sha256: (keyword) the full expected sha256.
        headers: (keyword) extra request headers.
        session: (keyword) a ``requests.Session`` to reuse.

    Like torch.hub's, this always downloads; :func:`cached_download` is the cache-aware entry point.
    Raises :class:`OfflineError` in offline mode and :class:`DownloadError` / :class:`HashMismatchError`.
    """
    dst = os.path.abspath(os.path.expanduser(str(dst)))
    reason = offline_reason()
    if reason:
        raise OfflineError(
            f"offline mode is on ({reason}): not downloading {url}. Fetch it elsewhere and put it at {dst}",
            url=url, path=dst)
    with _locked(dst, url):
        return _download_locked(url, dst, sha256, hash_prefix, progress, headers, session)


@contextlib.contextmanager
def _locked(dst, url):
    try:
        lock = file_lock(dst + ".lock", url)
        lock.__enter__()
    except OSError as e:
        raise DownloadError(f"cannot create the cache entry for {url}: {e}", url=url, path=dst) from e
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def cached_download(url: str, dst: Union[str, os.PathLike], sha256: Optional[str] = None,
                    hash_prefix: Optional[str] = None, progress: bool = True,
                    headers: Optional[Dict[str, str]] = None, session: Any = None) -> str:
    """Return ``dst``, downloading ``url`` there first unless a verified copy is already cached.

    A cached file is checked against ``sha256``/``hash_prefix`` when one is known; a file that
    fails the check is never used: it is downloaded again (or, offline, reported). A cache hit
    makes no network request. Concurrent callers (threads or processes) download once: the
    first takes the lock, the others wait and then find the verified file.
    """
    dst = os.path.abspath(os.path.expanduser(str(dst)))
    corrupt = None
    if os.path.isfile(dst):
        ok, digest = verify_file(dst, sha256, hash_prefix)
        if ok:
            return dst
        corrupt = digest
        logger.warning("cached file %s is corrupt (sha256 %s, expected %s); downloading it again",
                       dst, digest, sha256 or f"{hash_prefix}...")
    reason = offline_reason()
    if reason:
        what = (f"the cached copy at {dst} is corrupt (sha256 {corrupt}, expected {sha256 or f'{hash_prefix}...'})"
                if corrupt else f"{os.path.basename(dst)} is not in the cache")
        raise OfflineError(
            f"offline mode is on ({reason}) and {what}.\n"
            f"  To use it offline, download {url}\n"
            f"  and put it at {dst}"
            + (f" (its sha256 must be {sha256})" if sha256 else ""),
            url=url, path=dst)
    with _locked(dst, url):
        if os.path.isfile(dst):
            ok, _ = verify_file(dst, sha256, hash_prefix)
            if ok:
                return dst  # another process finished it while we waited
        return _download_locked(url, dst, sha256, hash_prefix, progress, headers, session)
