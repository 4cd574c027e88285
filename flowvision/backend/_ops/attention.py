"""Fused scaled-dot-product attention (float32, CPU): ``softmax(scale * q @ k^T + mask) @ v`` in one kernel
(``_C.sdpa``), reading q/k/v as the strided views they are (no copies of permuted heads).

For inputs of >= 4 dims the output is written into ``(..., Lq, H, Dv)`` memory and returned as its
``(..., H, Lq, Dv)`` view (as torch's CPU kernel does), so the usual ``x.transpose(1, 2).reshape(b, n, c)`` that
follows costs nothing. The backward pass (``_C.sdpa_backward``) recomputes each head's probabilities and forms its
gradients in cache, a head per task; broadcast batch dims and mask gradients take batched GEMMs instead.
"""
import numpy as np

from .. import _C
from .. import _kernels as K
from ..autograd.graph import Function
from ._util import unbroadcast

MAX_BATCH_DIMS = 4


def float_mask(mask):
    """A bool mask (True = attend) as the additive float32 mask 0 / -inf; a float mask as float32."""
    if mask is None:
        return None
    if mask.dtype == np.bool_:
        return np.where(mask, np.float32(0.0), np.float32(-np.inf))
    return mask if mask.dtype == np.float32 else mask.astype(np.float32)


def _output_buffer(q, k, v):
    """Uninitialised output: memory (..., Lq, H, Dv), returned as the (..., H, Lq, Dv) view, for (B, H, L, D)-style
    inputs of >= 4 dims; a plain (..., Lq, Dv) array for fewer (there dim -3 is usually the batch)."""
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    lq, dv = q.shape[-2], v.shape[-1]
    if len(batch) < 2:
        return np.empty(batch + (lq, dv), np.float32)
    mem = np.empty(batch[:-1] + (lq, batch[-1], dv), np.float32)
    return np.swapaxes(mem, -2, -3)


def _row_contiguous(x):
    return x if x.shape[-1] <= 1 or x.strides[-1] == x.itemsize else np.ascontiguousarray(x)


class ScaledDotProductAttention(Function):
    """forward(q, k, v, mask, scale=, is_causal=): mask is an additive float or a bool (True = attend) array."""
    capture_role = "sdpa"

    @staticmethod
    def forward(ctx, q, k, v, mask, scale=None, is_causal=False):
        q, k, v = _row_contiguous(q), _row_contiguous(k), _row_contiguous(v)
        m = float_mask(mask)
        scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else float(scale)
        ctx.save_for_backward(q, k, v, m)
        ctx.params = (scale, bool(is_causal), None if mask is None else mask.shape)
        return _C.sdpa(q, k, v, m, scale, bool(is_causal), _output_buffer(q, k, v))

    @staticmethod
    def backward(ctx, g):
        q, k, v, m = ctx.saved
        scale, is_causal, mask_shape = ctx.params
        need_q, need_k, need_v, need_m = ctx.needs_input_grad[:4]
        g = _row_contiguous(g.astype(np.float32, copy=False))
        if not need_m and q.shape[:-2] == k.shape[:-2] == v.shape[:-2] and g.ndim == q.ndim:
            # one head per task, recomputing its probabilities in cache (the usual self-attention case)
            gq, gk, gv = _C.sdpa_backward(q, k, v, m, scale, is_causal, g)
            return gq if need_q else None, gk if need_k else None, gv if need_v else None, None
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        probs = np.empty(batch + (q.shape[-2], k.shape[-2]), np.float32)
        _C.sdpa(q, k, v, m, scale, is_causal, None, probs)
        gq = gk = gv = gm = None
        if need_v:
            gv = unbroadcast(K.matmul(np.swapaxes(probs, -1, -2), g), v.shape)
        if need_q or need_k or need_m:
            dp = K.matmul(g, np.swapaxes(v, -1, -2))
            ds = _C.softmax_backward(dp, probs)  # probs * (dp - rowsum(dp * probs)) in one parallel pass
            if need_m:
                gm = unbroadcast(ds, mask_shape)
            if need_q:
                gq = unbroadcast(K.matmul(ds, k) * np.float32(scale), q.shape)
            if need_k:
                gk = unbroadcast(K.matmul(np.swapaxes(ds, -1, -2), q) * np.float32(scale), k.shape)
        return gq, gk, gv, gm


def fused_sdpa_supported(query, key, value, attn_mask):
    """Whether the fused kernel takes these operands (float32 CPU tensors, <= 4 batch dims, a bool or float32
    mask that broadcasts without enlarging the output)."""
    from .. import _dtype as D
    if not hasattr(_C, "sdpa"):
        return False
    for t in (query, key, value):
        if t._dtype is not D.float32 or t._device.type != "cpu" or not 2 <= t.ndim <= MAX_BATCH_DIMS + 2:
            return False
    try:
        batch = np.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]), tuple(value.shape[:-2]))
    except ValueError:
        return False  # let the composite path raise torch's error
    if attn_mask is not None:
        if (attn_mask._device.type != "cpu" or attn_mask._dtype not in (D.float32, D.bool)
                or attn_mask.ndim < 2):
            return False
        full = tuple(batch) + (query.shape[-2], key.shape[-2])
        try:
            if np.broadcast_shapes(tuple(attn_mask.shape), full) != full:
                return False
        except ValueError:
            return False
    return True
