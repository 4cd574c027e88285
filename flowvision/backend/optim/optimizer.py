"""The ``Optimizer`` base class: param groups, state, state_dict round trips and hooks.

Concrete optimizers update parameters in place on their numpy storage (``p._data``), so every
reference to a parameter sees the update and no autograd graph is recorded. Low-precision
parameters (float16/bfloat16) are updated in float32 and rounded back; their state is float32.
"""
import copy
import itertools
from collections import OrderedDict, defaultdict
from typing import Any, Callable, DefaultDict, Dict, Iterable, List, Union

import numpy as np

from .._tensor import Tensor
from .. import _dtype as D
from .._bf16 import bf16_to_f32, f32_to_bf16

__all__ = ["Optimizer", "required"]

# what an optimizer takes: parameters, or parameter groups (dicts with "params" and per-group options)
ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]]]


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()
_hook_ids = itertools.count()


class _Handle:
    def __init__(self, d, key):
        self._d, self._key = d, key

    def remove(self):
        self._d.pop(self._key, None)


def _as_state_value(v):
    """State values loaded from a dict may be Tensors, numpy arrays (e.g. converted from torch) or numbers."""
    if isinstance(v, Tensor):
        return Tensor._wrap(np.array(v._data, copy=True), v._dtype)
    if isinstance(v, np.ndarray):
        return Tensor._wrap(np.array(v, copy=True))
    if hasattr(v, "detach") and hasattr(v, "numpy"):  # a torch tensor
        return Tensor._wrap(np.array(v.detach().cpu().numpy(), copy=True))
    return copy.deepcopy(v)


class Optimizer:
    """Base class of the optimizers, with ``torch.optim.Optimizer``'s contract: ``param_groups`` (each a dict of
    ``params`` and options, missing options taken from ``defaults``), per-parameter ``state``, ``zero_grad()``,
    ``step()``, ``state_dict()`` / ``load_state_dict()`` (torch's format) and step hooks.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        defaults: the default value of every option of this optimizer.

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        self.state: DefaultDict[Any, Dict[str, Any]] = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        s += ")"
        return s

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if not param.is_floating_point():
                raise ValueError(f"optimizer can only optimize floating-point Tensors, got {param.dtype}")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self._validate_group(param_group)
        self.param_groups.append(param_group)

    def _validate_group(self, group):
        """Subclasses check their hyper-parameter values here."""

    # ------------------------------------------------------------------ grads
    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad._grad_fn is not None:
                            p.grad.detach_()
                        p.grad._data = np.zeros_like(p.grad._data)

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        key = next(_hook_ids)
        self._optimizer_step_pre_hooks[key] = hook
        return _Handle(self._optimizer_step_pre_hooks, key)

    def register_step_post_hook(self, hook):
        key = next(_hook_ids)
        self._optimizer_step_post_hooks[key] = hook
        return _Handle(self._optimizer_step_post_hooks, key)

    def _run_step(self, closure, update):
        """Common driver: hooks, closure under enable_grad, then ``update()`` under no_grad."""
        from ..autograd.grad_mode import enable_grad, no_grad
        for hook in list(self._optimizer_step_pre_hooks.values()):
            res = hook(self, (), {})
            if res is not None:
                raise RuntimeError("optimizer step pre-hooks returning new arguments are not supported")
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            update()
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def step(self, closure=None):
        raise NotImplementedError

    # ------------------------------------------------------------------ state dict
    def state_dict(self):
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                if id(p) not in param_mappings:
                    param_mappings[id(p)] = i
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {}
        id_to_param = {id(p): p for g in self.param_groups for p in g["params"]}
        for k, v in self.state.items():
            if isinstance(k, Tensor) and id(k) in param_mappings:
                packed_state[param_mappings[id(k)]] = v
            elif id(k) in id_to_param:
                packed_state[param_mappings[id(k)]] = v
            else:
                packed_state[k] = v
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = k if not isinstance(k, str) or not k.isdecimal() else int(k)
            if key in id_map:
                param = id_map[key]
                state[param] = self._cast_state(param, {sk: _as_state_value(sv) for sk, sv in v.items()})
            else:
                state[k] = _as_state_value(v)

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, ng) for g, ng in zip(groups, saved_groups)]})

    def _cast_state(self, param, st):
        """Bring loaded state tensors to the dtype this optimizer keeps for ``param`` (step stays as saved)."""
        want = np.float32 if param._dtype in (D.float16, D.bfloat16) else param._dtype.np
        for k, v in st.items():
            if k == "step" or not isinstance(v, Tensor) or not v.is_floating_point():
                continue
            arr = v._compute()
            if arr.dtype != want or arr.shape != tuple(param.shape):
                if arr.shape != tuple(param.shape) and arr.size == param.numel():
                    arr = arr.reshape(tuple(param.shape))
                st[k] = Tensor._wrap(np.array(arr, dtype=want))
        return st


# ---------------------------------------------------------------------- helpers for subclasses
_CHECK_NAMES = {"lr": "learning rate", "eps": "epsilon value"}


def _check_non_negative(**values):
    """torch's constructor checks: ValueError("Invalid learning rate: -1") for any negative argument."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {_CHECK_NAMES.get(name, name + ' value')}: {v}")


def _params_with_grad(group):
    """Yields (param, working float array, gradient array) for each parameter of ``group`` that has a
    gradient (negated under ``maximize``); after the caller's update the reduced-precision copy is written back and
    the parameter's version bumped, so every optimizer updates parameters the same way."""
    maximize = group.get("maximize", False)
    for p in group["params"]:
        if p.grad is None:
            continue
        w, back = _f32_view(p)
        grad = _grad_array(p, w.dtype)
        yield p, w, (-grad if maximize else grad)
        if back is not None:
            back()
        _bump(p)


def _f32_view(p):
    """(working array, write-back function or None) for parameter ``p``.

    float32/float64 parameters are updated directly in their storage; float16/bfloat16 ones are
    copied to float32 and rounded back after the update.
    """
    if p._dtype is D.bfloat16:
        work = bf16_to_f32(p._data).astype(np.float32)

        def back(arr=work, p=p):
            p._data[...] = f32_to_bf16(arr)
        return work, back
    if p._dtype is D.float16:
        work = p._data.astype(np.float32)

        def back(arr=work, p=p):
            p._data[...] = arr.astype(np.float16)
        return work, back
    return p._data, None


def _grad_array(p, dtype):
    g = p.grad._compute() if p.grad._dtype is D.bfloat16 else p.grad._data
    return g if g.dtype == dtype else g.astype(dtype)


def _zeros_state(arr):
    return Tensor._wrap(np.zeros_like(arr))


def _step_tensor(value=0.0):
    return Tensor._wrap(np.array(value, dtype=np.float32))


def _bump(p):
    p._version[0] += 1
