"""v1 colour transform classes: jitter, grayscale, blur and the random single-op colour transforms."""
from __future__ import annotations

import numbers
from collections.abc import Sequence

from . import _random
from . import _functional_pil as F_pil
from . import functional as F
from ._transform_base import Transform
from ._transforms_geometry import _setup_size


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

    def __init__(self, brightness: float | Sequence[float] = 0, contrast: float | Sequence[float] = 0,
                 saturation: float | Sequence[float] = 0, hue: float | Sequence[float] = 0) -> None:
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
    if h is None and F_pil._is_pil_image(img):
        # brightness / contrast / saturation only: the whole sequence in one call on the image's memory
        named = {0: ("brightness", b), 1: ("contrast", c), 2: ("saturation", s)}
        ops = [named[int(i)] for i in fn_idx if int(i) in named and named[int(i)][1] is not None]
        return F_pil.enhance_sequence(img, ops)
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
        if isinstance(sigma, Sequence):
            if len(sigma) != 2:
                raise ValueError("sigma should be a single number or a list/tuple with length 2.")
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        elif isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
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
