"""The CPU algorithm choice for convolution and linear layers, shared by eager (``nn.functional``) and the
captured path (``_capture``), so both take the same kernel for the same shape.

Convolution algorithms:

``"gemm_1x1"``
    a 1x1, unpadded, ungrouped convolution as one GEMM with the weight packed once (a strided one reads the
    subsampled input).
``"nhwc_direct"``
    the direct NHWC kernel (``_C.conv2d_nhwc``, weights packed once, epilogues fused): always in a captured plan,
    which keeps activations NHWC between convolutions; in eager, where each call pays an NCHW -> NHWC -> NCHW
    transpose pair, only for the shapes where the kernel still wins (measured with benchmarks/bench_conv.py).
``"winograd"``
    in a captured plan, a float32 unit-stride 3x3 conv (dilated too) whose shapes pass ``_C.winograd_plan_suits``:
    Winograd F(4x4, 3x3) on NHWC activations with the filters transformed once (``pack_conv(..., winograd=True)``),
    epilogues fused like the direct kernel's. Not inside ``direct_plans()``, which ``compile`` uses to rebuild a plan whose
    Winograd convs put it outside the validation tolerance (very deep or ill-conditioned nets).
``"im2col"``
    the general NCHW kernel (``_C.conv2d_forward``: im2col + GEMM), the one autograd's ``Conv2d`` op runs.

In a captured plan, a 1x1 expansion whose only reader is a depthwise conv runs with it as one step
(``_C.ExecPlan`` kind ``conv_pw_dw``: the expanded tensor is produced band by band and never leaves the cache), with
outputs bit-identical to the two steps; ``separate_pw_dw()`` turns that off (the before / after baseline).

Eager takes the packed-weight algorithms only for inference calls (no gradient recorded); ``reference_kernels()``
turns them off for the calling thread, so a reference run (``compile``'s validation, a before/after benchmark)
uses the unpacked kernels and leaves no packed weight copies behind.
"""
import contextlib
import contextvars
from typing import Iterator, Sequence

import numpy as np

from .. import _C

_REFERENCE = contextvars.ContextVar("flowvision_reference_kernels", default=False)
_F32 = np.dtype(np.float32)
_HAS_NHWC = hasattr(_C, "conv2d_nhwc")  # the build's kernels (fixed at import; the selector runs per eager call)


_WINOGRAD_PLANS = contextvars.ContextVar("flowvision_winograd_plans", default=True)


@contextlib.contextmanager
def direct_plans() -> Iterator[None]:
    """Within the block (this thread / task only), captured plans use the direct NHWC kernel for every KxK conv."""
    token = _WINOGRAD_PLANS.set(False)
    try:
        yield
    finally:
        _WINOGRAD_PLANS.reset(token)


_FUSE_PW_DW = contextvars.ContextVar("flowvision_fuse_pw_dw", default=True)


@contextlib.contextmanager
def separate_pw_dw() -> Iterator[None]:
    """Within the block (this thread / task only), captured plans run a 1x1 expansion and the depthwise conv
    reading it as two steps."""
    token = _FUSE_PW_DW.set(False)
    try:
        yield
    finally:
        _FUSE_PW_DW.reset(token)


def fuse_pw_dw() -> bool:
    """Whether plans built now fuse a 1x1 expansion with the depthwise conv that reads it."""
    return _FUSE_PW_DW.get() and hasattr(_C, "ExecPlan")


@contextlib.contextmanager
def reference_kernels() -> Iterator[None]:
    """Within the block (this thread / task only), eager conv2d / linear use the unpacked reference kernels, and
    the autograd convs their direct algorithms (no Winograd)."""
    token = _REFERENCE.set(True)
    previous = _C._set_reference_kernels_thread(True)  # and no Winograd in the training convs of this thread
    try:
        yield
    finally:
        _C._set_reference_kernels_thread(previous)
        _REFERENCE.reset(token)


def packed_allowed() -> bool:
    """Whether eager may use the packed-weight kernels (False inside ``reference_kernels()``)."""
    return not _REFERENCE.get()


def nhwc_kernels() -> bool:
    """Whether this build has the NHWC direct convolution kernels."""
    return _HAS_NHWC


def eager_direct_ok(x_shape: Sequence[int], w_shape: Sequence[int], groups: int, dtype) -> bool:
    """Eager's rule for the direct kernel with its two layout transposes: float32, and not groups of odd widths (other than 1,
    2, 4, 8 or >= 16 channels per group the OC block would be mostly padding), and not cheap convs (< 200 FLOPs per
    output element: depthwise, 3-channel 3x3) on large maps, where the transposes cost more than the kernel
    saves."""
    if dtype != _F32 or not _HAS_NHWC:
        return False
    ocg, icg = w_shape[0] // groups, w_shape[1]
    if groups > 1 and not (ocg == icg and ocg in (1, 2, 4, 8)) and ocg < 16:
        return False
    return 2 * icg * w_shape[2] * w_shape[3] >= 200 or x_shape[2] * x_shape[3] <= 64 * 64


def conv_algorithm(x_shape: Sequence[int], w_shape: Sequence[int], padding: Sequence[int], groups: int,
                   dtype, *, nhwc_activations: bool = False, stride: Sequence[int] = (1, 1),
                   dilation: Sequence[int] = (1, 1)) -> str:
    """The convolution algorithm for these shapes.

    Args:
        x_shape: the (N, C, H, W) input shape.
        w_shape: the (O, C / groups, KH, KW) weight shape.
        padding: (ph, pw).
        groups: channel groups.
        dtype: the activations' numpy dtype (float32 / float64 have compiled kernels).
        nhwc_activations: the activations are (or may be kept) channels-last, as in a captured plan.
        stride: (sh, sw).
        dilation: (dh, dw).

    Returns:
        ``"gemm_1x1"``, ``"winograd"``, ``"nhwc_direct"`` or ``"im2col"`` (see the module docstring).
    """
    if nhwc_activations and dtype == _F32 and _HAS_NHWC:
        if _WINOGRAD_PLANS.get() and _C.winograd_plan_suits(list(x_shape), list(w_shape), list(stride),
                                                             list(padding), list(dilation), int(groups)):
            return "winograd"
        return "nhwc_direct"
    if w_shape[2] == 1 and w_shape[3] == 1 and padding[0] == 0 and padding[1] == 0 and groups == 1:
        return "gemm_1x1"
    if not nhwc_activations and eager_direct_ok(x_shape, w_shape, groups, dtype):
        return "nhwc_direct"
    return "im2col"
