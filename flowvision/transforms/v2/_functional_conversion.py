"""v2 dtype and type conversions, and the size / channel / frame queries."""
from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import _functional_numpy as F_np
from .. import _functional_tensor as F_t
from . import tv_tensors
from .tv_tensors import BoundingBoxes, Mask, Video
from ._functional_dispatch import _custom_kernel, _image_op, _plain, _rewrap


def to_dtype(inpt: Any, dtype: Any = None, scale: bool = False) -> Any:
    """Convert the input to ``dtype``; with ``scale=True`` image values are rescaled to the new dtype's range.

    Masks and bounding boxes are cast without scaling.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        dtype (backend or numpy dtype, optional): target dtype. Default ``None``: float32.
        scale (bool): rescale image values (e.g. uint8 ``[0, 255]`` to float ``[0, 1]``). Default ``False``.

    Returns:
        the converted input, of the same type as ``inpt``.

    Raises:
        TypeError: for PIL images (convert with :func:`to_image` first).
    """
    k = _custom_kernel("to_dtype", inpt)
    if k is not None:
        return k(inpt, dtype, scale)
    fb = F_t.backend()
    dtype = fb.float32 if dtype is None else dtype
    np_dt = F_t.np_dtype(dtype)
    if isinstance(inpt, _PILImage.Image):
        raise TypeError("to_dtype does not support PIL images; use ToImage first")
    arr = np.asarray(inpt) if isinstance(inpt, np.ndarray) else F_t.to_numpy(_plain(inpt))
    if arr.dtype == np_dt:
        return inpt
    if not scale or isinstance(inpt, (BoundingBoxes, Mask)):
        out = arr.astype(np_dt)
    else:
        if arr.dtype.kind == "f" and np_dt.kind == "f":
            out = arr.astype(np_dt)
        elif arr.dtype.kind != "f" and np_dt.kind == "f":
            out = arr.astype(np_dt) * np_dt.type(1.0 / F_np.max_value(arr.dtype))
        else:
            out = F_np.convert_image_dtype(arr, np_dt)
    if isinstance(inpt, np.ndarray):
        return out
    return _rewrap(F_t.from_numpy(out), inpt)


def convert_image_dtype(image: Any, dtype: Any = None) -> Any:
    """Convert an image to ``dtype``, rescaling its values (see :func:`flowvision.transforms.functional.convert_image_dtype`).

    Args:
        image (Image, Tensor or numpy.ndarray): the image.
        dtype (backend or numpy dtype, optional): target dtype. Default ``None``: float32.

    Returns:
        the converted image, of the type of ``image``.
    """
    return _image_op(F1.convert_image_dtype, image, dtype)


def to_image(inpt: Any) -> tv_tensors.Image:
    """Convert a PIL image, ``(H, W[, C])`` ndarray or tensor to an :class:`Image` (``(C, H, W)``).

    Args:
        inpt (PIL Image, numpy.ndarray or Tensor): the image; PIL images keep their dtype (uint8 for 8-bit modes).

    Returns:
        Image: the image as a tv_tensor.

    Raises:
        TypeError: for any other input type.
    """
    if isinstance(inpt, np.ndarray):
        arr = inpt[:, :, None] if inpt.ndim == 2 else inpt
        return tv_tensors.Image._from_array(np.moveaxis(arr, -1, -3))
    if isinstance(inpt, _PILImage.Image):
        return tv_tensors.Image(inpt)
    if F_t.is_tensor(inpt):
        return tv_tensors.Image(_plain(inpt))
    raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but got {type(inpt)} instead.")


def to_pil_image(pic: Any, mode: str | None = None) -> _PILImage.Image:
    """Convert a ``(C, H, W)`` tensor/Image or ``(H, W[, C])`` ndarray to a PIL Image.

    Args:
        pic (Image, Tensor or numpy.ndarray): the image.
        mode (str, optional): PIL mode of the result. Default ``None``: inferred.

    Returns:
        PIL Image: the converted image.

    Raises:
        TypeError, ValueError: as :func:`flowvision.transforms.functional.to_pil_image`.
    """
    return F1.to_pil_image(_plain(pic), mode)


def pil_to_tensor(pic: _PILImage.Image) -> Any:
    """Convert a PIL Image to a ``(C, H, W)`` tensor of the image's own dtype, without scaling.

    Args:
        pic (PIL Image): the image.

    Returns:
        Tensor: the image tensor.

    Raises:
        TypeError: if ``pic`` is not a PIL Image.
    """
    return F1.pil_to_tensor(pic)


def to_pure_tensor(inpt: Any) -> Any:
    """Return the plain tensor under a tv_tensor (anything else is returned unchanged).

    Args:
        inpt: a tv_tensor or any object.

    Returns:
        the plain backend tensor, or ``inpt``.
    """
    return _plain(inpt)


def get_size(inpt: Any) -> list[int]:
    """Return the spatial size ``[height, width]`` of the input (the ``canvas_size`` of bounding boxes).

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.

    Returns:
        list[int]: ``[height, width]``.
    """
    if isinstance(inpt, BoundingBoxes):
        return list(inpt.canvas_size)
    _, h, w = F1.get_dimensions(_plain(inpt))
    return [h, w]


def get_dimensions(inpt: Any) -> list[int]:
    """Return ``[channels, height, width]`` of an image or video.

    Args:
        inpt (Image, Video, Tensor, numpy.ndarray or PIL Image): the input.

    Returns:
        list[int]: ``[channels, height, width]``.

    Raises:
        TypeError: for bounding boxes and masks.
    """
    if isinstance(inpt, (BoundingBoxes, Mask)):
        raise TypeError(f"get_dimensions does not support {type(inpt).__name__}")
    return F1.get_dimensions(_plain(inpt))


def get_num_channels(inpt: Any) -> int:
    """Return the number of channels of an image or video.

    Args:
        inpt (Image, Video, Tensor, numpy.ndarray or PIL Image): the input.

    Returns:
        int: the number of channels.

    Raises:
        TypeError: for bounding boxes and masks.
    """
    return get_dimensions(inpt)[0]


def get_num_frames(inpt: Any) -> int:
    """Return the number of frames of a ``(..., T, C, H, W)`` video.

    Args:
        inpt (Video or Tensor): the video.

    Returns:
        int: ``T``, the size of dimension ``-4``.

    Raises:
        TypeError: if ``inpt`` is not a video or tensor.
    """
    if isinstance(inpt, Video) or F_t.is_tensor(inpt):
        return int(inpt.shape[-4])
    raise TypeError(f"get_num_frames expects a video tensor, got {type(inpt)}")
