"""torchvision.transforms.functional, on PIL images, numpy HWC arrays and backend tensors.

Dispatch is by type: PIL images go to ``_functional_pil`` (torchvision's PIL semantics),
numpy arrays ``(H, W)`` / ``(H, W, C)`` / ``(..., H, W, C)`` and backend tensors
``(..., C, H, W)`` go to ``_functional_numpy`` (torchvision's tensor semantics; tensors are
viewed channels-last without a copy).
"""
from __future__ import annotations

import math
import numbers
import warnings
from enum import Enum
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from PIL import Image

from . import _functional_numpy as F_np
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

if TYPE_CHECKING:
    from flowvision.backend import Tensor

__all__ = [
    "InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
    "pil_to_tensor", "convert_image_dtype", "to_pil_image", "normalize", "resize", "pad", "crop",
    "center_crop", "resized_crop", "hflip", "perspective", "vflip", "five_crop", "ten_crop",
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate",
    "affine", "to_grayscale", "rgb_to_grayscale", "erase", "gaussian_blur", "invert", "posterize",
    "solarize", "adjust_sharpness", "autocontrast", "equalize", "elastic_transform",
]


class InterpolationMode(Enum):
    """Interpolation modes of the geometric transforms (torchvision's ``InterpolationMode``)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i):
    table = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
             4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}
    return table[i]


pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3,
    InterpolationMode.NEAREST_EXACT: 0,
    InterpolationMode.BOX: 4,
    InterpolationMode.HAMMING: 5,
    InterpolationMode.LANCZOS: 1,
}

_is_pil_image = F_pil._is_pil_image


# ----------------------------------------------------------------------------- dispatch helpers
def _is_numpy(img):
    return isinstance(img, np.ndarray)


def _is_tensor(img):
    return F_t.is_tensor(img)


def _kind(img, allow=("pil", "np", "tensor")):
    if _is_pil_image(img):
        kind = "pil"
    elif _is_numpy(img):
        kind = "np"
    elif _is_tensor(img):
        kind = "tensor"
    else:
        raise TypeError(f"img should be PIL Image, numpy ndarray or Tensor. Got {type(img)}")
    if kind not in allow:
        names = {"pil": "PIL Image", "np": "numpy ndarray", "tensor": "Tensor"}
        raise TypeError(f"img should be {' or '.join(names[a] for a in allow)}. Got {type(img)}")
    return kind


def _np_view(arr):
    """numpy image -> (..., H, W, C) view and whether it was 2-D."""
    if arr.ndim < 2:
        raise ValueError(f"numpy image should have at least 2 dimensions (H, W), got shape {arr.shape}")
    if arr.ndim == 2:
        return arr[:, :, None], True
    return arr, False


def _np_out(out, two_d):
    if two_d and out.shape[-1] == 1:
        return np.ascontiguousarray(out[..., 0])
    return F_np.to_interleaved(out)


def _apply_array(kernel, img, *args, **kwargs):
    """Run a (..., H, W, C) numpy kernel on a numpy array or a backend tensor."""
    if _is_numpy(img):
        a, two_d = _np_view(img)
        return _np_out(kernel(a, *args, **kwargs), two_d)
    return F_t.apply(kernel, img, *args, **kwargs)


def _hwc(img):
    """numpy/tensor -> (..., H, W, C) numpy view (no copy)."""
    if _is_numpy(img):
        return _np_view(img)[0]
    return F_t.to_hwc(img)[0]


def _check_nonempty(img):
    _, h, w = get_dimensions(img)
    if h == 0 or w == 0:
        raise ValueError(f"Expected a non-empty image, got height={h} and width={w}")


def _max_value(img):
    return F_np.max_value(_hwc(img).dtype)


# ----------------------------------------------------------------------------- meta
def get_dimensions(img: Image.Image | np.ndarray | Tensor) -> list[int]:
    """Return the dimensions of an image as ``[channels, height, width]``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        list[int]: ``[channels, height, width]``.

    Raises:
        TypeError: if ``img`` is not a PIL Image, ndarray or tensor.
    """
    kind = _kind(img)
    if kind == "pil":
        return F_pil.get_dimensions(img)
    if kind == "tensor":
        return F_t.get_dimensions(img)
    a, _ = _np_view(img)
    return F_np.get_dimensions(a)


def get_image_size(img: Image.Image | np.ndarray | Tensor) -> list[int]:
    """Return the size of an image as ``[width, height]``.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        list[int]: ``[width, height]``.
    """
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img: Image.Image | np.ndarray | Tensor) -> int:
    """Return the number of channels of an image.

    Args:
        img (PIL Image, numpy.ndarray or Tensor): the image; a tensor is ``(..., C, H, W)``, an ndarray
            ``(H, W)`` or ``(..., H, W, C)``.

    Returns:
        int: the number of channels (1 for a 2-D ndarray or a one-band PIL image).
    """
    return get_dimensions(img)[0]


# ----------------------------------------------------------------------------- conversion
def to_tensor(pic: Image.Image | np.ndarray) -> Tensor:
    """Convert a PIL Image or ``(H, W[, C])`` ndarray to a float32 ``(C, H, W)`` tensor.

    uint8 input (and PIL modes backed by it) is scaled to ``[0, 1]`` by dividing by 255; other dtypes keep their values.

    Args:
        pic (PIL Image or numpy.ndarray): image to convert.

    Returns:
        Tensor: the image as a ``(C, H, W)`` tensor.

    Raises:
        TypeError: if ``pic`` is neither a PIL Image nor an ndarray.
        ValueError: if the ndarray is not 2- or 3-dimensional.
    """
    if not (_is_pil_image(pic) or _is_numpy(pic)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if _is_numpy(pic) and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if _is_pil_image(pic):
        mode_np = {"I": np.int32, "I;16": np.int16, "I;16B": np.int16, "F": np.float32}
        if pic.mode in mode_np:
            arr = np.array(pic, mode_np[pic.mode], copy=True)
        else:
            arr = np.asarray(pic)
            if pic.mode == "1":
                arr = arr.astype(np.uint8) * 255
    else:
        arr = pic
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.dtype == np.uint8:
        c = arr.shape[2]
        out = F_np.to_chw_float(arr, [1.0 / 255.0] * c)
    else:
        out = np.ascontiguousarray(arr.transpose(2, 0, 1))
    return F_t.from_numpy(out)


def _to_tensor_normalize(pic, mean, std):
    """Fused ``normalize(to_tensor(pic), mean, std)`` for uint8 PIL / ndarray input (used by Compose)."""
    arr = np.asarray(pic)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    c = arr.shape[2]
    mean = np.broadcast_to(np.asarray(mean, np.float64).reshape(-1), (c,))
    std = np.broadcast_to(np.asarray(std, np.float64).reshape(-1), (c,))
    if (np.asarray(std, np.float32) == 0).any():
        raise ValueError("std evaluated to zero after conversion to float32, leading to division by zero.")
    scale = 1.0 / (255.0 * std)
    bias = -mean / std
    return F_t.from_numpy(F_np.to_chw_float(arr, scale, bias))


def _uint8_tensor_normalize(t, mean, std):
    """Fused ``normalize(convert_image_dtype(t, float32), mean, std)`` for a uint8 (C, H, W) tensor."""
    a = F_t.to_numpy(t)
    c = a.shape[0]
    mean = np.broadcast_to(np.asarray(mean, np.float64).reshape(-1), (c,))
    std = np.broadcast_to(np.asarray(std, np.float64).reshape(-1), (c,))
    if (np.asarray(std, np.float32) == 0).any():
        raise ValueError("std evaluated to zero after conversion to float32, leading to division by zero.")
    return F_t.from_numpy(F_np.to_chw_float(np.moveaxis(a, 0, -1), 1.0 / (255.0 * std), -mean / std))


def pil_to_tensor(pic: Image.Image) -> Tensor:
    """Convert a PIL Image to a ``(C, H, W)`` tensor of the image's own dtype, without scaling.

    Args:
        pic (PIL Image): image to convert.

    Returns:
        Tensor: uint8 for 8-bit modes; 16-bit modes become int32 (the backend has no uint16); mode ``1`` becomes uint8.

    Raises:
        TypeError: if ``pic`` is not a PIL Image.
    """
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if arr.dtype == np.uint16:
        arr = arr.astype(np.int32)  # the backend has no uint16
    if arr.dtype == np.bool_:
        arr = arr.astype(np.uint8)
    arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return F_t.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def convert_image_dtype(image: np.ndarray | Tensor, dtype: Any = None) -> np.ndarray | Tensor:
    """Convert an image to ``dtype`` and rescale its values to that dtype's range.

    Floats are in ``[0, 1]``, integers in ``[0, max]`` of their type (torchvision's semantics).

    Args:
        image (numpy.ndarray or Tensor): image to convert.
        dtype (numpy or backend dtype, optional): target dtype. Default ``None``: float32.

    Returns:
        numpy.ndarray or Tensor: the converted image, of the same type as ``image``.

    Raises:
        TypeError: if ``image`` is not an ndarray or tensor.
    """
    kind = _kind(image, ("np", "tensor"))
    if dtype is None:
        dtype = np.float32 if kind == "np" else F_t.backend().float32
    if kind == "np":
        return F_np.convert_image_dtype(image, F_t.np_dtype(dtype))
    a = F_t.to_numpy(image)
    out = F_np.convert_image_dtype(a, F_t.np_dtype(dtype))
    t = F_t.from_numpy(out)
    if hasattr(dtype, "np") and t.dtype != dtype:
        t = t.to(dtype)
    return t


def to_pil_image(pic: np.ndarray | Tensor, mode: str | None = None) -> Image.Image:
    """Convert a ``(C, H, W)`` tensor or ``(H, W[, C])`` ndarray to a PIL Image.

    Float input is multiplied by 255 and cast to uint8 (unless ``mode`` is ``"F"``).

    Args:
        pic (Tensor or numpy.ndarray): image to convert, with at most 4 channels.
        mode (str, optional): PIL mode of the result. Default ``None``: inferred from channels and dtype
            (``L``, ``LA``, ``RGB``, ``RGBA``, ``I;16``, ``I`` or ``F``).

    Returns:
        PIL Image: the converted image.

    Raises:
        TypeError: if ``pic`` is not a tensor or ndarray, or its dtype has no PIL mode.
        ValueError: if ``pic`` is not 2/3-dimensional, has more than 4 channels, or ``mode`` does not fit it.
    """
    if _is_tensor(pic):
        a = F_t.to_numpy(pic)
        if a.ndim == 3:
            a = a.transpose(1, 2, 0)
        pic = a
    elif not _is_numpy(pic):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = pic[:, :, None]
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    c = npimg.shape[2]
    if c == 1:
        npimg = npimg[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.uint16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {npimg.dtype}. Should be {expected}")
        mode = expected
    elif c == 2:
        if mode is not None and mode not in ["LA"]:
            raise ValueError("Only modes ['LA'] are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif c == 4:
        if mode is not None and mode not in ["RGBA", "CMYK", "RGBX"]:
            raise ValueError("Only modes ['RGBA', 'CMYK', 'RGBX'] are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        if mode is not None and mode not in ["RGB", "YCbCr", "HSV"]:
            raise ValueError("Only modes ['RGB', 'YCbCr', 'HSV'] are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    npimg = np.ascontiguousarray(npimg)
    if mode in ("I;16",) and npimg.dtype != np.uint16:
        npimg = npimg.astype(np.uint16)
    if mode in ("LA", "RGBA", "CMYK", "RGBX", "RGB", "YCbCr", "HSV", "L") and npimg.dtype != np.uint8:
        npimg = npimg.astype(np.uint8)
    if mode in ("LA", "CMYK", "RGBX", "YCbCr", "HSV"):
        return Image.frombuffer(mode, (npimg.shape[1], npimg.shape[0]), npimg.tobytes(), "raw", mode, 0, 1)
    return Image.fromarray(npimg, mode=mode) if mode in ("I;16",) else Image.fromarray(npimg)


def normalize(tensor: Tensor | np.ndarray, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor | np.ndarray:
    """Normalize a float image with a per-channel mean and standard deviation: ``(x - mean) / std``.

    Args:
        tensor (Tensor or numpy.ndarray): float image, a ``(..., C, H, W)`` tensor or ``(H, W, C)`` ndarray.
        mean (sequence of float): per-channel means (one value or one per channel).
        std (sequence of float): per-channel standard deviations (one value or one per channel).
        inplace (bool): write the result into ``tensor``. Default ``False``.

    Returns:
        Tensor or numpy.ndarray: the normalized image.

    Raises:
        TypeError: if the image is not a float image.
        ValueError: if a tensor has fewer than 3 dimensions or ``mean``/``std`` has a wrong length.
    """
    kind = _kind(tensor, ("np", "tensor"))
    a = _hwc(tensor)
    if a.dtype.kind != "f":
        raise TypeError(f"Input tensor should be a float tensor. Got {a.dtype}.")
    nd = a.ndim if kind == "np" and tensor.ndim > 2 else (len(tuple(tensor.shape)))
    if nd < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tuple(tensor.shape)}"
        )
    c = a.shape[-1]
    m = np.asarray(mean, dtype=np.float64).reshape(-1)
    s = np.asarray(std, dtype=np.float64).reshape(-1)
    for name, v in (("mean", m), ("std", s)):
        if v.size not in (1, c):
            raise ValueError(f"{name} should have 1 or {c} (number of channels) values, got {v.size}")
    out = F_np.normalize(a, m, s, inplace=inplace)
    if kind == "np":
        return out
    if inplace:
        return tensor
    return F_t.from_hwc(out, like=tensor)


# ----------------------------------------------------------------------------- geometry
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


def _check_interpolation(interpolation):
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


def resize(img: Image.Image | np.ndarray | Tensor, size: int | Sequence[int], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, max_size: int | None = None, antialias: bool | None = True) -> Image.Image | np.ndarray | Tensor:
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


def pad(img: Image.Image | np.ndarray | Tensor, padding: int | Sequence[int], fill: float | Sequence[float] | None = 0, padding_mode: str = "constant") -> Image.Image | np.ndarray | Tensor:
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


def crop(img: Image.Image | np.ndarray | Tensor, top: int, left: int, height: int, width: int) -> Image.Image | np.ndarray | Tensor:
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


def _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size[0], size[1]


def center_crop(img: Image.Image | np.ndarray | Tensor, output_size: int | Sequence[int]) -> Image.Image | np.ndarray | Tensor:
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
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    crop_height, crop_width = output_size
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


def resized_crop(img: Image.Image | np.ndarray | Tensor, top: int, left: int, height: int, width: int, size: int | Sequence[int], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> Image.Image | np.ndarray | Tensor:
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


def ten_crop(img: Image.Image | np.ndarray | Tensor, size: int | Sequence[int], vertical_flip: bool = False) -> tuple[Any, ...]:
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


def perspective(img: Image.Image | np.ndarray | Tensor, startpoints: Sequence[Sequence[float]], endpoints: Sequence[Sequence[float]], interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
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


def rotate(img: Image.Image | np.ndarray | Tensor, angle: float, interpolation: InterpolationMode | int = InterpolationMode.NEAREST, expand: bool = False, center: Sequence[float] | None = None, fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
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


def affine(img: Image.Image | np.ndarray | Tensor, angle: float, translate: Sequence[float], scale: float, shear: float | Sequence[float], interpolation: InterpolationMode | int = InterpolationMode.NEAREST, fill: float | Sequence[float] | None = None, center: Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
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
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
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


def elastic_transform(img: Image.Image | np.ndarray | Tensor, displacement: Tensor | np.ndarray, interpolation: InterpolationMode | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
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
    kind = _kind(img)
    _, h, w = get_dimensions(img)
    if tuple(disp.shape) != (1, h, w, 2):
        raise ValueError(f"Argument displacement shape should be {(1, h, w, 2)}, but given {tuple(disp.shape)}")
    if kind == "pil":
        out = F_np.elastic_transform(np.asarray(img).reshape(h, w, -1), disp, interpolation.value, fill)
        return _pil_from(out, img.mode)
    return _apply_array(F_np.elastic_transform, img, disp, interpolation.value, fill)


def _pil_from(arr, mode):
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    arr = np.ascontiguousarray(arr)
    if mode in ("RGB", "RGBA", "L"):
        return Image.fromarray(arr)
    return Image.fromarray(arr).convert(mode) if mode != "LA" else Image.fromarray(arr, mode="LA")


# ----------------------------------------------------------------------------- colour
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


def adjust_brightness(img: Image.Image | np.ndarray | Tensor, brightness_factor: float) -> Image.Image | np.ndarray | Tensor:
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


def adjust_contrast(img: Image.Image | np.ndarray | Tensor, contrast_factor: float) -> Image.Image | np.ndarray | Tensor:
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


def adjust_saturation(img: Image.Image | np.ndarray | Tensor, saturation_factor: float) -> Image.Image | np.ndarray | Tensor:
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


def adjust_gamma(img: Image.Image | np.ndarray | Tensor, gamma: float, gain: float = 1) -> Image.Image | np.ndarray | Tensor:
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


def adjust_sharpness(img: Image.Image | np.ndarray | Tensor, sharpness_factor: float) -> Image.Image | np.ndarray | Tensor:
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


def rgb_to_grayscale(img: Image.Image | np.ndarray | Tensor, num_output_channels: int = 1) -> Image.Image | np.ndarray | Tensor:
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
    kind = _kind(img)
    if kind == "pil":
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


def gaussian_blur(img: Image.Image | np.ndarray | Tensor, kernel_size: int | Sequence[int], sigma: float | Sequence[float] | None = None) -> Image.Image | np.ndarray | Tensor:
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
    kind = _kind(img)
    _check_nonempty(img)
    if kind == "pil":
        arr = np.asarray(img)
        out = F_np.gaussian_blur(arr.reshape(arr.shape[0], arr.shape[1], -1), list(kernel_size), list(sigma))
        return _pil_from(out, img.mode)
    return _apply_array(F_np.gaussian_blur, img, list(kernel_size), list(sigma))


def erase(img: Tensor | np.ndarray, i: int, j: int, h: int, w: int, v: Any, inplace: bool = False) -> Tensor | np.ndarray:
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
