"""``torch.optim.swa_utils``: weight averaging (SWA / EMA) of a model, the SWA learning-rate schedule and the
batch-norm statistics refresh that follows averaging."""
from __future__ import annotations

import copy
import itertools
import math

from .lr_scheduler import LRScheduler, _format_param
from .. import _creation as C
from .. import _dtype as D
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay: float = 0.999):
    """In-place EMA over lists of tensors: ``ema.lerp_(current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _num_averaged):
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                if p_ema.is_floating_point():
                    p_ema.lerp_(p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors: ``avg += (current - avg) / (n + 1)``."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = int(num_averaged.item()) if hasattr(num_averaged, "item") else num_averaged
        with no_grad():
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                if p_avg.is_floating_point():
                    p_avg.lerp_(p_model, 1 / (n + 1))
                else:
                    p_avg.add_((p_model - p_avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """Per-tensor EMA: returns ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Per-tensor running mean: returns ``avg + (current - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters (and buffers with ``use_buffers``) hold an average of the
    model's over ``update_parameters`` calls: equal weights by default, or ``avg_fn`` / ``multi_avg_fn``
    (e.g. ``get_ema_multi_avg_fn(0.999)``)."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", C.tensor(0, dtype=D.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        mine = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                else self.parameters())
        theirs = (itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                  else model.parameters())
        n = int(self.n_averaged.item())
        with no_grad():
            pairs = [(p.detach(), q.detach().to(p.device)) for p, q in zip(mine, theirs)]
            if n == 0:
                for p, q in pairs:
                    p.copy_(q)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn([p for p, _ in pairs], [q for _, q in pairs], self.n_averaged)
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for p, q in pairs:
                    p.copy_(fn(p, q, self.n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.add_(1)


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader`` (cumulative average)."""
    from ..nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for inp in loader:
            if isinstance(inp, (list, tuple)):
                inp = inp[0]
            if device is not None:
                inp = inp.to(device)
            model(inp)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs ("cos" or "linear"), then
    hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]
