"""v2 geometric dispatchers: resize, crops, pad, flips, rotation, affine, perspective and elastic warps of
images, videos, masks and bounding boxes.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
from PIL import Image as _PILImage

from .. import functional as F1
from .. import _functional_numpy as F_np
from .. import _functional_tensor as F_t
from ..functional import InterpolationMode
from .tv_tensors import BoundingBoxFormat, BoundingBoxes, Mask
from ._functional_boxes import _boxes_affine, _boxes_np, _clamp_np, _convert_format_np, _new_boxes
from ._functional_dispatch import _check_interpolation, _dispatch, _image_op, _plain, _rewrap


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


def resize(inpt: Any, size: int | Sequence[int] | None,
           interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, max_size: int | None = None,
           antialias: bool | None = True) -> Any:
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


def resized_crop(inpt: Any, top: int, left: int, height: int, width: int, size: int | Sequence[int],
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> Any:
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


def pad(inpt: Any, padding: int | Sequence[int], fill: float | Sequence[float] | None = None,
        padding_mode: str = "constant") -> Any:
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


def rotate(inpt: Any, angle: float, interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST,
           expand: bool = False, center: Sequence[float] | None = None,
           fill: float | Sequence[float] | None = None) -> Any:
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


def affine(inpt: Any, angle: float, translate: Sequence[float], scale: float, shear: float | Sequence[float],
           interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST,
           fill: float | Sequence[float] | None = None, center: Sequence[float] | None = None) -> Any:
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


def perspective(inpt: Any, startpoints: Sequence[Sequence[float]] | None, endpoints: Sequence[Sequence[float]] | None,
                interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                fill: float | Sequence[float] | None = None, coefficients: Sequence[float] | None = None) -> Any:
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


def elastic(inpt: Any, displacement: Any, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
            fill: float | Sequence[float] | None = None) -> Any:
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
