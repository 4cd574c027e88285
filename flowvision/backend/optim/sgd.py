"""SGD with momentum, dampening, Nesterov and (coupled) weight decay: torch's update rule."""
from typing import Optional, Union

import numpy as np

from . import _fused
from .optimizer import Optimizer, ParamsT, required, _params_with_grad
from .._tensor import Tensor

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, torch's arguments and update.

    Args:
        params: parameters or parameter groups.
        lr: learning rate.
        momentum: momentum factor.
        dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum.
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, differentiable: bool = False, fused: Optional[bool] = None) -> None:
        if lr is not required and (isinstance(lr, float) or isinstance(lr, int)) and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise ValueError("differentiable=True is not supported by flowvision optimizers")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _update(self):
        for group in self.param_groups:
            if _fused.sgd_group(self, group):  # one compiled in-place pass, bit-identical to the loop below
                continue
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p, w, d_p in _params_with_grad(group):
                if wd != 0:
                    d_p = d_p + wd * w
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = Tensor._wrap(np.array(d_p, dtype=w.dtype, copy=True))
                        state["momentum_buffer"] = buf
                    else:
                        b = buf._data
                        b *= momentum
                        b += (1 - dampening) * d_p
                    if nesterov:
                        d_p = d_p + momentum * buf._data
                    else:
                        d_p = buf._data
                w -= lr * d_p
