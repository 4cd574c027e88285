"""torchvision.transforms (v1) classes on PIL images, numpy HWC arrays and backend tensors."""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from . import _random
# torchvision's transforms are torch.nn.Module subclasses; ours subclass the engine's Module (importing it costs
# about 0.3 s on top of numpy/PIL, see docs/drop-in.md)
from ..backend.nn.modules.module import Module as _Module
from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int

__all__ = [
    "Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize", "Resize",
    "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice", "RandomOrder", "RandomCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "FiveCrop", "TenCrop",
    "LinearTransformation", "ColorJitter", "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale",
    "RandomPerspective", "RandomErasing", "GaussianBlur", "InterpolationMode", "RandomInvert", "RandomPosterize",
    "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "ElasticTransform",
]


class Transform(_Module):
    """Base of the transform classes that torchvision makes ``nn.Module`` subclasses (so ``nn.Sequential`` of them,
    ``.train()``/``.eval()``, hooks and ``isinstance(t, nn.Module)`` work as in torchvision).

    ``__new__`` runs ``Module.__init__`` before the subclass's ``__init__``, so subclasses need not call
    ``super().__init__()``; calling it again first (torchvision's style) is harmless.
    """

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        _Module.__init__(self)
        return self

    def forward(self, img):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _is_uint8_image(x):
    if F._is_pil_image(x):
        return x.mode in ("L", "RGB", "RGBA", "LA", "CMYK")
    return isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim in (2, 3)


def _is_uint8_chw_tensor(x):
    from . import _functional_tensor as F_t

    return F_t.is_tensor(x) and len(tuple(x.shape)) == 3 and F_t.np_dtype(x.dtype) == np.uint8


def _is_float32(dtype):
    from . import _functional_tensor as F_t

    try:
        return F_t.np_dtype(dtype) == np.float32
    except TypeError:
        return False


class Compose:
    """Apply a list of transforms in order.

    ``ToTensor`` (uint8 PIL / ndarray) or ``ConvertImageDtype(float32)`` (uint8 tensor) directly followed by
    ``Normalize`` is fused into one pass (same numbers up to float rounding, one float buffer instead of three).

    Args:
        transforms (sequence of callables): the transforms, each called with the previous one's output.
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = transforms

    def __call__(self, img):
        ts = self.transforms
        i, n = 0, len(ts)
        while i < n:
            t = ts[i]
            if i + 1 < n and type(ts[i + 1]) is Normalize and not ts[i + 1].inplace:
                norm = ts[i + 1]
                if type(t) is ToTensor and _is_uint8_image(img):
                    img = F._to_tensor_normalize(img, norm.mean, norm.std)
                    i += 2
                    continue
                if type(t) is ConvertImageDtype and _is_uint8_chw_tensor(img) and _is_float32(t.dtype):
                    img = F._uint8_tensor_normalize(img, norm.mean, norm.std)
                    i += 2
                    continue
            img = t(img)
            i += 1
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class ToTensor:
    """Convert a PIL Image or ``(H, W[, C])`` ndarray to a float32 ``(C, H, W)`` tensor.

    uint8 input is scaled to ``[0, 1]``; see :func:`flowvision.transforms.functional.to_tensor`.
    """

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """Convert a PIL Image to a ``(C, H, W)`` tensor of the image's own dtype, without scaling.

    """

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(Transform):
    """Convert a tensor image to ``dtype`` and rescale its values to that dtype's range.

    Args:
        dtype (backend or numpy dtype): the target dtype.
    """

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    """Convert a ``(C, H, W)`` tensor or ``(H, W[, C])`` ndarray to a PIL Image.

    Args:
        mode (str, optional): PIL mode of the result. Default ``None``: inferred from channels and dtype.
    """

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(" + (f"mode={self.mode}" if self.mode is not None else "") + ")"


class Normalize(Transform):
    """Normalize a float image per channel: ``(x - mean) / std``.

    Args:
        mean (number or sequence of float): per-channel means.
        std (number or sequence of float): per-channel standard deviations, non-zero.
        inplace (bool): write the result into the input. Default ``False``.

    Raises:
        TypeError: if ``mean`` or ``std`` is not a number or sequence.
        ValueError: if they are empty, of different lengths, or ``std`` contains a zero.
    """

    def __init__(self, mean: float | Sequence[float], std: float | Sequence[float], inplace: bool = False) -> None:
        for name, v in (("mean", mean), ("std", std)):
            if not isinstance(v, (Sequence, numbers.Number, np.ndarray)) or isinstance(v, str):
                raise TypeError(f"{name} should be a number or a sequence of numbers, got {type(v)}")
        if np.size(std) == 0 or np.size(mean) == 0:
            raise ValueError("mean and std should not be empty")
        if np.size(mean) > 1 and np.size(std) > 1 and np.size(mean) != np.size(std):
            raise ValueError(f"mean and std should have the same length, got {np.size(mean)} and {np.size(std)}")
        if np.any(np.asarray(std, np.float64) == 0):
            raise ValueError("std should not contain zeros (division by zero)")
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(Transform):
    """Resize the input image to ``size`` (PIL Images, numpy ``(H, W[, C])`` arrays and ``(..., C, H, W)`` tensors).

    Args:
        size (int or sequence of int): ``(h, w)`` of the output; an int or 1-element sequence gives the smaller edge,
            the other edge keeps the aspect ratio.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.BILINEAR``.
        max_size (int, optional): upper bound of the longer edge when ``size`` gives the smaller edge. Default ``None``.
        antialias (bool, optional): antialias when downsampling (always on for PIL). Default ``True``.

    Raises:
        TypeError: if ``size`` is not an int or sequence of ints.
        ValueError: if ``size`` has a wrong length or non-positive values.
    """

    def __init__(self, size: int | Sequence[int], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, max_size: int | None = None, antialias: bool | None = True) -> None:
        if isinstance(size, (bool, str)) or not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        F._check_size_arg(size)
        self.size = size
        self.max_size = max_size
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, Sequence) and len(size) == 1:
        size = (size[0], size[0])
    elif not isinstance(size, Sequence) or len(size) != 2:
        raise ValueError(error_msg)
    for v in size:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"size values should be integers, got {size}")
        if v <= 0:
            raise ValueError(f"size values should be positive, got {size}")
    return size


class CenterCrop(Transform):
    """Crop the center of the image; smaller images are zero-padded first.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.

    Raises:
        TypeError, ValueError: if ``size`` is not one or two positive ints.
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(Transform):
    """Pad the image on all sides.

    Args:
        padding (int or sequence of int): one value for all borders, two for left/right and top/bottom, or four for
            left, top, right and bottom.
        fill (number or sequence): pixel value for ``"constant"`` padding. Default ``0``.
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Raises:
        TypeError: if ``padding`` or ``fill`` has a wrong type.
        ValueError: if ``padding`` has a wrong length or ``padding_mode`` is unknown.
    """

    def __init__(self, padding: int | Sequence[int], fill: float | Sequence[float] = 0, padding_mode: str = "constant") -> None:
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError(
                f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class Lambda:
    """Apply a user function as a transform.

    Args:
        lambd (callable): function called with the image; its result is returned.

    Raises:
        TypeError: if ``lambd`` is not callable.
    """

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomTransforms:
    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError()

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class RandomApply(Transform):
    """Apply a list of transforms, in order, with probability ``p``.

    Args:
        transforms (sequence of callables): the transforms.
        p (float): probability of applying them. Default ``0.5``.
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]], p: float = 0.5) -> None:
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < _random.rand():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{body}\n)"


class RandomOrder(RandomTransforms):
    """Apply a list of transforms in a random order.

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
    """

    def __call__(self, img):
        for i in _random.randperm(len(self.transforms)):
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one transform picked at random from a list.

    Args:
        transforms (sequence of callables): the transforms.
        p (sequence of float, optional): relative probability of each transform (normalized to sum to 1).
            Default ``None``: uniform.

    Raises:
        TypeError: if ``transforms`` or ``p`` is not a sequence.
        ValueError: if ``p`` and ``transforms`` have different lengths.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]], p: Sequence[float] | None = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        if p is not None and len(p) != len(transforms):
            raise ValueError("Length of p doesn't match the number of transforms")
        self.p = p

    def __call__(self, *args):
        p = self.p
        if p is None:
            idx = _random.randint(0, len(self.transforms))
        else:
            w = np.asarray(p, np.float64)
            idx = int(np.searchsorted(np.cumsum(w / w.sum()), _random.rand(), side="right"))
            idx = min(idx, len(self.transforms) - 1)
        return self.transforms[idx](*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(Transform):
    """Crop the image at a random location.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.
        padding (int or sequence of int, optional): padding applied first, as in :class:`Pad`. Default ``None``.
        pad_if_needed (bool): pad an image smaller than ``size`` so that the crop fits. Default ``False``.
        fill (number or sequence): pixel value for ``"constant"`` padding. Default ``0``.
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Raises:
        TypeError, ValueError: if ``size``, ``padding`` or ``padding_mode`` is invalid; at call time, ValueError if the
            crop is larger than the (padded) image.
    """

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = _random.randint(0, h - th + 1)
        j = _random.randint(0, w - tw + 1)
        return i, j, th, tw

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None, pad_if_needed: bool = False, fill: float | Sequence[float] = 0, padding_mode: str = "constant") -> None:
        self.size = tuple(_setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        if padding is not None:
            F._parse_padding(padding)
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(Transform):
    """Flip the image horizontally with probability ``p``.

    Args:
        p (float): probability of the flip. Default ``0.5``.
    """

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        if _random.rand() < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    """Flip the image vertically with probability ``p``.

    Args:
        p (float): probability of the flip. Default ``0.5``.
    """

    def forward(self, img):
        if _random.rand() < self.p:
            return F.vflip(img)
        return img


class RandomPerspective(Transform):
    """Apply a random perspective transform with probability ``p``.

    Args:
        distortion_scale (float): degree of distortion, in ``[0, 1]``. Default ``0.5``.
        p (float): probability of the transform. Default ``0.5``.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence): value of pixels outside the transformed image, one for all channels or one per
        channel. Default ``0``.

    Raises:
        ValueError: if ``distortion_scale`` is outside ``[0, 1]``.
        TypeError: if ``fill`` is not a number or sequence.
    """

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5, interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | None = 0) -> None:
        self.p = p
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        if not 0 <= distortion_scale <= 1:
            raise ValueError(f"distortion_scale should be in [0, 1], got {distortion_scale}")
        self.distortion_scale = distortion_scale
        if fill is None:
            fill = 0
        elif isinstance(fill, str) or not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _array_fill(img, self.fill, channels)
        if _random.rand() < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width, height, distortion_scale):
        hh, hw = height // 2, width // 2
        dw, dh = int(distortion_scale * hw), int(distortion_scale * hh)
        topleft = [_random.randint(0, dw + 1), _random.randint(0, dh + 1)]
        topright = [_random.randint(width - dw - 1, width), _random.randint(0, dh + 1)]
        botright = [_random.randint(width - dw - 1, width), _random.randint(height - dh - 1, height)]
        botleft = [_random.randint(0, dw + 1), _random.randint(height - dh - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


def _array_fill(img, fill, channels):
    """Classes turn ``fill`` into a per-channel float list for arrays/tensors (torchvision's tensor rule)."""
    if F._is_pil_image(img):
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * channels
    return [float(f) for f in fill]


class RandomResizedCrop(Transform):
    """Crop a random area and aspect ratio of the image and resize it to ``size`` (Inception-style crop).

    Args:
        size (int or sequence of int): ``(h, w)`` of the output; an int gives a square output.
        scale (sequence of 2 float): range of the crop area as a fraction of the image area. Default ``(0.08, 1.0)``.
        ratio (sequence of 2 float): range of the crop's aspect ratio (w / h), sampled log-uniformly.
            Default ``(3/4, 4/3)``.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling. Default ``True``.

    Raises:
        TypeError: if ``scale`` or ``ratio`` is not a sequence.
        ValueError: if they do not have two values, ``scale`` is negative or ``ratio`` not positive.
    """

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0), ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0), interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if len(scale) != 2 or len(ratio) != 2:
            raise ValueError("scale and ratio should be sequences of two numbers")
        if scale[0] < 0 or ratio[0] <= 0:
            raise ValueError(f"scale must be non-negative and ratio positive, got scale={scale}, ratio={ratio}")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        if height == 0 or width == 0:
            raise ValueError(f"Expected a non-empty image, got height={height} and width={width}")
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _random.uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_random.uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = _random.randint(0, height - h + 1)
                j = _random.randint(0, width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        i = (height - h) // 2
        j = (width - w) // 2
        return i, j, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class FiveCrop(Transform):
    """Crop the four corners and the center of the image; returns a tuple of five images.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.five_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(Transform):
    """The five crops of :class:`FiveCrop` of the image and of its flipped version (a tuple of ten images).

    Args:
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.
        vertical_flip (bool): flip vertically instead of horizontally. Default ``False``.
    """

    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class LinearTransformation(Transform):
    """Flatten a ``(C, H, W)`` tensor image, subtract ``mean_vector`` and multiply by ``transformation_matrix``.

    Used e.g. for ZCA whitening; the result is reshaped back to the input's shape.

    Args:
        transformation_matrix (Tensor or array): ``(D, D)`` matrix with ``D = C * H * W``.
        mean_vector (Tensor or array): ``(D,)`` vector.

    Raises:
        ValueError: if the matrix is not square, the vector's length differs from ``D``, or their dtypes differ; at
            call time, if the image does not have ``D`` elements.
    """

    def __init__(self, transformation_matrix: Any, mean_vector: Any) -> None:
        from . import _functional_tensor as F_t

        m = F_t.to_numpy(transformation_matrix) if F_t.is_tensor(transformation_matrix) else np.asarray(
            transformation_matrix)
        v = F_t.to_numpy(mean_vector) if F_t.is_tensor(mean_vector) else np.asarray(mean_vector)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(f"transformation_matrix should be square. Got {tuple(m.shape)} rectangular matrix.")
        if v.shape[0] != m.shape[0]:
            raise ValueError(
                f"mean_vector should have the same length {v.shape[0]} as any one of the dimensions of the "
                f"transformation_matrix [{tuple(m.shape)}]"
            )
        if m.dtype != v.dtype:
            raise ValueError(f"Input tensors should have the same dtype. Got {m.dtype} and {v.dtype}")
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector
        self._m, self._v = m, v

    def forward(self, tensor):
        from . import _functional_tensor as F_t

        is_np = isinstance(tensor, np.ndarray)
        if is_np:
            a = tensor if tensor.ndim == 2 else np.moveaxis(tensor, -1, -3)
            if tensor.ndim == 2:
                a = a[None]
        else:
            a = F_t.to_numpy(tensor)
        if a.ndim < 3:
            raise ValueError(f"Expected an image of shape (..., C, H, W), got {tuple(a.shape)}")
        n = a.shape[-3] * a.shape[-2] * a.shape[-1]
        if n != self._m.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{a.shape[-3]} x {a.shape[-2]} x {a.shape[-1]}] != {self._m.shape[0]}"
            )
        if a.dtype != self._m.dtype:
            raise ValueError(
                f"Input tensor and transformation matrix should have the same dtype. Got {a.dtype} and {self._m.dtype}"
            )
        flat = a.reshape(-1, n)
        out = ((flat - self._v) @ self._m).reshape(a.shape)
        if is_np:
            out = np.moveaxis(out, -3, -1)
            return np.ascontiguousarray(out[..., 0] if tensor.ndim == 2 else out)
        return F_t.from_numpy(out)

    def __repr__(self):
        return f"{self.__class__.__name__}(transformation_matrix={self._m.tolist()}, mean_vector={self._v.tolist()})"


class ColorJitter(Transform):
    """Randomly change the brightness, contrast, saturation and hue of the image, in a random order.

    Args:
        brightness (float or (min, max)): factor drawn uniformly from ``[max(0, 1 - b), 1 + b]`` or the given range.
            Default ``0`` (unchanged).
        contrast (float or (min, max)): as ``brightness``, for contrast. Default ``0``.
        saturation (float or (min, max)): as ``brightness``, for saturation. Default ``0``.
        hue (float or (min, max)): hue shift drawn from ``[-h, h]`` or the given range, within ``[-0.5, 0.5]``.
            Default ``0``.

    Raises:
        TypeError: if a value is neither a number nor a 2-sequence.
        ValueError: if a value is negative or out of its bounds.
    """

    def __init__(self, brightness: float | Sequence[float] = 0, contrast: float | Sequence[float] = 0, saturation: float | Sequence[float] = 0, hue: float | Sequence[float] = 0) -> None:
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def _check_input(self, value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        fn_idx = _random.randperm(4)
        b = None if brightness is None else _random.uniform(brightness[0], brightness[1])
        c = None if contrast is None else _random.uniform(contrast[0], contrast[1])
        s = None if saturation is None else _random.uniform(saturation[0], saturation[1])
        h = None if hue is None else _random.uniform(hue[0], hue[1])
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return _apply_jitter(img, fn_idx, b, c, s, h)

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


def _apply_jitter(img, fn_idx, b, c, s, h):
    for fn_id in fn_idx:
        fn_id = int(fn_id)
        if fn_id == 0 and b is not None:
            img = F.adjust_brightness(img, b)
        elif fn_id == 1 and c is not None:
            img = F.adjust_contrast(img, c)
        elif fn_id == 2 and s is not None:
            img = F.adjust_saturation(img, s)
        elif fn_id == 3 and h is not None:
            img = F.adjust_hue(img, h)
    return img


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join([str(s) for s in req_sizes])
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


class RandomRotation(Transform):
    """Rotate the image by a random angle.

    Args:
        degrees (number or (min, max)): range of the angle in degrees; a number ``d`` gives ``(-d, d)``.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.NEAREST``.
        expand (bool): enlarge the output to hold the whole rotated image. Default ``False``.
        center (sequence of float, optional): ``(x, y)`` center of rotation. Default ``None``: the image center.
        fill (number or sequence): value of pixels outside the transformed image, one for all channels or one per
        channel. Default ``0``.

    Raises:
        TypeError, ValueError: if ``degrees``, ``center`` or ``fill`` is invalid.
    """

    def __init__(self, degrees: float | Sequence[float], interpolation: InterpolationMode | int = InterpolationMode.NEAREST, expand: bool = False, center: Sequence[float] | None = None, fill: float | Sequence[float] | None = 0) -> None:
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.interpolation = interpolation
        self.expand = expand
        if fill is None:
            fill = 0
        elif isinstance(fill, str) or not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        return _random.uniform(float(degrees[0]), float(degrees[1]))

    def forward(self, img):
        channels, _, _ = F.get_dimensions(img)
        fill = _array_fill(img, self.fill, channels)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, "
                f"expand={self.expand}" + (f", center={self.center}" if self.center is not None else "")
                + f", fill={self.fill})")


class RandomAffine(Transform):
    """Apply a random affine transform (rotation, translation, scale, shear), keeping the image center.

    Args:
        degrees (number or (min, max)): range of the rotation in degrees; a number ``d`` gives ``(-d, d)``.
        translate (tuple of 2 float, optional): maximum horizontal and vertical shift as fractions of the width and
            height, in ``[0, 1]``. Default ``None``: no shift.
        scale (tuple of 2 float, optional): range of the scale factor. Default ``None``: 1.
        shear (number or sequence of 2 or 4 numbers, optional): shear range in degrees (x, or x and y).
            Default ``None``: no shear.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.NEAREST``.
        fill (number or sequence): value of pixels outside the transformed image, one for all channels or one per
        channel. Default ``0``.
        center (sequence of float, optional): ``(x, y)`` center of the transform. Default ``None``: the image center.

    Raises:
        TypeError, ValueError: if an argument is invalid (e.g. translate outside ``[0, 1]``, non-positive scale).
    """

    def __init__(self, degrees: float | Sequence[float], translate: Sequence[float] | None = None, scale: Sequence[float] | None = None, shear: float | Sequence[float] | None = None, interpolation: InterpolationMode | int = InterpolationMode.NEAREST, fill: float | Sequence[float] | None = 0, center: Sequence[float] | None = None) -> None:
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not (0.0 <= t <= 1.0):
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None else None
        self.interpolation = interpolation
        if fill is None:
            fill = 0
        elif isinstance(fill, str) or not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        angle = _random.uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_random.uniform(-max_dx, max_dx)))
            ty = int(round(_random.uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = _random.uniform(scale_ranges[0], scale_ranges[1]) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _random.uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _random.uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _array_fill(img, self.fill, channels)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self):
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        for name in ("translate", "scale", "shear"):
            if getattr(self, name) is not None:
                s += f", {name}={getattr(self, name)}"
        if self.interpolation != InterpolationMode.NEAREST:
            s += f", interpolation={self.interpolation.value}"
        if self.fill != 0:
            s += f", fill={self.fill}"
        if self.center is not None:
            s += f", center={self.center}"
        return s + ")"


class Grayscale(Transform):
    """Convert the image to grayscale.

    Args:
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Raises:
        ValueError: if ``num_output_channels`` is neither 1 nor 3.
    """

    def __init__(self, num_output_channels: int = 1) -> None:
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(Transform):
    """Convert the image to grayscale with probability ``p``, keeping its number of channels.

    Args:
        p (float): probability of the conversion. Default ``0.1``.
    """

    def __init__(self, p: float = 0.1) -> None:
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if _random.rand() < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomErasing(Transform):
    """Erase a random rectangle of a tensor / ndarray image with probability ``p`` (after ToTensor, as torchvision).

    Args:
        p (float): probability of erasing. Default ``0.5``.
        scale (sequence of 2 float): range of the erased area as a fraction of the image area. Default ``(0.02, 0.33)``.
        ratio (sequence of 2 float): range of the rectangle's aspect ratio. Default ``(0.3, 3.3)``.
        value (number, sequence or str): erasing value; a number for all channels, one per channel, or ``"random"``
            for per-pixel normal noise. Default ``0``.
        inplace (bool): erase in place. Default ``False``.

    Raises:
        TypeError: if ``value``, ``scale`` or ``ratio`` has a wrong type.
        ValueError: if ``value`` is a string other than ``"random"``, ``scale`` is outside ``[0, 1]``, ``ratio`` is
            not positive or ``p`` outside ``[0, 1]``; at call time, TypeError for a PIL image.
    """

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3), value: float | Sequence[float] | str = 0, inplace: bool = False) -> None:
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if ratio[0] <= 0:
            raise ValueError("Ratio should be positive")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = F.get_dimensions(img)
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * _random.uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_random.uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = _random.normal((img_c, h, w))
            else:
                v = np.asarray(value, np.float32)[:, None, None]
            i = _random.randint(0, img_h - h + 1)
            j = _random.randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if F._is_pil_image(img):
            raise TypeError(f"img should be Tensor Image. Got {type(img)}")
        if _random.rand() < self.p:
            c = F.get_dimensions(img)[0]
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            if value is not None and len(value) not in (1, c):
                raise ValueError(
                    f"If value is a sequence, it should have either a single value or {c} (number of input channels)"
                )
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            if v is img:
                return img
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")


class GaussianBlur(Transform):
    """Blur the image with a Gaussian kernel of random standard deviation.

    Args:
        kernel_size (int or sequence of int): odd, positive kernel size ``(kx, ky)``.
        sigma (float or (min, max)): the standard deviation, or the range it is drawn from uniformly.
            Default ``(0.1, 2.0)``.

    Raises:
        ValueError: if the kernel size is even or not positive, or ``sigma`` is not positive or not (min, max).
    """

    def __init__(self, kernel_size: int | Sequence[int], sigma: float | Sequence[float] = (0.1, 2.0)) -> None:
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return _random.uniform(sigma_min, sigma_max)

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class _RandomOp(Transform):
    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        if _random.rand() < self.p:
            return self._op(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomInvert(_RandomOp):
    """Invert the colors of the image with probability ``p``.

    Args:
        p (float): probability of the inversion. Default ``0.5``.
    """

    def _op(self, img):
        return F.invert(img)


class RandomPosterize(_RandomOp):
    """Posterize the image (keep ``bits`` bits per channel) with probability ``p``.

    Args:
        bits (int): bits to keep, in ``[0, 8]``.
        p (float): probability of the operation. Default ``0.5``.
    """

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p)
        self.bits = bits

    def _op(self, img):
        return F.posterize(img, self.bits)

    def __repr__(self):
        return f"{self.__class__.__name__}(bits={self.bits},p={self.p})"


class RandomSolarize(_RandomOp):
    """Solarize the image (invert pixels ``>= threshold``) with probability ``p``.

    Args:
        threshold (float): pixels at or above it are inverted.
        p (float): probability of the operation. Default ``0.5``.
    """

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.threshold = threshold

    def _op(self, img):
        return F.solarize(img, self.threshold)

    def __repr__(self):
        return f"{self.__class__.__name__}(threshold={self.threshold},p={self.p})"


class RandomAdjustSharpness(_RandomOp):
    """Adjust the sharpness of the image with probability ``p``.

    Args:
        sharpness_factor (float): non-negative; 0 blurs, 1 keeps the image, 2 doubles the sharpness.
        p (float): probability of the operation. Default ``0.5``.
    """

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _op(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)

    def __repr__(self):
        return f"{self.__class__.__name__}(sharpness_factor={self.sharpness_factor},p={self.p})"


class RandomAutocontrast(_RandomOp):
    """Autocontrast the image with probability ``p``.

    Args:
        p (float): probability of the operation. Default ``0.5``.
    """

    def _op(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomOp):
    """Equalize the histogram of the image with probability ``p`` (uint8 images).

    Args:
        p (float): probability of the operation. Default ``0.5``.
    """

    def _op(self, img):
        return F.equalize(img)


class ElasticTransform(Transform):
    """Move every pixel by a random displacement field (elastic deformation).

    Args:
        alpha (float or sequence of 2 float): magnitude of the displacement, per axis. Default ``50.0``.
        sigma (float or sequence of 2 float): smoothness (Gaussian standard deviation) of the field. Default ``5.0``.
        interpolation (InterpolationMode or int): interpolation mode (a Pillow integer constant is accepted).
        Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence): value of pixels outside the transformed image, one for all channels or one per
        channel. Default ``0``.

    Raises:
        TypeError: if ``alpha``, ``sigma`` or ``fill`` has a wrong type.
        ValueError: if a sequence does not have 2 values.
    """

    def __init__(self, alpha: float | Sequence[float] = 50.0, sigma: float | Sequence[float] = 5.0, interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] = 0) -> None:
        self.alpha = self._pair(alpha, "alpha")
        self.sigma = self._pair(sigma, "sigma")
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        if isinstance(fill, (int, float)):
            fill = [float(fill)]
        elif isinstance(fill, (list, tuple)):
            fill = [float(f) for f in fill]
        else:
            raise TypeError(f"fill should be int or float or a list or tuple of them. Got {type(fill)}")
        self.fill = fill

    @staticmethod
    def _pair(v, name):
        if not isinstance(v, (float, Sequence)):
            raise TypeError(f"{name} should be float or a sequence of floats. Got {type(v)}")
        if isinstance(v, Sequence) and len(v) not in (1, 2):
            raise ValueError(f"If {name} is a sequence its length should be 2. Got {len(v)}")
        if isinstance(v, Sequence):
            for e in v:
                if not isinstance(e, float):
                    raise TypeError(f"{name} should be a sequence of floats. Got {type(e)}")
            return [float(v[0]), float(v[-1])]
        return [float(v), float(v)]

    @staticmethod
    def get_params(alpha, sigma, size):
        """Displacement (1, H, W, 2) as a numpy float32 array (normalised grid units)."""
        from . import _functional_numpy as F_np

        def one(a, s, norm):
            d = _random.rand_array((size[0], size[1], 1)) * 2 - 1
            if s > 0.0:
                k = int(8 * s + 1)
                if k % 2 == 0:
                    k += 1
                d = F_np.gaussian_blur(d, [k, k], [s, s])
            return d[..., 0] * np.float32(a) / np.float32(norm)

        dx = one(alpha[0], sigma[0], size[1])
        dy = one(alpha[1], sigma[1], size[0])
        return np.stack([dx, dy], -1)[None].astype(np.float32)

    def forward(self, tensor):
        _, height, width = F.get_dimensions(tensor)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(tensor, displacement, self.interpolation, self.fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(alpha={self.alpha}, sigma={self.sigma}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
