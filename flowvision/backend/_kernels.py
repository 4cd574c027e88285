"""The thin layer between ops and the compiled kernels: dtype dispatch and contiguity.

The compiled kernels take C-contiguous float32/float64 arrays; anything else (float16, integers)
is computed here in numpy in float32 and cast back.
"""
import numpy as np

from . import _C

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def kernel_dtype(*arrays):
    return all(a.dtype in _FLOATS for a in arrays) and len({a.dtype for a in arrays}) == 1


def matmul(a, b):
    """Batched (..., M, K) @ (..., K, N) with numpy broadcasting of batch dims."""
    if not kernel_dtype(a, b) or not hasattr(_C, "gemm"):
        if a.dtype == np.float16:
            return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        return np.matmul(a, b)
    if b.ndim == 2 and a.ndim > 2:  # fold a's batch into M: one big GEMM, no broadcast copy of b
        lead = a.shape[:-1]
        b3, tb = _as_3d(b, ())
        out = _C.gemm(np.ascontiguousarray(a).reshape(1, -1, a.shape[-1]), b3, False, tb)
        return out.reshape(lead + (b.shape[-1],))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k = a.shape[-2:]
    n = b.shape[-1]
    # a transposed-contiguous operand is passed as-is with a transpose flag (no copy)
    a3, ta = _as_3d(a, batch)
    b3, tb = _as_3d(b, batch)
    out = _C.gemm(a3, b3, ta, tb)
    return out.reshape(batch + (m, n))


def _as_3d(x, batch):
    """Return (array of shape (B, r, c) C-contiguous, transposed?) for x broadcast to batch."""
    if x.shape[:-2] != batch:
        x = np.broadcast_to(x, batch + x.shape[-2:])
    r, c = x.shape[-2:]
    bsz = int(np.prod(batch)) if batch else 1
    xt = np.swapaxes(x, -1, -2)
    if not x.flags["C_CONTIGUOUS"] and xt.flags["C_CONTIGUOUS"] and x.ndim >= 2:
        return xt.reshape(bsz, c, r), True
    return np.ascontiguousarray(x).reshape(bsz, r, c), False
