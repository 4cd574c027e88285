"""Conversions between PIL images, numpy arrays and backend tensors; dtype conversion and normalization."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from PIL import Image

from . import _functional_numpy as F_np
from . import _functional_tensor as F_t
from ._functional_dispatch import _hwc, _is_numpy, _is_pil_image, _is_tensor, _kind

if TYPE_CHECKING:
    from flowvision.backend import Tensor


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
    if not isinstance(pic, (Image.Image, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray) and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if isinstance(pic, Image.Image):
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
    npimg: np.ndarray
    if _is_tensor(pic):
        npimg = F_t.to_numpy(pic)
        if npimg.ndim == 3:
            npimg = npimg.transpose(1, 2, 0)
    elif isinstance(pic, np.ndarray):
        npimg = pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if npimg.ndim == 2:
        npimg = npimg[:, :, None]
    if npimg.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {npimg.ndim} dimensions.")
    if npimg.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {npimg.shape[-1]} channels.")
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


def normalize(tensor: Tensor | np.ndarray, mean: Sequence[float], std: Sequence[float],
              inplace: bool = False) -> Tensor | np.ndarray:
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
