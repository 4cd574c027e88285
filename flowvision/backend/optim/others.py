"""RMSprop, Adagrad (torch's rules) and LAMB (timm's ``Lamb`` rule: global grad-norm clip, trust ratio)."""
import math
from typing import Optional, Tuple

import numpy as np

from .optimizer import (Optimizer, ParamsT, _check_non_negative, _f32_view, _grad_array, _params_with_grad,
                        _step_tensor, _zeros_state)
from .._tensor import Tensor

__all__ = ["RMSprop", "Adagrad", "Lamb", "LAMB"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``: ``v = alpha * v + (1 - alpha) * g^2`` and ``p -= lr * g / (sqrt(v) + eps)``
    (``centered``: the variance ``v - mean(g)^2`` instead; ``momentum``: a momentum buffer over the steps).

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        alpha: smoothing constant of the squared-gradient average.
        eps: added to the denominator for stability.
        weight_decay: L2 penalty added to the gradient.
        momentum: momentum factor.
        centered: normalise by the estimated variance of the gradient.
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _update(self):
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p, w, grad in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    state["square_avg"] = _zeros_state(w)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_state(w)
                    if centered:
                        state["grad_avg"] = _zeros_state(w)
                state["step"]._data[...] = state["step"]._data + 1
                if wd != 0:
                    grad = grad + wd * w
                sq = state["square_avg"]._data
                sq *= alpha
                sq += (1 - alpha) * (grad * grad)
                if centered:
                    ga = state["grad_avg"]._data
                    w_ = 1 - alpha
                    if w_ < 0.5:
                        ga += w_ * (grad - ga)
                    else:
                        ga[...] = grad - (grad - ga) * (1 - w_)
                    avg = np.sqrt(sq - ga * ga)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    w -= lr * buf
                else:
                    w += (-lr) * (grad / avg)


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``: the squared gradients are summed per element and the step is
    ``clr * g / (sqrt(sum) + eps)`` with ``clr = lr / (1 + (t - 1) * lr_decay)``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        lr_decay: learning-rate decay per step.
        weight_decay: L2 penalty added to the gradient.
        initial_accumulator_value: start value of the sums.
        eps: added to the denominator for stability.
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).
        fused: accepted for torch compatibility (the update runs per parameter).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                            initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor(0.0)
                w, _ = _f32_view(p)
                state["sum"] = Tensor._wrap(np.full_like(w, group["initial_accumulator_value"]))

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _update(self):
        for group in self.param_groups:
            lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
            for p, w, grad in _params_with_grad(group):
                state = self.state[p]
                state["step"]._data[...] = state["step"]._data + 1
                step = float(state["step"]._data)
                if wd != 0:
                    grad = grad + wd * w
                clr = lr / (1 + (step - 1) * lr_decay)
                s = state["sum"]._data
                s += grad * grad
                std = np.sqrt(s) + eps
                w += (-clr) * (grad / std)


class Lamb(Optimizer):
    """LAMB (You et al., 2019), as timm's ``Lamb``: gradients divided by ``max(1, global_norm / max_grad_norm)``, Adam
    moments with bias correction, L2 weight decay added to the update, and the update scaled per parameter tensor by
    the trust ratio ``||p|| / ||update||``. ``LAMB`` is the same class.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        bias_correction: bias-correct the moment estimates.
        betas: decay rates of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: weight decay added to the update.
        grad_averaging: scale the gradient by ``1 - beta1`` in the first moment.
        max_grad_norm: clip the global gradient norm to this (None: no clipping).
        trust_clip: clip the trust ratio to at most 1.
        always_adapt: apply the trust ratio also to parameters without weight decay.

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, bias_correction: bool = True,
                 betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-6, weight_decay: float = 0.01,
                 grad_averaging: bool = True, max_grad_norm: Optional[float] = 1.0, trust_clip: bool = False,
                 always_adapt: bool = False) -> None:
        _check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=tuple(betas), eps=eps,
                        weight_decay=weight_decay, grad_averaging=grad_averaging, max_grad_norm=max_grad_norm,
                        trust_clip=trust_clip, always_adapt=always_adapt)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _clip_factor(self):
        max_grad_norm = self.defaults["max_grad_norm"]
        if max_grad_norm is None:
            return None
        norms = [np.sqrt(np.sum(np.square(_grad_array(p, np.float32)), dtype=np.float32))
                 for g in self.param_groups for p in g["params"] if p.grad is not None]
        if not norms:
            return None
        total = np.float32(np.sqrt(np.sum(np.square(np.array(norms, np.float32)), dtype=np.float32)))
        return max(total / np.float32(max_grad_norm), np.float32(1.0))

    def _update(self):
        clip = self._clip_factor()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
            group["step"] = group.get("step", 0) + 1
            if not any(p.grad is not None for p in group["params"]):
                continue
            step = group["step"]
            if group["bias_correction"]:
                bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
            else:
                bc1, bc2 = 1.0, 1.0
            wd, lr, eps = group["weight_decay"], group["lr"], group["eps"]
            for p, w, grad in _params_with_grad(group):
                state = self.state[p]
                if clip is not None:
                    grad = grad / clip
                if len(state) == 0:
                    state["exp_avg"] = _zeros_state(w)
                    state["exp_avg_sq"] = _zeros_state(w)
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                if beta3 == 1 - beta1:
                    m += beta3 * (grad - m)
                else:
                    m *= beta1
                    m += beta3 * grad
                v *= beta2
                v += (1 - beta2) * (grad * grad)
                denom = np.sqrt(v) / math.sqrt(bc2) + eps
                update = (m / bc1) / denom
                if wd != 0:
                    update = update + wd * w
                if wd != 0 or group["always_adapt"]:
                    w_norm = np.sqrt(np.sum(w * w))
                    g_norm = np.sqrt(np.sum(update * update))
                    ratio = w_norm / g_norm if (w_norm > 0 and g_norm > 0) else 1.0
                    if group["trust_clip"]:
                        ratio = min(ratio, 1.0)
                    update = update * np.asarray(ratio, dtype=w.dtype)
                w += (-lr) * update


LAMB = Lamb
