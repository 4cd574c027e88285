"""Colour transforms, gaussian blur and erasing."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from PIL import Image

from . import _functional_numpy as F_np
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t
from ._functional_dispatch import (_apply_array, _check_nonempty, _hwc, _is_numpy, _is_pil_image, _is_tensor,
                                   _kind, _max_value, _np_out, _np_view, _pil_from, get_dimensions)

if TYPE_CHECKING:
    from flowvision.backend import Tensor


def _color(name, img, *args):
    kind = _kind(img)
    _check_nonempty(img)
    if kind == "pil":
        return getattr(F_pil, name)(img, *args)
    _check_rgb(img)  # torchvision's tensor colour ops take 1 or 3 channels
    return _apply_array(getattr(F_np, name), img, *args)


def _check_rgb(img):
    c = get_dimensions(img)[0]
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")


def _adjust_by_factor(what, img, factor):
    """adjust_brightness/contrast/saturation: a non-negative blend factor, RGB or gray tensors."""
    if factor < 0:
        raise ValueError(f"{what}_factor ({factor}) is not non-negative.")
    if _kind(img) != "pil":
        _check_rgb(img)
    return _color("adjust_" + what, img, factor)


def adjust_brightness(img: Image.Image | np.ndarray | Tensor,
                      brightness_factor: float) -> Image.Image | np.ndarray | Tensor:
    """Adjust the brightness of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        brightness_factor (float): non-negative; 0 gives a black image, 1 the original, 2 twice the
            brightness.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the adjusted image, of the same type as ``img``.

    Raises:
        ValueError: if ``brightness_factor`` is out of range.
        TypeError: if a tensor/ndarray has neither 1 nor 3 channels.
    """
    return _adjust_by_factor("brightness", img, brightness_factor)


def adjust_contrast(img: Image.Image | np.ndarray | Tensor,
                    contrast_factor: float) -> Image.Image | np.ndarray | Tensor:
    """Adjust the contrast of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        contrast_factor (float): non-negative; 0 gives a solid gray image, 1 the original, 2 twice the
            contrast.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the adjusted image, of the same type as ``img``.

    Raises:
        ValueError: if ``contrast_factor`` is out of range.
        TypeError: if a tensor/ndarray has neither 1 nor 3 channels.
    """
    return _adjust_by_factor("contrast", img, contrast_factor)


def adjust_saturation(img: Image.Image | np.ndarray | Tensor,
                      saturation_factor: float) -> Image.Image | np.ndarray | Tensor:
    """Adjust the color saturation of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        saturation_factor (float): non-negative; 0 gives a grayscale image, 1 the original, 2 twice the
            saturation.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the adjusted image, of the same type as ``img``.

    Raises:
        ValueError: if ``saturation_factor`` is out of range.
        TypeError: if a tensor/ndarray has neither 1 nor 3 channels.
    """
    return _adjust_by_factor("saturation", img, saturation_factor)


def adjust_hue(img: Image.Image | np.ndarray | Tensor, hue_factor: float) -> Image.Image | np.ndarray | Tensor:
    """Shift the hue of an image (in HSV space) by ``hue_factor``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        hue_factor (float): in ``[-0.5, 0.5]``: the shift as a fraction of the hue circle; 0 keeps
            the image.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the adjusted image, of the same type as ``img``.

    Raises:
        ValueError: if ``hue_factor`` is out of range.
        TypeError: if a tensor/ndarray has neither 1 nor 3 channels.
    """
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if _kind(img) != "pil":
        _check_rgb(img)
    return _color("adjust_hue", img, hue_factor)


def adjust_gamma(img: Image.Image | np.ndarray | Tensor, gamma: float,
                 gain: float = 1) -> Image.Image | np.ndarray | Tensor:
    """Gamma-correct an image: ``out = 255 * gain * (in / 255) ** gamma`` (floats: ``gain * in ** gamma``).

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        gamma (float): non-negative exponent; below 1 brightens dark regions, above 1 darkens them.
        gain (float): constant multiplier. Default ``1``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the corrected image, of the same type as ``img``.

    Raises:
        ValueError: if ``gamma`` is negative.
    """
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    return _color("adjust_gamma", img, gamma, gain)


def adjust_sharpness(img: Image.Image | np.ndarray | Tensor,
                     sharpness_factor: float) -> Image.Image | np.ndarray | Tensor:
    """Adjust the sharpness of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        sharpness_factor (float): non-negative; 0 gives a blurred image, 1 the original, 2 twice the
            sharpness.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the adjusted image, of the same type as ``img``.

    Raises:
        ValueError: if ``sharpness_factor`` is out of range.
        TypeError: if a tensor/ndarray has neither 1 nor 3 channels.
    """
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    if _kind(img) != "pil":
        _check_rgb(img)
    return _color("adjust_sharpness", img, sharpness_factor)


def to_grayscale(img: Image.Image, num_output_channels: int = 1) -> Image.Image:
    """Convert a PIL Image to grayscale.

    Args:
        img (PIL Image): image to convert.
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Returns:
        PIL Image: the grayscale image.

    Raises:
        TypeError: if ``img`` is not a PIL Image.
    """
    if not _is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return F_pil.to_grayscale(img, num_output_channels)


def rgb_to_grayscale(img: Image.Image | np.ndarray | Tensor,
                     num_output_channels: int = 1) -> Image.Image | np.ndarray | Tensor:
    """Convert an RGB image to grayscale (ITU-R 601-2 luma: ``0.2989 R + 0.587 G + 0.114 B``).

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the grayscale image, of the same type as ``img``.

    Raises:
        ValueError: if ``num_output_channels`` is neither 1 nor 3.
        TypeError: if a tensor has fewer than 3 dimensions or neither 1 nor 3 channels.
    """
    _kind(img)
    if isinstance(img, Image.Image):
        return F_pil.to_grayscale(img, num_output_channels)
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if len(tuple(img.shape)) < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {len(img.shape)}")
    _check_rgb(img)
    return _apply_array(F_np.rgb_to_grayscale, img, num_output_channels)


def _check_ndim3(img):
    if _kind(img) != "pil" and len(tuple(img.shape)) < 3 and not _is_numpy(img):
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {len(img.shape)}")


def invert(img: Image.Image | np.ndarray | Tensor) -> Image.Image | np.ndarray | Tensor:
    """Invert the colors of an image (``max - x``).

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the inverted image, of the same type as ``img``.

    Raises:
        TypeError: if a tensor has fewer than 3 dimensions or neither 1 nor 3 channels.
    """
    _check_ndim3(img)
    return _color("invert", img)


def posterize(img: Image.Image | np.ndarray | Tensor, bits: int) -> Image.Image | np.ndarray | Tensor:
    """Keep only the ``bits`` most significant bits of each channel.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``. Tensors and ndarrays must be uint8.
        bits (int): bits to keep, in ``[0, 8]``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the posterized image, of the same type as ``img``.

    Raises:
        ValueError: if ``bits`` is out of range.
        TypeError: if a tensor/ndarray is not uint8 or a tensor has fewer than 3 dimensions.
    """
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    _check_ndim3(img)
    if _kind(img) != "pil" and _hwc(img).dtype != np.uint8:
        raise TypeError(f"Only uint8 images are supported, but found {_hwc(img).dtype}")
    return _color("posterize", img, int(bits))


def solarize(img: Image.Image | np.ndarray | Tensor, threshold: float) -> Image.Image | np.ndarray | Tensor:
    """Invert every pixel value at or above ``threshold``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        threshold (float): pixels ``>= threshold`` are inverted.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the solarized image, of the same type as ``img``.

    Raises:
        TypeError: if ``threshold`` is above the dtype's maximum or a tensor has fewer than 3 dimensions.
    """
    _check_ndim3(img)
    if _kind(img) != "pil" and threshold > _max_value(img):
        raise TypeError("Threshold should be less than bound of img.")
    return _color("solarize", img, threshold)


def autocontrast(img: Image.Image | np.ndarray | Tensor) -> Image.Image | np.ndarray | Tensor:
    """Stretch each channel so that its darkest pixel becomes black and its lightest white.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the image, of the same type as ``img``.

    Raises:
        TypeError: if a tensor has fewer than 3 dimensions.
    """
    _check_ndim3(img)
    return _color("autocontrast", img)


def equalize(img: Image.Image | np.ndarray | Tensor) -> Image.Image | np.ndarray | Tensor:
    """Equalize the histogram of each channel.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``. Tensors and ndarrays must be uint8.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the equalized image, of the same type as ``img``.

    Raises:
        TypeError: if a tensor/ndarray is not uint8 or a tensor has fewer than 3 dimensions.
    """
    _check_ndim3(img)
    if _kind(img) != "pil" and _hwc(img).dtype != np.uint8:
        raise TypeError(f"Only uint8 images are supported, but found {_hwc(img).dtype}")
    return _color("equalize", img)


def gaussian_blur(img: Image.Image | np.ndarray | Tensor, kernel_size: int | Sequence[int],
                  sigma: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
    """Blur an image with a Gaussian kernel.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        kernel_size (int or sequence of int): odd, positive kernel size ``(kx, ky)``; an int gives a square kernel.
        sigma (float or sequence of float, optional): standard deviation ``(sx, sy)``. Default ``None``:
            ``0.3 * ((k - 1) * 0.5 - 1) + 0.8`` per dimension.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the blurred image, of the same type as ``img``.

    Raises:
        TypeError: if ``kernel_size`` or ``sigma`` has a wrong type.
        ValueError: if ``kernel_size`` is even or not positive, ``sigma`` is not positive, or a length is wrong.
    """
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for k in kernel_size:
        if k % 2 == 0 or k < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    _kind(img)
    _check_nonempty(img)
    if isinstance(img, Image.Image):
        arr = np.asarray(img)
        out = F_np.gaussian_blur(arr.reshape(arr.shape[0], arr.shape[1], -1), list(kernel_size), list(sigma))
        return _pil_from(out, img.mode)
    return _apply_array(F_np.gaussian_blur, img, list(kernel_size), list(sigma))


def erase(img: Tensor | np.ndarray, i: int, j: int, h: int, w: int, v: Any,
          inplace: bool = False) -> Tensor | np.ndarray:
    """Overwrite a rectangle of an image with ``v``.

    Args:
        img (Tensor or numpy.ndarray): a ``(..., C, H, W)`` tensor or ``(H, W[, C])`` ndarray.
        i (int): top row of the rectangle.
        j (int): left column of the rectangle.
        h (int): height of the rectangle.
        w (int): width of the rectangle.
        v (Tensor, ndarray or number): value(s) written, broadcastable to ``(C, h, w)``.
        inplace (bool): modify ``img`` in place. Default ``False``.

    Returns:
        Tensor or numpy.ndarray: the erased image.

    Raises:
        TypeError: if ``img`` is not a tensor or ndarray.
    """
    kind = _kind(img, ("np", "tensor"))
    if _is_tensor(v):
        v = F_t.to_numpy(v)
    v = np.asarray(v)
    if kind == "np":
        a, two_d = _np_view(img)
        if v.ndim == 3:  # value given as (C, h, w) like torchvision
            v = np.moveaxis(v, 0, -1)
        out = F_np.erase(a, i, j, h, w, v, inplace=inplace)
        return img if inplace else _np_out(out, two_d)
    a, two_d = F_t.to_hwc(img)
    if v.ndim >= 3:
        v = np.moveaxis(v, -3, -1)
    out = F_np.erase(a, i, j, h, w, v, inplace=inplace)
    return img if inplace else F_t.from_hwc(out, two_d, like=img)
