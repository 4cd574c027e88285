"""``create_model``: the single entry point to the registry."""
import os

from ._builder import load_checkpoint
from ._registry import is_model, model_entrypoint, resolve_model_name, split_model_name_tag

__all__ = ["create_model", "register_task_builder"]

# builders of non-classification networks of the original zoo (style transfer) that torchvision does not have
_TASK_BUILDERS = {}


def register_task_builder(fn):
    """Decorator: ``create_model(fn.__name__)`` calls ``fn`` (a builder taking ``weights=``, like torchvision's)."""
    _TASK_BUILDERS[fn.__name__] = fn
    return fn


def create_model(model_name, pretrained=False, pretrained_cfg=None, pretrained_cfg_overlay=None,
                 checkpoint_path=None, num_classes=None, in_chans=None, drop_rate=None, drop_path_rate=None,
                 global_pool=None, features_only=None, out_indices=None, img_size=None, **kwargs):
    """Create a registered model by name (``'resnet50'``, ``'resnet50.a1_in1k'``, alias ``'vit_base'``).

    Keyword arguments left at None are dropped so each model keeps its own defaults.
    ``checkpoint_path`` loads a local checkpoint after construction (strict); a torchvision checkpoint of the
    model's torchvision counterpart (e.g. ``convnext_tiny-983f1562.pth`` for ``convnext_tiny``) is converted.
    """
    if not isinstance(model_name, str) or not model_name:
        raise ValueError(f"model_name must be a non-empty string, got {model_name!r}")
    if any(c in model_name for c in "/\\:"):
        raise ValueError(f"model_name {model_name!r}: hub prefixes and paths are not supported; "
                         "pass checkpoint_path= for a local file")
    name = resolve_model_name(model_name)
    arch, tag = split_model_name_tag(name)
    if not is_model(arch):
        builder = _torchvision_builder(arch)
        if builder is not None:
            return _create_torchvision(builder, arch, pretrained, num_classes, checkpoint_path,
                                       dict(kwargs, in_chans=in_chans, drop_rate=drop_rate, pretrained_cfg=pretrained_cfg,
                                            drop_path_rate=drop_path_rate, global_pool=global_pool, img_size=img_size,
                                            features_only=features_only, out_indices=out_indices,
                                            pretrained_cfg_overlay=pretrained_cfg_overlay))
    if tag and pretrained_cfg is None:
        pretrained_cfg = tag
    create_fn = model_entrypoint(arch)
    extra = dict(num_classes=num_classes, in_chans=in_chans, drop_rate=drop_rate, drop_path_rate=drop_path_rate,
                 global_pool=global_pool, features_only=features_only, out_indices=out_indices, img_size=img_size,
                 pretrained_cfg=pretrained_cfg, pretrained_cfg_overlay=pretrained_cfg_overlay)
    kwargs.update({k: v for k, v in extra.items() if v is not None})
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if in_chans is not None and (not isinstance(in_chans, int) or in_chans < 1):
        raise ValueError(f"in_chans must be a positive int, got {in_chans!r}")
    if num_classes is not None and (not isinstance(num_classes, int) or num_classes < 0):
        raise ValueError(f"num_classes must be a non-negative int, got {num_classes!r}")
    model = create_fn(pretrained=pretrained, **kwargs)
    if checkpoint_path:
        if not os.path.isfile(checkpoint_path):
            raise FileNotFoundError(f"checkpoint_path not found: {checkpoint_path}")
        try:
            load_checkpoint(model, checkpoint_path)
        except (RuntimeError, KeyError) as err:
            if not _load_torchvision_layout(model, arch, checkpoint_path):
                raise err
    return model


def _load_torchvision_layout(model, arch, checkpoint_path):
    """Loads ``checkpoint_path`` as a torchvision checkpoint when ``arch`` has a torchvision counterpart whose
    converter accepts it; False when it does not (the caller re-raises the strict-load error)."""
    from ._api import TV_TO_TIMM, load_torchvision_checkpoint
    for tv_name, timm_name in TV_TO_TIMM.items():
        if timm_name != arch:
            continue
        try:
            load_torchvision_checkpoint(model, checkpoint_path, tv_name)
            return True
        except (RuntimeError, KeyError, ValueError):
            continue
    return False


def _torchvision_builder(name):
    """The torchvision builder behind a name timm does not have (``alexnet``, ``regnet_x_400mf``,
    ``fasterrcnn_resnet50_fpn``; the original flowvision's ``fcn_resnet50_coco`` style names drop ``_coco``),
    or None."""
    from ._api import get_model_builder
    if name in _TASK_BUILDERS:
        return _TASK_BUILDERS[name]
    for candidate in (name, name[:-len("_coco")] if name.endswith("_coco") else None):
        if candidate:
            try:
                return get_model_builder(candidate)
            except ValueError:
                continue
    return None


def _create_torchvision(builder, name, pretrained, num_classes, checkpoint_path, timm_only):
    """``create_model`` for a torchvision-only architecture: its builder with ``weights='DEFAULT'`` when
    pretrained; timm-only options are refused by name instead of being ignored."""
    unsupported = sorted(k for k, v in timm_only.items() if v is not None)
    if unsupported:
        raise TypeError(f"{name} is a torchvision architecture (flowvision.models.{builder.__name__}); it does "
                        f"not accept {', '.join(unsupported)}")
    import inspect
    kwargs = {"weights": "DEFAULT" if pretrained else None}
    if not pretrained and "weights_backbone" in inspect.signature(builder).parameters:
        kwargs["weights_backbone"] = None  # pretrained=False downloads nothing (torchvision's default would)
    if num_classes is not None:
        kwargs["num_classes"] = num_classes
    model = builder(**kwargs)
    if checkpoint_path:
        if not os.path.isfile(checkpoint_path):
            raise FileNotFoundError(f"checkpoint_path not found: {checkpoint_path}")
        load_checkpoint(model, checkpoint_path)
    return model
