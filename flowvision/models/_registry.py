"""The model registry: ``register_model``, listing, lookup and short aliases."""
import difflib
import fnmatch
import types
import re
import sys
from collections import defaultdict
from dataclasses import replace
from typing import Any, Callable, DefaultDict, Dict, Iterable, List, Optional, Set, Union

from ._pretrained import DefaultCfg, split_model_name_tag

__all__ = ["register_model", "register_model_alias", "list_models", "list_aliases", "list_pretrained", "list_modules",
           "is_model",
           "model_entrypoint", "get_pretrained_cfg", "get_pretrained_cfg_value", "get_arch_pretrained_cfgs",
           "get_arch_name", "is_model_pretrained", "resolve_model_name", "split_model_name_tag"]

_module_to_models: DefaultDict[str, Set[str]] = defaultdict(set)
_model_to_module: Dict[str, str] = {}
_model_entrypoints: Dict[str, Callable[..., Any]] = {}
_model_has_pretrained: Set[str] = set()
_model_default_cfgs: Dict[str, DefaultCfg] = {}
_model_pretrained_cfgs: Dict[str, Any] = {}
_model_with_tags: DefaultDict[str, List[str]] = defaultdict(list)
_model_aliases: Dict[str, str] = {}


def register_model(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: registers ``fn`` under its name and expands ``default_cfgs[name]`` of its module by tag.

    The registry is timm's namespace: ``create_model("vgg16")`` is always this entrypoint. A torchvision builder
    of the same name (``define_tv_builders``) takes the module attribute, so ``flowvision.models.vgg16`` is
    torchvision's architecture, as ``torchvision.models.vgg16`` is.

    Args:
        fn: the model's builder, ``fn(pretrained=False, **kwargs)``.

    Returns:
        ``fn`` unchanged.
    """
    mod = sys.modules[fn.__module__]
    module_name = fn.__module__.split(".")[-1]
    model_name = fn.__name__
    if hasattr(mod, "__all__"):
        if model_name not in mod.__all__:
            mod.__all__.append(model_name)
    else:
        setattr(mod, "__all__", [model_name])  # a family module without __all__ gets one
    _model_entrypoints[model_name] = fn
    _model_to_module[model_name] = module_name
    _module_to_models[module_name].add(model_name)

    default_cfgs = getattr(mod, "default_cfgs", {})
    dc = default_cfgs.get(model_name)
    if dc is not None:
        if not isinstance(dc, DefaultCfg):
            raise TypeError(f"default_cfgs[{model_name!r}] must come from generate_default_cfgs")
        for tag in dc.tags:
            cfg = replace(dc.cfgs[tag], architecture=model_name, tag=tag)
            if cfg.hf_hub_id and cfg.hf_hub_id.endswith("/"):  # 'timm/' -> 'timm/<arch>.<tag>'
                cfg = replace(cfg, hf_hub_id=f"{cfg.hf_hub_id}{model_name}.{tag}" if tag else
                              f"{cfg.hf_hub_id}{model_name}")
            dc.cfgs[tag] = cfg
            full = f"{model_name}.{tag}" if tag else model_name
            _model_with_tags[model_name].append(full)
            _model_pretrained_cfgs[full] = cfg
            if cfg.has_weights:
                _model_has_pretrained.add(model_name)
        _model_default_cfgs[model_name] = dc
    return fn


def register_model_alias(alias: str, target: str) -> None:
    """A short name (``vit_base``) that resolves to a registered full name (``vit_base_patch16_224``).

    Args:
        alias: the short name.
        target: the registered name it resolves to (with or without a ``.tag``).
    """
    _model_aliases[alias] = target


def _natural_key(s):
    return [int(t) if t.isdecimal() else t for t in re.split(r"(\d+)", s.lower())]


def resolve_model_name(name):
    """Follow aliases; the tag (if any) is kept."""
    arch, tag = split_model_name_tag(name)
    if arch not in _model_entrypoints and arch in _model_aliases:
        arch = _model_aliases[arch]
    return f"{arch}.{tag}" if tag else arch


def get_arch_name(model_name):
    return split_model_name_tag(resolve_model_name(model_name))[0]


def _suggest(name):
    # every name create_model resolves (torchvision and task builders too), compared case-insensitively
    from ._api import list_builders
    from ._factory import _TASK_BUILDERS
    pool = {}
    for n in (*_model_entrypoints, *list_builders(), *_TASK_BUILDERS, *_model_aliases):  # canonical names first
        pool.setdefault(n.lower(), n)
    return [pool[m] for m in difflib.get_close_matches(name.lower(), list(pool), n=5, cutoff=0.5)]


def _unknown(name):
    close = _suggest(name)
    hint = f"; closest matches: {', '.join(close)}" if close else ""
    return RuntimeError(f"Unknown model ({name}){hint}. See flowvision.models.list_models().")


def list_models(filter: Union[str, Iterable[str]] = "", module: Any = "", pretrained: bool = False,
                exclude_filters: Union[str, Iterable[str]] = "", name_matches_cfg: bool = False,
                include_tags: Optional[bool] = None, include: Optional[Union[str, Iterable[str]]] = None,
                exclude: Optional[Union[str, Iterable[str]]] = None, include_aliases: bool = False) -> List[str]:
    """Registered model names matching fnmatch ``filter`` (a str or a list = union), naturally sorted.

    ``pretrained=True`` lists only ``arch.tag`` names with weights (tags are included by default then).
    torchvision's form -- ``module`` given as a Python module, or ``include=``/``exclude=`` -- lists the
    torchvision-style builder names instead (``list_models(module=flowvision.models, include="vit_*")``).

    Args:
        filter: an fnmatch pattern (``"resnet*"``) or a list of them (their union).
        module: a family module name (``"resnet"``, see :func:`list_modules`), or a Python module for
            torchvision's form.
        pretrained: only names with pretrained weights (``arch.tag`` names).
        exclude_filters: patterns to remove.
        name_matches_cfg: only names that have a pretrained cfg.
        include_tags: list ``arch.tag`` names (default: the value of ``pretrained``).
        include: torchvision's form: patterns of builder names to keep.
        exclude: torchvision's form: patterns of builder names to drop.
        include_aliases: also list the aliases that match (the original flowvision's spellings such as
            ``cait_S24_224``, short names such as ``vit_base``); see :func:`list_aliases`.

    Returns:
        The names, naturally sorted (``resnet18`` before ``resnet101``).

    Examples:
        >>> from flowvision.models import list_models
        >>> list_models("resnet1*")[:2]
        ['resnet10t', 'resnet14t']
        >>> "resnet50.a1_in1k" in list_models("resnet50", pretrained=True)
        True
    """
    if isinstance(module, types.ModuleType) or include is not None or exclude is not None:
        from ._api import list_builders
        return list_builders(module if isinstance(module, types.ModuleType) else (module or None), include, exclude)
    if include_tags is None:
        include_tags = pretrained
    if module:
        mods = [module] if isinstance(module, str) else list(module)
        all_models = set()
        for m in mods:
            all_models |= _module_to_models.get(m, set())
    else:
        all_models = set(_model_entrypoints)
    if include_tags:
        tagged: Set[str] = set()
        for m in all_models:
            tagged.update(_model_with_tags.get(m) or [m])
        all_models = tagged

    filters = [filter] if isinstance(filter, str) else list(filter)
    filters = [f for f in filters if f]
    if filters:
        selected = set()
        for f in filters:
            if include_tags and "." not in f:
                selected |= {m for m in all_models if fnmatch.fnmatch(split_model_name_tag(m)[0], f)}
            else:
                selected |= set(fnmatch.filter(all_models, f))
        all_models = selected
    excludes = [exclude_filters] if isinstance(exclude_filters, str) else list(exclude_filters)
    for f in [f for f in excludes if f]:
        all_models -= set(fnmatch.filter(all_models, f))
    if pretrained:
        keep = set()
        for m in all_models:
            cfg = _model_pretrained_cfgs.get(m)
            if cfg is not None and cfg.has_weights:
                keep.add(m)
        all_models = keep
    if name_matches_cfg:
        all_models = {m for m in all_models if m in _model_pretrained_cfgs}
    if include_aliases:
        all_models |= _matching_aliases(filters, excludes, mods if module else None, pretrained)
    return sorted(all_models, key=_natural_key)


def _matching_aliases(filters, excludes, modules, pretrained):
    """Aliases whose own name matches ``filters`` (and no ``excludes``) and whose target is in ``modules`` (None:
    any) and, with ``pretrained``, has weights."""
    names = set()
    for alias, target in _model_aliases.items():
        arch = split_model_name_tag(target)[0]
        if filters and not any(fnmatch.fnmatchcase(alias, f) for f in filters):
            continue
        if any(fnmatch.fnmatchcase(alias, f) for f in excludes if f):
            continue
        if modules is not None and _model_to_module.get(arch) not in modules:
            continue
        if pretrained:
            cfg = _model_pretrained_cfgs.get(target) or getattr(_model_default_cfgs.get(arch), "default", None)
            if cfg is None or not cfg.has_weights:
                continue
        names.add(alias)
    return names


def list_aliases(filter: Union[str, Iterable[str]] = "") -> Dict[str, str]:
    """``{alias: target}`` of every alias matching the fnmatch ``filter`` (timm's ``get_deprecated_models``).

    ``list_models()`` lists canonical names only, as timm's does; an alias is a second name ``create_model``
    accepts: the original flowvision's spellings (``cait_S24_224`` -> ``cait_s24_224``,
    ``vit_base_patch16_224_in21k`` -> ``vit_base_patch16_224.augreg_in21k``) and short names (``vit_base``).

    Examples:
        >>> from flowvision.models import list_aliases
        >>> list_aliases("cait_S24*")
        {'cait_S24_224': 'cait_s24_224', 'cait_S24_384': 'cait_s24_384'}

    Args:
        filter: fnmatch pattern(s) on the alias; empty matches all.

    Returns:
        ``{alias: target}``, naturally sorted by alias.
    """
    filters = [f for f in ([filter] if isinstance(filter, str) else list(filter)) if f]
    names = _matching_aliases(filters, (), None, False)
    return {a: _model_aliases[a] for a in sorted(names, key=_natural_key)}


def list_pretrained(filter: Union[str, Iterable[str]] = "",
                    exclude_filters: Union[str, Iterable[str]] = "") -> List[str]:
    """``arch.tag`` names that have pretrained weights, like ``list_models(filter, pretrained=True)``.

    Args:
        filter: fnmatch pattern(s) on the architecture (or on ``arch.tag`` when the pattern has a dot).
        exclude_filters: patterns to remove.

    Returns:
        The names, naturally sorted.
    """
    return list_models(filter=filter, pretrained=True, exclude_filters=exclude_filters, include_tags=True)


def list_modules() -> List[str]:
    """The family modules that registered models (``"resnet"``, ``"vision_transformer"``, ...), sorted.

    Returns:
        The module names, sorted.
    """
    return sorted(_module_to_models)


def is_model(model_name: str) -> bool:
    """Whether ``model_name`` (with or without a ``.tag``, or an alias) names a registered architecture.

    Args:
        model_name: a model name, ``arch.tag`` or alias.

    Returns:
        ``True`` when the architecture is registered.
    """
    return get_arch_name(model_name) in _model_entrypoints


def model_entrypoint(model_name: str) -> Callable[..., Any]:
    """The registered builder function of a model name.

    Args:
        model_name: a model name, ``arch.tag`` or alias.

    Returns:
        The builder registered by :func:`register_model`.

    Raises:
        RuntimeError: an unknown name; the message lists the closest registered names.
    """
    arch = get_arch_name(model_name)
    if arch not in _model_entrypoints:
        raise _unknown(model_name)
    return _model_entrypoints[arch]


def is_model_pretrained(model_name: str) -> bool:
    """Whether the architecture of ``model_name`` has at least one tag with pretrained weights.

    Args:
        model_name: a model name, ``arch.tag`` or alias.

    Returns:
        ``True`` when some tag of the architecture has weights.
    """
    return get_arch_name(model_name) in _model_has_pretrained


def get_arch_pretrained_cfgs(model_name: str) -> Dict[str, Any]:
    """``{"arch.tag": PretrainedCfg}`` of every tag of ``model_name``'s architecture.

    Args:
        model_name: a model name, ``arch.tag`` or alias.

    Returns:
        The cfgs of the architecture's tags, in priority order (empty for an unknown name).
    """
    arch = get_arch_name(model_name)
    return {t: _model_pretrained_cfgs[t] for t in _model_with_tags.get(arch, [])}


def get_pretrained_cfg(model_name: str, allow_unregistered: bool = True) -> Any:
    """The PretrainedCfg of ``arch.tag`` (or the arch's default tag).

    Args:
        model_name: ``arch`` or ``arch.tag`` (aliases followed).
        allow_unregistered: return None (instead of raising) for an architecture without any cfg.

    Returns:
        The :class:`~flowvision.models.PretrainedCfg` (input size, crop, interpolation, mean/std, weights source),
        or None.

    Raises:
        RuntimeError: an unknown model, or a tag the architecture does not have.

    Examples:
        >>> from flowvision.models import get_pretrained_cfg
        >>> cfg = get_pretrained_cfg("resnet50.tv_in1k")
        >>> cfg.input_size, cfg.interpolation
        ((3, 224, 224), 'bilinear')
    """
    name = resolve_model_name(model_name)
    if name in _model_pretrained_cfgs:
        return _model_pretrained_cfgs[name]
    arch, tag = split_model_name_tag(name)
    if arch in _model_default_cfgs:
        dc = _model_default_cfgs[arch]
        if tag:
            raise RuntimeError(f"Invalid pretrained tag ({tag}) for {arch}; available: {dc.tags}")
        return dc.default
    if arch not in _model_entrypoints:
        raise _unknown(model_name)
    if allow_unregistered:
        return None
    raise RuntimeError(f"no pretrained cfg registered for {model_name}")


def get_pretrained_cfg_value(model_name: str, cfg_key: str) -> Any:
    """One field of :func:`get_pretrained_cfg` (``"input_size"``, ``"crop_pct"``, ...), None if absent.

    Args:
        model_name: a model name, ``arch.tag`` or alias.
        cfg_key: a ``PretrainedCfg`` field name.

    Returns:
        The field's value, or ``None``.
    """
    cfg = get_pretrained_cfg(model_name)
    return getattr(cfg, cfg_key, None) if cfg is not None else None
