"""The CUDA array namespace: numpy's function names over ``DeviceArray`` s, so an op's one backward (and most
of its forward) runs unchanged on either device.

An op reads its namespace from ``ctx.xp``: ``numpy`` (plus the CPU kernels of ``_C``, see ``_xp.py``) on the
host, this module on the device. Only what the engine's ops use is here; every function enqueues kernels
and never synchronises. ``install_array_methods`` gives ``DeviceArray`` numpy's operators and methods
(``a * b``, ``a.sum(axis=..., keepdims=...)``, ``a.reshape``, ``a.astype``, ``a[basic index]``), so helpers
such as ``_ops._util.unbroadcast`` serve both devices. Device kernels with no numpy name (conv, pooling,
norms, softmax, GELU backward) take the argument order of their ``_C`` counterparts.
"""
import sys

import numpy as np

from .. import _dtype as D
from . import arrays as A
from .runtime import C, is_device_array

pi = np.pi
float32, float16, int64, bool_ = "float32", "float16", "int64", "bool"
float64 = "float32"  # the device has no float64 kernels: "as accurate as the device can" is float32
newaxis = None

# promotion rank of the device dtypes (numpy's rules for the ones the kernels have)
_RANK = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "bfloat16": 5, "float16": 5,
         "float32": 6}
_FLOATS = ("float32", "float16", "bfloat16")
# elementwise unary kernels by the numpy name an op calls (C's UNARY_OPS codes)
UNARY = {"negative": "neg", "abs": "abs", "exp": "exp", "log": "log", "log2": "log2", "log1p": "log1p",
         "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tanh": "tanh", "floor": "floor",
         "ceil": "ceil", "trunc": "trunc", "round": "round", "sign": "sign", "reciprocal": "reciprocal",
         "square": "square", "erf": "erf", "sigmoid": "sigmoid", "rsqrt": "rsqrt"}
_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
           "power": "pow", "maximum": "maximum", "minimum": "minimum", "equal": "eq", "not_equal": "ne",
           "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge", "logical_and": "logical_and",
           "logical_or": "logical_or", "logical_xor": "logical_xor", "floor_divide": "floor_divide",
           "remainder": "remainder", "arctan2": "atan2"}


def dtype_name(dt):
    """A device dtype name from a name, numpy dtype/type or flowvision dtype."""
    if isinstance(dt, str):
        return "bool" if dt == "bool_" else dt
    if isinstance(dt, D.dtype):
        return dt.name
    return np.dtype(dt).name


def asarray(a, dtype=None):
    """A DeviceArray from a DeviceArray, numpy array or Python scalar (float64 becomes float32)."""
    if is_device_array(a):
        return a if dtype is None else astype(a, dtype)
    arr = np.asarray(a)
    name = dtype_name(dtype) if dtype is not None else ("float32" if arr.dtype == np.float64 else arr.dtype.name)
    return A.ensure(arr, name)


def astype(a, dtype, copy=True):
    name = dtype_name(dtype)
    if not is_device_array(a):
        return asarray(a, name)
    return a if a.dtype == name else C().cast(a, name)


def result_dtype(*xs):
    """numpy's promotion over the operands' dtypes (Python scalars are weak, as in numpy 2)."""
    best, kind = None, 0
    for x in xs:
        if is_device_array(x):
            if best is None or _RANK[x.dtype] > _RANK[best]:
                best = x.dtype
        elif isinstance(x, (bool, np.bool_)):
            kind = max(kind, 0)
        elif isinstance(x, (int, np.integer)):
            kind = max(kind, 1)
        else:
            kind = max(kind, 2)
    if best is None:
        return "float32" if kind == 2 else ("int64" if kind == 1 else "bool")
    if kind == 2 and best not in _FLOATS:
        return "float32"
    if kind == 1 and best == "bool":
        return "int64"
    return best


def _binary(name, a, b):
    op = _BINARY[name]
    da, db = is_device_array(a), is_device_array(b)
    if not da and not db:
        return getattr(np, name)(a, b)
    if (da and not db and isinstance(b, np.ndarray) and b.ndim) or (db and not da and isinstance(a, np.ndarray)
                                                                      and a.ndim):
        a, b = asarray(a), asarray(b)  # a host array operand is uploaded
        da = db = True
    dt = result_dtype(a, b)
    if op in ("logical_and", "logical_or", "logical_xor"):
        dt = "bool"
    elif op == "div" and dt not in _FLOATS:
        dt = "float32"
    if da:
        a = astype(a, dt)
    else:
        a = float(a) if dt in _FLOATS else int(a)
    if db:
        b = astype(b, dt)
    else:
        b = float(b) if dt in _FLOATS else int(b)
    if not da:
        return A.bop(op, b, a, swap=True)
    return A.bop(op, a, b)


def _make_binary(name):
    def f(a, b, **kwargs):
        return _binary(name, a, b)
    f.__name__ = name
    return f


def _make_unary(name, code):
    def f(x, **kwargs):
        if not is_device_array(x):
            return getattr(np, name)(x)
        if x.dtype not in _FLOATS and name not in ("negative", "abs", "sign", "square"):
            x = astype(x, "float32")
        return A.uop(code, x)
    f.__name__ = name
    return f


for _n in _BINARY:
    globals()[_n] = _make_binary(_n)
for _n, _c in UNARY.items():
    globals()[_n] = _make_unary(_n, _c)
del _n, _c


def logical_not(x):
    return _binary("equal", x, False)


invert = bitwise_not = logical_not


def unary(code, x, p0=0.0, p1=0.0):
    """The device unary kernel ``code`` (C's UNARY_OPS name, e.g. "relu", "clamp") with its parameters."""
    return A.uop(code, x, p0, p1)


def unary_backward(code, g, x=None, y=None, p0=0.0, p1=0.0):
    """d(code)/dx times g, from the saved input ``x`` and/or output ``y``."""
    return A.ubwd(code, g, x, y, p0, p1)


def clip(x, lo, hi):
    return A.uop("clamp", x, -np.inf if lo is None else float(lo), np.inf if hi is None else float(hi))


def where(cond, a, b):
    cond = astype(asarray(cond), "bool")
    dt = result_dtype(a, b)
    return C().where(cond, astype(asarray(a), dt), astype(asarray(b), dt))


def zeros(shape, dtype="float32"):
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    return A.zeros(shape, dtype_name(dtype))


def full(shape, value, dtype="float32"):
    shape = [shape] if isinstance(shape, (int, np.integer)) else shape
    return C().full([int(s) for s in shape], float(value), dtype_name(dtype))


def to_storage(a, dtype):
    """``a`` in the storage of flowvision dtype ``dtype`` (the device stores every dtype natively)."""
    return astype(a, dtype.name)


def ones(shape, dtype="float32"):
    return full(shape, 1.0, dtype)


def zeros_like(a, dtype=None):
    return zeros(a.shape, dtype or a.dtype)


def ones_like(a, dtype=None):
    return full(a.shape, 1.0, dtype or a.dtype)


def full_like(a, value, dtype=None):
    return full(a.shape, value, dtype or a.dtype)


def copy(a):
    return A.copy(a)


def ascontiguousarray(a, dtype=None):
    return a if dtype is None else astype(a, dtype)


def reshape(a, shape):
    return A.reshape(a, [shape] if isinstance(shape, (int, np.integer)) else shape)


def _axes(a, axis):
    nd = len(a.shape)
    if axis is None:
        return list(range(nd))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return sorted({int(d) % max(nd, 1) for d in axis})


def _reduce(op, a, axis=None, keepdims=False, dtype=None):
    if dtype is not None:
        a = astype(a, dtype)
    elif op in ("sum", "mean") and a.dtype not in _FLOATS:
        a = astype(a, "int64" if op == "sum" else "float32")  # numpy sums bool/int in int64
    dims = _axes(a, axis)
    if not dims:
        return a
    y, _ = A.reduce_dims(op, a, dims)
    if keepdims:
        y = C().reshape(y, [1 if i in dims else s for i, s in enumerate(a.shape)])
    return y


def sum(a, axis=None, keepdims=False, dtype=None):  # noqa: A001
    return _reduce("sum", a, axis, keepdims, dtype)


def mean(a, axis=None, keepdims=False, dtype=None):
    return _reduce("mean", a, axis, keepdims, dtype)


def amax(a, axis=None, keepdims=False):
    return _reduce("max", a, axis, keepdims)


def amin(a, axis=None, keepdims=False):
    return _reduce("min", a, axis, keepdims)


def transpose(a, axes=None):
    axes = list(range(len(a.shape)))[::-1] if axes is None else [int(d) % len(a.shape) for d in axes]
    return a if axes == list(range(len(a.shape))) else A.permute(a, axes)


permute_dims = transpose


def moveaxis(a, source, destination):
    nd = len(a.shape)
    src, dst = int(source) % nd, int(destination) % nd
    order = [d for d in range(nd) if d != src]
    order.insert(dst, src)
    return transpose(a, order)


def swapaxes(a, a1, a2):
    order = list(range(len(a.shape)))
    order[a1], order[a2] = order[a2], order[a1]
    return transpose(a, order)


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(a.shape) + len(axes)
    axes = sorted(int(d) % nd for d in axes)
    shape = list(a.shape)
    for d in axes:
        shape.insert(d, 1)
    return C().reshape(a, shape)


def squeeze(a, axis=None):
    dims = _axes(a, axis)
    return C().reshape(a, [s for i, s in enumerate(a.shape) if not (i in dims and s == 1)])


def broadcast_to(a, shape):
    return A.expand(asarray(a), list(shape))


def flip(a, axis):
    return A.take_view(a, lambda v: np.flip(v, axis))


def concatenate(arrays, axis=0):
    arrays = [asarray(x) for x in arrays]
    nd = len(arrays[0].shape)
    dim = int(axis) % nd
    dt = result_dtype(*arrays)
    shape = list(arrays[0].shape)
    shape[dim] = builtins_sum(x.shape[dim] for x in arrays)
    out = A.zeros(shape, dt)
    start = 0
    for x in arrays:
        n = x.shape[dim]
        if n:
            sl = (slice(None),) * dim + (slice(start, start + n),)
            A.put_view(astype(x, dt), shape, lambda v, sl=sl: v[sl], dt, base=out)
        start += n
    return out


def builtins_sum(it):
    total = 0
    for v in it:
        total += v
    return total


def _basic(index):
    index = index if isinstance(index, tuple) else (index,)
    if not all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) and not isinstance(i, bool)
               for i in index):
        raise NotImplementedError("this indexing form is not implemented for CUDA tensors yet")
    # a trailing Ellipsis keeps an all-int index a (0-d) view rather than a scalar
    return index if any(i is Ellipsis for i in index) else index + (Ellipsis,)


def getitem(a, index):
    """``a[index]`` for basic indexes (ints, slices, None, Ellipsis): a contiguous copy."""
    index = _basic(index)
    return A.take_view(a, lambda v: v[index])


def scatter_grad(shape, index, g):
    """The gradient of a basic-index view: zeros(shape) with ``g`` at ``index`` (built at once on the device)."""
    return put(shape, index, g, g.dtype)


def put(shape, index, src, dtype, base=None):
    """An array of ``shape`` (zeros, or ``base``) with ``src`` written at the basic index ``index``."""
    index = _basic(index)
    return A.put_view(src, list(shape), lambda v: v[index], dtype_name(dtype), base=base)


def split(a, bounds, axis=0):
    """numpy.split at the index list ``bounds``."""
    dim = int(axis) % len(a.shape)
    edges = [0] + [int(b) for b in bounds] + [a.shape[dim]]
    return [getitem(a, (slice(None),) * dim + (slice(lo, hi),)) for lo, hi in zip(edges[:-1], edges[1:])]


def roll(a, shifts, axis):
    shifts = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    for s, d in zip(shifts, axis):
        n = a.shape[d]
        s = s % n if n else 0
        if s:
            pre = (slice(None),) * d
            a = concatenate([getitem(a, pre + (slice(n - s, n),)), getitem(a, pre + (slice(0, n - s),))], axis=d)
    return a


def pad(a, pad_width, constant_values=0):
    """Constant padding by (before, after) per dim (non-negative)."""
    shape = [s + b + e for s, (b, e) in zip(a.shape, pad_width)]
    out = full(shape, float(constant_values or 0), a.dtype)
    place = tuple(slice(b, b + s) for s, (b, _) in zip(a.shape, pad_width))
    return A.put_view(a, shape, lambda v: v[place], a.dtype, base=out)


def first_dim_index(index):
    """The integer index array of x[idx] / x[idx, :, ...] (dim 0), the one advanced-index form on the device."""
    idx = None
    if is_device_array(index) or isinstance(index, np.ndarray):
        idx = index
    elif isinstance(index, tuple) and index and (is_device_array(index[0]) or isinstance(index[0], np.ndarray)) \
            and all(isinstance(i, slice) and i == slice(None) for i in index[1:]):
        idx = index[0]
    if idx is None or str(getattr(idx, "dtype", "")) == "bool":
        raise NotImplementedError("CUDA tensors support integer-array indexing on the first dim only so far")
    return asarray(idx, "int64")


def take(x, idx):
    """x[idx] along dim 0 for an int64 index array of any shape."""
    y = C().index_select(x, 0, C().reshape(idx, [idx.size]))
    return C().reshape(y, list(idx.shape) + list(x.shape[1:]))


def add_at(shape, idx, g):
    """zeros(shape) with ``g`` added at the dim-0 index array ``idx`` (repeated indices accumulate)."""
    return index_add(shape, 0, idx, reshape(g, [idx.size] + list(shape[1:])))


def put_along_axis_zeros(shape, index, values, axis):
    """zeros(shape) with ``values`` put at ``index`` (size 1 along ``axis``) along ``axis``."""
    dim = int(axis) % len(shape)
    ar = reshape(arange(shape[dim]), [shape[dim] if i == dim else 1 for i in range(len(shape))])
    return where(equal(ar, index), values, 0)


def _allow_tf32():
    from .. import cuda
    return bool(cuda.allow_tf32)


def _f32(a):
    return None if a is None else astype(a, "float32")


def bmm(a, b):
    return matmul(a, b)


def gemm(a, b, bias=None, trans_a=False, trans_b=False):
    """op(a) @ op(b) (+ bias per output column, in the GEMM epilogue) for 2-D arrays."""
    return C().matmul(a, b, bias, trans_a, trans_b, 1.0, _allow_tf32())


def matmul(a, b, bias=None, trans_a=False, trans_b=False):
    """Batched ``a @ b`` (numpy batch broadcasting; ``bias`` added per output column in the GEMM epilogue)."""
    ba, bb = list(a.shape[:-2]), list(b.shape[:-2])
    if ba != bb and ba and bb:
        batch = list(np.broadcast_shapes(tuple(ba), tuple(bb)))
        if ba != batch:
            a = A.expand(a, batch + list(a.shape[-2:]))
        if bb != batch:
            b = A.expand(b, batch + list(b.shape[-2:]))
    return C().matmul(a, b, bias, trans_a, trans_b, 1.0, _allow_tf32())


# ------------------------------------------------------------------ device kernels with _C's argument order
def conv2d_forward(x, w, b, stride, padding, dilation, groups):
    return C().conv2d_forward(x, w, b, list(stride), list(padding), list(dilation), int(groups), _allow_tf32())


def conv2d_backward_input(g, w, in_shape, stride, padding, dilation, groups):
    return C().conv2d_backward_data(_f32(g), _f32(w), list(in_shape), list(stride), list(padding), list(dilation),
                                    int(groups), _allow_tf32())


def conv2d_backward_weight(g, x, w_shape, stride, padding, dilation, groups):
    return C().conv2d_backward_weight(_f32(g), _f32(x), list(w_shape), list(stride), list(padding), list(dilation),
                                      int(groups), _allow_tf32())


def pool_out(size, k, s, p, d, ceil_mode):
    from ..nn.functional import _pool_out
    return _pool_out(size, k, s, p, d, ceil_mode)


def max_pool2d_forward(x, k, s, p, d, ceil_mode):
    oh, ow = (pool_out(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2))
    return C().max_pool2d_forward(x, oh, ow, list(k), list(s), list(p), list(d), True)


def max_pool2d_backward(g, idx, in_shape):
    return C().max_pool2d_backward(_f32(g), idx, list(in_shape))


def avg_pool2d_forward(x, k, s, p, ceil_mode, cip, div):
    oh, ow = (pool_out(x.shape[2 + i], k[i], s[i], p[i], 1, ceil_mode) for i in range(2))
    return C().avg_pool2d_forward(x, oh, ow, list(k), list(s), list(p), bool(cip), int(div or 0))


def avg_pool2d_backward(g, in_shape, k, s, p, ceil_mode, cip, div):
    return C().avg_pool2d_backward(_f32(g), list(in_shape), list(k), list(s), list(p), bool(cip), int(div or 0))


def adaptive_avg_pool2d_forward(x, o):
    return C().adaptive_avg_pool2d_forward(x, int(o[0]), int(o[1]))


def adaptive_avg_pool2d_backward(g, in_shape):
    return C().adaptive_avg_pool2d_backward(_f32(g), list(in_shape))


def adaptive_max_pool2d_forward(x, o):
    return C().adaptive_max_pool2d_forward(x, int(o[0]), int(o[1]))


def batch_norm_train_forward(x3, w, b, eps):
    y, mean, invstd, _var = C().batch_norm_forward(x3, None, None, _f32(w), _f32(b), True, float(eps))
    return y, mean, invstd


def batch_norm_infer(x3, rm, rv, w, b, eps):
    """(y, mean, invstd) of batch norm with running statistics."""
    y, mean, invstd, _v = C().batch_norm_forward(x3, _f32(rm), _f32(rv), _f32(w), _f32(b), False, float(eps))
    return y, mean, invstd


def batch_norm_backward(g3, x3, w, mean, invstd, training):
    return C().batch_norm_backward(g3, x3, mean, invstd, _f32(w), bool(training))


def layer_norm_forward(x2, w, b, eps):
    return C().layer_norm_forward(x2, x2.shape[-1], _f32(w), _f32(b), float(eps))


def layer_norm_backward(g2, x2, w, mean, rstd):
    return C().layer_norm_backward(g2, x2, _f32(w), mean, rstd, x2.shape[-1], True, w is not None, True)


def group_norm_forward(x3, groups, w, b, eps):
    return C().group_norm_forward(x3, int(groups), _f32(w), _f32(b), float(eps))


def group_norm_backward(g3, x3, groups, w, mean, rstd):
    return C().group_norm_backward(g3, x3, _f32(w), mean, rstd, int(groups), True, w is not None, True)


def softmax_forward(x2, log):
    return C().softmax_forward(x2, x2.shape[0], x2.shape[1], 1, bool(log))


def softmax_backward(g2, y2, log):
    return C().softmax_backward(astype(g2, y2.dtype), y2, y2.shape[0], y2.shape[1], 1, bool(log))


def gelu_forward(x, approximate):
    return A.uop("gelu_tanh" if approximate == "tanh" else "gelu", x)


def gelu_backward(g, x, approximate):
    return A.ubwd("gelu_tanh" if approximate == "tanh" else "gelu", g, x)


def silu_forward(x):
    return A.uop("silu", x)


def silu_backward(g, x):
    return A.ubwd("silu", g, x)


def interp_scales(in_hw, out_hw, align_corners, scale):
    """Source-pixel step per output pixel along (h, w), as the upsample kernels take it."""
    out = []
    for i in range(2):
        if align_corners:
            out.append((in_hw[i] - 1) / (out_hw[i] - 1) if out_hw[i] > 1 else 0.0)
        elif scale is not None and scale[i] is not None and scale[i] > 0:
            out.append(1.0 / scale[i])
        else:
            out.append(in_hw[i] / out_hw[i])
    return out


def _check_interp(mode, antialias):
    if antialias or mode not in ("nearest", "nearest-exact", "bilinear"):
        raise NotImplementedError(f"interpolate(mode={mode!r}, antialias={antialias}) is not implemented on CUDA "
                                  "yet (nearest, nearest-exact and bilinear are)")


def interpolate_forward(x, out_hw, mode, align_corners, scale, antialias):
    _check_interp(mode, antialias)
    sh, sw = interp_scales(x.shape[2:], out_hw, align_corners, scale)
    return C().upsample_forward(x, int(out_hw[0]), int(out_hw[1]), mode, bool(align_corners), sh, sw)


def interpolate_backward(g, in_shape, out_hw, mode, align_corners, scale, antialias):
    sh, sw = interp_scales(in_shape[2:], out_hw, align_corners, scale)
    return C().upsample_backward(_f32(g), list(in_shape), mode, bool(align_corners), sh, sw)


def index_select(x, dim, idx):
    idx = asarray(idx, "int64")
    return C().index_select(x, int(dim), C().reshape(idx, [idx.size]))


def index_add(shape, dim, idx, g):
    """zeros(shape) with rows ``g`` added at ``idx`` along ``dim`` (float32)."""
    idx = asarray(idx, "int64")
    return C().index_add(list(shape), int(dim), C().reshape(idx, [idx.size]), _f32(g))


def argreduce(x, dim, is_max):
    """(values, int64 indices) of the max / min along ``dim`` (dim removed)."""
    shape = list(x.shape)
    outer, r, inner = A.prod(shape[:dim]), shape[dim], A.prod(shape[dim + 1:])
    vals, idx = C().reduce(C().REDUCE_OPS["argmax" if is_max else "argmin"], x, outer, r, inner)
    kshape = shape[:dim] + shape[dim + 1:]
    return C().reshape(vals, kshape), C().reshape(idx, kshape)


def arange(n, dtype="int64"):
    return C().from_host(np.arange(n, dtype=np.dtype(dtype_name(dtype))), dtype_name(dtype))


def sumsq(a, axis):
    return _reduce("sumsq", a, axis)


def roi_align_forward(x, rois, spatial_scale, ph, pw, sampling_ratio, aligned):
    return C().roi_align_forward(x, astype(rois, x.dtype), int(ph), int(pw), float(spatial_scale),
                                 int(sampling_ratio), bool(aligned))


def roi_align_backward(g, rois, in_shape, spatial_scale, sampling_ratio, aligned):
    return C().roi_align_backward(_f32(g), _f32(rois), list(in_shape), float(spatial_scale), int(sampling_ratio),
                                  bool(aligned))


# ------------------------------------------------------------------ DeviceArray as a numpy-like array
def install_array_methods(cls):
    """numpy's operators and the methods the engine uses on arrays, on the DeviceArray class."""
    if getattr(cls, "_fv_methods", False):
        return

    def op(name, swap=False):
        def f(a, b):
            if not (is_device_array(b) or isinstance(b, (int, float, bool, np.generic, np.ndarray))):
                return NotImplemented
            return _binary(name, b, a) if swap else _binary(name, a, b)
        return f

    for dunder, name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                         ("pow", "power"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                         ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
        setattr(cls, f"__{dunder}__", op(name))
        setattr(cls, f"__r{dunder}__", op(name, swap=True))
    for dunder, name in (("gt", "greater"), ("ge", "greater_equal"), ("lt", "less"), ("le", "less_equal"),
                         ("eq", "equal"), ("ne", "not_equal")):
        setattr(cls, f"__{dunder}__", op(name))
    cls.__hash__ = object.__hash__
    cls.__neg__ = lambda a: negative(a) if a.dtype != "bool" else logical_not(a)
    cls.__invert__ = logical_not
    cls.__abs__ = lambda a: globals()["abs"](a)
    cls.__getitem__ = getitem
    cls.sum = sum
    cls.mean = mean
    cls.copy = copy
    cls.transpose = lambda a, *axes: transpose(a, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list))
                                               else (axes or None))
    cls.T = property(lambda a: transpose(a))
    cls.astype = astype

    def reshape_m(a, *shape):
        return A.reshape(a, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    cls.reshape = reshape_m

    def setitem(a, key, value):
        # only whole-array assignment (``arr[...] = v``), as used on buffers such as num_batches_tracked
        if key is not Ellipsis and key != slice(None):
            raise NotImplementedError("DeviceArray supports only arr[...] = value")
        if is_device_array(value):
            C().copy_(a, astype(value, a.dtype))
        elif np.size(value) == 1:
            C().fill_(a, float(np.asarray(value).reshape(-1)[0]))
        else:
            raise ValueError("arr[...] = host array: upload it first")

    def _host_reduce(op_name):
        # numpy-style whole-array reductions returning host scalars when called without an axis (CPU-side
        # argument checks such as index bounds; they wait for the device)
        def f(a, axis=None, keepdims=False):
            if axis is not None or keepdims:
                return _reduce(op_name, a, axis, keepdims)
            x = a if a.dtype in ("float32", "int64") else astype(a, "float32" if a.dtype in _FLOATS else "int64")
            y, _ = C().reduce(C().REDUCE_OPS[op_name], C().reshape(x, [x.size]), 1, x.size, 1)
            return C().to_host(y).reshape(())
        return f

    cls.min, cls.max = _host_reduce("min"), _host_reduce("max")
    cls.any = lambda a, **kw: bool(cls.max(astype(a, "float32")) != 0) if a.size else False
    cls.all = lambda a, **kw: bool(cls.min(astype(a, "float32")) != 0) if a.size else True
    cls.__float__ = lambda a: float(C().to_host(astype(a, "float32") if a.dtype in _FLOATS else a).reshape(-1)[0])
    cls.__int__ = lambda a: int(C().to_host(a).reshape(-1)[0])
    cls._fv_xp = sys.modules[__name__]
    cls.__setitem__ = setitem
    cls.__array_ufunc__ = None  # numpy scalars/arrays on the left defer to the device operators
    cls._fv_methods = True
