"""Detection losses with torchvision.ops' names and formulas: sigmoid_focal_loss and the
generalized / distance / complete box-IoU losses (elementwise over paired boxes)."""
import math

import flowvision.backend as flow
import flowvision.backend.nn.functional as F

from ._utils import _reduce, _upcast_non_float

__all__ = ["sigmoid_focal_loss", "generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss"]


def sigmoid_focal_loss(inputs: flow.Tensor, targets: flow.Tensor, alpha: float = 0.25, gamma: float = 2,
                       reduction: str = "none") -> flow.Tensor:
    """Focal loss (RetinaNet): ``alpha_t * (1 - p_t) ** gamma * BCE``; ``alpha=-1`` disables the weighting.

    Args:
        inputs: logits, any shape.
        targets: binary targets (0 or 1), of the shape of ``inputs``.
        alpha: weight of the positive class in ``[0, 1]``, or ``-1`` for none.
        gamma: focusing exponent on ``(1 - p_t)``.
        reduction: ``"none"``, ``"mean"`` or ``"sum"``.

    Returns:
        The loss, of the shape of ``inputs`` with ``reduction="none"``, else a scalar.

    Raises:
        ValueError: for an ``alpha`` out of range, mismatched shapes or an unknown ``reduction``.
    """
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore.")
    if tuple(inputs.shape) != tuple(targets.shape):
        raise ValueError(f"sigmoid_focal_loss(): inputs {list(inputs.shape)} and targets {list(targets.shape)} "
                         "must have the same shape")
    p = flow.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    return _reduce(loss, reduction, empty_safe_mean=False)


def _loss_inter_union(boxes1, boxes2):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = flow.maximum(x1, x1g)
    ykis1 = flow.maximum(y1, y1g)
    xkis2 = flow.minimum(x2, x2g)
    ykis2 = flow.minimum(y2, y2g)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    # torchvision writes the product only where the boxes overlap; where() gives the same values and gradients
    intsctk = flow.where(mask, (xkis2 - xkis1) * (ykis2 - ykis1), flow.zeros_like(x1))
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def _check_pair(boxes1, boxes2, fn):
    if boxes1.shape[-1] != 4 or tuple(boxes1.shape) != tuple(boxes2.shape):
        raise ValueError(f"{fn}(): boxes1 {list(boxes1.shape)} and boxes2 {list(boxes2.shape)} must both have "
                         "shape [..., 4]")


def generalized_box_iou_loss(boxes1: flow.Tensor, boxes2: flow.Tensor, reduction: str = "none",
                             eps: float = 1e-7) -> flow.Tensor:
    """Generalized IoU loss between matching ``(x1, y1, x2, y2)`` boxes, like torchvision's.

    Args:
        boxes1: (N, 4) predicted boxes.
        boxes2: (N, 4) target boxes, matched element-wise with ``boxes1``.
        reduction: ``"none"`` (per box), ``"mean"`` or ``"sum"``.
        eps: added to denominators against division by zero.

    Returns:
        The loss: shape (N,) for ``"none"``, else a scalar.

    Raises:
        ValueError: mismatched shapes or an unknown ``reduction``.
    """
    _check_pair(boxes1, boxes2, "generalized_box_iou_loss")
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    iouk = intsctk / (unionk + eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xc1, yc1 = flow.minimum(x1, x1g), flow.minimum(y1, y1g)
    xc2, yc2 = flow.maximum(x2, x2g), flow.maximum(y2, y2g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    miouk = iouk - ((area_c - unionk) / (area_c + eps))
    return _reduce(1 - miouk, reduction)


def _diou_iou_loss(boxes1, boxes2, eps=1e-7):
    intsct, union = _loss_inter_union(boxes1, boxes2)
    iou = intsct / (union + eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xc1, yc1 = flow.minimum(x1, x1g), flow.minimum(y1, y1g)
    xc2, yc2 = flow.maximum(x2, x2g), flow.maximum(y2, y2g)
    diag2 = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    x_p, y_p = (x2 + x1) / 2, (y2 + y1) / 2
    x_g, y_g = (x1g + x2g) / 2, (y1g + y2g) / 2
    cd2 = ((x_p - x_g) ** 2) + ((y_p - y_g) ** 2)
    return 1 - iou + (cd2 / diag2), iou


def distance_box_iou_loss(boxes1: flow.Tensor, boxes2: flow.Tensor, reduction: str = "none",
                          eps: float = 1e-7) -> flow.Tensor:
    """Distance IoU loss between matching ``(x1, y1, x2, y2)`` boxes, like torchvision's.

    Args:
        boxes1: (N, 4) predicted boxes.
        boxes2: (N, 4) target boxes, matched element-wise with ``boxes1``.
        reduction: ``"none"`` (per box), ``"mean"`` or ``"sum"``.
        eps: added to denominators against division by zero.

    Returns:
        The loss: shape (N,) for ``"none"``, else a scalar.

    Raises:
        ValueError: mismatched shapes or an unknown ``reduction``.
    """
    _check_pair(boxes1, boxes2, "distance_box_iou_loss")
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    loss, _ = _diou_iou_loss(boxes1, boxes2, eps)
    return _reduce(loss, reduction)


def complete_box_iou_loss(boxes1: flow.Tensor, boxes2: flow.Tensor, reduction: str = "none",
                          eps: float = 1e-7) -> flow.Tensor:
    """Complete IoU loss between matching ``(x1, y1, x2, y2)`` boxes, like torchvision's.

    Args:
        boxes1: (N, 4) predicted boxes.
        boxes2: (N, 4) target boxes, matched element-wise with ``boxes1``.
        reduction: ``"none"`` (per box), ``"mean"`` or ``"sum"``.
        eps: added to denominators against division by zero.

    Returns:
        The loss: shape (N,) for ``"none"``, else a scalar.

    Raises:
        ValueError: mismatched shapes or an unknown ``reduction``.
    """
    _check_pair(boxes1, boxes2, "complete_box_iou_loss")
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2)  # torchvision uses the default eps here
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    w_pred, h_pred = x2 - x1, y2 - y1
    w_gt, h_gt = x2g - x1g, y2g - y1g
    v = (4 / (math.pi ** 2)) * flow.pow(flow.atan(w_gt / h_gt) - flow.atan(w_pred / h_pred), 2)
    with flow.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou_loss + alpha * v, reduction)
