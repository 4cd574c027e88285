"""Swin window ops: partition a (B, H, W, C) map into windows with the cyclic shift folded in, and the inverse
(+ the residual add) — one pass each in C++ (``_C.window_partition`` / ``_C.window_reverse``) instead of
roll + pad + reshape/permute copies. Each is the other's backward."""
import numpy as np

from .. import _C
from .._tensor import Tensor
from ..autograd.graph import Function


def _kernel_array(a):
    """float32/float64 C-contiguous (other float dtypes compute in float32)."""
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)
    return np.ascontiguousarray(a)


class WindowPartition(Function):
    capture_role = "window_partition"

    @staticmethod
    def forward(ctx, x, window_size, shift):
        ctx.args = (window_size, shift, x.shape[1:3])
        return _C.window_partition(_kernel_array(x), window_size, shift).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        window_size, shift, size = ctx.args
        gk = _kernel_array(g)
        return _C.window_reverse(gk, window_size, shift, size).astype(g.dtype, copy=False), None, None


class WindowReverse(Function):
    capture_role = "window_reverse"

    @staticmethod
    def forward(ctx, windows, shortcut, window_size, shift, size):
        ctx.args = (window_size, shift)
        w = _kernel_array(windows)
        s = None if shortcut is None else _kernel_array(shortcut).astype(w.dtype, copy=False)
        return _C.window_reverse(w, window_size, shift, size, s).astype(windows.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        window_size, shift = ctx.args
        need = ctx.needs_input_grad
        g_windows = (_C.window_partition(_kernel_array(g), window_size, shift).astype(g.dtype, copy=False)
                     if need[0] else None)
        return g_windows, (g if need[1] else None), None, None, None


def _pair(v, name):
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _check_map(x, fn, name, ndim):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): '{name}' must be a Tensor, got {type(x).__name__}")
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): '{name}' must be a floating-point tensor, got {x._dtype}")
    if x.ndim != ndim:
        raise RuntimeError(f"{fn}(): '{name}' must be {ndim}-D, got shape {list(x.shape)}")


def _composite_partition(x, window_size, shift):
    """The same with generic ops (roll, pad, reshape/permute): devices without the CPU kernel (CUDA)."""
    from ..nn import functional as F
    from . import shape as S
    b, h, w, c = x.shape
    (wh, ww), (sh, sw) = window_size, shift
    if sh or sw:
        x = S.roll(x, (-sh, -sw), (1, 2))
    pad_h, pad_w = -h % wh, -w % ww
    if pad_h or pad_w:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    hp, wp = h + pad_h, w + pad_w
    x = S.reshape(x, (b, hp // wh, wh, wp // ww, ww, c))
    return S.reshape(S.permute(x, (0, 1, 3, 2, 4, 5)), (-1, wh * ww, c))


def _composite_reverse(windows, window_size, shift, h, w, shortcut):
    from . import shape as S
    (wh, ww), (sh, sw) = window_size, shift
    c = windows.shape[-1]
    hp, wp = -(-h // wh) * wh, -(-w // ww) * ww
    x = S.reshape(windows, (-1, hp // wh, wp // ww, wh, ww, c))
    x = S.reshape(S.permute(x, (0, 1, 3, 2, 4, 5)), (-1, hp, wp, c))
    if hp != h or wp != w:
        x = x[:, :h, :w, :]
    if sh or sw:
        x = S.roll(x, (sh, sw), (1, 2))
    return x if shortcut is None else shortcut + x


def window_partition(x, window_size, shift=0):
    """(B, H, W, C) -> (B * nW, wh * ww, C): ``x`` rolled by ``-shift`` over (H, W), zero-padded bottom/right to
    whole windows and cut into row-major windows (timm Swin's roll + pad + window_partition, one copy)."""
    _check_map(x, "window_partition", "x", 4)
    window_size, shift = _pair(window_size, "window_size"), _pair(shift, "shift")
    if min(window_size) < 1:
        raise ValueError(f"window_partition(): window_size must be positive, got {window_size}")
    if x.device.type != "cpu":
        return _composite_partition(x, window_size, shift)
    return WindowPartition.apply(x, window_size, shift)


def window_reverse(windows, window_size, shift, h, w, shortcut=None):
    """Inverse of :func:`window_partition`: (B * nW, wh * ww, C) -> (B, h, w, C), padding cropped and the map
    rolled back by ``+shift``; plus ``shortcut`` (B, h, w, C) when given (the block's residual add, same pass)."""
    _check_map(windows, "window_reverse", "windows", 3)
    window_size, shift = _pair(window_size, "window_size"), _pair(shift, "shift")
    if min(window_size) < 1:
        raise ValueError(f"window_reverse(): window_size must be positive, got {window_size}")
    if shortcut is not None:
        _check_map(shortcut, "window_reverse", "shortcut", 4)
        if shortcut._dtype is not windows._dtype:
            raise RuntimeError(f"window_reverse(): shortcut dtype {shortcut._dtype} differs from windows dtype "
                               f"{windows._dtype}")
    if windows.device.type != "cpu":
        return _composite_reverse(windows, window_size, shift, int(h), int(w), shortcut)
    return WindowReverse.apply(windows, shortcut, window_size, shift, (int(h), int(w)))
