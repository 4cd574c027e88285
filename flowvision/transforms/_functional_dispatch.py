"""InterpolationMode, the input-type dispatch helpers and the image metadata shared by the functional modules.

PIL images go to ``_functional_pil``; numpy ``(H, W)`` / ``(..., H, W, C)`` arrays and backend ``(..., C, H, W)``
tensors go to ``_functional_numpy`` through a channels-last view (no copy).
"""
from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from . import _functional_numpy as F_np
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

if TYPE_CHECKING:
    from flowvision.backend import Tensor


class InterpolationMode(Enum):
    """Interpolation modes of the geometric transforms (torchvision's ``InterpolationMode``)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i: int) -> InterpolationMode:
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



def _pil_from(arr, mode):
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    arr = np.ascontiguousarray(arr)
    if mode in ("RGB", "RGBA", "L"):
        return Image.fromarray(arr)
    return Image.fromarray(arr).convert(mode) if mode != "LA" else Image.fromarray(arr, mode="LA")


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
