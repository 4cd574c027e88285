"""The thin layer between ops and the compiled kernels: dtype dispatch and contiguity.

The compiled kernels take C-contiguous float32/float64 arrays; anything else (float16, integers)
is computed here in numpy in float32 and cast back.
"""
import numpy as np

from . import _C

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the compiled kernels take


def kernel_dtype(*arrays):
    return all(a.dtype in FLOAT_DTYPES for a in arrays) and len({a.dtype for a in arrays}) == 1


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


# ------------------------------------------------------------------ weights packed once
# id(weight tensor) -> (weakref to it, its data array, version, isa, _C.PackedB). A cached entry is used only
# while the tensor still holds the same array at the same version (every in-place op, optimizer step and
# load_state_dict bumps `_version[0]`) and the same ISA is in use; otherwise the weight is packed again.
# Writes that bypass the tensor API (e.g. `w.numpy()[:] = ...`) are not seen: call clear_packed_cache().
_PACKED = {}


def clear_packed_cache():
    _PACKED.clear()


def packed_weight(w, kind="linear"):
    """Weight tensor `w` packed once per version: kind "linear" -> `_C.PackedB` of an (N, K) Linear weight (the
    right operand, transposed); kind "conv1x1" -> `_C.PackedA` of an (O, C, 1, 1) conv weight (the left operand)."""
    import weakref
    key = (id(w), kind)
    isa = _C.cpu_isa()
    e = _PACKED.get(key)
    # a tensor in shared memory also counts updates made by other processes (multiprocessing._shared)
    shared = getattr(w._version, "shared", None)
    version = (w._version[0], shared()) if shared is not None else w._version[0]
    if e is not None and e[0]() is w and e[1] is w._data and e[2] == version and e[3] == isa:
        return e[4]
    if kind == "linear":
        pk = _C.pack_b(w._data, True)
    elif kind == "conv1x1_b":  # a 1x1 conv weight as the right operand (inputs with one pixel: SE blocks)
        pk = _C.pack_b(np.ascontiguousarray(w._data).reshape(w._data.shape[0], -1), True)
    else:
        pk = _C.pack_a(np.ascontiguousarray(w._data).reshape(w._data.shape[0], -1))
    _PACKED[key] = (weakref.ref(w, lambda _r, k=key: _PACKED.pop(k, None)), w._data, version, isa, pk)
    return pk


def _out_view(out, result_shape, kernel_shape, fn):
    """out= of the packed wrappers: the caller's C-contiguous array of the result's shape, viewed as the kernel's
    2-D / 3-D output (dtype, writeability and overlaps are checked by the kernel)."""
    if out is None:
        return None
    if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or out.shape != tuple(result_shape):
        raise ValueError(f"{fn}: out must be a C-contiguous numpy array of shape {tuple(result_shape)}, got "
                         f"{getattr(out, 'shape', type(out).__name__)}")
    return out.reshape(kernel_shape)  # a view: the kernel writes into the caller's memory


def linear_packed(x, w, b=None, epilogue="none", residual=None, out=None):
    """y = epilogue(x @ w.T + b + residual) for arrays x (..., K) / b / residual (..., N) and weight *tensor* w
    (N, K), with the weight packed once (see packed_weight). float32/float64 only. out: a C-contiguous array of the
    result's shape to write into (may be the residual itself)."""
    pk = packed_weight(w)
    lead = x.shape[:-1]
    x2 = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
    r2 = None if residual is None else np.ascontiguousarray(residual).reshape(-1, pk.N)
    o2 = _out_view(out, lead + (pk.N,), (x2.shape[0], pk.N), "linear_packed")
    y = _C.gemm_packed(x2, pk, b, epilogue, r2, out=o2)
    return out if out is not None else y.reshape(lead + (pk.N,))


def conv1x1_packed(x, w, b=None, epilogue="none", residual=None, out=None):
    """NCHW 1x1 stride-1 unpadded ungrouped convolution of array x (N, C, H, W) with weight *tensor* w (O, C, 1, 1)
    (packed once, see packed_weight), bias b (O,) fused; returns (N, O, H, W) (written into out if given)."""
    n, c, h, wd = x.shape
    if h * wd == 1:  # one pixel (squeeze-excitation convs): a Linear over the images, few-row GEMM kernel
        pk = packed_weight(w, "conv1x1_b")
        r2 = None if residual is None else np.ascontiguousarray(residual).reshape(n, pk.N)
        o2 = _out_view(out, (n, pk.N, 1, 1), (n, pk.N), "conv1x1_packed")
        y = _C.gemm_packed(np.ascontiguousarray(x).reshape(n, c), pk, b, epilogue, r2, out=o2)
        return out if out is not None else y.reshape(n, pk.N, 1, 1)
    pk = packed_weight(w, "conv1x1")
    x3 = np.ascontiguousarray(x).reshape(n, c, h * wd)
    r3 = None if residual is None else np.ascontiguousarray(residual).reshape(n, pk.M, h * wd)
    o3 = _out_view(out, (n, pk.M, h, wd), (n, pk.M, h * wd), "conv1x1_packed")
    y = _C.gemm_packed_a(pk, x3, b, epilogue, r3, out=o3)
    return out if out is not None else y.reshape(n, pk.M, h, wd)


# ------------------------------------------------------------------ NHWC direct convolution
def packed_conv(w, groups=1):
    """float32 conv weight *tensor* w (O, C/groups, KH, KW) packed once per version for `_C.conv2d_nhwc` (the same
    cache and invalidation rules as packed_weight; the key also holds `groups`)."""
    import weakref
    key = (id(w), f"conv_nhwc/g{int(groups)}")
    isa = _C.cpu_isa()
    e = _PACKED.get(key)
    # a tensor in shared memory also counts updates made by other processes (multiprocessing._shared)
    shared = getattr(w._version, "shared", None)
    version = (w._version[0], shared()) if shared is not None else w._version[0]
    if e is not None and e[0]() is w and e[1] is w._data and e[2] == version and e[3] == isa:
        return e[4]
    pk = _C.pack_conv(np.ascontiguousarray(w._data, dtype=np.float32), int(groups))
    _PACKED[key] = (weakref.ref(w, lambda _r, k=key: _PACKED.pop(k, None)), w._data, version, isa, pk)
    return pk


def conv2d_nhwc(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, epilogue="none",
                residual=None, lo=0.0, hi=0.0, out=None):
    """y (N, OH, OW, O) = epilogue(conv(x, w) + b + residual) for a float32 NHWC array x (N, H, W, C) and weight
    *tensor* w (O, C/groups, KH, KW), packed once (see packed_conv); residual (N, OH, OW, O) is added before the
    activation."""
    return _C.conv2d_nhwc(x, packed_conv(w, groups), b, list(stride), list(padding), list(dilation), epilogue,
                          residual, lo, hi, out)


def conv2d_nchw_direct(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """NCHW float32 array x through the NHWC direct kernel: one cache-blocked transpose in; the kernel writes NCHW
    (the general kernel stores its tiles transposed; depthwise / narrow-group ones transpose once at the end)."""
    return _C.conv2d_nhwc_to_nchw(_C.nchw_to_nhwc(x), packed_conv(w, groups), b, list(stride), list(padding),
                                  list(dilation))
