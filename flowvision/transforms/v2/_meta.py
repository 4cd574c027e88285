"""v2 bounding-box transforms: format conversion, clamping and sanitizing (with the labels that go with the
boxes).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _functional_tensor as F_t
from . import functional as F
from . import tv_tensors
from ._transform import Transform, get_bounding_boxes, is_pure_tensor, tree_flatten, tree_unflatten
from .tv_tensors import BoundingBoxes, Mask


class ConvertBoundingBoxFormat(Transform):
    """Convert bounding boxes to another format.

    Args:
        format (BoundingBoxFormat or str): target format (``"XYXY"``, ``"XYWH"`` or ``"CXCYWH"``).
    """

    _transformed_types = (BoundingBoxes,)

    def __init__(self, format: Any) -> None:
        self.format = tv_tensors._parse_format(format)

    def transform(self, inpt, params):
        return F.convert_bounding_box_format(inpt, new_format=self.format)


class ClampBoundingBoxes(Transform):
    """Clamp bounding boxes to their canvas.

    Args:
        clamping_mode (str, optional): ``"soft"``, ``"hard"``, ``None`` (no clamping) or ``"auto"`` (each box
            tensor's own mode). Default ``"auto"``.
    """

    _transformed_types = (BoundingBoxes,)

    def __init__(self, clamping_mode: str | None = "auto") -> None:
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        return F.clamp_bounding_boxes(inpt, clamping_mode=self.clamping_mode)


def _find_labels_default(inputs):
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if is_pure_tensor(inputs):
        return inputs
    if not isinstance(inputs, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward must be a dictionary or "
                         f"a two-tuple whose second item is a dictionary or a tensor, but got {type(inputs)} instead.")
    key = next((k for k in inputs if isinstance(k, str) and k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs if isinstance(k, str) and "label" in k.lower()), None)
    if key is None:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a callable as the "
                         "labels_getter parameter? If there are no labels in the sample by design, pass "
                         "labels_getter=None.")
    return inputs[key]


def _parse_labels_getter(labels_getter):
    if labels_getter == "default":
        return _find_labels_default
    if callable(labels_getter):
        return labels_getter
    if labels_getter is None:
        return lambda _: None
    raise ValueError(f"labels_getter should either be 'default', a callable, or None, but got {labels_getter}.")


class SanitizeBoundingBoxes(Transform):
    """Remove degenerate boxes (too small or outside the canvas) and the matching labels and masks.

    Args:
        min_size (float): minimum width and height of a kept box, ``>= 1``. Default ``1.0``.
        min_area (float): minimum area of a kept box, ``>= 1``. Default ``1.0``.
        labels_getter (str, callable or None): how to find the labels: ``"default"`` takes the ``"labels"`` key
            (case-insensitive; else the first key containing "label") of a dict sample, or of the second item of a
            2-tuple sample (a tensor there is the labels); a callable takes the sample; ``None`` sanitizes boxes only.
            Default ``"default"``.

    Raises:
        ValueError: if ``min_size``/``min_area`` is below 1 or ``labels_getter`` is invalid; at call time, if the
            labels cannot be found or do not match the boxes.
    """

    def __init__(self, min_size: float = 1.0, min_area: float = 1.0,
                 labels_getter: str | Callable[[Any], Any] | None = "default") -> None:
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_size, self.min_area = min_size, min_area
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        labels = self._labels_getter(inputs)
        if labels is not None:
            if F_t.is_tensor(labels) or isinstance(labels, np.ndarray):
                labels = (labels,)
            elif isinstance(labels, (tuple, list)):
                for e in labels:
                    if not (F_t.is_tensor(e) or isinstance(e, np.ndarray)):
                        raise ValueError(f"The labels in the input to forward() must be a tensor or None, got "
                                         f"{type(e)} instead.")
            else:
                raise ValueError(f"The labels in the input to forward() must be a tensor or None, got {type(labels)}"
                                 " instead.")
        flat, spec = tree_flatten(inputs)
        boxes = get_bounding_boxes(flat)
        if labels is not None:
            for lab in labels:
                if boxes.shape[0] != lab.shape[0]:
                    raise ValueError(f"Number of boxes (shape={tuple(boxes.shape)}) and must match the number of "
                                     f"labels. Found labels with shape={tuple(lab.shape)}).")
        valid = F._sanitize_mask(F._boxes_np(boxes), boxes.format, boxes.canvas_size, self.min_size, self.min_area)
        out = []
        for x in flat:
            is_label = labels is not None and any(x is lab for lab in labels)
            if not (is_label or isinstance(x, (BoundingBoxes, Mask))):
                out.append(x)
                continue
            arr = x if isinstance(x, np.ndarray) else F._plain(x).numpy()
            if arr.shape[0] != valid.shape[0]:
                out.append(x)
                continue
            kept = arr[valid]
            if isinstance(x, np.ndarray):
                out.append(kept)
            elif is_label and not isinstance(x, tv_tensors.TVTensor):
                out.append(F_t.from_numpy(kept))
            else:
                out.append(tv_tensors.wrap(kept, like=x))
        return tree_unflatten(out, spec)
