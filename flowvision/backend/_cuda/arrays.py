"""DeviceArray building blocks shared by the CUDA op twins (all enqueue kernels; none synchronise)."""
import math

import numpy as np

from .runtime import C, is_device_array


def prod(shape):
    return math.prod(shape)


def strides_of(shape):
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= max(shape[d], 1)
    return st


def bop(name, a, b, alpha=1.0, swap=False):
    """Binary op; ``b`` may be a Python scalar (``swap``: compute op(b, a))."""
    if not is_device_array(a):  # scalar op array
        return C().binary(C().BINARY_OPS[name], b, a, alpha, not swap)
    return C().binary(C().BINARY_OPS[name], a, b, alpha, swap)


def uop(name, x, p0=0.0, p1=0.0):
    return C().unary(C().UNARY_OPS[name], x, float(p0), float(p1))


def ubwd(name, g, x=None, y=None, p0=0.0, p1=0.0):
    return C().unary_backward(C().UNARY_OPS[name], g, x, y, float(p0), float(p1))


def zeros(shape, dtype_name):
    return C().full([int(s) for s in shape], 0.0, dtype_name)


def reshape(x, shape):
    shape = [int(s) for s in shape]
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = x.size // known if known else 0
    return C().reshape(x, shape)


def copy(x):
    return C().strided_copy(x, list(x.shape), strides_of(x.shape), 0)


def permute(x, perm):
    st = strides_of(x.shape)
    return C().strided_copy(x, [x.shape[p] for p in perm], [st[p] for p in perm], 0)


def _dummy(shape):
    # a zero-byte-per-step int8 "array" whose element offsets are the offsets of a dense array of this
    # shape: numpy's own view machinery (basic indexing, transpose, broadcast_to, flip) then tells us
    # the shape/strides/offset of any view without touching memory
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=tuple(shape), strides=tuple(strides_of(shape)))


def view_geometry(shape, fn):
    """(shape, element strides, element offset) of the numpy view ``fn(dense array of shape)``."""
    base = _dummy(shape)
    v = fn(base)
    if not isinstance(v, np.ndarray) or v.dtype != np.int8:
        raise TypeError("view_geometry: not a view")
    offset = v.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return list(v.shape), list(v.strides), offset


def take_view(x, fn):
    """Materialise the view ``fn`` of x (contiguous copy)."""
    shape, strides, off = view_geometry(x.shape, fn)
    return C().strided_copy(x, shape, strides, off)


def put_view(src, shape, fn, dtype_name, base=None):
    """An array of ``shape`` (zeros, or ``base``) with ``src`` written into the view ``fn``."""
    vshape, strides, off = view_geometry(shape, fn)
    out = zeros(shape, dtype_name) if base is None else base
    C().strided_write(reshape(src, vshape) if list(src.shape) != vshape else src, out, vshape, strides, off)
    return out


def expand(x, shape):
    """Broadcast x to ``shape`` (materialised)."""
    shape = list(shape)
    if list(x.shape) == shape:
        return x
    vshape, strides, off = view_geometry(x.shape, lambda a: np.broadcast_to(a, shape))
    return C().strided_copy(x, vshape, strides, off)


def reduce_dims(op, x, dims):
    """Reduce ``dims`` of x away with reduce op ``op`` (name); returns (values, indices or None) shaped like
    the kept dims."""
    nd = len(x.shape)
    dims = sorted({d % nd for d in dims}) if nd else []
    keep = [d for d in range(nd) if d not in dims]
    kshape = [x.shape[d] for d in keep]
    if not dims:
        return x, None
    code = C().REDUCE_OPS[op]
    if dims == list(range(dims[0], dims[-1] + 1)):
        outer, r, inner = prod(x.shape[:dims[0]]), prod(x.shape[dims[0]:dims[-1] + 1]), prod(x.shape[dims[-1] + 1:])
        y, idx = C().reduce(code, x, outer, r, inner)
    else:
        xp = permute(x, keep + dims)
        y, idx = C().reduce(code, xp, prod(kshape), prod(x.shape[d] for d in dims), 1)
    y = C().reshape(y, kshape)
    return y, (None if idx is None else C().reshape(idx, kshape))


def unbroadcast(g, shape):
    """Sum g down to ``shape`` (the gradient of a broadcast)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = len(g.shape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    y, _ = reduce_dims("sum", g, dims)
    return C().reshape(y, list(shape))


def ensure(a, dtype_name):
    """A DeviceArray of dtype_name from a DeviceArray, numpy array or scalar."""
    if is_device_array(a):
        return a if a.dtype == dtype_name else C().cast(a, dtype_name)
    arr = np.asarray(a)
    dev = C().from_host(np.asarray(arr, order="C"), arr.dtype.name if arr.dtype != np.float64 else "float32") \
        if arr.dtype != np.float64 else C().from_host(arr.astype(np.float32), "float32")
    if tuple(dev.shape) != arr.shape:  # keep 0-d arrays 0-d
        dev = C().reshape(dev, list(arr.shape))
    return dev if dev.dtype == dtype_name else C().cast(dev, dtype_name)


def shape_of(a):
    return tuple(a.shape) if is_device_array(a) else tuple(np.shape(a))
