"""The original hook-based ``nn.utils.weight_norm`` / ``spectral_norm`` (``weight_g``/``weight_v`` and
``weight_orig``/``weight_u``/``weight_v`` names), for checkpoints and scripts written against them."""
from __future__ import annotations

from ..modules.module import Module
from ..parameter import Parameter
from ... import _creation as C
from ...autograd.grad_mode import no_grad
from .parametrizations import _norm_except_dim, _normalize

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


class _WeightNormHook:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / (v.norm() if self.dim == -1 else _norm_except_dim(v, self.dim)))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Replace ``name`` by ``name_g`` (magnitude) and ``name_v`` (direction), recombined before each forward."""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    dim = -1 if dim is None else dim
    fn = _WeightNormHook(name, dim)
    weight = getattr(module, name)
    del module._parameters[name]
    g = weight.norm() if dim == -1 else _norm_except_dim(weight, dim)
    module.register_parameter(name + "_g", Parameter(g.detach().clone()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            weight = hook.compute(module).detach()
            delattr(module, name)
            del module._parameters[name + "_g"]
            del module._parameters[name + "_v"]
            module.register_parameter(name, Parameter(weight))
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


class _SpectralNormHook:
    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n, self.dim, self.eps = name, n_power_iterations, dim, eps

    def _mat(self, w):
        if self.dim != 0:
            w = w.permute(self.dim, *(d for d in range(w.ndim) if d != self.dim))
        return w.flatten(1)

    def compute(self, module, do_power_iteration):
        w = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self._mat(w)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n):
                    v.copy_(_normalize(mat.t() @ u, self.eps))
                    u.copy_(_normalize(mat @ v, self.eps))
        u, v = u.clone(), v.clone()
        sigma = (u * (mat @ v)).sum()
        return w / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module, module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    fn = _SpectralNormHook(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    mat = fn._mat(weight.detach())
    h, w = mat.shape
    u = _normalize(C.empty(h, dtype=weight.dtype).normal_(0, 1), eps)
    v = _normalize(C.empty(w, dtype=weight.dtype).normal_(0, 1), eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            weight = hook.compute(module, False).detach()
            del module._forward_pre_hooks[k]
            delattr(module, name)
            del module._parameters[name + "_orig"]
            del module._buffers[name + "_u"]
            del module._buffers[name + "_v"]
            module.register_parameter(name, Parameter(weight))
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
