"""Host memory: the caching allocator behind numpy arrays created by flowvision.

A training step allocates and frees the same large arrays every iteration. The system allocator returns large freed
blocks to the kernel, and the next step pays a page fault and a page of zeroing for every 4 KiB of them again. At
import, flowvision installs a numpy memory handler (NEP 49) that keeps freed blocks of 256 KiB and more, up to a limit,
and hands them to the next request of the same size, as torch's CUDA caching allocator does for device memory.

The limit defaults to a quarter of the machine's memory, at most 8 GiB; ``FLOWVISION_HOST_CACHE_MB`` sets it in MiB
before import, and ``0`` leaves numpy's own allocator in place. The handler applies to arrays created in the importing
thread's context (numpy keeps the handler in a context variable; threads started later allocate with numpy's default).
Blocks held by the cache count in the process's resident memory; :func:`empty_cache` returns them.
"""
import os
import warnings
from typing import Dict

from . import _C

__all__ = ["empty_cache", "memory_stats", "set_cache_limit", "cache_limit"]

_MAX_DEFAULT = 8 << 30


def _default_limit() -> int:
    env = os.environ.get("FLOWVISION_HOST_CACHE_MB")
    if env is not None and env.strip() != "":
        try:
            mb = float(env)
        except ValueError:
            mb = -1.0
        if mb >= 0:
            return int(mb * (1 << 20))
        warnings.warn(f"FLOWVISION_HOST_CACHE_MB must be a number of MiB >= 0 (0 turns the cache off), got {env!r}: "
                      "using the default limit", RuntimeWarning, stacklevel=3)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 30
    return min(total // 4, _MAX_DEFAULT)


def _array_api():
    try:
        from numpy._core import _multiarray_umath as mu  # numpy >= 2
    except ImportError:
        from numpy.core import _multiarray_umath as mu  # numpy 1.x
    return mu._ARRAY_API


def _install() -> bool:
    limit = _default_limit()
    if limit == 0:
        return False
    return bool(_C.host_cache_install(_array_api(), limit))


def empty_cache() -> None:
    """Return every block the cache holds to the system (arrays in use are not touched)."""
    _C.host_cache_empty()


def set_cache_limit(limit_bytes: int) -> None:
    """Keep at most ``limit_bytes`` of freed blocks for reuse; blocks over a lowered limit are returned at once."""
    limit_bytes = int(limit_bytes)
    if limit_bytes < 0:
        raise ValueError(f"set_cache_limit(): the limit must be >= 0 bytes, got {limit_bytes}")
    _C.host_cache_set_limit(limit_bytes)


def cache_limit() -> int:
    """The byte limit of the cache."""
    return int(_C.host_cache_stats()["limit_bytes"])


def memory_stats() -> Dict[str, int]:
    """The cache's counters: ``installed``, ``cached_bytes`` (held now), ``peak_cached_bytes``, ``limit_bytes``,
    ``hits`` and ``misses`` (requests of >= 256 KiB served from the cache or from the system) and ``released``
    (blocks returned to the system)."""
    return {k: int(v) for k, v in _C.host_cache_stats().items()}


_install()
