"""AnchorGenerator (Faster R-CNN / RetinaNet) and DefaultBoxGenerator (SSD) with torchvision's anchor arithmetic."""
import math

import numpy as np

import flowvision.backend as flow
from flowvision.backend import nn

__all__ = ["AnchorGenerator", "DefaultBoxGenerator"]


class AnchorGenerator(nn.Module):
    """Anchors for each feature map: ``sizes[i] x aspect_ratios[i]`` (aspect ratio = height / width) cell anchors,
    shifted over the map with stride ``image_size // feature_size``. ``forward(image_list, feature_maps)`` ->
    one Tensor[sum(H_i * W_i * A_i), 4] per image."""

    def __init__(self, sizes=((128, 256, 512),), aspect_ratios=((0.5, 1.0, 2.0),)):
        super().__init__()
        if not isinstance(sizes[0], (list, tuple)):
            sizes = tuple((s,) for s in sizes)
        if not isinstance(aspect_ratios[0], (list, tuple)):
            aspect_ratios = (aspect_ratios,) * len(sizes)
        if len(sizes) != len(aspect_ratios):
            raise ValueError(f"sizes ({len(sizes)} levels) and aspect_ratios ({len(aspect_ratios)} levels) differ")
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]

    def generate_anchors(self, scales, aspect_ratios, dtype=flow.float32, device=None):
        npdt = dtype.np
        scales = np.asarray(scales, dtype=npdt)
        aspect_ratios = np.asarray(aspect_ratios, dtype=npdt)
        h_ratios = np.sqrt(aspect_ratios)
        w_ratios = npdt.type(1) / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).reshape(-1)
        hs = (h_ratios[:, None] * scales[None, :]).reshape(-1)
        base = np.stack([-ws, -hs, ws, hs], axis=1) / npdt.type(2)
        return flow.from_numpy(np.round(base).astype(npdt))

    def set_cell_anchors(self, dtype, device=None):
        self.cell_anchors = [a.to(dtype) for a in self.cell_anchors]

    def num_anchors_per_location(self):
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def grid_anchors(self, grid_sizes, strides):
        if not (len(grid_sizes) == len(strides) == len(self.cell_anchors)):
            raise ValueError("Anchors should be Tuple[Tuple[int]] because each feature map could potentially have "
                             "different sizes and aspect ratios. There needs to be a match between the number of "
                             "feature maps passed and the number of sizes / aspect ratios specified.")
        anchors = []
        for (gh, gw), (sh, sw), base in zip(grid_sizes, strides, self.cell_anchors):
            b = base.numpy()
            shifts_x = np.arange(gw, dtype=np.int64) * int(sw)
            shifts_y = np.arange(gh, dtype=np.int64) * int(sh)
            sy, sx = np.meshgrid(shifts_y, shifts_x, indexing="ij")
            sx, sy = sx.reshape(-1), sy.reshape(-1)
            shifts = np.stack((sx, sy, sx, sy), axis=1).astype(b.dtype)
            anchors.append(flow.from_numpy((shifts.reshape(-1, 1, 4) + b.reshape(1, -1, 4)).reshape(-1, 4)))
        return anchors

    def forward(self, image_list, feature_maps):
        grid_sizes = [tuple(f.shape[-2:]) for f in feature_maps]
        image_size = tuple(image_list.tensors.shape[-2:])
        strides = [(image_size[0] // g[0], image_size[1] // g[1]) for g in grid_sizes]
        self.set_cell_anchors(feature_maps[0].dtype)
        per_level = self.grid_anchors(grid_sizes, strides)
        all_levels = flow.cat(per_level) if len(per_level) > 1 else per_level[0]
        return [all_levels.clone() for _ in range(len(image_list.image_sizes))]


class DefaultBoxGenerator(nn.Module):
    """SSD's default boxes: per feature map k, scales s_k and sqrt(s_k s_k+1) plus one (w, h) and (h, w) pair per
    aspect ratio, centred on the cells (or on ``steps``); ``forward`` returns xyxy boxes in pixels per image."""

    def __init__(self, aspect_ratios, min_ratio=0.15, max_ratio=0.9, scales=None, steps=None, clip=True):
        super().__init__()
        if steps is not None and len(aspect_ratios) != len(steps):
            raise ValueError("aspect_ratios and steps should have the same length")
        self.aspect_ratios = aspect_ratios
        self.steps = steps
        self.clip = clip
        num_outputs = len(aspect_ratios)
        if scales is None:
            if num_outputs > 1:
                range_ratio = max_ratio - min_ratio
                self.scales = [min_ratio + range_ratio * k / (num_outputs - 1.0) for k in range(num_outputs)]
                self.scales.append(1.0)
            else:
                self.scales = [min_ratio, max_ratio]
        else:
            self.scales = scales
        self._wh_pairs = self._generate_wh_pairs(num_outputs)

    def _generate_wh_pairs(self, num_outputs, dtype=flow.float32, device=None):
        out = []
        for k in range(num_outputs):
            s_k = self.scales[k]
            s_prime_k = math.sqrt(self.scales[k] * self.scales[k + 1])
            wh = [[s_k, s_k], [s_prime_k, s_prime_k]]
            for ar in self.aspect_ratios[k]:
                sq = math.sqrt(ar)
                w, h = self.scales[k] * sq, self.scales[k] / sq
                wh.extend([[w, h], [h, w]])
            out.append(np.asarray(wh, dtype=dtype.np))
        return out

    def num_anchors_per_location(self):
        return [2 + 2 * len(r) for r in self.aspect_ratios]

    def _grid_default_boxes(self, grid_sizes, image_size, dtype=flow.float32):
        f32 = np.float32
        boxes = []
        for k, f_k in enumerate(grid_sizes):
            if self.steps is not None:
                x_f_k, y_f_k = image_size[1] / self.steps[k], image_size[0] / self.steps[k]
            else:
                y_f_k, x_f_k = f_k
            sx = ((np.arange(f_k[1]) + f32(0.5)).astype(f32) / f32(x_f_k)).astype(dtype.np)
            sy = ((np.arange(f_k[0]) + f32(0.5)).astype(f32) / f32(y_f_k)).astype(dtype.np)
            yy, xx = np.meshgrid(sy, sx, indexing="ij")
            wh = self._wh_pairs[k].astype(dtype.np)
            if self.clip:
                wh = np.clip(wh, 0, 1)
            a = wh.shape[0]
            shifts = np.repeat(np.stack([xx.reshape(-1), yy.reshape(-1)], axis=1), a, axis=0)
            boxes.append(np.concatenate([shifts, np.tile(wh, (f_k[0] * f_k[1], 1))], axis=1))
        return np.concatenate(boxes, axis=0)

    def __repr__(self):
        return (f"{self.__class__.__name__}(aspect_ratios={self.aspect_ratios}, clip={self.clip}, "
                f"scales={self.scales}, steps={self.steps})")

    def forward(self, image_list, feature_maps):
        grid_sizes = [tuple(f.shape[-2:]) for f in feature_maps]
        image_size = tuple(image_list.tensors.shape[-2:])
        dt = feature_maps[0].dtype
        d = self._grid_default_boxes(grid_sizes, image_size, dtype=dt)
        xy = np.asarray([image_size[1], image_size[0]], dtype=d.dtype)
        half = d.dtype.type(0.5)
        out = np.concatenate([(d[:, :2] - half * d[:, 2:]) * xy, (d[:, :2] + half * d[:, 2:]) * xy], axis=-1)
        return [flow.from_numpy(out.copy()) for _ in image_list.image_sizes]
