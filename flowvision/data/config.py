"""resolve_data_config: the preprocessing a model expects (args > model's pretrained_cfg > defaults)."""
from __future__ import annotations

import logging
from typing import Any, Dict, Optional

from .constants import DEFAULT_CROP_MODE, DEFAULT_CROP_PCT, IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD

__all__ = ["resolve_data_config", "resolve_model_data_config"]

_logger = logging.getLogger(__name__)


def _as_dict(cfg) -> Dict[str, Any]:
    if cfg is None:
        return {}
    if isinstance(cfg, dict):
        return cfg
    if hasattr(cfg, "to_dict"):
        return cfg.to_dict()
    if hasattr(cfg, "__dict__"):
        return dict(vars(cfg))
    raise TypeError(f"pretrained_cfg must be a dict or a config object, got {type(cfg).__name__}")


def _broadcast(name, value, in_chans):
    value = tuple(value)
    if len(value) == 1:
        return value * in_chans
    if len(value) != in_chans:
        raise ValueError(f"{name} has {len(value)} values but the input has {in_chans} channels")
    return value


def resolve_data_config(args: Optional[Dict] = None, pretrained_cfg: Optional[Dict[str, Any]] = None, model: Any = None,
                        use_test_size: bool = False, verbose: bool = False) -> Dict[str, Any]:
    """``dict(input_size, interpolation, mean, std, crop_pct, crop_mode)`` ready for ``create_transform(**cfg)``.

    Each key: ``args`` (a dict, e.g. parsed CLI args; ``None`` values ignored) > ``pretrained_cfg``
    (or ``model.pretrained_cfg`` / ``model.default_cfg``) > defaults ((3, 224, 224), 'bicubic',
    ImageNet mean/std, 0.875, 'center').  ``in_chans``/``chans`` and one-element mean/std broadcast;
    ``img_size`` (int) sets a square size; ``use_test_size`` picks ``test_input_size``/``test_crop_pct``.

    Args:
        args: overrides (``input_size``, ``img_size``, ``in_chans``, ``interpolation``, ``mean``, ``std``,
            ``crop_pct``, ``crop_mode``...).
        pretrained_cfg: the model's pretrained cfg dict.
        model: a model whose ``pretrained_cfg`` is used when ``pretrained_cfg`` is not given.
        use_test_size: prefer the cfg's test-time size and crop.
        verbose: log the resolved configuration.

    Returns:
        The data configuration.
    """
    if not (model is not None or args or pretrained_cfg):
        raise ValueError("resolve_data_config needs at least one of model, args or pretrained_cfg")
    args = dict(vars(args)) if args is not None and not isinstance(args, dict) else (args or {})
    pretrained_cfg = _as_dict(pretrained_cfg)
    if not pretrained_cfg and model is not None:
        pretrained_cfg = _as_dict(getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", None))
    cfg: Dict[str, Any] = {}

    in_chans = 3
    if args.get("in_chans") is not None:
        in_chans = args["in_chans"]
    elif args.get("chans") is not None:
        in_chans = args["chans"]

    input_size = (in_chans, 224, 224)
    if args.get("input_size") is not None:
        if not isinstance(args["input_size"], (tuple, list)) or len(args["input_size"]) != 3:
            raise ValueError(f"args['input_size'] must be (C, H, W), got {args['input_size']!r}")
        input_size = tuple(args["input_size"])
        in_chans = input_size[0]
    elif args.get("img_size") is not None:
        if not isinstance(args["img_size"], int):
            raise ValueError(f"args['img_size'] must be an int, got {args['img_size']!r}")
        input_size = (in_chans, args["img_size"], args["img_size"])
    else:
        if use_test_size and pretrained_cfg.get("test_input_size") is not None:
            input_size = pretrained_cfg["test_input_size"]
        elif pretrained_cfg.get("input_size") is not None:
            input_size = pretrained_cfg["input_size"]
    cfg["input_size"] = input_size

    cfg["interpolation"] = "bicubic"
    if args.get("interpolation"):
        cfg["interpolation"] = args["interpolation"]
    elif pretrained_cfg.get("interpolation"):
        cfg["interpolation"] = pretrained_cfg["interpolation"]

    cfg["mean"] = IMAGENET_DEFAULT_MEAN
    if args.get("mean") is not None:
        cfg["mean"] = _broadcast("mean", args["mean"], in_chans)
    elif pretrained_cfg.get("mean"):
        cfg["mean"] = pretrained_cfg["mean"]

    cfg["std"] = IMAGENET_DEFAULT_STD
    if args.get("std") is not None:
        cfg["std"] = _broadcast("std", args["std"], in_chans)
    elif pretrained_cfg.get("std"):
        cfg["std"] = pretrained_cfg["std"]

    crop_pct = DEFAULT_CROP_PCT
    if args.get("crop_pct"):
        crop_pct = args["crop_pct"]
    elif use_test_size and pretrained_cfg.get("test_crop_pct"):
        crop_pct = pretrained_cfg["test_crop_pct"]
    elif pretrained_cfg.get("crop_pct"):
        crop_pct = pretrained_cfg["crop_pct"]
    cfg["crop_pct"] = crop_pct

    crop_mode = DEFAULT_CROP_MODE
    if args.get("crop_mode"):
        crop_mode = args["crop_mode"]
    elif pretrained_cfg.get("crop_mode"):
        crop_mode = pretrained_cfg["crop_mode"]
    cfg["crop_mode"] = crop_mode

    if verbose:
        _logger.info("Data processing configuration for current model + dataset:")
        for n, v in cfg.items():
            _logger.info("\t%s: %s", n, v)
    return cfg


def resolve_model_data_config(model: Any, args: Optional[Dict] = None, pretrained_cfg: Optional[Dict[str, Any]] = None,
                              use_test_size: bool = False, verbose: bool = False) -> Dict[str, Any]:
    """:func:`resolve_data_config` with the model first.

    Args:
        model: the model (its ``pretrained_cfg``).
        args: overrides, as for :func:`resolve_data_config`.
        pretrained_cfg: a cfg that replaces the model's.
        use_test_size: prefer the cfg's test-time size and crop.
        verbose: log the resolved configuration.

    Returns:
        The data configuration.
    """
    return resolve_data_config(args=args, pretrained_cfg=pretrained_cfg, model=model, use_test_size=use_test_size,
                               verbose=verbose)
