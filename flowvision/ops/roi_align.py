"""roi_align / RoIAlign and roi_pool / RoIPool over the compiled kernels (forward and backward in C++,
torchvision's sampling and rounding rules)."""
from typing import List, Tuple, Union

import numpy as np

from flowvision.backend import Tensor, _C, nn
from flowvision.backend.autograd.graph import Function

from ._utils import _kernel_array, _pair, check_roi_boxes_shape, convert_boxes_to_roi_format

__all__ = ["roi_align", "RoIAlign", "roi_pool", "RoIPool"]


class _RoIAlign(Function):
    @staticmethod
    def forward(ctx, x, rois, output_size, spatial_scale, sampling_ratio, aligned):
        xk = _kernel_array(x)
        rk = np.ascontiguousarray(rois, dtype=xk.dtype)
        ctx.save_for_backward(rk)
        ctx.args = (x.shape, x.dtype, spatial_scale, sampling_ratio, aligned)
        y = _C.roi_align_forward(xk, rk, spatial_scale, output_size[0], output_size[1], sampling_ratio, aligned)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, rois, output_size, spatial_scale, sampling_ratio, aligned):
        xp = ctx.xp
        rk = xp.astype(rois, x.dtype)
        ctx.save_for_backward(rk)
        ctx.args = (x.shape, x.dtype, spatial_scale, sampling_ratio, aligned)
        return xp.roi_align_forward(x, rk, spatial_scale, output_size[0], output_size[1], sampling_ratio, aligned)

    @staticmethod
    def backward(ctx, g):
        (rk,) = ctx.saved
        shape, dt, spatial_scale, sampling_ratio, aligned = ctx.args
        if not ctx.needs_input_grad[0]:
            return None, None
        xp = ctx.xp
        gk = xp.ascontiguousarray(g, dtype=rk.dtype)
        gx = xp.roi_align_backward(gk, rk, list(shape), spatial_scale, sampling_ratio, aligned)
        return gx.astype(dt, copy=False), None


def _rois(input, boxes, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): input must be a Tensor, got {type(input).__name__}")
    if input.ndim != 4:
        raise ValueError(f"{fn}(): input must be [N, C, H, W], got {list(input.shape)}")
    if not input.is_floating_point():
        raise TypeError(f"{fn}(): input must be a floating-point tensor, got {input.dtype}")
    check_roi_boxes_shape(boxes)
    if isinstance(boxes, (list, tuple)):
        if len(boxes) != input.shape[0]:
            raise ValueError(f"{fn}(): got {len(boxes)} box tensors for a batch of {input.shape[0]} images")
        if len(boxes) == 0:
            return boxes
        boxes = convert_boxes_to_roi_format(boxes)
    return boxes.detach()


def roi_align(input: Tensor, boxes: Union[Tensor, List[Tensor]], output_size: Union[int, Tuple[int, int]],
              spatial_scale: float = 1.0, sampling_ratio: int = -1, aligned: bool = False) -> Tensor:
    """RoIAlign (Mask R-CNN). ``boxes``: Tensor[K, 5] (batch index, x1, y1, x2, y2) or list of Tensor[L, 4].

    ``sampling_ratio <= 0`` samples ceil(roi_size / output_size) points per bin; ``aligned=True`` shifts the box
    by -0.5 pixel (pixel-centre model). Differentiable with respect to ``input``.

    Args:
        input: Tensor[N, C, H, W] feature map.
        boxes: Tensor[K, 5] ``(batch index, x1, y1, x2, y2)`` or a list of N Tensor[L, 4] (one per image).
        output_size: ``(h, w)`` of each pooled region, or an int for a square one.
        spatial_scale: scale from box coordinates to feature-map coordinates.
        sampling_ratio: sampling points per bin side; ``<= 0`` is adaptive.
        aligned: shift boxes by -0.5 pixel (pixel-centre model).

    Returns:
        Tensor[K, C, h, w].
    """
    rois = _rois(input, boxes, "roi_align")
    output_size = _pair(output_size)
    if isinstance(rois, (list, tuple)):
        rois = input.new_zeros((0, 5))
    return _RoIAlign.apply(input, rois, output_size, float(spatial_scale), int(sampling_ratio), bool(aligned))


class RoIAlign(nn.Module):
    """:func:`roi_align` as a module (torchvision's ``RoIAlign``): pools each box of a feature map to a fixed size.

    Args:
        output_size: (height, width) of each pooled box.
        spatial_scale: feature-map size / image size (e.g. 1/16).
        sampling_ratio: sampling points per bin and axis; ``<= 0`` chooses adaptively.
        aligned: shift boxes by half a pixel (Detectron2's corrected alignment).
    """

    def __init__(self, output_size: Union[int, Tuple[int, int]], spatial_scale: float, sampling_ratio: int,
                 aligned: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")


class _RoIPool(Function):
    @staticmethod
    def forward(ctx, x, rois, output_size, spatial_scale):
        xk = _kernel_array(x)
        rk = np.ascontiguousarray(rois, dtype=xk.dtype)
        y, argmax = _C.roi_pool_forward(xk, rk, spatial_scale, output_size[0], output_size[1])
        ctx.save_for_backward(rk, argmax)
        ctx.args = (x.shape, x.dtype)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        rk, argmax = ctx.saved
        shape, dt = ctx.args
        if not ctx.needs_input_grad[0]:
            return None, None
        gx = _C.roi_pool_backward(np.ascontiguousarray(g, dtype=rk.dtype), argmax, rk, list(shape))
        return gx.astype(dt, copy=False), None


def roi_pool(input: Tensor, boxes: Union[Tensor, List[Tensor]], output_size: Union[int, Tuple[int, int]],
             spatial_scale: float = 1.0) -> Tensor:
    """RoIPool (Fast R-CNN): max over each quantised bin (empty bins give 0).

    Args:
        input: Tensor[N, C, H, W] feature map.
        boxes: Tensor[K, 5] ``(batch index, x1, y1, x2, y2)`` or a list of N Tensor[L, 4] (one per image).
        output_size: ``(h, w)`` of each pooled region, or an int for a square one.
        spatial_scale: scale from box coordinates to feature-map coordinates.

    Returns:
        Tensor[K, C, h, w].
    """
    rois = _rois(input, boxes, "roi_pool")
    output_size = _pair(output_size)
    if isinstance(rois, (list, tuple)):
        rois = input.new_zeros((0, 5))
    return _RoIPool.apply(input, rois, output_size, float(spatial_scale))


class RoIPool(nn.Module):
    """:func:`roi_pool` as a module (torchvision's ``RoIPool``): max-pools each box to a fixed size.

    Args:
        output_size: (height, width) of each pooled box.
        spatial_scale: feature-map size / image size.
    """

    def __init__(self, output_size: Union[int, Tuple[int, int]], spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
