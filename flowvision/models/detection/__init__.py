"""flowvision.models.detection: torchvision's detection building blocks (anchors, box coding, matching,
sampling, the R-CNN input transform) Faster R-CNN, Mask R-CNN, RetinaNet and FCOS (ResNet-50-FPN)."""
from ._utils import BalancedPositiveNegativeSampler, BoxCoder, BoxLinearCoder, Matcher, SSDMatcher
from .anchor_utils import AnchorGenerator, DefaultBoxGenerator
from .backbone_utils import BackboneWithFPN, resnet_fpn_backbone
from .faster_rcnn import (FasterRCNN, FasterRCNN_ResNet50_FPN_V2_Weights, FasterRCNN_ResNet50_FPN_Weights,
                          FastRCNNConvFCHead, FastRCNNPredictor, TwoMLPHead, fasterrcnn_resnet50_fpn,
                          fasterrcnn_resnet50_fpn_v2, fasterrcnn_resnet101_fpn)
from .fcos import FCOS, FCOS_ResNet50_FPN_Weights, FCOSHead, fcos_resnet50_fpn
from .generalized_rcnn import GeneralizedRCNN
from .mask_rcnn import (MaskRCNN, MaskRCNN_ResNet50_FPN_Weights, MaskRCNNHeads, MaskRCNNPredictor,
                        maskrcnn_resnet50_fpn)
from .retinanet import (RetinaNet, RetinaNet_ResNet50_FPN_Weights, RetinaNetHead, retinanet_resnet50_fpn,
                        retinanet_resnet101_fpn, retinanet_resnext50_32x4d_fpn)
from .roi_heads import RoIHeads
from .rpn import RegionProposalNetwork, RPNHead
from .image_list import ImageList
from .transform import GeneralizedRCNNTransform, paste_masks_in_image, resize_boxes, resize_keypoints

__all__ = ["AnchorGenerator", "DefaultBoxGenerator", "BoxCoder", "BoxLinearCoder", "Matcher", "SSDMatcher",
           "BalancedPositiveNegativeSampler", "GeneralizedRCNNTransform", "ImageList", "resize_boxes",
           "resize_keypoints", "paste_masks_in_image", "BackboneWithFPN", "resnet_fpn_backbone", "FasterRCNN",
           "FasterRCNN_ResNet50_FPN_Weights", "FasterRCNN_ResNet50_FPN_V2_Weights", "FastRCNNConvFCHead",
           "fasterrcnn_resnet50_fpn_v2", "FastRCNNPredictor", "TwoMLPHead", "fasterrcnn_resnet50_fpn",
           "GeneralizedRCNN", "RoIHeads", "RegionProposalNetwork", "RPNHead", "RetinaNet", "RetinaNetHead",
           "RetinaNet_ResNet50_FPN_Weights", "retinanet_resnet50_fpn", "MaskRCNN", "MaskRCNNHeads",
           "MaskRCNNPredictor", "MaskRCNN_ResNet50_FPN_Weights", "maskrcnn_resnet50_fpn", "FCOS", "FCOSHead",
           "FCOS_ResNet50_FPN_Weights", "fcos_resnet50_fpn",
           # the original flowvision's detectors torchvision has no builder for (no weights)
           "fasterrcnn_resnet101_fpn", "retinanet_resnet101_fpn", "retinanet_resnext50_32x4d_fpn"]

# MobileNetV3 Faster R-CNN, Mask R-CNN v2, Keypoint R-CNN, the ObjectDetection preset
from ..segmentation._weights import ObjectDetection  # noqa: E402
from .backbone_utils import _mobilenet_extractor, mobilenet_backbone  # noqa: E402
from .faster_rcnn import (FasterRCNN_MobileNet_V3_Large_320_FPN_Weights,  # noqa: E402
                          FasterRCNN_MobileNet_V3_Large_FPN_Weights, fasterrcnn_mobilenet_v3_large_320_fpn,
                          fasterrcnn_mobilenet_v3_large_fpn)
from .keypoint_rcnn import (KeypointRCNN, KeypointRCNN_ResNet50_FPN_Weights, KeypointRCNNHeads,  # noqa: E402
                            KeypointRCNNPredictor, keypointrcnn_resnet50_fpn)
from .mask_rcnn import MaskRCNN_ResNet50_FPN_V2_Weights, maskrcnn_resnet50_fpn_v2  # noqa: E402
from .retinanet import RetinaNet_ResNet50_FPN_V2_Weights, retinanet_resnet50_fpn_v2  # noqa: E402

__all__ += ["ObjectDetection", "mobilenet_backbone", "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
            "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights", "fasterrcnn_mobilenet_v3_large_fpn",
            "fasterrcnn_mobilenet_v3_large_320_fpn", "KeypointRCNN", "KeypointRCNNHeads", "KeypointRCNNPredictor",
            "KeypointRCNN_ResNet50_FPN_Weights", "keypointrcnn_resnet50_fpn", "MaskRCNN_ResNet50_FPN_V2_Weights",
            "maskrcnn_resnet50_fpn_v2", "RetinaNet_ResNet50_FPN_V2_Weights", "retinanet_resnet50_fpn_v2"]

# SSD / SSDLite
from ._utils import retrieve_out_channels  # noqa: E402
from .ssd import (SSD, SSD300_VGG16_Weights, SSDClassificationHead, SSDFeatureExtractorVGG, SSDHead,  # noqa: E402
                  SSDRegressionHead, SSDScoringHead, VGG16_Features_Weights, ssd300_vgg16)
from .ssdlite import (SSDLite320_MobileNet_V3_Large_Weights, SSDLiteClassificationHead,  # noqa: E402
                      SSDLiteFeatureExtractorMobileNet, SSDLiteHead, SSDLiteRegressionHead,
                      ssdlite320_mobilenet_v3_large)

__all__ += ["retrieve_out_channels", "SSD", "SSDHead", "SSDScoringHead", "SSDClassificationHead", "SSDRegressionHead",
            "SSDFeatureExtractorVGG", "SSD300_VGG16_Weights", "VGG16_Features_Weights", "ssd300_vgg16",
            "SSDLiteHead", "SSDLiteClassificationHead", "SSDLiteRegressionHead", "SSDLiteFeatureExtractorMobileNet",
            "SSDLite320_MobileNet_V3_Large_Weights", "ssdlite320_mobilenet_v3_large"]
