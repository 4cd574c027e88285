"""``Module``: the base class of every layer, with torch's attribute, state-dict and hook semantics."""
import functools
import itertools
import weakref
from collections import OrderedDict, namedtuple

import numpy as np

from ..._tensor import Tensor
from ... import _dtype as D
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, Buffer

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]

_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_hook_ids = itertools.count()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    def __init__(self, hooks_dict, *extra_dicts):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_hook_ids)
        self.extra_dict_refs = tuple(weakref.ref(d) for d in extra_dicts)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None and self.id in d:
            del d[self.id]
        for ref in self.extra_dict_refs:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_module_forward_pre_hook(hook):
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook):
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    return h


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _as_tensor_value(value):
    """State-dict values may be Tensors or numpy arrays (e.g. converted from torch through numpy)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray) or np.isscalar(value):
        arr = np.asarray(value)
        if arr.dtype == np.uint16 and type(value).__name__ == "Bf16Array":
            return Tensor._wrap(arr.view(np.ndarray), D.bfloat16)
        return Tensor._wrap(arr)
    if hasattr(value, "__array__") and hasattr(value, "shape"):  # e.g. a torch tensor
        return Tensor._wrap(np.asarray(value.detach().cpu() if hasattr(value, "detach") else value))
    return value


def _size_str(shape):
    return f"flowvision.Size([{', '.join(str(int(s)) for s in shape)}])"


def _check_new_entry(module, kind, table, name):
    """torch's checks (and messages) before ``module`` registers a ``kind`` ("buffer" / "parameter") called
    ``name`` in its dict attribute ``table``."""
    if table not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[table]:
        raise KeyError(f"attribute '{name}' already exists")


class Module:
    """Base class for all neural network modules (same semantics as ``torch.nn.Module``)."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments: "
                            f"{args!r} {kwargs!r}")
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", OrderedDict())
        sa(self, "_buffers", OrderedDict())
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", OrderedDict())
        sa(self, "_forward_pre_hooks", OrderedDict())
        sa(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        sa(self, "_forward_hooks", OrderedDict())
        sa(self, "_forward_hooks_with_kwargs", OrderedDict())
        sa(self, "_forward_hooks_always_called", OrderedDict())
        sa(self, "_backward_hooks", OrderedDict())
        sa(self, "_backward_pre_hooks", OrderedDict())
        sa(self, "_state_dict_hooks", OrderedDict())
        sa(self, "_state_dict_pre_hooks", OrderedDict())
        sa(self, "_load_state_dict_pre_hooks", OrderedDict())
        sa(self, "_load_state_dict_post_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        _check_new_entry(self, "buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = _plain(tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        _check_new_entry(self, "parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express '" + name + "' as a function of another Tensor, "
                             "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module):
        atoms = target.split(".")
        parent = self.get_submodule(".".join(atoms[:-1]))
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------------ attribute protocol
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(torch.Tensor or None expected)")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    if isinstance(value, Buffer):
                        remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[0].isdigit()))

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                  "_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_state_dict_hooks",
                  "_load_state_dict_pre_hooks", "_backward_hooks", "_backward_pre_hooks"):
            if k not in self.__dict__:
                self.__dict__[k] = OrderedDict()

    # ------------------------------------------------------------------ calling and hooks
    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or _global_forward_pre_hooks
                or _global_forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        called_always = set()
        try:
            if self._backward_hooks or self._backward_pre_hooks:
                from ._backward_hooks import call_with_backward_hooks
                result = call_with_backward_hooks(self, self.forward, args, kwargs)
            else:
                result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called_always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            called_always.add(hook_id)
            if res is not None:
                result = res
        return result

    __call__ = _call_impl

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the module's inputs are
        computed; it may return a replacement ``grad_input``."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs before the module's gradients are computed; it may return a
        replacement ``grad_output``."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    register_backward_hook = register_full_backward_hook

    def register_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``"""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ------------------------------------------------------------------ modes
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad._data[...] = 0

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            if new is not param:
                param._data, param._dtype, param._device = new._data, new._dtype, new._device
                param._version = [0]
            if param.grad is not None:
                with no_grad():
                    g = fn(param.grad)
                if g is not param.grad:
                    param.grad = Tensor._wrap(g._data, g._dtype)
        for key, buf in self._buffers.items():
            if buf is not None:
                with no_grad():
                    self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, Tensor):
                dtype, dev = a._dtype, a._device
            elif isinstance(a, D.dtype) or isinstance(a, type) or isinstance(a, np.dtype):
                dtype = a
            elif a is not None:
                dev = a
        if dtype is not None:
            dtype = D.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        mem_format = kwargs.get("memory_format")

        def convert(t):
            out = t
            if dev is not None:
                out = out.to(dev)
            if dtype is not None and t.is_floating_point():
                out = out.to(dtype)
            if mem_format is not None and out.ndim in (4, 5):  # torch converts the 4-D/5-D parameters only
                from ..._memory_format import format_name, to_format
                name = format_name(mem_format)
                if name == "contiguous_format" or (name == "channels_last") == (out.ndim == 4):
                    out = to_format(out, mem_format)
            return out
        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Move every parameter, gradient and buffer into shared memory in place, so processes that receive
        this module (``torch.multiprocessing``) update the same storage."""
        from ...multiprocessing._shared import share_memory_
        for t in list(self.parameters()) + list(self.buffers()):
            share_memory_(t)
            if t.grad is not None:
                share_memory_(t.grad)
        return self

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra = getattr(type(self), "get_extra_state", Module.get_extra_state)
        if extra is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if res is not None:
                destination = res
        return destination

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = _as_tensor_value(state_dict[key])
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                input_param = input_param.reshape(())  # legacy single-element buffers
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{_size_str(input_param.shape)} from checkpoint, the shape in current model "
                                  f"is {_size_str(param.shape)}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = input_param if isinstance(input_param, Parameter) else \
                                Parameter(input_param, requires_grad=param.requires_grad)
                            setattr(self, name, new)
                        else:
                            setattr(self, name, input_param)
                    else:
                        _copy_into(param, input_param)
            except Exception as ex:  # noqa: BLE001
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{_size_str(param.shape)} and whose dimensions in the checkpoint are "
                                  f"{_size_str(input_param.shape)}, an exception occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] not in self._modules and input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict) and not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_sd = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_sd, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible)
                if out is not None:
                    raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                       "expected to return new values")

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------------ repr
    def extra_repr(self):
        return ""

    def _get_name(self):
        return self.__class__.__name__

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str


def _plain(t):
    out = Tensor._wrap(t._data, t._dtype)
    out._version = t._version
    return out


def _copy_into(param, src):
    """param.copy_(src) without autograd, casting dtype like torch."""
    if src._dtype is param._dtype:
        np.copyto(param._data, src._data)
    else:
        param.copy_(src)
        return
    param._version[0] += 1
