"""Tensor creation: from data, filled, ranges and random."""
import math
import numbers
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dtype as D
from ._bf16 import f32_to_bf16, bf16_to_f32
from ._tensor import Tensor
from ._device import device as Device
from .random import Generator, _rng


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


def tensor(data: Any, *, dtype: Optional[Union[D.dtype, str]] = None, device: Optional[Union[Device, str]] = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Copy ``data`` into a new tensor, as ``torch.tensor``.

    The dtype is inferred as torch does: tensors and numpy arrays keep theirs, Python bools give ``bool``, ints
    ``int64``, floats the default dtype and complex numbers its complex counterpart.

    Args:
        data: a number, a (nested) sequence, a numpy array, a tensor, or any DLPack producer (e.g. a torch tensor).
        dtype: the dtype; ``None`` infers it from ``data``.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.
        pin_memory: accepted for torch compatibility (host memory is always directly usable).

    Returns:
        The new tensor (never sharing memory with ``data``).

    Raises:
        TypeError: a string, ragged or non-numeric data, or data whose dtype cannot be inferred.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> flow.tensor([0.5]).dtype
        flowvision.backend.float32
    """
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


def as_tensor(data: Any, dtype: Optional[Union[D.dtype, str]] = None,
              device: Optional[Union[Device, str]] = None) -> Tensor:
    """Convert ``data`` to a tensor, sharing memory when possible, as ``torch.as_tensor`` (also ``asarray``).

    A tensor is returned as is (cast if ``dtype`` differs), a numpy array of the right dtype and a DLPack producer
    are wrapped without a copy; anything else is copied as by :func:`tensor`.

    Args:
        data: a tensor, numpy array, DLPack producer, number or (nested) sequence.
        dtype: the dtype; ``None`` keeps or infers it.
        device: where to create it when a copy is made.

    Returns:
        A tensor, possibly sharing memory with ``data``.

    Examples:
        >>> import numpy as np
        >>> import flowvision.backend as flow
        >>> a = np.zeros(3, np.float32)
        >>> t = flow.as_tensor(a)
        >>> a[0] = 1.0
        >>> t
        tensor([1., 0., 0.])
    """
    if isinstance(data, Tensor):
        return data if dtype is None or D.as_dtype(dtype) is data._dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.as_dtype(dtype).np == data.dtype) and data.dtype != object:
        return from_numpy(data)
    if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
        t = from_dlpack(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a numpy array (same dtype and shape), as ``torch.from_numpy``.

    Args:
        ndarray: the array; writes through either object are seen by the other.

    Returns:
        The tensor.

    Raises:
        TypeError: ``ndarray`` is not a numpy array.

    Examples:
        >>> import numpy as np
        >>> import flowvision.backend as flow
        >>> flow.from_numpy(np.arange(3))
        tensor([0, 1, 2])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return Tensor._wrap(ndarray, D.from_numpy_dtype(ndarray.dtype))


def from_dlpack(ext_tensor: Any) -> Tensor:
    """Zero-copy import of a CPU DLPack producer (a torch tensor, a numpy array, ...), as ``torch.from_dlpack``.

    Args:
        ext_tensor: an object with ``__dlpack__`` (a flowvision tensor is returned as is). torch ``bfloat16``
            tensors are imported through their bit pattern.

    Returns:
        A tensor sharing memory with ``ext_tensor``.

    Raises:
        TypeError: the producer cannot be imported on the CPU (device memory, or a dtype numpy lacks).
    """
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
def zeros(*size: Union[int, Sequence[int]], dtype: Optional[Union[D.dtype, str]] = None,
          device: Optional[Union[Device, str]] = None, requires_grad: bool = False, out: Optional[Tensor] = None,
          layout: Optional[Any] = None) -> Tensor:
    """A tensor of the given shape filled with 0, as ``torch.zeros``.

    Args:
        *size: the shape, as separate ints or one sequence (also accepted as the ``size=`` keyword).
        dtype: the dtype; ``None`` means the default dtype (float32 unless changed).
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.
        out: accepted for torch compatibility (a new tensor is returned).
        layout: accepted for torch compatibility (strided only).

    Returns:
        The new tensor.

    Raises:
        TypeError: a size that is not an int.
        RuntimeError: a negative size.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.zeros(2, 3).shape
        flowvision.Size([2, 3])
    """
    return _filled(size, 0, dtype, requires_grad, device)


@_size_kw
def ones(*size: Union[int, Sequence[int]], dtype: Optional[Union[D.dtype, str]] = None,
         device: Optional[Union[Device, str]] = None, requires_grad: bool = False, out: Optional[Tensor] = None,
         layout: Optional[Any] = None) -> Tensor:
    """A tensor of the given shape filled with 1, as ``torch.ones``; arguments, defaults and errors as
    :func:`zeros`.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.ones(2, 3).shape
        flowvision.Size([2, 3])
    """
    return _filled(size, 1, dtype, requires_grad, device)


@_size_kw
def empty(*size: Union[int, Sequence[int]], dtype: Optional[Union[D.dtype, str]] = None,
          device: Optional[Union[Device, str]] = None, requires_grad: bool = False, memory_format: Optional[Any] = None,
          layout: Optional[Any] = None, pin_memory: bool = False) -> Tensor:
    """A tensor of the given shape with uninitialised values, as ``torch.empty``.

    Args:
        *size: the shape, as separate ints or one sequence (also accepted as the ``size=`` keyword).
        dtype: the dtype; ``None`` means the default dtype (float32 unless changed).
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.
        memory_format: ``channels_last`` lays a 4-D tensor out as NHWC.
        layout: accepted for torch compatibility (strided only).
        pin_memory: accepted for torch compatibility.

    Returns:
        The new tensor.

    Raises:
        TypeError: a size that is not an int.
        RuntimeError: a negative size.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.empty(2, 3).shape
        flowvision.Size([2, 3])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    out = _finish(np.empty(_size(size), _compute_np(dt)), dt, requires_grad, device)
    if memory_format is not None:
        from ._memory_format import like_format
        out = like_format(out, out, memory_format)
    return out


def full(size: Union[int, Sequence[int]], fill_value: Union[bool, int, float, complex, Tensor], *,
         dtype: Optional[Union[D.dtype, str]] = None, device: Optional[Union[Device, str]] = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``, as ``torch.full``.

    Args:
        size: the shape (an int for 1-D).
        fill_value: the value (a 0-d tensor's value is taken).
        dtype: the dtype; ``None`` infers it from ``fill_value`` (bool, int64, the default float or complex dtype).
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        The new tensor.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.full((2, 2), 7)
        tensor([[7, 7],
                [7, 7]])
    """
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


def zeros_like(input: Tensor, *, dtype: Optional[Union[D.dtype, str]] = None,
               device: Optional[Union[Device, str]] = None, requires_grad: bool = False,
               memory_format: Optional[Any] = None) -> Tensor:
    """A tensor shaped like ``input`` filled with 0, as ``torch.zeros_like``: :func:`full_like` with ``fill_value``
    0 (the same keywords and defaults)."""
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


def ones_like(input: Tensor, *, dtype: Optional[Union[D.dtype, str]] = None,
              device: Optional[Union[Device, str]] = None, requires_grad: bool = False,
              memory_format: Optional[Any] = None) -> Tensor:
    """A tensor shaped like ``input`` filled with 1, as ``torch.ones_like``: :func:`full_like` with ``fill_value``
    1 (the same keywords and defaults)."""
    return full_like(input, 1, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


def empty_like(input: Tensor, *, dtype: Optional[Union[D.dtype, str]] = None,
               device: Optional[Union[Device, str]] = None, requires_grad: bool = False,
               memory_format: Optional[Any] = None) -> Tensor:
    """A tensor shaped like ``input`` with uninitialised values, as ``torch.empty_like``.

    Args:
        input: the tensor whose shape (and by default dtype, device and memory format) is taken.
        dtype: the dtype; ``None`` means ``input``'s.
        device: where to create it; ``None`` means ``input``'s device.
        requires_grad: record operations on it for autograd.
        memory_format: ``None`` or ``preserve_format`` keep ``input``'s layout (channels-last stays channels-last).

    Returns:
        The new tensor.
    """
    return _laid_out(input, empty(tuple(input.shape), dtype=_like(input, dtype), requires_grad=requires_grad,
                                  device=_like_device(input, device)), memory_format)


def full_like(input: Tensor, fill_value: Union[bool, int, float, complex], *,
              dtype: Optional[Union[D.dtype, str]] = None, device: Optional[Union[Device, str]] = None,
              requires_grad: bool = False, memory_format: Optional[Any] = None) -> Tensor:
    """A tensor shaped like ``input`` filled with ``fill_value``, as ``torch.full_like``.

    Args:
        input: the tensor whose shape (and by default dtype, device and memory format) is taken.
        fill_value: the value.
        dtype: the dtype; ``None`` means ``input``'s.
        device: where to create it; ``None`` means ``input``'s device.
        requires_grad: record operations on it for autograd.
        memory_format: ``None`` or ``preserve_format`` keep ``input``'s layout (channels-last stays channels-last).

    Returns:
        The new tensor.
    """
    return _laid_out(input, _filled(tuple(input.shape), fill_value, _like(input, dtype), requires_grad,
                                    _like_device(input, device)), memory_format)


def arange(start: Union[int, float, Tensor], end: Optional[Union[int, float, Tensor]] = None,
           step: Union[int, float, Tensor] = 1, *, dtype: Optional[Union[D.dtype, str]] = None,
           device: Optional[Union[Device, str]] = None, requires_grad: bool = False) -> Tensor:
    """Values ``start, start + step, ...`` up to but excluding ``end``, as ``torch.arange``; ``arange(n)`` is
    ``0, 1, ..., n - 1``.

    Args:
        start: the first value (the end, from 0, when ``end`` is omitted).
        end: the bound, excluded.
        step: the spacing, not 0; ``ceil((end - start) / step)`` values are produced.
        dtype: the dtype; ``None`` means int64 when every argument is an int, else the default dtype.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        A 1-D tensor.

    Raises:
        RuntimeError: ``step`` is 0 or points away from ``end``.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.arange(5)
        tensor([0, 1, 2, 3, 4])
        >>> flow.arange(1, 2, 0.25)
        tensor([1.0000, 1.2500, 1.5000, 1.7500])
    """
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


def linspace(start: float, end: float, steps: int, *, dtype: Optional[Union[D.dtype, str]] = None,
             device: Optional[Union[Device, str]] = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, as ``torch.linspace`` (bit-identical to
    torch: computed from both ends toward the middle).

    Args:
        start: the first value.
        end: the last value.
        steps: the number of values (non-negative).
        dtype: the dtype; ``None`` means the default dtype (an integer dtype truncates the values).
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        A 1-D tensor of ``steps`` values.

    Raises:
        RuntimeError: ``steps`` is negative.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(_linspace_values(start, end, steps, dt), dt, requires_grad, device)


def _linspace_values(start, end, steps, dt):
    """torch.linspace's values of dtype ``dt`` (in its compute dtype), bit for bit."""
    # torch computes from both ends toward the middle: start + step*i below steps//2, end - step*(steps-1-i)
    # above, with a fused multiply-add in the dtype's own precision (float16: plain float32 arithmetic).
    # The fma is emulated exactly by doing the product and sum in a wider type and rounding once.
    half = steps // 2
    if not dt.is_floating_point:  # integer results: the ends are truncated to integers first
        start, end = int(start), int(end)
        i = np.arange(steps).astype(np.longdouble)
        step = np.longdouble((end - start) / (steps - 1) if steps > 1 else 0.0)
        arr = np.trunc(np.where(i < half, start + step * i, end - step * (steps - 1 - i)).astype(np.float64))
        return arr.astype(_compute_np(dt))
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
    return arr.astype(_compute_np(dt))


def logspace(start: float, end: float, steps: int, base: float = 10.0, *,
             dtype: Optional[Union[D.dtype, str]] = None) -> Tensor:
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end`` inclusive, as
    ``torch.logspace``.

    Args:
        start: the first exponent.
        end: the last exponent.
        steps: the number of values.
        base: the base.
        dtype: the dtype; ``None`` means the default dtype.

    Returns:
        A 1-D tensor of ``steps`` values.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    lin = linspace(start, end, steps, dtype=D.float64)
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish((base ** lin._data).astype(_compute_np(dt)), dt)


def eye(n: int, m: Optional[int] = None, *, dtype: Optional[Union[D.dtype, str]] = None,
        device: Optional[Union[Device, str]] = None, requires_grad: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal and zeros elsewhere, as ``torch.eye``.

    Args:
        n: the number of rows.
        m: the number of columns; ``None`` means ``n``.
        dtype: the dtype; ``None`` means the default dtype.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        An ``(n, m)`` tensor.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(np.eye(n, m if m is not None else n, dtype=_compute_np(dt)), dt, requires_grad, device)


def meshgrid(*tensors: Union[Tensor, Sequence[Tensor]], indexing: str = "ij") -> Tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors, as ``torch.meshgrid``: output ``i`` holds ``tensors[i]``'s values broadcast
    along its own dim of the grid.

    Args:
        *tensors: 1-D tensors (or 0-d, counted as size 1), as separate arguments or one sequence.
        indexing: ``'ij'`` (matrix: the grid is ``(len(t0), len(t1), ...)``) or ``'xy'`` (Cartesian: the first two
            dims swapped).

    Returns:
        One tensor per input, each of the grid's shape (expanded views, not copies).

    Examples:
        >>> import flowvision.backend as flow
        >>> gy, gx = flow.meshgrid(flow.arange(2), flow.arange(3), indexing="ij")
        >>> gx
        tensor([[0, 1, 2],
                [0, 1, 2]])
    """
    ts: Tuple[Any, ...] = tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    from ._ops.shape import expand, reshape
    n = len(ts)
    shape = tuple(t.numel() for t in ts)
    if indexing == "xy" and n >= 2:
        shape = (shape[1], shape[0]) + shape[2:]
    out = []
    for i, t in enumerate(ts):
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


def _float_draw(method, complex_scale, size, generator, dtype, requires_grad, device):
    """rand / randn: the generator's ``method`` drawn in float32 (float64 for float64), complex dtypes as two real
    draws scaled by ``complex_scale``."""
    dt = _random_dtype(dtype)
    draw = getattr(_rng(generator), method)
    if dt.is_complex:
        return _finish(_complex_draw(draw, _size(size), dt, complex_scale), dt, requires_grad, device)
    arr = draw(_size(size), dtype=np.float64 if dt is D.float64 else np.float32)
    return _finish(arr.astype(_compute_np(dt), copy=False), dt, requires_grad, device)


@_size_kw
def rand(*size: Union[int, Sequence[int]], generator: Optional[Generator] = None,
         dtype: Optional[Union[D.dtype, str]] = None, device: Optional[Union[Device, str]] = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape filled with uniform random values from ``[0, 1)``, as ``torch.rand``.

    Args:
        *size: the shape, as separate ints or one sequence (also accepted as the ``size=`` keyword).
        generator: the random generator; ``None`` means the global one (seeded by ``manual_seed``).
        dtype: a floating-point or complex dtype; ``None`` means the default dtype.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        The new tensor.

    Raises:
        RuntimeError: a non-floating-point dtype, or a negative size.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.rand(2, 3).shape
        flowvision.Size([2, 3])
    """
    return _float_draw("random", 1.0, size, generator, dtype, requires_grad, device)


@_size_kw
def randn(*size: Union[int, Sequence[int]], generator: Optional[Generator] = None,
          dtype: Optional[Union[D.dtype, str]] = None, device: Optional[Union[Device, str]] = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape filled with standard normal random values (complex dtypes: each part with
    variance 1/2), as ``torch.randn``; arguments, defaults and errors as :func:`rand`.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.randn(2, 3).shape
        flowvision.Size([2, 3])
    """
    return _float_draw("standard_normal", np.sqrt(0.5), size, generator, dtype, requires_grad, device)


def randint(low: int = 0, high: Optional[int] = None, size: Optional[Union[int, Sequence[int]]] = None, *,
            generator: Optional[Generator] = None, dtype: Optional[Union[D.dtype, str]] = None,
            device: Optional[Union[Device, str]] = None, requires_grad: bool = False) -> Tensor:
    """Uniform random integers from ``[low, high)``, as ``torch.randint``; ``randint(high, size)`` draws from
    ``[0, high)``.

    Args:
        low: the lowest value (``high`` when ``high`` is omitted).
        high: one above the highest value (``randint(high, size)`` is also accepted).
        size: the shape.
        generator: the random generator; ``None`` means the global one.
        dtype: the dtype; ``None`` means int64.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        The new tensor.

    Raises:
        TypeError: no ``size``.
        RuntimeError: ``high <= low``.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.randint(0, 10, (2, 3)).shape
        flowvision.Size([2, 3])
    """
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


def randint_like(input: Tensor, low: int = 0, high: Optional[int] = None, *,
                 dtype: Optional[Union[D.dtype, str]] = None, generator: Optional[Generator] = None,
                 device: Optional[Union[Device, str]] = None) -> Tensor:
    """Uniform random integers from ``[low, high)`` shaped like ``input``, as ``torch.randint_like``.

    Args:
        input: the tensor whose shape (and by default dtype and device) is taken.
        low: the lowest value (``high`` when ``high`` is omitted).
        high: one above the highest value.
        dtype: the dtype; ``None`` means ``input``'s.
        generator: the random generator; ``None`` means the global one (seeded by ``manual_seed``).
        device: where to create it; ``None`` means ``input``'s device.

    Returns:
        The new tensor.
    """
    return randint(low, high, tuple(input.shape), dtype=dtype or input._dtype, generator=generator,
                   device=_like_device(input, device))


def rand_like(input: Tensor, *, dtype: Optional[Union[D.dtype, str]] = None, generator: Optional[Generator] = None,
              device: Optional[Union[Device, str]] = None) -> Tensor:
    """Uniform random values from ``[0, 1)`` shaped like ``input``, as ``torch.rand_like``.

    Args:
        input: the tensor whose shape (and by default dtype and device) is taken.
        dtype: the dtype; ``None`` means ``input``'s.
        generator: the random generator; ``None`` means the global one (seeded by ``manual_seed``).
        device: where to create it; ``None`` means ``input``'s device.

    Returns:
        The new tensor.
    """
    return rand(tuple(input.shape), dtype=dtype or input._dtype, generator=generator, device=_like_device(input, device))


def randn_like(input: Tensor, *, dtype: Optional[Union[D.dtype, str]] = None, generator: Optional[Generator] = None,
               device: Optional[Union[Device, str]] = None) -> Tensor:
    """Standard normal random values shaped like ``input``, as ``torch.randn_like``; arguments as
    :func:`rand_like`."""
    return randn(tuple(input.shape), dtype=dtype or input._dtype, generator=generator,
                 device=_like_device(input, device))


def randperm(n: int, *, generator: Optional[Generator] = None, dtype: Optional[Union[D.dtype, str]] = None,
             device: Optional[Union[Device, str]] = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0, ..., n - 1``, as ``torch.randperm``.

    Args:
        n: the number of values.
        generator: the random generator; ``None`` means the global one.
        dtype: the dtype; ``None`` means int64.
        device: where to create it; ``None`` means the CPU.
        requires_grad: record operations on it for autograd.

    Returns:
        A 1-D tensor of ``n`` values.

    Examples:
        >>> import flowvision.backend as flow
        >>> flow.randperm(4).sort().values
        tensor([0, 1, 2, 3])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    return _finish(_rng(generator).permutation(n).astype(_compute_np(dt)), dt, requires_grad, device)


def normal(mean: Union[float, Tensor] = 0.0, std: Union[float, Tensor] = 1.0, size: Optional[Sequence[int]] = None, *,
           generator: Optional[Generator] = None, dtype: Optional[Union[D.dtype, str]] = None) -> Tensor:
    """Normal random values with the given mean and standard deviation, as ``torch.normal``.

    Args:
        mean: the mean, a number or a tensor of per-element means.
        std: the standard deviation (non-negative), a number or a tensor.
        size: the shape; ``None`` means the broadcast shape of ``mean`` and ``std``.
        generator: the random generator; ``None`` means the global one.
        dtype: the dtype; ``None`` means that of the tensor argument, else the default dtype.

    Returns:
        The new tensor.

    Raises:
        RuntimeError: a negative ``std``.
    """
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


def bernoulli(input: Tensor, p: Optional[float] = None, *, generator: Optional[Generator] = None) -> Tensor:
    """Bernoulli draws: 1 with probability ``input`` (or ``p``) per element, else 0, as ``torch.bernoulli``.

    Args:
        input: the probabilities, in ``[0, 1]``; also gives the result's shape and dtype.
        p: one probability for every element instead of ``input``'s values.
        generator: the random generator; ``None`` means the global one.

    Returns:
        A tensor shaped like ``input`` of 0s and 1s.

    Raises:
        RuntimeError: a probability outside ``[0, 1]``.
    """
    probs = input._compute() if p is None else np.full(tuple(input.shape), p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: all elements of input must be in [0, 1]")
    arr = (_rng(generator).random(probs.shape) < probs).astype(_compute_np(input._dtype))
    return _finish(arr, input._dtype)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Optional[Generator] = None) -> Tensor:
    """Sample category indices from the distribution in each row of ``input``, as ``torch.multinomial``.

    Args:
        input: ``(K,)`` or ``(N, K)`` non-negative weights (normalised per row).
        num_samples: draws per row (at most ``K`` without replacement).
        replacement: draw with replacement.
        generator: the random generator; ``None`` means the global one.

    Returns:
        int64 indices, ``(num_samples,)`` or ``(N, num_samples)``.
    """
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
