"""Backend-tensor kernels: ``(..., C, H, W)`` tensors go through the numpy kernels.

A CPU ``flowvision.backend.Tensor`` wraps a numpy array, so every kernel here is
"view as (..., H, W, C) numpy, run the numpy kernel, view back as (..., C, H, W)". The
channel moves are views; only the final ``ascontiguousarray`` may copy.
"""
import numpy as np

from . import _functional_numpy as F_np

_fb = None


def backend():
    global _fb
    if _fb is None:
        from flowvision import backend as fb

        _fb = fb
    return _fb


def is_tensor(x):
    mod = type(x).__module__ or ""
    if not mod.startswith("flowvision"):
        return False
    try:
        return backend().is_tensor(x)
    except Exception:  # pragma: no cover - backend missing
        return False


def np_dtype(dtype):
    """Backend dtype (or numpy dtype) -> numpy dtype."""
    if hasattr(dtype, "np"):
        return np.dtype(dtype.np)
    return np.dtype(dtype)


def fb_dtype(np_dt):
    fb = backend()
    np_dt = np.dtype(np_dt)
    for name in ("uint8", "float32", "float64", "float16", "int64", "int32", "int16", "int8", "bool"):
        d = getattr(fb, name, None)
        if d is not None and np.dtype(d.np) == np_dt:
            return d
    raise TypeError(f"no backend dtype for {np_dt}")


def _is_bf16(t):
    fb = backend()
    return getattr(fb, "bfloat16", None) is not None and t.dtype == fb.bfloat16


def to_numpy(t):
    """Tensor -> its numpy array (no copy); bfloat16 comes out as float32."""
    if getattr(t, "requires_grad", False):
        t = t.detach()
    if _is_bf16(t):
        return t.float().numpy()
    return t.numpy()


def from_numpy(a, like=None):
    fb = backend()
    a = np.ascontiguousarray(a)
    out = fb.from_numpy(a)
    if like is not None and _is_bf16(like) and out.dtype != like.dtype:
        out = out.to(like.dtype)
    return out


def to_hwc(t):
    """(..., C, H, W) tensor -> (..., H, W, C) numpy view, and whether it was 2-D."""
    a = to_numpy(t)
    if a.ndim < 2:
        raise ValueError(f"Tensor is not a torch image: expected at least 2 dimensions, got {a.ndim}")
    two_d = a.ndim == 2
    if two_d:
        a = a[None]
    return F_np.chw_to_hwc(a), two_d


def from_hwc(a, two_d=False, like=None):
    a = F_np.to_planar(a)
    if two_d and a.shape[0] == 1:
        a = a[0]
    return from_numpy(a, like)


def apply(kernel, t, *args, **kwargs):
    a, two_d = to_hwc(t)
    return from_hwc(kernel(a, *args, **kwargs), two_d, like=t)


def get_dimensions(t):
    shape = tuple(t.shape)
    if len(shape) < 2:
        raise TypeError(f"Tensor is not a torch image: got {len(shape)} dimensions")
    c = 1 if len(shape) == 2 else shape[-3]
    return [c, shape[-2], shape[-1]]
