"""``build_model_with_cfg`` and pretrained-weight loading (through flowvision.hub)."""
import logging
import os
from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

from flowvision.layers import adapt_input_conv

from ._pretrained import PretrainedCfg, resolve_cfg_overlay
from ._registry import get_pretrained_cfg

__all__ = ["build_model_with_cfg", "load_pretrained", "load_checkpoint", "resolve_pretrained_cfg",
           "load_state_dict_numpy"]

_logger = logging.getLogger("flowvision.models")


def resolve_pretrained_cfg(variant, pretrained_cfg=None, pretrained_cfg_overlay=None):
    """A PretrainedCfg from a tag string, a dict, a PretrainedCfg or the variant's default tag."""
    if isinstance(pretrained_cfg, PretrainedCfg):
        cfg = pretrained_cfg
    elif isinstance(pretrained_cfg, dict):
        cfg = PretrainedCfg(**pretrained_cfg)
    else:
        name = f"{variant}.{pretrained_cfg}" if isinstance(pretrained_cfg, str) and pretrained_cfg else variant
        cfg = get_pretrained_cfg(name)
        if cfg is None:
            cfg = PretrainedCfg(architecture=variant)
    return resolve_cfg_overlay(cfg, pretrained_cfg_overlay)


def _to_numpy(v):
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "numpy"):
        return np.asarray(v.detach().numpy() if hasattr(v, "detach") else v.numpy())
    return np.asarray(v)


def load_state_dict_numpy(cfg):
    """``{name: ndarray}`` for a pretrained cfg: in-memory dict, local file, the manifest, then the HF hub."""
    from flowvision import hub
    if cfg.state_dict is not None:
        return {k: _to_numpy(v) for k, v in cfg.state_dict.items()}
    if cfg.file:
        return hub.load_checkpoint(cfg.file)
    full = f"{cfg.architecture}.{cfg.tag}" if cfg.tag else cfg.architecture
    if cfg.in_manifest:
        return hub.load_pretrained(full, as_numpy=True)
    if cfg.hf_hub_id:
        return hub.load_state_dict_from_url(f"hf_hub:{cfg.hf_hub_id}", file_name=cfg.hf_hub_filename,
                                            sha256=cfg.sha256, as_numpy=True)
    if cfg.url:
        return hub.load_state_dict_from_url(cfg.url, sha256=cfg.sha256, as_numpy=True)
    raise RuntimeError(f"no pretrained weights are available for {full}; see "
                       f"flowvision.models.list_pretrained('{cfg.architecture}*')")


def _as_tuple(v):
    if v is None:
        return ()
    return (v,) if isinstance(v, str) else tuple(v)


def load_pretrained(model: Any, pretrained_cfg: Optional[PretrainedCfg] = None, num_classes: int = 1000,
                    in_chans: int = 3, filter_fn: Optional[Callable[[Dict[str, Any], Any], Dict[str, Any]]] = None,
                    strict: bool = True) -> Any:
    """Load the weights named by ``pretrained_cfg`` into ``model`` (timm's adaptation order).

    The first conv is adapted to ``in_chans`` and the classifier dropped when ``num_classes`` differs from the
    checkpoint's (both then load non-strictly).

    Args:
        model: the model (an ``nn.Module``).
        pretrained_cfg: where the weights come from; default the model's ``pretrained_cfg_obj``.
        num_classes: the model's number of classes.
        in_chans: the model's input channels.
        filter_fn: ``filter_fn(state_dict, model) -> state_dict`` applied before loading.
        strict: require the keys to match exactly.

    Returns:
        ``model``, with the weights loaded.

    Raises:
        RuntimeError: if there is no pretrained cfg, or (strict) the keys do not match.
    """
    from flowvision import hub
    cfg = pretrained_cfg or getattr(model, "pretrained_cfg_obj", None)
    if cfg is None:
        raise RuntimeError("no pretrained cfg to load from")
    sd = load_state_dict_numpy(cfg)
    if filter_fn is not None:
        sd = filter_fn(sd, model)
    if in_chans != 3:
        for name in _as_tuple(cfg.first_conv):
            key = name + ".weight"
            if key not in sd:
                continue
            try:
                sd[key] = adapt_input_conv(in_chans, sd[key])
                _logger.info("adapted %s to %d input channels", key, in_chans)
            except ValueError:
                del sd[key]
                strict = False
                _logger.warning("unable to adapt %s to %d input channels; it stays randomly initialised",
                                key, in_chans)
    if num_classes != cfg.num_classes:
        for name in _as_tuple(cfg.classifier):
            sd.pop(name + ".weight", None)
            sd.pop(name + ".bias", None)
        strict = False
    elif cfg.label_offset:
        for name in _as_tuple(cfg.classifier):
            for suffix in (".weight", ".bias"):
                if name + suffix in sd:
                    sd[name + suffix] = sd[name + suffix][cfg.label_offset:]
    result = model.load_state_dict(hub.to_backend(sd), strict=strict)
    if not strict:
        missing = [k for k in getattr(result, "missing_keys", []) if not any(
            k.startswith(c + ".") for c in _as_tuple(cfg.classifier))]
        if missing:
            _logger.warning("missing keys when loading pretrained weights: %s", missing)
    return model


def load_checkpoint(model: Any, checkpoint_path: Union[str, "os.PathLike[str]"], strict: bool = True,
                    filter_fn: Optional[Callable[[Dict[str, Any], Any], Dict[str, Any]]] = None) -> Any:
    """Load a local checkpoint (safetensors / torch / npz) into ``model``; EMA weights preferred, like timm.

    Args:
        model: the model (an ``nn.Module``).
        checkpoint_path: path of the checkpoint file.
        strict: require the keys to match exactly.
        filter_fn: ``filter_fn(state_dict, model) -> state_dict`` applied before loading.

    Returns:
        ``load_state_dict``'s result (missing and unexpected keys).

    Raises:
        RuntimeError: if ``strict`` and the keys do not match.
    """
    from flowvision import hub
    sd = hub.load_checkpoint(checkpoint_path)
    if filter_fn is not None:
        sd = filter_fn(sd, model)
    return model.load_state_dict(hub.to_backend(sd), strict=strict)


def _check_kwargs(model_cls, variant, kwargs):
    """Unknown keyword arguments fail here, by name, instead of deep inside a constructor."""
    import inspect
    params = inspect.signature(model_cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        accepted = sorted(k for k in params if k != "self")
        raise TypeError(f"{variant} does not accept {', '.join(unknown)}; accepted keyword arguments: "
                        f"{', '.join(accepted)}")


def build_model_with_cfg(model_cls: Callable[..., Any], variant: str, pretrained: bool = False,
                         pretrained_cfg: Optional[Union[str, Dict[str, Any], PretrainedCfg]] = None,
                         pretrained_cfg_overlay: Optional[Dict[str, Any]] = None,
                         pretrained_filter_fn: Optional[Callable[[Dict[str, Any], Any], Dict[str, Any]]] = None,
                         pretrained_strict: bool = True, feature_cfg: Optional[Dict[str, Any]] = None,
                         features_only: bool = False, out_indices: Optional[Union[int, Sequence[int]]] = None,
                         **kwargs: Any) -> Any:
    """Build ``model_cls(**kwargs)``, attach its pretrained cfg, load weights, and wrap for features.

    Args:
        model_cls: the model class (or constructor).
        variant: the registered architecture name (its default cfg is looked up by it).
        pretrained: load the pretrained weights.
        pretrained_cfg: a tag, a cfg dict or a ``PretrainedCfg``; default the variant's default tag.
        pretrained_cfg_overlay: fields that replace those of the resolved cfg.
        pretrained_filter_fn: ``filter_fn(state_dict, model) -> state_dict`` applied before loading.
        pretrained_strict: load the weights strictly.
        feature_cfg: the family's feature-wrapper options (``feature_cls``, default ``out_indices``...).
        features_only: return a feature extractor (``FeatureListNet`` / ``FeatureGetterNet``) instead.
        out_indices: the feature levels to return (``features_only`` only).
        **kwargs: constructor arguments of ``model_cls``.

    Returns:
        The model (or its feature wrapper), with ``pretrained_cfg`` attached.

    Raises:
        TypeError: for a keyword argument ``model_cls`` does not accept.
        RuntimeError: if ``pretrained`` and the cfg has no weights.
        ValueError: for an unknown ``feature_cls``, or ``out_indices`` without ``features_only``.
    """
    cfg = resolve_pretrained_cfg(variant, pretrained_cfg, pretrained_cfg_overlay)
    kwargs.setdefault("num_classes", cfg.num_classes)
    if cfg.input_size is not None:
        kwargs.setdefault("in_chans", cfg.input_size[0])
        if cfg.fixed_input_size and getattr(model_cls, "accepts_img_size", False):
            kwargs.setdefault("img_size", tuple(cfg.input_size[-2:]))
    if pretrained and not cfg.has_weights:
        raise RuntimeError(f"{variant}{'.' + cfg.tag if cfg.tag else ''} has no pretrained weights; "
                           f"pretrained variants: flowvision.models.list_pretrained('{variant}*')")
    _check_kwargs(model_cls, variant, kwargs)
    model = model_cls(**kwargs)
    model.pretrained_cfg_obj = cfg
    model.pretrained_cfg = model.default_cfg = cfg.to_dict()
    if pretrained:
        load_pretrained(model, cfg, num_classes=kwargs["num_classes"], in_chans=kwargs["in_chans"],
                        filter_fn=pretrained_filter_fn, strict=pretrained_strict)
    if features_only:
        from ._features import FeatureGetterNet, FeatureListNet
        feature_cfg = dict(feature_cfg or {})
        # a family may name its wrapper ('getter': forward_intermediates, token models) and default levels
        feature_cls = feature_cfg.pop("feature_cls", "list")
        default_indices = feature_cfg.pop("out_indices", (0, 1, 2, 3, 4))
        if feature_cls not in ("list", "getter"):
            raise ValueError(f"unknown feature_cls {feature_cls!r} ('list' or 'getter')")
        wrapper = FeatureGetterNet if feature_cls == "getter" else FeatureListNet
        model = wrapper(model, out_indices=out_indices if out_indices is not None else default_indices,
                        **feature_cfg)
        model.pretrained_cfg = model.default_cfg = cfg.to_dict()
    elif out_indices is not None:
        raise ValueError("out_indices is only meaningful with features_only=True")
    return model
