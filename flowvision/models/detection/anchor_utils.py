"""AnchorGenerator (Faster R-CNN / RetinaNet) with torchvision's anchor arithmetic."""
import numpy as np

import flowvision.backend as flow
from flowvision.backend import nn

__all__ = ["AnchorGenerator"]


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
