"""v2 colour dispatchers (images and videos; masks and boxes pass through) and their numpy kernels where v2's
float details differ from v1.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import _functional_numpy as F_np
from .. import _functional_tensor as F_t
from .tv_tensors import BoundingBoxes, Mask
from ._functional_dispatch import _custom_kernel, _image_op
from ._functional_docs import COLOR_DOCS as _COLOR_DOCS


def _color(name, v1fn):
    def fn(inpt: Any, *args: Any, **kwargs: Any) -> Any:
        k = _custom_kernel(name, inpt)
        if k is not None:
            return k(inpt, *args, **kwargs)
        if isinstance(inpt, (BoundingBoxes, Mask)):
            return inpt
        return _image_op(v1fn, inpt, *args, **kwargs)

    fn.__name__ = name
    return fn


adjust_brightness = _color("adjust_brightness", F1.adjust_brightness)
adjust_hue = _color("adjust_hue", F1.adjust_hue)
adjust_gamma = _color("adjust_gamma", F1.adjust_gamma)


# v2's colour kernels differ from v1 in float details: ``_blend`` is ``x.mul(r).add_(y, alpha=1-r)`` (a fused
# multiply-add on CPU) and the grayscale weights are accumulated the same way. These numpy kernels reproduce
# that (the fused step is emulated exactly in float64).
def _fma(acc, a, b):
    return (acc.astype(np.float64) + np.float64(a) * b.astype(np.float64)).astype(np.float32)


def _gray_v2(img):
    """(..., H, W, 3) -> float (..., H, W) = 0.2989 r + 0.587 g + 0.114 b, accumulated like torch."""
    if img.dtype == np.float64:
        return img[..., 0] * 0.2989 + img[..., 1] * 0.587 + img[..., 2] * 0.114
    r, g, b = (img[..., i].astype(np.float32) for i in range(3))
    return _fma(_fma(r * np.float32(0.2989), np.float32(0.587), g), np.float32(0.114), b)


def _blend_v2(img, other, ratio):
    bound = F_np.max_value(img.dtype)
    if img.dtype == np.float64:
        out = img * ratio + np.asarray(other, np.float64) * (1.0 - ratio)
    else:
        t = img.astype(np.float32) * np.float32(ratio)
        out = _fma(t, np.float32(1.0 - ratio), np.asarray(other, np.float32))
    out = np.clip(out, 0, bound)
    return out.astype(img.dtype) if img.dtype.kind != "f" else out.astype(img.dtype, copy=False)


def _contrast_v2_np(img, factor):
    if img.shape[-1] == 3:
        g = _gray_v2(img)
        if img.dtype.kind != "f":
            g = np.floor(g)
    else:
        g = img[..., 0].astype(np.float32) if img.dtype != np.float64 else img[..., 0]
    mean = g.mean(axis=(-2, -1), keepdims=True, dtype=np.float64).astype(g.dtype)[..., None]
    return _blend_v2(img, mean, factor)


def _saturation_v2_np(img, factor):
    if img.shape[-1] == 1:
        return img
    g = _gray_v2(img)
    if img.dtype.kind != "f":
        g = np.floor(g)
    return _blend_v2(img, g[..., None], factor)


def _sharpness_v2_np(img, factor):
    if img.shape[-2] <= 2 or img.shape[-3] <= 2:
        return img
    # torchvision v2: interior x + (1 - r) * (blur - x) (fused), border untouched
    blur = F_np._blurred_degenerate(img)
    wdt = np.float64 if img.dtype == np.float64 else np.float32
    x = img.astype(wdt)
    diff = blur.astype(wdt) - x
    out = x.copy()
    inner = (Ellipsis, slice(1, -1), slice(1, -1), slice(None))
    if wdt == np.float64:
        out[inner] = x[inner] + (1.0 - factor) * diff[inner]
    else:
        out[inner] = _fma(x[inner], np.float32(1.0 - factor), diff[inner])
    out = np.clip(out, 0, F_np.max_value(img.dtype))
    return out.astype(img.dtype)


def _gray_out_v2_np(img, num_output_channels):
    if img.shape[-1] == 1:
        g = img.copy()
    else:
        g = _gray_v2(img)
        g = (g.astype(img.dtype) if img.dtype.kind != "f" else g.astype(img.dtype))[..., None]
    if num_output_channels == 3:
        g = np.repeat(g, 3, axis=-1)
    return g


def _v2_color(name, np_kernel, v1fn, check):
    def v1_like(img, *args, **kwargs):
        # torch's keyword spelling (adjust_sharpness(img, sharpness_factor=2.0)): each kernel takes one factor
        args = args + tuple(kwargs.values())
        if isinstance(img, _PILImage.Image):
            return v1fn(img, *args)
        check(img, *args)
        F1._check_nonempty(img)
        return F1._apply_array(np_kernel, img, *args)

    return _color(name, v1_like)


def _check_factor(name):
    def check(img, factor):
        if factor < 0:
            raise ValueError(f"{name} ({factor}) is not non-negative.")
        c = F1.get_dimensions(img)[0]
        if c not in (1, 3):
            raise TypeError(f"Input image tensor permitted channel values are 1 or 3, but found {c}")
    return check


def _check_gray(img, n):
    if n not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {n}.")


adjust_contrast = _v2_color("adjust_contrast", _contrast_v2_np, F1.adjust_contrast, _check_factor("contrast_factor"))
adjust_saturation = _v2_color("adjust_saturation", _saturation_v2_np, F1.adjust_saturation,
                              _check_factor("saturation_factor"))
adjust_sharpness = _v2_color("adjust_sharpness", _sharpness_v2_np, F1.adjust_sharpness,
                             _check_factor("sharpness_factor"))
_rgb_to_grayscale = _v2_color("rgb_to_grayscale", _gray_out_v2_np, F1.rgb_to_grayscale, _check_gray)


def rgb_to_grayscale(inpt: Any, num_output_channels: int = 1) -> Any:
    """Convert an RGB image to grayscale (``0.2989 R + 0.587 G + 0.114 B``); masks and boxes pass through.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Returns:
        the grayscale image, of the same type as ``inpt``.

    Raises:
        ValueError: if ``num_output_channels`` is neither 1 nor 3.
    """
    return _rgb_to_grayscale(inpt, num_output_channels)


to_grayscale = rgb_to_grayscale
invert = _color("invert", F1.invert)
posterize = _color("posterize", F1.posterize)
solarize = _color("solarize", F1.solarize)
autocontrast = _color("autocontrast", F1.autocontrast)
equalize = _color("equalize", F1.equalize)
gaussian_blur = _color("gaussian_blur", F1.gaussian_blur)
normalize = _color("normalize", F1.normalize)


def _grayscale_to_rgb_v1(img):
    if isinstance(img, _PILImage.Image):
        return img.convert("RGB")
    c = F1.get_dimensions(img)[0]
    if c >= 3:
        return img
    a = F1._hwc(img)
    out = np.repeat(a, 3, axis=-1)
    return F1._np_out(out, False) if isinstance(img, np.ndarray) else F_t.from_hwc(out, like=img)


grayscale_to_rgb = _color("grayscale_to_rgb", _grayscale_to_rgb_v1)


def _permute_v1(img, permutation):
    if isinstance(img, _PILImage.Image):
        return F1.to_pil_image(np.ascontiguousarray(np.asarray(img)[..., list(permutation)]), img.mode)
    a = F1._hwc(img)
    out = a[..., list(permutation)]
    return F1._np_out(out, False) if isinstance(img, np.ndarray) else F_t.from_hwc(out, like=img)


permute_channels = _color("permute_channels", _permute_v1)


def _noise_v1(img, mean=0.0, sigma=0.1, clip=True):
    from .. import _random

    a = F1._hwc(img)
    if a.dtype.kind != "f":
        raise ValueError(f"Input tensor is expected to be in float dtype, got dtype={a.dtype}")
    if sigma < 0:
        raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
    out = a + (_random.normal(a.shape, a.dtype) * a.dtype.type(sigma) + a.dtype.type(mean))
    if clip:
        out = np.clip(out, 0, 1)
    return F1._np_out(out, False) if isinstance(img, np.ndarray) else F_t.from_hwc(out, like=img)


gaussian_noise = _color("gaussian_noise", _noise_v1)


def _jpeg_v1(img, quality):
    import io as _io

    if isinstance(img, _PILImage.Image):
        buf = _io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        return _PILImage.open(buf).convert(img.mode)
    a = F1._hwc(img)
    if a.dtype != np.uint8:
        raise TypeError(f"Input image should be of dtype uint8, got {a.dtype}")
    flat = a.reshape((-1,) + a.shape[-3:])
    outs = []
    for x in flat:
        buf = _io.BytesIO()
        _PILImage.fromarray(x[..., 0] if x.shape[-1] == 1 else x).save(buf, "JPEG", quality=int(quality))
        y = np.asarray(_PILImage.open(buf))
        outs.append(y[..., None] if y.ndim == 2 else y)
    out = np.stack(outs).reshape(a.shape)
    return F1._np_out(out, False) if isinstance(img, np.ndarray) else F_t.from_hwc(out, like=img)


jpeg = _color("jpeg", _jpeg_v1)


def erase(inpt: Any, i: int, j: int, h: int, w: int, v: Any, inplace: bool = False) -> Any:
    """Overwrite a rectangle of an image with ``v``; masks and boxes pass through unchanged.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        i (int): top row of the rectangle.
        j (int): left column of the rectangle.
        h (int): height of the rectangle.
        w (int): width of the rectangle.
        v (Tensor, ndarray or number): value(s) written, broadcastable to ``(C, h, w)``.
        inplace (bool): modify the image in place. Default ``False``.

    Returns:
        the erased input, of the same type as ``inpt``.
    """
    if isinstance(inpt, (BoundingBoxes, Mask)):
        return inpt
    return _image_op(F1.erase, inpt, i, j, h, w, v, inplace)


for _name, _doc in _COLOR_DOCS.items():  # the op-by-op dispatchers built by _color
    globals()[_name].__doc__ = _doc
del _name, _doc
