"""v2 colour transform classes (images and videos; masks and boxes pass through)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image as _PILImage

from .. import _random
from .. import transforms as T1
from . import functional as F
from . import tv_tensors
from ._transform import Transform, _RandomApplyTransform, query_chw
from .tv_tensors import Video


class _ColorTransform(Transform):
    _transformed_types = (tv_tensors.Image, Video, _PILImage.Image, np.ndarray, "tensor")


class ColorJitter(_ColorTransform):
    """Randomly change brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness (float or (min, max), optional): factor range ``[max(0, 1 - b), 1 + b]`` or the given range.
            Default ``None`` (unchanged).
        contrast (float or (min, max), optional): as ``brightness``. Default ``None``.
        saturation (float or (min, max), optional): as ``brightness``. Default ``None``.
        hue (float or (min, max), optional): shift range ``[-h, h]`` or the given range, within ``[-0.5, 0.5]``.
            Default ``None``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.ColorJitter`.
    """

    def __init__(self, brightness: float | Sequence[float] | None = None,
                 contrast: float | Sequence[float] | None = None, saturation: float | Sequence[float] | None = None,
                 hue: float | Sequence[float] | None = None) -> None:
        v1 = T1.ColorJitter(brightness or 0, contrast or 0, saturation or 0, hue or 0)
        self.brightness, self.contrast, self.saturation, self.hue = v1.brightness, v1.contrast, v1.saturation, v1.hue

    def make_params(self, flat_inputs):
        fn_idx, b, c, s, h = T1.ColorJitter.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return dict(fn_idx=fn_idx, brightness_factor=b, contrast_factor=c, saturation_factor=s, hue_factor=h)

    def transform(self, inpt, params):
        for i in params["fn_idx"]:
            if i == 0 and params["brightness_factor"] is not None:
                inpt = F.adjust_brightness(inpt, params["brightness_factor"])
            elif i == 1 and params["contrast_factor"] is not None:
                inpt = F.adjust_contrast(inpt, params["contrast_factor"])
            elif i == 2 and params["saturation_factor"] is not None:
                inpt = F.adjust_saturation(inpt, params["saturation_factor"])
            elif i == 3 and params["hue_factor"] is not None:
                inpt = F.adjust_hue(inpt, params["hue_factor"])
        return inpt


class RandomPhotometricDistort(_ColorTransform):
    """SSD's photometric distortion: each colour change and a channel permutation is applied with probability ``p``.

    Args:
        brightness (tuple of 2 float): range of the brightness factor. Default ``(0.875, 1.125)``.
        contrast (tuple of 2 float): range of the contrast factor (applied before or after the others at random).
            Default ``(0.5, 1.5)``.
        saturation (tuple of 2 float): range of the saturation factor. Default ``(0.5, 1.5)``.
        hue (tuple of 2 float): range of the hue shift. Default ``(-0.05, 0.05)``.
        p (float): probability of each distortion. Default ``0.5``.
    """

    def __init__(self, brightness: Sequence[float] = (0.875, 1.125), contrast: Sequence[float] = (0.5, 1.5),
                 saturation: Sequence[float] = (0.5, 1.5), hue: Sequence[float] = (-0.05, 0.05),
                 p: float = 0.5) -> None:
        self.brightness, self.contrast, self.saturation, self.hue, self.p = brightness, contrast, saturation, hue, p

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        params = {}
        for key, rng in (("brightness_factor", self.brightness), ("contrast_factor", self.contrast),
                         ("saturation_factor", self.saturation), ("hue_factor", self.hue)):
            params[key] = _random.uniform(rng[0], rng[1]) if _random.rand() < self.p else None
        params["contrast_before"] = _random.rand() < 0.5
        params["channel_permutation"] = _random.randperm(c) if _random.rand() < self.p else None
        return params

    def transform(self, inpt, params):
        if params["brightness_factor"] is not None:
            inpt = F.adjust_brightness(inpt, params["brightness_factor"])
        if params["contrast_factor"] is not None and params["contrast_before"]:
            inpt = F.adjust_contrast(inpt, params["contrast_factor"])
        if params["saturation_factor"] is not None:
            inpt = F.adjust_saturation(inpt, params["saturation_factor"])
        if params["hue_factor"] is not None:
            inpt = F.adjust_hue(inpt, params["hue_factor"])
        if params["contrast_factor"] is not None and not params["contrast_before"]:
            inpt = F.adjust_contrast(inpt, params["contrast_factor"])
        if params["channel_permutation"] is not None:
            inpt = F.permute_channels(inpt, params["channel_permutation"])
        return inpt


class RandomChannelPermutation(_ColorTransform):
    """Permute the channels of images and videos at random.

    """

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(permutation=_random.randperm(c))

    def transform(self, inpt, params):
        return F.permute_channels(inpt, params["permutation"])


class Grayscale(_ColorTransform):
    """Convert images and videos to grayscale.

    Args:
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Raises:
        ValueError: if ``num_output_channels`` is neither 1 nor 3.
    """

    def __init__(self, num_output_channels: int = 1) -> None:
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    """Convert images to grayscale with probability ``p``, keeping their number of channels.

    Args:
        p (float): probability of the conversion. Default ``0.1``.
    """

    _transformed_types = _ColorTransform._transformed_types

    def __init__(self, p: float = 0.1) -> None:
        super().__init__(p=p)

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(num_input_channels=c)

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=params["num_input_channels"])


class GaussianBlur(_ColorTransform):
    """Blur images and videos with a Gaussian kernel of random standard deviation.

    Args:
        kernel_size (int or sequence of int): odd, positive kernel size.
        sigma (float or (min, max)): the standard deviation or its range. Default ``(0.1, 2.0)``.

    Raises:
        ValueError: as :class:`flowvision.transforms.GaussianBlur`.
    """

    def __init__(self, kernel_size: int | Sequence[int], sigma: float | Sequence[float] = (0.1, 2.0)) -> None:
        v1 = T1.GaussianBlur(kernel_size, sigma)
        self.kernel_size, self.sigma = v1.kernel_size, v1.sigma

    def make_params(self, flat_inputs):
        s = _random.uniform(self.sigma[0], self.sigma[1])
        return dict(sigma=[s, s])

    def transform(self, inpt, params):
        return F.gaussian_blur(inpt, list(self.kernel_size), params["sigma"])


class GaussianNoise(_ColorTransform):
    """Add Gaussian noise to float images and videos.

    Args:
        mean (float): mean of the noise. Default ``0.0``.
        sigma (float): standard deviation of the noise, non-negative. Default ``0.1``.
        clip (bool): clamp the result to ``[0, 1]``. Default ``True``.

    Raises:
        ValueError: if ``sigma`` is negative.
    """

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True) -> None:
        if sigma < 0:
            raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def transform(self, inpt, params):
        return F.gaussian_noise(inpt, mean=self.mean, sigma=self.sigma, clip=self.clip)


class _RandomColorOp(_RandomApplyTransform):
    _transformed_types = _ColorTransform._transformed_types


class RandomInvert(_RandomColorOp):
    """Invert the colors of images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.invert(inpt)


class RandomPosterize(_RandomColorOp):
    """Posterize uint8 images (keep ``bits`` bits per channel) with probability ``p``.

    Args:
        bits (int): bits to keep, in ``[0, 8]``.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt, params):
        return F.posterize(inpt, bits=self.bits)


class RandomSolarize(_RandomColorOp):
    """Solarize images (invert pixels ``>= threshold``) with probability ``p``.

    Args:
        threshold (float): pixels at or above it are inverted.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt, params):
        return F.solarize(inpt, threshold=self.threshold)


class RandomAutocontrast(_RandomColorOp):
    """Autocontrast images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.autocontrast(inpt)


class RandomEqualize(_RandomColorOp):
    """Equalize the histogram of uint8 images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.equalize(inpt)


class RandomAdjustSharpness(_RandomColorOp):
    """Adjust the sharpness of images and videos with probability ``p``.

    Args:
        sharpness_factor (float): non-negative; 0 blurs, 1 keeps the image, 2 doubles the sharpness.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt, params):
        return F.adjust_sharpness(inpt, sharpness_factor=self.sharpness_factor)


class JPEG(_ColorTransform):
    """JPEG-compress uint8 images at a quality drawn from a range (JPEG-artefact augmentation).

    Args:
        quality (int or (min, max)): JPEG quality in ``[1, 100]``, or the range it is drawn from (inclusive).

    Raises:
        ValueError: if ``quality`` is out of ``[1, 100]`` or not an int / (min, max) pair.
    """

    def __init__(self, quality: int | Sequence[int]) -> None:
        if isinstance(quality, int):
            quality = [quality, quality]
        if len(quality) != 2 or not (1 <= quality[0] <= quality[1] <= 100):
            raise ValueError(f"quality must be an int or a (min, max) pair in [1, 100], got {quality}")
        self.quality = quality

    def make_params(self, flat_inputs):
        return dict(quality=_random.randint(self.quality[0], self.quality[1] + 1))

    def transform(self, inpt, params):
        return F.jpeg(inpt, quality=params["quality"])


class LinearTransformation(_ColorTransform):
    """Flatten tensor images, subtract ``mean_vector`` and multiply by ``transformation_matrix`` (e.g. whitening).

    Args:
        transformation_matrix (Tensor or array): ``(D, D)`` matrix with ``D = C * H * W``.
        mean_vector (Tensor or array): ``(D,)`` vector.

    Raises:
        ValueError: as :class:`flowvision.transforms.LinearTransformation`; TypeError at call time for PIL images.
    """

    def __init__(self, transformation_matrix: Any, mean_vector: Any) -> None:
        self._v1 = T1.LinearTransformation(transformation_matrix, mean_vector)

    def transform(self, inpt, params):
        if isinstance(inpt, _PILImage.Image):
            raise TypeError("LinearTransformation does not work on PIL Images")
        return F._rewrap(self._v1(F._plain(inpt)), inpt)
