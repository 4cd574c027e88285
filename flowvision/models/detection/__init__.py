"""flowvision.models.detection: torchvision's detection building blocks (anchors, box coding, matching,
sampling, the R-CNN input transform). The detection models themselves are not built yet (issue 9)."""
from ._utils import BalancedPositiveNegativeSampler, BoxCoder, BoxLinearCoder, Matcher, SSDMatcher
from .anchor_utils import AnchorGenerator
from .image_list import ImageList
from .transform import GeneralizedRCNNTransform, paste_masks_in_image, resize_boxes, resize_keypoints

__all__ = ["AnchorGenerator", "BoxCoder", "BoxLinearCoder", "Matcher", "SSDMatcher",
           "BalancedPositiveNegativeSampler", "GeneralizedRCNNTransform", "ImageList", "resize_boxes",
           "resize_keypoints", "paste_masks_in_image"]
