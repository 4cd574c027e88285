"""timm-style LR schedulers: ``step(epoch)`` at epoch end, ``step_update(num_updates)`` per update.

They only need an optimizer-like object with ``param_groups`` (list of dicts), so they drive
flowvision.backend optimizers, torch optimizers or anything shaped like them.  Values equal timm's.
Noise (``noise_range_t``) draws from ``numpy.random.default_rng(noise_seed + t)`` (timm uses a torch
Generator), so noisy schedules are deterministic but not timm's exact numbers.
"""
from __future__ import annotations

import bisect
import math
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

__all__ = ["Scheduler", "CosineLRScheduler", "StepLRScheduler", "MultiStepLRScheduler", "PolyLRScheduler",
           "TanhLRScheduler", "PlateauLRScheduler"]


class Scheduler:
    """Base of timm's learning-rate schedulers: sets ``param_group_field`` of every optimizer group per epoch or
    update, with optional noise.

    Args:
        optimizer: any optimizer with ``param_groups`` (flowvision's or torch's).
        param_group_field: the group field to schedule (``"lr"``).
        t_in_epochs: step per epoch (``step(epoch)``) rather than per update (``step_update(num_updates)``).
        noise_range_t: epoch(s) between which noise is added.
        noise_type: ``"normal"`` or ``"uniform"``.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of normal noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_<field>``.
    """

    def __init__(self, optimizer: Any, param_group_field: str, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_type: str = "normal",
                 noise_pct: float = 0.67, noise_std: float = 1.0, noise_seed: Optional[int] = None,
                 initialize: bool = True) -> None:
        self.optimizer = optimizer
        self.param_group_field = param_group_field
        self._initial_param_group_field = f"initial_{param_group_field}"
        for i, group in enumerate(self.optimizer.param_groups):
            if initialize:
                if param_group_field not in group:
                    raise KeyError(f"{param_group_field} missing from param_groups[{i}]")
                group.setdefault(self._initial_param_group_field, group[param_group_field])
            elif self._initial_param_group_field not in group:
                raise KeyError(f"{self._initial_param_group_field} missing from param_groups[{i}]")
        self.base_values = [group[self._initial_param_group_field] for group in self.optimizer.param_groups]
        self.metric: Optional[float] = None
        self.t_in_epochs = t_in_epochs
        self.noise_range_t = noise_range_t
        self.noise_pct = noise_pct
        self.noise_type = noise_type
        self.noise_std = noise_std
        self.noise_seed = noise_seed if noise_seed is not None else 42
        self.update_groups(self.base_values)

    def state_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _get_lr(self, t) -> List[float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _get_values(self, t, on_epoch: bool = True):
        if (on_epoch and self.t_in_epochs) or (not on_epoch and not self.t_in_epochs):
            return self._get_lr(t)
        return None

    def step(self, epoch: int, metric: Optional[float] = None) -> None:
        self.metric = metric
        values = self._get_values(epoch, on_epoch=True)
        if values is not None:
            self.update_groups(self._add_noise(values, epoch))

    def step_update(self, num_updates: int, metric: Optional[float] = None) -> None:
        self.metric = metric
        values = self._get_values(num_updates, on_epoch=False)
        if values is not None:
            self.update_groups(self._add_noise(values, num_updates))

    def update_groups(self, values) -> None:
        if not isinstance(values, (list, tuple)):
            values = [values] * len(self.optimizer.param_groups)
        for group, value in zip(self.optimizer.param_groups, values):
            group[self.param_group_field] = value * group["lr_scale"] if "lr_scale" in group else value

    def _add_noise(self, lrs, t):
        if self._is_apply_noise(t):
            noise = self._calculate_noise(t)
            lrs = [v + v * noise for v in lrs]
        return lrs

    def _is_apply_noise(self, t) -> bool:
        if self.noise_range_t is None:
            return False
        if isinstance(self.noise_range_t, (list, tuple)):
            return self.noise_range_t[0] <= t < self.noise_range_t[1]
        return t >= self.noise_range_t

    def _calculate_noise(self, t) -> float:
        g = np.random.default_rng(self.noise_seed + t)
        if self.noise_type == "normal":
            while True:
                noise = float(g.standard_normal()) * self.noise_std
                if abs(noise) < self.noise_pct:
                    return noise
        return 2 * (float(g.random()) - 0.5) * self.noise_pct


class _Warmup(Scheduler):
    def _init_warmup(self, warmup_t, warmup_lr_init, targets=None):
        self.warmup_t = warmup_t
        self.warmup_lr_init = warmup_lr_init
        if self.warmup_t:
            tv = targets if targets is not None else self.base_values
            self.warmup_steps = [(v - warmup_lr_init) / self.warmup_t for v in tv]
            Scheduler.update_groups(self, self.warmup_lr_init)
        else:
            self.warmup_steps = [1 for _ in self.base_values]

    def _cycle(self, t):
        if self.cycle_mul != 1:
            i = math.floor(math.log(1 - t / self.t_initial * (1 - self.cycle_mul), self.cycle_mul))
            t_i = self.cycle_mul ** i * self.t_initial
            t_curr = t - (1 - self.cycle_mul ** i) / (1 - self.cycle_mul) * self.t_initial
        else:
            i = t // self.t_initial
            t_i = self.t_initial
            t_curr = t - (self.t_initial * i)
        return i, t_i, t_curr

    def _init_cycles(self, t_initial, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_prefix, k_decay=1.0):
        self.t_initial, self.lr_min = t_initial, lr_min
        self.cycle_mul, self.cycle_decay, self.cycle_limit = cycle_mul, cycle_decay, cycle_limit
        self.warmup_prefix, self.k_decay = warmup_prefix, k_decay

    def _get_lr(self, t):
        """Warmup, then the subclass's ``_decay`` within each (restarted, cycle_decay-scaled) cycle."""
        if t < self.warmup_t:
            return [self.warmup_lr_init + t * s for s in self.warmup_steps]
        if self.warmup_prefix:
            t = t - self.warmup_t
        i, t_i, t_curr = self._cycle(t)
        if i >= self.cycle_limit:
            return [self.lr_min for _ in self.base_values]
        gamma = self.cycle_decay ** i
        return [self._decay(v * gamma, t_curr, t_i) for v in self.base_values]

    def get_cycle_length(self, cycles: int = 0):
        cycles = max(1, cycles or self.cycle_limit)
        if self.cycle_mul == 1.0:
            t = self.t_initial * cycles
        else:
            t = int(math.floor(-self.t_initial * (self.cycle_mul ** cycles - 1) / (1 - self.cycle_mul)))
        return t + self.warmup_t if self.warmup_prefix else t


def _noise_kw(kw):
    return {k: kw[k] for k in ("t_in_epochs", "noise_range_t", "noise_pct", "noise_std", "noise_seed", "initialize")}


class CosineLRScheduler(_Warmup):
    """Cosine decay with restarts (SGDR), warmup, cycle_mul / cycle_decay / cycle_limit and k-decay.

    Args:
        optimizer: any optimizer with ``param_groups``.
        t_initial: length of the first cycle.
        lr_min: the lowest learning rate.
        cycle_mul: cycle length multiplier after each restart.
        cycle_decay: peak learning-rate multiplier after each restart.
        cycle_limit: number of cycles (restarts + 1).
        warmup_t: warmup length (epochs or updates).
        warmup_lr_init: learning rate at the start of the warmup.
        warmup_prefix: count the decay from the end of the warmup.
        t_in_epochs: step per epoch rather than per update.
        noise_range_t: epoch(s) between which noise is added.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
        k_decay: the k of k-decay (1: plain cosine).
    """

    def __init__(self, optimizer: Any, t_initial: int, lr_min: float = 0.0, cycle_mul: float = 1.0,
                 cycle_decay: float = 1.0, cycle_limit: int = 1, warmup_t: int = 0, warmup_lr_init: float = 0.0,
                 warmup_prefix: bool = False, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_pct: float = 0.67,
                 noise_std: float = 1.0, noise_seed: int = 42, k_decay: float = 1.0, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", **_noise_kw(locals()))
        if t_initial <= 0 or lr_min < 0:
            raise ValueError("t_initial must be > 0 and lr_min >= 0")
        self._init_cycles(t_initial, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_prefix, k_decay)
        self._init_warmup(warmup_t, warmup_lr_init)

    def _decay(self, peak, t_curr, t_i):
        k = self.k_decay
        return self.lr_min + 0.5 * (peak - self.lr_min) * (1 + math.cos(math.pi * t_curr ** k / t_i ** k))


class PolyLRScheduler(_Warmup):
    """Polynomial decay from the initial learning rate to ``lr_min`` over ``t_initial`` epochs, with restarts and
    warmup like timm's ``PolyLRScheduler``.

    Args:
        optimizer: any optimizer with ``param_groups``.
        t_initial: length of the first cycle.
        power: the polynomial exponent.
        lr_min: the lowest learning rate.
        cycle_mul: cycle length multiplier after each restart.
        cycle_decay: peak learning-rate multiplier after each restart.
        cycle_limit: number of cycles (restarts + 1).
        warmup_t: warmup length (epochs or updates).
        warmup_lr_init: learning rate at the start of the warmup.
        warmup_prefix: count the decay from the end of the warmup.
        t_in_epochs: step per epoch rather than per update.
        noise_range_t: epoch(s) between which noise is added.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
        k_decay: the k of k-decay.
    """

    def __init__(self, optimizer: Any, t_initial: int, power: float = 0.5, lr_min: float = 0.0, cycle_mul: float = 1.0,
                 cycle_decay: float = 1.0, cycle_limit: int = 1, warmup_t: int = 0, warmup_lr_init: float = 0.0,
                 warmup_prefix: bool = False, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_pct: float = 0.67,
                 noise_std: float = 1.0, noise_seed: int = 42, k_decay: float = 1.0, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", **_noise_kw(locals()))
        if t_initial <= 0 or lr_min < 0:
            raise ValueError("t_initial must be > 0 and lr_min >= 0")
        self.power = power
        self._init_cycles(t_initial, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_prefix, k_decay)
        self._init_warmup(warmup_t, warmup_lr_init)

    def _decay(self, peak, t_curr, t_i):
        k = self.k_decay
        return self.lr_min + (peak - self.lr_min) * (1 - t_curr ** k / t_i ** k) ** self.power


class TanhLRScheduler(_Warmup):
    """Hyperbolic-tangent decay between bounds ``lb`` and ``ub`` over ``t_initial`` epochs, with restarts and warmup
    (timm's ``TanhLRScheduler``).

    Args:
        optimizer: any optimizer with ``param_groups``.
        t_initial: length of the first cycle.
        lb: lower bound of the tanh argument.
        ub: upper bound of the tanh argument.
        lr_min: the lowest learning rate.
        cycle_mul: cycle length multiplier after each restart.
        cycle_decay: peak learning-rate multiplier after each restart.
        cycle_limit: number of cycles (restarts + 1).
        warmup_t: warmup length (epochs or updates).
        warmup_lr_init: learning rate at the start of the warmup.
        warmup_prefix: count the decay from the end of the warmup.
        t_in_epochs: step per epoch rather than per update.
        noise_range_t: epoch(s) between which noise is added.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
    """

    def __init__(self, optimizer: Any, t_initial: int, lb: float = -7.0, ub: float = 3.0, lr_min: float = 0.0,
                 cycle_mul: float = 1.0, cycle_decay: float = 1.0, cycle_limit: int = 1, warmup_t: int = 0,
                 warmup_lr_init: float = 0.0, warmup_prefix: bool = False, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_pct: float = 0.67,
                 noise_std: float = 1.0, noise_seed: int = 42, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", **_noise_kw(locals()))
        if t_initial <= 0 or lr_min < 0 or not lb < ub or cycle_limit < 0 or warmup_t < 0 or warmup_lr_init < 0:
            raise ValueError("invalid TanhLRScheduler arguments")
        self.lb, self.ub = lb, ub
        self._init_cycles(t_initial, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_prefix)
        self.warmup_t = 0
        targets = None
        if warmup_t and not warmup_prefix:
            targets = self._get_lr(warmup_t)
        self._init_warmup(warmup_t, warmup_lr_init, targets)

    def _decay(self, peak, t_curr, t_i):
        tr = t_curr / t_i
        return self.lr_min + 0.5 * (peak - self.lr_min) * (1 - math.tanh(self.lb * (1.0 - tr) + self.ub * tr))


class StepLRScheduler(_Warmup):
    """Decay the learning rate by ``decay_rate`` every ``decay_t`` epochs, after an optional warmup (timm's).

    Args:
        optimizer: any optimizer with ``param_groups``.
        decay_t: epochs (or updates) between decays.
        decay_rate: the multiplier applied at each decay.
        warmup_t: warmup length (epochs or updates).
        warmup_lr_init: learning rate at the start of the warmup.
        warmup_prefix: count the decay from the end of the warmup.
        t_in_epochs: step per epoch rather than per update.
        noise_range_t: epoch(s) between which noise is added.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
    """

    def __init__(self, optimizer: Any, decay_t: float, decay_rate: float = 1.0, warmup_t: int = 0,
                 warmup_lr_init: float = 0.0, warmup_prefix: bool = True, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_pct: float = 0.67,
                 noise_std: float = 1.0, noise_seed: int = 42, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", **_noise_kw(locals()))
        self.decay_t, self.decay_rate, self.warmup_prefix = decay_t, decay_rate, warmup_prefix
        self._init_warmup(warmup_t, warmup_lr_init)

    def _get_lr(self, t):
        if t < self.warmup_t:
            return [self.warmup_lr_init + t * s for s in self.warmup_steps]
        if self.warmup_prefix:
            t = t - self.warmup_t
        return [v * (self.decay_rate ** (t // self.decay_t)) for v in self.base_values]


class MultiStepLRScheduler(_Warmup):
    """Decay the learning rate by ``decay_rate`` at each epoch in ``decay_t``, after an optional warmup (timm's).

    Args:
        optimizer: any optimizer with ``param_groups``.
        decay_t: the epochs (or updates) at which to decay.
        decay_rate: the multiplier applied at each decay.
        warmup_t: warmup length (epochs or updates).
        warmup_lr_init: learning rate at the start of the warmup.
        warmup_prefix: count the decay from the end of the warmup.
        t_in_epochs: step per epoch rather than per update.
        noise_range_t: epoch(s) between which noise is added.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
    """

    def __init__(self, optimizer: Any, decay_t: List[int], decay_rate: float = 1.0, warmup_t: int = 0,
                 warmup_lr_init: float = 0.0, warmup_prefix: bool = True, t_in_epochs: bool = True,
                 noise_range_t: Optional[Union[float, Sequence[float]]] = None, noise_pct: float = 0.67,
                 noise_std: float = 1.0, noise_seed: int = 42, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", **_noise_kw(locals()))
        self.decay_t, self.decay_rate, self.warmup_prefix = decay_t, decay_rate, warmup_prefix
        self._init_warmup(warmup_t, warmup_lr_init)

    def get_curr_decay_steps(self, t):
        return bisect.bisect_right(self.decay_t, t + 1)

    def _get_lr(self, t):
        if t < self.warmup_t:
            return [self.warmup_lr_init + t * s for s in self.warmup_steps]
        if self.warmup_prefix:
            t = t - self.warmup_t
        return [v * (self.decay_rate ** self.get_curr_decay_steps(t)) for v in self.base_values]


class PlateauLRScheduler(Scheduler):
    """Decay by ``decay_rate`` when the metric plateaus (ReduceLROnPlateau semantics, rel threshold).

    Args:
        optimizer: any optimizer with ``param_groups``.
        decay_rate: the multiplier applied on a plateau.
        patience_t: epochs without improvement before decaying.
        threshold: relative improvement that counts.
        cooldown_t: epochs to wait after a decay.
        warmup_t: warmup length.
        warmup_lr_init: learning rate at the start of the warmup.
        lr_min: the lowest learning rate.
        mode: ``"max"`` (the metric should grow) or ``"min"``.
        noise_range_t: epoch(s) between which noise is added.
        noise_type: ``"normal"`` or ``"uniform"``.
        noise_pct: noise limit as a fraction of the value.
        noise_std: standard deviation of the noise.
        noise_seed: seed of the noise.
        initialize: store the groups' initial values as ``initial_lr``.
    """

    def __init__(self, optimizer: Any, decay_rate: float = 0.1, patience_t: int = 10, threshold: float = 1e-4,
                 cooldown_t: int = 0, warmup_t: int = 0, warmup_lr_init: float = 0.0, lr_min: float = 0.0,
                 mode: str = "max", noise_range_t: Optional[Union[float, Sequence[float]]] = None,
                 noise_type: str = "normal", noise_pct: float = 0.67, noise_std: float = 1.0,
                 noise_seed: Optional[int] = None, initialize: bool = True) -> None:
        super().__init__(optimizer, "lr", noise_range_t=noise_range_t, noise_type=noise_type, noise_pct=noise_pct,
                         noise_std=noise_std, noise_seed=noise_seed, initialize=initialize)
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.decay_rate, self.patience_t, self.threshold = decay_rate, patience_t, threshold
        self.cooldown_t, self.lr_min, self.mode = cooldown_t, lr_min, mode
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self.warmup_t, self.warmup_lr_init = warmup_t, warmup_lr_init
        if self.warmup_t:
            self.warmup_steps = [(v - warmup_lr_init) / self.warmup_t for v in self.base_values]
            Scheduler.update_groups(self, self.warmup_lr_init)
        else:
            self.warmup_steps = [1 for _ in self.base_values]
        self.restore_lr: Optional[List[float]] = None

    def _is_better(self, a):
        if self.mode == "min":
            return a < self.best * (1.0 - self.threshold)
        return a > self.best * (self.threshold + 1.0)

    def _plateau_step(self, metric):
        current = float(metric)
        self.last_epoch += 1
        if self._is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience_t:
            for group in self.optimizer.param_groups:
                old = float(group["lr"])
                new = max(old * self.decay_rate, self.lr_min)
                if old - new > 1e-8:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown_t
            self.num_bad_epochs = 0

    def step(self, epoch: int, metric: Optional[float] = None) -> None:
        if epoch <= self.warmup_t:
            Scheduler.update_groups(self, [self.warmup_lr_init + epoch * s for s in self.warmup_steps])
            return
        if self.restore_lr is not None:
            for i, group in enumerate(self.optimizer.param_groups):
                group["lr"] = self.restore_lr[i]
            self.restore_lr = None
        if metric is not None:
            self._plateau_step(metric)
        if self._is_apply_noise(epoch):
            noise = self._calculate_noise(epoch)
            self.restore_lr = []
            for group in self.optimizer.param_groups:
                old = float(group["lr"])
                self.restore_lr.append(old)
                group["lr"] = old + old * noise

    def step_update(self, num_updates: int, metric: Optional[float] = None):
        return None

    def _get_lr(self, t):  # pragma: no cover - step is overridden
        raise RuntimeError("PlateauLRScheduler computes its values in step()")
