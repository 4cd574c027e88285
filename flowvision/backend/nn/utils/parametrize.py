"""``nn.utils.parametrize``: make ``module.<name>`` the output of small modules applied to a stored original.

``register_parametrization`` moves the tensor to ``module.parametrizations[name].original`` (or
``original0``, ``original1``... when the parametrization's ``right_inverse`` returns several) and gives the
module's class a property computing ``name`` on access, exactly torch's state-dict layout.
"""
from __future__ import annotations

import contextlib

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside the block each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor plus its ``original`` (or ``original0``...) parameter."""

    def __init__(self, modules, original, unsafe: bool = False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    new = m.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            # the original keeps its identity (optimizers holding it stay valid), with the inverse's value
            if new is not original:
                with no_grad():
                    original.data.copy_(new)
            self.original = original if isinstance(original, Parameter) else Parameter(original, False)
        else:
            for i, t in enumerate(new):
                setattr(self, f"original{i}", Parameter(t.detach().clone(), original.requires_grad))

    def right_inverse(self, value: Tensor) -> None:
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
            if self.is_tensor:
                self.original.data.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").data.copy_(t)

    def forward(self) -> Tensor:
        mods = list(self)
        x = mods[0](self.original) if self.is_tensor else \
            mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _make_property(name: str):
    def getter(self):
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = self.parametrizations[name]()
            return _cache[key]
        return self.parametrizations[name]()

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)
    return property(getter, setter)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` by ``parametrization`` (appended when already parametrized)."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name in module._parameters:
        original = module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        original = module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = module.__class__
        param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"_orig_class": cls})
        module.__class__ = param_cls
        module.parametrizations = ModuleDict()
    # the subclass is made per module, so the property never reaches other instances of the class
    setattr(type(module), tensor_name, _make_property(tensor_name))
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original, unsafe=unsafe)
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    params = module.__dict__.get("_modules", {}).get("parametrizations")
    if params is None or not isinstance(params, ModuleDict):
        return False
    return tensor_name is None or tensor_name in params


def type_before_parametrizations(module: Module) -> type:
    return module.__class__._orig_class if is_parametrized(module) else type(module)


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo :func:`register_parametrization`: keep the current value (or the original) as a plain parameter."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad():
        if leave_parametrized:
            value = getattr(module, tensor_name).detach().clone()
        elif plist.is_tensor:
            value = plist.original.detach()
        else:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value, plist.original.requires_grad if plist.is_tensor
                                                     else True))
    if not module.parametrizations:
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._orig_class
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module, tensor_name: str | None = None):
    raise NotImplementedError("transfer_parametrizations_and_params is not supported")
