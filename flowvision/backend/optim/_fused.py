"""Fused parameter-group updates: one compiled call per group (``_C.sgd_update_`` / ``_C.adam_update_``) instead of
numpy's several passes with temporaries per parameter. The compiled kernels round the same scalars and the same
operations as the numpy updates in ``sgd.py`` / ``adam.py``, so both give bit-identical parameters and state.

A group falls back to the numpy update (the functions return False before touching anything) when an array is not a
C-contiguous float32/float64 numpy array of the parameter's dtype (a strided parameter view, a state tensor loaded
in another layout), or when ``FLOWVISION_FUSED_OPTIM=0``.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from .. import _C
from .._tensor import Tensor
from .optimizer import _bump, _f32_view, _grad_array, _step_tensor, _zeros_state

_HAS_KERNELS = hasattr(_C, "sgd_update_") and hasattr(_C, "adam_update_")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def enabled() -> bool:
    """Whether the fused kernels are used (this build has them and ``FLOWVISION_FUSED_OPTIM`` is not ``0``)."""
    return _HAS_KERNELS and os.environ.get("FLOWVISION_FUSED_OPTIM", "1") != "0"


def _ok(a: Any, dtype) -> bool:
    return isinstance(a, np.ndarray) and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable


def _collect(group) -> Optional[List[Tuple[Any, np.ndarray, np.ndarray, Optional[Callable[[], None]]]]]:
    """(param, working array, gradient, write-back) for each parameter with a gradient, or None when one of them
    cannot take the fused path (all in one dtype, contiguous)."""
    maximize = group.get("maximize", False)
    items = []
    dtype = None
    for p in group["params"]:
        if p.grad is None:
            continue
        w, back = _f32_view(p)
        if dtype is None:
            dtype = w.dtype
        if w.dtype not in _FLOATS or not _ok(w, dtype) or w.dtype != dtype:
            return None
        g = _grad_array(p, w.dtype)
        g = -g if maximize else g
        if g.shape != w.shape:
            return None
        items.append((p, w, np.ascontiguousarray(g), back))
    return items


def _finish(items) -> None:
    for p, _w, _g, back in items:
        if back is not None:
            back()
        _bump(p)


def sgd_group(opt, group) -> bool:
    """One SGD step of ``group`` in place through the fused kernel; False (nothing done) when it does not apply."""
    if not enabled():
        return False
    items = _collect(group)
    if items is None:
        return False
    if not items:
        return True
    momentum = group["momentum"]
    bufs, fresh = [], []
    if momentum != 0:
        for p, w, _g, _b in items:
            buf = opt.state[p].get("momentum_buffer")
            if buf is not None and not _ok(buf._data, w.dtype):
                return False
        for p, w, _g, _b in items:
            state = opt.state[p]
            buf = state.get("momentum_buffer")
            fresh.append(buf is None)
            if buf is None:
                buf = Tensor._wrap(np.empty_like(w))
                state["momentum_buffer"] = buf
            bufs.append(buf._data)
    _C.sgd_update_([it[1] for it in items], [it[2] for it in items], bufs, fresh, float(group["lr"]),
                   float(momentum), float(1 - group["dampening"]), float(group["weight_decay"]),
                   bool(group["nesterov"]))
    _finish(items)
    return True


def adam_state_step(state: dict, w: np.ndarray, amsgrad: bool) -> Tensor:
    """Adam's per-parameter ``state`` (zero moments, created at the first step) with its step count advanced by
    one; the step tensor (shared by the fused and the per-parameter update)."""
    if len(state) == 0:
        state["step"] = _step_tensor(0.0)
        state["exp_avg"] = _zeros_state(w)
        state["exp_avg_sq"] = _zeros_state(w)
        if amsgrad:
            state["max_exp_avg_sq"] = _zeros_state(w)
    step_t = state["step"]
    step_t._data[...] = step_t._data + 1
    return step_t


def adam_group(opt, group) -> bool:
    """One Adam / AdamW step of ``group`` in place through the fused kernel; False (nothing done) when it does not
    apply."""
    if not enabled():
        return False
    items = _collect(group)
    if items is None:
        return False
    if not items:
        return True
    beta1, beta2 = group["betas"]
    lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
    amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
    keys = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
    for p, w, _g, _b in items:
        state = opt.state[p]
        if len(state) and any(k not in state or not _ok(state[k]._data, w.dtype) for k in keys):
            return False
    m, v, vmax, neg_steps, bc2s = [], [], [], [], []
    for p, w, _g, _b in items:
        state = opt.state[p]
        step = float(adam_state_step(state, w, amsgrad)._data)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        neg_steps.append(-(lr / bias_correction1))
        bc2s.append(math.sqrt(bias_correction2))
        m.append(state["exp_avg"]._data)
        v.append(state["exp_avg_sq"]._data)
        if amsgrad:
            vmax.append(state["max_exp_avg_sq"]._data)
    lerp_w = 1 - beta1
    _C.adam_update_([it[1] for it in items], [it[2] for it in items], m, v, vmax, neg_steps, bc2s,
                    float(1 - lr * wd), float(wd), float(lerp_w), float(1 - lerp_w), float(beta2), float(1 - beta2),
                    float(eps), bool(decoupled), bool(amsgrad))
    _finish(items)
    return True
