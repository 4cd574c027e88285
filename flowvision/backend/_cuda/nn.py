"""CUDA twins of the nn.functional ops (conv, pooling, norms, softmax, activations, interpolate) and the functions that the CPU code's hooks call for CUDA inputs (linear, batch_norm)."""
import numpy as np

from .. import _dtype as D
from ..autograd.graph import Function
from ..nn import functional as F
from . import arrays as A
from .dispatch import register, wrap
from .ops import _allow_tf32
from .runtime import C


def _f32(a):
    return None if a is None else (a if a.dtype == "float32" else C().cast(a, "float32"))


def _bias_grad(g, dims):
    return A.reduce_dims("sum", g, dims)[0]


# ------------------------------------------------------------------------------- conv / linear
@register(F.Conv2d)
class Conv2d:
    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, groups):
        ctx.save_for_backward(x, w)
        ctx.args = (list(stride), list(padding), list(dilation), int(groups), b is not None)
        return C().conv2d_forward(x, w, b, list(stride), list(padding), list(dilation), int(groups), _allow_tf32())

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        s, p, d, groups, has_b = ctx.args
        need = ctx.needs_input_grad
        g32 = _f32(g)
        gx = C().conv2d_backward_data(g32, _f32(w), list(x.shape), s, p, d, groups, _allow_tf32()) if need[0] else None
        gw = C().conv2d_backward_weight(g32, _f32(x), list(w.shape), s, p, d, groups, _allow_tf32()) if need[1] else None
        gb = _bias_grad(g32, [0, 2, 3]) if has_b and need[2] else None
        return gx, gw, gb, None, None, None, None


class Linear(Function):
    """y = x @ w.T + b: the CPU path composes matmul and add; on CUDA it is one GEMM with the bias in
    the epilogue (and the op autocast lowers)."""


@register(Linear)
class LinearTwin:
    @staticmethod
    def forward(ctx, x, w, b):
        k = x.shape[-1]
        x2 = A.reshape(x, [-1, k])
        ctx.save_for_backward(x2, w)
        ctx.args = (list(x.shape), b is not None)
        y = C().matmul(x2, w, b, False, True, 1.0, _allow_tf32())
        return C().reshape(y, list(x.shape[:-1]) + [w.shape[0]])

    @staticmethod
    def backward(ctx, g):
        x2, w = ctx.saved
        shape, has_b = ctx.args
        need = ctx.needs_input_grad
        g2 = A.reshape(g, [-1, w.shape[0]])
        gx = C().reshape(C().matmul(g2, w, None, False, False, 1.0, _allow_tf32()), shape) if need[0] else None
        gw = C().matmul(g2, x2, None, True, False, 1.0, _allow_tf32()) if need[1] else None
        gb = _bias_grad(g2, [0]) if has_b and need[2] else None
        return gx, gw, gb


def linear(input, weight, bias=None):
    return Linear.apply(input, weight, bias)


# ------------------------------------------------------------------------------- pooling
@register(F.MaxPool2d)
class MaxPool2d:
    @staticmethod
    def forward(ctx, x, k, s, p, d, ceil_mode):
        oh, ow = (F._pool_out(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2))
        y, idx = C().max_pool2d_forward(x, oh, ow, list(k), list(s), list(p), list(d), True)
        ctx.args = (list(x.shape), idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi=None):
        shape, idx = ctx.args
        return (C().max_pool2d_backward(_f32(g), idx, shape),) + (None,) * 5


@register(F.AvgPool2d)
class AvgPool2d:
    @staticmethod
    def forward(ctx, x, k, s, p, ceil_mode, cip, div):
        oh, ow = (F._pool_out(x.shape[2 + i], k[i], s[i], p[i], 1, ceil_mode) for i in range(2))
        ctx.args = (list(x.shape), list(k), list(s), list(p), bool(cip), int(div or 0))
        return C().avg_pool2d_forward(x, oh, ow, list(k), list(s), list(p), bool(cip), int(div or 0))

    @staticmethod
    def backward(ctx, g):
        shape, k, s, p, cip, div = ctx.args
        return (C().avg_pool2d_backward(_f32(g), shape, k, s, p, cip, div),) + (None,) * 6


@register(F.AdaptiveAvgPool2d)
class AdaptiveAvgPool2d:
    @staticmethod
    def forward(ctx, x, o):
        ctx.shape = list(x.shape)
        return C().adaptive_avg_pool2d_forward(x, int(o[0]), int(o[1]))

    @staticmethod
    def backward(ctx, g):
        return C().adaptive_avg_pool2d_backward(_f32(g), ctx.shape), None


@register(F.AdaptiveMaxPool2d)
class AdaptiveMaxPool2d:
    @staticmethod
    def forward(ctx, x, o):
        y, idx = C().adaptive_max_pool2d_forward(x, int(o[0]), int(o[1]))
        ctx.args = (list(x.shape), idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi=None):
        shape, idx = ctx.args
        return C().max_pool2d_backward(_f32(g), idx, shape), None


# ------------------------------------------------------------------------------- normalisation
@register(F.BatchNormTrain)
class BatchNormTrain:
    """Returns (y, mean, invstd, unbiased var): the last one feeds the running-variance update."""

    @staticmethod
    def forward(ctx, x, w, b, eps):
        y, mean, invstd, var = C().batch_norm_forward(x, None, None, _f32(w), _f32(b), True, float(eps))
        ctx.save_for_backward(x, w)
        ctx.args = (mean, invstd, b is not None)
        return y, mean, invstd, var

    @staticmethod
    def backward(ctx, g, *_):
        x, w = ctx.saved
        mean, invstd, has_b = ctx.args
        gx, gw, gb = C().batch_norm_backward(g, x, mean, invstd, _f32(w), True)
        need = ctx.needs_input_grad
        return gx, (gw if w is not None and need[1] else None), (gb if has_b and need[2] else None), None


@register(F.BatchNormEval)
class BatchNormEval:
    @staticmethod
    def forward(ctx, x, rm, rv, w, b, eps):
        y, mean, invstd, _ = C().batch_norm_forward(x, _f32(rm), _f32(rv), _f32(w), _f32(b), False, float(eps))
        ctx.save_for_backward(x, w)
        ctx.args = (mean, invstd, b is not None)
        return y

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        mean, invstd, has_b = ctx.args
        gx, gw, gb = C().batch_norm_backward(g, x, mean, invstd, _f32(w), False)
        need = ctx.needs_input_grad
        return gx, None, None, (gw if w is not None and need[3] else None), (gb if has_b and need[4] else None), None


def _ema_(stat, new, momentum):
    """running <- (1 - momentum) * running + momentum * new, on the device, in the statistic's dtype."""
    cur = _f32(stat._data)
    upd = A.bop("add", A.bop("mul", cur, 1.0 - momentum), A.bop("mul", new, float(momentum)))
    stat._data = upd if stat._dtype is D.float32 else C().cast(upd, stat._dtype.name)
    stat._version[0] += 1


def batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """F.batch_norm for CUDA inputs (called by the hook in nn/functional.py after its argument checks)."""
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
        y, mean, _invstd, var = F.BatchNormTrain.apply(input, weight, bias, eps)
        if running_mean is not None and running_var is not None:
            if momentum is None:
                raise NotImplementedError("batch_norm(momentum=None) (cumulative average) is not implemented on CUDA")
            _ema_(running_mean, mean._data, momentum)
            _ema_(running_var, var._data, momentum)
        return y
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm(): running_mean and running_var must be given when training=False")
    return F.BatchNormEval.apply(input, running_mean, running_var, weight, bias, eps)


@register(F.LayerNorm)
class LayerNorm:
    @staticmethod
    def forward(ctx, x, w, b, nshape, eps):
        cols = A.prod(nshape) if nshape else 1
        wf = None if w is None else C().reshape(_f32(w), [cols])
        bf = None if b is None else C().reshape(_f32(b), [cols])
        y, mean, rstd = C().layer_norm_forward(x, cols, wf, bf, float(eps))
        ctx.save_for_backward(x, wf)
        ctx.args = (mean, rstd, list(nshape), cols, b is not None)
        return y

    @staticmethod
    def backward(ctx, g):
        x, wf = ctx.saved
        mean, rstd, nshape, cols, has_b = ctx.args
        need = ctx.needs_input_grad
        gx, gw, gb = C().layer_norm_backward(g, x, wf, mean, rstd, cols, bool(need[0]),
                                             wf is not None and bool(need[1]), has_b and bool(need[2]))
        gw = None if gw is None else C().reshape(gw, nshape)
        gb = None if gb is None else C().reshape(gb, nshape)
        return gx, gw, gb, None, None


@register(F.GroupNorm)
class GroupNorm:
    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        y, mean, rstd = C().group_norm_forward(x, int(groups), _f32(w), _f32(b), float(eps))
        ctx.save_for_backward(x, _f32(w))
        ctx.args = (mean, rstd, int(groups), b is not None)
        return y

    @staticmethod
    def backward(ctx, g):
        x, wf = ctx.saved
        mean, rstd, groups, has_b = ctx.args
        need = ctx.needs_input_grad
        gx, gw, gb = C().group_norm_backward(g, x, wf, mean, rstd, groups, bool(need[0]),
                                             wf is not None and bool(need[1]), has_b and bool(need[2]))
        return gx, gw, gb, None, None


# ------------------------------------------------------------------------------- softmax
def _odi(shape, dim):
    dim = dim % len(shape)
    return A.prod(shape[:dim]), shape[dim], A.prod(shape[dim + 1:])


@register(F._Softmax)
class Softmax:
    @staticmethod
    def forward(ctx, x, dim, log):
        o, d, i = _odi(list(x.shape), dim)
        y = C().softmax_forward(x, o, d, i, bool(log))
        ctx.save_for_backward(y)
        ctx.args = (o, d, i, bool(log))
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved
        o, d, i, log = ctx.args
        if g.dtype != y.dtype:
            g = C().cast(g, y.dtype)
        return C().softmax_backward(g, y, o, d, i, log), None, None


# ------------------------------------------------------------------------------- activations
def _act_twin(op, params_to_args=None, saves="x"):
    """Twin of a functional._act class: forward(x, *params) -> unary kernel ``op``."""

    class Act:
        @staticmethod
        def forward(ctx, x, *params):
            p = params_to_args(*params) if params_to_args else ()
            y = A.uop(op, x, *p)
            ctx.save_for_backward(x, y)
            ctx.p, ctx.n = p, len(params)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved
            return (A.ubwd(op, g, x, y, *ctx.p),) + (None,) * ctx.n

    Act.__name__ = op
    return Act


def _elu_params(alpha, scale=1.0, input_scale=1.0):
    if scale != 1.0 or input_scale != 1.0:
        raise NotImplementedError("elu with scale/input_scale != 1 (selu, celu) is not implemented on CUDA yet")
    return (alpha,)


register("Relu")(_act_twin("relu"))
register("Hardtanh")(_act_twin("hardtanh", lambda lo, hi: (lo, hi)))
register("LeakyRelu")(_act_twin("leaky_relu", lambda s: (s,)))
register("Elu")(_act_twin("elu", _elu_params))
register("Mish")(_act_twin("mish"))
register("Hardswish")(_act_twin("hardswish"))
register("Hardsigmoid")(_act_twin("hardsigmoid"))
register("Softplus")(_act_twin("softplus", lambda beta, thr: (beta, thr)))
register("LogSigmoid")(_act_twin("logsigmoid"))


@register(F._Gelu)
class Gelu:
    @staticmethod
    def forward(ctx, x, approximate):
        op = "gelu_tanh" if approximate == "tanh" else "gelu"
        ctx.save_for_backward(x)
        ctx.op = op
        return A.uop(op, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return A.ubwd(ctx.op, g, x), None


@register(F._Silu)
class Silu:
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return A.uop("silu", x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return (A.ubwd("silu", g, x),)


# ------------------------------------------------------------------------------- interpolate
def _interp_scales(in_hw, out_hw, align_corners, scale):
    out = []
    for i in range(2):
        if align_corners:
            out.append((in_hw[i] - 1) / (out_hw[i] - 1) if out_hw[i] > 1 else 0.0)
        elif scale is not None and scale[i] is not None and scale[i] > 0:
            out.append(1.0 / scale[i])
        else:
            out.append(in_hw[i] / out_hw[i])
    return out


@register(F._Interpolate)
class Interpolate:
    @staticmethod
    def forward(ctx, x, out_hw, mode, align_corners, scale, antialias):
        if antialias or mode not in ("nearest", "nearest-exact", "bilinear"):
            raise NotImplementedError(f"interpolate(mode={mode!r}, antialias={antialias}) is not implemented on CUDA "
                                      "yet (nearest, nearest-exact and bilinear are)")
        sh, sw = _interp_scales(x.shape[2:], out_hw, align_corners, scale)
        ctx.args = (list(x.shape), mode, bool(align_corners), sh, sw)
        return C().upsample_forward(x, int(out_hw[0]), int(out_hw[1]), mode, bool(align_corners), sh, sw)

    @staticmethod
    def backward(ctx, g):
        shape, mode, ac, sh, sw = ctx.args
        return (C().upsample_backward(_f32(g), shape, mode, ac, sh, sw),) + (None,) * 5


# ------------------------------------------------------------------------------- detection ops
def nms(boxes, scores, iou_threshold):
    """Greedy NMS of CUDA tensors (IoU bitmask on the device); returns int64 indices by decreasing score."""
    keep = C().nms(_f32(boxes.detach()._data), _f32(scores.detach()._data), float(iou_threshold))
    return wrap(keep, D.int64)


# ------------------------------------------------------------------------------- losses
def cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    """F.cross_entropy with integer class targets on CUDA: one-hot selection of log_softmax on the device
    (the CPU path's nll_loss indexes with numpy)."""
    nd = input.ndim
    class_dim = 0 if nd == 1 else 1
    c = input.shape[class_dim]
    logp = F.log_softmax(input, class_dim)
    tgt = A.ensure(target._data, "int64")
    oshape = [c if i == class_dim else 1 for i in range(nd)]
    classes = C().reshape(C().from_host(np.arange(c, dtype=np.int64), "int64"), oshape)
    tshape = list(target.shape)
    tshape.insert(class_dim, 1)
    onehot = wrap(C().cast(A.bop("eq", classes, C().reshape(tgt, tshape)), logp._dtype.name), logp._dtype)
    valid = wrap(C().cast(A.bop("ne", tgt, int(ignore_index)), logp._dtype.name), logp._dtype)
    w = None
    if weight is not None:
        w = weight.reshape(*oshape) if nd > 1 else weight
        if not w.is_cuda:
            w = w.cuda()
    picked = logp * onehot if w is None else logp * onehot * w
    per = -picked.sum(class_dim) * valid
    tw = valid if w is None else (onehot * w).sum(class_dim) * valid
    if label_smoothing > 0:
        smooth = -(logp if w is None else logp * w).sum(class_dim) * valid
        per = per * (1.0 - label_smoothing) + smooth * (label_smoothing / c)
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    return per.sum() / tw.sum()
