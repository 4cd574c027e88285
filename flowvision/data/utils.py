"""Training companions (timm.utils semantics): accuracy, AverageMeter, ModelEmaV2/V3, gradient clipping.

These work on flowvision.backend models/tensors (numpy-backed, updated in place without autograd).
"""
from __future__ import annotations

from copy import deepcopy
from typing import Any, List, Optional, Sequence

import numpy as np

from ._arrays import as_numpy, kind_of, from_numpy_like

__all__ = ["accuracy", "AverageMeter", "ModelEmaV2", "ModelEmaV3", "dispatch_clip_grad", "adaptive_clip_grad"]


def _np(x):
    return as_numpy(x) if kind_of(x) != "other" else np.asarray(x)


def accuracy(output: Any, target: Any, topk: Sequence[int] = (1,)) -> List[Any]:
    """Top-k accuracy in percent for each k (values of the input's container type; numpy -> floats).

    Args:
        output: ``(B, num_classes)`` logits or scores (numpy array or tensor).
        target: ``(B,)`` integer labels.
        topk: the ``k`` values.

    Returns:
        One accuracy (percent) per ``k``: floats for numpy input, 0-d values of the input's type otherwise.
    """
    out = _np(output)
    tgt = _np(target).reshape(-1)
    maxk = min(max(topk), out.shape[1])
    batch_size = tgt.shape[0]
    # stable top-k ordering like torch.topk(sorted=True): largest first
    pred = np.argsort(-out, axis=1, kind="stable")[:, :maxk].T
    correct = pred == tgt.reshape(1, -1)
    res = [np.float32(correct[:min(k, maxk)].reshape(-1).astype(np.float32).sum(0) * 100.0 / batch_size) for k in topk]
    if kind_of(output) in ("backend", "dlpack"):
        return [from_numpy_like(np.asarray(r, np.float32), output) for r in res]
    return [float(r) for r in res]


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n: int = 1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count if self.count else 0


def _state_arrays(model):
    return [(k, _np(v)) for k, v in model.state_dict().items()]


class ModelEmaV2:
    """EMA of every state_dict entry: ``ema = decay * ema + (1 - decay) * model`` (timm ModelEmaV2).

    Args:
        model: the model whose weights are averaged (deep-copied).
        decay: the EMA decay.
        device: keep the EMA copy on this device.
    """

    def __init__(self, model: Any, decay: float = 0.9999, device: Any = None) -> None:
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device

    def _update(self, model, update_fn):
        for (k, e), (_, m) in zip(_state_arrays(self.module), _state_arrays(model)):
            e[...] = update_fn(e, m)

    def update(self, model):
        d = self.decay
        self._update(model, lambda e, m: (d * e + (1.0 - d) * m).astype(e.dtype, copy=False))

    def set(self, model):
        self._update(model, lambda e, m: m)

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)


def _lerp(e, m, w):
    """torch.lerp(e, m, w) in place on float arrays."""
    w = e.dtype.type(w)
    if w < 0.5:
        e += w * (m - e)
    else:
        e[...] = m - (m - e) * (e.dtype.type(1) - w)


class ModelEmaV3:
    """timm ModelEmaV3: optional warmup decay ``1 - (1 + step/gamma)^-power``, ``update_after_step``,
    ``exclude_buffers``; float entries lerp towards the model, others are copied.  (bfloat16 stochastic
    rounding is not implemented: keep the EMA in float32 with ``dtype`` if the model is low precision.)

    Args:
        model: the model whose weights are averaged (deep-copied).
        decay: the EMA decay (the upper bound with warmup).
        min_decay: lower bound of the decay.
        update_after_step: the first update that averages (before: copies).
        use_warmup: ramp the decay up with the warmup formula.
        warmup_gamma: the gamma of the warmup.
        warmup_power: the power of the warmup.
        device: keep the EMA copy on this device.
        dtype: keep the EMA copy in this dtype.
        exclude_buffers: average parameters only (buffers are copied).
        **_ignored: other timm arguments, accepted and ignored.
    """

    def __init__(self, model: Any, decay: float = 0.9999, min_decay: float = 0.0, update_after_step: int = 0,
                 use_warmup: bool = False, warmup_gamma: float = 1.0, warmup_power: float = 2 / 3, device: Any = None,
                 dtype: Any = None, exclude_buffers: bool = False, **_ignored: Any) -> None:
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.use_warmup = use_warmup
        self.warmup_gamma = warmup_gamma
        self.warmup_power = warmup_power
        self.device = device
        self.exclude_buffers = exclude_buffers
        if dtype is not None:
            self.module.to(dtype=dtype)

    def get_decay(self, step: Optional[int] = None) -> float:
        if step is None:
            return self.decay
        step = max(0, step - self.update_after_step - 1)
        if step <= 0:
            return 0.0
        if self.use_warmup:
            decay = 1 - (1 + step / self.warmup_gamma) ** -self.warmup_power
            return max(min(decay, self.decay), self.min_decay)
        return self.decay

    def update(self, model, step: Optional[int] = None):
        decay = self.get_decay(step)
        if self.exclude_buffers:
            pe = [_np(p) for p in self.module.parameters()]
            pm = [_np(p.detach() if hasattr(p, "detach") else p) for p in model.parameters()]
            for e, m in zip(pe, pm):
                _lerp(e, m.astype(e.dtype, copy=False), 1.0 - decay)
            for be, bm in zip(self.module.buffers(), model.buffers()):
                _np(be)[...] = _np(bm)
            return
        for (k, e), (_, m) in zip(_state_arrays(self.module), _state_arrays(model)):
            if np.issubdtype(e.dtype, np.floating):
                _lerp(e, m.astype(e.dtype, copy=False), 1.0 - decay)
            else:
                e[...] = m

    def set(self, model):
        for (k, e), (_, m) in zip(_state_arrays(self.module), _state_arrays(model)):
            e[...] = m

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)


def _unitwise_norm(x, norm_type=2.0):
    if x.ndim <= 1:
        return np.linalg.norm(x.reshape(-1), ord=norm_type)
    axes = tuple(range(1, x.ndim))
    return np.sum(np.abs(x) ** norm_type, axis=axes, keepdims=True) ** (1.0 / norm_type)


def adaptive_clip_grad(parameters: Any, clip_factor: float = 0.01, eps: float = 1e-3, norm_type: float = 2.0) -> None:
    """AGC (NFNets): clip each unit's gradient to ``clip_factor * max(||w||, eps)``.

    Args:
        parameters: the parameters (an iterable of tensors with ``.grad``), clipped in place.
        clip_factor: maximum ratio of a unit's gradient norm to its weight norm.
        eps: lower bound of the weight norm.
        norm_type: the p of the norms.
    """
    if kind_of(parameters) != "other":
        parameters = [parameters]
    for p in parameters:
        if p.grad is None:
            continue
        w = _np(p.detach() if hasattr(p, "detach") else p)
        g = _np(p.grad)
        max_norm = np.maximum(_unitwise_norm(w, norm_type), eps) * clip_factor
        grad_norm = _unitwise_norm(g, norm_type)
        clipped = g * (max_norm / np.maximum(grad_norm, 1e-6))
        g[...] = np.where(grad_norm < max_norm, g, clipped).astype(g.dtype, copy=False)


def dispatch_clip_grad(parameters: Any, value: float, mode: str = "norm", norm_type: float = 2.0) -> Any:
    """'norm' (clip_grad_norm_), 'value' (clip_grad_value_) or 'agc'.

    Args:
        parameters: the parameters (an iterable of tensors with ``.grad``), clipped in place.
        value: the clip value (max norm, max absolute value, or the AGC clip factor).
        mode: ``"norm"``, ``"value"`` or ``"agc"``.
        norm_type: the p of the norms.

    Returns:
        What the chosen clip function returns (the total norm for ``"norm"``).
    """
    if mode == "agc":
        return adaptive_clip_grad(parameters, value, norm_type=norm_type)
    if mode not in ("norm", "value"):
        raise ValueError(f"unknown clip mode {mode!r}; expected 'norm', 'value' or 'agc'")
    import flowvision.backend.nn.utils as nnu
    if mode == "norm":
        return nnu.clip_grad_norm_(parameters, value, norm_type=norm_type)
    return nnu.clip_grad_value_(parameters, value)
