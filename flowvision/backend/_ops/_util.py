"""Helpers shared by the op modules: argument checking, broadcasting, dim handling."""
import numbers

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor


def is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, (np.ndarray,))


def check_operand(x, op):
    if isinstance(x, Tensor) or is_scalar(x):
        return x
    raise TypeError(f"{op}(): expected a Tensor or a number, got {type(x).__name__}")


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes, with torch's error message."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = n
            elif n != 1 and n != out[j]:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({n}) at "
                    f"non-singleton dimension {j}: shapes {[list(x) for x in shapes]}")
    return tuple(out)


def shape_of(x):
    return tuple(x.shape) if isinstance(x, (Tensor, np.ndarray)) else ()


def unbroadcast(g, shape):
    """Sum a gradient back down to ``shape`` after broadcasting."""
    if g.shape == tuple(shape):
        return g
    from .broadcast import sum_to
    threaded = sum_to(g, tuple(shape))
    if threaded is not None:
        return threaded
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return int(dim) + n if dim < 0 else int(dim)


def wrap_dims(dim, ndim):
    """None -> all dims; int or sequence -> sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    dims = tuple(sorted(set(wrap_dim(d, ndim) for d in dim)))
    if ndim == 0:
        return ()
    return dims


def float_result(t):
    """dtype of a float-valued op on ``t`` (ints promote to the default float dtype)."""
    return t._dtype if t._dtype.is_floating_point or t._dtype.is_complex else D.get_default_dtype()


def as_tensor_arg(x, dtype=None):
    if isinstance(x, Tensor):
        return x
    from .._creation import tensor
    return tensor(x, dtype=dtype)
