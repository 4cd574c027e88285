"""Pretrained configuration: per-variant, per-tag data (weights source + preprocessing + head layout)."""
import copy
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, Optional, Tuple, Union

IMAGENET_DEFAULT_MEAN = (0.485, 0.456, 0.406)
IMAGENET_DEFAULT_STD = (0.229, 0.224, 0.225)
IMAGENET_INCEPTION_MEAN = (0.5, 0.5, 0.5)
IMAGENET_INCEPTION_STD = (0.5, 0.5, 0.5)


@dataclass
class PretrainedCfg:
    """Where a variant's weights come from and how its inputs must be prepared (timm's fields).

    Args:
        url: checkpoint URL (or ``(url, filename)``).
        file: local checkpoint path.
        state_dict: an in-memory state dict.
        hf_hub_id: Hugging Face Hub repository id.
        hf_hub_filename: file in that repository.
        source: which of the above to use (``"hf-hub"``...).
        sha256: expected checksum of the checkpoint.
        architecture: the registered architecture (set at registration).
        tag: the weights tag (set at registration).
        input_size: ``(C, H, W)`` the weights were trained at.
        test_input_size: ``(C, H, W)`` recommended at test time.
        min_input_size: the smallest ``(C, H, W)`` the model accepts.
        fixed_input_size: the model only takes ``input_size``.
        interpolation: resize interpolation of the eval transform.
        crop_pct: center-crop fraction of the eval transform.
        test_crop_pct: crop fraction with ``test_input_size``.
        crop_mode: eval crop mode (``"center"``, ``"squash"``, ``"border"``).
        mean: normalization mean.
        std: normalization standard deviation.
        num_classes: classes of the checkpoint's head.
        label_offset: leading classifier rows to drop (e.g. a background class).
        label_names: class names, when the checkpoint has its own.
        pool_size: spatial size of the last feature map at ``input_size``.
        first_conv: name(s) of the first conv (adapted for other ``in_chans``).
        classifier: name(s) of the classifier (dropped for another ``num_classes``).
        license: the weights' license.
        description: a free-form description.
        origin_url: where the weights were published.
        paper_name: the paper's title.
        paper_ids: the paper's arXiv / DOI ids.
        notes: further notes.
    """
    # source
    url: Optional[Union[str, Tuple[str, str]]] = None
    file: Optional[str] = None
    state_dict: Optional[Dict[str, Any]] = None
    hf_hub_id: Optional[str] = None
    hf_hub_filename: Optional[str] = None
    source: Optional[str] = None
    sha256: Optional[str] = None
    # identity (filled at registration)
    architecture: Optional[str] = None
    tag: Optional[str] = None
    # input
    input_size: Tuple[int, int, int] = (3, 224, 224)
    test_input_size: Optional[Tuple[int, int, int]] = None
    min_input_size: Optional[Tuple[int, int, int]] = None
    fixed_input_size: bool = False
    interpolation: str = "bicubic"
    crop_pct: float = 0.875
    test_crop_pct: Optional[float] = None
    crop_mode: str = "center"
    mean: Tuple[float, ...] = IMAGENET_DEFAULT_MEAN
    std: Tuple[float, ...] = IMAGENET_DEFAULT_STD
    # head
    num_classes: int = 1000
    label_offset: Optional[int] = None
    label_names: Optional[Tuple[str, ...]] = None
    pool_size: Optional[Tuple[int, ...]] = None
    first_conv: Optional[Union[str, Tuple[str, ...]]] = None
    classifier: Optional[Union[str, Tuple[str, ...]]] = None
    # meta
    license: Optional[str] = None
    description: Optional[str] = None
    origin_url: Optional[str] = None
    paper_name: Optional[str] = None
    paper_ids: Optional[str] = None
    notes: Optional[Tuple[str, ...]] = None

    @property
    def has_weights(self):
        return bool(self.url or self.file or self.hf_hub_id or self.state_dict is not None or self.in_manifest)

    @property
    def in_manifest(self):
        if not self.architecture or not self.tag:
            return False
        from ._manifest import manifest_tags
        return f"{self.architecture}.{self.tag}" in manifest_tags()

    def to_dict(self, remove_source=False, remove_null=True):
        d = {k: v for k, v in asdict(self).items() if k != "state_dict"}
        if remove_source:
            for k in ("url", "file", "hf_hub_id", "hf_hub_filename", "source", "sha256"):
                d.pop(k, None)
        if remove_null:
            d = {k: v for k, v in d.items() if v is not None}
        return d


@dataclass
class DefaultCfg:
    tags: list = field(default_factory=list)
    cfgs: dict = field(default_factory=dict)
    is_pretrained: bool = False

    @property
    def default(self):
        return self.cfgs[self.tags[0]]

    @property
    def default_with_tag(self):
        tag = self.tags[0]
        return tag, self.cfgs[tag]


def split_model_name_tag(model_name: str, no_tag: str = "") -> Tuple[str, str]:
    """Split ``"arch.tag"`` into ``("arch", "tag")``.

    Args:
        model_name: a model name, with or without a ``.tag`` suffix.
        no_tag: the tag returned when there is none.

    Returns:
        ``(architecture, tag)``.
    """
    name, _, tag = model_name.partition(".")
    return name, tag or no_tag


def generate_default_cfgs(cfgs: Dict[str, Union[Dict[str, Any], "PretrainedCfg"]]) -> Dict[str, "DefaultCfg"]:
    """``{'arch.tag': dict | PretrainedCfg}`` -> ``{'arch': DefaultCfg}`` keeping dict order as priority.

    A tag ending in ``*`` is moved to the front (the default for that arch).

    Args:
        cfgs: pretrained configurations by ``"arch.tag"``.

    Returns:
        One ``DefaultCfg`` (ordered tags and their cfgs) per architecture.
    """
    out: Dict[str, DefaultCfg] = {}
    for key, cfg in cfgs.items():
        if isinstance(cfg, dict):
            cfg = PretrainedCfg(**cfg)
        else:
            cfg = copy.copy(cfg)
        arch, tag = split_model_name_tag(key)
        priority = tag.endswith("*")
        tag = tag.rstrip("*")
        dc = out.setdefault(arch, DefaultCfg())
        if priority:
            dc.tags.insert(0, tag)
        else:
            dc.tags.append(tag)
        dc.cfgs[tag] = cfg
    return out


def extend_default_cfgs(default_cfgs, cfgs):
    """Add ``{'arch.tag': cfg}`` to an existing ``generate_default_cfgs`` result: new tags of an existing arch
    go after its current ones (its default tag stays), new archs are added."""
    for arch, dc in generate_default_cfgs(cfgs).items():
        if arch not in default_cfgs:
            default_cfgs[arch] = dc
            continue
        for tag in dc.tags:
            if tag not in default_cfgs[arch].cfgs:
                default_cfgs[arch].tags.append(tag)
            default_cfgs[arch].cfgs[tag] = dc.cfgs[tag]
    return default_cfgs


def resolve_cfg_overlay(cfg, overlay=None):
    if not overlay:
        return cfg
    bad = set(overlay) - set(PretrainedCfg.__dataclass_fields__)
    if bad:
        raise ValueError(f"unknown pretrained_cfg fields: {sorted(bad)}")
    return replace(cfg, **overlay)
