"""AutoAugment, RandAugment, AugMix, 3-Augment and TrivialAugment with timm's ops and levels.

Inputs: PIL images, uint8 HWC (or HW) numpy arrays, and uint8 flowvision.backend / DLPack (torch)
tensors in HWC or CHW layout (handled as numpy views; returned as the same type and layout).

* **PIL input** gives timm 1.0's output pixel for pixel: geometric ops call the same PIL
  transforms; the lookup-table ops (AutoContrast, Equalize, Invert, Posterize, Solarize,
  SolarizeAdd) compute timm's table in numpy and apply it once; Sharpness reproduces Pillow's
  SMOOTH filter + blend exactly in numpy/OpenCV (4x faster than ``ImageEnhance.Sharpness``).
* **uint8 array input** never goes through PIL for the common ops: the LUT and colour ops are
  exact (same float32 arithmetic as Pillow's ``Image.blend``), and geometric ops use
  ``cv2.warpAffine`` with Pillow's sampling geometry (pixel centres, out-of-image fill,
  edge replication).  OpenCV's bilinear/bicubic kernels differ from Pillow's by a few grey levels,
  so geometric ops on arrays are close but not bit-exact; pass ``hparams['pil_exact']=True`` to
  route them through Pillow for bit-exact array results.
* OpenCV's own thread pool is left as configured; for per-image work inside DataLoader workers
  ``cv2.setNumThreads(1)`` avoids oversubscription (the benchmark runs that way).
* Randomness comes from one :class:`~flowvision.data.RandomSource` per transform (``seed=`` /
  ``rng=``); :class:`~flowvision.data.TimmRandom` reproduces timm's own draw sequence.

Config strings (``rand-m9-n2-mstd0.5-inc1``, ``augmix-m5-w4-d2``, ``original-mstd0.5``,
``trivial``) follow timm's grammar; malformed sections raise ``ValueError`` naming the section.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Dict, List, Optional, Union

# the op functions, level tables and augment classes live in the private siblings; the public names (and the private
# tables tests read) are re-exported so that this module stays the one import path
from ._augment_ops import (LEVEL_TO_ARG, NAME_TO_OP, _GEOMETRIC, _HPARAMS_DEFAULT, _LEVEL_DENOM, apply_op,  # noqa: F401
                           auto_contrast, brightness, color, contrast, desaturate, equalize, gaussian_blur,
                           gaussian_blur_rand, invert, posterize, rotate, sharpness, shear_x, shear_y, solarize,
                           solarize_add, translate_x_abs, translate_x_rel, translate_y_abs, translate_y_rel)
from ._augment_policies import (AugMixAugment, AugmentOp, AutoAugment, RandAugment, TrivialAugment,  # noqa: F401
                                _RAND_INCREASING_TRANSFORMS, _RAND_TRANSFORMS, _get_weighted_transforms, _share_rng,
                                augmix_ops, auto_augment_policy, rand_augment_choices, rand_augment_ops)
from ._random import RngLike, resolve_rng

__all__ = [
    "AugmentOp", "AutoAugment", "RandAugment", "AugMixAugment", "TrivialAugment",
    "auto_augment_policy", "auto_augment_transform", "rand_augment_transform", "rand_augment_ops",
    "rand_augment_choices", "augment_and_mix_transform", "augmix_ops", "trivial_augment_transform",
    "create_auto_augment", "parse_rand_augment_config", "NAME_TO_OP", "LEVEL_TO_ARG",
    "apply_op",
]


# ----------------------------------------------------------------------------------------------
# config-string grammar
# ----------------------------------------------------------------------------------------------
_SECTION = re.compile(r"(\d.*)")


def _split_sections(config_str: str, kind: str):
    if not isinstance(config_str, str) or not config_str:
        raise ValueError(f"{kind} config must be a non-empty string, got {config_str!r}")
    parts = config_str.split("-")
    head, rest = parts[0], parts[1:]
    # negative numbers have no place in the grammar: 'mstd-1' would split into 'mstd', '1'
    return head, [p for p in rest if p != ""]


_KNOWN_KEYS = {
    "RandAugment": ("m", "n", "p", "mstd", "mmax", "inc"),
    "AutoAugment": ("mstd",),
    "AugMix": ("m", "w", "d", "a", "b", "mstd"),
    "TrivialAugment": ("mmax", "inc"),
}


def _key_val(section: str, config_str: str, kind: str):
    """``'mstd0.5'`` -> ``('mstd', '0.5')``; a known key without a number (timm skips it) -> ``(key, None)``."""
    cs = _SECTION.split(section)
    if len(cs) < 2:
        if section in _KNOWN_KEYS.get(kind, ()):
            warnings.warn(f"{kind} config section {section!r} in {config_str!r} has no value; ignored (as timm does)",
                          stacklevel=3)
            return section, None
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"expected <key><number>, e.g. 'm9' or 'mstd0.5'")
    if not cs[0]:
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"expected <key><number>, e.g. 'm9' or 'mstd0.5'")
    return cs[0], cs[1]


def _num(conv, val, section, config_str, kind):
    try:
        return conv(val)
    except ValueError:
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"{val!r} is not a valid {conv.__name__}") from None


def parse_rand_augment_config(config_str: str, hparams: Optional[Dict] = None) -> Dict:
    """Parse ``rand-...`` into ``dict(magnitude, num_layers, prob, increasing, transforms, hparams)``.

    Args:
        config_str: the ``rand-...`` config.
        hparams: hyper-parameters to start from (copied; ``magnitude_std`` / ``magnitude_max`` are set from the config).

    Returns:
        The parsed settings.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "RandAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    head, sections = _split_sections(config_str, kind)
    if head != "rand":
        raise ValueError(f"RandAugment config must start with 'rand', got {head!r} in {config_str!r}")
    out: Dict[str, Any] = dict(magnitude=_LEVEL_DENOM, num_layers=2, prob=0.5, increasing=False, transforms=None)
    for c in sections:
        if c.startswith("t"):
            if out["transforms"] is None:
                out["transforms"] = c[1:]
            continue
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            mstd = _num(float, val, c, config_str, kind)
            if mstd > 100:
                mstd = float("inf")  # uniform sampling in [0, magnitude]
            hparams.setdefault("magnitude_std", mstd)
        elif key == "mmax":
            hparams.setdefault("magnitude_max", _num(int, val, c, config_str, kind))
        elif key == "inc":
            # timm 1.0 parses bool(int(val)): 'inc0' is off (older timm used bool('0') == True)
            out["increasing"] = bool(_num(int, val, c, config_str, kind))
        elif key == "m":
            out["magnitude"] = _num(int, val, c, config_str, kind)
        elif key == "n":
            out["num_layers"] = _num(int, val, c, config_str, kind)
        elif key == "p":
            out["prob"] = _num(float, val, c, config_str, kind)
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; "
                             f"known keys: m, n, p, mstd, mmax, inc, t<name>")
    out["hparams"] = hparams
    return out


def rand_augment_transform(config_str: str, hparams: Optional[Dict] = None,
                           transforms: Optional[Union[str, Dict, List]] = None, rng: RngLike = None,
                           seed: Optional[int] = None) -> "RandAugment":
    """RandAugment from a config string, e.g. ``rand-m9-mstd0.5-inc1`` (see module docstring).

    Args:
        config_str: the config, ``rand`` then ``-m<magnitude>``, ``-n<layers>``, ``-mstd<std>``, ``-inc<0|1>``...
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        transforms: op names, ``{op: weight}``, or a set name (``"3a"``); default the config's ``t`` section or
            timm's standard set.
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The RandAugment transform.

    Raises:
        ValueError: for a malformed config string or an unknown op.
    """
    cfg = parse_rand_augment_config(config_str, hparams)
    chosen: Any = cfg["transforms"] if transforms is None else transforms  # a set name, op names or weights
    if isinstance(chosen, str):
        chosen = rand_augment_choices(chosen, increasing=cfg["increasing"])
    elif chosen is None:
        chosen = _RAND_INCREASING_TRANSFORMS if cfg["increasing"] else _RAND_TRANSFORMS
    choice_weights = None
    if isinstance(chosen, dict):
        chosen, choice_weights = _get_weighted_transforms(chosen)
    for name in chosen:
        if name not in NAME_TO_OP:
            raise ValueError(f"unknown augment op {name!r} in RandAugment transforms")
    rng = resolve_rng(rng, seed)
    ops = rand_augment_ops(magnitude=cfg["magnitude"], prob=cfg["prob"], hparams=cfg["hparams"],
                           transforms=chosen, rng=rng)
    return RandAugment(ops, cfg["num_layers"], choice_weights=choice_weights, rng=rng)


def auto_augment_transform(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                           seed: Optional[int] = None) -> "AutoAugment":
    """AutoAugment from ``<policy>[-mstd<float>]``, policy in v0, v0r, original, originalr, 3a.

    Args:
        config_str: e.g. ``"v0"`` or ``"original-mstd0.5"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The AutoAugment transform.

    Raises:
        ValueError: for a malformed config string or an unknown policy.
    """
    kind = "AutoAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    policy_name, sections = _split_sections(config_str, kind)
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            hparams.setdefault("magnitude_std", _num(float, val, c, config_str, kind))
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: mstd")
    rng = resolve_rng(rng, seed)
    return AutoAugment(auto_augment_policy(policy_name, hparams=hparams, rng=rng), rng=rng)


def augment_and_mix_transform(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                              seed: Optional[int] = None) -> "AugMixAugment":
    """AugMix from ``augmix[-m<int>][-w<int>][-d<int>][-a<float>][-b<0|1>][-mstd<float>]``.

    Args:
        config_str: e.g. ``"augmix-m5-w4-d2"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The AugMix transform.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "AugMix"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    head, sections = _split_sections(config_str, kind)
    if head != "augmix":
        raise ValueError(f"AugMix config must start with 'augmix', got {head!r} in {config_str!r}")
    magnitude, width, depth, alpha, blended = 3, 3, -1, 1.0, False
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            hparams.setdefault("magnitude_std", _num(float, val, c, config_str, kind))
        elif key == "m":
            magnitude = _num(int, val, c, config_str, kind)
        elif key == "w":
            width = _num(int, val, c, config_str, kind)
        elif key == "d":
            depth = _num(int, val, c, config_str, kind)
        elif key == "a":
            alpha = _num(float, val, c, config_str, kind)
        elif key == "b":
            blended = bool(_num(int, val, c, config_str, kind))  # timm 1.0: 'b0' is off
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: m, w, d, a, b, mstd")
    hparams.setdefault("magnitude_std", float("inf"))  # uniform magnitude unless mstd given
    rng = resolve_rng(rng, seed)
    ops = augmix_ops(magnitude=magnitude, hparams=hparams, rng=rng)
    return AugMixAugment(ops, alpha=alpha, width=width, depth=depth, blended=blended, rng=rng)


def trivial_augment_transform(config_str: str = "trivial", hparams: Optional[Dict] = None, rng: RngLike = None,
                              seed: Optional[int] = None) -> "TrivialAugment":
    """TrivialAugment from ``trivial[-mmax<int>][-inc<0|1>]`` (not in timm; flowvision addition).

    Ops: timm's RandAugment set (``inc1``: the increasing variants); magnitude ~ U(0, mmax), mmax=10.

    Args:
        config_str: e.g. ``"trivial"`` or ``"trivial-mmax20-inc1"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The TrivialAugment transform.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "TrivialAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else dict(hparams)
    head, sections = _split_sections(config_str, kind)
    if head != "trivial":
        raise ValueError(f"TrivialAugment config must start with 'trivial', got {head!r} in {config_str!r}")
    mmax, increasing = int(_LEVEL_DENOM), False
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mmax":
            mmax = _num(int, val, c, config_str, kind)
        elif key == "inc":
            increasing = bool(_num(int, val, c, config_str, kind))
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: mmax, inc")
    hparams["magnitude_std"] = float("inf")
    hparams["magnitude_max"] = mmax
    names = _RAND_INCREASING_TRANSFORMS if increasing else _RAND_TRANSFORMS
    rng = resolve_rng(rng, seed)
    ops = _share_rng([AugmentOp(n, prob=1.0, magnitude=mmax, hparams=hparams) for n in names], rng)
    return TrivialAugment(ops, rng=rng)


def create_auto_augment(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                        seed: Optional[int] = None) -> Any:
    """Dispatch on the config prefix like timm's create_transform: rand / augmix / trivial / policy.

    Args:
        config_str: a ``rand-...``, ``augmix-...``, ``trivial...`` or AutoAugment policy config.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The auto-augment transform.

    Raises:
        ValueError: for a malformed config string.
    """
    if not isinstance(config_str, str):
        raise TypeError(f"auto_augment must be a config string, got {type(config_str).__name__}")
    if config_str.startswith("rand"):
        return rand_augment_transform(config_str, hparams, rng=rng, seed=seed)
    if config_str.startswith("augmix"):
        return augment_and_mix_transform(config_str, hparams, rng=rng, seed=seed)
    if config_str.startswith("trivial"):
        return trivial_augment_transform(config_str, hparams, rng=rng, seed=seed)
    return auto_augment_transform(config_str, hparams, rng=rng, seed=seed)
