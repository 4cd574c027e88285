"""flowvision.backend.cuda: the optional CUDA side of the engine.

The compiled module ``flowvision.backend._C_cuda`` exists only where the package was
built with a CUDA compiler (CMake ``check_language(CUDA)``; ``-DFLOWVISION_CUDA=OFF``
disables it). It is imported lazily, on the first query, so importing this module never
fails and never touches the driver.
"""
from __future__ import annotations

import importlib
import threading

__all__ = ["is_built", "is_available", "device_count", "get_device_name", "current_device"]

_lock = threading.Lock()
_module = None
_import_error: BaseException | None = None
_tried = False


def _load():
    """Returns the _C_cuda module or None (remembering why it could not be imported)."""
    global _module, _import_error, _tried
    if _tried:
        return _module
    with _lock:
        if not _tried:
            try:
                _module = importlib.import_module("flowvision.backend._C_cuda")
            except Exception as e:  # ImportError, or a broken/foreign binary
                _module, _import_error = None, e
            _tried = True
    return _module


def is_built() -> bool:
    """True if flowvision was compiled with CUDA support (the _C_cuda module imports)."""
    return _load() is not None


def device_count() -> int:
    """Number of visible CUDA devices; 0 without CUDA support, driver or device."""
    m = _load()
    if m is None:
        return 0
    try:
        return int(m.device_count())
    except Exception:
        return 0


def is_available() -> bool:
    """True if CUDA support is built and at least one device can be used. Never raises."""
    try:
        return device_count() > 0
    except Exception:
        return False


def _why_unavailable() -> str:
    m = _load()
    if m is None:
        why = f" ({_import_error})" if _import_error is not None else ""
        return "flowvision was built without CUDA support" + why
    try:
        err = m.device_count_error()
    except Exception:
        err = ""
    return "no CUDA device is available" + (f" ({err})" if err else "")


def get_device_name(device=None) -> str:
    """Name of CUDA device ``device`` (an int, 'cuda:i' or a flowvision device; default 0)."""
    index = _index(device)
    n = device_count()
    if n == 0:
        raise RuntimeError(f"get_device_name({index}): {_why_unavailable()}")
    if not 0 <= index < n:
        raise RuntimeError(f"get_device_name: invalid device index {index} (device_count() is {n})")
    return _load().get_device_name(index)


def current_device() -> int:
    if not is_available():
        raise RuntimeError(f"current_device(): {_why_unavailable()}")
    return 0


def _index(device) -> int:
    if device is None:
        return 0
    if isinstance(device, bool):
        raise TypeError(f"invalid device {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        kind, _, idx = device.partition(":")
        if kind != "cuda" or (idx and not idx.isdigit()):
            raise ValueError(f"invalid CUDA device {device!r}")
        return int(idx) if idx else 0
    idx = getattr(device, "index", None)
    if getattr(device, "type", None) == "cuda":
        return 0 if idx is None else int(idx)
    raise ValueError(f"invalid CUDA device {device!r}")
