"""The host array namespace an op's backward (and device-neutral forward) is written against.

``ctx.xp`` is this namespace on the CPU and ``flowvision.backend._cuda.xp`` on a CUDA device. Here it is numpy,
extended with the CPU kernels of ``_C`` (``xp.conv2d_backward_input``, ``xp.softmax_backward``, ...) and the few
helpers whose numpy spelling differs from a device array's (basic-index read/write). The CUDA namespace offers
the same names with the same argument order, so one backward serves both devices.
"""
import numpy as np

from . import _C


class HostNamespace:
    """numpy's functions, then ``_C``'s kernels, as attributes (looked up once, then cached)."""

    float32, float16, int64, bool_ = np.float32, np.float16, np.int64, np.bool_

    def __getattr__(self, name):
        try:
            value = getattr(np, name)
        except AttributeError:
            value = getattr(_C, name)
        setattr(self, name, value)
        return value

    @staticmethod
    def getitem(a, index):
        """``a[index]`` (basic index)."""
        return a[index]

    @staticmethod
    def scatter_grad(shape, index, g):
        """The gradient of a basic-index view: zeros(shape) with ``g`` at ``index``, kept lazy (``ScatteredGrad``)
        so the engine writes several slices of one tensor (q, k, v of a fused projection) into one buffer."""
        from .autograd.graph import ScatteredGrad
        return ScatteredGrad(tuple(shape), index, g)

    @staticmethod
    def put(shape, index, src, dtype, base=None):
        """An array of ``shape`` (zeros, or ``base``) with ``src`` written at the basic index ``index``."""
        out = np.zeros(shape, dtype) if base is None else base
        out[index] = src
        return out

    @staticmethod
    def index_add(shape, dim, index, g):
        """zeros(shape) with ``g`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
        out = np.zeros(shape, g.dtype)
        np.add.at(out, (slice(None),) * dim + (index,), g)
        return out

    @staticmethod
    def add_at(shape, index, g):
        """zeros(shape) with ``g`` added at the advanced index ``index`` (repeated indices accumulate)."""
        out = np.zeros(shape, g.dtype)
        np.add.at(out, index, g)
        return out

    @staticmethod
    def put_along_axis_zeros(shape, index, values, axis):
        """zeros(shape) with ``values`` put at ``index`` along ``axis``."""
        out = np.zeros(shape, values.dtype)
        np.put_along_axis(out, index, values, axis=axis)
        return out

    @staticmethod
    def to_storage(a, dtype):
        """``a`` (compute dtype) in the storage of flowvision dtype ``dtype`` (bfloat16: uint16 bit patterns)."""
        from .autograd.graph import _to_storage
        return _to_storage(a, dtype)

    @staticmethod
    def sigmoid(x):
        from ._ops.elementwise import _sigmoid
        return _sigmoid(x)

    @staticmethod
    def gemm(a, b, bias=None, trans_a=False, trans_b=False):
        """op(a) @ op(b) (+ bias per output column) for 2-D arrays."""
        y = (a.T if trans_a else a) @ (b.T if trans_b else b)
        return y if bias is None else y + bias

    @staticmethod
    def bmm(a, b):
        """(..., M, K) @ (..., K, N) with numpy batch broadcasting, on the engine's GEMM."""
        from ._kernels import matmul
        return matmul(a, b)


HOST = HostNamespace()


def namespace(a):
    """The array namespace of array ``a``: HOST for a numpy array, the device's for a device array."""
    return getattr(type(a), "_fv_xp", HOST)
