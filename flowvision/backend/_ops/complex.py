"""Complex-number ops: ``real``/``imag``/``conj``/``angle``, ``view_as_real``/``view_as_complex``, ``complex``,
``polar``, with torch's autograd convention for complex inputs (the gradient is dL/d(re) + i dL/d(im)).

complex64/complex128 tensors are numpy complex arrays; elementwise arithmetic, reductions and ``abs`` use the
ordinary ops (their numpy forwards accept complex data; mul/div conjugate in backward as torch does).
"""
from __future__ import annotations

import numpy as np

from .. import _autocast_policy as _amp
from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.graph import Function


def _is_c(a) -> bool:
    return a.dtype.kind == "c"


class Real(Function):
    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x.real)

    @staticmethod
    def backward(ctx, g):
        return (g.astype(np.result_type(g.dtype, np.complex64)),)


class Imag(Function):
    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x.imag)

    @staticmethod
    def backward(ctx, g):
        return (1j * g,)


class Conj(Function):
    @staticmethod
    def forward(ctx, x):
        return np.conj(x)

    @staticmethod
    def backward(ctx, g):
        return (np.conj(g),)


class Angle(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.angle(x).astype(x.real.dtype if _is_c(x) else x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        if not _is_c(x):
            return (np.zeros_like(x),)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(x == 0, 0, 1j * x / (x.real ** 2 + x.imag ** 2))
        return ((g * d).astype(x.dtype),)


class ViewAsReal(Function):
    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x).view(x.real.dtype).reshape(x.shape + (2,))

    @staticmethod
    def backward(ctx, g):
        return (g[..., 0] + 1j * g[..., 1],)


class ViewAsComplex(Function):
    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x).view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]

    @staticmethod
    def backward(ctx, g):
        return (np.stack([g.real, g.imag], -1),)


class MakeComplex(Function):
    @staticmethod
    def forward(ctx, re, im):
        ctx.shapes = (re.shape, im.shape)
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.complex128 if re.dtype == np.float64 else np.complex64)
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, g):
        from ._util import unbroadcast
        sr, si = ctx.shapes
        return unbroadcast(np.ascontiguousarray(g.real), sr), unbroadcast(np.ascontiguousarray(g.imag), si)


class Polar(Function):
    @staticmethod
    def forward(ctx, r, theta):
        ctx.save_for_backward(r, theta)
        ctx.shapes = (r.shape, theta.shape)
        return (r * np.exp(1j * theta)).astype(np.complex128 if r.dtype == np.float64 else np.complex64)

    @staticmethod
    def backward(ctx, g):
        from ._util import unbroadcast
        r, theta = ctx.saved
        e = np.exp(1j * theta)
        # y = r e^{i theta}: dL/dr = Re(conj(e) g), dL/dtheta = Re(conj(i r e) g)
        gr = np.real(np.conj(e) * g)
        gt = np.real(np.conj(1j * r * e) * g)
        return unbroadcast(gr, ctx.shapes[0]), unbroadcast(gt, ctx.shapes[1])


def real(input: Tensor) -> Tensor:
    """The real part (the tensor itself for real dtypes, as torch returns it)."""
    if not input._dtype.is_complex:
        return input
    return Real.apply(input)


def imag(input: Tensor) -> Tensor:
    """The imaginary part; real tensors raise like torch."""
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def conj(input: Tensor) -> Tensor:
    """Complex conjugate (real tensors are returned unchanged)."""
    return Conj.apply(input) if input._dtype.is_complex else input


def conj_physical(input: Tensor) -> Tensor:
    return conj(input)


def resolve_conj(input: Tensor) -> Tensor:
    return input  # conjugation is always materialised here


def is_conj(input: Tensor) -> bool:
    return False


def angle(input: Tensor) -> Tensor:
    """Element-wise argument in radians (real inputs: 0 or pi, with a zero gradient as in torch)."""
    if not (input._dtype.is_complex or input._dtype.is_floating_point):
        input = input.to(D.get_default_dtype())
    return Angle.apply(input)


def view_as_real(input: Tensor) -> Tensor:
    """(..., 2) real tensor of (real, imag) pairs; a copy here, equal values to torch's view."""
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


@_amp.fp32
def view_as_complex(input: Tensor) -> Tensor:
    """Complex tensor from a (..., 2) float32/float64 tensor of (real, imag) pairs."""
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {input._dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return ViewAsComplex.apply(input)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - torch's name
    """real + i imag from two float tensors of the same dtype."""
    if real._dtype is not imag._dtype or real._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"Expected both inputs to be Float or Double tensors but got {real._dtype} and "
                           f"{imag._dtype}")
    return MakeComplex.apply(real, imag)


@_amp.fp32
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - torch's argument names
    """abs * (cos(angle) + i sin(angle))."""
    if abs._dtype is not angle._dtype or abs._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"Expected both inputs to be Float or Double tensors but got {abs._dtype} and "
                           f"{angle._dtype}")
    return Polar.apply(abs, angle)


def _install() -> None:
    """Bind the Tensor attributes torch has for complex tensors."""
    Tensor.real = property(real)
    Tensor.imag = property(imag)
    Tensor.conj = conj
    Tensor.conj_physical = conj_physical
    Tensor.resolve_conj = resolve_conj
    Tensor.is_conj = is_conj
    Tensor.angle = angle
    Tensor.is_complex = lambda self: self._dtype.is_complex
    Tensor.cfloat = lambda self: self.to(D.complex64)
    Tensor.cdouble = lambda self: self.to(D.complex128)


_install()
