"""clip_grad_norm_ / clip_grad_value_ with torch's math (norm of the per-tensor norms, coef clamped to 1)."""
import math

import numpy as np

from ..._tensor import Tensor
from ... import _dtype as D

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _f32(t):
    return t._compute()


def _norm(arr, norm_type):
    a = np.abs(arr.astype(np.float32, copy=False)) if arr.dtype != np.float64 else np.abs(arr)
    if norm_type == math.inf:
        return a.max() if a.size else a.dtype.type(0)
    if norm_type == -math.inf:
        return a.min() if a.size else a.dtype.type(0)
    if norm_type == 0:
        return a.dtype.type(np.count_nonzero(a))
    if norm_type == 2:
        return np.sqrt(np.sum(a * a, dtype=a.dtype))
    return np.sum(a ** norm_type, dtype=a.dtype) ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return Tensor._wrap(np.array(0.0, np.float32))
    norms = np.array([_norm(_f32(t), norm_type) for t in tensors])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return Tensor._wrap(np.asarray(total, dtype=norms.dtype))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    tn = total_norm._compute() if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    coef = np.float32(max_norm) / (tn.astype(np.float32) + np.float32(1e-6))
    coef = np.minimum(coef, np.float32(1.0))
    for g in grads:
        _scale_inplace(g, coef)


def _scale_inplace(g, coef):
    if g._dtype is D.bfloat16:
        from ..._bf16 import bf16_to_f32, f32_to_bf16
        g._data[...] = f32_to_bf16(bf16_to_f32(g._data) * coef)
    else:
        np.multiply(g._data, coef.astype(g._data.dtype), out=g._data)
    g._version[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients so their joint ``norm_type`` norm is at most ``max_norm``; returns the total norm."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings
    warnings.warn("nn.utils.clip_grad_norm is now deprecated in favor of nn.utils.clip_grad_norm_.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    for g in _grads(parameters):
        if g._dtype is D.bfloat16:
            from ..._bf16 import bf16_to_f32, f32_to_bf16
            g._data[...] = f32_to_bf16(np.clip(bf16_to_f32(g._data), -clip_value, clip_value))
        else:
            np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._version[0] += 1
