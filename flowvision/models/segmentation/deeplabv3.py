"""DeepLabV3 with ASPP (torchvision's builders, arguments and parameter names) on flowvision's dilated ResNet."""
import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn

from ._utils import IntermediateLayerGetter, _SimpleSegmentationModel, mobilenet_v3_large_backbone
from ._weights import (MobileNet_V3_Large_Weights, ResNet50_Weights, ResNet101_Weights, WeightsEnum,
                       _seg_weights)
from .fcn import FCNHead, _build_resnet_segmenter, _check_kwargs, _finish, _resolve

__all__ = ["DeepLabV3", "DeepLabHead", "ASPP", "DeepLabV3_ResNet50_Weights", "DeepLabV3_ResNet101_Weights",
           "DeepLabV3_MobileNet_V3_Large_Weights", "deeplabv3_resnet50", "deeplabv3_resnet101",
           "deeplabv3_mobilenet_v3_large"]


class DeepLabV3(_SimpleSegmentationModel):
    """DeepLabV3: backbone -> DeepLabHead (ASPP), upsampled to the input size (``{"out"[, "aux"]}``)."""


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates=(12, 24, 36)):
        super().__init__(
            ASPP(in_channels, atrous_rates),
            nn.Conv2d(256, 256, 3, padding=1, bias=False),
            nn.BatchNorm2d(256),
            nn.ReLU(),
            nn.Conv2d(256, num_classes, 1),
        )


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )

    def forward(self, x):
        size = tuple(x.shape[-2:])
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels),
                                 nn.ReLU())]
        for rate in tuple(atrous_rates):
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Dropout(0.5),
        )

    def forward(self, x):
        res = flow.cat([conv(x) for conv in self.convs], dim=1)
        return self.project(res)


class DeepLabV3_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights(
        "https://download.pytorch.org/models/deeplabv3_resnet50_coco-cd0a2569.pth", 42004074, 66.4, 92.4)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_ResNet101_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights(
        "https://download.pytorch.org/models/deeplabv3_resnet101_coco-586e9e4e.pth", 60996202, 67.4, 92.4)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights(
        "https://download.pytorch.org/models/deeplabv3_mobilenet_v3_large-fc3c493d.pth", 11029328, 60.3, 91.2)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


def mobilenet_stage_indices(features):
    """Indices of ``features`` that end a stage: the stem (C0), every block strided in the configuration (torchvision's
    ``_is_cn``, still marked when dilated) and the last conv (Cn)."""
    return [0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)] + [len(features) - 1]


def _deeplabv3_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    classifier = DeepLabHead(2048, num_classes)
    return DeepLabV3(backbone, classifier, aux_classifier)


def deeplabv3_resnet50(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                       weights_backbone=ResNet50_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3-ResNet50 (torchvision's builder)."""
    return _build_resnet_segmenter(_deeplabv3_resnet, 50, DeepLabV3_ResNet50_Weights, ResNet50_Weights,
                                   weights, weights_backbone, num_classes, aux_loss, progress, kwargs)


def deeplabv3_resnet101(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                        weights_backbone=ResNet101_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3-ResNet101 (torchvision's builder)."""
    return _build_resnet_segmenter(_deeplabv3_resnet, 101, DeepLabV3_ResNet101_Weights, ResNet101_Weights,
                                   weights, weights_backbone, num_classes, aux_loss, progress, kwargs)


def _deeplabv3_mobilenetv3(backbone, num_classes, aux):
    features = backbone.features
    stages = mobilenet_stage_indices(features)
    out_pos, aux_pos = stages[-1], stages[-4]  # C5 (output stride 16 when dilated) and C2 (output stride 8)
    return_layers = {str(out_pos): "out"}
    if aux:
        return_layers[str(aux_pos)] = "aux"
    aux_classifier = FCNHead(features[aux_pos].out_channels, num_classes) if aux else None
    classifier = DeepLabHead(features[out_pos].out_channels, num_classes)
    return DeepLabV3(IntermediateLayerGetter(features, return_layers=return_layers), classifier, aux_classifier)


def deeplabv3_mobilenet_v3_large(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                                 weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3-MobileNetV3-Large (torchvision's builder: dilated last stage, ``aux`` head on C2)."""
    _check_kwargs(kwargs)
    weights, weights_backbone, num_classes, aux_loss = _resolve(
        weights, weights_backbone, num_classes, aux_loss, DeepLabV3_MobileNet_V3_Large_Weights,
        MobileNet_V3_Large_Weights)
    backbone = mobilenet_v3_large_backbone(weights_backbone, progress, dilated=True)
    return _finish(_deeplabv3_mobilenetv3(backbone, num_classes, aux_loss), weights, progress)
