"""flowvision.ops: torchvision.ops' detection operators and layers on flowvision.backend tensors.

Names, arguments and conventions are torchvision's (boxes are (x1, y1, x2, y2) unless a ``fmt`` says
otherwise). nms, roi_align and roi_pool run compiled kernels (``flowvision.backend._C``).
"""
from .boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image, complete_box_iou,
                    distance_box_iou, generalized_box_iou, masks_to_boxes, nms, remove_small_boxes)
from .feature_pyramid_network import ExtraFPNBlock, FeaturePyramidNetwork, LastLevelMaxPool, LastLevelP6P7
from .losses import complete_box_iou_loss, distance_box_iou_loss, generalized_box_iou_loss, sigmoid_focal_loss
from .misc import MLP, Conv2dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation
from .poolers import MultiScaleRoIAlign
from .roi_align import RoIAlign, RoIPool, roi_align, roi_pool
from .stochastic_depth import DropBlock2d, StochasticDepth, drop_block2d, stochastic_depth

__all__ = [
    "masks_to_boxes", "nms", "batched_nms", "remove_small_boxes", "clip_boxes_to_image", "box_convert", "box_area",
    "box_iou", "generalized_box_iou", "distance_box_iou", "complete_box_iou", "roi_align", "RoIAlign", "roi_pool",
    "RoIPool", "MultiScaleRoIAlign", "FeaturePyramidNetwork", "ExtraFPNBlock", "LastLevelMaxPool", "LastLevelP6P7",
    "sigmoid_focal_loss", "stochastic_depth", "StochasticDepth", "FrozenBatchNorm2d", "Conv2dNormActivation",
    "SqueezeExcitation", "MLP", "Permute", "generalized_box_iou_loss", "distance_box_iou_loss",
    "complete_box_iou_loss", "drop_block2d", "DropBlock2d",
]
