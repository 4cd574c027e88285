"""Resampling and layout ops on images: ``interpolate`` / ``upsample``, ``pad``, pixel (un)shuffle."""
import math

import numpy as np

from ... import _C
from ..._ops import shape as S
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


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
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


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return F.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
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


def pad(input, pad, mode="constant", value=None):  # noqa: A002
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
    out = input
    for d, (b, a) in enumerate(pairs):
        if b == 0 and a == 0:
            continue
        idx = _pad_index(input.shape[d], b, a, mode)
        out = S.IndexSelect.apply(out, d, index=idx)
    return out


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = S.reshape(input, (-1, c // (r * r), r, r, h, w))
    x = S.permute(x, (0, 1, 4, 2, 5, 3))
    return S.reshape(x, tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, got {h}x{w} "
                           f"and {r}")
    x = S.reshape(input, (-1, c, h // r, r, w // r, r))
    x = S.permute(x, (0, 1, 3, 5, 2, 4))
    return S.reshape(x, tuple(lead) + (c * r * r, h // r, w // r))
