"""v1 conversion classes: PIL / ndarray / tensor conversions, dtype conversion and normalization."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import functional as F
from ._transform_base import Transform


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
