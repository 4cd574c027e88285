"""Adam / AdamW (amsgrad, maximize): torch's single-tensor update, bias-correction order included."""
import math
from typing import Optional, Tuple, Union

import numpy as np

from . import _fused
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_non_negative, _params_with_grad

__all__ = ["Adam", "AdamW"]


def _check(lr, betas, eps, weight_decay):
    _check_non_negative(lr=lr, eps=eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    _check_non_negative(weight_decay=weight_decay)


def _lerp_(a, b, w):
    """a.lerp_(b, w) with torch's two-sided formula."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


class Adam(Optimizer):
    """Adam (Kingma & Ba), as ``torch.optim.Adam``: bias-corrected moment estimates ``m / (1 - beta1^t)`` and
    ``v / (1 - beta2^t)``, step ``lr * m_hat / (sqrt(v_hat) + eps)``, in torch's order of operations.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: L2 penalty added to the gradient.
        amsgrad: use the maximum of the past second moments (AMSGrad).
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        differentiable: must be False: differentiating through the step is not supported.
        fused: accepted for torch compatibility; the compiled in-place kernel runs whenever it applies (all of a group's
            tensors in one dtype, contiguous) unless ``FLOWVISION_FUSED_OPTIM=0``.
        decoupled_weight_decay: decay the weights directly (``p *= 1 - lr * weight_decay``, AdamW) instead of adding an
            L2 term to the gradient.

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    _decoupled_default = False

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        _check(lr, betas, eps, weight_decay)
        if differentiable:
            raise ValueError("differentiable=True is not supported by flowvision optimizers")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            group.setdefault("decoupled_weight_decay", self._decoupled_default)

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _update(self):
        for group in self.param_groups:
            if _fused.adam_group(self, group):  # one compiled in-place pass, bit-identical to the loop below
                continue
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
            for p, w, grad in _params_with_grad(group):
                state = self.state[p]
                step_t = _fused.adam_state_step(state, w, amsgrad)
                if wd != 0:
                    if decoupled:
                        w *= 1 - lr * wd
                    else:
                        grad = grad + wd * w
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * (grad * grad)
                step = float(step_t._data)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = math.sqrt(bias_correction2)
                if amsgrad:
                    mx = state["max_exp_avg_sq"]._data
                    np.maximum(mx, exp_avg_sq, out=mx)
                    denom = np.sqrt(mx) / bias_correction2_sqrt
                else:
                    denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt
                denom += eps
                w += (-step_size) * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``: ``p *= 1 - lr * weight_decay``
    before the Adam step.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: the decoupled weight-decay factor.
        amsgrad: use the maximum of the past second moments (AMSGrad).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        foreach: accepted for torch compatibility (the update runs per parameter).
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        differentiable: must be False: differentiating through the step is not supported.
        fused: accepted for torch compatibility; the compiled in-place kernel runs whenever it applies (all of a group's
            tensors in one dtype, contiguous) unless ``FLOWVISION_FUSED_OPTIM=0``.

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    _decoupled_default = True

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
