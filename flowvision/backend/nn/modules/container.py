"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
import operator
from collections import OrderedDict
from itertools import chain, islice

from .module import Module, _addindent
from ..parameter import Parameter
from ..._tensor import Tensor

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Container"]


def _index(idx, size, kind):
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


class Container(Module):
    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = _index(idx, size, "Sequential")
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module):
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(list(zip(str_indices, self._modules.values())))

    def __len__(self):
        return len(self._modules)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        for layer in other:
            self.append(layer)
        return self

    def __mul__(self, other):
        if not isinstance(other, int) or other <= 0:
            raise ValueError("Non-positive multiplication factor")
        ret = Sequential()
        for _ in range(other):
            for layer in self:
                ret.append(layer)
        return ret

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx):
        return str(_index(idx, len(self), "ModuleList"))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(list(zip(str_indices, self._modules.values())))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if isinstance(modules, (Module, Tensor)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self):
        if not self._modules:
            return self._get_name() + "()"
        lines = [self._get_name() + "("]
        for k, m in self._modules.items():
            lines.append("  (" + k + "): " + _addindent(repr(m), 2))
        return "\n".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is a container and has no forward()")


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, (OrderedDict, ModuleDict, dict)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if len(m) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")
                self[m[0]] = m[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is a container and has no forward()")


def _as_param(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        return str(_index(idx, len(self), "ParameterList"))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(len(self))[idx]:
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param):
        idx = self._get_abs_string_index(idx)
        setattr(self, idx, _as_param(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        new_idx = len(self)
        self._size += 1
        setattr(self, str(new_idx), _as_param(value))
        return self

    def extend(self, values):
        if isinstance(values, Tensor) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                size_str = "x".join(str(s) for s in p.size())
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype} of size {size_str}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_param(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def get(self, key, default=None):
        return self[key] if key in self else default

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            size_str = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): Parameter containing: [{p.dtype} of size {size_str}]")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
