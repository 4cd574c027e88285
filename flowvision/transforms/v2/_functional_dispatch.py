"""Dispatch of the v2 functionals: the kernel registry (``register_kernel``), the input kinds and the
unwrap / rewrap of TVTensors around the v1 kernels.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import _functional_tensor as F_t
from ..functional import InterpolationMode
from . import tv_tensors
from .tv_tensors import BoundingBoxes, Mask, TVTensor, Video

# dispatcher name -> {input type: kernel}
_KERNELS: dict[str, dict[type, Callable[..., Any]]] = {}


def register_kernel(functional: Callable[..., Any] | str,
                    tv_tensor_cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``kernel(inpt, *args, **kwargs)`` as the kernel of ``functional`` for inputs of ``tv_tensor_cls``.

    Used as a decorator; subclasses of ``tv_tensor_cls`` use the kernel too.

    Args:
        functional (callable or str): the dispatcher (e.g. ``F.resize``) or its name.
        tv_tensor_cls (type): the input type the kernel handles.

    Returns:
        callable: a decorator that registers the kernel and returns it unchanged.
    """
    if isinstance(functional, str):  # an alias ("hflip") names the same dispatcher as the function it is bound to
        fn = getattr(importlib.import_module(f"{__package__}.functional"), functional, None)
        name = fn.__name__ if callable(fn) else functional
    else:
        name = functional.__name__

    def deco(kernel):
        _KERNELS.setdefault(name, {})[tv_tensor_cls] = kernel
        return kernel

    return deco


def _custom_kernel(name, inpt):
    table = _KERNELS.get(name)
    if not table:
        return None
    for cls in type(inpt).__mro__:
        if cls in table:
            return table[cls]
    return None


def _check_interpolation(interpolation):
    if isinstance(interpolation, InterpolationMode):
        return interpolation
    if isinstance(interpolation, str):
        return InterpolationMode(interpolation.lower())
    if isinstance(interpolation, int):
        return F1._interpolation_modes_from_int(interpolation)
    raise ValueError(f"interpolation should be an InterpolationMode, a string or an int, got {interpolation!r}")


def _kind(inpt):
    if isinstance(inpt, BoundingBoxes):
        return "boxes"
    if isinstance(inpt, Mask):
        return "mask"
    if isinstance(inpt, (tv_tensors.Image, Video)):
        return "image"
    if isinstance(inpt, _PILImage.Image) or isinstance(inpt, np.ndarray) or F_t.is_tensor(inpt):
        return "plain"
    raise TypeError(f"Unsupported input type {type(inpt)}")


def _plain(t):
    return t.as_tensor() if isinstance(t, TVTensor) else t


def _rewrap(out, like):
    if isinstance(like, TVTensor) and not isinstance(out, TVTensor):
        return tv_tensors.wrap(out, like=like)
    return out


def _image_op(v1fn, inpt, *args, **kwargs):
    return _rewrap(v1fn(_plain(inpt), *args, **kwargs), inpt)


def _dispatch(name, inpt, image_fn, mask_fn=None, boxes_fn=None, *args, **kwargs):
    k = _custom_kernel(name, inpt)
    if k is not None:
        return k(inpt, *args, **kwargs)
    kind = _kind(inpt)
    if kind == "boxes":
        if boxes_fn is None:
            return inpt
        return boxes_fn(inpt, *args, **kwargs)
    if kind == "mask":
        fn = mask_fn if mask_fn is not None else image_fn
        return fn(inpt, *args, **kwargs)
    return image_fn(inpt, *args, **kwargs)
