"""SGD with momentum, dampening, Nesterov and (coupled) weight decay: torch's update rule."""
from typing import Optional, Union

import numpy as np

from . import _fused
from .optimizer import Optimizer, ParamsT, required, _params_with_grad
from .._tensor import Tensor

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, as ``torch.optim.SGD``: ``g = grad + weight_decay * p``; with momentum
    ``b = momentum * b + (1 - dampening) * g`` (``b = g`` at the first step) and ``g = b`` (Nesterov:
    ``g = g + momentum * b``); then ``p -= lr * g``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        momentum: momentum factor.
        dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum (needs momentum > 0 and no dampening).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        foreach: accepted for torch compatibility (the update runs per parameter).
        differentiable: must be False: differentiating through the step is not supported.
        fused: accepted for torch compatibility; the compiled in-place kernel runs whenever it applies (all of a group's
            tensors in one dtype, contiguous) unless ``FLOWVISION_FUSED_OPTIM=0``.

    Raises:
        ValueError: a negative learning rate, momentum or weight decay, Nesterov without momentum or with dampening,
            ``differentiable=True``, or invalid parameters.

    Examples:
        >>> import flowvision.backend as flow
        >>> w = flow.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = flow.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8000, -1.6000], requires_grad=True)
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
