"""v2 erasing and batch mixing: RandomErasing, MixUp and CutMix."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from PIL import Image as _PILImage

from .. import _random
from .. import transforms as T1
from .. import _functional_tensor as F_t
from . import functional as F
from . import tv_tensors
from ._transform import (Transform, _RandomApplyTransform, has_any, is_pure_tensor, query_chw, query_size, tree_flatten,
                         tree_unflatten)
from .tv_tensors import BoundingBoxes, Mask, Video
from ._meta import _parse_labels_getter


class RandomErasing(_RandomApplyTransform):
    """Erase a random rectangle of images and videos with probability ``p`` (boxes and masks are left alone).

    Args:
        p (float): probability of erasing. Default ``0.5``.
        scale (sequence of 2 float): range of the erased area as a fraction of the image. Default ``(0.02, 0.33)``.
        ratio (sequence of 2 float): range of the rectangle's aspect ratio. Default ``(0.3, 3.3)``.
        value (number, sequence or str): erasing value, one per channel, or ``"random"`` for normal noise.
            Default ``0.0``.
        inplace (bool): erase in place. Default ``False``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.RandomErasing`.
    """

    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor", BoundingBoxes, Mask)

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3),
                 value: float | Sequence[float] | str = 0.0, inplace: bool = False) -> None:
        v1 = T1.RandomErasing(p, scale, ratio, value, inplace)
        super().__init__(p=p)
        self.scale, self.ratio, self.value, self.inplace = v1.scale, v1.ratio, value, inplace
        if isinstance(value, (int, float)):
            self._fill: list[float] | None = [float(value)]
        elif isinstance(value, str):
            self._fill = None
        else:
            self._fill = [float(v) for v in value]

    def make_params(self, flat_inputs):
        c, h, w = query_chw(flat_inputs)
        if self._fill is not None and len(self._fill) not in (1, c):
            raise ValueError(f"If value is a sequence, it should have either a single value or {c} "
                             "(number of inpt channels)")
        i, j, eh, ew, v = T1.RandomErasing.get_params(np.empty((h, w, c), np.uint8), self.scale, self.ratio,
                                                      self._fill)
        if isinstance(v, np.ndarray) and v.shape == (h, w, c):
            return dict(i=None)
        return dict(i=i, j=j, h=eh, w=ew, v=v)

    def transform(self, inpt, params):
        if params["i"] is None or isinstance(inpt, (BoundingBoxes, Mask)):
            return inpt
        return F.erase(inpt, params["i"], params["j"], params["h"], params["w"], params["v"], self.inplace)


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None,
                 labels_getter: str | Callable[[Any], Any] | None = "default") -> None:
        if alpha <= 0:
            raise ValueError(f"alpha should be positive, got {alpha}")
        self.alpha = float(alpha)
        self.num_classes = num_classes
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = tree_flatten(inputs)
        needs = self._needs_transform_list(flat)
        if has_any(flat, _PILImage.Image, BoundingBoxes, Mask):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding boxes and masks.")
        labels = self._labels_getter(inputs)
        if not F_t.is_tensor(labels):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        lab = F_t.to_numpy(labels)
        if lab.ndim not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or probability based with shape "
                             f"(batch_size, num_classes), but got a tensor of shape {tuple(lab.shape)} instead.")
        if lab.ndim == 2 and self.num_classes is not None and lab.shape[-1] != self.num_classes:
            raise ValueError(f"When passing 2D labels, the number of elements in last dimension must match "
                             f"num_classes: {lab.shape[-1]} != {self.num_classes}. You can Leave num_classes to None.")
        if lab.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        if lab.ndim == 1 and lab.dtype.kind not in "iu":
            raise TypeError(f"index-based (1D) labels must be integers, got {lab.dtype}")
        params = {"labels": labels, "batch_size": lab.shape[0],
                  **self.make_params([x for x, n in zip(flat, needs) if n])}
        idx = next(i for i, x in enumerate(flat) if x is labels)
        needs[idx] = True
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return tree_unflatten(out, spec)

    def _check_image(self, arr, is_video, batch_size):
        expected = 5 if is_video else 4
        if arr.ndim != expected:
            raise ValueError(f"Expected a batched input with {expected} dims, but got {arr.ndim} dimensions instead.")
        if arr.shape[0] != batch_size:
            raise ValueError(f"The batch size of the image or video does not match the batch size of the labels: "
                             f"{arr.shape[0]} != {batch_size}.")

    def _mix_label(self, label, lam):
        lab = F_t.to_numpy(label)
        if lab.ndim == 1:
            if lab.size and (lab.min() < 0 or lab.max() >= self.num_classes):
                raise ValueError(f"labels should be in [0, {self.num_classes}), got {lab.min()}..{lab.max()}")
            onehot = np.zeros((lab.shape[0], self.num_classes), np.int64)
            onehot[np.arange(lab.shape[0]), lab] = 1
            lab = onehot
        lab = lab.astype(np.float32) if lab.dtype.kind != "f" else lab
        out = np.roll(lab, 1, 0) * lab.dtype.type(1.0 - lam) + lab * lab.dtype.type(lam)
        return F_t.from_numpy(out.astype(lab.dtype))


class MixUp(_BaseMixUpCutMix):
    """MixUp (arXiv:1710.09412) on a batch: blend each sample and its label with the batch rolled by one.

    The mixing weight is drawn from ``Beta(alpha, alpha)``. Images must be float.

    Args:
        alpha (float): parameter of the Beta distribution, positive. Default ``1.0``.
        num_classes (int, optional): number of classes; needed for index (1-D) labels. Default ``None``.
        labels_getter (str, callable or None): how to find the labels (as :class:`SanitizeBoundingBoxes`).
            Default ``"default"``.

    Raises:
        ValueError: if ``alpha`` is not positive; at call time, for PIL images/boxes/masks, unbatched input or labels
            that do not match.
    """

    def make_params(self, flat_inputs):
        return dict(lam=_random.beta(self.alpha, self.alpha))

    def transform(self, inpt, params):
        lam = params["lam"]
        if inpt is params["labels"]:
            return self._mix_label(inpt, lam)
        if isinstance(inpt, (tv_tensors.Image, Video)) or is_pure_tensor(inpt):
            a = F_t.to_numpy(F._plain(inpt))
            self._check_image(a, isinstance(inpt, Video), params["batch_size"])
            if a.dtype.kind != "f":
                raise TypeError(f"MixUp expects float images, got {a.dtype} (use ToDtype(float32, scale=True))")
            out = np.roll(a, 1, 0) * a.dtype.type(1.0 - lam) + a * a.dtype.type(lam)
            return F._rewrap(F_t.from_numpy(out.astype(a.dtype)), inpt)
        return inpt


class CutMix(_BaseMixUpCutMix):
    """CutMix (arXiv:1905.04899) on a batch: paste a random box from the batch rolled by one, mix labels by area.

    The box area is drawn from ``Beta(alpha, alpha)``.

    Args:
        alpha (float): parameter of the Beta distribution, positive. Default ``1.0``.
        num_classes (int, optional): number of classes; needed for index (1-D) labels. Default ``None``.
        labels_getter (str, callable or None): how to find the labels (as :class:`SanitizeBoundingBoxes`).
            Default ``"default"``.

    Raises:
        ValueError: if ``alpha`` is not positive; at call time, for PIL images/boxes/masks, unbatched input or labels
            that do not match.
    """

    def make_params(self, flat_inputs):
        lam = _random.beta(self.alpha, self.alpha)
        h, w = query_size(flat_inputs)
        r_x = _random.randint(0, w)
        r_y = _random.randint(0, h)
        r = 0.5 * math.sqrt(1.0 - lam)
        rw, rh = int(r * w), int(r * h)
        x1, y1 = max(r_x - rw, 0), max(r_y - rh, 0)
        x2, y2 = min(r_x + rw, w), min(r_y + rh, h)
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))
        return dict(box=(x1, y1, x2, y2), lam_adjusted=lam_adjusted)

    def transform(self, inpt, params):
        if inpt is params["labels"]:
            return self._mix_label(inpt, params["lam_adjusted"])
        if isinstance(inpt, (tv_tensors.Image, Video)) or is_pure_tensor(inpt):
            a = F_t.to_numpy(F._plain(inpt))
            self._check_image(a, isinstance(inpt, Video), params["batch_size"])
            x1, y1, x2, y2 = params["box"]
            out = a.copy()
            out[..., y1:y2, x1:x2] = np.roll(a, 1, 0)[..., y1:y2, x1:x2]
            return F._rewrap(F_t.from_numpy(out), inpt)
        return inpt
