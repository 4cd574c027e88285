"""v2 type and dtype conversions (ToImage, PILToTensor, ToPILImage, ToPureTensor, ToTensor, ToDtype,
ConvertImageDtype), Normalize and RGB.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import transforms as T1
from . import functional as F
from . import tv_tensors
from ._transform import Transform
from .tv_tensors import BoundingBoxes, Mask, Video


class ToImage(Transform):
    """Convert PIL images, ``(H, W[, C])`` ndarrays and plain tensors to :class:`Image` tv_tensors.

    """

    _transformed_types = (np.ndarray, _PILImage.Image, "tensor")

    def _needs_transform_list(self, flat_inputs):
        needs = super()._needs_transform_list(flat_inputs)
        return [n and not isinstance(x, tv_tensors.TVTensor) for n, x in zip(needs, flat_inputs)]

    def transform(self, inpt, params):
        return F.to_image(inpt)


class PILToTensor(Transform):
    """Convert PIL images to plain ``(C, H, W)`` tensors of their own dtype, without scaling.

    """

    _transformed_types = (_PILImage.Image,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToPILImage(Transform):
    """Convert tensor / ndarray images to PIL Images.

    Args:
        mode (str, optional): PIL mode of the result. Default ``None``: inferred.
    """

    _transformed_types = (np.ndarray, "tensor", tv_tensors.Image)

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def transform(self, inpt, params):
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
    """Replace every tv_tensor of the sample by its plain tensor.

    """

    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt, params):
        return F.to_pure_tensor(inpt)


class ToTensor(Transform):
    """Deprecated in torchvision v2 (use ToImage + ToDtype(float32, scale=True)); kept for parity."""
    _transformed_types = (np.ndarray, _PILImage.Image)

    def __init__(self):
        warnings.warn("The transform `ToTensor()` is deprecated and will be removed in a future release. "
                      "Instead, please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.")

    def transform(self, inpt, params):
        return F1.to_tensor(inpt)


class ToDtype(Transform):
    """``dtype`` may be one dtype (applied to images and videos; with ``scale`` their values are rescaled),
    or a dict ``{type: dtype}`` with ``"others"`` for the remaining types (``None`` leaves a type alone).

    Args:
        dtype: a backend or numpy dtype, or ``{type: dtype}`` (``"others"`` for the remaining types).
        scale: rescale image / video values to the range of the new dtype.

    Raises:
        ValueError: if ``dtype`` is neither a dtype nor a dict.
    """

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        if not isinstance(dtype, dict) and not (hasattr(dtype, "np") or isinstance(dtype, (type, np.dtype))):
            raise ValueError(f"dtype must be a dtype or a dict of dtypes, got {type(dtype)} instead.")
        self.dtype = dtype
        self.scale = scale

    def _dtype_for(self, inpt):
        if not isinstance(self.dtype, dict):
            if isinstance(inpt, (BoundingBoxes, Mask)):
                return None  # like torchvision: a single dtype converts images and videos only
            return self.dtype
        for cls in type(inpt).__mro__:
            if cls in self.dtype:
                return self.dtype[cls]
        return self.dtype.get("others")

    def transform(self, inpt, params):
        dtype = self._dtype_for(inpt)
        if dtype is None or isinstance(inpt, _PILImage.Image):
            return inpt
        scale = self.scale and not isinstance(inpt, (BoundingBoxes, Mask))
        return F.to_dtype(inpt, dtype=dtype, scale=scale)


class ConvertImageDtype(Transform):
    """Convert images to ``dtype``, rescaling their values to the dtype's range.

    Args:
        dtype (backend or numpy dtype, optional): target dtype. Default ``None``: float32.
    """

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = dtype

    def transform(self, inpt, params):
        if isinstance(inpt, (BoundingBoxes, Mask, _PILImage.Image)):
            return inpt
        return F.to_dtype(inpt, dtype=self.dtype, scale=True)


class Normalize(Transform):
    """Normalize float images and videos per channel: ``(x - mean) / std``.

    Args:
        mean (number or sequence of float): per-channel means.
        std (number or sequence of float): per-channel standard deviations, non-zero.
        inplace (bool): write the result into the input. Default ``False``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.Normalize`.
    """

    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor")

    def __init__(self, mean: float | Sequence[float], std: float | Sequence[float], inplace: bool = False) -> None:
        T1.Normalize(mean, std, inplace)  # argument checks
        self.mean = list(np.atleast_1d(mean))
        self.std = list(np.atleast_1d(std))
        self.inplace = inplace

    def transform(self, inpt, params):
        return F.normalize(inpt, self.mean, self.std, self.inplace)


class RGB(Transform):
    """Convert images to RGB: one-channel images get three equal channels, RGB images are unchanged.

    """

    def transform(self, inpt, params):
        return F.grayscale_to_rgb(inpt)
