"""``torch.fft``: the transforms (numpy's pocketfft) with torch's gradients, on complex64/complex128 tensors, plus
the real-valued helpers (``fftfreq``, ``rfftfreq``, ``fftshift``, ``ifftshift``)."""
from __future__ import annotations

import numpy as np

from . import _autocast_policy as _amp
from ._tensor import Tensor
from .autograd.graph import Function

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


class _FFT(Function):
    """One transform over ``dims`` (numpy.fft) with the gradient torch gives it.

    kind: "c2c" (fftn / ifftn), "r2c" (rfftn: one-sided along the last dim), "c2r" (irfftn).  ``scale`` is the
    normalisation factor the forward applied on top of the unnormalised transform; the backward is the adjoint
    unnormalised transform times the same factor, followed by cropping/zero-padding back to the input's size.
    """

    @staticmethod
    def forward(ctx, x, kind, inverse, sizes, dims, norm):
        ctx.kind, ctx.inverse, ctx.dims, ctx.in_shape = kind, inverse, dims, x.shape
        ctx.real_input = x.dtype.kind != "c"
        if kind == "c2c":
            fn = np.fft.ifftn if inverse else np.fft.fftn
            y = fn(x, s=sizes, axes=dims, norm=norm)
        elif kind == "r2c":
            y = np.fft.rfftn(x, s=sizes, axes=dims, norm=norm)
        else:
            y = np.fft.irfftn(x, s=sizes, axes=dims, norm=norm)
        ctx.sizes = sizes  # signal lengths along dims (output lengths for c2r)
        n = float(np.prod(sizes)) if sizes else 1.0
        ctx.scale = _scale(norm, n, inverse)
        cdt = np.complex128 if x.dtype in (np.float64, np.complex128) else np.complex64
        return y.astype(cdt if kind != "c2r" else np.dtype(cdt).type(0).real.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        dims, sizes, scale = ctx.dims, ctx.sizes, ctx.scale
        if ctx.kind == "c2c":
            # adjoint of the (un-normalised) DFT is the un-normalised inverse, and vice versa
            gx = (np.fft.fftn(g, axes=dims, norm="backward") if ctx.inverse
                  else np.fft.ifftn(g, axes=dims, norm="forward")) * scale
        elif ctx.kind == "r2c":
            full = list(g.shape)
            full[dims[-1]] = sizes[-1]
            padded = np.zeros(full, g.dtype)
            padded[tuple(slice(0, k) for k in g.shape)] = g
            gx = np.fft.ifftn(padded, axes=dims, norm="forward").real * scale
        else:
            gx = np.fft.rfftn(g, axes=dims, norm="backward") * scale
            last, m = dims[-1], gx.shape[dims[-1]]
            double = sizes[-1] - m  # bins 1 .. double stand for two bins of the full spectrum
            if double > 0:
                sl = [slice(None)] * gx.ndim
                sl[last] = slice(1, 1 + double)
                gx[tuple(sl)] *= 2
        gx = _fit(gx, ctx.in_shape, dims)
        if ctx.real_input:
            gx = gx.real
        return gx, None, None, None, None, None


def _scale(norm, n, inverse):
    norm = norm or "backward"
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def _fit(a, shape, dims):
    """Crop / zero-pad ``a`` along ``dims`` to ``shape`` (undoing the forward's n / s resizing)."""
    if tuple(a.shape) == tuple(shape):
        return a
    out = np.zeros(shape, a.dtype)
    idx = tuple(slice(0, min(a.shape[d], shape[d])) for d in range(a.ndim))
    out[idx] = a[idx]
    return out


_NORMS = (None, "backward", "ortho", "forward")


def _prep(input: Tensor, s, dim, name: str, default_all: bool, real_only: bool = False, complex_ok: bool = True):
    from . import _dtype as D
    if not isinstance(input, Tensor):
        raise TypeError(f"fft.{name}: expected a Tensor, got {type(input).__name__}")
    dt = input._dtype
    if dt.is_complex:
        if real_only:
            raise RuntimeError(f"{name} expects a real input tensor, but got {dt}")
    elif dt in (D.float16, D.bfloat16) and _amp.state.enabled:
        input, dt = _amp.cast_fp32(input), D.float32  # fft.* are on CPU autocast's float32 list
    elif dt in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dt.name.capitalize()} for fft.{name} on the CPU")
    elif not dt.is_floating_point:
        input = input.to(D.get_default_dtype())
    if dim is None:
        if s is not None:
            dims = tuple(range(input.ndim - len(s), input.ndim))
        else:
            dims = tuple(range(input.ndim)) if default_all else (input.ndim - 1,)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(d % input.ndim if input.ndim else 0 for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"fft.{name}: dims must be unique")
    return input, dims


def _run(input, kind, inverse, s, dims, norm, name):
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm}")
    if kind == "c2r":
        last = dims[-1]
        sizes = [input.shape[d] for d in dims]
        sizes[-1] = 2 * (input.shape[last] - 1)
    else:
        sizes = [input.shape[d] for d in dims]
    if s is not None:
        if len(s) != len(dims):
            raise RuntimeError(f"fft.{name}: When given, dim and shape arguments must have the same length")
        sizes = [sz if k == -1 else int(k) for sz, k in zip(sizes, s)]
    if any(k <= 0 for k in sizes):
        raise RuntimeError(f"Invalid number of data points ({min(sizes)}) specified")
    return _FFT.apply(input, kind, inverse, tuple(sizes), dims, norm)


def fft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    """One-dimensional discrete Fourier transform (complex output; real inputs are promoted)."""
    x, dims = _prep(input, None, dim, "fft", False)
    return _run(x, "c2c", False, None if n is None else (n,), dims, norm, "fft")


def ifft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    x, dims = _prep(input, None, dim, "ifft", False)
    return _run(x, "c2c", True, None if n is None else (n,), dims, norm, "ifft")


def rfft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    """FFT of a real signal: the n // 2 + 1 non-negative frequencies."""
    x, dims = _prep(input, None, dim, "rfft", False, real_only=True)
    return _run(x, "r2c", False, None if n is None else (n,), dims, norm, "rfft")


def irfft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    """Inverse of rfft: a real signal of length n (default 2 * (m - 1))."""
    x, dims = _prep(input, None, dim, "irfft", False)
    return _run(_as_complex(x), "c2r", True, None if n is None else (n,), dims, norm, "irfft")


def fft2(input: Tensor, s=None, dim=(-2, -1), norm=None) -> Tensor:
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm=None) -> Tensor:
    return ifftn(input, s, dim, norm)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm=None) -> Tensor:
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm=None) -> Tensor:
    return irfftn(input, s, dim, norm)


def fftn(input: Tensor, s=None, dim=None, norm=None) -> Tensor:
    x, dims = _prep(input, s, dim, "fftn", True)
    return _run(x, "c2c", False, s, dims, norm, "fftn")


def ifftn(input: Tensor, s=None, dim=None, norm=None) -> Tensor:
    x, dims = _prep(input, s, dim, "ifftn", True)
    return _run(x, "c2c", True, s, dims, norm, "ifftn")


def rfftn(input: Tensor, s=None, dim=None, norm=None) -> Tensor:
    x, dims = _prep(input, s, dim, "rfftn", True, real_only=True)
    return _run(x, "r2c", False, s, dims, norm, "rfftn")


def irfftn(input: Tensor, s=None, dim=None, norm=None) -> Tensor:
    x, dims = _prep(input, s, dim, "irfftn", True)
    return _run(_as_complex(x), "c2r", True, s, dims, norm, "irfftn")


_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    """FFT of a Hermitian-symmetric signal given by its first half: irfft of the conjugate, opposite norm."""
    from ._ops.complex import conj
    return irfft(conj(_as_complex(input)), n, dim, _SWAP[norm])


def ihfft(input: Tensor, n=None, dim: int = -1, norm=None) -> Tensor:
    """Inverse of hfft: the conjugate of rfft with the opposite norm."""
    from ._ops.complex import conj
    return conj(rfft(input, n, dim, _SWAP[norm]))


def _as_complex(x: Tensor) -> Tensor:
    return x if x._dtype.is_complex else x.to(x._dtype.to_complex())
