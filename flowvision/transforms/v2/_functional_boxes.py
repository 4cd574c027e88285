"""Bounding-box kernels: format conversion, clamping, sanitizing and the affine map of box corners (numpy,
in the boxes' float dtype like torchvision), plus their public dispatchers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F1
from .. import _functional_numpy as F_np
from .. import _functional_tensor as F_t
from . import tv_tensors
from .tv_tensors import BoundingBoxFormat, BoundingBoxes
from ._functional_dispatch import _plain


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


def convert_bounding_box_format(inpt: Any, old_format: BoundingBoxFormat | str | None = None,
                                new_format: BoundingBoxFormat | str | None = None, inplace: bool = False) -> Any:
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


def clamp_bounding_boxes(inpt: Any, format: BoundingBoxFormat | str | None = None,
                         canvas_size: tuple[int, int] | None = None, clamping_mode: str | None = "auto") -> Any:
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


def sanitize_bounding_boxes(bounding_boxes: Any, format: BoundingBoxFormat | str | None = None,
                            canvas_size: tuple[int, int] | None = None, min_size: float = 1.0,
                            min_area: float = 1.0) -> tuple[Any, Any]:
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
