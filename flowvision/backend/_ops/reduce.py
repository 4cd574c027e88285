"""Reductions, scans, sorting and top-k."""
import builtins as _b
from collections import namedtuple

import numpy as np

from .. import _autocast_policy as _amp
from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.graph import Function
from ._util import wrap_dims, wrap_dim, float_result

ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])
VarMean = namedtuple("VarMean", ["var", "mean"])


def _expand_grad(g, in_shape, dims, keepdim, xp=np):
    if not keepdim:
        g = xp.expand_dims(g, dims) if dims else g
    return xp.broadcast_to(g, in_shape)


def _acc(x):
    """float16 is reduced in float32 like torch (which accumulates half types in float); results are cast back."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _mean(x, dims, keepdim, dtype):
    """np.mean without its 'Mean of empty slice' warning: an empty reduction is NaN, as in torch."""
    if _count(x.shape, dims) == 0:
        return np.full(np.sum(x, axis=dims, keepdims=keepdim).shape, np.nan, dtype)
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=dtype)


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.args = (x.shape, dims, keepdim)
        return np.asarray(np.sum(_acc(x), axis=dims, keepdims=keepdim)).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, dims, keepdim):
        ctx.args = (x.shape, dims, keepdim)
        return ctx.xp.sum(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        shp, dims, keepdim = ctx.args
        return (_expand_grad(g, shp, dims, keepdim, ctx.xp),)


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    dims = wrap_dims(dim, input.ndim)
    if dtype is not None:
        rd = D.as_dtype(dtype)
    elif input._dtype.category < 2:
        rd = D.int64  # torch sums integers and bools in int64
    else:
        rd = input._dtype
    return Sum.apply(input, dims, keepdim, _dtype=rd)


class Mean(Function):
    capture_role = "mean"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.args = (x.shape, dims, keepdim)
        return _mean(x, dims, keepdim, x.dtype if x.dtype != np.float16 else np.float32).astype(x.dtype)

    @staticmethod
    def forward_cuda(ctx, x, dims, keepdim):
        ctx.args = (x.shape, dims, keepdim)
        return ctx.xp.mean(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        shp, dims, keepdim = ctx.args
        n = _count(shp, dims)
        xp = ctx.xp
        return (_expand_grad(g / _b.max(n, 1), shp, dims, keepdim, xp) if n else xp.zeros(shp, g.dtype),)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    rd = D.as_dtype(dtype) if dtype is not None else input._dtype
    if not (rd.is_floating_point or rd.is_complex):
        raise NotImplementedError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {input._dtype.name}")
    return Mean.apply(input, wrap_dims(dim, input.ndim), keepdim, _dtype=rd)


def nansum(input, dim=None, keepdim=False):
    from .elementwise import where, isnan
    return sum(where(isnan(input), 0.0, input), dim, keepdim)


def nanmean(input, dim=None, keepdim=False):
    from .elementwise import isnan, logical_not
    return nansum(input, dim, keepdim) / sum(logical_not(isnan(input)), dim, keepdim)


class Var(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, take_sqrt):
        dt = x.dtype
        x = _acc(x)
        n = _count(x.shape, dims)
        m = _mean(x, dims, True, x.dtype)
        dev = x - m
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.sum(dev * dev, axis=dims, keepdims=keepdim) / _b.max(n - correction, 0)
        out = np.sqrt(v) if take_sqrt else v
        ctx.save_for_backward(dev, out)
        ctx.args = (x.shape, dims, correction, keepdim, take_sqrt, n, dt)
        return out.astype(dt)

    @staticmethod
    def backward(ctx, g):
        dev, out = ctx.saved
        shp, dims, correction, keepdim, take_sqrt, n, dt = ctx.args
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = 2.0 / _b.max(n - correction, 0) if n - correction > 0 else np.inf
            if take_sqrt:
                gg = np.where(out == 0, 0, g / (2 * out)) if np.ndim(out) else (0 * g if out == 0 else g / (2 * out))
            else:
                gg = g
            return ((_expand_grad(gg, shp, dims, keepdim) * dev * scale).astype(dt),)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(dim, unbiased, correction):
    if isinstance(dim, bool):  # var(x, False)
        return None, dim, correction
    return dim, unbiased, correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, unbiased, correction = _var_args(dim, unbiased, correction)
    _require_float(input, "var")
    return Var.apply(input, wrap_dims(dim, input.ndim), _correction(unbiased, correction), keepdim, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, unbiased, correction = _var_args(dim, unbiased, correction)
    _require_float(input, "std")
    return Var.apply(input, wrap_dims(dim, input.ndim), _correction(unbiased, correction), keepdim, True)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return VarMean(var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return VarMean(std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


def _require_float(t, name):
    if not t._dtype.is_floating_point:
        raise RuntimeError(f"{name}(): input dtype should be floating point, got {t._dtype.name}")


class ExtremeAll(Function):
    """max()/min()/amax/amin: ties share the gradient evenly, like torch."""

    @staticmethod
    def forward(ctx, x, dims, keepdim, is_max):
        if x.size == 0 or _b.any(x.shape[d] == 0 for d in dims):
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        out = (np.max if is_max else np.min)(x, axis=dims, keepdims=keepdim)
        ctx.save_for_backward(x, out)
        ctx.args = (dims, keepdim)
        return out

    @staticmethod
    def forward_cuda(ctx, x, dims, keepdim, is_max):
        xp = ctx.xp
        out = (xp.amax if is_max else xp.amin)(x, axis=dims, keepdims=keepdim)
        ctx.save_for_backward(x, out)
        ctx.args = (dims, keepdim)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved
        dims, keepdim = ctx.args
        xp = ctx.xp
        o = _expand_grad(out, x.shape, dims, keepdim, xp)
        mask = (x == o)
        cnt = xp.sum(mask, axis=dims, keepdims=True)
        gg = _expand_grad(g, x.shape, dims, keepdim, xp)
        return ((gg * mask / cnt).astype(g.dtype),)


class ExtremeDim(Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim, is_max):
        if x.shape[dim] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {dim} to have non-zero size.")
        if np.issubdtype(x.dtype, np.floating) and np.isnan(x).any():
            idx = (np.nanargmax if is_max else np.nanargmin)(np.where(np.isnan(x), -np.inf if is_max else np.inf, x), axis=dim)
            nan_first = np.argmax(np.isnan(x), axis=dim)
            idx = np.where(np.isnan(x).any(axis=dim), nan_first, idx)
        else:
            idx = (np.argmax if is_max else np.argmin)(x, axis=dim)
        vals = np.take_along_axis(x, np.expand_dims(idx, dim), axis=dim)
        ctx.args = (x.shape, dim, keepdim, idx)
        if not keepdim:
            vals = np.squeeze(vals, dim)
        else:
            idx = np.expand_dims(idx, dim)
        return vals, idx.astype(np.int64)

    @staticmethod
    def forward_cuda(ctx, x, dim, keepdim, is_max):
        xp = ctx.xp
        vals, idx = xp.argreduce(x, dim, is_max)
        ctx.args = (x.shape, dim, keepdim, idx)
        if keepdim:
            vals, idx = xp.expand_dims(vals, dim), xp.expand_dims(idx, dim)
        return vals, idx

    @staticmethod
    def backward(ctx, g, gi):
        shp, dim, keepdim, idx = ctx.args
        xp = ctx.xp
        if keepdim:
            g = xp.squeeze(g, dim)
        return (xp.put_along_axis_zeros(shp, xp.expand_dims(idx, dim), xp.expand_dims(g, dim), dim),)


def _extreme(input, dim, keepdim, is_max, other=None):
    from .elementwise import maximum, minimum
    if isinstance(dim, Tensor):
        return (maximum if is_max else minimum)(input, dim)
    if dim is None:
        return ExtremeAll.apply(input, tuple(range(input.ndim)), False, is_max)
    v, i = ExtremeDim.apply(input, wrap_dim(dim, input.ndim), keepdim, is_max)
    return ValuesIndices(v, i)


def max(input, dim=None, keepdim=False):  # noqa: A001
    return _extreme(input, dim, keepdim, True)


def min(input, dim=None, keepdim=False):  # noqa: A001
    return _extreme(input, dim, keepdim, False)


def amax(input, dim=(), keepdim=False):
    dims = wrap_dims(None if dim == () else dim, input.ndim)
    return ExtremeAll.apply(input, dims, keepdim, True)


def amin(input, dim=(), keepdim=False):
    dims = wrap_dims(None if dim == () else dim, input.ndim)
    return ExtremeAll.apply(input, dims, keepdim, False)


def aminmax(input, *, dim=None, keepdim=False):
    return namedtuple("aminmax", ["min", "max"])(amin(input, () if dim is None else dim, keepdim),
                                                 amax(input, () if dim is None else dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    if dim is None:
        return Tensor._wrap(np.asarray(np.argmax(input._compute()), np.int64).reshape((1,) * input.ndim if keepdim else ()))
    return max(input, dim, keepdim).indices


def argmin(input, dim=None, keepdim=False):
    if dim is None:
        return Tensor._wrap(np.asarray(np.argmin(input._compute()), np.int64).reshape((1,) * input.ndim if keepdim else ()))
    return min(input, dim, keepdim).indices


class Prod(Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.save_for_backward(x)
        ctx.args = (dim, keepdim)
        if dim is None:
            return np.prod(x)
        return np.prod(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        dim, keepdim = ctx.args
        if dim is None:
            flat = x.reshape(-1)
            return ((_prod_others(flat, 0) * g).reshape(x.shape),)
        if not keepdim:
            g = np.expand_dims(g, dim)
        return (_prod_others(x, dim) * g,)


def _prod_others(x, axis):
    """Product of all other elements along ``axis`` (exact with zeros): exclusive cumprods both ways."""
    n = x.shape[axis]
    ones = np.ones_like(np.take(x, [0], axis=axis))
    left = np.concatenate([ones, np.cumprod(np.take(x, range(n - 1), axis=axis), axis=axis)], axis=axis) if n > 1 else ones
    rev = np.flip(x, axis)
    right = np.concatenate([ones, np.cumprod(np.take(rev, range(n - 1), axis=axis), axis=axis)], axis=axis) if n > 1 else ones
    return left * np.flip(right, axis)


@_amp.fp32
def prod(input, dim=None, keepdim=False, *, dtype=None):
    rd = D.as_dtype(dtype) if dtype is not None else (D.int64 if input._dtype.category < 2 else input._dtype)
    return Prod.apply(input, None if dim is None else wrap_dim(dim, input.ndim), keepdim, _dtype=rd)


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return np.cumsum(_acc(x), axis=dim).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        return (np.flip(np.cumsum(np.flip(g, d), axis=d), d),)


def cumsum(input, dim, *, dtype=None):
    rd = D.as_dtype(dtype) if dtype is not None else (D.int64 if input._dtype.category < 2 else input._dtype)
    return Cumsum.apply(input, wrap_dim(dim, input.ndim), _dtype=rd)


class Cumprod(Function):
    @staticmethod
    def forward(ctx, x, dim):
        out = np.cumprod(_acc(x), axis=dim).astype(x.dtype, copy=False)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved
        d = ctx.dim
        if x.shape[d] == 0:
            return (np.zeros_like(g),)
        # exact with zeros: before a slice's first zero the usual sum_{j>=i} g_j out_j / x_i is safe; at the
        # first zero z it is sum_{j>=z} g_j prod_{k<=j, k!=z} x_k; after it every term contains x_z == 0
        xm, gm, om = (np.moveaxis(a, d, -1) for a in (x, g, out))
        n = xm.shape[-1]
        is_zero = xm == 0
        first = np.where(is_zero.any(-1), is_zero.argmax(-1), n)[..., None]
        pos = np.arange(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            rev = np.flip(np.cumsum(np.flip(gm * om, -1), -1), -1)
            gx = np.where(pos < first, rev / np.where(xm == 0, 1, xm), 0)
        x_skip = np.where(pos == first, 1, xm)  # the first zero replaced by one
        at_zero = np.flip(np.cumsum(np.flip(gm * np.cumprod(x_skip, -1) * (pos >= first), -1), -1), -1)
        gx = np.where(pos == first, at_zero, gx).astype(g.dtype)
        return (np.moveaxis(gx, -1, d),)


def cumprod(input, dim, *, dtype=None):
    rd = D.as_dtype(dtype) if dtype is not None else (D.int64 if input._dtype.category < 2 else input._dtype)
    return Cumprod.apply(input, wrap_dim(dim, input.ndim), _dtype=rd)


class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        dt = x.dtype
        x = _acc(x)
        m = np.max(x, axis=dims, keepdims=True) if x.size else np.zeros([1] * x.ndim, x.dtype)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            s = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
        ctx.save_for_backward(x, s)
        ctx.args = (dims, keepdim, dt)
        return (s if keepdim else np.squeeze(s, dims)).astype(dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved
        dims, keepdim, dt = ctx.args
        if not keepdim:
            g = np.expand_dims(g, dims)
        with np.errstate(invalid="ignore", over="ignore"):
            return ((g * np.exp(x - s)).astype(dt, copy=False),)


def logsumexp(input, dim, keepdim=False):
    return LogSumExp.apply(input, wrap_dims(dim, input.ndim), keepdim, _dtype=float_result(input))


class Norm(Function):
    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        dt = x.dtype
        x = _acc(x)
        a = np.abs(x)
        if p == np.inf:
            out = np.max(a, axis=dims, keepdims=keepdim)
        elif p == -np.inf:
            out = np.min(a, axis=dims, keepdims=keepdim)
        elif p == 0:
            out = np.sum(a != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
        elif p == 1:
            out = np.sum(a, axis=dims, keepdims=keepdim)
        elif p == 2:
            out = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            out = np.sum(a ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
        ctx.save_for_backward(x, out)
        ctx.args = (p, dims, keepdim, dt)
        return out.astype(dt)

    @staticmethod
    def forward_cuda(ctx, x, p, dims, keepdim):
        if p not in (1.0, 2.0):
            raise NotImplementedError(f"norm(p={p}) is not implemented for CUDA tensors yet (p=1 and p=2 are)")
        xp = ctx.xp
        out = xp.sum(xp.abs(x), axis=dims, keepdims=keepdim) if p == 1 else \
            xp.sqrt(xp.sum(x * x, axis=dims, keepdims=keepdim))
        ctx.save_for_backward(x, out)
        ctx.args = (p, dims, keepdim, x.dtype)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved
        p, dims, keepdim, dt = ctx.args
        xp = ctx.xp
        o = _expand_grad(out, x.shape, dims, keepdim, xp)
        gg = _expand_grad(g, x.shape, dims, keepdim, xp)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 0:
                r = xp.zeros_like(x)
            elif p == 1:
                r = xp.sign(x) * gg
            elif p == 2:
                r = xp.where(o == 0, 0, x * gg / o)
            elif p in (np.inf, -np.inf):
                mask = np.abs(x) == o
                cnt = np.sum(mask, axis=dims, keepdims=True)
                r = np.sign(x) * mask * gg / cnt
            else:
                r = np.where(o == 0, 0, x * np.abs(x) ** (p - 2) * gg / o ** (p - 1))
        return (r.astype(dt),)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("nuclear norm is not supported")
    _require_float(input, "norm")
    return Norm.apply(input, float(p), wrap_dims(dim, input.ndim), keepdim)


def dist(input, other, p=2):
    return norm(input - other, p)


class TakeAlong(Function):
    """Values picked along ``dim`` by precomputed indices (sort/topk/median): scatter on backward."""

    @staticmethod
    def forward(ctx, x, dim, idx):
        ctx.args = (x.shape, dim, idx)
        return np.take_along_axis(x, idx, axis=dim)

    @staticmethod
    def backward(ctx, g):
        shp, dim, idx = ctx.args
        out = np.zeros(shp, g.dtype)
        np.put_along_axis(out, idx, g, axis=dim)
        return (out,)


def _argsort(a, dim, descending, stable=True):
    if descending:
        # stable descending: sort the reversed order then flip keeps equal elements in index order
        if np.issubdtype(a.dtype, np.floating):
            # torch orders NaN above everything: first when descending
            return np.argsort(np.where(np.isnan(a), -np.inf, -a), axis=dim, kind="stable")
        if a.dtype == np.bool_:
            a = a.astype(np.int8)
        if np.issubdtype(a.dtype, np.unsignedinteger):
            a = a.astype(np.int64)
        return np.argsort(-a, axis=dim, kind="stable")
    return np.argsort(a, axis=dim, kind="stable")


def sort(input, dim=-1, descending=False, stable=False):
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    if input.ndim == 0:
        return ValuesIndices(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    idx = _argsort(input._compute(), d, descending)
    return ValuesIndices(TakeAlong.apply(input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k} for dimension {d} of size {n}")
    a = input._compute()
    idx = _argsort(a, d, largest)
    idx = np.take(idx, range(k), axis=d)
    return ValuesIndices(TakeAlong.apply(input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def kthvalue(input, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, input.ndim)
    idx = np.take(_argsort(input._compute(), d, False), [k - 1], axis=d)
    v = TakeAlong.apply(input, d, idx)
    i = Tensor._wrap(idx.astype(np.int64))
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return ValuesIndices(v, i)


class _EvenlyAt(Function):
    """A value of ``x`` picked by position; the gradient is shared by every element equal to it (torch's
    evenly_distribute_backward for median() without dim)."""
    backward_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, x, value):
        ctx.save_for_backward(x)
        ctx.value = value
        return np.asarray(value, x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        mask = (x == ctx.value) | (np.isnan(x) & np.isnan(ctx.value))
        return ((g * mask / np.maximum(mask.sum(), 1)).astype(g.dtype),)


def median(input, dim=None, keepdim=False):
    if dim is None:
        flat = input.reshape(-1)
        n = flat.shape[0]
        v = kthvalue(flat.detach(), (n + 1) // 2, 0).values
        return _EvenlyAt.apply(input, v._compute().reshape(()))
    n = input.shape[wrap_dim(dim, input.ndim)]
    return kthvalue(input, (n + 1) // 2, dim, keepdim)


class _BoolReduce(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, is_any):
        return (np.any if is_any else np.all)(x, axis=dims, keepdims=keepdim)


def _bool_reduce(input, dim, keepdim, is_any):
    out = _BoolReduce.apply(input, wrap_dims(dim, input.ndim), keepdim, is_any)
    # like torch, uint8 inputs give uint8 results (kept for backward compatibility there)
    return out.to(D.uint8) if input._dtype is D.uint8 else out


def any(input, dim=None, keepdim=False):  # noqa: A001
    return _bool_reduce(input, dim, keepdim, True)


def all(input, dim=None, keepdim=False):  # noqa: A001
    return _bool_reduce(input, dim, keepdim, False)


def count_nonzero(input, dim=None):
    return Tensor._wrap(np.asarray(np.count_nonzero(input._compute(), axis=dim if dim is None else
                                                    wrap_dims(dim, input.ndim)), np.int64))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    res = np.unique(input._compute(), return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not (return_inverse or return_counts):
        return Tensor._wrap(res, input._dtype if input._dtype is not D.bfloat16 else None)
    out = [Tensor._wrap(res[0])]
    if return_inverse:
        out.append(Tensor._wrap(res[1].reshape(input.shape).astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(res[-1].astype(np.int64)))
    return tuple(out)


def bincount(input, weights=None, minlength=0):
    w = None if weights is None else weights._compute()
    r = np.bincount(input._data, w, minlength)
    return Tensor._wrap(r if w is not None else r.astype(np.int64))


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    a = input._compute()
    lo, hi = (a.min(), a.max()) if min == max else (min, max)
    h, _ = np.histogram(a, bins=bins, range=(lo, hi))
    return Tensor._wrap(h.astype(a.dtype))
