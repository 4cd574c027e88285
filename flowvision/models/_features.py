"""``features_only=True``: a wrapper returning the feature maps named by the model's ``feature_info``."""
from typing import Any, Dict, List, Sequence, Union

from flowvision.backend import nn

__all__ = ["FeatureInfo", "FeatureListNet", "FeatureGetterNet", "feature_take_indices", "collect_intermediates",
           "prune_stages"]


def feature_take_indices(num_features, indices=None):
    """(absolute indices, max index) to take from ``num_features`` levels, as timm: None = all, an int n = the
    last n, a sequence = those (negative ones count from the end). Out-of-range requests raise ValueError."""
    if indices is None:
        indices = num_features
    if isinstance(indices, int) and not isinstance(indices, bool):
        if not 0 < indices <= num_features:
            raise ValueError(f"last-n indices ({indices}) must be in 1..{num_features}")
        take = list(range(num_features - indices, num_features))
    else:
        take = []
        for i in indices:
            if not isinstance(i, int) or isinstance(i, bool):
                raise ValueError(f"feature indices must be ints, got {i!r}")
            idx = num_features + i if i < 0 else i
            if not 0 <= idx < num_features:
                raise ValueError(f"feature index {i} is out of range for {num_features} levels "
                                 f"(0..{num_features - 1})")
            take.append(idx)
        if not take:
            raise ValueError("no feature indices given")
    return take, max(take)


def collect_intermediates(blocks, x, indices=None, stop_early=False, keep=None):
    """timm's ``forward_intermediates`` loop: ``x`` through ``blocks`` (up to the last one ``indices`` names
    when ``stop_early``); returns (final x, [output of each block named by ``indices``, through ``keep``])."""
    take, max_index = feature_take_indices(len(blocks), indices)
    intermediates = []
    for i, blk in enumerate(blocks[:max_index + 1] if stop_early else blocks):
        x = blk(x)
        if i in take:
            intermediates.append(keep(x) if keep is not None else x)
    return x, intermediates


def prune_stages(model, indices, prune_head: bool):
    """timm's ``prune_intermediate_layers`` for a model of ``stages`` with one ``feature_info`` entry each: keeps
    the stages up to the last of ``indices`` (``num_features`` follows). Returns (kept indices, whether the
    caller must drop its head: asked for, or the last stage is gone)."""
    take, max_index = feature_take_indices(len(model.stages), indices)
    model.stages = model.stages[:max_index + 1]
    truncated = max_index < len(model.feature_info) - 1
    if truncated:
        model.num_features = model.head_hidden_size = model.feature_info[max_index]["num_chs"]
    return take, prune_head or truncated


class FeatureInfo:
    """The selected entries of a model's ``feature_info`` with timm's accessors.

    Args:
        feature_info: the model's ``feature_info`` (one dict per level: ``num_chs``, ``reduction``, ``module``).
        out_indices: the levels to keep; an int ``n`` keeps the last ``n``.

    Raises:
        ValueError: if ``out_indices`` is out of range.
    """

    def __init__(self, feature_info: List[Dict[str, Any]], out_indices: Union[int, Sequence[int]]) -> None:
        n = len(feature_info)
        if isinstance(out_indices, int):
            if not 0 < out_indices <= n:
                raise ValueError(f"out_indices as an int must be in 1..{n}")
            out_indices = tuple(range(n - out_indices, n))
        idx = []
        for i in out_indices:
            if not isinstance(i, int) or isinstance(i, bool):
                raise ValueError(f"out_indices must be ints, got {i!r}")
            if not -n <= i < n:
                raise ValueError(f"out_index {i} is out of range for {n} feature levels "
                                 f"({', '.join(f['module'] for f in feature_info)})")
            idx.append(i % n)
        if len(set(idx)) != len(idx):
            raise ValueError(f"out_indices has duplicates: {tuple(out_indices)}")
        self.out_indices = tuple(sorted(idx))
        self.info = [dict(feature_info[i], index=i) for i in self.out_indices]

    def _get(self, key, idx=None):
        if idx is None:
            return [f[key] for f in self.info]
        if isinstance(idx, (list, tuple)):
            return [self.info[i][key] for i in idx]
        return self.info[idx][key]

    def channels(self, idx=None):
        return self._get("num_chs", idx)

    def reduction(self, idx=None):
        return self._get("reduction", idx)

    def module_name(self, idx=None):
        return self._get("module", idx)

    def get_dicts(self):
        return [dict(f) for f in self.info]

    def __len__(self):
        return len(self.info)

    def __getitem__(self, i):
        return self.info[i]


def _forward_plan(model, wanted):
    """[(top-level name, child name or None)] in forward order, expanding containers holding a wanted module."""
    plan = []
    for name, mod in model.named_children():
        if name in wanted or not any(w.startswith(name + ".") for w in wanted):
            plan.append((name, None))
        else:
            plan.extend((name, sub) for sub, _ in mod.named_children())
    return plan


class FeatureListNet(nn.Module):
    """Runs the model's modules in order up to the last requested level; returns a list of NCHW maps.

    Works for models whose forward is the sequence of their children (ResNet, EfficientNet, ...).
    Module names are the original model's, so its state_dict (minus the head and the levels after the last
    requested one) loads unchanged.

    Args:
        model: the model to wrap (its children run in order).
        out_indices: the ``feature_info`` levels to return.

    Raises:
        ValueError: if the model has no ``feature_info`` or ``out_indices`` is out of range.
        NotImplementedError: if the model does not support ``features_only``.
    """

    def __init__(self, model: nn.Module, out_indices: Union[int, Sequence[int]] = (0, 1, 2, 3, 4)) -> None:
        super().__init__()
        if not getattr(model, "feature_info", None):
            raise ValueError(f"{type(model).__name__} has no feature_info: features_only is not supported")
        if not getattr(model, "supports_features_only", True):
            raise NotImplementedError(f"features_only is not implemented for {type(model).__name__} yet")
        self.feature_info = FeatureInfo(model.feature_info, out_indices)
        wanted = set(self.feature_info.module_name())
        plan = _forward_plan(model, wanted)
        last = max(i for i, (n, c) in enumerate(plan) if (f"{n}.{c}" if c else n) in wanted)
        self._plan = plan[:last + 1]
        self._wanted = wanted
        for name in dict.fromkeys(n for n, _ in self._plan):
            children = [c for n, c in self._plan if n == name]
            if children == [None]:
                self.add_module(name, getattr(model, name))
                continue
            # an expanded container keeps only the children that run (as timm), under their own names
            holder = nn.Module()
            for child in children:
                holder.add_module(child, getattr(getattr(model, name), child))
            self.add_module(name, holder)
        self.pretrained_cfg = getattr(model, "pretrained_cfg", None)

    def forward(self, x):
        out = []
        for name, child in self._plan:
            mod = getattr(self, name)
            if child is not None:
                mod = getattr(mod, child)
            x = mod(x)
            if (f"{name}.{child}" if child else name) in self._wanted:
                out.append(x)
        return out


class FeatureGetterNet(nn.Module):
    """features_only for token models (ViT/DeiT, MLP-Mixer/ResMLP/gMLP): ``model.forward_intermediates``.

    As timm, the wrapped model is pruned first (blocks after the last requested one, the final norm unless
    ``norm=True``, and the head are dropped), and lives under ``model.`` so timm's features_only state_dict
    loads unchanged. Returns a list of NCHW maps (``output_fmt='NLC'``: token sequences).

    Args:
        model: the model to wrap; it must have ``forward_intermediates``.
        out_indices: the blocks to return; an int ``n`` returns the last ``n``.
        output_fmt: ``"NCHW"`` (feature maps) or ``"NLC"`` (token sequences).
        norm: apply the final norm to the returned features (and keep it when pruning).
        prune: drop the blocks after the last requested one, and the head.

    Raises:
        NotImplementedError: if the model has no ``forward_intermediates``.
        ValueError: for another ``output_fmt`` or out-of-range ``out_indices``.
    """

    def __init__(self, model: nn.Module, out_indices: Union[int, Sequence[int]] = 4, output_fmt: str = "NCHW",
                 norm: bool = False, prune: bool = True) -> None:
        super().__init__()
        if not hasattr(model, "forward_intermediates"):
            raise NotImplementedError(f"{type(model).__name__} has no forward_intermediates")
        if output_fmt not in ("NCHW", "NLC"):
            raise ValueError(f"output_fmt must be 'NCHW' or 'NLC', got {output_fmt!r}")
        self.feature_info = FeatureInfo(model.feature_info, out_indices)
        if prune and hasattr(model, "prune_intermediate_layers"):
            model.prune_intermediate_layers(out_indices, prune_norm=not norm)
        self.model = model
        self.out_indices = out_indices
        self.output_fmt = output_fmt
        self.norm = norm
        self.pretrained_cfg = getattr(model, "pretrained_cfg", None)

    def forward(self, x):
        return self.model.forward_intermediates(x, indices=self.out_indices, norm=self.norm,
                                                output_fmt=self.output_fmt, intermediates_only=True)
