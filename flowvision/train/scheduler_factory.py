"""Scheduler factory with timm's ``create_scheduler_v2`` arguments over ``flowvision.data``'s schedulers.

Schedules are stepped per epoch (``scheduler.step(epoch)``) or, with ``step_on_epochs=False``, per
optimizer update (``scheduler.step_update(num_updates)``); warmup, cooldown and the returned epoch count
follow timm, so the learning rate at every step equals timm's for the same arguments.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from flowvision.data.scheduler import (CosineLRScheduler, MultiStepLRScheduler, PolyLRScheduler, Scheduler,
                                       StepLRScheduler, TanhLRScheduler)
from ._names import SCHEDULERS

__all__ = ["create_scheduler_v2", "SCHEDULERS"]


def create_scheduler_v2(optimizer, sched: str = "cosine", num_epochs: int = 300, decay_epochs: float = 90,
                        decay_milestones: Sequence[int] = (90, 180, 270), cooldown_epochs: int = 0,
                        decay_rate: float = 0.1, min_lr: float = 0.0, warmup_lr: float = 1e-5,
                        warmup_epochs: int = 0, warmup_prefix: bool = False, cycle_mul: float = 1.0,
                        cycle_decay: float = 0.1, cycle_limit: int = 1, k_decay: float = 1.0,
                        step_on_epochs: bool = True, updates_per_epoch: int = 0
                        ) -> Tuple[Optional[Scheduler], int]:
    """Create a learning-rate schedule by name.

    Args:
        optimizer: anything with ``param_groups`` (a flowvision optimizer).
        sched: one of :data:`SCHEDULERS`; ``none`` leaves the lr alone and returns no scheduler.
        num_epochs: schedule length in epochs (warmup included unless ``warmup_prefix``).
        decay_epochs: step interval of ``step``.
        decay_milestones: epochs at which ``multistep`` decays.
        cooldown_epochs: epochs at ``min_lr`` after a cosine/tanh/poly schedule.
        decay_rate: step/multistep factor, the power of ``poly``.
        min_lr: floor of cosine/tanh/poly.
        warmup_lr: lr at the start of the linear warmup.
        warmup_epochs: epochs of linear warmup.
        warmup_prefix: warmup is added before ``num_epochs`` instead of inside it.
        cycle_mul, cycle_decay, cycle_limit, k_decay: cosine restarts and k-decay (timm's meaning).
        step_on_epochs: step per epoch; False steps per update and needs ``updates_per_epoch``.
        updates_per_epoch: optimizer updates per epoch (after gradient accumulation).

    Returns:
        ``(scheduler or None, total number of epochs to train)``.
    """
    if sched not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {sched!r}; expected one of {', '.join(SCHEDULERS)}")
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be positive, got {num_epochs}")
    t_initial, warmup_t, decay_t, cooldown_t = num_epochs, warmup_epochs, decay_epochs, cooldown_epochs
    milestones = list(decay_milestones)
    if not step_on_epochs:
        if updates_per_epoch <= 0:
            raise ValueError("step_on_epochs=False needs updates_per_epoch > 0 (optimizer updates per epoch)")
        t_initial *= updates_per_epoch
        warmup_t *= updates_per_epoch
        decay_t *= updates_per_epoch
        cooldown_t *= updates_per_epoch
        milestones = [m * updates_per_epoch for m in milestones]
    warm = dict(warmup_lr_init=warmup_lr, warmup_t=warmup_t, warmup_prefix=warmup_prefix)
    cycles = dict(cycle_mul=cycle_mul, cycle_decay=cycle_decay, cycle_limit=cycle_limit)
    if sched == "none":
        return None, num_epochs
    if sched == "cosine":
        s = CosineLRScheduler(optimizer, t_initial=t_initial, lr_min=min_lr, t_in_epochs=step_on_epochs,
                              k_decay=k_decay, **cycles, **warm)
    elif sched == "tanh":
        s = TanhLRScheduler(optimizer, t_initial=t_initial, lr_min=min_lr, t_in_epochs=step_on_epochs,
                            **cycles, **warm)
    elif sched == "poly":
        s = PolyLRScheduler(optimizer, power=decay_rate, t_initial=t_initial, lr_min=min_lr,
                            t_in_epochs=step_on_epochs, k_decay=k_decay, **cycles, **warm)
    elif sched == "step":
        s = StepLRScheduler(optimizer, decay_t=decay_t, decay_rate=decay_rate, t_in_epochs=step_on_epochs,
                            **warm)
    elif sched == "constant":
        s = StepLRScheduler(optimizer, decay_t=1, decay_rate=1.0, t_in_epochs=step_on_epochs, **warm)
    else:
        s = MultiStepLRScheduler(optimizer, decay_t=milestones, decay_rate=decay_rate,
                                 t_in_epochs=step_on_epochs, **warm)
    if sched in ("cosine", "tanh", "poly"):  # cycles and cooldown set the length (warmup prefix included)
        total = s.get_cycle_length() + cooldown_t
        num_epochs = total if step_on_epochs else total // updates_per_epoch
    elif warmup_prefix:
        num_epochs += warmup_epochs
    return s, num_epochs
