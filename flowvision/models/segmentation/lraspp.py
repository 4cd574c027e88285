"""LRASPP (Lite R-ASPP, torchvision's builder, arguments and parameter names) on MobileNetV3-Large."""
from collections import OrderedDict

import flowvision.backend.nn.functional as F
from flowvision.backend import nn

from ._utils import IntermediateLayerGetter, mobilenet_v3_large_backbone
from ._weights import MobileNet_V3_Large_Weights, WeightsEnum, _seg_weights
from .deeplabv3 import mobilenet_stage_indices
from .fcn import _check_kwargs, _finish, _resolve

__all__ = ["LRASPP", "LRASPPHead", "LRASPP_MobileNet_V3_Large_Weights", "lraspp_mobilenet_v3_large"]


class LRASPP(nn.Module):
    """Backbone ``{"low", "high"}`` features -> LRASPPHead, upsampled to the input size; output ``{"out"}`` (the
    model has no auxiliary head)."""

    def __init__(self, backbone, low_channels, high_channels, num_classes, inter_channels=128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected a normalised (B, C, H, W) batch, got shape {list(input.shape)}")
        if not input.is_floating_point():
            raise TypeError(f"expected a floating-point batch, got {input.dtype} (convert and normalise the images "
                            "first)")
        out = self.classifier(self.backbone(input))
        out = F.interpolate(out, size=tuple(input.shape[-2:]), mode="bilinear", align_corners=False)
        return OrderedDict([("out", out)])


class LRASPPHead(nn.Module):
    def __init__(self, low_channels, high_channels, num_classes, inter_channels):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        # the global-context gate: pooled high-level features -> per-channel sigmoid scale
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=tuple(low.shape[-2:]), mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


class LRASPP_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights(
        "https://download.pytorch.org/models/lraspp_mobilenet_v3_large-d234d4ea.pth", 3221538, 57.9, 91.2)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


def _segm_lraspp_mobilenetv3(backbone, num_classes):
    features = backbone.features
    stages = mobilenet_stage_indices(features)
    low_pos, high_pos = stages[-4], stages[-1]  # C2 (output stride 8) and C5 (output stride 16)
    getter = IntermediateLayerGetter(features, return_layers={str(low_pos): "low", str(high_pos): "high"})
    return LRASPP(getter, features[low_pos].out_channels, features[high_pos].out_channels, num_classes)


def lraspp_mobilenet_v3_large(*, weights=None, progress=True, num_classes=None,
                              weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1, **kwargs):
    """LRASPP-MobileNetV3-Large (torchvision's builder; ``aux_loss=True`` raises, as in torchvision)."""
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    _check_kwargs(kwargs)
    weights, weights_backbone, num_classes, _ = _resolve(weights, weights_backbone, num_classes, None,
                                                         LRASPP_MobileNet_V3_Large_Weights,
                                                         MobileNet_V3_Large_Weights)
    backbone = mobilenet_v3_large_backbone(weights_backbone, progress, dilated=True)
    return _finish(_segm_lraspp_mobilenetv3(backbone, num_classes), weights, progress)
