"""``create_model``: the single entry point to the registry."""
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._builder import load_checkpoint
from ._registry import is_model, model_entrypoint, resolve_model_name, split_model_name_tag

__all__ = ["create_model", "register_task_builder"]

# builders of non-classification networks of the original zoo (style transfer) that torchvision does not have
_TASK_BUILDERS: Dict[str, Callable[..., Any]] = {}


def register_task_builder(fn):
    """Decorator: ``create_model(fn.__name__)`` calls ``fn`` (a builder taking ``weights=``, like torchvision's)."""
    _TASK_BUILDERS[fn.__name__] = fn
    return fn


def create_model(model_name: str, pretrained: bool = False, pretrained_cfg: Any = None,
                 pretrained_cfg_overlay: Optional[Dict[str, Any]] = None,
                 checkpoint_path: Optional[Union[str, os.PathLike]] = None, num_classes: Optional[int] = None,
                 in_chans: Optional[int] = None, drop_rate: Optional[float] = None,
                 drop_path_rate: Optional[float] = None, global_pool: Optional[str] = None,
                 features_only: Optional[bool] = None,
                 out_indices: Optional[Union[int, List[int], Tuple[int, ...]]] = None, img_size: Optional[Union[int, Tuple[int, int]]] = None, **kwargs: Any) -> Any:
    """Create a registered model by name (``'resnet50'``, ``'resnet50.a1_in1k'``, alias ``'vit_base'``).

    timm's ``create_model``: keyword arguments left at None are dropped so each model keeps its own defaults.
    ``checkpoint_path`` loads a local checkpoint after construction (strict); a torchvision checkpoint of the
    model's torchvision counterpart (e.g. ``convnext_tiny-983f1562.pth`` for ``convnext_tiny``) is converted.

    Args:
        model_name: a registered name, optionally with a weights tag (``"convnext_tiny.fb_in22k"``); see
            :func:`list_models` and the model zoo.
        pretrained: load the tag's pretrained weights (from an installed package, the cache, or a download;
            ``flowvision models --pretrained`` shows which load offline).
        pretrained_cfg: a tag name or a :class:`PretrainedCfg` to use instead of the default tag's.
        pretrained_cfg_overlay: fields that override the pretrained cfg (e.g. ``{"file": "my.safetensors"}``).
        checkpoint_path: a local checkpoint (safetensors, torch or npz) loaded after construction.
        num_classes: classifier outputs; 0 removes the head (the model returns pooled features).
        in_chans: input channels; pretrained first-layer weights are adapted like timm does.
        drop_rate: dropout before the classifier.
        drop_path_rate: stochastic-depth rate.
        global_pool: pooling type (``"avg"``, ``"max"``, ``"token"``, ``""`` for none).
        features_only: return a feature extractor (a list of feature maps) instead of a classifier.
        out_indices: which feature levels ``features_only`` returns.
        img_size: input size of models with a fixed size (ViT-style); position embeddings are resized.
        **kwargs: passed to the model's constructor.

    Returns:
        The model (a ``flowvision.backend.nn.Module``) in training mode; call ``.eval()`` for inference.

    Raises:
        ValueError: an empty name or one with a hub prefix or path.
        RuntimeError: an unknown name (the closest names are suggested), or ``pretrained=True`` for a tag
            without weights.
        flowvision.hub.DownloadError: the weights are neither installed nor cached and cannot be downloaded.

    Examples:
        >>> import flowvision
        >>> from flowvision import backend as flow
        >>> model = flowvision.models.create_model("resnet18", num_classes=10).eval()
        >>> model(flow.randn(2, 3, 64, 64)).shape
        flowvision.Size([2, 10])
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
    return _TASK_BUILDERS.get(name)  # the detection package registers its task builders when first loaded


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
