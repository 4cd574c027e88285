"""``torch.autocast`` / ``torch.amp.autocast``."""
from __future__ import annotations

import functools

from .. import _dtype as D
from .. import _autocast_policy as _policy

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]

_DEFAULT = {"cuda": D.float16, "cpu": D.bfloat16}




def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    if device_type == "cuda":
        from .._cuda.autocast import state
        return bool(state.enabled)
    return _policy.state.enabled


def get_autocast_dtype(device_type: str):
    if device_type == "cuda":
        from .._cuda.autocast import state
        return state.dtype or D.float16
    return _policy.state.dtype or D.bfloat16


class autocast:
    """Mixed-precision region for ``device_type`` ("cuda" or "cpu"); also a decorator."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in ("cuda", "cpu"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type = device_type
        self.fast_dtype = D.as_dtype(dtype) if dtype is not None else _DEFAULT[device_type]
        if self.fast_dtype not in (D.float16, D.bfloat16):
            raise RuntimeError(f"In autocast, but the target dtype is not supported: {self.fast_dtype}")
        self._enabled = bool(enabled)
        if device_type == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                import warnings
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
                self._enabled = False

    def __enter__(self):
        if self.device_type == "cuda":
            from .._cuda.autocast import autocast as cuda_autocast
            self._inner = cuda_autocast(self._enabled, self.fast_dtype)
            self._inner.__enter__()
        else:
            st = _policy.state
            self._prev = (st.enabled, st.dtype)
            st.enabled, st.dtype = self._enabled, self.fast_dtype
        return self

    def __exit__(self, *exc):
        if self.device_type == "cuda":
            self._inner.__exit__(*exc)
        else:
            _policy.state.enabled, _policy.state.dtype = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return inner
