"""CPU autocast's per-op dtype policy (torch's CPU lists), applied at the op's entry point.

Under ``autocast("cpu")`` (bfloat16 by default) torch runs the ``lower_precision_fp`` ops (linear, matmul/mm/bmm/
addmm/baddbmm/addbmm, linalg.vecdot, conv*, conv_transpose*, prelu, scaled_dot_product_attention) with their floating
inputs cast to the autocast dtype, runs the ``fp32`` ops with reduced-precision inputs cast up to float32 (the losses,
prod, trace, cdist, grid_sample, reflect/replicate padding, fft.*, the linalg decompositions and solves, polar,
view_as_complex: those of torch's list that exist here), and leaves every other op in its inputs' dtype (softmax,
layer_norm, group_norm, cumsum, ... are not on torch's CPU list, unlike its CUDA one).  ``lower_precision`` / ``fp32`` are the decorators that
implement those two lists here.  float64 inputs are never cast (as in torch).

The engine computes bfloat16 in float32 and rounds each result to bfloat16 (``_bf16``): the inputs are rounded to
bfloat16, the products are accumulated in float32 and the output is rounded, which is what torch's CPU bfloat16
GEMM/convolution (float32 accumulation) produce up to summation order.  The casts are recorded by autograd, so
float32 parameters get float32 gradients.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.enabled = False
        self.dtype = None


state = _State()


def _cast_floats(args, kwargs, to, keep):
    from ._tensor import Tensor
    from ._ops.elementwise import cast

    def conv(a):
        if isinstance(a, Tensor) and a._dtype.is_floating_point and a._dtype is not to and a._dtype not in keep:
            return cast(a, to)
        return a
    return tuple(conv(a) for a in args), {k: conv(v) for k, v in kwargs.items()}


def lower_precision(fn):
    """Run ``fn`` with floating tensor arguments in the autocast dtype while CPU autocast is on."""
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        if state.enabled:
            from . import _dtype as D
            args, kwargs = _cast_floats(args, kwargs, state.dtype, (D.float64,))
        return fn(*args, **kwargs)
    return inner


def cast_fp32(t):
    """``t`` cast up to float32 while CPU autocast is on, if it is a reduced-precision floating tensor (for ops on
    torch's fp32 list in some modes only, such as ``pad`` in reflect/replicate mode)."""
    if state.enabled:
        from . import _dtype as D
        return _cast_floats((t,), {}, D.float32, (D.float64,))[0][0]
    return t


def fp32(fn):
    """Run ``fn`` with reduced-precision floating tensor arguments cast to float32 while CPU autocast is on."""
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        if state.enabled:
            from . import _dtype as D
            args, kwargs = _cast_floats(args, kwargs, D.float32, (D.float64,))
        return fn(*args, **kwargs)
    return inner
