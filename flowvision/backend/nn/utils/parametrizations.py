"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as parametrizations (torch's layout:
``parametrizations.weight.original0`` = g, ``original1`` = v; spectral norm keeps ``_u``/``_v`` buffers)."""
from __future__ import annotations

from ..modules.module import Module
from . import parametrize
from ... import _creation as C
from ...autograd.grad_mode import no_grad

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, dim: int):
    if dim is None or dim == -1 and v.ndim == 0:
        return v.norm()
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    return v.pow(2).sum(others, keepdim=True).sqrt() if others else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim: int = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        if self.dim == -1:
            return weight_v * (weight_g / weight_v.norm())
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        g = weight.norm() if self.dim == -1 else _norm_except_dim(weight, self.dim)
        return g, weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """w = g * v / ||v|| with the norm over every dimension but ``dim``."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


def _normalize(x, eps):
    return x / x.norm().clamp(min=eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            w = self._reshape(weight)
            h, wd = w.shape
            u = _normalize(C.empty(h, dtype=weight.dtype).normal_(0, 1), eps)
            v = _normalize(C.empty(wd, dtype=weight.dtype).normal_(0, 1), eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(w, 15)

    def _reshape(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, w, n):
        with no_grad():
            for _ in range(n):
                self._u.copy_(_normalize(w @ self._v, self.eps))
                self._v.copy_(_normalize(w.t() @ self._u, self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        w = self._reshape(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (w @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration in training."""
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    return parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
