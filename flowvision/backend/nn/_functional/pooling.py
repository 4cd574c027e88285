"""Max, average and adaptive pooling over 1-D and 2-D inputs."""
from ... import _C
from ..._ops import reduce as R, shape as S
from ...autograd.graph import Function
from .common import ShapeError, _batchify, _check_float, _kin, _pair
from .. import functional as F


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    if num < 0:
        return 0
    out = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_pool(x, k, s, p, d, name):
    for i in range(2):
        if k[i] <= 0 or s[i] <= 0 or d[i] <= 0:
            raise RuntimeError(f"{name}(): kernel_size, stride and dilation must be positive, got kernel {k}, stride {s}, "
                               f"dilation {d}")
        if p[i] < 0 or p[i] * 2 > d[i] * (k[i] - 1) + 1:
            raise RuntimeError(f"{name}(): pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")


class MaxPool2d(Function):
    capture_role = "max_pool2d"

    @staticmethod
    def forward(ctx, x, k, s, p, d, ceil_mode):
        xk = _kin(x)
        y, idx = _C.max_pool2d_forward(xk, k, s, p, d, ceil_mode)
        ctx.args = (x.shape, idx)
        return y.astype(x.dtype, copy=False), idx

    @staticmethod
    def forward_cuda(ctx, x, k, s, p, d, ceil_mode):
        y, idx = ctx.xp.max_pool2d_forward(x, k, s, p, d, ceil_mode)
        ctx.args = (x.shape, idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi):
        shape, idx = ctx.args
        return (ctx.xp.max_pool2d_backward(_kin(g), idx, shape),)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _check_float(input, "max_pool2d")
    x, unbatched = _batchify(input, 4, "max_pool2d")
    k = _pair(kernel_size, 2, "kernel_size")
    s = _pair(stride, 2, "stride") if stride not in (None, [], ()) else k
    p, d = _pair(padding, 2, "padding"), _pair(dilation, 2, "dilation")
    _check_pool(x, k, s, p, d, "max_pool2d")
    if any(_pool_out(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) <= 0 for i in range(2)):
        raise ShapeError(f"max_pool2d(): output size is too small for input {list(x.shape)}, kernel {k}, stride {s}")
    y, idx = MaxPool2d.apply(x, k, s, p, d, bool(ceil_mode))
    if unbatched:
        y, idx = S.squeeze(y, 0), S.squeeze(idx, 0)
    return (y, idx) if return_indices else y


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    k = _pair(kernel_size, 1)[0]
    s = _pair(stride, 1)[0] if stride not in (None, [], ()) else k
    y = F.max_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]), (1, _pair(dilation, 1)[0]),
                   ceil_mode, return_indices)
    if return_indices:
        return S.squeeze(y[0], -2), S.squeeze(y[1], -2)
    return S.squeeze(y, -2)


class AvgPool2d(Function):
    capture_role = "avg_pool2d"

    @staticmethod
    def forward(ctx, x, k, s, p, ceil_mode, cip, div):
        ctx.args = (x.shape, k, s, p, ceil_mode, cip, div)
        return _C.avg_pool2d_forward(_kin(x), k, s, p, ceil_mode, cip, div).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, k, s, p, ceil_mode, cip, div):
        ctx.args = (x.shape, k, s, p, ceil_mode, cip, div)
        return ctx.xp.avg_pool2d_forward(x, k, s, p, ceil_mode, cip, div)

    @staticmethod
    def backward(ctx, g):
        shape, k, s, p, ceil_mode, cip, div = ctx.args
        return (ctx.xp.avg_pool2d_backward(_kin(g), shape, k, s, p, ceil_mode, cip, div),)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _check_float(input, "avg_pool2d")
    x, unbatched = _batchify(input, 4, "avg_pool2d")
    k = _pair(kernel_size, 2, "kernel_size")
    s = _pair(stride, 2, "stride") if stride not in (None, [], ()) else k
    p = _pair(padding, 2, "padding")
    _check_pool(x, k, s, p, (1, 1), "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool2d(): divisor must be not zero")
    y = AvgPool2d.apply(x, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override or 0)
    return S.squeeze(y, 0) if unbatched else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    k = _pair(kernel_size, 1)[0]
    s = _pair(stride, 1)[0] if stride not in (None, [], ()) else k
    y = F.avg_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]), ceil_mode, count_include_pad)
    return S.squeeze(y, -2)


def _adaptive_size(x, output_size):
    o = _pair(output_size, 2, "output_size") if not isinstance(output_size, (list, tuple)) else output_size
    o = tuple(x.shape[2 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        raise RuntimeError(f"adaptive pooling: output_size must be non-negative, got {o}")
    return o


class AdaptiveAvgPool2d(Function):
    capture_role = "adaptive_avg_pool2d"

    @staticmethod
    def forward(ctx, x, o):
        ctx.shape = x.shape
        return _C.adaptive_avg_pool2d_forward(_kin(x), o).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, o):
        ctx.shape = x.shape
        return ctx.xp.adaptive_avg_pool2d_forward(x, o)

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.adaptive_avg_pool2d_backward(_kin(g), ctx.shape),)


def adaptive_avg_pool2d(input, output_size):
    _check_float(input, "adaptive_avg_pool2d")
    x, unbatched = _batchify(input, 4, "adaptive_avg_pool2d")
    o = _adaptive_size(x, output_size)
    if o == (1, 1):  # global pooling: a mean is cheaper and exact
        y = R.mean(x, (2, 3), keepdim=True)
    else:
        y = AdaptiveAvgPool2d.apply(x, o)
    return S.squeeze(y, 0) if unbatched else y


def adaptive_avg_pool1d(input, output_size):
    return S.squeeze(F.adaptive_avg_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0])), -2)


class AdaptiveMaxPool2d(Function):
    @staticmethod
    def forward(ctx, x, o):
        y, idx = _C.adaptive_max_pool2d_forward(_kin(x), o)
        ctx.args = (x.shape, idx)
        return y.astype(x.dtype, copy=False), idx

    @staticmethod
    def forward_cuda(ctx, x, o):
        y, idx = ctx.xp.adaptive_max_pool2d_forward(x, o)
        ctx.args = (x.shape, idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi):
        shape, idx = ctx.args
        return (ctx.xp.max_pool2d_backward(_kin(g), idx, shape),)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    _check_float(input, "adaptive_max_pool2d")
    x, unbatched = _batchify(input, 4, "adaptive_max_pool2d")
    y, idx = AdaptiveMaxPool2d.apply(x, _adaptive_size(x, output_size))
    if unbatched:
        y, idx = S.squeeze(y, 0), S.squeeze(idx, 0)
    return (y, idx) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = F.adaptive_max_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0]), return_indices)
    if return_indices:
        return S.squeeze(r[0], -2), S.squeeze(r[1], -2)
    return S.squeeze(r, -2)
