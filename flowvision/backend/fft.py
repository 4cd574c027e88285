"""``torch.fft``: the real-valued helpers (``fftfreq``, ``rfftfreq``, ``fftshift``, ``ifftshift``).

The transforms themselves return complex tensors, and this engine has no complex dtype: ``fft``/``rfft``/... raise
``NotImplementedError`` naming the way out (``numpy.fft`` on ``tensor.numpy()``).
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft", "ifft", "rfft", "irfft", "fft2", "ifft2",
           "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft", "ihfft"]


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an ``n``-point FFT with spacing ``d`` (torch's order: 0, positive, negative)."""
    from ._creation import tensor
    from ._dtype import get_default_dtype
    dt = dtype or get_default_dtype()
    return tensor(np.fft.fftfreq(n, d), dtype=dt, device=device, requires_grad=requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from ._creation import tensor
    from ._dtype import get_default_dtype
    dt = dtype or get_default_dtype()
    return tensor(np.fft.rfftfreq(n, d), dtype=dt, device=device, requires_grad=requires_grad)


def _shift(input: Tensor, dim, sign: int) -> Tensor:
    dims = tuple(range(input.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    shifts = tuple(sign * (input.shape[d] // 2) if sign > 0 else -(input.shape[d] // 2) for d in dims)
    return input.roll(shifts, dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero-frequency term to the centre (differentiable: a roll)."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    return _shift(input, dim, -1)


def _complex(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.fft.{name} returns a complex tensor, and flowvision's engine has no complex "
                                  f"dtype; compute it with numpy.fft.{name}(tensor.numpy()) and keep the real parts "
                                  "you need")
    fn.__name__ = name
    return fn


fft, ifft, rfft, irfft = _complex("fft"), _complex("ifft"), _complex("rfft"), _complex("irfft")
fft2, ifft2, rfft2, irfft2 = _complex("fft2"), _complex("ifft2"), _complex("rfft2"), _complex("irfft2")
fftn, ifftn, rfftn, irfftn = _complex("fftn"), _complex("ifftn"), _complex("rfftn"), _complex("irfftn")
hfft, ihfft = _complex("hfft"), _complex("ihfft")
