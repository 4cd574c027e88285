"""torchvision.transforms.v2.functional: one dispatcher per op, one kernel per input type.

Kernels: images (``Image`` / ``Video`` / plain tensors / numpy HWC arrays / PIL) go to the v1
functional kernels; ``Mask`` uses nearest interpolation; ``BoundingBoxes`` are transformed as
coordinates (numpy, in the boxes' float dtype like torchvision) and keep their ``canvas_size`` in step.
``register_kernel(functional, cls)`` adds a kernel for a custom type.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import _functional_numpy as F_np
from .. import _functional_tensor as F_t
from ..functional import InterpolationMode
from . import tv_tensors
from .tv_tensors import BoundingBoxes, BoundingBoxFormat, Mask, TVTensor, Video

__all__ = [
    "register_kernel", "resize", "crop", "center_crop", "resized_crop", "pad", "horizontal_flip", "vertical_flip",
    "hflip", "vflip", "rotate", "affine", "perspective", "elastic", "elastic_transform", "five_crop", "ten_crop",
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "adjust_sharpness",
    "rgb_to_grayscale", "to_grayscale", "grayscale_to_rgb", "invert", "posterize", "solarize", "autocontrast",
    "equalize", "gaussian_blur", "gaussian_noise", "permute_channels", "normalize", "erase", "to_dtype",
    "convert_image_dtype", "to_image", "to_pil_image", "pil_to_tensor", "to_pure_tensor", "get_size",
    "get_dimensions", "get_num_channels", "get_num_frames", "convert_bounding_box_format",
    "clamp_bounding_boxes", "sanitize_bounding_boxes", "jpeg", "InterpolationMode",
]

_KERNELS = {}


def register_kernel(functional: Callable[..., Any] | str, tv_tensor_cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``kernel(inpt, *args, **kwargs)`` as the kernel of ``functional`` for inputs of ``tv_tensor_cls``.

    Used as a decorator; subclasses of ``tv_tensor_cls`` use the kernel too.

    Args:
        functional (callable or str): the dispatcher (e.g. ``F.resize``) or its name.
        tv_tensor_cls (type): the input type the kernel handles.

    Returns:
        callable: a decorator that registers the kernel and returns it unchanged.
    """
    if isinstance(functional, str):  # an alias ("hflip") names the same dispatcher as the function it is bound to
        fn = globals().get(functional)
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


# ----------------------------------------------------------------------------- bounding-box helpers
def _boxes_np(b):
    return np.asarray(_plain(b).numpy())


def _convert_format_np(a, old, new):
    old, new = tv_tensors._parse_format(old), tv_tensors._parse_format(new)
    if old == new:
        return a.copy()
    a = a.copy()
    # to XYXY
    if old == BoundingBoxFormat.XYWH:
        a[..., 2:] = a[..., :2] + a[..., 2:]
    elif old == BoundingBoxFormat.CXCYWH:
        if a.dtype.kind == "f":
            half = a[..., 2:] / 2
            a[..., :2], a[..., 2:] = a[..., :2] - half, a[..., :2] + half
        else:  # torchvision: integer division rounds down, x1 = cx - w // 2 ... keeps ints
            cx, cy, w, h = (a[..., i].copy() for i in range(4))
            a[..., 0] = cx - np.floor_divide(w, 2)
            a[..., 1] = cy - np.floor_divide(h, 2)
            a[..., 2] = a[..., 0] + w
            a[..., 3] = a[..., 1] + h
    # XYXY to new
    if new == BoundingBoxFormat.XYWH:
        a[..., 2:] = a[..., 2:] - a[..., :2]
    elif new == BoundingBoxFormat.CXCYWH:
        x1, y1, x2, y2 = (a[..., i].copy() for i in range(4))
        if a.dtype.kind == "f":
            a[..., 0], a[..., 1] = (x1 + x2) / 2, (y1 + y2) / 2
        else:
            a[..., 0], a[..., 1] = np.floor_divide(x1 + x2, 2), np.floor_divide(y1 + y2, 2)
        a[..., 2], a[..., 3] = x2 - x1, y2 - y1
    return a


def _clamp_np(a, format, canvas_size, clamping_mode="soft"):
    if clamping_mode is None:
        return a.copy()
    in_dtype = a.dtype
    f = a.astype(np.float32) if a.dtype.kind != "f" else a.copy()
    xyxy = _convert_format_np(f, format, BoundingBoxFormat.XYXY)
    np.clip(xyxy[..., 0::2], 0, canvas_size[1], out=xyxy[..., 0::2])
    np.clip(xyxy[..., 1::2], 0, canvas_size[0], out=xyxy[..., 1::2])
    return _convert_format_np(xyxy, BoundingBoxFormat.XYXY, format).astype(in_dtype)


def _new_boxes(arr, like, canvas_size=None):
    return tv_tensors.wrap(arr, like=like, canvas_size=tuple(canvas_size) if canvas_size is not None
                           else like.canvas_size)


def _boxes_affine(b, angle, translate, scale, shear, center=None, expand=False):
    a = _boxes_np(b)
    if a.size == 0:
        return b
    fmt, canvas = b.format, b.canvas_size
    dtype = a.dtype
    f = a.astype(np.float32) if dtype.kind != "f" else a
    xyxy = _convert_format_np(f, fmt, BoundingBoxFormat.XYXY).reshape(-1, 4)
    if center is None:
        center = [canvas[1] * 0.5, canvas[0] * 0.5]
    vec = F1._get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=False)
    m = np.asarray(vec, dtype=f.dtype).reshape(2, 3).T
    pts = xyxy[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
    pts = np.concatenate([pts, np.ones((pts.shape[0], 1), f.dtype)], -1)
    tp = (pts @ m).reshape(-1, 4, 2)
    out = np.concatenate([tp.min(1), tp.max(1)], 1)
    if expand:
        h, w = canvas
        corners = np.array([[0.0, 0.0, 1.0], [0.0, h, 1.0], [w, h, 1.0], [w, 0.0, 1.0]], f.dtype)
        tr = (corners @ m).min(0, keepdims=True)
        out = out - np.tile(tr, (1, 2))
        inv = F1._get_inverse_affine_matrix(center, angle, translate, scale, shear)
        nw, nh = F_np.compute_affine_output_size(inv, w, h)
        canvas = (nh, nw)
    out = _clamp_np(out, BoundingBoxFormat.XYXY, canvas, b.clamping_mode)
    out = _convert_format_np(out, BoundingBoxFormat.XYXY, fmt).reshape(a.shape).astype(dtype)
    return _new_boxes(out, b, canvas)


# ----------------------------------------------------------------------------- geometry
def _resize_image(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    interpolation = _check_interpolation(interpolation)
    plain = _plain(inpt)
    _, h, w = F1.get_dimensions(plain)
    out_size = _output_size((h, w), size, max_size)
    if [h, w] == out_size:
        return inpt
    mode = interpolation.value
    if (not isinstance(plain, _PILImage.Image) and mode in ("bilinear", "bicubic")
            and F1._hwc(plain).dtype == np.uint8):
        # torchvision v2 resizes uint8 natively (PIL-style two passes, rounded in between)
        F1._check_nonempty(plain)
        out = F1._apply_array(F_np.resize, plain, out_size, mode, bool(antialias), True)
        return _rewrap(out, inpt)
    return _rewrap(F1.resize(plain, out_size, interpolation, antialias=antialias), inpt)


def _output_size(canvas, size, max_size):
    if isinstance(size, int):
        size = [size]
    elif max_size is not None and size is not None and len(size) != 1:
        raise ValueError("max_size should only be passed if size is None or specifies the length of the smaller edge")
    if size is not None:
        F1._check_size_arg(size)
    return F1._compute_resized_output_size(canvas, size if size is None else list(size), max_size,
                                           allow_size_none=True)


def _resize_mask(inpt, size, interpolation=None, max_size=None, antialias=None):
    return _resize_image(inpt, size, InterpolationMode.NEAREST, max_size, False)


def _resize_boxes(b, size, interpolation=None, max_size=None, antialias=None):
    oh, ow = b.canvas_size
    nh, nw = _output_size((oh, ow), size, max_size)
    if (nh, nw) == (oh, ow):
        return b
    a = _boxes_np(b)
    ratios = np.array([nw / ow, nh / oh, nw / ow, nh / oh], np.float32)
    if b.format != BoundingBoxFormat.XYXY and b.format != BoundingBoxFormat.XYWH and \
            b.format != BoundingBoxFormat.CXCYWH:
        raise ValueError(f"unsupported format {b.format}")
    out = (a * ratios).astype(a.dtype) if a.dtype.kind == "f" else (a.astype(np.float32) * ratios).astype(a.dtype)
    return _new_boxes(out, b, (nh, nw))


def resize(inpt: Any, size: int | Sequence[int] | None, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, max_size: int | None = None, antialias: bool | None = True) -> Any:
    """Resize the input to ``size`` (see :func:`flowvision.transforms.functional.resize`).

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        size (int or sequence of int or None): ``(h, w)``, or the smaller edge for an int / 1-element sequence.
        interpolation (InterpolationMode, str or int): interpolation of images; masks always use nearest.
            Default ``InterpolationMode.BILINEAR``.
        max_size (int, optional): upper bound of the longer edge. Default ``None``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.

    Returns:
        the resized input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        TypeError: if the input type is not supported.
        ValueError: if ``size``/``max_size`` are invalid.
    """
    return _dispatch("resize", inpt, _resize_image, _resize_mask, _resize_boxes, size, interpolation, max_size,
                     antialias)


def _crop_boxes(b, top, left, height, width):
    a = _boxes_np(b)
    sub = np.array([left, top, left, top] if b.format == BoundingBoxFormat.XYXY else [left, top, 0, 0], a.dtype)
    canvas = (height, width)
    return _new_boxes(_clamp_np(a - sub, b.format, canvas, b.clamping_mode), b, canvas)


def crop(inpt: Any, top: int, left: int, height: int, width: int) -> Any:
    """Crop the input; regions outside the image are zero-padded.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        top (int): vertical coordinate of the top-left corner.
        left (int): horizontal coordinate of the top-left corner.
        height (int): height of the crop.
        width (int): width of the crop.

    Returns:
        the cropped input, of the same type as ``inpt`` (boxes are shifted and clamped to the new canvas).
    """
    return _dispatch("crop", inpt, lambda x, *a: _image_op(F1.crop, x, *a), None, _crop_boxes, top, left, height,
                     width)


def _center_anchor(output_size, canvas):
    if isinstance(output_size, numbers.Number):
        ch = cw = int(output_size)
    elif len(output_size) == 1:
        ch = cw = output_size[0]
    else:
        ch, cw = output_size
    return ch, cw, int(round((canvas[0] - ch) / 2.0)), int(round((canvas[1] - cw) / 2.0))


def center_crop(inpt: Any, output_size: int | Sequence[int]) -> Any:
    """Crop the center of the input, zero-padding images smaller than ``output_size``.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        output_size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.

    Returns:
        the cropped input, of the same type as ``inpt``.
    """
    def boxes(b, output_size):
        ch, cw, top, left = _center_anchor(output_size, b.canvas_size)
        return _crop_boxes(b, top, left, ch, cw)

    return _dispatch("center_crop", inpt, lambda x, s: _image_op(F1.center_crop, x, s), None, boxes, output_size)


def resized_crop(inpt: Any, top: int, left: int, height: int, width: int, size: int | Sequence[int], interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> Any:
    """Crop the input and resize the crop to ``size``.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        top (int): vertical coordinate of the top-left corner of the crop.
        left (int): horizontal coordinate of the top-left corner of the crop.
        height (int): height of the crop.
        width (int): width of the crop.
        size (int or sequence of int): output size, as in :func:`resize`.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.

    Returns:
        the cropped and resized input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).
    """
    def image(x, *a):
        cropped = _image_op(F1.crop, x, top, left, height, width)
        if isinstance(x, Mask):
            return _resize_mask(cropped, size)
        return _resize_image(cropped, size, interpolation, None, antialias)

    def boxes(b, *a):
        return _resize_boxes(_crop_boxes(b, top, left, height, width), size)

    return _dispatch("resized_crop", inpt, image, None, boxes)


def pad(inpt: Any, padding: int | Sequence[int], fill: float | Sequence[float] | None = None, padding_mode: str = "constant") -> Any:
    """Pad the input on all sides.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        padding (int or sequence of int): one value for all borders, two for left/right and top/bottom, or four for
            left, top, right and bottom.
        fill (number or sequence, optional): pixel value for ``"constant"`` padding. Default ``None`` (0).
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Returns:
        the padded input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        ValueError: if ``padding_mode`` is not ``"constant"`` for bounding boxes, or an argument is invalid.
    """
    def image(x, padding, fill, padding_mode):
        return _image_op(F1.pad, x, padding, 0 if fill is None else fill, padding_mode)

    def boxes(b, padding, fill, padding_mode):
        if padding_mode != "constant":
            raise ValueError(f"Padding mode '{padding_mode}' is not supported with bounding boxes")
        left, top, right, bottom = F1._parse_padding(padding)
        a = _boxes_np(b)
        add = np.array([left, top, left, top] if b.format == BoundingBoxFormat.XYXY else [left, top, 0, 0], a.dtype)
        h, w = b.canvas_size
        canvas = (h + top + bottom, w + left + right)
        return _new_boxes(_clamp_np(a + add, b.format, canvas, b.clamping_mode), b, canvas)

    return _dispatch("pad", inpt, image, None, boxes, padding, fill, padding_mode)


def horizontal_flip(inpt: Any) -> Any:
    """Flip the input horizontally.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.

    Returns:
        the flipped input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).
    """
    def boxes(b):
        a = _boxes_np(b).copy()
        w = b.canvas_size[1]
        if b.format == BoundingBoxFormat.XYXY:
            a[:, [2, 0]] = w - a[:, [0, 2]]
        elif b.format == BoundingBoxFormat.XYWH:
            a[:, 0] = w - (a[:, 0] + a[:, 2])
        else:
            a[:, 0] = w - a[:, 0]
        return _new_boxes(a, b)

    return _dispatch("horizontal_flip", inpt, lambda x: _image_op(F1.hflip, x), None, boxes)


def vertical_flip(inpt: Any) -> Any:
    """Flip the input vertically.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.

    Returns:
        the flipped input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).
    """
    def boxes(b):
        a = _boxes_np(b).copy()
        h = b.canvas_size[0]
        if b.format == BoundingBoxFormat.XYXY:
            a[:, [3, 1]] = h - a[:, [1, 3]]
        elif b.format == BoundingBoxFormat.XYWH:
            a[:, 1] = h - (a[:, 1] + a[:, 3])
        else:
            a[:, 1] = h - a[:, 1]
        return _new_boxes(a, b)

    return _dispatch("vertical_flip", inpt, lambda x: _image_op(F1.vflip, x), None, boxes)


hflip = horizontal_flip
vflip = vertical_flip


def rotate(inpt: Any, angle: float, interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST, expand: bool = False, center: Sequence[float] | None = None, fill: float | Sequence[float] | None = None) -> Any:
    """Rotate the input by ``angle`` degrees counter-clockwise.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        angle (float): rotation in degrees, counter-clockwise.
        interpolation (InterpolationMode, str or int): interpolation of images; masks always use nearest.
            Default ``InterpolationMode.NEAREST``.
        expand (bool): enlarge the output to hold the whole rotated image. Default ``False``.
        center (sequence of float, optional): ``(x, y)`` center of rotation. Default ``None``: the image center.
        fill (number or sequence, optional): value of image pixels outside the transformed image. Default ``None`` (0).

    Returns:
        the rotated input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        ValueError: if ``interpolation`` is not a mode, string or int.
    """
    interpolation = _check_interpolation(interpolation)

    def image(x):
        interp = InterpolationMode.NEAREST if isinstance(x, Mask) else interpolation
        return _image_op(F1.rotate, x, angle, interp, expand, center, fill)

    def boxes(b):
        return _boxes_affine(b, -angle, [0.0, 0.0], 1.0, [0.0, 0.0], center, expand)

    return _dispatch("rotate", inpt, image, None, boxes)


def _affine_args(angle, translate, scale, shear):
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    return float(angle), [float(t) for t in translate], float(scale), [float(s) for s in shear]


def affine(inpt: Any, angle: float, translate: Sequence[float], scale: float, shear: float | Sequence[float], interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST, fill: float | Sequence[float] | None = None, center: Sequence[float] | None = None) -> Any:
    """Apply an affine transform (rotation, translation, scale, shear) to the input.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        angle (float): rotation in degrees.
        translate (sequence of float): horizontal and vertical translation in pixels.
        scale (float): overall scale, positive.
        shear (float or sequence of float): shear angles in degrees (x, or x and y).
        interpolation (InterpolationMode, str or int): interpolation of images; masks always use nearest.
            Default ``InterpolationMode.NEAREST``.
        fill (number or sequence, optional): value of image pixels outside the transformed image. Default ``None`` (0).
        center (sequence of float, optional): ``(x, y)`` center of the transform. Default ``None``: the image center.

    Returns:
        the transformed input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        ValueError: if ``interpolation`` is not a mode, string or int, or an argument is invalid.
    """
    interpolation = _check_interpolation(interpolation)

    def image(x):
        interp = InterpolationMode.NEAREST if isinstance(x, Mask) else interpolation
        return _image_op(F1.affine, x, angle, translate, scale, shear, interp, fill, center)

    def boxes(b):
        a, t, s, sh = _affine_args(angle, translate, scale, shear)
        return _boxes_affine(b, a, t, s, sh, center, False)

    return _dispatch("affine", inpt, image, None, boxes)


def _perspective_coeffs(startpoints, endpoints, coefficients):
    if coefficients is not None:
        if startpoints is not None or endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be defined concurrently.")
        if len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
        return list(coefficients)
    if startpoints is None or endpoints is None:
        raise ValueError("Either the startpoints/endpoints or the coefficients must have non `None` values.")
    return F1._get_perspective_coeffs(startpoints, endpoints)


def perspective(inpt: Any, startpoints: Sequence[Sequence[float]] | None, endpoints: Sequence[Sequence[float]] | None, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | None = None, coefficients: Sequence[float] | None = None) -> Any:
    """Apply a perspective transform, given by four point pairs or by its 8 coefficients.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        startpoints (sequence of 4 points or None): ``[x, y]`` corners of the original image.
        endpoints (sequence of 4 points or None): where those corners go.
        interpolation (InterpolationMode, str or int): interpolation of images; masks always use nearest.
            Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence, optional): value of image pixels outside the transformed image. Default ``None`` (0).
        coefficients (sequence of 8 float, optional): the transform's coefficients instead of the points.
            Default ``None``.

    Returns:
        the transformed input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        ValueError: if both or neither of points and ``coefficients`` are given, or ``coefficients`` has not 8 values.
        RuntimeError: if the transform cannot be inverted for bounding boxes.
    """
    interpolation = _check_interpolation(interpolation)
    coeffs = _perspective_coeffs(startpoints, endpoints, coefficients)

    def image(x):
        interp = InterpolationMode.NEAREST if isinstance(x, Mask) else interpolation
        plain = _plain(x)
        if isinstance(plain, _PILImage.Image):
            from .. import _functional_pil as F_pil
            return F_pil.perspective(plain, coeffs, F1.pil_modes_mapping[interp], fill)
        return _rewrap(F1._apply_array(F_np.perspective, plain, coeffs, interp.value, fill), x)

    def boxes(b):
        a = _boxes_np(b)
        if a.size == 0:
            return b
        c = coeffs
        denom = c[0] * c[4] - c[1] * c[3]
        if denom == 0:
            raise RuntimeError(f"Provided perspective_coeffs {c} can not be inverted to transform bounding boxes.")
        inv = [(c[4] - c[5] * c[7]) / denom, (-c[1] + c[2] * c[7]) / denom, (c[1] * c[5] - c[2] * c[4]) / denom,
               (-c[3] + c[5] * c[6]) / denom, (c[0] - c[2] * c[6]) / denom, (-c[0] * c[5] + c[2] * c[3]) / denom,
               (-c[4] * c[6] + c[3] * c[7]) / denom, (-c[0] * c[7] + c[1] * c[6]) / denom]
        dt = a.dtype if a.dtype.kind == "f" else np.float32
        t1 = np.array([inv[0:3], inv[3:6]], dt)
        t2 = np.array([[inv[6], inv[7], 1.0], [inv[6], inv[7], 1.0]], dt)
        xyxy = _convert_format_np(a.astype(dt), b.format, BoundingBoxFormat.XYXY).reshape(-1, 4)
        pts = xyxy[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
        pts = np.concatenate([pts, np.ones((pts.shape[0], 1), dt)], -1)
        tp = ((pts @ t1.T) / (pts @ t2.T)).reshape(-1, 4, 2)
        out = np.concatenate([tp.min(1), tp.max(1)], 1)
        out = _clamp_np(out, BoundingBoxFormat.XYXY, b.canvas_size, b.clamping_mode)
        out = _convert_format_np(out, BoundingBoxFormat.XYXY, b.format).reshape(a.shape).astype(a.dtype)
        return _new_boxes(out, b)

    return _dispatch("perspective", inpt, image, None, boxes)


def elastic(inpt: Any, displacement: Any, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | None = None) -> Any:
    """Move every pixel of the input by a displacement field.

    Args:
        inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; a type with a kernel
            registered by :func:`register_kernel` goes to that kernel.
        displacement (Tensor or numpy.ndarray): ``(1, H, W, 2)`` displacement in normalized ``[-1, 1]`` coordinates.
        interpolation (InterpolationMode, str or int): interpolation of images; masks always use nearest.
            Default ``InterpolationMode.BILINEAR``.
        fill (number or sequence, optional): value of image pixels outside the transformed image. Default ``None`` (0).

    Returns:
        the transformed input, of the same type as ``inpt`` (boxes move with the image and keep ``canvas_size`` in step).

    Raises:
        ValueError: if ``displacement`` does not have shape ``(1, H, W, 2)``.
    """
    interpolation = _check_interpolation(interpolation)
    disp = F_t.to_numpy(displacement) if F_t.is_tensor(displacement) else np.asarray(displacement)

    def image(x):
        interp = InterpolationMode.NEAREST if isinstance(x, Mask) else interpolation
        return _image_op(F1.elastic_transform, x, disp, interp, fill)

    def boxes(b):
        a = _boxes_np(b)
        h, w = b.canvas_size
        if disp.shape != (1, h, w, 2):
            raise ValueError(f"Argument displacement shape should be {(1, h, w, 2)}, but given {disp.shape}")
        if a.size == 0:
            return b
        dt = a.dtype.type if a.dtype.kind == "f" else np.float32
        xs = np.linspace((-w + 1) / w, (w - 1) / w, w).astype(dt)
        ys = np.linspace((-h + 1) / h, (h - 1) / h, h).astype(dt)
        grid = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]), -1) - disp[0].astype(dt)
        xyxy = _convert_format_np(a, b.format, BoundingBoxFormat.XYXY).reshape(-1, 4)
        pts = xyxy[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
        if pts.dtype.kind == "f":
            pts = np.ceil(pts)
        idx = pts.astype(np.int64)
        ix, iy = np.clip(idx[:, 0], 0, w - 1), np.clip(idx[:, 1], 0, h - 1)
        size = np.array([w, h], dt)
        tp = ((grid[iy, ix] + 1) * (dt(0.5) * size) - dt(0.5)).reshape(-1, 4, 2)
        out = np.concatenate([tp.min(1), tp.max(1)], 1).astype(a.dtype)
        out = _clamp_np(out, BoundingBoxFormat.XYXY, b.canvas_size, b.clamping_mode)
        return _new_boxes(_convert_format_np(out, BoundingBoxFormat.XYXY, b.format).reshape(a.shape), b)

    return _dispatch("elastic", inpt, image, None, boxes)


elastic_transform = elastic


def five_crop(inpt: Any, size: int | Sequence[int]) -> tuple[Any, ...]:
    """Crop the four corners and the center of an image or video.

    Args:
        inpt (Image, Video, Tensor, numpy.ndarray or PIL Image): the input.
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.

    Returns:
        tuple: ``(top_left, top_right, bottom_left, bottom_right, center)``, of the type of ``inpt``.

    Raises:
        TypeError: for bounding boxes and masks.
        ValueError: if the crop is larger than the image.
    """
    if isinstance(inpt, (BoundingBoxes, Mask)):
        raise TypeError("five_crop supports images and videos only")
    return tuple(_rewrap(o, inpt) for o in F1.five_crop(_plain(inpt), size))


def ten_crop(inpt: Any, size: int | Sequence[int], vertical_flip: bool = False) -> tuple[Any, ...]:
    """The five crops of :func:`five_crop` of the input and of its flipped version.

    Args:
        inpt (Image, Video, Tensor, numpy.ndarray or PIL Image): the input.
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.
        vertical_flip (bool): flip vertically instead of horizontally. Default ``False``.

    Returns:
        tuple: ten crops, of the type of ``inpt``.

    Raises:
        TypeError: for bounding boxes and masks.
        ValueError: if the crop is larger than the image.
    """
    if isinstance(inpt, (BoundingBoxes, Mask)):
        raise TypeError("ten_crop supports images and videos only")
    return tuple(_rewrap(o, inpt) for o in F1.ten_crop(_plain(inpt), size, vertical_flip))


# ----------------------------------------------------------------------------- colour (images only)
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


# ----------------------------------------------------------------------------- dtype / type conversion
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


# ----------------------------------------------------------------------------- meta
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


def convert_bounding_box_format(inpt: Any, old_format: BoundingBoxFormat | str | None = None, new_format: BoundingBoxFormat | str | None = None, inplace: bool = False) -> Any:
    """Convert bounding boxes between the ``XYXY``, ``XYWH`` and ``CXCYWH`` formats.

    Args:
        inpt (BoundingBoxes, Tensor or numpy.ndarray): ``(..., 4)`` boxes.
        old_format (BoundingBoxFormat or str, optional): format of plain tensor/ndarray input; must be ``None`` for
            :class:`BoundingBoxes` (their own format is used). Default ``None``.
        new_format (BoundingBoxFormat or str): the target format (required).
        inplace (bool): accepted for torchvision compatibility; a new object is always returned. Default ``False``.

    Returns:
        the converted boxes, of the type of ``inpt``.

    Raises:
        TypeError: if ``new_format`` is missing.
        ValueError: if ``old_format`` is given for BoundingBoxes or missing for plain input.
    """
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: 'new_format'")
    if isinstance(inpt, BoundingBoxes):
        if old_format is not None:
            raise ValueError("For bounding box tv_tensor inputs, `old_format` must not be passed.")
        new = tv_tensors._parse_format(new_format)
        out = _convert_format_np(_boxes_np(inpt), inpt.format, new)
        return tv_tensors.wrap(out, like=inpt, format=new)
    if old_format is None:
        raise ValueError("For pure tensor inputs, `old_format` has to be passed.")
    arr = np.asarray(inpt) if isinstance(inpt, np.ndarray) else F_t.to_numpy(inpt)
    out = _convert_format_np(arr, old_format, new_format)
    return out if isinstance(inpt, np.ndarray) else F_t.from_numpy(out)


def clamp_bounding_boxes(inpt: Any, format: BoundingBoxFormat | str | None = None, canvas_size: tuple[int, int] | None = None, clamping_mode: str | None = "auto") -> Any:
    """Clamp bounding boxes to their canvas.

    Args:
        inpt (BoundingBoxes, Tensor or numpy.ndarray): ``(..., 4)`` boxes.
        format (BoundingBoxFormat or str, optional): format of plain input; ``None`` for BoundingBoxes. Default ``None``.
        canvas_size (tuple of int, optional): ``(height, width)`` of plain input; ``None`` for BoundingBoxes.
            Default ``None``.
        clamping_mode (str, optional): ``"soft"``, ``"hard"`` or ``None`` (no clamping); ``"auto"`` uses the boxes'
            own mode (``"soft"`` for plain input). Default ``"auto"``.

    Returns:
        the clamped boxes, of the type of ``inpt``.

    Raises:
        ValueError: if ``format``/``canvas_size`` are given for BoundingBoxes or missing for plain input.
    """
    if isinstance(inpt, BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("For bounding box tv_tensor inputs, `format` and `canvas_size` must not be passed.")
        mode = inpt.clamping_mode if clamping_mode == "auto" else clamping_mode
        return _new_boxes(_clamp_np(_boxes_np(inpt), inpt.format, inpt.canvas_size, mode), inpt)
    if format is None or canvas_size is None:
        raise ValueError("For pure tensor inputs, `format` and `canvas_size` have to be passed.")
    arr = np.asarray(inpt) if isinstance(inpt, np.ndarray) else F_t.to_numpy(inpt)
    out = _clamp_np(arr, format, canvas_size, "soft" if clamping_mode == "auto" else clamping_mode)
    return out if isinstance(inpt, np.ndarray) else F_t.from_numpy(out)


def _sanitize_mask(arr, format, canvas_size, min_size=1.0, min_area=1.0):
    xyxy = _convert_format_np(arr, format, BoundingBoxFormat.XYXY)
    ws, hs = xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]
    valid = (ws >= min_size) & (hs >= min_size) & (xyxy >= 0).all(-1) & (ws * hs >= min_area)
    h, w = canvas_size
    valid &= (xyxy[:, 0] <= w) & (xyxy[:, 2] <= w) & (xyxy[:, 1] <= h) & (xyxy[:, 3] <= h)
    return valid


def sanitize_bounding_boxes(bounding_boxes: Any, format: BoundingBoxFormat | str | None = None, canvas_size: tuple[int, int] | None = None, min_size: float = 1.0, min_area: float = 1.0) -> tuple[Any, Any]:
    """Remove degenerate bounding boxes: too small, too little area, or outside the canvas.

    Args:
        bounding_boxes (BoundingBoxes, Tensor or numpy.ndarray): ``(N, 4)`` boxes.
        format (BoundingBoxFormat or str, optional): format of plain input; ``None`` for BoundingBoxes. Default ``None``.
        canvas_size (tuple of int, optional): ``(height, width)`` of plain input; ``None`` for BoundingBoxes.
            Default ``None``.
        min_size (float): minimum width and height of a kept box. Default ``1.0``.
        min_area (float): minimum area of a kept box. Default ``1.0``.

    Returns:
        tuple: ``(kept_boxes, valid)``: the kept boxes (type of the input; a tensor for plain input) and the boolean
        tensor marking which boxes were kept.

    Raises:
        ValueError: if ``format``/``canvas_size`` are given for BoundingBoxes or missing for plain input.
    """
    if isinstance(bounding_boxes, BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("For BoundingBoxes inputs, `format` and `canvas_size` must not be passed.")
        a = _boxes_np(bounding_boxes)
        valid = _sanitize_mask(a, bounding_boxes.format, bounding_boxes.canvas_size, min_size, min_area)
        return tv_tensors.wrap(a[valid], like=bounding_boxes), F_t.from_numpy(valid)
    if format is None or canvas_size is None:
        raise ValueError("For pure tensor inputs, `format` and `canvas_size` have to be passed.")
    a = F_t.to_numpy(bounding_boxes) if F_t.is_tensor(bounding_boxes) else np.asarray(bounding_boxes)
    valid = _sanitize_mask(a, tv_tensors._parse_format(format), canvas_size, min_size, min_area)
    return F_t.from_numpy(a[valid]), F_t.from_numpy(valid)


from ._functional_docs import COLOR_DOCS as _COLOR_DOCS  # noqa: E402

for _name, _doc in _COLOR_DOCS.items():  # the op-by-op dispatchers built by _color
    globals()[_name].__doc__ = _doc
del _name, _doc
