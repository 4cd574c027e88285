"""bfloat16 without a bfloat16 numpy dtype.

numpy has no bfloat16. Checkpoint readers return bfloat16 tensors as :class:`Bf16Array`: a
``numpy.uint16`` array of the raw bit patterns (the top half of the float32 bits), marked so
a caller knows what the bits mean. This is the same storage the flowvision engine uses for
its ``bfloat16`` dtype (uint16 bit patterns), so it converts without touching the data.

* ``isinstance(a, Bf16Array)`` tells a bfloat16 tensor apart from a real uint16 one.
* ``a.to_float32()`` widens exactly (every bfloat16 value is a float32 value).
* ``a.bits`` is the plain ``uint16`` ndarray view.
* Arithmetic ufuncs on a Bf16Array raise TypeError (they would compute on bit patterns);
  slicing, reshaping, copying and ``==`` work as on any array.
"""
import numpy as np
from typing import Any

__all__ = ["Bf16Array", "bf16_to_float32", "float32_to_bf16", "is_bf16"]

_ALLOWED_UFUNCS = frozenset({"equal", "not_equal"})


class Bf16Array(np.ndarray):
    """uint16 bit patterns of bfloat16 values (see the module docstring)."""

    is_bfloat16 = True

    def __new__(cls, bits):
        arr = np.asarray(bits)
        if arr.dtype != np.uint16:
            raise TypeError(f"Bf16Array holds uint16 bit patterns, got dtype {arr.dtype}")
        return arr.view(cls)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc.__name__ not in _ALLOWED_UFUNCS:
            raise TypeError(f"numpy.{ufunc.__name__} on a Bf16Array would compute on bfloat16 bit patterns; "
                            "call .to_float32() first")
        inputs = tuple(x.view(np.ndarray) if isinstance(x, Bf16Array) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    @property
    def bits(self):
        """The uint16 bit patterns as a plain ndarray (no copy)."""
        return self.view(np.ndarray)

    def to_float32(self):
        return bf16_to_float32(self)

    def __reduce__(self):  # pickle as the plain bits plus the marker
        return (Bf16Array, (self.view(np.ndarray).copy(),))

    def __repr__(self):
        return f"Bf16Array({self.to_float32()!r} as bfloat16)"


def is_bf16(a):
    return isinstance(a, Bf16Array)


def bf16_to_float32(bits: Any) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values, exactly."""
    b = np.asarray(bits.view(np.ndarray) if isinstance(bits, np.ndarray) else bits, dtype=np.uint16, order="C")
    return (b.astype(np.uint32) << 16).view(np.float32)


def float32_to_bf16(values: Any) -> np.ndarray:
    """float32 -> Bf16Array, rounding to nearest even (NaNs stay NaN)."""
    f = np.asarray(values, dtype=np.float32, order="C")
    u = f.view(np.uint32)
    rounded = ((u + (0x7FFF + ((u >> 16) & 1))) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded[nan] = ((u[nan] >> 16) | 0x0040).astype(np.uint16)
    return Bf16Array(rounded)
