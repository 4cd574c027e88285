"""timm's extra transforms: RandomResizedCropAndInterpolation, ResizeKeepRatio, CenterCropOrPad,
RandomCropOrPad, RandomPad, TrimBorder, ToNumpy, ToTensor (no rescale), MaybeToTensor,
MaybePILToTensor, and the interpolation-name helpers.

Resizing / cropping / padding go through ``flowvision.transforms.functional`` (imported on first
use, so ``import flowvision.data`` stays light).  Random draws come from one RandomSource per
transform (``seed=`` / ``rng=``) in timm's order, so ``TimmRandom()`` reproduces timm's crops.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, List, Optional, Sequence, Union

import numpy as np
from PIL import Image

from ._arrays import kind_of
from ._random import RngLike, resolve_rng

__all__ = [
    "ToNumpy", "ToTensor", "MaybeToTensor", "MaybePILToTensor", "str_to_interp_mode", "str_to_pil_interp",
    "interp_mode_to_str", "RandomResizedCropAndInterpolation", "CenterCropOrPad", "center_crop_or_pad",
    "crop_or_pad", "RandomCropOrPad", "RandomPad", "ResizeKeepRatio", "TrimBorder",
]

_PIL_TO_STR = {
    Image.Resampling.NEAREST: "nearest", Image.Resampling.BILINEAR: "bilinear", Image.Resampling.BICUBIC: "bicubic",
    Image.Resampling.BOX: "box", Image.Resampling.HAMMING: "hamming", Image.Resampling.LANCZOS: "lanczos",
}
_STR_TO_PIL = {v: k for k, v in _PIL_TO_STR.items()}


def _F():
    from flowvision.transforms import functional as F  # lazy: flowvision.data must import standalone
    return F


def _mode_enum():
    from flowvision.transforms.functional import InterpolationMode
    return InterpolationMode


def str_to_pil_interp(mode_str: str) -> int:
    """The PIL resampling mode of an interpolation name (``"bicubic"`` -> ``Image.Resampling.BICUBIC``).

    Args:
        mode_str: an interpolation name.

    Returns:
        The PIL resampling constant.

    Raises:
        ValueError: an unknown name.
    """
    if mode_str not in _STR_TO_PIL:
        raise ValueError(f"unknown interpolation {mode_str!r}; expected one of {sorted(_STR_TO_PIL)}")
    return _STR_TO_PIL[mode_str]


def str_to_interp_mode(mode_str: str) -> Any:
    """'bilinear' -> ``flowvision.transforms.InterpolationMode.BILINEAR``.

    Args:
        mode_str: an interpolation name.

    Returns:
        The ``flowvision.transforms.InterpolationMode`` member.

    Raises:
        ValueError: an unknown name.
    """
    if mode_str not in _STR_TO_PIL:
        raise ValueError(f"unknown interpolation {mode_str!r}; expected one of {sorted(_STR_TO_PIL)} or 'random'")
    return _mode_enum()(mode_str)


def interp_mode_to_str(mode: Any) -> str:
    """The name (``"bilinear"``, ``"bicubic"``, ...) of a PIL resampling mode or interpolation name.

    Args:
        mode: a PIL resampling constant, an ``InterpolationMode`` or a name.

    Returns:
        The interpolation name.

    Raises:
        ValueError: an unknown mode.
    """
    if isinstance(mode, str):
        return mode
    if isinstance(mode, Image.Resampling):
        return _PIL_TO_STR[mode]
    if hasattr(mode, "value"):
        return mode.value
    return _PIL_TO_STR[Image.Resampling(int(mode))]


def _random_interpolation():
    return (str_to_interp_mode("bilinear"), str_to_interp_mode("bicubic"))


def _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return tuple(size)


def _hw(img):
    _, h, w = _F().get_dimensions(img)
    return h, w


# ----------------------------------------------------------------------------------------------
# tensor conversion
# ----------------------------------------------------------------------------------------------
class ToNumpy:
    """PIL image / HWC uint8 array -> uint8 CHW numpy array (for uint8 collation / prefetching)."""

    def __call__(self, pil_img):
        np_img = np.array(pil_img, dtype=np.uint8)
        if np_img.ndim < 3:
            np_img = np.expand_dims(np_img, axis=-1)
        return np.ascontiguousarray(np.rollaxis(np_img, 2))

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToTensor:
    """PIL image -> CHW backend tensor of ``dtype`` *without* rescaling (timm's ToTensor).

    Args:
        dtype: the tensor dtype (a name or a backend dtype).
    """

    def __init__(self, dtype: Any = "float32") -> None:
        self.dtype = dtype

    def __call__(self, pil_img):
        arr = ToNumpy()(pil_img).astype(np.dtype(str(self.dtype).split(".")[-1]))
        from flowvision.transforms import _functional_tensor as F_t
        return F_t.from_numpy(arr)

    def __repr__(self):
        return f"{self.__class__.__name__}(dtype={self.dtype})"


def _is_tensor_like(x):
    return kind_of(x) in ("backend", "dlpack")


class MaybeToTensor:
    """Like ``ToTensor`` (float in [0, 1]) but passes tensors through unchanged."""

    def __call__(self, pic):
        if _is_tensor_like(pic):
            return pic
        return _F().to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class MaybePILToTensor:
    """Like ``PILToTensor`` (uint8 CHW, no scaling) but passes tensors through unchanged."""

    def __call__(self, pic):
        if _is_tensor_like(pic):
            return pic
        if isinstance(pic, np.ndarray):
            arr = pic if pic.ndim == 3 else pic[:, :, None]
            from flowvision.transforms import _functional_tensor as F_t
            return F_t.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        return _F().pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


# ----------------------------------------------------------------------------------------------
# crops
# ----------------------------------------------------------------------------------------------
class RandomResizedCropAndInterpolation:
    """RandomResizedCrop with a random choice of bilinear/bicubic when ``interpolation='random'``.

    Args:
        size: ``(h, w)`` of the output, or an int for a square.
        scale: range of the crop's area, as a fraction of the image's.
        ratio: range of the crop's aspect ratio.
        interpolation: interpolation name, or ``"random"`` (bilinear or bicubic per call).
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, size: Union[int, Sequence[int]], scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0), interpolation: str = "bilinear",
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("range should be of kind (min, max)")
        self.interpolation = _random_interpolation() if interpolation == "random" else str_to_interp_mode(interpolation)
        self.scale = scale
        self.ratio = ratio
        self.rng = resolve_rng(rng, seed)

    @staticmethod
    def get_params(img, scale, ratio, rng=None):
        rng = rng if rng is not None else resolve_rng()
        img_h, img_w = _hw(img)
        area = img_w * img_h
        for _ in range(10):
            target_area = rng.uniform(*scale) * area
            log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
            aspect_ratio = math.exp(rng.uniform(*log_ratio))
            target_w = int(round(math.sqrt(target_area * aspect_ratio)))
            target_h = int(round(math.sqrt(target_area / aspect_ratio)))
            if target_w <= img_w and target_h <= img_h:
                i = rng.randint(0, img_h - target_h)
                j = rng.randint(0, img_w - target_w)
                return i, j, target_h, target_w
        in_ratio = img_w / img_h
        if in_ratio < min(ratio):
            target_w = img_w
            target_h = int(round(target_w / min(ratio)))
        elif in_ratio > max(ratio):
            target_h = img_h
            target_w = int(round(target_h * max(ratio)))
        else:
            target_w, target_h = img_w, img_h
        return (img_h - target_h) // 2, (img_w - target_w) // 2, target_h, target_w

    def __call__(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio, self.rng)
        interpolation = self.rng.choice(self.interpolation) if isinstance(self.interpolation, tuple) else self.interpolation
        return _F().resized_crop(img, i, j, h, w, list(self.size), interpolation)

    def __repr__(self):
        if isinstance(self.interpolation, tuple):
            interp = " ".join(interp_mode_to_str(x) for x in self.interpolation)
        else:
            interp = interp_mode_to_str(self.interpolation)
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={interp})")


def center_crop_or_pad(img: Any, output_size: Union[int, List[int]], fill: Union[int, float, Sequence[float]] = 0,
                       padding_mode: str = "constant") -> Any:
    """Center crop, padding with ``fill`` (or ``padding_mode``) where the image is smaller.

    Args:
        img: PIL image, numpy HWC array or CHW tensor.
        output_size: ``(h, w)`` of the result, or an int for a square.
        fill: pad value (constant mode).
        padding_mode: ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``.

    Returns:
        The ``output_size`` image, of the type of ``img``.
    """
    F = _F()
    crop_height, crop_width = _setup_size(output_size)
    image_height, image_width = _hw(img)
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = F.pad(img, padding_ltrb, fill=fill, padding_mode=padding_mode)
        image_height, image_width = _hw(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return F.crop(img, crop_top, crop_left, crop_height, crop_width)


class CenterCropOrPad:
    """Center-crop to ``size``, padding first where the image is smaller (timm's ``CenterCropOrPad``).

    Args:
        size: output (height, width) or one int for a square.
        fill: padding value.
        padding_mode: ``constant``, ``edge``, ``reflect`` or ``symmetric``.
    """

    def __init__(self, size: Union[int, Sequence[int]], fill: Union[int, float, Sequence[float]] = 0,
                 padding_mode: str = "constant") -> None:
        self.size = _setup_size(size)
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img):
        return center_crop_or_pad(img, self.size, fill=self.fill, padding_mode=self.padding_mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


def crop_or_pad(img: Any, top: int, left: int, height: int, width: int, fill: Union[int, float, Sequence[float]] = 0,
                padding_mode: str = "constant") -> Any:
    """Crop ``(top, left, height, width)``, padding where the box leaves the image.

    Args:
        img: PIL image, numpy HWC array or CHW tensor.
        top: top row of the box (may be negative).
        left: left column of the box (may be negative).
        height: box height.
        width: box width.
        fill: pad value (constant mode).
        padding_mode: ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``.

    Returns:
        The ``(height, width)`` image, of the type of ``img``.
    """
    F = _F()
    image_height, image_width = _hw(img)
    right = left + width
    bottom = top + height
    if left < 0 or top < 0 or right > image_width or bottom > image_height:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(image_width, left), 0),
            max(bottom - max(image_height, top), 0),
        ]
        img = F.pad(img, padding_ltrb, fill=fill, padding_mode=padding_mode)
    return F.crop(img, max(top, 0), max(left, 0), height, width)


class RandomCropOrPad:
    """Crop and/or pad with a random placement inside the crop / pad margin.

    Args:
        size: ``(h, w)`` of the output, or an int for a square.
        fill: pad value (constant mode).
        padding_mode: ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, size: Union[int, Sequence[int]], fill: Union[int, float, Sequence[float]] = 0,
                 padding_mode: str = "constant", rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.size = _setup_size(size)
        self.fill = fill
        self.padding_mode = padding_mode
        self.rng = resolve_rng(rng, seed)

    @staticmethod
    def get_params(img, size, rng=None):
        rng = rng if rng is not None else resolve_rng()
        image_height, image_width = _hw(img)
        delta_height = image_height - size[0]
        delta_width = image_width - size[1]
        top = int(math.copysign(rng.randint(0, abs(delta_height)), delta_height))
        left = int(math.copysign(rng.randint(0, abs(delta_width)), delta_width))
        return top, left

    def __call__(self, img):
        top, left = self.get_params(img, self.size, self.rng)
        return crop_or_pad(img, top=top, left=left, height=self.size[0], width=self.size[1], fill=self.fill,
                           padding_mode=self.padding_mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class RandomPad:
    """Pad an image on random sides up to ``input_size`` (timm's ``RandomPad``).

    Args:
        input_size: target (height, width).
        fill: padding value.
        rng: a random source; ``seed`` builds one.
        seed: seed of a new random source.
    """

    def __init__(self, input_size: Union[int, Sequence[int]], fill: Union[int, float, Sequence[float]] = 0,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.input_size = input_size
        self.fill = fill
        self.rng = resolve_rng(rng, seed)

    @staticmethod
    def get_params(img, input_size, rng=None):
        rng = rng if rng is not None else resolve_rng()
        height, width = _hw(img)
        delta_width = max(input_size[1] - width, 0)
        delta_height = max(input_size[0] - height, 0)
        pad_left = rng.randint(0, delta_width)
        pad_top = rng.randint(0, delta_height)
        return pad_left, pad_top, delta_width - pad_left, delta_height - pad_top

    def __call__(self, img):
        return _F().pad(img, list(self.get_params(img, self.input_size, self.rng)), self.fill)


class ResizeKeepRatio:
    """Resize keeping the aspect ratio (``longest``: 0 fits the shortest side, 1 the longest),
    with optional random scale / aspect jitter.

    Args:
        size: the target ``(h, w)``, or an int for a square.
        longest: 0 fits the shortest side to the target, 1 the longest; in between interpolates.
        interpolation: interpolation name, or ``"random"``.
        random_scale_prob: probability of a random scale jitter.
        random_scale_range: range of the scale jitter.
        random_scale_area: draw the scale as an area (square root taken).
        random_aspect_prob: probability of a random aspect jitter.
        random_aspect_range: range of the aspect jitter.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, size: Union[int, Sequence[int]], longest: float = 0.0, interpolation: str = "bilinear",
                 random_scale_prob: float = 0.0, random_scale_range: Sequence[float] = (0.85, 1.05),
                 random_scale_area: bool = False, random_aspect_prob: float = 0.0,
                 random_aspect_range: Sequence[float] = (0.9, 1.11), rng: RngLike = None,
                 seed: Optional[int] = None) -> None:
        self.size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
        self.interpolation = _random_interpolation() if interpolation == "random" else str_to_interp_mode(interpolation)
        self.longest = float(longest)
        self.random_scale_prob = random_scale_prob
        self.random_scale_range = random_scale_range
        self.random_scale_area = random_scale_area
        self.random_aspect_prob = random_aspect_prob
        self.random_aspect_range = random_aspect_range
        self.rng = resolve_rng(rng, seed)

    @staticmethod
    def get_params(img, target_size, longest, random_scale_prob=0.0, random_scale_range=(1.0, 1.33),
                   random_scale_area=False, random_aspect_prob=0.0, random_aspect_range=(0.9, 1.11), rng=None):
        rng = rng if rng is not None else resolve_rng()
        img_size = img_h, img_w = _hw(img)
        target_h, target_w = target_size
        ratio_h = img_h / target_h
        ratio_w = img_w / target_w
        ratio = max(ratio_h, ratio_w) * longest + min(ratio_h, ratio_w) * (1.0 - longest)
        if random_scale_prob > 0 and rng.random() < random_scale_prob:
            ratio_factor = rng.uniform(random_scale_range[0], random_scale_range[1])
            if random_scale_area:
                ratio_factor = 1.0 / math.sqrt(ratio_factor)
            ratio_factor = (ratio_factor, ratio_factor)
        else:
            ratio_factor = (1.0, 1.0)
        if random_aspect_prob > 0 and rng.random() < random_aspect_prob:
            log_aspect = (math.log(random_aspect_range[0]), math.log(random_aspect_range[1]))
            aspect_factor = math.sqrt(math.exp(rng.uniform(*log_aspect)))
            ratio_factor = (ratio_factor[0] / aspect_factor, ratio_factor[1] * aspect_factor)
        return [round(x * f / ratio) for x, f in zip(img_size, ratio_factor)]

    def __call__(self, img):
        size = self.get_params(img, self.size, self.longest, self.random_scale_prob, self.random_scale_range,
                               self.random_scale_area, self.random_aspect_prob, self.random_aspect_range, self.rng)
        interpolation = self.rng.choice(self.interpolation) if isinstance(self.interpolation, tuple) else self.interpolation
        return _F().resize(img, size, interpolation)

    def __repr__(self):
        if isinstance(self.interpolation, tuple):
            interp = " ".join(interp_mode_to_str(x) for x in self.interpolation)
        else:
            interp = interp_mode_to_str(self.interpolation)
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={interp}, longest={self.longest:.3f}, "
                f"random_scale_prob={self.random_scale_prob:.3f}, random_aspect_prob={self.random_aspect_prob:.3f})")


class TrimBorder:
    """Remove ``border_size`` pixels from every side of an image (timm's ``TrimBorder``).

    Args:
        border_size: pixels removed per side.
    """

    def __init__(self, border_size: int):
        self.border_size = border_size

    def __call__(self, img):
        h, w = _hw(img)
        top = left = self.border_size
        top = min(top, h)
        left = min(left, h)  # (sic) timm clamps left by the height too
        height = max(0, h - 2 * self.border_size)
        width = max(0, w - 2 * self.border_size)
        return _F().crop(img, top, left, height, width)

    def __repr__(self):
        return f"{self.__class__.__name__}(border_size={self.border_size})"

