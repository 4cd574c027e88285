"""FCN (torchvision's builders, arguments and parameter names) on flowvision's dilated ResNet."""
from flowvision.backend import nn

from ._utils import IntermediateLayerGetter, _ovewrite_value_param, _SimpleSegmentationModel, dilated_resnet
from ._weights import ResNet50_Weights, ResNet101_Weights, WeightsEnum, _seg_weights

__all__ = ["FCN", "FCNHead", "FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "fcn_resnet50", "fcn_resnet101"]


class FCN(_SimpleSegmentationModel):
    """Fully-Convolutional Network: backbone -> FCNHead, upsampled to the input size (``{"out"[, "aux"]}``)."""


class FCNHead(nn.Sequential):
    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        super().__init__(
            nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Conv2d(inter_channels, channels, 1),
        )


class FCN_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights("https://download.pytorch.org/models/fcn_resnet50_coco-1167a1af.pth",
                                           35322218, 60.5, 91.4)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class FCN_ResNet101_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = _seg_weights("https://download.pytorch.org/models/fcn_resnet101_coco-7ecb50ca.pth",
                                           54314346, 63.7, 91.9)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


def _resnet_backbone(depth, weights_backbone, progress):
    backbone = dilated_resnet(depth, replace_stride_with_dilation=[False, True, True])
    if weights_backbone is not None:
        sd = weights_backbone.get_state_dict(progress=progress, check_hash=True)
        backbone.load_state_dict(sd, strict=True)
    return backbone


def _fcn_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    classifier = FCNHead(2048, num_classes)
    return FCN(backbone, classifier, aux_classifier)


def _resolve(weights, weights_backbone, num_classes, aux_loss, wcls, bcls):
    weights = wcls.verify(weights)
    weights_backbone = bcls.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
        aux_loss = _ovewrite_value_param("aux_loss", aux_loss, True)
    elif num_classes is None:
        num_classes = 21
    return weights, weights_backbone, num_classes, aux_loss


def _finish(model, weights, progress):
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def _check_kwargs(kwargs):
    if kwargs:
        raise TypeError(f"unexpected keyword arguments: {sorted(kwargs)}")


def _build_resnet_segmenter(make, depth, weights_enum, backbone_enum, weights, weights_backbone, num_classes,
                            aux_loss, progress, kwargs):
    """The body of torchvision's ResNet segmentation builders: resolve the weights (they fix num_classes and
    aux_loss), the dilated ResNet-``depth`` trunk with its weights, ``make(backbone, num_classes, aux)``, load."""
    _check_kwargs(kwargs)
    weights, weights_backbone, num_classes, aux_loss = _resolve(weights, weights_backbone, num_classes, aux_loss,
                                                                weights_enum, backbone_enum)
    return _finish(make(_resnet_backbone(depth, weights_backbone, progress), num_classes, aux_loss), weights,
                   progress)


def fcn_resnet50(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                 weights_backbone=ResNet50_Weights.IMAGENET1K_V1, **kwargs):
    """FCN-ResNet50 (torchvision's builder). ``weights``: ``FCN_ResNet50_Weights`` member or its name."""
    return _build_resnet_segmenter(_fcn_resnet, 50, FCN_ResNet50_Weights, ResNet50_Weights, weights,
                                   weights_backbone, num_classes, aux_loss, progress, kwargs)


def fcn_resnet101(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                  weights_backbone=ResNet101_Weights.IMAGENET1K_V1, **kwargs):
    """FCN-ResNet101 (torchvision's builder). ``weights``: ``FCN_ResNet101_Weights`` member or its name."""
    return _build_resnet_segmenter(_fcn_resnet, 101, FCN_ResNet101_Weights, ResNet101_Weights, weights,
                                   weights_backbone, num_classes, aux_loss, progress, kwargs)
