"""Threaded kernels for the broadcast patterns models use, chosen from the operands' shapes and memory order.

numpy's ufuncs and reductions run on one core and, for a per-channel operand over a channels-last view (ConvNeXt's
layer scale), walk memory against its order. Here an operand is read in its own memory order: the big operand
viewed as (A, C, B), the small one as C values repeated over A and B.
"""
import math

import numpy as np

from .. import _C
from .._kernels import FLOAT_DTYPES

_MIN_THREADED = 32768  # elements below which numpy's single pass is as fast


def threaded_add_mul(a, b, op):
    """a + b / a * b on the threaded, vectorised kernel (numpy's ufuncs run on one core) for large same-dtype float
    arrays in the broadcast patterns models use: equal shapes (residual adds), one value per leading index
    (squeeze-excitation gates x * g[N, C, 1, 1]) and a block repeated over leading dims (biases, attention masks).
    Each element is rounded once as in numpy, so the result is identical; None when the pattern does not apply."""
    if a.size < b.size:
        a, b = b, a  # add and mul commute
    if (a.size < _MIN_THREADED or a.dtype not in FLOAT_DTYPES or b.dtype != a.dtype or b.ndim == 0
            or b.ndim > a.ndim):
        return None
    if not a.flags.c_contiguous and b.size < a.size:
        return _per_channel_in_memory_order(a, b, op)
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        return None
    shape, bshape = a.shape, (1,) * (a.ndim - b.ndim) + b.shape
    if bshape == shape:
        return _C.binary(a, b, op, 1, a.size, 0)
    for k in range(1, a.ndim):
        if bshape[:k] == shape[:k] and all(d == 1 for d in bshape[k:]):
            return _C.binary(a, b, op, b.size, a.size // b.size, 1).reshape(shape)
        if bshape[k:] == shape[k:] and all(d == 1 for d in bshape[:k]):
            return _C.binary(a, b, op, a.size // b.size, b.size, 2).reshape(shape)
    return None


def scale_layout(ref, small_shape):
    """How ``ref`` (the big operand, or its gradient) meets a small operand broadcast over it: ``(perm, A, C, B)``
    where ``ref.transpose(perm)`` is C-contiguous and the small operand's values vary along one run of its axes
    (C values, repeated over the A outer and B inner positions), in the same axis order as in the small operand.
    None when there is no such run (e.g. a scalar, or two separate broadcast axes)."""
    nd = ref.ndim
    if len(small_shape) > nd:
        return None
    sp = (1,) * (nd - len(small_shape)) + tuple(small_shape)
    perm = sorted(range(nd), key=lambda k: -ref.strides[k])  # stable: equal strides (size-1 axes) keep their order
    if not ref.transpose(perm).flags.c_contiguous:
        return None
    shape_p = [ref.shape[k] for k in perm]
    varying = [i for i in range(nd) if sp[perm[i]] != 1]
    if not varying or any(sp[perm[i]] != shape_p[i] for i in varying):
        return None
    lo, hi = varying[0], varying[-1] + 1
    inside = [i for i in range(lo, hi) if shape_p[i] != 1]
    if inside != [i for i in varying if shape_p[i] != 1]:
        return None  # a broadcast axis between two varying ones
    if [perm[i] for i in varying] != sorted(perm[i] for i in varying):
        return None  # the small operand's axes would be read in another order
    return perm, math.prod(shape_p[:lo]), math.prod(shape_p[lo:hi]), math.prod(shape_p[hi:])


def _per_channel_in_memory_order(a, b, op):
    """a + b / a * b for a strided ``a`` (a channels-last tensor seen as NCHW) and a small ``b`` varying along one
    run of a's axes: computed in a's memory order, the result has a's layout (as numpy's)."""
    layout = scale_layout(a, b.shape)
    if layout is None:
        return None
    perm, A, C, B = layout
    vals = np.ascontiguousarray(b).reshape(C)
    a_p = a.transpose(perm)
    if perm == [0, 2, 3, 1] and B == 1 and a.dtype == np.float32 and C == a.shape[1]:
        # a channels-last view times a per-channel value (ConvNeXt's layer scale before the residual add): the result
        # in NCHW order, as the residual stream and the next convolution take it, transposed on the way
        y = _C.nhwc_to_nchw(a_p)
        for image in y.reshape(a.shape[0], C, -1):
            _C.binary(image, vals, op, C, image.shape[1], 1, out=image)
        return y
    if B == 1:
        y = _C.binary(a_p, vals, op, A, C, 2)
    elif A == 1:
        y = _C.binary(a_p, vals, op, C, B, 1)
    else:
        return None
    return y.reshape(a_p.shape).transpose(np.argsort(perm))


def contiguous(a):
    """``a`` as a C-contiguous array. A 4-D float32 view of NCHW data as NHWC (or the reverse: a channels-last tensor
    seen as NCHW) is copied by the threaded, cache-blocked layout kernel instead of numpy's one-core strided copy."""
    if a.flags.c_contiguous:
        return a
    if a.ndim == 4 and a.dtype == np.float32:
        if a.transpose(0, 3, 1, 2).flags.c_contiguous:
            return _C.nchw_to_nhwc(a.transpose(0, 3, 1, 2))
        if a.transpose(0, 2, 3, 1).flags.c_contiguous:
            return _C.nhwc_to_nchw(a.transpose(0, 2, 3, 1))
    return np.ascontiguousarray(a)


def scale_backward(g, big, small, small_shape, need_big, need_small):
    """Gradients of ``y = big * small`` (small broadcast over big, y shaped like big) in one threaded pass:
    ``(g * small, sum of g * big reduced to small_shape)``, each None when not needed. The work follows ``big``'s
    memory order (the gradient is copied into it when it differs), so the big operand's gradient comes back in
    the layout of its forward value. None when the pattern or dtypes do not fit: the caller falls back to numpy."""
    if (type(g) is not np.ndarray or g.size < _MIN_THREADED or g.dtype not in FLOAT_DTYPES
            or (need_small and (big is None or big.dtype != g.dtype or big.shape != g.shape))
            or (need_big and (small is None or small.dtype != g.dtype))):
        return None
    layout = scale_layout(big if need_small else g, small_shape)
    if layout is None:
        return None
    perm, A, C, B = layout
    gx, gs = _C.scale_backward(contiguous(g.transpose(perm)), big.transpose(perm) if need_small else None,
                               np.ascontiguousarray(small).reshape(C) if need_big else None, A, C, B,
                               need_big, need_small)
    if gx is not None:
        gx = gx.reshape([g.shape[k] for k in perm]).transpose(np.argsort(perm))
    return gx, (None if gs is None else gs.reshape(small_shape))


def sum_to(g, shape):
    """``g`` summed down to ``shape`` (a bias or any operand broadcast along one run of g's axes) on the threaded
    kernel, in g's memory order; None when the pattern or dtype does not fit (numpy then sums)."""
    if type(g) is not np.ndarray or g.size < _MIN_THREADED or g.dtype not in FLOAT_DTYPES:
        return None
    layout = scale_layout(g, shape)
    if layout is None:
        return None
    perm, A, C, B = layout
    return _C.scale_backward(g.transpose(perm), None, None, A, C, B, False, True)[1].reshape(shape)
