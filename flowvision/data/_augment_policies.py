"""The augment classes of :mod:`flowvision.data.auto_augment`: AugmentOp, the AutoAugment policy tables, and the
AutoAugment / RandAugment / AugMix / TrivialAugment transforms built from them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
from PIL import Image

from ._augment_ops import (LEVEL_TO_ARG, NAME_TO_OP, _FILL, _GEOMETRIC, _HPARAMS_DEFAULT, _Img, _LEVEL_DENOM,
                           _RANDOM_INTERPOLATION, _as_resample, _blend_f32)
from ._random import RandomSource, RngLike, resolve_rng


# ----------------------------------------------------------------------------------------------
# AugmentOp and the policies
# ----------------------------------------------------------------------------------------------
class AugmentOp:
    """One timm augment op: applied with ``prob``; ``magnitude`` on timm's 0..10 scale.

    hparams: ``img_mean`` (fill colour), ``interpolation`` (PIL resample / name; default random
    bilinear-or-bicubic per call), ``translate_const``, ``translate_pct``, ``magnitude_std``
    (gaussian noise on the magnitude; ``inf`` = uniform in [0, m]), ``magnitude_max`` (clip
    instead of 10), ``pil_exact`` (bit-exact geometric ops on arrays through Pillow).

    Args:
        name: the op name (a key of ``NAME_TO_OP``).
        prob: probability of applying the op.
        magnitude: the magnitude on timm's 0..10 scale.
        hparams: the hyper-parameters above.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.

    Raises:
        ValueError: for an unknown op name.
    """

    def __init__(self, name: str, prob: float = 0.5, magnitude: float = 10, hparams: Optional[Dict] = None,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        if name not in NAME_TO_OP:
            raise ValueError(f"unknown augment op {name!r}; known ops: {', '.join(NAME_TO_OP)}")
        hparams = hparams or _HPARAMS_DEFAULT
        self.name = name
        self.aug_fn = NAME_TO_OP[name]
        self.level_fn = LEVEL_TO_ARG[name]
        self.prob = prob
        self.magnitude = magnitude
        self.hparams = dict(hparams)
        self.fill = tuple(hparams["img_mean"]) if "img_mean" in hparams else _FILL
        self.resample = _as_resample(hparams["interpolation"]) if "interpolation" in hparams else _RANDOM_INTERPOLATION
        self.magnitude_std = self.hparams.get("magnitude_std", 0)
        self.magnitude_max = self.hparams.get("magnitude_max", None)
        self.exact = bool(self.hparams.get("pil_exact", False))
        self._geometric = name in _GEOMETRIC
        self.rng = resolve_rng(rng, seed)

    @property
    def kwargs(self):  # timm attribute name
        return dict(fillcolor=self.fill, resample=self.resample)

    def _magnitude(self):
        magnitude = self.magnitude
        rng = self.rng
        if self.magnitude_std > 0:
            if self.magnitude_std == float("inf"):
                magnitude = rng.uniform(0, magnitude)
            else:
                magnitude = rng.gauss(magnitude, self.magnitude_std)
        upper = self.magnitude_max or _LEVEL_DENOM
        return max(0.0, min(magnitude, upper))

    def _apply(self, x):
        """Apply to an unwrapped image (PIL or numpy)."""
        rng = self.rng
        if self.prob < 1.0 and rng.random() > self.prob:
            return x
        magnitude = self._magnitude()
        args = self.level_fn(magnitude, self.hparams, rng) if self.level_fn is not None else ()
        resample = self.resample
        if self._geometric and isinstance(resample, tuple):
            resample = rng.choice(resample)
        return self.aug_fn(x, *args, fill=self.fill, resample=resample, rng=rng, exact=self.exact)

    def __call__(self, img):
        x, info = _Img.unwrap(img)
        return _Img.wrap(self._apply(x), info)

    def __repr__(self):
        fs = f"{self.__class__.__name__}(name={self.name}, p={self.prob}, m={self.magnitude}, mstd={self.magnitude_std}"
        if self.magnitude_max is not None:
            fs += f", mmax={self.magnitude_max}"
        return fs + ")"


def _share_rng(ops, rng):
    for op in ops:
        op.rng = rng
    return ops


_POLICIES = {
    "v0": [
        [("Equalize", 0.8, 1), ("ShearY", 0.8, 4)],
        [("Color", 0.4, 9), ("Equalize", 0.6, 3)],
        [("Color", 0.4, 1), ("Rotate", 0.6, 8)],
        [("Solarize", 0.8, 3), ("Equalize", 0.4, 7)],
        [("Solarize", 0.4, 2), ("Solarize", 0.6, 2)],
        [("Color", 0.2, 0), ("Equalize", 0.8, 8)],
        [("Equalize", 0.4, 8), ("SolarizeAdd", 0.8, 3)],
        [("ShearX", 0.2, 9), ("Rotate", 0.6, 8)],
        [("Color", 0.6, 1), ("Equalize", 1.0, 2)],
        [("Invert", 0.4, 9), ("Rotate", 0.6, 0)],
        [("Equalize", 1.0, 9), ("ShearY", 0.6, 3)],
        [("Color", 0.4, 7), ("Equalize", 0.6, 0)],
        [("Posterize", 0.4, 6), ("AutoContrast", 0.4, 7)],
        [("Solarize", 0.6, 8), ("Color", 0.6, 9)],
        [("Solarize", 0.2, 4), ("Rotate", 0.8, 9)],
        [("Rotate", 1.0, 7), ("TranslateYRel", 0.8, 9)],
        [("ShearX", 0.0, 0), ("Solarize", 0.8, 4)],
        [("ShearY", 0.8, 0), ("Color", 0.6, 4)],
        [("Color", 1.0, 0), ("Rotate", 0.6, 2)],
        [("Equalize", 0.8, 4), ("Equalize", 0.0, 8)],
        [("Equalize", 1.0, 4), ("AutoContrast", 0.6, 2)],
        [("ShearY", 0.4, 7), ("SolarizeAdd", 0.6, 7)],
        [("Posterize", 0.8, 2), ("Solarize", 0.6, 10)],
        [("Solarize", 0.6, 8), ("Equalize", 0.6, 1)],
        [("Color", 0.8, 6), ("Rotate", 0.4, 5)],
    ],
    "original": [
        [("PosterizeOriginal", 0.4, 8), ("Rotate", 0.6, 9)],
        [("Solarize", 0.6, 5), ("AutoContrast", 0.6, 5)],
        [("Equalize", 0.8, 8), ("Equalize", 0.6, 3)],
        [("PosterizeOriginal", 0.6, 7), ("PosterizeOriginal", 0.6, 6)],
        [("Equalize", 0.4, 7), ("Solarize", 0.2, 4)],
        [("Equalize", 0.4, 4), ("Rotate", 0.8, 8)],
        [("Solarize", 0.6, 3), ("Equalize", 0.6, 7)],
        [("PosterizeOriginal", 0.8, 5), ("Equalize", 1.0, 2)],
        [("Rotate", 0.2, 3), ("Solarize", 0.6, 8)],
        [("Equalize", 0.6, 8), ("PosterizeOriginal", 0.4, 6)],
        [("Rotate", 0.8, 8), ("Color", 0.4, 0)],
        [("Rotate", 0.4, 9), ("Equalize", 0.6, 2)],
        [("Equalize", 0.0, 7), ("Equalize", 0.8, 8)],
        [("Invert", 0.6, 4), ("Equalize", 1.0, 8)],
        [("Color", 0.6, 4), ("Contrast", 1.0, 8)],
        [("Rotate", 0.8, 8), ("Color", 1.0, 2)],
        [("Color", 0.8, 8), ("Solarize", 0.8, 7)],
        [("Sharpness", 0.4, 7), ("Invert", 0.6, 8)],
        [("ShearX", 0.6, 5), ("Equalize", 1.0, 9)],
        [("Color", 0.4, 0), ("Equalize", 0.6, 3)],
        [("Equalize", 0.4, 7), ("Solarize", 0.2, 4)],
        [("Solarize", 0.6, 5), ("AutoContrast", 0.6, 5)],
        [("Invert", 0.6, 4), ("Equalize", 1.0, 8)],
        [("Color", 0.6, 4), ("Contrast", 1.0, 8)],
        [("Equalize", 0.8, 8), ("Equalize", 0.6, 3)],
    ],
    "3a": [
        [("Solarize", 1.0, 5)],  # 128 threshold at magnitude 5
        [("Desaturate", 1.0, 10)],  # grayscale at magnitude 10
        [("GaussianBlurRand", 1.0, 10)],
    ],
}


def _research_posterize(policy, src):
    return [[(("PosterizeIncreasing" if n == src else n), p, m) for n, p, m in sp] for sp in policy]


_POLICIES["v0r"] = _research_posterize(_POLICIES["v0"], "Posterize")
_POLICIES["originalr"] = _research_posterize(_POLICIES["original"], "PosterizeOriginal")


def auto_augment_policy(name: str = "v0", hparams: Optional[Dict] = None, rng: RngLike = None,
                        seed: Optional[int] = None) -> List[List["AugmentOp"]]:
    """The AutoAugment policy ``name`` (v0, v0r, original, originalr, 3a) as lists of AugmentOps.

    Args:
        name: ``"v0"``, ``"v0r"``, ``"original"``, ``"originalr"`` or ``"3a"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``, ``magnitude_std``...).
        rng: the random source shared by the ops.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The sub-policies, each a list of ops.

    Raises:
        ValueError: for an unknown policy name.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    if name not in _POLICIES:
        raise ValueError(f"unknown AutoAugment policy {name!r}; expected one of {', '.join(_POLICIES)}")
    rng = resolve_rng(rng, seed)
    return [_share_rng([AugmentOp(*a, hparams=hparams) for a in sp], rng) for sp in _POLICIES[name]]


class _Policy:
    """Common container handling and seeding for the policy transforms."""

    rng: RandomSource

    def _ops_all(self):
        raise NotImplementedError

    def _set_rng(self, rng):
        self.rng = rng
        for op in self._ops_all():
            op.rng = rng

    def manual_seed(self, seed):
        """Restart this transform's random sequence from ``seed``."""
        self._set_rng(RandomSource(seed))
        return self

    def __call__(self, img):
        x, info = _Img.unwrap(img)
        return _Img.wrap(self._apply(x), info)


class AutoAugment(_Policy):
    """An AutoAugment policy (timm's): each call applies one randomly chosen sub-policy (a list of ops).

    Args:
        policy: sub-policies, each a list of :class:`AugmentOp` (see :func:`auto_augment_policy`).
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.
    """

    def __init__(self, policy: List[List[Any]], rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.policy = policy
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (policy[0][0].rng if policy and policy[0] else RandomSource()))

    def _ops_all(self):
        return [op for sp in self.policy for op in sp]

    def _apply(self, x):
        sub_policy = self.rng.choice(self.policy)
        for op in sub_policy:
            x = op._apply(x)
        return x

    def __repr__(self):
        fs = self.__class__.__name__ + "(policy="
        for p in self.policy:
            fs += "\n\t[" + ", ".join(str(op) for op in p) + "]"
        return fs + ")"


_RAND_TRANSFORMS = [
    "AutoContrast", "Equalize", "Invert", "Rotate", "Posterize", "Solarize", "SolarizeAdd", "Color",
    "Contrast", "Brightness", "Sharpness", "ShearX", "ShearY", "TranslateXRel", "TranslateYRel",
]
_RAND_INCREASING_TRANSFORMS = [
    "AutoContrast", "Equalize", "Invert", "Rotate", "PosterizeIncreasing", "SolarizeIncreasing",
    "SolarizeAdd", "ColorIncreasing", "ContrastIncreasing", "BrightnessIncreasing", "SharpnessIncreasing",
    "ShearX", "ShearY", "TranslateXRel", "TranslateYRel",
]
_RAND_3A = ["SolarizeIncreasing", "Desaturate", "GaussianBlur"]
_RAND_WEIGHTED_3A = {
    "SolarizeIncreasing": 6, "Desaturate": 6, "GaussianBlur": 6, "Rotate": 3, "ShearX": 2, "ShearY": 2,
    "PosterizeIncreasing": 1, "AutoContrast": 1, "ColorIncreasing": 1, "SharpnessIncreasing": 1,
    "ContrastIncreasing": 1, "BrightnessIncreasing": 1, "Equalize": 1, "Invert": 1,
}
_RAND_WEIGHTED_0 = {
    "Rotate": 3, "ShearX": 2, "ShearY": 2, "TranslateXRel": 1, "TranslateYRel": 1, "ColorIncreasing": 0.25,
    "SharpnessIncreasing": 0.25, "AutoContrast": 0.25, "SolarizeIncreasing": 0.05, "SolarizeAdd": 0.05,
    "ContrastIncreasing": 0.05, "BrightnessIncreasing": 0.05, "Equalize": 0.05, "PosterizeIncreasing": 0.05,
    "Invert": 0.05,
}
_RAND_CHOICES: Dict[str, Any] = {"weights": _RAND_WEIGHTED_0, "3aw": _RAND_WEIGHTED_3A, "3a": _RAND_3A}


def rand_augment_choices(name: str, increasing: bool = True) -> Union[Dict[str, float], List[str]]:
    """The op set for a ``t<name>`` section: 'weights', '3a', '3aw' (ValueError otherwise).

    Args:
        name: the section's name after ``t``.
        increasing: accepted for timm's signature; the named sets do not depend on it.

    Returns:
        Op names, or ``{op name: relative weight}`` for the weighted sets.

    Raises:
        ValueError: for an unknown name.
    """
    if name in _RAND_CHOICES:
        return _RAND_CHOICES[name]
    raise ValueError(f"unknown RandAugment transform set {name!r} (section 't{name}'); "
                     f"expected one of {', '.join('t' + k for k in _RAND_CHOICES)}")


def _get_weighted_transforms(transforms: Dict):
    names, probs = list(zip(*transforms.items()))
    weights = np.array(probs)
    return list(names), weights / np.sum(weights)


def rand_augment_ops(magnitude: float = 10, prob: float = 0.5, hparams: Optional[Dict] = None,
                     transforms: Optional[Union[Dict, List]] = None, rng: RngLike = None,
                     seed: Optional[int] = None) -> List["AugmentOp"]:
    """The RandAugment operations (timm's list) at ``magnitude``, each applied with probability ``prob``.

    Args:
        magnitude: operation strength (0-10 scale, timm's).
        prob: probability that a chosen op is applied.
        hparams: timm's augmentation hyper-parameters.
        transforms: operation names (or a name -> weight mapping) instead of the default set.
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.

    Returns:
        A list of :class:`AugmentOp`.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    transforms = transforms or _RAND_TRANSFORMS
    rng = resolve_rng(rng, seed)
    return _share_rng([AugmentOp(name, prob=prob, magnitude=magnitude, hparams=hparams) for name in transforms], rng)


class RandAugment(_Policy):
    """``num_layers`` ops drawn per image (with replacement; without, when weighted), each applied with its prob.

    Args:
        ops: the ops to draw from.
        num_layers: ops applied per image.
        choice_weights: relative probability of each op (``None``: uniform).
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], num_layers: int = 2, choice_weights: Optional[Sequence[float]] = None,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self.num_layers = num_layers
        self.choice_weights = choice_weights
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _apply(self, x):
        idx = self.rng.np_choice(len(self.ops), self.num_layers, replace=self.choice_weights is None,
                                 p=self.choice_weights)
        ops = self.ops
        for i in idx:
            x = ops[i]._apply(x)
        return x

    def __repr__(self):
        fs = self.__class__.__name__ + f"(n={self.num_layers}, ops="
        for op in self.ops:
            fs += f"\n\t{op}"
        return fs + ")"


_AUGMIX_TRANSFORMS = [
    "AutoContrast", "ColorIncreasing", "ContrastIncreasing", "BrightnessIncreasing", "SharpnessIncreasing",
    "Equalize", "Rotate", "PosterizeIncreasing", "SolarizeIncreasing", "ShearX", "ShearY", "TranslateXRel",
    "TranslateYRel",
]


def augmix_ops(magnitude: float = 10, hparams: Optional[Dict] = None, transforms: Optional[Sequence[str]] = None,
               rng: RngLike = None, seed: Optional[int] = None) -> List["AugmentOp"]:
    """The AugMix operations (timm's list), each applied with probability 1 at ``magnitude``.

    Args:
        magnitude: operation strength (0-10 scale, timm's).
        hparams: timm's augmentation hyper-parameters (``img_mean``, ``magnitude_std``, ...).
        transforms: operation names to use instead of the default AugMix set.
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.

    Returns:
        A list of :class:`AugmentOp`.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    transforms = transforms or _AUGMIX_TRANSFORMS
    rng = resolve_rng(rng, seed)
    return _share_rng([AugmentOp(name, prob=1.0, magnitude=magnitude, hparams=hparams) for name in transforms], rng)


class AugMixAugment(_Policy):
    """AugMix: ``width`` chains of ``depth`` ops mixed with Dirichlet weights, blended with Beta(m).

    Args:
        ops: the ops to chain.
        alpha: Dirichlet / Beta concentration.
        width: number of chains.
        depth: ops per chain (``-1``: 1 to 3 at random).
        blended: blend the chains one by one (timm's ``blended`` variant).
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], alpha: float = 1.0, width: int = 3, depth: int = -1, blended: bool = False,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self.alpha = alpha
        self.width = width
        self.depth = depth
        self.blended = blended
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _chain(self, x):
        depth = self.depth if self.depth > 0 else int(self.rng.np_randint(1, 4))
        idx = self.rng.np_choice(len(self.ops), depth, replace=True)
        for i in idx:
            x = self.ops[i]._apply(x)
        return x

    @staticmethod
    def _calc_blended_weights(ws, m):
        ws = ws * m
        cump = 1.0
        rws = []
        for w in ws[::-1]:
            alpha = w / cump
            cump *= 1 - alpha
            rws.append(alpha)
        return np.array(rws[::-1], dtype=np.float32)

    def _apply(self, x):
        mixing_weights = np.float32(self.rng.np_dirichlet([self.alpha] * self.width))
        m = np.float32(self.rng.np_beta(self.alpha, self.alpha))
        is_pil = isinstance(x, Image.Image)
        if self.blended:
            ws = self._calc_blended_weights(mixing_weights, m)
            orig = x
            out = x
            for w in ws:
                aug = self._chain(orig)
                if is_pil:
                    out = Image.blend(out, aug, float(w))
                else:
                    out = _blend_f32(out.astype(np.float32), aug.astype(np.float32), float(w))
            return out
        base = np.asarray(x) if is_pil else x
        mixed = np.zeros(base.shape, dtype=np.float32)
        for mw in mixing_weights:
            aug = self._chain(x)
            mixed += mw * np.asarray(aug, dtype=np.float32)
        np.clip(mixed, 0, 255.0, out=mixed)
        mixed_u8 = mixed.astype(np.uint8)
        if is_pil:
            return Image.blend(x, Image.fromarray(mixed_u8), float(m))
        return _blend_f32(base.astype(np.float32), mixed_u8.astype(np.float32), float(m))

    def __repr__(self):
        fs = self.__class__.__name__ + f"(alpha={self.alpha}, width={self.width}, depth={self.depth}, ops="
        for op in self.ops:
            fs += f"\n\t{op}"
        return fs + ")"


class TrivialAugment(_Policy):
    """TrivialAugment (Müller & Hutter 2021) over timm's op set: one op per image, always applied,
    magnitude uniform in [0, magnitude_max].

    Args:
        ops: the ops to draw from.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _apply(self, x):
        return self.rng.choice(self.ops)._apply(x)

    def __repr__(self):
        return self.__class__.__name__ + "(ops=" + "".join(f"\n\t{op}" for op in self.ops) + ")"
