"""flowvision.models.segmentation: torchvision's semantic segmentation builders (same arguments, parameter names
and ``{"out", "aux"}`` output), on flowvision's engine."""
from ._utils import IntermediateLayerGetter
from ._weights import ObjectDetection, SemanticSegmentation, Weights, WeightsEnum
from .deeplabv3 import (ASPP, DeepLabHead, DeepLabV3, DeepLabV3_MobileNet_V3_Large_Weights, DeepLabV3_ResNet50_Weights,
                        DeepLabV3_ResNet101_Weights, deeplabv3_mobilenet_v3_large, deeplabv3_resnet50,
                        deeplabv3_resnet101)
from .fcn import FCN, FCN_ResNet50_Weights, FCN_ResNet101_Weights, FCNHead, fcn_resnet50, fcn_resnet101
from .lraspp import LRASPP, LRASPP_MobileNet_V3_Large_Weights, LRASPPHead, lraspp_mobilenet_v3_large

__all__ = [
    "FCN", "FCNHead", "DeepLabV3", "DeepLabHead", "ASPP", "LRASPP", "LRASPPHead", "IntermediateLayerGetter",
    "SemanticSegmentation", "ObjectDetection", "Weights", "WeightsEnum", "FCN_ResNet50_Weights",
    "FCN_ResNet101_Weights", "DeepLabV3_ResNet50_Weights", "DeepLabV3_ResNet101_Weights",
    "DeepLabV3_MobileNet_V3_Large_Weights", "LRASPP_MobileNet_V3_Large_Weights", "fcn_resnet50", "fcn_resnet101",
    "deeplabv3_resnet50", "deeplabv3_resnet101", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large",
]
