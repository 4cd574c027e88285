"""lgamma, digamma, polygamma, xlogy, logit and friends as differentiable functions.

Forward values are vectorised numpy (Lanczos approximation for log-gamma, recurrence + asymptotic series for
digamma/trigamma), so no SciPy is needed; gradients are the next function of the family.
"""
from __future__ import annotations

import math

import numpy as np

from ._tensor import Tensor
from .autograd import Function

__all__ = ["lgamma", "digamma", "polygamma", "xlogy", "logit", "gammaln", "psi", "multigammaln", "mvlgamma"]

_G = 7.0
_LANCZOS = np.array([0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                     -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
                     1.5056327351493116e-7])


def _lgamma_np(x):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    refl = x < 0.5
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    xr = np.where(refl, 1.0 - x, x) - 1.0
    a = np.full_like(xr, _LANCZOS[0])
    for i in range(1, 9):
        a = a + _LANCZOS[i] / (xr + i)
    t = xr + _G + 0.5
    lg = 0.5 * math.log(2 * math.pi) + (xr + 0.5) * np.log(t) - t + np.log(a)
    with np.errstate(divide="ignore"):
        out[:] = np.where(refl, np.log(np.pi / np.abs(np.sin(np.pi * x))) - lg, lg)
    out[(x <= 0) & (x == np.floor(x))] = np.inf
    return out


def _digamma_np(x):
    x = np.asarray(x, dtype=np.float64)
    refl = x < 0.5
    y = np.where(refl, 1.0 - x, x)
    acc = np.zeros_like(y)
    for _ in range(6):  # shift every element to >= 6.5 where the series converges
        small = y < 6.5
        acc = acc - np.where(small, 1.0 / np.where(small, y, 1.0), 0.0)
        y = np.where(small, y + 1.0, y)
    inv2 = 1.0 / (y * y)
    series = np.log(y) - 0.5 / y - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    res = acc + series
    with np.errstate(divide="ignore", invalid="ignore"):
        res = np.where(refl, res - np.pi / np.tan(np.pi * x), res)
    res = np.where((x <= 0) & (x == np.floor(x)), np.nan, res)
    return np.where(x == 0, -np.inf, res)


def _trigamma_np(x):
    x = np.asarray(x, dtype=np.float64)
    refl = x < 0.5
    y = np.where(refl, 1.0 - x, x)
    acc = np.zeros_like(y)
    for _ in range(6):
        small = y < 6.5
        yy = np.where(small, y, 1.0)
        acc = acc + np.where(small, 1.0 / (yy * yy), 0.0)
        y = np.where(small, y + 1.0, y)
    inv = 1.0 / y
    inv2 = inv * inv
    series = inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
    res = acc + series
    with np.errstate(divide="ignore", invalid="ignore"):
        # psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x)
        res = np.where(refl, (np.pi / np.sin(np.pi * x)) ** 2 - res, res)
    return res


def _like(x, v):
    return v.astype(x.dtype, copy=False)


class _LGamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Tensor._wrap(_like(x._data, _lgamma_np(x._data)), x._dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Tensor._wrap(_like(x._data, _digamma_np(x._data)), x._dtype)


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Tensor._wrap(_like(x._data, _digamma_np(x._data)), x._dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Tensor._wrap(_like(x._data, _trigamma_np(x._data)), x._dtype)


class _Trigamma(Function):
    @staticmethod
    def forward(ctx, x):
        return Tensor._wrap(_like(x._data, _trigamma_np(x._data)), x._dtype)

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("the gradient of polygamma(1, x) (polygamma(2, x)) is not implemented")


def _float(x: Tensor, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x if x.is_floating_point() else x.float()


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(x)| elementwise (gradient: digamma)."""
    return _LGamma.apply(_float(input, "lgamma"))


def digamma(input: Tensor) -> Tensor:
    """d/dx log Gamma(x) elementwise (gradient: trigamma); -inf at 0 and nan at negative integers like torch."""
    return _Digamma.apply(_float(input, "digamma"))


def polygamma(n: int, input: Tensor) -> Tensor:
    """n-th derivative of digamma; n = 0 (digamma) and n = 1 (trigamma) are supported."""
    if n == 0:
        return digamma(input)
    if n == 1:
        return _Trigamma.apply(_float(input, "polygamma"))
    raise NotImplementedError(f"polygamma is implemented for n = 0 and 1, got n = {n}")


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """Multivariate log-gamma of dimension ``p``."""
    x = _float(input, "mvlgamma")
    out = lgamma(x) + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p):
        out = out + lgamma(x - j / 2)
    return out


multigammaln = mvlgamma
gammaln = lgamma
psi = digamma


def xlogy(input, other) -> Tensor:
    """``x * log(y)`` with 0 where x == 0 (and y is not nan), like torch."""
    from . import _creation as C
    x = input if isinstance(input, Tensor) else C.tensor(float(input))
    y = other if isinstance(other, Tensor) else C.tensor(float(other), dtype=x.dtype)
    zero = (x == 0) & ~y.isnan()
    safe_y = y.masked_fill(zero, 1.0)
    return (x * safe_y.log()).masked_fill(zero, 0.0)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given."""
    p = input.clamp(eps, 1 - eps) if eps is not None else input
    return (p / (1 - p)).log()
