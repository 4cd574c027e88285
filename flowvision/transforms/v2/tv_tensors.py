"""torchvision.tv_tensors equivalents: backend tensors that carry what they are.

``Image`` (C, H, W), ``Video`` (T, C, H, W), ``Mask`` (..., H, W) and ``BoundingBoxes`` (N, 4) with a
``format`` and a ``canvas_size`` are subclasses of ``flowvision.backend.Tensor``. Like torchvision,
ordinary operations on them return plain tensors; ``wrap(t, like=...)`` re-attaches the type and
metadata.
"""
from enum import Enum

import numpy as np
from PIL import Image as _PILImage

from flowvision import backend as fb

__all__ = ["set_return_type", "TVTensor", "Image", "Video", "Mask", "BoundingBoxes", "BoundingBoxFormat", "wrap",
           "is_rotated_bounding_format"]


def _as_array(data, dtype=None):
    if fb.is_tensor(data):
        arr = data.detach().numpy() if getattr(data, "requires_grad", False) else data.numpy()
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        arr = np.asarray(data)
        if arr.dtype == np.float64 and dtype is None:
            arr = arr.astype(np.float32)
    if dtype is not None:
        arr = arr.astype(dtype.np if hasattr(dtype, "np") else dtype, copy=False)
    return arr


class TVTensor(fb.Tensor):
    """Base class of the typed tensors."""

    @classmethod
    def _from_array(cls, arr, **meta):
        t = cls._wrap(np.ascontiguousarray(arr))
        for k, v in meta.items():
            setattr(t, k, v)
        return t

    def as_tensor(self):
        """The same data as a plain backend tensor (no copy)."""
        return fb.from_numpy(self._data)

    def __repr__(self):
        return f"{type(self).__name__}({fb.Tensor.__repr__(self.as_tensor())})"

    def __reduce__(self):
        return (_rebuild, (type(self), np.asarray(self._data), self._meta()))

    def _meta(self):
        return {}

    __str__ = __repr__


def _rebuild(cls, arr, meta):
    return cls._from_array(arr, **meta)


class Image(TVTensor):
    """(..., C, H, W) image from a PIL image (converted to uint8 CHW), a tensor or an array (taken as
    (C, H, W) like torchvision; use ``ToImage`` / ``to_image`` to convert an HWC numpy image)."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        if isinstance(data, _PILImage.Image):
            from .. import functional as F1

            arr = F1.pil_to_tensor(data).numpy()
        else:
            arr = _as_array(data, dtype)
            if arr.ndim < 2:
                raise ValueError(f"Image expects at least 2 dimensions, got {arr.ndim}")
            if arr.ndim == 2:
                arr = arr[None]
        if dtype is not None:
            arr = arr.astype(dtype.np if hasattr(dtype, "np") else dtype, copy=False)
        return cls._from_array(arr)

    def __init__(self, *args, **kwargs):
        pass


class Video(TVTensor):
    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        arr = _as_array(data, dtype)
        if arr.ndim < 4:
            raise ValueError(f"Video expects at least 4 dimensions (T, C, H, W), got {arr.ndim}")
        return cls._from_array(arr)

    def __init__(self, *args, **kwargs):
        pass


class Mask(TVTensor):
    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        if isinstance(data, _PILImage.Image):
            arr = np.asarray(data)
            if arr.ndim == 3:
                arr = np.moveaxis(arr, -1, 0)
        else:
            arr = _as_array(data, dtype)
        if arr.ndim < 2:
            raise ValueError(f"Mask expects at least 2 dimensions (H, W), got {arr.ndim}")
        return cls._from_array(arr)

    def __init__(self, *args, **kwargs):
        pass


class BoundingBoxFormat(Enum):
    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"


def is_rotated_bounding_format(format):
    return False


def _parse_format(format):
    if isinstance(format, str):
        try:
            return BoundingBoxFormat[format.upper()]
        except KeyError:
            raise ValueError(f"Unknown bounding box format {format!r}; use one of "
                             f"{[f.name for f in BoundingBoxFormat]} (rotated formats are not supported)") from None
    if not isinstance(format, BoundingBoxFormat):
        raise TypeError(f"format should be a BoundingBoxFormat or a string, got {type(format)}")
    return format


class BoundingBoxes(TVTensor):
    """(N, 4) boxes with ``format`` (XYXY / XYWH / CXCYWH) and ``canvas_size`` = (H, W)."""

    # set per instance by _from_array (the metadata travels with the tensor through the kernels)
    format: "BoundingBoxFormat"
    canvas_size: "tuple[int, int]"
    clamping_mode: "str | None"

    def __new__(cls, data, *, format, canvas_size, clamping_mode="soft", dtype=None, device=None,
                requires_grad=None):
        arr = _as_array(data, dtype)
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[-1] != 4:
            raise ValueError(f"Expected a (N, 4) tensor of boxes, got shape {tuple(arr.shape)}")
        canvas_size = tuple(int(s) for s in canvas_size)
        if len(canvas_size) != 2 or min(canvas_size) < 0:
            raise ValueError(f"canvas_size should be (height, width), got {canvas_size}")
        if clamping_mode not in ("soft", "hard", None):
            raise ValueError(f"clamping_mode must be soft, hard or None, got {clamping_mode}")
        return cls._from_array(arr, format=_parse_format(format), canvas_size=canvas_size,
                               clamping_mode=clamping_mode)

    def __init__(self, *args, **kwargs):
        pass

    def _meta(self):
        return dict(format=self.format, canvas_size=self.canvas_size, clamping_mode=self.clamping_mode)

    def __repr__(self):
        return (f"BoundingBoxes({np.asarray(self._data).tolist()}, format={self.format}, "
                f"canvas_size={self.canvas_size})")

    __str__ = __repr__


def wrap(wrappee, *, like, **kwargs):
    """Wrap a plain tensor (or numpy array) as the same tv_tensor type as ``like`` (metadata overridable)."""
    arr = _as_array(wrappee)
    if isinstance(like, BoundingBoxes):
        meta = like._meta()
        meta.update(kwargs)
        return BoundingBoxes._from_array(arr, **meta)
    return type(like)._from_array(arr)


class set_return_type:
    """torchvision's switch for what ops on tv_tensors return. Here ops always return plain tensors (the
    "Tensor" setting, torchvision's default); "TVTensor" raises ``NotImplementedError``: re-attach the type with
    ``wrap(result, like=original)``. Usable as a call or a context manager."""

    def __init__(self, return_type: str):
        if return_type.lower() not in ("tensor", "tvtensor"):
            raise ValueError(f"return_type must be 'TVTensor' or 'Tensor', got {return_type}")
        if return_type.lower() == "tvtensor":
            raise NotImplementedError("ops on tv_tensors return plain tensors in flowvision; use "
                                      "tv_tensors.wrap(output, like=input) to keep the type")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
