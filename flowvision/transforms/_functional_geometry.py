"""Geometric transforms: resize, crop, pad, flips, perspective, rotation, affine and elastic warps."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np
from PIL import Image

from . import _functional_numpy as F_np
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t
from ._functional_dispatch import (InterpolationMode, _apply_array, _check_nonempty, _interpolation_modes_from_int,
                                   _is_numpy, _is_pil_image, _is_tensor, _kind, _pil_from, get_dimensions,
                                   pil_modes_mapping)

if TYPE_CHECKING:
    from flowvision.backend import Tensor


def _compute_resized_output_size(image_size, size, max_size=None, allow_size_none=False):
    h, w = image_size
    if h <= 0 or w <= 0:  # the aspect ratio below divides by the short side
        raise ValueError(f"Expected a non-empty image, got height={h} and width={w}")
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("size cannot be None")
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    elif len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(
                    f"max_size = {max_size} must be strictly greater than the requested "
                    f"size for the smaller edge size = {size}"
                )
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def _check_interpolation(interpolation: InterpolationMode | int) -> InterpolationMode:
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError(
            "Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant"
        )
    return interpolation


def _check_size_arg(size, allow_none=False):
    if size is None and allow_none:
        return
    if isinstance(size, bool) or not isinstance(size, (int, list, tuple)):
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    vals = [size] if isinstance(size, int) else list(size)
    if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
        raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"Size values should be integers, got {size}")
        if v <= 0:
            raise ValueError(f"Size values should be positive, got {size}")


def resize(img: Image.Image | np.ndarray | Tensor, size: int | Sequence[int],
           interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, max_size: int | None = None,
           antialias: bool | None = True) -> Image.Image | np.ndarray | Tensor:
    """Resize an image to ``size``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        size (int or sequence of int): ``(h, w)`` of the output; an int or a 1-element sequence gives the smaller edge,
            the other edge keeps the aspect ratio.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.BILINEAR``.
        max_size (int, optional): upper bound of the longer edge when ``size`` gives the smaller edge. Default ``None``.
        antialias (bool, optional): antialias when downsampling with bilinear/bicubic; always on for PIL input.
            Default ``True``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the resized image, of the same type as ``img``.

    Raises:
        TypeError: if ``size`` or ``interpolation`` has a wrong type.
        ValueError: if ``size`` is not positive or has a wrong length, ``max_size`` is misused, or the image is empty.
    """
    interpolation = _check_interpolation(interpolation)
    _check_size_arg(size)
    if isinstance(size, (list, tuple)) and max_size is not None and len(size) != 1:
        raise ValueError(
            "max_size should only be passed if size specifies the length of the smaller edge, "
            "i.e. size should be an int or a sequence of length 1 in torchscript mode."
        )
    kind = _kind(img)
    _check_nonempty(img)
    _, h, w = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((h, w), list(size), max_size)
    if [h, w] == output_size:
        return img
    if kind == "pil":
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.")
        return F_pil.resize(img, output_size, pil_modes_mapping[interpolation])
    mode = interpolation.value
    aa = bool(antialias) and mode in ("bilinear", "bicubic")
    return _apply_array(F_np.resize, img, output_size, mode, aa)


def _parse_padding(padding):
    if not isinstance(padding, (numbers.Number, tuple, list)) or isinstance(padding, bool):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, numbers.Number):
        if not isinstance(padding, numbers.Integral):
            raise TypeError("Got inappropriate padding arg")
        return [int(padding)] * 4
    padding = list(padding)
    if len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if not all(isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in padding):
        raise TypeError("Got inappropriate padding arg")
    if len(padding) == 1:
        return [int(padding[0])] * 4
    if len(padding) == 2:
        return [int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])]
    return [int(p) for p in padding]


def pad(img: Image.Image | np.ndarray | Tensor, padding: int | Sequence[int], fill: float | Sequence[float] | None = 0,
        padding_mode: str = "constant") -> Image.Image | np.ndarray | Tensor:
    """Pad an image on all sides.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        padding (int or sequence of int): one value for all borders, two for left/right and top/bottom, or four for
            left, top, right and bottom.
        fill (number or sequence, optional): pixel value for ``padding_mode="constant"``. Default ``0``.
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the padded image, of the same type as ``img``.

    Raises:
        TypeError: if ``padding``, ``fill`` or ``padding_mode`` has a wrong type.
        ValueError: if ``padding`` has a wrong length, the mode is unknown or ``fill`` does not match the channels.
    """
    p = _parse_padding(padding)
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    kind = _kind(img)
    if kind == "pil":
        return F_pil.pad(img, p, fill=fill, padding_mode=padding_mode)
    if kind == "tensor" and isinstance(fill, (tuple, list)) and len(fill) > 1 \
            and len(fill) != get_dimensions(img)[0]:
        raise ValueError("fill should have as many values as the image has channels")
    return _apply_array(F_np.pad, img, p, fill=fill, padding_mode=padding_mode)


def crop(img: Image.Image | np.ndarray | Tensor, top: int, left: int, height: int,
         width: int) -> Image.Image | np.ndarray | Tensor:
    """Crop an image; the region may extend past the image, which is then zero-padded.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        top (int): vertical coordinate of the top-left corner.
        left (int): horizontal coordinate of the top-left corner.
        height (int): height of the crop.
        width (int): width of the crop.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the cropped image, of the same type as ``img``.

    Raises:
        TypeError: if a coordinate is not an int.
        ValueError: if ``height`` or ``width`` is not positive, or the image is empty.
    """
    kind = _kind(img)
    for name, v in (("top", top), ("left", left), ("height", height), ("width", width)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"crop {name} should be an int, got {type(v)}")
    if height <= 0 or width <= 0:
        raise ValueError(f"crop height and width should be positive, got height={height}, width={width}")
    _check_nonempty(img)
    if kind == "pil":
        return F_pil.crop(img, int(top), int(left), int(height), int(width))
    return _apply_array(F_np.crop, img, int(top), int(left), int(height), int(width))


def _setup_size(size: Any, error_msg: str = "Please provide only two dimensions (h, w) for size.") -> tuple[int, int]:
    if isinstance(size, numbers.Number):  # typeshed's Number has no __int__; the ints/floats passed here do
        return int(size), int(size)  # type: ignore[call-overload]
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size[0], size[1]


def center_crop(img: Image.Image | np.ndarray | Tensor,
                output_size: int | Sequence[int]) -> Image.Image | np.ndarray | Tensor:
    """Crop the center of an image; an image smaller than ``output_size`` is zero-padded first.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        output_size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the cropped image, of the same type as ``img``.

    Raises:
        ValueError: if the crop size is not positive.
    """
    if isinstance(output_size, (tuple, list)):
        crop_hw = list(output_size) * 2 if len(output_size) == 1 else list(output_size)
    else:
        crop_hw = [int(output_size)] * 2  # type: ignore[arg-type]  # a number: sequences took the branch above
    crop_height, crop_width = crop_hw
    if crop_height <= 0 or crop_width <= 0:
        raise ValueError(f"crop size should be positive, got {output_size}")
    _, image_height, image_width = get_dimensions(img)
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img: Image.Image | np.ndarray | Tensor, top: int, left: int, height: int, width: int,
                 size: int | Sequence[int], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> Image.Image | np.ndarray | Tensor:
    """Crop an image and resize the crop to ``size`` (see :func:`crop` and :func:`resize`).

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        top (int): vertical coordinate of the top-left corner of the crop.
        left (int): horizontal coordinate of the top-left corner of the crop.
        height (int): height of the crop.
        width (int): width of the crop.
        size (int or sequence of int): output size, as in :func:`resize`.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling. Default ``True``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the cropped and resized image, of the same type as ``img``.

    Raises:
        TypeError: if an argument has a wrong type.
        ValueError: if the crop or ``size`` is not positive.
    """
    if not _is_pil_image(img) and (_is_numpy(img) or _is_tensor(img)) and isinstance(interpolation, InterpolationMode) \
            and interpolation.value in ("bilinear", "bicubic", "nearest", "nearest-exact"):
        _, h, w = get_dimensions(img)
        inside = 0 <= top and 0 <= left and top + height <= h and left + width <= w and height > 0 and width > 0
        if inside:
            _check_size_arg(size)
            out_size = _compute_resized_output_size((height, width), [size] if isinstance(size, int) else list(size))
            if out_size != [height, width]:
                # resize straight from the crop view: no intermediate cropped copy
                aa = bool(antialias) and interpolation.value in ("bilinear", "bicubic")
                return _apply_array(_crop_resize, img, top, left, height, width, out_size, interpolation.value, aa)
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def _crop_resize(a, top, left, height, width, out_size, mode, aa):
    return F_np.resize(a[..., top:top + height, left:left + width, :], out_size, mode, aa)


def hflip(img: Image.Image | np.ndarray | Tensor) -> Image.Image | np.ndarray | Tensor:
    """Flip an image horizontally.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the flipped image, of the same type as ``img``.
    """
    if _kind(img) == "pil":
        return F_pil.hflip(img)
    return _apply_array(F_np.hflip, img)


def vflip(img: Image.Image | np.ndarray | Tensor) -> Image.Image | np.ndarray | Tensor:
    """Flip an image vertically.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the flipped image, of the same type as ``img``.
    """
    if _kind(img) == "pil":
        return F_pil.vflip(img)
    return _apply_array(F_np.vflip, img)


def five_crop(img: Image.Image | np.ndarray | Tensor, size: int | Sequence[int]) -> tuple[Any, Any, Any, Any, Any]:
    """Crop the four corners and the center of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.

    Returns:
        tuple: ``(top_left, top_right, bottom_left, bottom_right, center)``, each of the same type as ``img``.

    Raises:
        ValueError: if the crop is larger than the image.
    """
    size = _setup_size(size)
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    center = center_crop(img, [crop_height, crop_width])
    return tl, tr, bl, br, center


def ten_crop(img: Image.Image | np.ndarray | Tensor, size: int | Sequence[int],
             vertical_flip: bool = False) -> tuple[Any, ...]:
    """The five crops of :func:`five_crop` of the image and of its flipped version.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.
        vertical_flip (bool): flip vertically instead of horizontally. Default ``False``.

    Returns:
        tuple: ten images: the five crops of ``img``, then the five crops of the flipped image.

    Raises:
        ValueError: if the crop is larger than the image.
    """
    size = _setup_size(size)
    first = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first + five_crop(img, size)


def _get_perspective_coeffs(startpoints, endpoints):
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(
            f"Please provide exactly four corners, got {len(startpoints)} startpoints and {len(endpoints)} endpoints."
        )
    a = np.zeros((8, 8), np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, np.float64).reshape(8)
    res = np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32)
    return [float(x) for x in res]


def perspective(img: Image.Image | np.ndarray | Tensor, startpoints: Sequence[Sequence[float]],
                endpoints: Sequence[Sequence[float]],
                interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
    """Apply the perspective transform that maps ``startpoints`` to ``endpoints``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        startpoints (sequence of 4 points): ``[x, y]`` corners of the original image (top-left, top-right,
            bottom-right, bottom-left).
        endpoints (sequence of 4 points): where those corners go.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence, optional): value of the pixels outside the transformed image; one value per channel
            or one for all. Default ``None`` (0).

    Returns:
        PIL Image, numpy.ndarray or Tensor: the transformed image, of the same type as ``img``.

    Raises:
        ValueError: if there are not exactly four points each, or ``fill`` does not match the channels.
        TypeError: if ``interpolation`` or ``fill`` has a wrong type.
    """
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _check_interpolation(interpolation)
    if _kind(img) == "pil":
        return F_pil.perspective(img, coeffs, interpolation=pil_modes_mapping[interpolation], fill=fill)
    _check_fill(img, fill)
    return _apply_array(F_np.perspective, img, coeffs, interpolation.value, fill)


def _check_fill(img, fill):
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Argument fill should be either int, float, tuple or list")
    c = get_dimensions(img)[0]
    if isinstance(fill, (tuple, list)) and len(fill) > 1 and len(fill) != c:
        raise ValueError(
            "The number of elements in 'fill' cannot broadcast to match the number of channels of the image "
            f"({len(fill)} != {c})"
        )


def _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    rot = math.radians(angle)
    sx = math.radians(shear[0])
    sy = math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
        m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
        m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
        m[2] += cx
        m[5] += cy
    else:
        m = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        m[2] += m[0] * (-cx) + m[1] * (-cy)
        m[5] += m[3] * (-cx) + m[4] * (-cy)
        m[2] += cx + tx
        m[5] += cy + ty
    return m


def rotate(img: Image.Image | np.ndarray | Tensor, angle: float,
           interpolation: InterpolationMode | int = InterpolationMode.NEAREST, expand: bool = False,
           center: Sequence[float] | None = None,
           fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
    """Rotate an image by ``angle`` degrees counter-clockwise.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        angle (float): rotation in degrees, counter-clockwise.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.NEAREST``.
        expand (bool): enlarge the output to hold the whole rotated image (for rotation about the center).
            Default ``False``.
        center (sequence of float, optional): ``(x, y)`` center of rotation. Default ``None``: the image center.
        fill (number or sequence, optional): value of the pixels outside the transformed image; one value per channel
            or one for all. Default ``None`` (0).

    Returns:
        PIL Image, numpy.ndarray or Tensor: the rotated image, of the same type as ``img``.

    Raises:
        TypeError: if ``angle``, ``center``, ``interpolation`` or ``fill`` has a wrong type.
        ValueError: if ``fill`` does not match the channels.
    """
    interpolation = _check_interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if _kind(img) == "pil":
        return F_pil.rotate(img, angle, pil_modes_mapping[interpolation], expand, center, fill)
    _check_fill(img, fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return _apply_array(F_np.rotate, img, matrix, interpolation.value, expand, fill)


def affine(img: Image.Image | np.ndarray | Tensor, angle: float, translate: Sequence[float], scale: float,
           shear: float | Sequence[float], interpolation: InterpolationMode | int = InterpolationMode.NEAREST,
           fill: float | Sequence[float] | None = None,
           center: Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
    """Apply an affine transform (rotation, translation, scale, shear) about the image center.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        angle (float): rotation in degrees, clockwise as in torchvision's ``affine``.
        translate (sequence of float): horizontal and vertical translation in pixels.
        scale (float): overall scale, positive.
        shear (float or sequence of float): shear angles in degrees; one value shears along x only, two give x and y.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.NEAREST``.
        fill (number or sequence, optional): value of the pixels outside the transformed image; one value per channel
            or one for all. Default ``None`` (0).
        center (sequence of float, optional): ``(x, y)`` center of the transform. Default ``None``: the image center.

    Returns:
        PIL Image, numpy.ndarray or Tensor: the transformed image, of the same type as ``img``.

    Raises:
        TypeError: if an argument has a wrong type.
        ValueError: if ``translate``/``shear`` has a wrong length or ``scale`` is not positive.
    """
    interpolation = _check_interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    angle = float(angle)
    translate = list(translate)
    # a single number or a sequence (checked above)
    shear = [cast(float, shear), 0.0] if isinstance(shear, numbers.Number) else list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _, height, width = get_dimensions(img)
    if _kind(img) == "pil":
        if center is None:
            center = [width * 0.5, height * 0.5]
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return F_pil.affine(img, matrix, pil_modes_mapping[interpolation], fill)
    _check_fill(img, fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, angle, [1.0 * t for t in translate], scale, shear)
    return _apply_array(F_np.affine, img, matrix, interpolation.value, fill)


def elastic_transform(img: Image.Image | np.ndarray | Tensor, displacement: Tensor | np.ndarray,
                      interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
                      fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
    """Move every pixel by a displacement field (torchvision's ``elastic_transform``).

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.
        displacement (Tensor or numpy.ndarray): ``(1, H, W, 2)`` displacement in normalized ``[-1, 1]`` coordinates.
        interpolation (InterpolationMode or int): interpolation mode; a Pillow integer constant is accepted too.
            Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence, optional): value of the pixels outside the transformed image; one value per channel
            or one for all. Default ``None`` (0).

    Returns:
        PIL Image, numpy.ndarray or Tensor: the transformed image, of the same type as ``img``.

    Raises:
        TypeError: if ``displacement`` is not a tensor or ndarray.
        ValueError: if ``displacement`` does not have shape ``(1, H, W, 2)``.
    """
    if isinstance(interpolation, int):
        interpolation = _interpolation_modes_from_int(interpolation)
    if _is_tensor(displacement):
        disp = F_t.to_numpy(displacement)
    elif _is_numpy(displacement):
        disp = displacement
    else:
        raise TypeError("Argument displacement should be a Tensor")
    _kind(img)
    _, h, w = get_dimensions(img)
    if tuple(disp.shape) != (1, h, w, 2):
        raise ValueError(f"Argument displacement shape should be {(1, h, w, 2)}, but given {tuple(disp.shape)}")
    if isinstance(img, Image.Image):
        out = F_np.elastic_transform(np.asarray(img).reshape(h, w, -1), disp, interpolation.value, fill)
        return _pil_from(out, img.mode)
    return _apply_array(F_np.elastic_transform, img, disp, interpolation.value, fill)
