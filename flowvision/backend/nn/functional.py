"""torch.nn.functional for flowvision.backend.

Hot ops (conv, pooling, norms, softmax, interpolate, GELU/SiLU, unfold/fold) are ``Function``s over the
compiled kernels in ``_C``; the rest are compositions of differentiable tensor ops.
"""
import math
import numbers

import numpy as np

from .. import _C, _dtype as D
from .._kernels import FLOAT_DTYPES
from .._tensor import Tensor
from ..autograd.graph import Function
from ..autograd.grad_mode import no_grad
from .._xp import namespace
from .._ops import elementwise as E, shape as S, reduce as R, linalg as L, traits as _traits
from .._ops import kernel_select as _select
from .._ops._util import wrap_dim
from ..random import _rng
from .. import _autocast_policy as _amp

__all__ = [
    "conv1d", "conv2d", "conv_transpose2d", "linear", "bilinear", "max_pool1d", "max_pool2d", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "dropout", "dropout1d", "dropout2d", "alpha_dropout",
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "hardswish", "hardsigmoid",
    "hardtanh", "softplus", "sigmoid", "tanh", "logsigmoid", "softsign", "tanhshrink", "threshold", "prelu", "glu",
    "softmax", "log_softmax", "softmin", "interpolate", "upsample", "pad", "unfold", "fold", "embedding",
    "scaled_dot_product_attention", "normalize", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "relu_", "gumbel_softmax",
]


# ------------------------------------------------------------------ helpers
def _pair(v, n=2, name="argument"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _kin(a):
    """A C-contiguous float32/float64 array for the kernels (float16 computes in float32); a device array as it is
    (the device kernels take every float dtype)."""
    if a.__class__ is not np.ndarray and not np.isscalar(a):
        return a
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)
    return np.asarray(a, order="C")  # unlike ascontiguousarray, keeps 0-d arrays 0-d


def _opt(a, like=None):
    if a is None:
        return None
    a = _kin(a)
    return a.astype(like.dtype, copy=False) if like is not None else a


def _const(arr, dtype):
    """A constant tensor of ``dtype`` from a numpy array holding values of its compute dtype (bfloat16: float32)."""
    from .._creation import tensor
    return tensor(arr, dtype=dtype)


class DTypeError(TypeError, RuntimeError):
    """An op got a tensor of a dtype it cannot take: a TypeError, and a RuntimeError (what torch raises) for
    code written against torch."""


class ShapeError(ValueError, RuntimeError):
    """An input too small or of the wrong shape for the op: a ValueError, and a RuntimeError as in torch."""


def _check_float(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x._dtype.is_floating_point:
        raise DTypeError(f"{name}(): expected a floating-point input, got {x._dtype}")


def _check_same_dtype(name, *ts):
    dts = {t._dtype for t in ts if isinstance(t, Tensor)}
    if len(dts) > 1:
        raise DTypeError(f"{name}(): expected all tensors to have the same dtype, got {sorted(d.name for d in dts)}")


def _batchify(x, want, name):
    """Accept unbatched input (one dim fewer) like torch; returns (batched, was_unbatched)."""
    if x.ndim == want - 1:
        return S.unsqueeze(x, 0), True
    if x.ndim != want:
        raise RuntimeError(f"{name}(): expected {want - 1}D (unbatched) or {want}D (batched) input, but got input of "
                           f"size: {list(x.shape)}")
    return x, False


# ------------------------------------------------------------------ convolution
class Conv2d(Function):
    capture_role = "conv2d"

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, groups):
        xk, wk = _kin(x), _kin(w)
        ctx.save_for_backward(xk, wk)
        ctx.args = (stride, padding, dilation, groups, b is not None, x.dtype)
        y = _C.conv2d_forward(xk, wk, _opt(b, xk), stride, padding, dilation, groups)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, stride, padding, dilation, groups):
        ctx.save_for_backward(x, w)
        ctx.args = (stride, padding, dilation, groups, b is not None, x.dtype)
        return ctx.xp.conv2d_forward(x, w, b, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        stride, padding, dilation, groups, has_b, dt = ctx.args
        gk = _kin(g).astype(x.dtype, copy=False)
        need = ctx.needs_input_grad
        xp = ctx.xp
        gx = xp.conv2d_backward_input(gk, w, x.shape, stride, padding, dilation, groups) if need[0] else None
        gw = xp.conv2d_backward_weight(gk, x, w.shape, stride, padding, dilation, groups) if need[1] else None
        gb = gk.sum(axis=(0, 2, 3)) if has_b and need[2] else None
        return gx, gw, gb


def _same_padding(kernel, dilation):
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [(t // 2, t - t // 2) for t in total]


@_amp.lower_precision
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    _check_float(input, "conv2d")
    _check_same_dtype("conv2d", input, weight, bias)
    x, unbatched = _batchify(input, 4, "conv2d")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d(): weight must be 4-D (out_channels, in_channels/groups, kH, kW), got "
                           f"{list(weight.shape)}")
    if x.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                         f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                         "channels instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"conv2d(): out_channels ({weight.shape[0]}) must be divisible by groups ({groups})")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"conv2d(): bias must have shape [{weight.shape[0]}], got {list(bias.shape)}")
    stride, dilation = _pair(stride, 2, "stride"), _pair(dilation, 2, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = _same_padding(weight.shape[2:], dilation)
            if any(a != b for a, b in pads):
                x = pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
                padding = (0, 0)
            else:
                padding = (pads[0][0], pads[1][0])
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    padding = _pair(padding, 2, "padding")
    k_eff = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
    for i in range(2):
        if x.shape[2 + i] + 2 * padding[i] < k_eff[i]:
            raise ShapeError(f"Calculated padded input size per channel: ({x.shape[2] + 2 * padding[0]} x "
                             f"{x.shape[3] + 2 * padding[1]}). Kernel size: ({k_eff[0]} x {k_eff[1]}). Kernel size "
                             "can't be greater than actual input size")
    algo = "im2col"
    if _linear_fast_ok(x, weight, bias, conv=True):  # inference: the packed-weight algorithms may run
        algo = _select.conv_algorithm(x.shape, weight.shape, padding, int(groups), x._data.dtype)
    if algo == "gemm_1x1":
        # 1x1 conv as a GEMM with the weight packed once, bias fused; a strided 1x1 conv reads the subsampled
        # input (one compact copy, like oneDNN's "reduce to unit stride")
        from .. import _kernels
        xa = x._data if stride == (1, 1) else x._data[:, :, ::stride[0], ::stride[1]]
        y = Tensor._wrap(_kernels.conv1x1_packed(xa, weight, None if bias is None else bias._data), x._dtype)
    elif algo == "nhwc_direct":
        # KxK / grouped / depthwise conv with the NHWC direct kernel (weights packed once, bias fused), transposed
        # in and out (see docs/architecture.md, "KxK convolution")
        from .. import _kernels
        y = Tensor._wrap(_kernels.conv2d_nchw_direct(x._data, weight, None if bias is None else bias._data, stride,
                                                     padding, dilation, int(groups)), x._dtype)
    else:
        y = Conv2d.apply(x, weight, bias, stride, padding, dilation, int(groups))
    return S.squeeze(y, 0) if unbatched else y


def _direct_conv_ok(x, w, groups):
    """Whether eager would run an inference conv of these operands with the NHWC direct kernel (unless it is a
    1x1 GEMM): the shared selector's rule (_ops/kernel_select.py)."""
    return _select.eager_direct_ok(x.shape, w.shape, int(groups), x._data.dtype)


@_amp.lower_precision
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, unbatched = _batchify(input, 3, "conv1d")
    if weight.ndim != 3:
        raise RuntimeError(f"conv1d(): weight must be 3-D (out_channels, in_channels/groups, kW), got {list(weight.shape)}")
    pad_arg = padding if isinstance(padding, str) else (0, _pair(padding, 1)[0])
    y = conv2d(S.unsqueeze(x, 2), S.unsqueeze(weight, 2), bias, (1, _pair(stride, 1)[0]), pad_arg,
               (1, _pair(dilation, 1)[0]), groups)
    y = S.squeeze(y, 2)
    return S.squeeze(y, 0) if unbatched else y


class ConvTranspose2d(Function):
    """The transposed convolution as conv2d's input gradient. When output_padding >= stride in a dim (allowed
    while it is < dilation), the output is not the input-gradient shape of any conv2d with this padding: the
    unpadded full result is computed then and the output window [p, p + size) cut out of it (zeros past it)."""

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, output_padding, groups, dilation):
        xk, wk = _kin(x), _kin(w)
        n, _, h, wd = xk.shape
        kh, kw = wk.shape[2:]
        oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
        ow = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
        out_shape = (n, wk.shape[1] * groups, oh, ow)
        full = None
        if any(op >= s for op, s in zip(output_padding, stride)):
            full = ((h - 1) * stride[0] + dilation[0] * (kh - 1) + 1, (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1)
        ctx.save_for_backward(xk, wk)
        ctx.args = (stride, padding, dilation, groups, b is not None, out_shape, full)
        if full is None:
            y = _C.conv2d_backward_input(xk, wk, out_shape, stride, padding, dilation, groups)
        else:
            yf = _C.conv2d_backward_input(xk, wk, out_shape[:2] + full, stride, (0, 0), dilation, groups)
            y = np.zeros(out_shape, yf.dtype)
            rh, rw = _overlap(full, padding, (oh, ow))
            y[:, :, :rh, :rw] = yf[:, :, padding[0]:padding[0] + rh, padding[1]:padding[1] + rw]
        if b is not None:
            y += _kin(b).astype(y.dtype).reshape(1, -1, 1, 1)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        stride, padding, dilation, groups, has_b, out_shape, full = ctx.args
        gk = _kin(g).astype(x.dtype, copy=False)
        need = ctx.needs_input_grad
        gb = gk.sum(axis=(0, 2, 3)) if has_b and need[2] else None
        pad = padding
        if full is not None:  # the gradient of cutting the window out of the full result
            gf = np.zeros(out_shape[:2] + full, gk.dtype)
            rh, rw = _overlap(full, padding, out_shape[2:])
            gf[:, :, padding[0]:padding[0] + rh, padding[1]:padding[1] + rw] = gk[:, :, :rh, :rw]
            gk, pad = gf, (0, 0)
        gx = _C.conv2d_forward(gk, w, None, stride, pad, dilation, groups) if need[0] else None
        gw = _C.conv2d_backward_weight(x, gk, w.shape, stride, pad, dilation, groups) if need[1] else None
        return gx, gw, gb


def _overlap(full, padding, out_hw):
    """Rows/cols of the output window [p, p + out) that lie inside the full transposed-conv result."""
    return tuple(max(0, min(o, f - p)) for f, p, o in zip(full, padding, out_hw))


@_amp.lower_precision
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    _check_float(input, "conv_transpose2d")
    x, unbatched = _batchify(input, 4, "conv_transpose2d")
    if weight.ndim != 4 or x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"conv_transpose2d(): weight of size {list(weight.shape)} expects input with "
                           f"{weight.shape[0]} channels, got input of size {list(x.shape)}")
    stride, padding = _pair(stride, 2, "stride"), _pair(padding, 2, "padding")
    output_padding, dilation = _pair(output_padding, 2, "output_padding"), _pair(dilation, 2, "dilation")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= max(s, d):
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    out_hw = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1) +
              output_padding[i] + 1 for i in range(2)]
    if min(out_hw) < 0:
        raise ShapeError(f"conv_transpose2d(): given input size per channel ({x.shape[2]} x {x.shape[3]}), the "
                         f"calculated output size per channel ({out_hw[0]} x {out_hw[1]}) is too small (weight "
                         f"{list(weight.shape)}, stride {stride}, padding {padding}, dilation {dilation})")
    y = ConvTranspose2d.apply(x, weight, bias, stride, padding, output_padding, int(groups), dilation)
    return S.squeeze(y, 0) if unbatched else y


@_amp.lower_precision
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    y = conv_transpose2d(S.unsqueeze(input, -2), S.unsqueeze(weight, 2), bias, (1, _pair(stride, 1)[0]),
                         (0, _pair(padding, 1)[0]), (0, _pair(output_padding, 1)[0]), groups,
                         (1, _pair(dilation, 1)[0]))
    return S.squeeze(y, -2)


@_amp.lower_precision
def linear(input, weight, bias=None):
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear(): mat1 and mat2 shapes cannot be multiplied (input {list(input.shape)}, "
                           f"weight {list(weight.shape)}: in_features {weight.shape[-1]} != {input.shape[-1]})")
    if _linear_fast_ok(input, weight, bias):
        from .. import _kernels
        y = _kernels.linear_packed(input._data, weight, None if bias is None else bias._data)
        return Tensor._wrap(y, input._dtype)
    return Linear.apply(input, weight, bias)


def _linear_ops(x, w, b):
    out = L.matmul(x, S.t(w))
    return out + b if b is not None else out


class Linear(Function):
    """y = x @ w.T + b. On the CPU it is matmul and add (what capture fuses); a device runs one GEMM with the bias
    in its epilogue (and autocast lowers it as one op)."""

    decomposition = staticmethod(_linear_ops)

    @staticmethod
    def forward_cuda(ctx, x, w, b):
        xp = ctx.xp
        x2 = xp.reshape(x, [-1, x.shape[-1]])
        ctx.save_for_backward(x2, w)
        ctx.args = (x.shape, b is not None)
        return xp.reshape(xp.gemm(x2, w, b, False, True), list(x.shape[:-1]) + [w.shape[0]])

    @staticmethod
    def backward(ctx, g):
        x2, w = ctx.saved
        shape, has_b = ctx.args
        need = ctx.needs_input_grad
        xp = ctx.xp
        g2 = xp.reshape(g, [-1, w.shape[0]])
        gx = xp.reshape(xp.gemm(g2, w), shape) if need[0] else None
        gw = xp.gemm(g2, x2, None, True, False) if need[1] else None
        gb = xp.sum(g2, axis=0) if has_b and need[2] else None
        return gx, gw, gb


def _linear_fast_ok(x, w, b, conv=False):
    """Inference path of linear / 1x1 conv (no autograd recorded): the weight packed once, bias fused."""
    from ..autograd.grad_mode import is_grad_enabled
    if not _select.packed_allowed():
        return False
    if is_grad_enabled() and (x.requires_grad or w.requires_grad or (b is not None and b.requires_grad)):
        return False
    if not hasattr(_C, "gemm_packed_a") or x.ndim < 1 or w.ndim != (4 if conv else 2):
        return False
    dt = x._data.dtype
    return (dt in (np.float32, np.float64) and w._data.dtype == dt and (b is None or (b._data.dtype == dt and b.ndim == 1))
            and x._device == w._device)


def bilinear(input1, input2, weight, bias=None):
    out = L.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out


# ------------------------------------------------------------------ pooling
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
    y = max_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]), (1, _pair(dilation, 1)[0]),
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
    y = avg_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]), ceil_mode, count_include_pad)
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
    return S.squeeze(adaptive_avg_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0])), -2)


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
    r = adaptive_max_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0]), return_indices)
    if return_indices:
        return S.squeeze(r[0], -2), S.squeeze(r[1], -2)
    return S.squeeze(r, -2)


# ------------------------------------------------------------------ normalisation
class BatchNormTrain(Function):
    @staticmethod
    def forward(ctx, x, w, b, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y, mean, invstd = _C.batch_norm_train_forward(x3, _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False), mean, invstd

    @staticmethod
    def forward_cuda(ctx, x, w, b, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, invstd = ctx.xp.batch_norm_train_forward(x3, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape), mean, invstd

    @staticmethod
    def backward(ctx, g, _gm, _gi):
        x3, w = ctx.saved
        shape, mean, invstd, has_b = ctx.args
        gx, gw, gb = ctx.xp.batch_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3,
                                            _opt(w, x3), mean, invstd, True)
        return gx.reshape(shape), gw if w is not None else None, gb if has_b else None


class BatchNormEval(Function):
    capture_role = "batch_norm_eval"

    @staticmethod
    def forward(ctx, x, rm, rv, w, b, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y = _C.batch_norm_infer_forward(x3, _opt(rm, x3), _opt(rv, x3), _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, _opt(rm, x3), (1.0 / np.sqrt(_opt(rv, x3) + eps)).astype(x3.dtype), b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, rm, rv, w, b, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, invstd = ctx.xp.batch_norm_infer(x3, rm, rv, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x3, w = ctx.saved
        shape, mean, invstd, has_b = ctx.args
        gx, gw, gb = ctx.xp.batch_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3,
                                            _opt(w, x3), mean, invstd, False)
        return gx.reshape(shape), None, None, gw if w is not None else None, gb if has_b else None


def _array(t):
    """A tensor's values as an array of its own device's namespace, in the compute dtype (no host copy)."""
    return t._compute() if t._data.__class__ is np.ndarray else t._data


def _ema_(stat, new, momentum):
    """running statistic <- (1 - momentum) * running + momentum * new, in place (any float storage dtype), computed
    in float64 on the host (float32 on a device)."""
    xp = namespace(stat._data)
    cur = _array(stat)
    val = ((1 - momentum) * cur.astype(xp.float64) + momentum * xp.asarray(new).astype(xp.float64)).astype(cur.dtype)
    stat._data[...] = xp.to_storage(val, stat._dtype)
    stat._version[0] += 1


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    _check_float(input, "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"batch_norm(): expected at least 2D input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm(): {name} should contain {c} elements (input {list(input.shape)}), got "
                               f"shape {list(t.shape)}")
    if training:
        n = input.numel() // c
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
        y, mean, invstd = BatchNormTrain.apply(input, weight, bias, eps)
        if running_mean is not None and running_var is not None:
            xp = namespace(invstd._data)
            var = 1.0 / (_array(invstd).astype(xp.float64) ** 2) - eps
            _ema_(running_mean, _array(mean).astype(xp.float64), momentum)
            _ema_(running_var, var * n / (n - 1), momentum)
        return y
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm(): running_mean and running_var must be given when training=False")
    return BatchNormEval.apply(input, running_mean, running_var, weight, bias, eps)


class LayerNorm(Function):
    capture_role = "layer_norm"

    @staticmethod
    def forward(ctx, x, w, b, nshape, eps):
        n = int(np.prod(nshape)) if nshape else 1
        x2 = _kin(x).reshape(-1, n)
        wk = None if w is None else _kin(w).reshape(-1).astype(x2.dtype, copy=False)
        bk = None if b is None else _kin(b).reshape(-1).astype(x2.dtype, copy=False)
        y, mean, rstd = _C.layer_norm_forward(x2, wk, bk, eps)
        ctx.save_for_backward(x2, wk)
        ctx.args = (x.shape, mean, rstd, nshape, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, nshape, eps):
        xp = ctx.xp
        n = int(np.prod(nshape)) if nshape else 1
        x2 = xp.reshape(x, [-1, n])
        wk = None if w is None else xp.reshape(w, [n])
        bk = None if b is None else xp.reshape(b, [n])
        y, mean, rstd = xp.layer_norm_forward(x2, wk, bk, eps)
        ctx.save_for_backward(x2, wk)
        ctx.args = (x.shape, mean, rstd, nshape, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x2, wk = ctx.saved
        shape, mean, rstd, nshape, has_b = ctx.args
        gx, gw, gb = ctx.xp.layer_norm_backward(_kin(g).astype(x2.dtype, copy=False).reshape(x2.shape), x2, wk, mean, rstd)
        return (gx.reshape(shape), None if wk is None else gw.reshape(nshape),
                gb.reshape(nshape) if has_b and gb is not None else None)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    _check_float(input, "layer_norm")
    nshape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(nshape):]) != nshape or len(nshape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(nshape)}, expected input with shape [*, "
                           f"{', '.join(map(str, nshape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != nshape:
            raise RuntimeError(f"layer_norm(): {name} must have shape {list(nshape)}, got {list(t.shape)}")
    return LayerNorm.apply(input, weight, bias, nshape, eps)


class GroupNorm(Function):
    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y, mean, rstd = _C.group_norm_forward(x3, groups, _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, rstd, groups, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, groups, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, rstd = ctx.xp.group_norm_forward(x3, groups, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, rstd, groups, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x3, w = ctx.saved
        shape, mean, rstd, groups, has_b = ctx.args
        gx, gw, gb = ctx.xp.group_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3, groups,
                                            _opt(w, x3), mean, rstd)
        return gx.reshape(shape), gw if w is not None else None, gb if has_b else None


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    _check_float(input, "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"group_norm(): expected at least 2D input, got {list(input.shape)}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return GroupNorm.apply(input, weight, bias, int(num_groups), eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    _check_float(input, "instance_norm")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n, c = input.shape[:2]
    if running_mean is not None and running_var is not None:
        with no_grad():
            x = input._compute().reshape(n, c, -1).astype(np.float64)
            m = x.mean(-1).mean(0)
            cnt = x.shape[-1]
            v = (x.var(-1) * cnt / max(cnt - 1, 1)).mean(0)
            _ema_(running_mean, m, momentum)
            _ema_(running_var, v, momentum)
    return group_norm(input, c, weight, bias, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch's F.local_response_norm for 3-D and higher inputs (one implementation, shared with the module)."""
    from .modules.extra import _local_response_norm
    return _local_response_norm(input, size, alpha, beta, k)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = E.clamp_min(R.norm(input, p, dim, keepdim=True), eps)
    return input / S.expand_as(denom, input)


# ------------------------------------------------------------------ dropout
def _dropout_mask(shape, p, dtype, like=None):
    keep = _rng().random(shape) >= p
    mask = _const((keep / (1.0 - p)).astype(np.float32 if dtype is D.bfloat16 else dtype.np), dtype)
    return mask if like is None or like._device.type == "cpu" else mask.to(like._device)  # drawn on the host


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        out = input * _dropout_mask(tuple(input.shape), p, input._dtype, input)
    if inplace:
        from .._ops.inplace import commit
        return commit(input, out)
    return out


def _channel_dropout(input, p, training, inplace, keep_dims):
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:keep_dims]) + (1,) * (input.ndim - keep_dims)
    out = input * 0.0 if p == 1.0 else input * _dropout_mask(shape, p, input._dtype, input)
    if inplace:
        from .._ops.inplace import commit
        return commit(input, out)
    return out


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 4 else 1)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 3 else 1)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 5 else 1)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
    alpha = -1.7580993408473766
    keep = _const((_rng().random(tuple(input.shape)) >= p).astype(input._compute().dtype), input._dtype)
    a = (1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p)))
    b = -a * alpha * p
    return (input * keep + alpha * (1 - keep)) * a + b


# ------------------------------------------------------------------ activations
def _act(name, fwd, bwd, saves="x", cuda=None, **traits):
    """An elementwise activation op: y = fwd(x, *params), dx = bwd(x or y, g, xp, *params) (``xp``: the array
    namespace); ``cuda``: ``(kernel, params -> kernel params)`` of its device unary kernel (None: CPU only);
    ``traits`` are the capture traits it declares (see _ops/traits.py)."""
    def forward(ctx, x, *params):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            y = fwd(x, *params)
        ctx.save_for_backward(x if saves == "x" else y)
        ctx.params = params
        return y.astype(x.dtype, copy=False)

    def forward_cuda(ctx, x, *params):
        kernel, kernel_params = cuda
        y = ctx.xp.unary(kernel, x, *kernel_params(*params))
        ctx.save_for_backward(x if saves == "x" else y)
        ctx.params = params
        return y

    def backward(ctx, g):
        (v,) = ctx.saved
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return (bwd(v, g, ctx.xp, *ctx.params).astype(g.dtype, copy=False),) + (None,) * len(ctx.params)

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward), "elementwise": True, **traits}
    if cuda is not None:
        body["forward_cuda"] = staticmethod(forward_cuda)
    return type(name, (Function,), body)


def _no_params():
    return ()



def _softplus_np(x, beta, threshold, xp=np):
    bx = x * beta
    return xp.where(bx > threshold, x, xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta)


def _elu_params(alpha, scale=1.0, input_scale=1.0):
    if scale != 1.0 or input_scale != 1.0:
        raise NotImplementedError("elu with scale/input_scale != 1 (selu, celu) is not implemented on CUDA yet")
    return (alpha,)


def _pointwise(kind, x, fallback, lo=0.0, hi=0.0):
    """relu/clamp/hardswish/hardsigmoid forward: the vectorised, threaded C++ kernel for float32/float64 (numpy's
    NaN-aware maximum/clip run at a fraction of memory bandwidth), ``fallback(x)`` for other dtypes."""
    if x.dtype in FLOAT_DTYPES:
        return _C.pointwise(x, kind, lo, hi)
    return fallback(x)


_Relu = _act("Relu", lambda x: _pointwise("relu", x, lambda a: np.maximum(a, 0)), lambda y, g, xp: g * (y > 0),
             saves="y", activation=_traits.fixed("relu"), cuda=("relu", _no_params))
_Hardtanh = _act("Hardtanh", lambda x, lo, hi: _pointwise("clamp", x, lambda a: np.clip(a, lo, hi), lo, hi),
                 lambda x, g, xp, lo, hi: g * ((x > lo) & (x < hi)), activation=staticmethod(_traits.clamp),
                 cuda=("hardtanh", lambda lo, hi: (lo, hi)))
_LeakyRelu = _act("LeakyRelu", lambda x, s: np.where(x > 0, x, x * s),
                  lambda x, g, xp, s: xp.where(x > 0, g, g * s), cuda=("leaky_relu", lambda s: (s,)))
_Elu = _act("Elu", lambda x, a, sc, isc: np.where(x > 0, x * sc, a * sc * np.expm1(x * isc)),
            lambda x, g, xp, a, sc, isc: xp.where(x > 0, g * sc, g * a * sc * isc * xp.exp(x * isc)),
            cuda=("elu", _elu_params))
_Mish = _act("Mish", lambda x: x * np.tanh(_softplus_np(x, 1.0, 20.0)),
             lambda x, g, xp: g * (xp.tanh(_softplus_np(x, 1.0, 20.0, xp)) + x * xp.sigmoid(x) *
                                   (1 - xp.tanh(_softplus_np(x, 1.0, 20.0, xp)) ** 2)), cuda=("mish", _no_params))
_Hardswish = _act("Hardswish", lambda x: _pointwise("hardswish", x, lambda a: a * np.clip(a + 3, 0, 6) / 6),
                  lambda x, g, xp: g * xp.where(x <= -3, 0, xp.where(x >= 3, 1, (2 * x + 3) / 6)),  # torch's ties
                  activation=_traits.fixed("hardswish"), cuda=("hardswish", _no_params))
_Hardsigmoid = _act("Hardsigmoid", lambda x: _pointwise("hardsigmoid", x, lambda a: np.clip(a + 3, 0, 6) / 6),
                    lambda x, g, xp: g * xp.where((x > -3) & (x < 3), 1.0 / 6, 0),
                    activation=_traits.fixed("hardsigmoid"), cuda=("hardsigmoid", _no_params))
_Softplus = _act("Softplus", _softplus_np,
                 lambda x, g, xp, beta, th: g * xp.where(x * beta > th, 1.0, xp.sigmoid(x * beta)),
                 cuda=("softplus", lambda beta, th: (beta, th)))
_LogSigmoid = _act("LogSigmoid", lambda x: -_softplus_np(-x, 1.0, 20.0), lambda x, g, xp: g * xp.sigmoid(-x),
                   cuda=("logsigmoid", _no_params))
_Softsign = _act("Softsign", lambda x: x / (1 + np.abs(x)), lambda x, g, xp: g / (1 + xp.abs(x)) ** 2)
_Threshold = _act("Threshold", lambda x, th, v: np.where(x > th, x, v), lambda x, g, xp, th, v: g * (x > th))


class _Gelu(Function):
    elementwise = True
    activation = staticmethod(_traits.gelu)

    @staticmethod
    def forward(ctx, x, approximate):
        xk = _kin(x)
        ctx.save_for_backward(xk)
        ctx.approx = approximate
        return _C.gelu_forward(xk, approximate).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approx = approximate
        return ctx.xp.gelu_forward(x, approximate)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return ctx.xp.gelu_backward(_kin(g).astype(x.dtype, copy=False), x, ctx.approx), None


class _Silu(Function):
    elementwise = True
    activation = _traits.fixed("silu")

    @staticmethod
    def forward(ctx, x):
        xk = _kin(x)
        ctx.save_for_backward(xk)
        return _C.silu_forward(xk).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.silu_forward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return (ctx.xp.silu_backward(_kin(g).astype(x.dtype, copy=False), x),)


class _RRelu(Function):
    """Randomized leaky ReLU: x where x > 0, else x * slope (one slope, or one per element while training). One
    forward and one backward over ``ctx.xp`` serve the CPU and CUDA; capture treats it as elementwise."""

    elementwise = True

    @staticmethod
    def forward(ctx, x, slope):
        xp = ctx.xp
        keep = x > 0
        ctx.save_for_backward(keep, slope)
        return xp.where(keep, x, x * slope).astype(x.dtype)

    forward_cuda = forward

    @staticmethod
    def backward(ctx, g):
        keep, slope = ctx.saved
        return ctx.xp.where(keep, g, g * slope).astype(g.dtype), None


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """torch.nn.functional.rrelu: slopes drawn uniformly from [lower, upper] per element while training (on the
    input's device), the mean slope (lower + upper) / 2 otherwise."""
    _check_float(input, "rrelu")
    if not lower <= upper:
        raise ValueError(f"rrelu: lower bound {lower} must not exceed upper bound {upper}")
    if training:
        cd = np.float32 if input._dtype is D.bfloat16 else input._dtype.np
        slope = _const(_rng().uniform(lower, upper, tuple(input.shape)).astype(cd), input._dtype).to(input.device)
    else:
        slope = (lower + upper) / 2.0
    return _maybe_inplace(input, lambda x: _RRelu.apply(x, slope, _dtype=x._dtype), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _maybe_inplace(input, fn, inplace):
    """``fn(input)``, written into ``input`` when ``inplace`` (through the shared in-place mechanism, which
    hands ``fn`` a snapshot when autograd needs the pre-modification values)."""
    if inplace:
        from .._ops.inplace import make_inplace
        return make_inplace(fn)(input)
    return fn(input)


def _pointwise_in_storage(input, kind, lo=0.0, hi=0.0):
    """An in-place activation written straight into the storage in one pass (no temporary, no copy back) when no
    autograd history is needed; None when the general in-place path must run."""
    from ..autograd.grad_mode import is_grad_enabled
    d = input._data
    if (input._device.type != "cpu" or (is_grad_enabled() and input.requires_grad) or d.dtype not in FLOAT_DTYPES
            or not (d.flags.c_contiguous and d.flags.writeable)):
        return None
    _C.pointwise(d, kind, lo, hi, out=d)
    input._version[0] += 1
    return input



def relu(input, inplace=False):
    _check_float(input, "relu") if input._dtype.is_floating_point else None
    if inplace and _pointwise_in_storage(input, "relu") is not None:
        return input
    return _maybe_inplace(input, lambda t: _Relu.apply(t), inplace)


def relu_(input):
    return relu(input, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace and _pointwise_in_storage(input, "clamp", float(min_val), float(max_val)) is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardtanh.apply(t, float(min_val), float(max_val)), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_inplace(input, lambda t: _LeakyRelu.apply(t, float(negative_slope)), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _maybe_inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0), inplace)


def selu(input, inplace=False):
    return _maybe_inplace(input, lambda t: _Elu.apply(t, 1.6732632423543772, 1.0507009873554805, 1.0), inplace)


def celu(input, alpha=1.0, inplace=False):
    return _maybe_inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0 / alpha), inplace)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    _check_float(input, "gelu")
    return _Gelu.apply(input, approximate)


def silu(input, inplace=False):
    _check_float(input, "silu")
    return _maybe_inplace(input, lambda t: _Silu.apply(t), inplace)


def mish(input, inplace=False):
    return _maybe_inplace(input, lambda t: _Mish.apply(t), inplace)


def hardswish(input, inplace=False):
    if inplace and _pointwise_in_storage(input, "hardswish") is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardswish.apply(t), inplace)


def hardsigmoid(input, inplace=False):
    if inplace and _pointwise_in_storage(input, "hardsigmoid") is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardsigmoid.apply(t), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return _Softplus.apply(input, float(beta), float(threshold))


def logsigmoid(input):
    return _LogSigmoid.apply(input)


def softsign(input):
    return _Softsign.apply(input)


def tanhshrink(input):
    return input - E.tanh(input)


def threshold(input, threshold, value, inplace=False):
    return _maybe_inplace(input, lambda t: _Threshold.apply(t, float(threshold), float(value)), inplace)


def sigmoid(input):
    return E.sigmoid(input)


def tanh(input):
    return E.tanh(input)


@_amp.lower_precision
def prelu(input, weight):
    w = weight if weight.numel() == 1 or input.ndim < 2 else S.reshape(weight, (-1,) + (1,) * (input.ndim - 2))
    return E.where(input > 0, input, input * w)


def glu(input, dim=-1):
    a, b = S.chunk(input, 2, dim)
    return a * E.sigmoid(b)


# ------------------------------------------------------------------ softmax
class _Softmax(Function):
    capture_role = "softmax"

    @staticmethod
    def forward(ctx, x, dim, log):
        moved = np.moveaxis(x, dim, -1)
        shp = moved.shape
        x2 = _kin(moved).reshape(-1, shp[-1]) if moved.size else _kin(moved).reshape(0, max(shp[-1], 1))
        y2 = _C.softmax_forward(x2, log) if x2.size else x2.copy()
        y = np.moveaxis(y2.reshape(shp), -1, dim)
        ctx.save_for_backward(y2)
        ctx.args = (dim, log, shp)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, dim, log):
        xp = ctx.xp
        moved = xp.moveaxis(x, dim, -1)
        shp = moved.shape
        y2 = xp.softmax_forward(xp.reshape(moved, [-1, shp[-1]]), log)
        ctx.save_for_backward(y2)
        ctx.args = (dim, log, shp)
        return xp.moveaxis(xp.reshape(y2, shp), -1, dim)

    @staticmethod
    def backward(ctx, g):
        (y2,) = ctx.saved
        dim, log, shp = ctx.args
        xp = ctx.xp
        g2 = _kin(xp.moveaxis(g, dim, -1)).astype(y2.dtype, copy=False).reshape(y2.shape)
        gx = xp.softmax_backward(g2, y2, log) if y2.size else g2
        return xp.moveaxis(gx.reshape(shp), -1, dim), None, None


def _softmax_dim(input, dim):
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return wrap_dim(dim, input.ndim) if input.ndim else 0


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "softmax")
    if input.ndim == 0:
        return _Softmax.apply(S.reshape(input, (1,)), 0, False).reshape(())
    return _Softmax.apply(input, _softmax_dim(input, dim), False)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "log_softmax")
    if input.ndim == 0:
        return _Softmax.apply(S.reshape(input, (1,)), 0, True).reshape(())
    return _Softmax.apply(input, _softmax_dim(input, dim), True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    gumbels = _const(-np.log(_rng().exponential(size=tuple(logits.shape))).astype(logits._compute().dtype),
                     logits._dtype)
    y = softmax((logits + gumbels) / tau, dim)
    if hard:
        idx = R.argmax(y, dim, keepdim=True)
        hard_y = S.scatter(y.detach() * 0, dim, idx, 1.0)
        return hard_y - y.detach() + y
    return y


# ------------------------------------------------------------------ interpolate
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
        y = adaptive_avg_pool2d(x, out)
    else:
        kmode = {"linear": "bilinear"}.get(mode, mode)
        ac = bool(align_corners) if kmode in ("bilinear", "bicubic") else False
        y = _Interpolate.apply(x, out, kmode, ac, None if ac else scales, bool(antialias))
    return S.squeeze(y, 2) if nd == 1 else y


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ padding
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


# ------------------------------------------------------------------ unfold / fold
class _Unfold(Function):
    @staticmethod
    def forward(ctx, x, k, d, p, s):
        ctx.args = (x.shape[2:], k, d, p, s)
        return _C.im2col(_kin(x), k, d, p, s).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        hw, k, d, p, s = ctx.args
        return (_C.col2im(_kin(g), hw, k, d, p, s),)


class _Fold(Function):
    @staticmethod
    def forward(ctx, x, out_hw, k, d, p, s):
        ctx.args = (k, d, p, s)
        return _C.col2im(_kin(x), out_hw, k, d, p, s).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        k, d, p, s = ctx.args
        return (_C.im2col(_kin(g), k, d, p, s),)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    x, unbatched = _batchify(input, 4, "unfold")
    y = _Unfold.apply(x, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    return S.squeeze(y, 0) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    x, unbatched = _batchify(input, 3, "fold")
    y = _Fold.apply(x, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    return S.squeeze(y, 0) if unbatched else y


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


# ------------------------------------------------------------------ embedding / attention / misc
class _Embedding(Function):
    @staticmethod
    def forward(ctx, w, idx, padding_idx):
        ctx.args = (w.shape, idx, padding_idx)
        return w[idx]

    @staticmethod
    def backward(ctx, g):
        shape, idx, padding_idx = ctx.args
        gw = np.zeros(shape, g.dtype)
        np.add.at(gw, idx.reshape(-1), g.reshape(-1, shape[1]))
        if padding_idx is not None:
            gw[padding_idx] = 0
        return gw, None, None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if not isinstance(input, Tensor) or input._dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                           f"Int; but got {getattr(input, 'dtype', type(input).__name__)} instead")
    idx = input._data.astype(np.int64, copy=False)
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"embedding(): index out of range: indices must be in [0, {n}), got min {idx.min()} max "
                         f"{idx.max()}")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            wr = weight._data[rows].astype(np.float64)
            norms = np.linalg.norm(wr, ord=norm_type, axis=1, keepdims=True)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] = (wr * scale).astype(weight._data.dtype)
    return _Embedding.apply(weight, idx, padding_idx)


@_amp.lower_precision
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)} and key {list(key.shape)} must "
                           "have the same embedding dimension")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key {list(key.shape)} and value {list(value.shape)} must "
                           "have the same sequence length")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    from .._ops.attention import ScaledDotProductAttention, fused_sdpa_supported
    if (dropout_p == 0.0 and not enable_gqa and (attn_mask is None or isinstance(attn_mask, Tensor))
            and fused_sdpa_supported(query, key, value, attn_mask)):
        # float32 on the CPU: one fused kernel over the strided views (float64/16, dropout, GQA, CUDA: below)
        return ScaledDotProductAttention.apply(query, key, value, attn_mask, scale=scale, is_causal=is_causal)
    if enable_gqa and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = S.repeat_interleave(key, rep, dim=-3)
        value = S.repeat_interleave(value, rep, dim=-3)
    L_, S_ = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = L.matmul(query * sc, S.transpose(key, -2, -1))
    if is_causal:
        causal = Tensor._wrap(np.tril(np.ones((L_, S_), bool)))
        scores = E.masked_fill(scores, E.logical_not(causal), float("-inf"))
    if attn_mask is not None:
        if attn_mask._dtype is D.bool:
            scores = E.masked_fill(scores, E.logical_not(S.expand(attn_mask, tuple(scores.shape))
                                                         if tuple(attn_mask.shape) != tuple(scores.shape) else attn_mask),
                                   float("-inf"))
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return L.matmul(attn, value)


def one_hot(tensor, num_classes=-1):
    if not isinstance(tensor, Tensor) or tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._data
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}) and non-negative")
    out = np.zeros(idx.shape + (num_classes,), np.int64)
    np.put_along_axis(out, idx[..., None], 1, axis=-1)
    return Tensor._wrap(out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    dot_ = R.sum(x1 * x2, dim)
    n1 = R.norm(x1, 2, dim)
    n2 = R.norm(x2, 2, dim)
    return dot_ / (E.clamp_min(n1, eps) * E.clamp_min(n2, eps))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return R.norm(x1 - x2 + eps, p, -1, keepdim)


# ------------------------------------------------------------------ losses
def _reduce(loss, reduction):
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_target_shape(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{name}: Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(input.shape)}) is not supported. Please ensure they have the same size.")


class _NllPick(Function):
    """-input[n, index[n, ...], ...] * weight[n, ...]: the per-element negative log-likelihood of class indices."""

    @staticmethod
    def forward(ctx, x, index, weight):
        ctx.args = (x.shape, index, weight)
        return -np.squeeze(np.take_along_axis(x, np.expand_dims(index, 1), axis=1), 1) * weight

    @staticmethod
    def forward_cuda(ctx, x, index, weight):
        xp = ctx.xp
        ctx.args = (x.shape, index, weight)
        classes = xp.reshape(xp.arange(x.shape[1]), [x.shape[1] if i == 1 else 1 for i in range(x.ndim)])
        picked = xp.sum(xp.where(xp.equal(classes, xp.expand_dims(index, 1)), x, 0), axis=1)
        return -picked * weight

    @staticmethod
    def backward(ctx, g):
        shape, index, weight = ctx.args
        xp = ctx.xp
        return (xp.put_along_axis_zeros(shape, xp.expand_dims(index, 1), xp.expand_dims(-g * weight, 1), 1),)


@_amp.fp32
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError("nll_loss(): input must have at least one dimension")
    if target._dtype.is_floating_point:
        raise RuntimeError(f"nll_loss(): expected target of integer class indices, got {target._dtype}")
    unbatched = input.ndim == 1
    if unbatched:
        input, target = S.unsqueeze(input, 0), S.unsqueeze(target, 0)
    n, c = input.shape[0], input.shape[1]
    if target.shape[0] != n or tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({target.shape[0]}); input "
                         f"{list(input.shape)}, target {list(target.shape)}")
    t = target._data.astype(np.int64)
    xp = namespace(t)
    valid = t != ignore_index
    if (valid & ((t < 0) | (t >= c))).any():
        th = target.cpu()._data.astype(np.int64)
        bad = th[(th != ignore_index) & ((th < 0) | (th >= c))][0]
        raise IndexError(f"Target {bad} is out of bounds (number of classes {c}).")
    safe = xp.where(valid, t, 0)
    cdt = _array(input).dtype
    w = xp.ones(c, cdt) if weight is None else _array(weight)
    wt_np = (xp.take(w, safe) * valid).astype(cdt)
    loss = _NllPick.apply(input, index=safe, weight=wt_np)
    if reduction == "none":
        return S.squeeze(loss, 0) if unbatched else loss
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "mean":
        total = float(wt_np.sum())
        if total == 0:  # every target ignored: torch gives a NaN loss but zero (not NaN) gradients
            return R.sum(loss) * 0.0 + float("nan")
        return R.sum(loss) / total
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_amp.fp32
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float(input, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if target._dtype.is_floating_point:  # class probabilities
        _check_target_shape(input, target, "cross_entropy")
        tgt = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
        prod_ = logp * tgt
        if weight is not None:
            wshape = (c,) + (1,) * (input.ndim - class_dim - 1)
            prod_ = prod_ * S.reshape(weight, wshape)
        loss = -R.sum(prod_, class_dim)
        if reduction == "mean":
            return R.sum(loss) / (input.numel() // c) if input.ndim > 1 else loss
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore = E.eq(target, ignore_index)
    if weight is not None:
        wshape = (c,) + (1,) * (input.ndim - class_dim - 1)
        smooth = -R.sum(logp * S.reshape(weight, wshape), class_dim)
    else:
        smooth = -R.sum(logp, class_dim)
    smooth = E.masked_fill(smooth, ignore, 0.0)
    if reduction == "mean":
        t = target._data.astype(np.int64)
        xp = namespace(t)
        valid = t != ignore_index
        if weight is not None:
            denom = (xp.take(_array(weight), xp.where(valid, t, 0)) * valid).sum()
        else:
            denom = valid.sum()
        ret = R.sum(smooth) / float(denom)
    elif reduction == "sum":
        ret = R.sum(smooth)
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


@_amp.fp32
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_target_shape(input, target, "mse_loss")
    d = input - target
    return _reduce(d * d, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_target_shape(input, target, "l1_loss")
    return _reduce(E.abs(input - target), _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_target_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = E.abs(input - target)
    if beta == 0:
        loss = d
    else:
        loss = E.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_target_shape(input, target, "huber_loss")
    d = E.abs(input - target)
    loss = E.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction)


class _BCE(Function):
    """Elementwise binary cross-entropy with torch's formulas: the logs are clamped at -100 (finite losses at
    0 and 1) and d/dx = (x - t) / max(x (1 - x), 1e-12) (finite gradients there too)."""

    @staticmethod
    def forward(ctx, x, t):
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(x), -100.0)
            log_1mx = np.maximum(np.log(1 - x), -100.0)
        ctx.save_for_backward(x, t)
        return (-(t * log_x + (1 - t) * log_1mx)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved
        gx = g * (x - t) / np.maximum((1 - x) * x, 1e-12) if ctx.needs_input_grad[0] else None
        gt = None
        if ctx.needs_input_grad[1]:  # like torch, the target gradient uses the unclamped logs
            with np.errstate(divide="ignore", invalid="ignore"):
                gt = g * (np.log(1 - x) - np.log(x))
        return gx, gt


@_amp.fp32
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _check_target_shape(input, target, "binary_cross_entropy")
    x = input._compute()
    if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = _BCE.apply(input, target, _dtype=D.result_type(input, target))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    _check_target_shape(input, target, "binary_cross_entropy_with_logits")
    # (1 - t) * x + (1 + (pw - 1) * t) * log(1 + exp(-x)), written stably with softplus(-x)
    sp = E.log1p(E.exp(-E.abs(input))) + E.clamp_min(-input, 0)
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if log_target:
        loss = E.exp(target) * (target - input)
    else:
        t = target._compute()
        safe_log = _const(np.where(t > 0, np.log(np.where(t > 0, t, 1)), 0).astype(t.dtype), target._dtype)
        loss = target * (safe_log - input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "batchmean":
        return R.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, reduction="mean"):
    return _reduce(E.log1p(E.exp(-target * input)), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    return _reduce(E.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    cos = cosine_similarity(input1, input2, 1)
    loss = E.where(target > 0, 1 - cos, E.clamp_min(cos - margin, 0))
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = E.exp(input) - target * input if log_input else input - target * E.log(input + eps)
    return _reduce(loss, reduction)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return E.where(input > lambd, input - lambd, E.where(input < -lambd, input + lambd, input * 0))


def hardshrink(input, lambd=0.5):
    return E.where(E.abs(input) > lambd, input, input * 0)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    nshape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(nshape):]) != nshape:
        raise RuntimeError(f"Given normalized_shape={list(nshape)}, expected input with shape [*, "
                           f"{', '.join(map(str, nshape))}], but got input of size{list(input.shape)}")
    dims = tuple(range(input.ndim - len(nshape), input.ndim))
    if eps is None:
        eps = float(np.finfo(input._compute().dtype).eps)
    out = input * E.rsqrt(R.mean(input * input, dims, keepdim=True) + eps)
    return out * weight if weight is not None else out
