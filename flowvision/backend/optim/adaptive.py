"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop with torch's single-tensor update rules.

Arithmetic follows torch's order of operations (and its float32 scalar state for ``mu_product`` / ``eta``) so a
run matches ``torch.optim`` step for step on the same gradients.
"""
from typing import Optional, Tuple

import numpy as np

from .optimizer import Optimizer, ParamsT, _check_non_negative, _params_with_grad, _step_tensor, _zeros_state
from .adam import _check as _check_adam, _lerp_
from .._tensor import Tensor

__all__ = ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]


def _f32(x):
    """A Python float rounded through float32, as torch's 0-dim float32 state tensors hold it."""
    return float(np.float32(x))


def _decay(group, w, grad, lr, decoupled):
    wd = group["weight_decay"]
    if wd != 0:
        if decoupled:
            w *= 1 - lr * wd
        else:
            grad = grad + wd * w
    return grad


def _next_step(state):
    st = state["step"]
    st._data[...] = st._data + 1
    return float(st._data)


class _PerParameterOptimizer(Optimizer):
    """An optimizer whose update visits each parameter with a gradient on its own.

    Subclasses give ``_init_state(group, w)``: the state entries after ``step`` (created on a parameter's first
    update, in the order returned), and ``_update_param(group, state, w, grad, step)``: one parameter's update,
    ``step`` already counting it.
    """

    def step(self, closure=None):
        return self._run_step(closure, self._update)

    def _update(self) -> None:
        for group in self.param_groups:
            for p, w, grad in _params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    state.update(self._init_state(group, w))
                self._update_param(group, state, w, grad, _next_step(state))

    def _init_state(self, group: dict, w: np.ndarray) -> dict:
        raise NotImplementedError

    def _update_param(self, group: dict, state: dict, w: np.ndarray, grad: np.ndarray, step: float) -> None:
        raise NotImplementedError


class Adadelta(_PerParameterOptimizer):
    """ADADELTA (Zeiler 2012), as ``torch.optim.Adadelta``: running averages of the squared gradients and squared
    updates give a unit-corrected step ``sqrt(u + eps) / sqrt(v + eps) * g``, scaled by ``lr``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: scale of the step (torch's default 1.0).
        rho: decay rate of the running averages, in [0, 1].
        eps: added inside the square roots.
        weight_decay: L2 penalty added to the gradient.
        foreach: accepted for torch compatibility (the update runs per parameter).
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: Optional[bool] = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_state(self, group, w):
        return {"square_avg": _zeros_state(w), "acc_delta": _zeros_state(w)}

    def _update_param(self, group, state, w, grad, step):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        grad = _decay(group, w, grad, lr, False)
        sq, acc = state["square_avg"]._data, state["acc_delta"]._data
        sq *= rho
        sq += (1 - rho) * (grad * grad)
        std = np.sqrt(sq + eps)
        delta = np.sqrt(acc + eps)
        delta /= std
        delta *= grad
        acc *= rho
        acc += (1 - rho) * (delta * delta)
        w += (-lr) * delta


class Adamax(_PerParameterOptimizer):
    """Adamax (Kingma & Ba 2014, section 7), as ``torch.optim.Adamax``: Adam with the infinity norm
    ``u = max(beta2 * u, |g| + eps)`` in place of the second moment.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: L2 penalty added to the gradient.
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).
        capturable: accepted for torch compatibility (no CUDA-graph capture here).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, group, w):
        return {"exp_avg": _zeros_state(w), "exp_inf": _zeros_state(w)}

    def _update_param(self, group, state, w, grad, step):
        (beta1, beta2), lr, eps = group["betas"], group["lr"], group["eps"]
        grad = _decay(group, w, grad, lr, False)
        exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        np.maximum(exp_inf, np.abs(grad) + eps, out=exp_inf)
        clr = lr / (1 - beta1 ** step)
        w += (-clr) * (exp_avg / exp_inf)


class NAdam(_PerParameterOptimizer):
    """NAdam (Dozat 2016), as ``torch.optim.NAdam``: Adam with Nesterov momentum and torch's momentum-decay schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: L2 penalty added to the gradient.
        momentum_decay: the momentum-decay rate ``psi``.
        decoupled_weight_decay: decay the weights directly (as AdamW) instead of an L2 term.
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        _check_non_negative(momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, group, w):
        return {"mu_product": _step_tensor(1.0), "exp_avg": _zeros_state(w), "exp_avg_sq": _zeros_state(w)}

    def _update_param(self, group, state, w, grad, step):
        (beta1, beta2), lr, eps, md = group["betas"], group["lr"], group["eps"], group["momentum_decay"]
        grad = _decay(group, w, grad, lr, group["decoupled_weight_decay"])
        bias_correction2 = 1 - beta2 ** step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
        mp = state["mu_product"]._data
        mp[...] = mp * np.float32(mu)
        mu_product = float(mp)
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * (grad * grad)
        denom = np.sqrt(exp_avg_sq / bias_correction2)
        denom += eps
        mu_product_next = mu_product * mu_next
        w += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (grad / denom)
        w += ((-lr * mu_next) / (1.0 - mu_product_next)) * (exp_avg / denom)


class RAdam(_PerParameterOptimizer):
    """Rectified Adam (Liu et al. 2019), as ``torch.optim.RAdam``: momentum SGD steps until the variance of the adaptive
    learning rate is tractable (``rho_t > 5``), rectified Adam steps after.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment estimates.
        eps: added to the denominator for stability.
        weight_decay: L2 penalty added to the gradient.
        decoupled_weight_decay: decay the weights directly (as AdamW) instead of an L2 term.
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable, differentiable=differentiable))

    def _init_state(self, group, w):
        return {"exp_avg": _zeros_state(w), "exp_avg_sq": _zeros_state(w)}

    def _update_param(self, group, state, w, grad, step):
        (beta1, beta2), lr, eps = group["betas"], group["lr"], group["eps"]
        grad = _decay(group, w, grad, lr, group["decoupled_weight_decay"])
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * (grad * grad)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bias_correction2 ** 0.5) / (np.sqrt(exp_avg_sq) + eps)
            w -= corrected * lr * adaptive * rect
        else:
            w -= corrected * lr


class ASGD(_PerParameterOptimizer):
    """Averaged SGD (Polyak & Juditsky 1992), as ``torch.optim.ASGD``: SGD with a decaying step
    ``eta = lr / (1 + lambd * lr * t)^alpha`` and, from step ``t0``, a running average of the iterates in
    ``state["ax"]``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: learning rate.
        lambd: decay term.
        alpha: power of the step decay.
        t0: the step at which averaging starts.
        weight_decay: L2 penalty added to the gradient.
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).
        capturable: accepted for torch compatibility (no CUDA-graph capture here).

    Raises:
        ValueError: a negative or out-of-range hyperparameter, an empty parameter list, or a non-leaf or
            non-floating-point parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_non_negative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, group, w):
        return {"eta": _step_tensor(group["lr"]), "mu": _step_tensor(1.0), "ax": _zeros_state(w)}

    def _update_param(self, group, state, w, grad, step):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        grad = _decay(group, w, grad, lr, False)
        eta = float(state["eta"]._data)
        w *= 1 - lambd * eta
        w += (-eta) * grad
        ax, mu = state["ax"]._data, float(state["mu"]._data)
        if mu != 1:
            ax += (w - ax) * mu
        else:
            ax[...] = w
        state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
        state["mu"]._data[...] = 1 / max(1, step - t0)


class Rprop(_PerParameterOptimizer):
    """Resilient backpropagation, as ``torch.optim.Rprop``: per-element step sizes multiplied by ``etas[1]`` where the
    gradient keeps its sign and by ``etas[0]`` where it flips (that step skipped), clamped to ``step_sizes``; the
    update is ``-sign(g) * step``.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups) with ``params`` and per-group options.
        lr: initial step size.
        etas: ``(decrease, increase)`` factors, ``0 < decrease < 1 < increase``.
        step_sizes: ``(min, max)`` allowed step size.
        capturable: accepted for torch compatibility (no CUDA-graph capture here).
        foreach: accepted for torch compatibility (the update runs per parameter).
        maximize: maximise the objective (step along the gradient) instead of minimising it.
        differentiable: accepted for torch compatibility (the step is not recorded by autograd).

    Raises:
        ValueError: a negative learning rate, invalid ``etas``, or invalid parameters.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: Tuple[float, float] = (0.5, 1.2),
                 step_sizes: Tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, group, w):
        return {"prev": _zeros_state(w), "step_size": Tensor._wrap(np.full_like(w, group["lr"]))}

    def _update_param(self, group, state, w, grad, step):
        (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
        prev, step_size = state["prev"]._data, state["step_size"]._data
        s = np.sign(grad * prev)
        factor = np.where(s > 0, etaplus, np.where(s < 0, etaminus, 1.0)).astype(w.dtype)
        step_size *= factor
        np.clip(step_size, smin, smax, out=step_size)
        grad = np.where(factor == np.asarray(etaminus, w.dtype), 0, grad).astype(w.dtype)
        w -= np.sign(grad) * step_size
        prev[...] = grad
