"""MultiScaleRoIAlign with torchvision's LevelMapper (FPN paper eq. 1: canonical scale 224 at level 4)."""

from typing import List, Tuple, Union

import numpy as np

import flowvision.backend as flow
from flowvision.backend import nn

from .boxes import box_area
from .roi_align import roi_align

__all__ = ["MultiScaleRoIAlign", "LevelMapper", "initLevelMapper"]


class LevelMapper:
    """Map each RoI to an FPN level: k = clamp(floor(k0 + log2(sqrt(area) / s0) + eps), k_min, k_max) - k_min."""

    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        s = flow.sqrt(flow.cat([box_area(b.detach()) for b in boxlists])).numpy()
        dt = s.dtype.type
        t = np.floor(dt(self.lvl0) + np.log2(s / dt(self.s0)) + dt(self.eps))
        t = np.clip(t, self.k_min, self.k_max)
        return flow.from_numpy(t.astype(np.int64) - self.k_min)


def initLevelMapper(k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _convert_to_roi_format(boxes):
    concat = flow.cat(list(boxes), dim=0)
    ids = flow.cat([flow.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return flow.cat([ids, concat], dim=1)


def _infer_scale(feature, original_size):
    size = feature.shape[-2:]
    scales = []
    for s1, s2 in zip(size, original_size):
        approx = np.float32(float(s1) / float(s2))
        scales.append(2 ** float(np.round(np.log2(approx))))
    return scales[0]


def _setup_scales(features, image_shapes, canonical_scale, canonical_level):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_x = max(int(s[0]) for s in image_shapes)
    max_y = max(int(s[1]) for s in image_shapes)
    scales = [_infer_scale(f, (max_x, max_y)) for f in features]
    lvl_min = -float(np.log2(np.float32(scales[0])))
    lvl_max = -float(np.log2(np.float32(scales[-1])))
    return scales, initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                   canonical_level=canonical_level)


class MultiScaleRoIAlign(nn.Module):
    """RoIAlign over the FPN level each box maps to. ``forward(x: dict[str, Tensor], boxes: list[Tensor[N, 4]],
    image_shapes: list[(H, W)])`` -> Tensor[K, C, *output_size].

    Args:
        featmap_names: keys of the feature maps of ``x`` to pool from.
        output_size: ``(h, w)`` of the pooled output, or an int for a square one.
        sampling_ratio: sampling points per bin (``<= 0``: adaptive), as in :func:`roi_align`.
        canonical_scale: box size mapped to ``canonical_level`` (FPN paper's 224).
        canonical_level: the FPN level of a box of ``canonical_scale``.
    """

    def __init__(self, featmap_names: List[str], output_size: Union[int, Tuple[int, int], List[int]],
                 sampling_ratio: int, *, canonical_scale: int = 224, canonical_level: int = 4) -> None:
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x, boxes, image_shapes):
        x_filtered = [v for k, v in x.items() if k in self.featmap_names]
        if not x_filtered:
            raise ValueError(f"MultiScaleRoIAlign: none of {self.featmap_names} is in the features ({list(x)})")
        if len(boxes) != x_filtered[0].shape[0]:
            raise ValueError(f"MultiScaleRoIAlign: got {len(boxes)} box tensors for a batch of "
                             f"{x_filtered[0].shape[0]} images")
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes, self.canonical_scale,
                                                         self.canonical_level)
        rois = _convert_to_roi_format(boxes)
        if len(x_filtered) == 1:
            return roi_align(x_filtered[0], rois, self.output_size, self.scales[0], self.sampling_ratio)
        levels = self.map_levels(boxes).numpy()
        parts, order = [], []
        for level, (feat, scale) in enumerate(zip(x_filtered, self.scales)):
            idx = np.nonzero(levels == level)[0]
            if idx.size == 0:
                continue
            parts.append(roi_align(feat, rois[flow.from_numpy(idx)], self.output_size, scale, self.sampling_ratio))
            order.append(idx)
        if not parts:
            c = x_filtered[0].shape[1]
            return flow.zeros((0, c) + self.output_size, dtype=x_filtered[0].dtype)
        out = flow.cat(parts, 0) if len(parts) > 1 else parts[0]
        inv = np.empty(levels.shape[0], dtype=np.int64)
        inv[np.concatenate(order)] = np.arange(levels.shape[0])
        return flow.index_select(out, 0, flow.from_numpy(inv))

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, output_size={self.output_size}, "
                f"sampling_ratio={self.sampling_ratio})")
