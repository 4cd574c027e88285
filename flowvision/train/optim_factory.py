"""Optimizer factory with timm's parameter grouping: no weight decay on biases, norm weights (any 1-d
parameter) and the names a model lists in ``no_weight_decay()``.

The optimizers themselves are ``flowvision.backend.optim``'s (torch's update rules); this module only
chooses one by name and builds the two parameter groups the same way timm's ``create_optimizer_v2`` does,
so the group order, and with it the optimizer state layout, matches timm's.
"""
from __future__ import annotations

import fnmatch
from typing import Any, Collection, Dict, List, Optional

from flowvision.backend import optim
from ._names import OPTIMIZERS

__all__ = ["param_groups_weight_decay", "create_optimizer_v2", "OPTIMIZERS"]


def _matches(name: str, patterns: Collection[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def param_groups_weight_decay(model, weight_decay: float = 1e-5,
                              no_weight_decay_list: Collection[str] = ()) -> List[Dict[str, Any]]:
    """Split ``model``'s trainable parameters into a no-decay group and a decay group.

    A parameter gets no weight decay when it is 1-d (norm scales, biases, layer scales), its name ends in
    ``.bias``, or it matches a pattern in ``no_weight_decay_list`` (fnmatch, like timm).

    Args:
        model: a ``flowvision.backend.nn.Module``.
        weight_decay: the decay of the second group.
        no_weight_decay_list: parameter names or patterns that must not be decayed.

    Returns:
        ``[{'params': no_decay, 'weight_decay': 0.}, {'params': decay, 'weight_decay': weight_decay}]``,
        leaving out an empty group.
    """
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or _matches(name, no_weight_decay_list):
            no_decay.append(param)
        else:
            decay.append(param)
    groups = []
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    if decay:
        groups.append({"params": decay, "weight_decay": weight_decay})
    return groups


def create_optimizer_v2(model, opt: str = "sgd", lr: Optional[float] = None, weight_decay: float = 0.0,
                        momentum: float = 0.9, filter_bias_and_bn: bool = True, eps: Optional[float] = None,
                        betas: Optional[tuple] = None, **kwargs: Any):
    """Build an optimizer by timm name over ``model``'s parameters.

    Args:
        model: the module whose parameters are optimised.
        opt: ``sgd``/``nesterov`` (SGD, Nesterov momentum), ``momentum`` (SGD, plain momentum), ``adam``,
            ``adamw``, ``lamb`` or ``rmsprop``.
        lr: learning rate (None: the optimizer's default; required for SGD).
        weight_decay: decay applied to the decay group (see :func:`param_groups_weight_decay`).
        momentum: SGD/RMSprop momentum.
        filter_bias_and_bn: exclude biases, 1-d parameters and ``model.no_weight_decay()`` from decay.
        eps, betas: optimizer constants where they apply (None: the optimizer's default).
        **kwargs: passed to the optimizer (e.g. ``max_grad_norm`` for LAMB).

    Returns:
        A ``flowvision.backend.optim.Optimizer``.
    """
    name = opt.lower()
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {opt!r}; expected one of {', '.join(OPTIMIZERS)}")
    if weight_decay and filter_bias_and_bn:
        skip = model.no_weight_decay() if hasattr(model, "no_weight_decay") else set()
        params = param_groups_weight_decay(model, weight_decay, skip)
        weight_decay = 0.0
    else:
        params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters")
    args: Dict[str, Any] = dict(weight_decay=weight_decay, **kwargs)
    if lr is not None:
        args["lr"] = lr
    if name in ("sgd", "nesterov", "momentum"):
        if lr is None:
            raise ValueError("SGD needs an explicit lr")
        args.pop("eps", None)
        return optim.SGD(params, momentum=momentum, nesterov=name != "momentum", **args)
    if eps is not None:
        args["eps"] = eps
    if betas is not None and name != "rmsprop":
        args["betas"] = tuple(betas)
    if name == "adam":
        return optim.Adam(params, **args)
    if name == "adamw":
        return optim.AdamW(params, **args)
    if name == "lamb":
        return optim.Lamb(params, **args)
    # timm's rmsprop: alpha 0.9 and the given momentum
    return optim.RMSprop(params, alpha=0.9, momentum=momentum, **args)
