"""Argument normalisation, dtype/shape checks and array helpers shared by the functional ops."""
from typing import Any, Optional, Tuple

import numpy as np

from ..._tensor import Tensor
from ..._xp import namespace
from ..._ops import shape as S
from ..._ops.broadcast import contiguous


def _pair(v: Any, n: int = 2, name: str = "argument") -> Tuple[int, ...]:
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
    if a.ndim == 4:
        return contiguous(a)  # a permuted view (ConvNeXt's channels-last LayerNorm input) on the layout kernel
    return np.asarray(a, order="C")  # unlike ascontiguousarray, keeps 0-d arrays 0-d


def _opt(a: Any, like: Any = None) -> Any:
    if a is None:
        return None
    a = _kin(a)
    return a.astype(like.dtype, copy=False) if like is not None else a


def _const(arr: Any, dtype: Any) -> Tensor:
    """A constant tensor of ``dtype`` from a numpy array holding values of its compute dtype (bfloat16: float32)."""
    from ..._creation import tensor
    return tensor(arr, dtype=dtype)


class DTypeError(TypeError, RuntimeError):
    """An op got a tensor of a dtype it cannot take: a TypeError, and a RuntimeError (what torch raises) for
    code written against torch."""


class ShapeError(ValueError, RuntimeError):
    """An input too small or of the wrong shape for the op: a ValueError, and a RuntimeError as in torch."""


def _check_float(x: object, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x._dtype.is_floating_point:
        raise DTypeError(f"{name}(): expected a floating-point input, got {x._dtype}")


def _check_same_dtype(name: str, *ts: Optional[Tensor]) -> None:
    dts = {t._dtype for t in ts if isinstance(t, Tensor)}
    if len(dts) > 1 and not _cuda_autocast_casts(ts):
        raise DTypeError(f"{name}(): expected all tensors to have the same dtype, got {sorted(d.name for d in dts)}")


def _cuda_autocast_casts(ts) -> bool:
    """Whether CUDA autocast is on for these device tensors: it casts a conv / linear / matmul's float operands to
    one dtype when the op applies, so an fp16 activation meeting an fp32 weight is not a dtype error there."""
    import sys
    ac = sys.modules.get("flowvision.backend._cuda.autocast")  # loaded with the first CUDA tensor only
    return ac is not None and ac.state.enabled and all(
        t._data.__class__ is not np.ndarray for t in ts if isinstance(t, Tensor))


def _batchify(x: Tensor, want: int, name: str) -> Tuple[Tensor, bool]:
    """Accept unbatched input (one dim fewer) like torch; returns (batched, was_unbatched)."""
    if x.ndim == want - 1:
        return S.unsqueeze(x, 0), True
    if x.ndim != want:
        raise RuntimeError(f"{name}(): expected {want - 1}D (unbatched) or {want}D (batched) input, but got input of "
                           f"size: {list(x.shape)}")
    return x, False


def _array(t: Tensor) -> Any:
    """A tensor's values as an array of its own device's namespace, in the compute dtype (no host copy)."""
    return t._compute() if t._data.__class__ is np.ndarray else t._data


def _ema_(stat: Tensor, new: Any, momentum: float) -> None:
    """running statistic <- (1 - momentum) * running + momentum * new, in place (any float storage dtype), computed
    in float64 on the host (float32 on a device)."""
    xp = namespace(stat._data)
    cur = _array(stat)
    val = ((1 - momentum) * cur.astype(xp.float64) + momentum * xp.asarray(new).astype(xp.float64)).astype(cur.dtype)
    stat._data[...] = xp.to_storage(val, stat._dtype)
    stat._version[0] += 1
