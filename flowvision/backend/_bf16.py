"""bfloat16 storage: uint16 bit patterns (the top half of a float32), rounded to nearest even."""
import numpy as np


def f32_to_bf16(a):
    a = _c_array(a, np.float32)
    bits = a.view(np.uint32)
    # round-to-nearest-even on the dropped 16 bits; NaNs keep a quiet-NaN payload
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        rounded = np.where(nan, ((bits >> 16) | 0x0040).astype(np.uint16), rounded)
    return rounded


def bf16_to_f32(a):
    return (_c_array(a, np.uint16).astype(np.uint32) << 16).view(np.float32)


def _c_array(a, dt):
    # not np.ascontiguousarray: that turns 0-d arrays into shape (1,)
    a = np.asarray(a, dtype=dt)
    return a if a.flags["C_CONTIGUOUS"] else np.array(a, order="C")
