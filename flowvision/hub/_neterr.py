"""Short, one-line reasons for network failures, and which of them are worth retrying.

``requests`` wraps a DNS failure in three layers of urllib3 text (~400 characters); a user needs the host and what
went wrong. A host that does not resolve, refuses the connection or cannot be routed to will not answer a retry a
few seconds later either, so those fail at once; timeouts, dropped connections, 5xx and 429 are retried.
"""
import errno
import socket
from typing import Iterator, Optional
from urllib.parse import urlsplit

__all__ = ["unreachable_reason", "short_reason"]

_UNROUTABLE = {errno.ENETUNREACH, errno.EHOSTUNREACH}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """Every exception reachable from ``exc`` through args, ``reason``, ``__cause__`` and ``__context__``."""
    seen = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo.extend(a for a in getattr(e, "args", ()) if isinstance(a, BaseException))
        for attr in ("reason", "__cause__", "__context__"):
            nxt = getattr(e, attr, None)
            if isinstance(nxt, BaseException):
                todo.append(nxt)


def _host(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = parts.port or default
    return f"{parts.hostname}:{port}" if port and port != default else str(parts.hostname)


def unreachable_reason(exc: BaseException, url: str) -> Optional[str]:
    """A one-line reason when ``exc`` says the server cannot be reached at all (no retry helps), else None.

    Args:
        exc: the exception ``requests`` raised for a request to ``url``.
        url: the requested URL (its host is named in the reason).

    Returns:
        e.g. ``"cannot resolve host 'example.invalid' (no network, or a DNS failure)"``, or None for a failure that
        a retry may cure (timeouts, dropped connections).
    """
    for e in _chain(exc):
        if isinstance(e, socket.gaierror) or type(e).__name__ == "NameResolutionError":
            return f"cannot resolve host {urlsplit(url).hostname!r} (no network, or a DNS failure)"
    for e in _chain(exc):
        if isinstance(e, ConnectionRefusedError):
            return f"connection refused by {_host(url)} (nothing listens there)"
        if isinstance(e, OSError) and e.errno in _UNROUTABLE:
            return f"no route to {_host(url)} ({e.strerror or 'network unreachable'})"
    return None


def short_reason(exc: BaseException) -> str:
    """One line naming the kind of failure and its innermost cause, without urllib3's wrapping text.

    Args:
        exc: any exception raised by ``requests``.

    Returns:
        e.g. ``"ConnectTimeout: timed out"`` or ``"ConnectionError: [Errno 104] Connection reset by peer"``.
    """
    innermost = None
    for e in _chain(exc):
        if isinstance(e, OSError) and (e.strerror or str(e)) and type(e).__module__ in ("builtins", "socket"):
            innermost = e
            break
    text = str(innermost) if innermost is not None else str(exc)
    text = " ".join(text.split())
    if len(text) > 160:
        text = text[:157] + "..."
    return f"{type(exc).__name__}: {text}"
