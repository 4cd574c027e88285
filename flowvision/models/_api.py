"""torchvision-style model API over flowvision's models: ``Weights``/``WeightsEnum``, the builder registry,
``get_model``/``get_model_builder``/``get_model_weights``/``get_weight``/``list_models``, and the
``ImageClassification`` preset returned by ``weights.transforms()``.

Builders are keyword-only like torchvision's: ``resnet50(*, weights=None, progress=True, **kwargs)``;
``weights`` is a member of the builder's ``*_Weights`` enum, its name (``"IMAGENET1K_V2"``,
``"ResNet50_Weights.IMAGENET1K_V2"``), ``"DEFAULT"`` or None. ``pretrained=True`` is accepted silently and
means ``DEFAULT`` (torchvision warns and picks V1).
"""
import enum
import fnmatch
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Sequence, Type, Union

from flowvision.backend import nn

__all__ = ["Weights", "WeightsEnum", "ImageClassification", "register_builder", "get_model", "get_model_builder",
           "get_model_weights", "get_weight", "list_builders", "tv_weights_enums", "build_tv_model",
           "define_tv_builders", "register_tv_counterpart", "TV_TO_TIMM", "convert_torchvision_state_dict",
           "load_torchvision_checkpoint", "create_model_from_torchvision"]


class ImageClassification(nn.Module):
    """Resize the shorter side to ``resize_size``, center-crop ``crop_size``, to float in [0, 1], normalise.

    Accepts PIL images and (B)CHW tensors (uint8 or float), like torchvision's preset.

    Args:
        crop_size: side of the square center crop.
        resize_size: the shorter side is resized to this first.
        mean: per-channel mean subtracted after scaling to ``[0, 1]``.
        std: per-channel standard deviation divided by.
        interpolation: resize interpolation, an ``InterpolationMode`` or its value (``"bilinear"``, ``"bicubic"``...).
        antialias: antialias when downsampling (as torchvision's ``antialias``).

    Raises:
        ValueError: if ``interpolation`` is a string that names no interpolation mode.
    """

    def __init__(self, *, crop_size: int, resize_size: int = 256, mean: Sequence[float] = (0.485, 0.456, 0.406),
                 std: Sequence[float] = (0.229, 0.224, 0.225), interpolation: Any = "bilinear",
                 antialias: Optional[bool] = True) -> None:
        super().__init__()
        from flowvision.transforms import InterpolationMode
        if isinstance(interpolation, str):
            interpolation = InterpolationMode(interpolation)
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        from flowvision import backend as flow
        from flowvision.transforms import functional as TF
        img = TF.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = TF.center_crop(img, self.crop_size)
        if not isinstance(img, flow.Tensor):
            img = TF.pil_to_tensor(img)
        img = TF.convert_image_dtype(img, flow.float32)
        return TF.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n    resize_size={self.resize_size}\n"
                f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)")


@dataclass(eq=False)
class Weights:
    """A checkpoint: its ``url``, the ``transforms`` factory (call it) and ``meta`` (categories, num_params...).

    Args:
        url: where the checkpoint is downloaded from.
        transforms: a factory returning the preprocessing the weights expect (e.g. :class:`ImageClassification`).
        meta: metadata (``categories``, ``num_params``, ``_metrics``...).
    """
    url: str
    transforms: Callable
    meta: Dict[str, Any] = field(default_factory=dict)


class WeightsEnum(enum.Enum):
    """Base of the ``*_Weights`` enums; members' values are :class:`Weights`."""

    @classmethod
    def verify(cls, obj):
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            if name in cls.__members__:
                return cls.__members__[name]
            raise ValueError(f"Failed to find Weights {obj!r} in {cls.__name__}; "
                             f"available: {', '.join(cls.__members__)}")
        # the same enum from another package (e.g. torchvision's ResNet50_Weights.IMAGENET1K_V2): match by name
        name = getattr(obj, "name", None)
        if type(obj).__name__ == cls.__name__ and isinstance(name, str) and name in cls.__members__:
            return cls.__members__[name]
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{obj.__class__.__name__}.")

    def get_state_dict(self, progress=True, check_hash=False):
        from flowvision import hub
        return hub.load_state_dict_from_url(self.url, progress=progress, check_hash=check_hash)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    def __str__(self):
        return self.__repr__()

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def make_weights_enum(name, module, default, members):
    """``members``: ``{member: Weights}``; ``default`` names the member ``DEFAULT`` aliases."""
    items = list(members.items()) + [("DEFAULT", members[default])]
    cls = WeightsEnum(name, items, module=module, qualname=name)
    return cls


_BUILDERS: Dict[str, Callable[..., nn.Module]] = {}
_BUILDER_WEIGHTS: Dict[str, Type["WeightsEnum"]] = {}


def register_builder(name=None, weights=None):
    """Decorator: registers a torchvision-style builder under ``name`` (default: the function name)."""
    def wrapper(fn):
        key = name or fn.__name__
        if key in _BUILDERS:
            raise ValueError(f"a builder named {key!r} is already registered")
        _BUILDERS[key] = fn
        if weights is not None:
            _BUILDER_WEIGHTS[key] = weights
        return fn
    return wrapper


_SUBPACKAGES = ("flowvision.models.segmentation", "flowvision.models.detection")
_subpackages_loaded = False


def _load_subpackages():
    """Register the builders of the task subpackages (segmentation, detection) on first use.

    Their builders are the functions of each package's ``__all__`` with a keyword-only ``weights`` and a
    ``*_Weights`` enum whose lowercased name is the builder's (``fcn_resnet50`` <-> ``FCN_ResNet50_Weights``).
    """
    global _subpackages_loaded
    if _subpackages_loaded:
        return
    _subpackages_loaded = True
    import importlib
    import inspect
    for pkg_name in _SUBPACKAGES:
        try:
            pkg = importlib.import_module(pkg_name)
        except ImportError:  # a subpackage that is not there (yet)
            continue
        public = {n: getattr(pkg, n) for n in getattr(pkg, "__all__", []) if hasattr(pkg, n)}
        enums = {n[:-len("_Weights")].lower(): v for n, v in public.items()
                 if n.endswith("_Weights") and isinstance(v, type) and issubclass(v, enum.Enum)}
        for n, fn in public.items():
            if n in _BUILDERS or n not in enums or not inspect.isfunction(fn):
                continue
            param = inspect.signature(fn).parameters.get("weights")
            if param is None or param.kind is not param.KEYWORD_ONLY:
                continue
            _BUILDERS[n] = fn
            _BUILDER_WEIGHTS[n] = enums[n]


def get_model_builder(name: str) -> Callable[..., nn.Module]:
    """The builder function registered under a torchvision model name.

    Args:
        name: the model name (case-insensitive), e.g. ``"resnet50"``.

    Returns:
        The keyword-only builder, ``builder(*, weights=None, progress=True, **kwargs)``.

    Raises:
        ValueError: if no builder has that name (the message lists close matches).
    """
    name = name.lower()
    if name not in _BUILDERS:
        _load_subpackages()
    try:
        return _BUILDERS[name]
    except KeyError:
        import difflib
        close = difflib.get_close_matches(name, list(_BUILDERS), n=5, cutoff=0.5)
        hint = f"; closest matches: {', '.join(close)}" if close else ""
        raise ValueError(f"Unknown model {name}{hint}") from None


def get_model(name: str, **config: Any) -> nn.Module:
    """Build a torchvision-named model: ``get_model("resnet50", weights="DEFAULT")``.

    Args:
        name: the model name, as for :func:`get_model_builder`.
        **config: keyword arguments of the builder (``weights``, ``progress``, ``num_classes``...).

    Returns:
        The built model.

    Raises:
        ValueError: if no builder has that name.
    """
    return get_model_builder(name)(**config)


def get_model_weights(name: Union[str, Callable[..., Any]]) -> Type["WeightsEnum"]:
    """The ``*_Weights`` enum class of a builder (given by name or as the builder function).

    Args:
        name: the model name or the builder function itself.

    Returns:
        The builder's ``WeightsEnum`` subclass.

    Raises:
        ValueError: if the builder is not registered or has no weights enum.
    """
    if callable(name):
        _load_subpackages()
        match = [k for k, v in _BUILDERS.items() if v is name]
        if not match:
            match = [k for k in _BUILDERS if k == getattr(name, "__name__", None)]
        if not match:
            raise ValueError(f"{name!r} is not a registered builder")
        name = match[0]
    if not callable(name):
        get_model_builder(name)
    if name not in _BUILDER_WEIGHTS:
        raise ValueError(f"The weight enum for {name} could not be found")
    return _BUILDER_WEIGHTS[name]


def get_weight(name: str) -> "WeightsEnum":
    """``get_weight("ResNet50_Weights.IMAGENET1K_V2")`` -> the enum member.

    Args:
        name: ``"<EnumName>.<MEMBER>"``.

    Returns:
        The weights enum member.

    Raises:
        ValueError: if ``name`` is not of that form or names no known enum or member.
    """
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: {name!r}") from None
    for attempt in range(2):
        for cls in _BUILDER_WEIGHTS.values():
            if cls.__name__ == enum_name:
                return cls.verify(value_name)
        _load_subpackages()
    raise ValueError(f"The weight enum {enum_name!r} for the specific method couldn't be retrieved.")


def _builder_module(fn):
    return getattr(fn, "func", fn).__module__


def list_builders(module=None, include=None, exclude=None):
    """torchvision's ``list_models``: builder names, optionally of a module and fnmatch include/exclude."""
    _load_subpackages()
    names = set(_BUILDERS)
    if module is not None:
        # torchvision's rule: builders defined in the module itself or in its direct submodules
        # (flowvision.models lists the classification builders, not segmentation/detection ones)
        modname = module if isinstance(module, str) else module.__name__
        names = {n for n in names if modname in (_builder_module(_BUILDERS[n]),
                                                 _builder_module(_BUILDERS[n]).rsplit(".", 1)[0])}
    if include:
        inc = [include] if isinstance(include, str) else include
        names = {n for n in names if any(fnmatch.fnmatch(n, p) for p in inc)}
    if exclude:
        exc = [exclude] if isinstance(exclude, str) else exclude
        names = {n for n in names if not any(fnmatch.fnmatch(n, p) for p in exc)}
    return sorted(names)


def resolve_weights(weights_enum, weights, kwargs, builder):
    """torchvision's builder prologue: legacy ``pretrained=True`` -> DEFAULT, verify, fix ``num_classes``."""
    pretrained = kwargs.pop("pretrained", None)
    if pretrained and weights is None:  # legacy form: silently the best weights (torchvision: V1 + warnings)
        weights = "DEFAULT"
    weights = weights_enum.verify(weights)
    if weights is not None:
        n = len(weights.meta["categories"])
        if kwargs.get("num_classes", n) != n:
            raise ValueError(f"The parameter 'num_classes' expected value {n} but got {kwargs['num_classes']} "
                             f"instead.")
        kwargs["num_classes"] = n
    return weights


def overwrite_named_param(kwargs, param, new_value):
    """Set ``kwargs[param]``; a different value given by the caller is an error (torchvision's rule)."""
    if param in kwargs and kwargs[param] != new_value:
        raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    kwargs[param] = new_value


def load_weights(model: nn.Module, weights: Any, progress: bool = True,
                 filter_fn: Optional[Callable] = None) -> nn.Module:
    """Download (or read from the cache) ``weights.url`` and load it strictly; ``filter_fn(sd, model)`` renames."""
    from flowvision import hub
    sd = hub.load_state_dict_from_url(weights.url, progress=progress, check_hash=True, as_numpy=True)
    if filter_fn is not None:
        sd = filter_fn(sd, model)
    model.load_state_dict(hub.to_backend(sd), strict=True)
    return model


def build_tv_model(name: str, weights: Any, progress: bool, kwargs: Dict[str, Any], make: Callable[..., nn.Module],
                   filter_fn: Optional[Callable] = None) -> nn.Module:
    """The body of every torchvision builder: resolve ``weights`` against ``name``'s enum (legacy
    ``pretrained=True``, ``num_classes`` check), build ``make(weights, **kwargs)``, load the weights strictly."""
    weights = resolve_weights(_BUILDER_WEIGHTS[name], weights, kwargs, name)
    model = make(weights, **kwargs)
    return load_weights(model, weights, progress, filter_fn) if weights is not None else model


def define_tv_builders(namespace: Dict[str, Any], enums: Dict[str, Any], make: Callable[..., nn.Module],
                       filter_fn: Optional[Callable] = None) -> None:
    """One keyword-only torchvision builder per ``enums`` key (``enums``: builder name -> ``*_Weights``),
    built by ``make(name, weights, **kwargs)``; registered, and bound with its enum in ``namespace`` (a family
    module's globals) and its ``__all__``. A builder replaces a timm factory of the same name there:
    ``flowvision.models.vgg16`` is torchvision's, ``create_model("vgg16")`` (the registry) timm's."""
    module = namespace["__name__"]
    exported = namespace.setdefault("__all__", [])
    for name, weights_enum in enums.items():
        namespace[name] = _tv_builder(name, weights_enum, module, make, filter_fn)
        namespace[weights_enum.__name__] = weights_enum
        exported.extend(n for n in (name, weights_enum.__name__) if n not in exported)


def _tv_builder(name, weights_enum, module, make, filter_fn):
    def builder(*, weights=None, progress=True, **kwargs):
        return build_tv_model(name, weights, progress, kwargs, partial(make, name), filter_fn)
    builder.__name__ = builder.__qualname__ = name
    builder.__module__ = module
    builder.__doc__ = f"torchvision's {name} (``weights``: {weights_enum.__name__}, its name, \"DEFAULT\" or None)."
    return register_builder(name, weights_enum)(builder)


_TV_URL = "https://download.pytorch.org/models/"


def tv_weights_enums(module: str, table: Dict[str, tuple]) -> Dict[str, Any]:
    """``{builder: (enum name, DEFAULT member, rows)}`` -> ``{builder: *_Weights enum}`` (defined in ``module``).

    A row: (member, file under https://download.pytorch.org/models/ (its sha256 prefix after the last "-"),
    num_params, min_size, crop size, resize size, interpolation, ImageNet-1K acc@1, acc@5[, preset overrides
    such as mean/std]) -- torchvision 0.29's ImageNet-1k classification weights, as its enums give them.
    """
    enums = {}
    for builder, (enum_name, default, rows) in table.items():
        members = {r[0]: classification_weights(_TV_URL + r[1], r[2], min_size=tuple(r[3]), crop_size=r[4],
                                                resize_size=r[5], interpolation=r[6],
                                                _metrics={"ImageNet-1K": {"acc@1": r[7], "acc@5": r[8]}},
                                                **(r[9] if len(r) > 9 else {}))
                   for r in rows}
        enums[builder] = make_weights_enum(enum_name, module, default, members)
    return enums


# --- torchvision checkpoints into the timm-named model of the same architecture -----------------------------

TV_TO_TIMM: Dict[str, str] = {}  # torchvision builder -> timm-named model; filled by the family files
_TV_CONVERTERS: Dict[str, Any] = {}


def register_tv_counterpart(pairs: Dict[str, str], convert: Optional[Callable] = None,
                            bn_eps: Optional[float] = None) -> None:
    """``pairs``: torchvision builder -> timm-named model of the same architecture. ``convert(sd, model)``
    renames a torchvision state dict (numpy values) to the model's keys (None: the timm family's
    ``checkpoint_filter_fn``, or the keys as they are); ``bn_eps``: torchvision's BatchNorm eps where it
    differs from timm's 1e-5 (the difference moves into ``running_var``, which is exact)."""
    for tv_name, timm_name in pairs.items():
        TV_TO_TIMM[tv_name] = timm_name
        _TV_CONVERTERS[tv_name] = (convert, bn_eps)


def convert_by_position(sd: Dict[str, Any], model: nn.Module) -> Dict[str, Any]:
    """torchvision's and timm's state dicts list the same tensors in the same order (MobileNetV2/V3,
    EfficientNet: stem, each block's convs/BNs/SE in execution order, head), only named differently."""
    import numpy as np
    src, dst = list(sd.items()), list(model.state_dict().items())
    if len(src) != len(dst):
        raise ValueError(f"{type(model).__name__}: {len(src)} torchvision tensors for {len(dst)} in the model")
    out = {}
    for (ks, v), (kd, t) in zip(src, dst):
        shape = tuple(t.shape)
        if ks.rsplit(".", 1)[-1] != kd.rsplit(".", 1)[-1] or int(np.prod(v.shape)) != int(np.prod(shape)):
            raise ValueError(f"torchvision {ks} {tuple(v.shape)} does not correspond to {kd} {shape}")
        out[kd] = v.reshape(shape)  # the head Linear (O, I) -> timm's 1x1 conv_head (O, I, 1, 1)
    return out


def _to_numpy(v):
    import numpy as np
    if isinstance(v, np.ndarray):
        return v
    v = v.detach() if hasattr(v, "detach") else v
    v = v.cpu() if hasattr(v, "cpu") else v
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def convert_torchvision_state_dict(state_dict: Dict[str, Any], model: nn.Module, tv_name: str) -> Dict[str, Any]:
    """torchvision ``tv_name``'s state dict -> ``{timm key: numpy array}`` for ``model`` (a timm-named model
    of the same architecture, ``create_model(TV_TO_TIMM[tv_name])``).

    Args:
        state_dict: the torchvision checkpoint's state dict (numpy arrays or tensors).
        model: the timm-named model the result is for.
        tv_name: the torchvision builder name (``"resnet50"``).

    Returns:
        The converted state dict, keyed by ``model``'s parameter and buffer names.

    Raises:
        ValueError: if ``tv_name`` has no timm-named counterpart.
    """
    import importlib

    import numpy as np
    if tv_name not in TV_TO_TIMM:
        raise ValueError(f"no timm-named counterpart for torchvision's {tv_name!r}; its builder "
                         f"(flowvision.models.{tv_name}) loads torchvision's checkpoints directly")
    convert, eps = _TV_CONVERTERS[tv_name]
    if convert is None:  # the timm family's torchvision-aware filter (DenseNet, VGG, RegNet), or the same keys
        convert = getattr(importlib.import_module(type(model).__module__), "checkpoint_filter_fn",
                          lambda sd, m: sd)
    out = convert({k: _to_numpy(v) for k, v in state_dict.items()}, model)
    if eps is not None:
        bn_eps = {name + ".running_var": m.eps for name, m in model.named_modules() if hasattr(m, "running_var")}
        out = {k: (v + np.float32(eps - bn_eps[k]) if k in bn_eps else v) for k, v in out.items()}
    return out


def load_torchvision_checkpoint(model: nn.Module, checkpoint: Any, tv_name: str, strict: bool = True,
                                progress: bool = True) -> Any:
    """Load a torchvision checkpoint into a timm-named model. ``checkpoint``: a ``*_Weights`` member (or its
    name, e.g. ``"DEFAULT"``), a URL, a local file or a state dict.

    Args:
        model: the timm-named model to load into.
        checkpoint: the weights, in any of the forms above.
        tv_name: the torchvision builder name.
        strict: require the converted keys to match ``model``'s exactly.
        progress: show download progress.

    Returns:
        ``load_state_dict``'s result (missing and unexpected keys).

    Raises:
        ValueError: if ``tv_name`` has no timm-named counterpart or ``checkpoint`` names no weights.
    """
    import os

    import numpy as np

    from flowvision import hub
    if isinstance(checkpoint, dict):
        sd = checkpoint
    else:
        if isinstance(checkpoint, str) and ("://" in checkpoint or os.path.exists(checkpoint)):
            url = checkpoint
        else:
            url = get_model_weights(tv_name).verify(checkpoint).url
        sd = dict(hub.load_state_dict_from_url(url, progress=progress, check_hash=True, as_numpy=True))
    out = convert_torchvision_state_dict(sd, model, tv_name)
    return model.load_state_dict(hub.to_backend({k: np.ascontiguousarray(v) for k, v in out.items()}),
                                 strict=strict)


def create_model_from_torchvision(tv_name: str, weights: Any = "DEFAULT", **kwargs: Any) -> nn.Module:
    """``create_model(TV_TO_TIMM[tv_name], **kwargs)`` with torchvision's ``weights`` (a member, its name, a
    URL, a file or a state dict) loaded; the timm model's contract (features_only aside) comes with it.

    Args:
        tv_name: the torchvision builder name (``"resnet50"``).
        weights: torchvision weights, in any form :func:`load_torchvision_checkpoint` takes.
        **kwargs: ``create_model`` arguments.

    Returns:
        The timm-named model with the weights loaded.

    Raises:
        ValueError: if ``tv_name`` has no timm-named counterpart.
    """
    from ._factory import create_model
    if tv_name not in TV_TO_TIMM:
        raise ValueError(f"no timm-named counterpart for torchvision's {tv_name!r}")
    model = create_model(TV_TO_TIMM[tv_name], **kwargs)
    load_torchvision_checkpoint(model, weights, tv_name)
    return model


_TV_CATEGORIES: List[str] = []


def imagenet_categories():
    """torchvision's ImageNet-1k category names: the first synonym of each class, with its two duplicate
    names disambiguated (134 "crane bird", 639 "maillot tank suit")."""
    if not _TV_CATEGORIES:
        from ._data import imagenet_class_names
        names = [n.split(",")[0].strip() for n in imagenet_class_names()]
        names[134], names[639] = "crane bird", "maillot tank suit"
        _TV_CATEGORIES.extend(names)
    return _TV_CATEGORIES


def classification_weights(url, num_params, crop_size=224, resize_size=256, interpolation="bilinear",
                           min_size=(1, 1), mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225), **meta):
    return Weights(url=url, transforms=partial(ImageClassification, crop_size=crop_size, resize_size=resize_size,
                                               interpolation=interpolation, mean=mean, std=std),
                   meta=dict(categories=list(imagenet_categories()), num_params=num_params, min_size=min_size,
                             **meta))
