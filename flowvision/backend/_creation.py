"""Tensor creation: from data, filled, ranges and random."""
import math
import numbers

import numpy as np

from . import _dtype as D
from ._bf16 import f32_to_bf16, bf16_to_f32
from ._tensor import Tensor
from ._device import device as Device
from .random import _rng


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a sequence of ints, got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _size_kw(fn):
    """Accept torch's ``size=`` keyword and ``pin_memory=`` (host memory here is always directly usable)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*size, **kwargs):
        kwargs.pop("pin_memory", None)
        if "size" in kwargs:
            if size:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'size'")
            size = (kwargs.pop("size"),)
        return fn(*size, **kwargs)
    return wrapper


def _finish(arr, dtype, requires_grad=False, device=None):
    """Wrap ``arr`` (already holding values of ``dtype``'s compute type) as a tensor."""
    if dtype is D.bfloat16:
        arr = f32_to_bf16(arr)
    t = Tensor._wrap(arr, dtype)
    if device is not None and Device(device).type != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _compute_np(dtype):
    return np.dtype(np.float32) if dtype is D.bfloat16 else dtype.np


def _infer_dtype(data):
    """torch.tensor's dtype inference: arrays and tensors keep theirs; Python numbers follow torch."""
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)) and data and any(isinstance(x, Tensor) for x in data):
        out = _infer_dtype(data[0])
        for x in data[1:]:
            out = D.promote_types(out, _infer_dtype(x))
        return out
    kind = np.asarray(data).dtype.kind
    if kind == "b":
        return D.bool
    if kind in "iu":
        return D.int64
    if kind == "f":
        return D.get_default_dtype()
    if kind == "c":
        return D.get_default_dtype().to_complex()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _to_array(data):
    if isinstance(data, Tensor):
        return data._compute()
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return np.array([_to_array(x) for x in data])
    if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
        return np.from_dlpack(data)
    return np.asarray(data)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` into a new tensor (torch.tensor)."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if hasattr(data, "__dlpack__") and not isinstance(data, (np.ndarray, Tensor)):
        if getattr(data, "requires_grad", False) and hasattr(data, "detach"):
            data = data.detach()  # a copy is made anyway (torch.tensor(t) does the same, with a warning)
        data = from_dlpack(data)
    dt = D.as_dtype(dtype) if dtype is not None else _infer_dtype(data)
    arr = _to_array(data)
    if arr.dtype == object:
        raise TypeError(f"can't convert {type(data).__name__} with ragged or non-numeric elements to a tensor")
    arr = np.array(arr, dtype=_compute_np(dt), copy=True)
    return _finish(arr, dt, requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Share memory with ``data`` when it already is an array of the right dtype (torch.as_tensor)."""
    if isinstance(data, Tensor):
        return data if dtype is None or D.as_dtype(dtype) is data._dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.as_dtype(dtype).np == data.dtype) and data.dtype != object:
        return from_numpy(data)
    if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
        t = from_dlpack(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return Tensor._wrap(ndarray, D.from_numpy_dtype(ndarray.dtype))


def from_dlpack(ext_tensor):
    """Zero-copy import of any DLPack producer (torch, numpy, ...) on the CPU."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if str(getattr(ext_tensor, "dtype", "")) == "torch.bfloat16" and hasattr(ext_tensor, "view"):
        # numpy's DLPack import has no bfloat16: take torch's bit pattern as int16, still without a copy
        import sys
        bits = np.from_dlpack(ext_tensor.view(sys.modules["torch"].int16)).view(np.uint16)
        return Tensor._wrap(bits, D.bfloat16)
    try:
        arr = np.from_dlpack(ext_tensor)
    except (BufferError, TypeError, RuntimeError) as e:
        raise TypeError(f"from_dlpack: can't import {type(ext_tensor).__name__} on the CPU ({e}); bfloat16 and "
                        "device tensors are not supported through DLPack yet") from None
    return Tensor._wrap(arr, D.from_numpy_dtype(arr.dtype))


def _filled(size, value, dtype, requires_grad, device):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    arr = np.full(_size(size), value, dtype=_compute_np(dt))
    return _finish(arr, dt, requires_grad, device)


@_size_kw
def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _filled(size, 0, dtype, requires_grad, device)


@_size_kw
def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _filled(size, 1, dtype, requires_grad, device)


@_size_kw
def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, layout=None, pin_memory=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    out = _finish(np.empty(_size(size), _compute_np(dt)), dt, requires_grad, device)
    if memory_format is not None:
        from ._memory_format import like_format
        out = like_format(out, out, memory_format)
    return out


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = D.scalar_dtype(fill_value) if not isinstance(fill_value, Tensor) else fill_value._dtype
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled((tuple(size),) if isinstance(size, (list, tuple)) else (size,), fill_value, dtype, requires_grad, device)


def _like(input, dtype):
    return D.as_dtype(dtype) if dtype is not None else input._dtype


def _like_device(input, device):
    """*_like functions default to the input's device (None for CPU inputs: the CPU path stays as it was)."""
    if device is not None or input._device.type == "cpu":
        return device
    return input._device


def _laid_out(input, out, memory_format):
    from ._memory_format import like_format  # torch's *_like default (preserve_format) keeps channels_last
    return like_format(input, out, memory_format)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(input, _filled(tuple(input.shape), 0, _like(input, dtype), requires_grad,
                                    _like_device(input, device)), memory_format)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(input, _filled(tuple(input.shape), 1, _like(input, dtype), requires_grad,
                                    _like_device(input, device)), memory_format)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(input, empty(tuple(input.shape), dtype=_like(input, dtype), requires_grad=requires_grad,
                                  device=_like_device(input, device)), memory_format)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(input, _filled(tuple(input.shape), fill_value, _like(input, dtype), requires_grad,
                                    _like_device(input, device)), memory_format)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError(f"upper bound and larger bound inconsistent with step sign (start={start}, end={end}, step={step})")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else D.get_default_dtype()
    dt = D.as_dtype(dtype)
    n = int(math.ceil((end - start) / step))
    arr = (start + step * np.arange(n, dtype=np.float64)) if dt.is_floating_point else \
        np.arange(start, start + n * step, step)[:n]
    return _finish(arr.astype(_compute_np(dt)), dt, requires_grad, device)


def range_(start, end, step=1, *, dtype=None):
    return arange(start, end + step, step, dtype=dtype or D.get_default_dtype())


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    # torch computes from both ends toward the middle: start + step*i below steps//2, end - step*(steps-1-i)
    # above, with a fused multiply-add in the dtype's own precision (float16: plain float32 arithmetic).
    # The fma is emulated exactly by doing the product and sum in a wider type and rounding once.
    half = steps // 2
    if not dt.is_floating_point:  # integer results: the ends are truncated to integers first
        start, end = int(start), int(end)
        i = np.arange(steps).astype(np.longdouble)
        step = np.longdouble((end - start) / (steps - 1) if steps > 1 else 0.0)
        arr = np.trunc(np.where(i < half, start + step * i, end - step * (steps - 1 - i)).astype(np.float64))
        return _finish(arr.astype(_compute_np(dt)), dt, requires_grad, device)
    npd, wide = {"float64": (np.float64, np.longdouble), "float16": (np.float32, np.float32)}.get(
        dt.name, (np.float32, np.float64))
    if dt is D.float16:
        start, end = float(np.float16(start)), float(np.float16(end))
    elif dt is D.bfloat16:
        start, end = (float(v) for v in _bf16_roundtrip(np.array([start, end], np.float32)))
    s0, e0 = npd(start), npd(end)
    step = npd((e0 - s0) / npd(steps - 1)) if steps > 1 else npd(0)
    i = np.arange(steps)
    lo = wide(s0) + wide(step) * i.astype(wide)
    hi = wide(e0) - wide(step) * (steps - 1 - i).astype(wide)
    arr = np.where(i < half, lo, hi).astype(npd)
    return _finish(arr.astype(_compute_np(dt)), dt, requires_grad, device)


def logspace(start, end, steps, base=10.0, *, dtype=None):
    lin = linspace(start, end, steps, dtype=D.float64)
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish((base ** lin._data).astype(_compute_np(dt)), dt)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(np.eye(n, m if m is not None else n, dtype=_compute_np(dt)), dt, requires_grad, device)


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    from ._ops.shape import expand, reshape
    n = len(tensors)
    shape = tuple(t.numel() for t in tensors)
    if indexing == "xy" and n >= 2:
        shape = (shape[1], shape[0]) + shape[2:]
    out = []
    for i, t in enumerate(tensors):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape = [1] * n
        view_shape[pos] = t.numel()
        out.append(expand(reshape(t, tuple(view_shape)), shape))
    return tuple(out)


# ------------------------------------------------------------------ random
def _random_dtype(dtype):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"expected a floating-point dtype for random sampling, got {dt}")
    return dt


def _complex_draw(draw, size, dt, scale):
    """torch's complex sampling: real and imaginary parts drawn independently (randn: each with variance 1/2)."""
    real = dt.to_real()
    parts = draw(tuple(size) + (2,), dtype=real.np) * np.asarray(scale, real.np)
    return parts.view(dt.np)[..., 0]


@_size_kw
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _random_dtype(dtype)
    if dt.is_complex:
        return _finish(_complex_draw(_rng(generator).random, _size(size), dt, 1.0), dt, requires_grad, device)
    arr = _rng(generator).random(_size(size), dtype=np.float64 if dt is D.float64 else np.float32)
    return _finish(arr.astype(_compute_np(dt), copy=False), dt, requires_grad, device)


@_size_kw
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _random_dtype(dtype)
    if dt.is_complex:
        return _finish(_complex_draw(_rng(generator).standard_normal, _size(size), dt, np.sqrt(0.5)), dt,
                       requires_grad, device)
    arr = _rng(generator).standard_normal(_size(size), dtype=np.float64 if dt is D.float64 else np.float32)
    return _finish(arr.astype(_compute_np(dt), copy=False), dt, requires_grad, device)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    arr = _rng(generator).integers(low, high, _size((size,) if isinstance(size, int) else tuple(size)))
    return _finish(arr.astype(_compute_np(dt)), dt, requires_grad, device)


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, device=None):
    return randint(low, high, tuple(input.shape), dtype=dtype or input._dtype, generator=generator,
                   device=_like_device(input, device))


def rand_like(input, *, dtype=None, generator=None, device=None):
    return rand(tuple(input.shape), dtype=dtype or input._dtype, generator=generator, device=_like_device(input, device))


def randn_like(input, *, dtype=None, generator=None, device=None):
    return randn(tuple(input.shape), dtype=dtype or input._dtype, generator=generator,
                 device=_like_device(input, device))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    return _finish(_rng(generator).permutation(n).astype(_compute_np(dt)), dt, requires_grad, device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None):
    m = mean._compute() if isinstance(mean, Tensor) else mean
    s = std._compute() if isinstance(std, Tensor) else std
    if np.any(np.asarray(s) < 0):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {np.min(s)}")
    if size is None:
        size = np.broadcast_shapes(np.shape(m), np.shape(s))
    ref = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    dt = D.as_dtype(dtype) if dtype is not None else (ref._dtype if ref is not None else D.get_default_dtype())
    arr = _rng(generator).normal(m, s, tuple(size))
    return _finish(np.asarray(arr).astype(_compute_np(dt)), dt)


def bernoulli(input, p=None, *, generator=None):
    probs = input._compute() if p is None else np.full(tuple(input.shape), p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: all elements of input must be in [0, 1]")
    arr = (_rng(generator).random(probs.shape) < probs).astype(_compute_np(input._dtype))
    return _finish(arr, input._dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    probs = np.atleast_2d(input._compute()).astype(np.float64)
    rng = _rng(generator)
    rows = []
    for row in probs:  # one draw per distribution row (not per element)
        p = row / row.sum()
        rows.append(rng.choice(len(p), size=num_samples, replace=replacement, p=p))
    out = np.array(rows, np.int64)
    return Tensor._wrap(out if input.ndim == 2 else out[0])


# in-place random fills used by nn.init
def _fill_random(t, arr):
    from ._ops.inplace import commit
    from .autograd.grad_mode import no_grad
    with no_grad():
        commit(t, Tensor._wrap(np.asarray(arr).astype(_compute_np(t._dtype)), D.float32 if t._dtype is D.bfloat16 else t._dtype))
    return t


def uniform_(t, a=0.0, b=1.0, *, generator=None):
    return _fill_random(t, _rng(generator).uniform(a, b, tuple(t.shape)))


def normal_(t, mean=0.0, std=1.0, *, generator=None):
    return _fill_random(t, _rng(generator).normal(mean, std, tuple(t.shape)))


def bernoulli_(t, p=0.5, *, generator=None):
    return _fill_random(t, _rng(generator).random(tuple(t.shape)) < p)


def random_(t, low=0, high=None, *, generator=None):
    if high is None:
        low, high = 0, low if low else 2 ** 24
    return _fill_random(t, _rng(generator).integers(low, high, tuple(t.shape)))


def exponential_(t, lambd=1.0, *, generator=None):
    return _fill_random(t, _rng(generator).exponential(1.0 / lambd, tuple(t.shape)))


def _bf16_roundtrip(a):
    return bf16_to_f32(f32_to_bf16(a))
