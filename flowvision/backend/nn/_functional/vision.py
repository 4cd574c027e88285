"""Resampling and layout ops on images: ``interpolate`` / ``upsample``, ``pad``, pixel (un)shuffle."""
import math
from typing import Optional, Sequence, Union

import numpy as np

from ... import _C
from ... import _autocast_policy as _amp
from ..._ops import shape as S
from ..._tensor import Tensor
from ...autograd.graph import Function
from .common import _check_float, _kin, _pair
from .. import functional as F


class _Interpolate(Function):
    @staticmethod
    def forward(ctx, x, out_hw, mode, align_corners, scale, antialias):
        ctx.args = (x.shape, out_hw, mode, align_corners, scale, antialias)
        return _C.interpolate_forward(_kin(x), out_hw, mode, align_corners, scale, antialias).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, out_hw, mode, align_corners, scale, antialias):
        ctx.args = (x.shape, out_hw, mode, align_corners, scale, antialias)
        return ctx.xp.interpolate_forward(x, out_hw, mode, align_corners, scale, antialias)

    @staticmethod
    def backward(ctx, g):
        shape, out_hw, mode, align_corners, scale, antialias = ctx.args
        return (ctx.xp.interpolate_backward(_kin(g), shape, out_hw, mode, align_corners, scale, antialias),)


_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "area", "trilinear")


def interpolate(input: Tensor, size: Optional[Union[int, Sequence[int]]] = None,
                scale_factor: Optional[Union[float, Sequence[float]]] = None, mode: str = "nearest",
                align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None,
                antialias: bool = False) -> Tensor:
    """Resize a batch of 1-D signals or 2-D images, as ``torch.nn.functional.interpolate``.

    Exactly one of ``size`` and ``scale_factor`` is given; with ``scale_factor`` the output size is
    ``floor(in_size * scale_factor)``.

    Args:
        input: ``(N, C, W)`` or ``(N, C, H, W)``; a floating-point tensor.
        size: the output spatial size (one int for every dim, or one per dim).
        scale_factor: multiplier of the spatial size (one float, or one per dim).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D input), ``'bilinear'`` / ``'bicubic'`` (4-D
            input) or ``'area'`` (adaptive average pooling).
        align_corners: for the linear and cubic modes, map the corner pixel centres of input and output onto each
            other (True) or the corner pixel edges (False, the default).
        recompute_scale_factor: compute the sampling positions from the output size rather than from
            ``scale_factor``.
        antialias: low-pass filter when downsampling (``'bilinear'`` and ``'bicubic'`` only), as PIL does.

    Returns:
        ``(N, C, *out_size)`` of the input's dtype.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: both or neither of ``size`` and ``scale_factor``, ``align_corners`` with a nearest/area mode,
            ``antialias`` with another mode, or an empty output.
        NotImplementedError: an unsupported mode or input rank.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.interpolate(flow.tensor([[[[1.0, 2.0]]]]), scale_factor=2, mode="nearest")
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.]]]])
    """
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate(): mode {mode!r} is not supported; use one of {_MODES[:-1]}")
    _check_float(input, "interpolate")
    nd = input.ndim - 2
    if nd not in (1, 2):
        raise NotImplementedError(f"interpolate(): input must be 3-D or 4-D (N, C, [H,] W), got {list(input.shape)}")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if (mode == "linear" and nd != 1) or (mode in ("bilinear", "bicubic") and nd != 2):
        raise NotImplementedError(f"interpolate(): mode {mode!r} expects {'3' if mode == 'linear' else '4'}-D input, "
                                  f"got {list(input.shape)}")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sz = tuple(input.shape[2:])
    if size is not None:
        out = _pair(size, nd, "size")
        scales = None
    else:
        sf = scale_factor if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * nd
        if len(sf) != nd:
            raise ValueError(f"scale_factor shape must match input shape. Input is {nd}D, scale_factor size is {len(sf)}")
        out = tuple(int(math.floor(float(i) * float(s))) for i, s in zip(in_sz, sf))
        scales = None if recompute_scale_factor else tuple(float(s) for s in sf)
    if any(o <= 0 for o in out):
        raise ValueError(f"interpolate(): output size {out} must be positive (input {list(input.shape)})")
    x = input
    if nd == 1:
        x = S.unsqueeze(x, 2)
        out = (1,) + out
        scales = None if scales is None else (1.0,) + scales
    if mode == "area":
        y = F.adaptive_avg_pool2d(x, out)
    else:
        kmode = {"linear": "bilinear"}.get(mode, mode)
        ac = bool(align_corners) if kmode in ("bilinear", "bicubic") else False
        y = _Interpolate.apply(x, out, kmode, ac, None if ac else scales, bool(antialias))
    return S.squeeze(y, 2) if nd == 1 else y


def upsample(input: Tensor, size: Optional[Union[int, Sequence[int]]] = None,
             scale_factor: Optional[Union[float, Sequence[float]]] = None, mode: str = "nearest",
             align_corners: Optional[bool] = None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (same arguments), as ``torch.nn.functional.upsample``.

    Args:
        input: ``(N, C, W)`` or ``(N, C, H, W)``.
        size: the output spatial size.
        scale_factor: multiplier of the spatial size.
        mode: the interpolation mode (see :func:`interpolate`).
        align_corners: see :func:`interpolate`.

    Returns:
        The resized tensor.
    """
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Optional[Union[int, Sequence[int]]] = None,
                     scale_factor: Optional[Union[float, Sequence[float]]] = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='nearest'``, as ``torch.nn.functional.upsample_nearest``.

    Args:
        input: ``(N, C, W)`` or ``(N, C, H, W)``.
        size: the output spatial size.
        scale_factor: multiplier of the spatial size.

    Returns:
        The resized tensor.
    """
    return F.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Optional[Union[int, Sequence[int]]] = None,
                      scale_factor: Optional[Union[float, Sequence[float]]] = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='bilinear', align_corners=True``, as
    ``torch.nn.functional.upsample_bilinear``.

    Args:
        input: ``(N, C, H, W)``.
        size: the output spatial size.
        scale_factor: multiplier of the spatial size.

    Returns:
        The resized tensor.
    """
    return F.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _pad_index(n, before, after, mode):
    idx = np.arange(-before, n + after)
    if mode == "reflect":
        if before >= n or after >= n:
            raise RuntimeError(f"Padding size should be less than the corresponding input dimension, but got: "
                               f"padding ({before}, {after}) at dimension of size {n}")
        period = 2 * (n - 1) if n > 1 else 1
        idx = np.abs(idx) % period
        idx = np.where(idx >= n, period - idx, idx)
    elif mode == "replicate":
        idx = np.clip(idx, 0, n - 1)
    elif mode == "circular":
        if before > n or after > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = idx % n
    return idx


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: Optional[float] = None) -> Tensor:  # noqa: A002
    """Pad the trailing dims of a tensor, as ``torch.nn.functional.pad``.

    ``pad`` lists ``(before, after)`` pairs starting from the last dim: ``(left, right)`` pads the last dim,
    ``(left, right, top, bottom)`` the last two, and so on. Negative amounts crop (constant mode).

    Args:
        input: a tensor of any shape.
        pad: the padding amounts, an even number of ints, at most two per dim.
        mode: ``'constant'``, ``'reflect'`` (mirror without repeating the edge), ``'replicate'`` (repeat the edge) or
            ``'circular'`` (wrap around); the non-constant modes pad at most all dims but the first.
        value: fill value of constant mode (default 0).

    Returns:
        The padded tensor.

    Raises:
        RuntimeError: an odd number of amounts, more pairs than dims, or reflect/circular padding larger than the dim.
        NotImplementedError: an unknown mode, or a non-constant mode over the leading dim.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.pad(flow.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
        tensor([[3., 2., 1., 2., 3., 2.]])
    """
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2, got {len(pad)}")
    npairs = len(pad) // 2
    if npairs > input.ndim:
        raise RuntimeError(f"Padding length ({len(pad)}) too large for input of {input.ndim} dimensions")
    pairs = [(0, 0)] * (input.ndim - npairs) + [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in reversed(range(npairs))]
    if mode == "constant":
        return S.Pad.apply(input, tuple(pairs), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad(): mode {mode!r} is not supported; use constant, reflect, replicate or circular")
    if npairs > input.ndim - 1 and input.ndim > 1:
        raise NotImplementedError(f"pad(): only the last {input.ndim - 1} dimension(s) can be padded in {mode} mode")
    out = _amp.cast_fp32(input) if mode != "circular" else input  # reflection/replication pads: autocast float32
    for d, (b, a) in enumerate(pairs):
        if b == 0 and a == 0:
            continue
        idx = _pad_index(input.shape[d], b, a, mode)
        out = S.IndexSelect.apply(out, d, index=idx)
    return out


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)`` (sub-pixel convolution), as
    ``torch.nn.functional.pixel_shuffle``.

    Args:
        input: ``(*, C * r^2, H, W)``.
        upscale_factor: ``r``.

    Returns:
        ``(*, C, H * r, W * r)``.

    Raises:
        RuntimeError: the channels are not divisible by ``r^2``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.pixel_shuffle(flow.ones(1, 8, 3, 3), 2).shape
        flowvision.Size([1, 2, 6, 6])
    """
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = S.reshape(input, (-1, c // (r * r), r, r, h, w))
    x = S.permute(x, (0, 1, 4, 2, 5, 3))
    return S.reshape(x, tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)``, the inverse of :func:`pixel_shuffle`, as
    ``torch.nn.functional.pixel_unshuffle``.

    Args:
        input: ``(*, C, H * r, W * r)``.
        downscale_factor: ``r``.

    Returns:
        ``(*, C * r^2, H, W)``.

    Raises:
        RuntimeError: the height or width is not divisible by ``r``.
    """
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, got {h}x{w} "
                           f"and {r}")
    x = S.reshape(input, (-1, c, h // r, r, w // r, r))
    x = S.permute(x, (0, 1, 3, 5, 2, 4))
    return S.reshape(x, tuple(lead) + (c * r * r, h // r, w // r))
