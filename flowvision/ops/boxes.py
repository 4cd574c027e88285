"""Box utilities with torchvision.ops' names, arguments and arithmetic (xyxy boxes unless told)."""
# Tensor indexing is bound at import (flowvision/backend/_methods.py), out of mypy's sight:
# mypy: disable-error-code="index"
import math
from typing import Tuple

import numpy as np

import flowvision.backend as flow
from flowvision.backend import Tensor, _C

from ._utils import _upcast

__all__ = ["nms", "batched_nms", "remove_small_boxes", "clip_boxes_to_image", "box_convert", "box_area", "box_iou",
           "generalized_box_iou", "distance_box_iou", "complete_box_iou", "masks_to_boxes"]

_AXIS_FMTS = ("xyxy", "xywh", "cxcywh")


def _check_boxes(boxes, name, fn):
    if not isinstance(boxes, Tensor):
        raise TypeError(f"{fn}(): '{name}' must be a Tensor, got {type(boxes).__name__}")
    if boxes.ndim < 1 or boxes.shape[-1] != 4:
        raise ValueError(f"{fn}(): '{name}' must have shape [..., 4], got {list(boxes.shape)}")


def nms(boxes: flow.Tensor, scores: flow.Tensor, iou_threshold: float) -> flow.Tensor:
    """Greedy non-maximum suppression (compiled kernel). Returns the kept indices (int64), by decreasing score.

    Ties in score keep their input order (torchvision's stable sort).

    Args:
        boxes: Tensor[N, 4] of xyxy boxes.
        scores: Tensor[N] of box scores.
        iou_threshold: boxes overlapping a kept box with IoU above this are discarded.

    Returns:
        Tensor[K] (int64): indices of the kept boxes, by decreasing score.

    Raises:
        TypeError: if ``boxes`` or ``scores`` is not a Tensor.
        ValueError: if ``boxes`` is not [N, 4] or ``scores`` not [N].
    """
    if not isinstance(boxes, Tensor) or not isinstance(scores, Tensor):
        raise TypeError("nms(): boxes and scores must be Tensors")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"nms(): boxes should have shape [N, 4], got {list(boxes.shape)}")
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError(f"nms(): scores should have shape [N] with N = {boxes.shape[0]}, got {list(scores.shape)}")
    if boxes.is_cuda or scores.is_cuda:  # the IoU bitmask kernel on the device (loaded only once CUDA is in use)
        if not (boxes.is_cuda and scores.is_cuda):
            raise RuntimeError("nms(): boxes and scores must be on the same device")
        from flowvision.backend._cuda.dispatch import nms as _nms_cuda
        return _nms_cuda(boxes, scores, iou_threshold)
    b = boxes.detach().float().numpy() if boxes.dtype not in (flow.float32, flow.float64) else boxes.detach().numpy()
    s = scores.detach().numpy() if scores.dtype in (flow.float32, flow.float64) else scores.detach().float().numpy()
    if b.dtype != s.dtype:
        b, s = b.astype(np.float64), s.astype(np.float64)
    keep = _C.nms(np.ascontiguousarray(b), np.ascontiguousarray(s), float(iou_threshold))
    return flow.from_numpy(keep)


def batched_nms(boxes: flow.Tensor, scores: flow.Tensor, idxs: flow.Tensor, iou_threshold: float) -> flow.Tensor:
    """NMS done independently per category ``idxs``: torchvision's coordinate-offset trick (a per-class loop above
    4000 boxes, as torchvision on CPU). Returns indices sorted by decreasing score.

    Args:
        boxes: Tensor[N, 4] of xyxy boxes.
        scores: Tensor[N] of box scores.
        idxs: Tensor[N] of category indices; boxes of different categories never suppress each other.
        iou_threshold: the IoU above which a box is discarded.

    Returns:
        Tensor[K] (int64): indices of the kept boxes.
    """
    if boxes.numel() > 4000:
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return flow.empty((0,), dtype=flow.int64)
    if idxs.shape[0] != boxes.shape[0]:
        raise ValueError(f"batched_nms(): idxs has {idxs.shape[0]} entries for {boxes.shape[0]} boxes")
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes.dtype) * (max_coordinate + flow.tensor(1, dtype=boxes.dtype))
    boxes_for_nms = boxes + offsets[:, None]
    return nms(boxes_for_nms, scores, iou_threshold)


def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
    b = boxes.detach()
    s = scores.detach()
    ids = idxs.detach().numpy()
    keep_mask = np.zeros(ids.shape[0], dtype=bool)
    for class_id in np.unique(ids):
        cur = np.nonzero(ids == class_id)[0]
        k = nms(b[flow.from_numpy(cur)], s[flow.from_numpy(cur)], iou_threshold).numpy()
        keep_mask[cur[k]] = True
    keep = np.nonzero(keep_mask)[0]
    sv = s.float().numpy()[keep] if s.dtype not in (flow.float32, flow.float64) else s.numpy()[keep]
    order = np.argsort(-sv, kind="stable")
    return flow.from_numpy(keep[order].astype(np.int64))


def remove_small_boxes(boxes: flow.Tensor, min_size: float) -> flow.Tensor:
    """Indices of the boxes whose both sides are >= ``min_size``.

    Args:
        boxes: Tensor[N, 4] of xyxy boxes.
        min_size: the minimum width and height.

    Returns:
        Tensor[K] (int64): indices of the boxes kept.
    """
    _check_boxes(boxes, "boxes", "remove_small_boxes")
    ws, hs = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return flow.where(keep)[0]


def clip_boxes_to_image(boxes: flow.Tensor, size: Tuple[int, int]) -> flow.Tensor:
    """Clip xyxy boxes to an image of ``size = (height, width)``.

    Args:
        boxes: Tensor[..., 4] of xyxy boxes.
        size: ``(height, width)`` of the image.

    Returns:
        The clipped boxes, of the shape of ``boxes``.
    """
    _check_boxes(boxes, "boxes", "clip_boxes_to_image")
    dim = boxes.dim()
    height, width = size
    boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
    boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return flow.stack((boxes_x, boxes_y), dim=dim).reshape(boxes.shape)


def _xywh_to_xyxy(b):
    x, y, w, h = b.unbind(-1)
    return flow.stack([x, y, x + w, y + h], dim=-1)


def _cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return flow.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def _xyxy_to_xywh(b):
    x1, y1, x2, y2 = b.unbind(-1)
    return flow.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)


def _xyxy_to_cxcywh(b):
    x1, y1, x2, y2 = b.unbind(-1)
    return flow.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)


def box_convert(boxes: flow.Tensor, in_fmt: str, out_fmt: str) -> flow.Tensor:
    """Convert boxes between 'xyxy', 'xywh' and 'cxcywh'.

    Args:
        boxes: Tensor[..., 4].
        in_fmt: format of ``boxes``: ``"xyxy"``, ``"xywh"`` or ``"cxcywh"``.
        out_fmt: format of the result.

    Returns:
        The converted boxes.

    Raises:
        ValueError: for an unsupported format.
    """
    if in_fmt not in _AXIS_FMTS or out_fmt not in _AXIS_FMTS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt} "
                         f"(supported: {', '.join(_AXIS_FMTS)})")
    _check_boxes(boxes, "boxes", "box_convert")
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt == "xywh":
        boxes = _xywh_to_xyxy(boxes)
    elif in_fmt == "cxcywh":
        boxes = _cxcywh_to_xyxy(boxes)
    if out_fmt == "xywh":
        boxes = _xyxy_to_xywh(boxes)
    elif out_fmt == "cxcywh":
        boxes = _xyxy_to_cxcywh(boxes)
    return boxes


def box_area(boxes: flow.Tensor, fmt: str = "xyxy") -> flow.Tensor:
    """Area of each box; small float / int dtypes are upcast first (float32 / int32), as torchvision.

    Args:
        boxes: Tensor[..., 4].
        fmt: format of ``boxes`` (``"xyxy"``, ``"xywh"`` or ``"cxcywh"``).

    Returns:
        Tensor[...] of areas.

    Raises:
        ValueError: for an unsupported format.
    """
    if fmt not in _AXIS_FMTS:
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    _check_boxes(boxes, "boxes", "box_area")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _box_inter_union(boxes1, boxes2, fmt="xyxy"):
    area1 = box_area(boxes1, fmt=fmt)
    area2 = box_area(boxes2, fmt=fmt)
    if fmt == "xyxy":
        lt = flow.maximum(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = flow.minimum(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    elif fmt == "xywh":
        lt = flow.maximum(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = flow.minimum(boxes1[..., None, :2] + boxes1[..., None, 2:], boxes2[..., None, :, :2] + boxes2[..., None, :, 2:])
    else:
        lt = flow.maximum(boxes1[..., None, :2] - boxes1[..., None, 2:] / 2,
                          boxes2[..., None, :, :2] - boxes2[..., None, :, 2:] / 2)
        rb = flow.minimum(boxes1[..., None, :2] + boxes1[..., None, 2:] / 2,
                          boxes2[..., None, :, :2] + boxes2[..., None, :, 2:] / 2)
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - inter
    return inter, union


def box_iou(boxes1: flow.Tensor, boxes2: flow.Tensor, fmt: str = "xyxy") -> flow.Tensor:
    """Pairwise IoU: [..., N, 4] x [..., M, 4] -> [..., N, M].

    Args:
        boxes1: Tensor[..., N, 4].
        boxes2: Tensor[..., M, 4].
        fmt: format of both box sets (``"xyxy"``, ``"xywh"`` or ``"cxcywh"``).

    Returns:
        Tensor[..., N, M] of IoU values.

    Raises:
        ValueError: for an unsupported format.
    """
    if fmt not in _AXIS_FMTS:
        raise ValueError(f"Unsupported format '{fmt}'. Supported axis-aligned formats: {_AXIS_FMTS} "
                         "(rotated boxes are not implemented)")
    _check_boxes(boxes1, "boxes1", "box_iou")
    _check_boxes(boxes2, "boxes2", "box_iou")
    inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
    return inter / union


def generalized_box_iou(boxes1: flow.Tensor, boxes2: flow.Tensor) -> flow.Tensor:
    """Pairwise generalized IoU (GIoU, in [-1, 1]) of two sets of ``(x1, y1, x2, y2)`` boxes, like torchvision's.

    Args:
        boxes1: (N, 4) boxes.
        boxes2: (M, 4) boxes.

    Returns:
        (N, M) tensor: entry (i, j) compares ``boxes1[i]`` and ``boxes2[j]`` (integer boxes are upcast).

    Raises:
        ValueError: a box set is not (K, 4).
    """
    _check_boxes(boxes1, "boxes1", "generalized_box_iou")
    _check_boxes(boxes2, "boxes2", "generalized_box_iou")
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = flow.minimum(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = flow.maximum(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai


def _box_diou_iou(boxes1, boxes2, eps=1e-7):
    iou = box_iou(boxes1, boxes2)
    lti = flow.minimum(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = flow.maximum(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    diag2 = (whi[..., 0] ** 2) + (whi[..., 1] ** 2) + eps
    x_p = (boxes1[..., 0] + boxes1[..., 2]) / 2
    y_p = (boxes1[..., 1] + boxes1[..., 3]) / 2
    x_g = (boxes2[..., 0] + boxes2[..., 2]) / 2
    y_g = (boxes2[..., 1] + boxes2[..., 3]) / 2
    cd2 = (_upcast(x_p[..., None] - x_g[..., None, :]) ** 2) + (_upcast(y_p[..., None] - y_g[..., None, :]) ** 2)
    return iou - (cd2 / diag2), iou


def distance_box_iou(boxes1: flow.Tensor, boxes2: flow.Tensor, eps: float = 1e-7) -> flow.Tensor:
    """Pairwise distance IoU (DIoU: IoU minus the normalised squared centre distance), like torchvision's.

    Boxes are ``(x1, y1, x2, y2)``.

    Args:
        boxes1: (N, 4) boxes.
        boxes2: (M, 4) boxes.
        eps: added to denominators against division by zero.

    Returns:
        (N, M) tensor: entry (i, j) compares ``boxes1[i]`` and ``boxes2[j]`` (integer boxes are upcast).

    Raises:
        ValueError: a box set is not (K, 4).
    """
    _check_boxes(boxes1, "boxes1", "distance_box_iou")
    _check_boxes(boxes2, "boxes2", "distance_box_iou")
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    return _box_diou_iou(boxes1, boxes2, eps=eps)[0]


def complete_box_iou(boxes1: flow.Tensor, boxes2: flow.Tensor, eps: float = 1e-7) -> flow.Tensor:
    """Pairwise complete IoU (CIoU: DIoU minus an aspect-ratio consistency term), like torchvision's.

    Boxes are ``(x1, y1, x2, y2)``.

    Args:
        boxes1: (N, 4) boxes.
        boxes2: (M, 4) boxes.
        eps: added to denominators against division by zero.

    Returns:
        (N, M) tensor: entry (i, j) compares ``boxes1[i]`` and ``boxes2[j]`` (integer boxes are upcast).

    Raises:
        ValueError: a box set is not (K, 4).
    """
    _check_boxes(boxes1, "boxes1", "complete_box_iou")
    _check_boxes(boxes2, "boxes2", "complete_box_iou")
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[..., None, 2] - boxes1[..., None, 0]
    h_pred = boxes1[..., None, 3] - boxes1[..., None, 1]
    w_gt = boxes2[..., None, :, 2] - boxes2[..., None, :, 0]
    h_gt = boxes2[..., None, :, 3] - boxes2[..., None, :, 1]
    v = (4 / (math.pi ** 2)) * flow.pow(flow.atan(w_pred / h_pred) - flow.atan(w_gt / h_gt), 2)
    with flow.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def masks_to_boxes(masks: flow.Tensor) -> flow.Tensor:
    """Tight xyxy boxes (float32) around each of N masks [N, H, W]; empty masks give [0, 0, 0, 0].

    Args:
        masks: Tensor[N, H, W]; non-zero pixels belong to the object.

    Returns:
        Tensor[N, 4] (float32) of xyxy boxes.

    Raises:
        TypeError: if ``masks`` is not a Tensor.
        ValueError: if ``masks`` is not 3-dimensional.
    """
    if not isinstance(masks, Tensor):
        raise TypeError(f"masks_to_boxes(): masks must be a Tensor, got {type(masks).__name__}")
    if masks.numel() == 0:
        return flow.zeros((0, 4), dtype=flow.float32)
    if masks.ndim != 3:
        raise ValueError(f"masks_to_boxes(): masks must have shape [N, H, W], got {list(masks.shape)}")
    m = masks.detach().numpy().astype(bool)
    n, h, w = m.shape
    rows = m.any(axis=2)
    cols = m.any(axis=1)
    empty = ~rows.any(axis=1)
    y1 = rows.argmax(axis=1)
    x1 = cols.argmax(axis=1)
    y2 = (h - 1) - rows[:, ::-1].argmax(axis=1)
    x2 = (w - 1) - cols[:, ::-1].argmax(axis=1)
    out = np.stack([x1, y1, x2, y2], axis=1).astype(np.float32)
    out[empty] = 0
    return flow.from_numpy(out)
