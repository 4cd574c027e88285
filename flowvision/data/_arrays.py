"""Zero-copy interop: numpy arrays, flowvision.backend tensors and any DLPack tensor (torch).

Nothing here imports torch or flowvision.backend: a backend tensor is recognised by its module
name (``flowvision.backend``) and a foreign tensor through ``__dlpack__``.  Results are handed
back as the caller's type through the caller's own module (``sys.modules``).
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["as_numpy", "from_numpy_like", "kind_of"]


def kind_of(x) -> str:
    """'numpy' | 'backend' | 'dlpack' | 'other'."""
    if isinstance(x, np.ndarray):
        return "numpy"
    mod = type(x).__module__ or ""
    if mod.startswith("flowvision.backend"):
        return "backend"
    if hasattr(x, "__dlpack__"):
        return "dlpack"
    return "other"


def as_numpy(x, what: str = "input", writable: bool = False) -> np.ndarray:
    """A numpy view of ``x`` sharing its memory (no copy)."""
    kind = kind_of(x)
    if kind == "numpy":
        arr = x
    elif kind == "backend":
        data = getattr(x, "_data", None)
        arr = data if isinstance(data, np.ndarray) else x.numpy()
    elif kind == "dlpack":
        if getattr(x, "requires_grad", False):
            raise TypeError(f"{what}: tensor requires grad; pass tensor.detach()")
        dev = getattr(x, "device", None)
        if dev is not None and getattr(dev, "type", "cpu") != "cpu":
            raise TypeError(f"{what}: only CPU tensors are supported (got device {dev})")
        try:
            arr = np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError) as e:
            raise TypeError(f"{what}: cannot view {type(x).__name__} as a numpy array via DLPack ({e})") from e
    else:
        raise TypeError(
            f"{what}: expected a numpy array, a flowvision.backend Tensor or a DLPack tensor, "
            f"got {type(x).__name__}")
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what}: array is read-only; in-place augmentation needs a writable array")
    return arr


def from_numpy_like(arr: np.ndarray, like):
    """Wrap ``arr`` as the same container type as ``like`` (no copy where possible)."""
    kind = kind_of(like)
    if kind == "numpy":
        return arr
    if kind == "backend":
        fb = sys.modules.get("flowvision.backend")
        if fb is None:  # pragma: no cover - a backend tensor exists, so the module is loaded
            import importlib
            fb = importlib.import_module("flowvision.backend")
        return fb.from_numpy(np.ascontiguousarray(arr))
    if kind == "dlpack":
        root = (type(like).__module__ or "").split(".")[0]
        mod = sys.modules.get(root)
        fn = getattr(mod, "from_dlpack", None) if mod is not None else None
        if fn is None:
            return arr
        return fn(np.ascontiguousarray(arr))
    return arr
