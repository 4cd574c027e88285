"""AutoAugment, RandAugment, TrivialAugmentWide and AugMix (torchvision v1 semantics)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum

import numpy as np

from . import _random
from . import functional as F
from .functional import InterpolationMode
from ._transform_base import Transform

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    if op_name == "ShearX":
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[math.degrees(math.atan(magnitude)), 0.0],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "ShearY":
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[0.0, math.degrees(math.atan(magnitude))],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "TranslateX":
        return F.affine(img, angle=0.0, translate=[int(magnitude), 0], scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)
    if op_name == "TranslateY":
        return F.affine(img, angle=0.0, translate=[0, int(magnitude)], scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    if op_name == "Brightness":
        return F.adjust_brightness(img, 1.0 + magnitude)
    if op_name == "Color":
        return F.adjust_saturation(img, 1.0 + magnitude)
    if op_name == "Contrast":
        return F.adjust_contrast(img, 1.0 + magnitude)
    if op_name == "Sharpness":
        return F.adjust_sharpness(img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    if op_name == "AutoContrast":
        return F.autocontrast(img)
    if op_name == "Equalize":
        return F.equalize(img)
    if op_name == "Invert":
        return F.invert(img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _linspace(a, b, n):
    return np.linspace(a, b, n, dtype=np.float64).astype(np.float32)


def _posterize_bins(top, n, div):
    return (top - np.round(np.arange(n, dtype=np.float32) / np.float32((n - 1) / div))).astype(np.int32)


_SCALAR = np.float32(0.0)  # ops without magnitude


def _fill_for(img, fill, channels):
    if F._is_pil_image(img):
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * channels
    if fill is not None:
        return [float(f) for f in fill]
    return None


def _magnitude(magnitudes, index):
    return float(magnitudes[index]) if np.ndim(magnitudes) > 0 else 0.0


class AutoAugmentPolicy(Enum):
    """The learned AutoAugment policies: ``IMAGENET``, ``CIFAR10`` and ``SVHN``.

    """

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)), (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)), (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)), (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)), (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)), (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)), (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)), (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)), (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


def _base_space(num_bins, image_size, translate_max, posterize_top=8):
    return {
        "ShearX": (_linspace(0.0, 0.3, num_bins), True),
        "ShearY": (_linspace(0.0, 0.3, num_bins), True),
        "TranslateX": (_linspace(0.0, translate_max[1], num_bins), True),
        "TranslateY": (_linspace(0.0, translate_max[0], num_bins), True),
        "Rotate": (_linspace(0.0, 30.0, num_bins), True),
        "Brightness": (_linspace(0.0, 0.9, num_bins), True),
        "Color": (_linspace(0.0, 0.9, num_bins), True),
        "Contrast": (_linspace(0.0, 0.9, num_bins), True),
        "Sharpness": (_linspace(0.0, 0.9, num_bins), True),
        "Posterize": (_posterize_bins(posterize_top, num_bins, 4), False),
        "Solarize": (_linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (_SCALAR, False),
        "Equalize": (_SCALAR, False),
    }


class AutoAugment(Transform):
    """AutoAugment (arXiv:1805.09501): apply one randomly chosen sub-policy of the given learned policy.

    Images are uint8 PIL images, ndarrays or tensors (as torchvision).

    Args:
        policy (AutoAugmentPolicy): the learned policy. Default ``AutoAugmentPolicy.IMAGENET``.
        interpolation (InterpolationMode): interpolation of the geometric ops. Default ``InterpolationMode.NEAREST``.
        fill (number or sequence, optional): value of pixels outside the transformed image. Default ``None`` (0).

    Raises:
        ValueError: if ``policy`` is not recognized.
    """

    def __init__(self, policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: float | Sequence[float] | None = None) -> None:
        if not isinstance(policy, AutoAugmentPolicy):
            raise ValueError(f"The provided policy {policy} is not recognized.")
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _POLICIES[policy]

    def _augmentation_space(self, num_bins, image_size):
        space = _base_space(num_bins, image_size, (150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1]))
        space["Invert"] = (_SCALAR, False)
        return space

    @staticmethod
    def get_params(transform_num):
        policy_id = _random.randint(0, transform_num)
        probs = [_random.rand(), _random.rand()]
        signs = [_random.randint(0, 2), _random.randint(0, 2)]
        return policy_id, probs, signs

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _fill_for(img, self.fill, channels)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(Transform):
    """RandAugment (arXiv:1909.13719): apply ``num_ops`` random ops at a fixed magnitude.

    Args:
        num_ops (int): number of ops applied in sequence. Default ``2``.
        magnitude (int): magnitude bin of every op, in ``[0, num_magnitude_bins)``. Default ``9``.
        num_magnitude_bins (int): number of magnitude bins. Default ``31``.
        interpolation (InterpolationMode): interpolation of the geometric ops. Default ``InterpolationMode.NEAREST``.
        fill (number or sequence, optional): value of pixels outside the transformed image. Default ``None`` (0).

    Raises:
        ValueError: if ``num_ops`` is negative or ``magnitude`` is out of range.
    """

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: float | Sequence[float] | None = None) -> None:
        if num_ops < 0:
            raise ValueError(f"num_ops should be non-negative, got {num_ops}")
        if not 0 <= magnitude < num_magnitude_bins:
            raise ValueError(f"magnitude should be in [0, num_magnitude_bins), got {magnitude}")
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        space = {"Identity": (_SCALAR, False)}
        space.update(_base_space(num_bins, image_size,
                                 (150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1])))
        return space

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _fill_for(img, self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        names = list(op_meta.keys())
        for _ in range(self.num_ops):
            op_name = names[_random.randint(0, len(names))]
            magnitudes, signed = op_meta[op_name]
            magnitude = _magnitude(magnitudes, self.magnitude)
            if signed and _random.randint(0, 2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(Transform):
    """TrivialAugment Wide (arXiv:2103.10158): one random op at a random magnitude.

    Args:
        num_magnitude_bins (int): number of magnitude bins, at least 2. Default ``31``.
        interpolation (InterpolationMode): interpolation of the geometric ops. Default ``InterpolationMode.NEAREST``.
        fill (number or sequence, optional): value of pixels outside the transformed image. Default ``None`` (0).

    Raises:
        ValueError: if ``num_magnitude_bins`` is below 2.
    """

    def __init__(self, num_magnitude_bins: int = 31, interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: float | Sequence[float] | None = None) -> None:
        if num_magnitude_bins < 2:
            raise ValueError(f"num_magnitude_bins should be at least 2, got {num_magnitude_bins}")
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        return {
            "Identity": (_SCALAR, False),
            "ShearX": (_linspace(0.0, 0.99, num_bins), True),
            "ShearY": (_linspace(0.0, 0.99, num_bins), True),
            "TranslateX": (_linspace(0.0, 32.0, num_bins), True),
            "TranslateY": (_linspace(0.0, 32.0, num_bins), True),
            "Rotate": (_linspace(0.0, 135.0, num_bins), True),
            "Brightness": (_linspace(0.0, 0.99, num_bins), True),
            "Color": (_linspace(0.0, 0.99, num_bins), True),
            "Contrast": (_linspace(0.0, 0.99, num_bins), True),
            "Sharpness": (_linspace(0.0, 0.99, num_bins), True),
            "Posterize": (_posterize_bins(8, num_bins, 6), False),
            "Solarize": (_linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (_SCALAR, False),
            "Equalize": (_SCALAR, False),
        }

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _fill_for(img, self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        names = list(op_meta.keys())
        op_name = names[_random.randint(0, len(names))]
        magnitudes, signed = op_meta[op_name]
        magnitude = _magnitude(magnitudes, _random.randint(0, len(magnitudes))) if np.ndim(magnitudes) else 0.0
        if signed and _random.randint(0, 2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class AugMix(Transform):
    """AugMix (arXiv:1912.02781): mix several random augmentation chains with the original image.

    Args:
        severity (int): magnitude of the ops, in ``[1, 10]``. Default ``3``.
        mixture_width (int): number of augmentation chains, at least 1. Default ``3``.
        chain_depth (int): ops per chain; ``-1`` draws it from ``[1, 3]`` per chain. Default ``-1``.
        alpha (float): parameter of the Dirichlet/Beta mixing distributions, positive. Default ``1.0``.
        all_ops (bool): also use the ops that overlap ImageNet-C corruptions (color, contrast, brightness,
            sharpness). Default ``True``.
        interpolation (InterpolationMode): interpolation of the geometric ops. Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence, optional): value of pixels outside the transformed image. Default ``None`` (0).

    Raises:
        ValueError: if ``severity``, ``mixture_width`` or ``alpha`` is out of range.
    """

    def __init__(self, severity: int = 3, mixture_width: int = 3, chain_depth: int = -1, alpha: float = 1.0,
                 all_ops: bool = True, interpolation: InterpolationMode = InterpolationMode.BILINEAR,
                 fill: float | Sequence[float] | None = None) -> None:
        self._PARAMETER_MAX = 10
        if not (1 <= severity <= self._PARAMETER_MAX):
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got {severity} instead.")
        if mixture_width < 1:
            raise ValueError(f"mixture_width should be at least 1, got {mixture_width}")
        if alpha <= 0:
            raise ValueError(f"alpha should be positive, got {alpha}")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        s = {
            "ShearX": (_linspace(0.0, 0.3, num_bins), True),
            "ShearY": (_linspace(0.0, 0.3, num_bins), True),
            "TranslateX": (_linspace(0.0, image_size[1] / 3.0, num_bins), True),
            "TranslateY": (_linspace(0.0, image_size[0] / 3.0, num_bins), True),
            "Rotate": (_linspace(0.0, 30.0, num_bins), True),
            "Posterize": (_posterize_bins(4, num_bins, 4), False),
            "Solarize": (_linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (_SCALAR, False),
            "Equalize": (_SCALAR, False),
        }
        if self.all_ops:
            s.update({
                "Brightness": (_linspace(0.0, 0.9, num_bins), True),
                "Color": (_linspace(0.0, 0.9, num_bins), True),
                "Contrast": (_linspace(0.0, 0.9, num_bins), True),
                "Sharpness": (_linspace(0.0, 0.9, num_bins), True),
            })
        return s

    def get_params(self):
        """Mixing weights: (m, combined_weights) like torchvision's two Dirichlet draws."""
        m = _random.dirichlet([self.alpha, self.alpha])
        w = _random.dirichlet([self.alpha] * self.mixture_width) * m[1]
        return m.astype(np.float32), w.astype(np.float32)

    def _chain(self, op_meta):
        names = list(op_meta.keys())
        depth = self.chain_depth if self.chain_depth > 0 else _random.randint(1, 4)
        ops = []
        for _ in range(depth):
            op_name = names[_random.randint(0, len(names))]
            magnitudes, signed = op_meta[op_name]
            magnitude = _magnitude(magnitudes, _random.randint(0, self.severity)) if np.ndim(magnitudes) else 0.0
            if signed and _random.randint(0, 2):
                magnitude *= -1.0
            ops.append((op_name, magnitude))
        return ops

    def forward(self, orig_img):
        channels, height, width = F.get_dimensions(orig_img)
        is_pil = F._is_pil_image(orig_img)
        fill = self.fill if is_pil else _fill_for(orig_img, self.fill, channels)
        img = np.asarray(orig_img) if is_pil else orig_img
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        m, w = self.get_params()
        chains = [self._chain(op_meta) for _ in range(self.mixture_width)]
        return self._mix(orig_img, img, m, w, chains, fill)

    def _mix(self, orig_img, img, m, w, chains, fill):
        from . import _functional_tensor as F_t

        def arr(x):
            if isinstance(x, np.ndarray):
                return x
            return F_t.to_hwc(x)[0] if F_t.is_tensor(x) else np.asarray(x)

        base = arr(img)
        mix = np.float32(m[0]) * base.astype(np.float32)
        for i, ops in enumerate(chains):
            aug = img
            for op_name, magnitude in ops:
                aug = _apply_op(aug, op_name, magnitude, interpolation=self.interpolation, fill=fill)
            mix += np.float32(w[i]) * arr(aug).astype(np.float32)
        if base.dtype.kind != "f":
            mix = np.clip(mix, 0, F.F_np.max_value(base.dtype))
        out = mix.astype(base.dtype)
        if F._is_pil_image(orig_img):
            return F.to_pil_image(out.reshape(base.shape))
        if isinstance(orig_img, np.ndarray):
            return out
        return F_t.from_hwc(out, like=orig_img)

    def __repr__(self):
        return (f"{self.__class__.__name__}(severity={self.severity}, mixture_width={self.mixture_width}, "
                f"chain_depth={self.chain_depth}, alpha={self.alpha}, all_ops={self.all_ops}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
