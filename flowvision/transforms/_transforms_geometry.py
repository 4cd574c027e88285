"""v1 geometric transform classes: resize, crops, pad, flips, perspective, rotation, affine, elastic."""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from . import _random
from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int
from ._transform_base import Transform


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

    def __init__(self, size: int | Sequence[int], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                 max_size: int | None = None, antialias: bool | None = True) -> None:
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

    def __init__(self, padding: int | Sequence[int], fill: float | Sequence[float] = 0,
                 padding_mode: str = "constant") -> None:
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

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: float | Sequence[float] = 0,
                 padding_mode: str = "constant") -> None:
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

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5,
                 interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                 fill: float | Sequence[float] | None = 0) -> None:
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

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
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

    def __init__(self, degrees: float | Sequence[float],
                 interpolation: InterpolationMode | int = InterpolationMode.NEAREST, expand: bool = False,
                 center: Sequence[float] | None = None, fill: float | Sequence[float] | None = 0) -> None:
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

    def __init__(self, degrees: float | Sequence[float], translate: Sequence[float] | None = None,
                 scale: Sequence[float] | None = None, shear: float | Sequence[float] | None = None,
                 interpolation: InterpolationMode | int = InterpolationMode.NEAREST,
                 fill: float | Sequence[float] | None = 0, center: Sequence[float] | None = None) -> None:
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

    def __init__(self, alpha: float | Sequence[float] = 50.0, sigma: float | Sequence[float] = 5.0,
                 interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                 fill: float | Sequence[float] = 0) -> None:
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
