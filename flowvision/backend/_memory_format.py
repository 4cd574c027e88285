"""Memory formats (``torch.channels_last`` ...) with torch's stride semantics on the numpy-backed CPU engine.

A tensor's strides are its array's strides, so ``contiguous(memory_format=channels_last)`` stores the data NHWC and
keeps the logical NCHW shape: ``stride()`` then equals torch's ``(H*W*C, 1, W*C, C)`` and ``is_contiguous(
memory_format=...)`` follows torch's rule (sizes of 1 are ignored).  Every op reads arrays through their strides, so
results are equal in either format; elementwise ops keep the input's layout as numpy does (and as torch does).
The image ops whose kernels write NCHW (convolution, normalization, activations, pooling, resampling, padding) are
wrapped by ``follows_channels_last``, so a channels_last input gives a channels_last output as in torch.
"""
from __future__ import annotations

import functools

import numpy as np

from ._tensor import Tensor
from .autograd import graph as _graph
from .autograd.graph import Function

# dimension order from the fastest-varying to the slowest (torch's channels_last / channels_last_3d)
_ORDERS = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}


def format_name(memory_format) -> str:
    """The tag's name; accepts flowvision's or torch's memory_format objects and None (contiguous)."""
    if memory_format is None:
        return "contiguous_format"
    name = getattr(memory_format, "name", None) or str(memory_format).replace("torch.", "")
    name = name.replace("flowvision.", "")
    if name not in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        raise TypeError(f"unknown memory_format {memory_format!r}")
    return name


def is_contiguous_as(arr: np.ndarray, name: str) -> bool:
    """torch's is_contiguous(memory_format=...) on an array's element strides."""
    if name in ("contiguous_format", "preserve_format"):
        return bool(arr.flags["C_CONTIGUOUS"])
    ndim, order = _ORDERS[name]
    if arr.ndim != ndim:
        return False
    expected = 1
    for d in order:
        size = arr.shape[d]
        if size != 1:
            if arr.strides[d] != expected * arr.itemsize:
                return False
            expected *= size
    return True


def _layout(arr: np.ndarray, name: str) -> np.ndarray:
    """A copy of ``arr`` stored in format ``name`` (same shape and values)."""
    if name == "contiguous_format":
        return np.array(arr, order="C", copy=True)
    ndim, order = _ORDERS[name]
    if arr.ndim != ndim:
        rank = "4" if name == "channels_last" else "5"
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    perm = tuple(reversed(order))  # slowest first: the physical order
    phys = arr.transpose(perm)
    stored = np.empty(phys.shape, arr.dtype)  # a fresh array: standard strides even along dims of size 1
    stored[...] = phys
    return stored.transpose(np.argsort(perm))


class ToFormat(Function):
    """Copy into another memory format; the gradient passes through unchanged (values are equal)."""

    @staticmethod
    def forward(ctx, x, name):
        return _layout(x, name)

    @staticmethod
    def backward(ctx, g):
        return g, None


def _strides_like(arr: np.ndarray, order) -> bool:
    """torch's is_channels_last_strides_2d/3d heuristic (ambiguous size-1 cases fall back to contiguous)."""
    st = [s // arr.itemsize for s in arr.strides]
    if st[1] == 0:
        return False
    low = 0
    for d in order:
        if arr.shape[d] == 0 or st[d] < low:
            return False
        if d == 0 and low == st[1]:
            return False
        low = st[d] * (arr.shape[d] if arr.shape[d] > 1 else 1)
    return True


def suggest(arr: np.ndarray) -> str:
    """torch's suggest_memory_format from the strides."""
    for name in ("channels_last", "channels_last_3d"):
        ndim, order = _ORDERS[name]
        if arr.ndim == ndim and _strides_like(arr, order):
            return name
    return "contiguous_format"


def to_format(t: Tensor, memory_format, force: bool = False) -> Tensor:
    """``t`` in ``memory_format`` (``t`` itself when it already is, unless ``force``: torch's clone always lays
    out its copy with the format's standard strides); preserve_format keeps ``t``."""
    name = format_name(memory_format)
    if name == "preserve_format":
        return t
    if t._data.__class__ is not np.ndarray:  # device arrays: one (contiguous) layout
        if name != "contiguous_format":
            raise NotImplementedError(f"memory_format={name} is implemented for CPU tensors")
        return t
    if not force and is_contiguous_as(t._data, name):
        return t
    return ToFormat.apply(t, name)


def to_memory_format(t: Tensor, memory_format) -> Tensor:
    """``Tensor.to(memory_format=...)``: ``t`` itself when its strides already suggest that format (torch's
    aliasing rule), else a copy laid out in it."""
    name = format_name(memory_format)
    if name == "preserve_format" or t._data.__class__ is not np.ndarray or suggest(t._data) == name:
        return t
    return to_format(t, memory_format, force=True)


def like_format(src: Tensor, out: Tensor, memory_format) -> Tensor:
    """Lay ``out`` (a fresh tensor shaped like ``src``) out as ``*_like(memory_format=...)`` does in torch."""
    name = "preserve_format" if memory_format is None else format_name(memory_format)
    if name == "preserve_format":
        name = suggest(src._data) if src._data.__class__ is np.ndarray else "contiguous_format"
    if name == "contiguous_format" or out._data.__class__ is not np.ndarray:
        return out
    arr = _layout(out._data, name)
    fresh = Tensor._wrap(arr, out._dtype)
    fresh.requires_grad_flag = out.requires_grad_flag
    return fresh


def _suggests_channels_last(t) -> bool:
    if not isinstance(t, Tensor):
        return False
    a = t._data
    if a.__class__ is not np.ndarray or a.ndim != 4:
        return False
    shape = a.shape
    if a.flags.c_contiguous and shape[1] > 1 and shape[2] * shape[3] > 1:
        return False  # the common case, decided without the stride walk (a hot path of every eager conv / activation)
    return suggest(a) == "channels_last"


def _as_channels_last(out):
    if isinstance(out, Tensor) and out._data.__class__ is np.ndarray and out._data.ndim == 4:
        return to_format(out, "channels_last")
    if isinstance(out, tuple):  # (values, indices) of the pooling ops
        return type(out)(*(_as_channels_last(o) for o in out)) if hasattr(out, "_fields") else \
            tuple(_as_channels_last(o) for o in out)
    return out


def follows_channels_last(fn=None, *, weight: bool = False):
    """Wrap an op ``fn(input, ...)`` so that its 4-D outputs are channels_last-strided when ``input`` (or, with
    ``weight``, the second argument, as for torch's convolutions) is channels_last; values are unchanged, and the
    relayout is a no-op for outputs already in that format (in-place results)."""
    if fn is None:
        return functools.partial(follows_channels_last, weight=weight)

    @functools.wraps(fn)
    def inner(input, *args, **kwargs):
        out = fn(input, *args, **kwargs)
        if _graph._RECORDER is not None:
            # being captured by compile: the plan chooses its own layouts, and a relayout would be a step of its own
            return out
        second = (args[0] if args else kwargs.get("weight")) if weight else None
        if _suggests_channels_last(input) or _suggests_channels_last(second):
            return _as_channels_last(out)
        return out
    return inner
