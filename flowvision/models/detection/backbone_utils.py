"""BackboneWithFPN and the ResNet-FPN extractor (torchvision's layer freezing and channel rules)."""
import warnings

from flowvision.backend import nn
from flowvision.ops import FeaturePyramidNetwork, FrozenBatchNorm2d, LastLevelMaxPool

from ..segmentation._utils import IntermediateLayerGetter, mobilenet_v3_large_backbone
from ..segmentation.deeplabv3 import mobilenet_stage_indices

__all__ = ["BackboneWithFPN", "resnet_fpn_backbone", "_resnet_fpn_extractor", "_validate_trainable_layers",
           "mobilenet_backbone", "_mobilenet_extractor"]


class BackboneWithFPN(nn.Module):
    def __init__(self, backbone, return_layers, in_channels_list, out_channels, extra_blocks=None, norm_layer=None):
        super().__init__()
        if extra_blocks is None:
            extra_blocks = LastLevelMaxPool()
        self.body = IntermediateLayerGetter(backbone, return_layers=return_layers)
        self.fpn = FeaturePyramidNetwork(in_channels_list=in_channels_list, out_channels=out_channels,
                                         extra_blocks=extra_blocks, norm_layer=norm_layer)
        self.out_channels = out_channels

    def forward(self, x):
        return self.fpn(self.body(x))


def _resnet(depth, norm_layer, cardinality=1, base_width=64):
    from ..resnet import BasicBlock, Bottleneck, ResNet
    block, layers = {18: (BasicBlock, (2, 2, 2, 2)), 34: (BasicBlock, (3, 4, 6, 3)), 50: (Bottleneck, (3, 4, 6, 3)),
                     101: (Bottleneck, (3, 4, 23, 3)), 152: (Bottleneck, (3, 8, 36, 3))}[depth]
    # torchvision's ResNet keeps every BN gamma at 1 (zero_init_residual=False); timm's default zeroes the last one
    return ResNet(block=block, layers=layers, cardinality=cardinality, base_width=base_width, norm_layer=norm_layer,
                  zero_init_last=False)


def _resnet_fpn_extractor(backbone, trainable_layers, returned_layers=None, extra_blocks=None, norm_layer=None):
    if trainable_layers < 0 or trainable_layers > 5:
        raise ValueError(f"Trainable layers should be in the range [0,5], got {trainable_layers}")
    layers_to_train = ["layer4", "layer3", "layer2", "layer1", "conv1"][:trainable_layers]
    if trainable_layers == 5:
        layers_to_train.append("bn1")
    for name, parameter in backbone.named_parameters():
        if all(not name.startswith(layer) for layer in layers_to_train):
            parameter.requires_grad_(False)
    if extra_blocks is None:
        extra_blocks = LastLevelMaxPool()
    if returned_layers is None:
        returned_layers = [1, 2, 3, 4]
    if min(returned_layers) <= 0 or max(returned_layers) >= 5:
        raise ValueError(f"Each returned layer should be in the range [1,4]. Got {returned_layers}")
    return_layers = {f"layer{k}": str(v) for v, k in enumerate(returned_layers)}
    in_channels_stage2 = backbone.num_features // 8  # torchvision's backbone.inplanes // 8
    in_channels_list = [in_channels_stage2 * 2 ** (i - 1) for i in returned_layers]
    return BackboneWithFPN(backbone, return_layers, in_channels_list, 256, extra_blocks=extra_blocks,
                           norm_layer=norm_layer)


def resnet_fpn_backbone(*, backbone_name, weights, norm_layer=FrozenBatchNorm2d, trainable_layers=3,
                        returned_layers=None, extra_blocks=None):
    depth = int(backbone_name.replace("resnet", ""))
    backbone = _resnet(depth, norm_layer)
    if weights is not None:
        backbone.load_state_dict(weights.get_state_dict(progress=True, check_hash=True))
    return _resnet_fpn_extractor(backbone, trainable_layers, returned_layers, extra_blocks)


def _mobilenet_extractor(backbone, fpn, trainable_layers, returned_layers=None, extra_blocks=None, norm_layer=None):
    """torchvision's MobileNet feature extractor: ``backbone.features`` with the stages before the last
    ``trainable_layers`` frozen, then an FPN over ``returned_layers`` (stage numbers; default the last two) or,
    without FPN, a 1x1 conv to 256 channels."""
    features = backbone.features
    stages = mobilenet_stage_indices(features)
    num_stages = len(stages)
    if trainable_layers < 0 or trainable_layers > num_stages:
        raise ValueError(f"Trainable layers should be in the range [0,{num_stages}], got {trainable_layers} ")
    freeze_before = len(features) if trainable_layers == 0 else stages[num_stages - trainable_layers]
    for block in list(features)[:freeze_before]:
        for parameter in block.parameters():
            parameter.requires_grad_(False)
    out_channels = 256
    if not fpn:
        m = nn.Sequential(features, nn.Conv2d(features[-1].out_channels, out_channels, 1))
        m.out_channels = out_channels
        return m
    if extra_blocks is None:
        extra_blocks = LastLevelMaxPool()
    if returned_layers is None:
        returned_layers = [num_stages - 2, num_stages - 1]
    if min(returned_layers) < 0 or max(returned_layers) >= num_stages:
        raise ValueError(f"Each returned layer should be in the range [0,{num_stages - 1}], got {returned_layers} ")
    return_layers = {f"{stages[k]}": str(v) for v, k in enumerate(returned_layers)}
    in_channels_list = [features[stages[i]].out_channels for i in returned_layers]
    return BackboneWithFPN(features, return_layers, in_channels_list, out_channels, extra_blocks=extra_blocks,
                           norm_layer=norm_layer)


def mobilenet_backbone(*, backbone_name, weights, fpn, norm_layer=FrozenBatchNorm2d, trainable_layers=2,
                       returned_layers=None, extra_blocks=None):
    """torchvision's ``mobilenet_backbone`` (``backbone_name``: "mobilenet_v3_large"; the zoo's MobileNetV2/V3-Small
    have no detection adapter)."""
    if backbone_name != "mobilenet_v3_large":
        raise ValueError(f"mobilenet_backbone supports backbone_name='mobilenet_v3_large', got {backbone_name!r}")
    backbone = mobilenet_v3_large_backbone(weights, norm_layer=norm_layer)
    return _mobilenet_extractor(backbone, fpn, trainable_layers, returned_layers, extra_blocks)


def _validate_trainable_layers(is_trained, trainable_backbone_layers, max_value, default_value):
    if not is_trained:
        if trainable_backbone_layers is not None:
            warnings.warn("Changing trainable_backbone_layers has no effect if neither pretrained nor "
                          "pretrained_backbone have been set to True, falling back to "
                          f"trainable_backbone_layers={max_value} so that all layers are trainable")
        trainable_backbone_layers = max_value
    if trainable_backbone_layers is None:
        trainable_backbone_layers = default_value
    if trainable_backbone_layers < 0 or trainable_backbone_layers > max_value:
        raise ValueError(f"Trainable backbone layers should be in the range [0,{max_value}], got "
                         f"{trainable_backbone_layers} ")
    return trainable_backbone_layers


def _resnet50_backbone(weights_backbone, is_trained, trainable_backbone_layers, progress, norm_layer=None):
    """The ResNet-50 trunk of torchvision's detection builders, with its backbone weights loaded: frozen BN when any
    weights are used (v1 builders; v2 builders pass nn.BatchNorm2d), trainable layers validated (0..5, default 3).
    Returns (backbone, trainable_backbone_layers)."""
    trainable_backbone_layers = _validate_trainable_layers(is_trained, trainable_backbone_layers, 5, 3)
    if norm_layer is None:
        norm_layer = FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = _resnet(50, norm_layer)
    if weights_backbone is not None:
        backbone.load_state_dict(weights_backbone.get_state_dict(progress=progress, check_hash=True))
    return backbone, trainable_backbone_layers


def _resolve_weights(weights, weights_backbone, num_classes, default_num_classes=91):
    """torchvision's builder rule: full-model weights replace the backbone weights and fix num_classes to their
    categories; returns (weights_backbone, num_classes, is_trained)."""
    from ..segmentation._utils import _ovewrite_value_param
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
    elif num_classes is None:
        num_classes = default_num_classes
    return weights_backbone, num_classes, weights is not None or weights_backbone is not None


def overwrite_eps(model, eps):
    """Set every FrozenBatchNorm2d's eps (torchvision's v1 detection checkpoints were trained with eps 0)."""
    for module in model.modules():
        if isinstance(module, FrozenBatchNorm2d):
            module.eps = eps


def _build_detector(weights_enum, weights, weights_backbone, num_classes, trainable_backbone_layers, progress, make,
                    v2=False, fpn_kwargs=None, eps_zero=False, default_num_classes=91):
    """The body of torchvision's ResNet-50-FPN detection builders.

    ``weights`` (of ``weights_enum``) replace the backbone weights and fix ``num_classes``; the ResNet-50 trunk has
    frozen BN when any weights are used (v1; ``v2``: BatchNorm in the trunk and, unless ``fpn_kwargs`` says
    otherwise, the FPN), the FPN covers the trainable stages (``fpn_kwargs``: returned_layers, extra_blocks,
    norm_layer); ``make(backbone, num_classes)`` builds the
    detector, the weights load strictly and, with ``eps_zero``, the COCO_V1 checkpoint gets its eps 0.
    """
    from ..resnet import ResNet50_Weights
    weights = weights_enum.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes, is_trained = _resolve_weights(weights, weights_backbone, num_classes,
                                                                 default_num_classes)
    norm_layer = nn.BatchNorm2d if v2 else None
    backbone, trainable = _resnet50_backbone(weights_backbone, is_trained, trainable_backbone_layers, progress,
                                             norm_layer)
    fpn_kwargs = dict(dict(norm_layer=norm_layer), **(fpn_kwargs or {}))
    model = make(_resnet_fpn_extractor(backbone, trainable, **fpn_kwargs), num_classes)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        if eps_zero and weights.name == "COCO_V1":
            overwrite_eps(model, 0.0)
    return model


def _build_unweighted_detector(make, weights, weights_backbone, num_classes, trainable_backbone_layers, depth,
                               cardinality=1, base_width=64, fpn_kwargs=None):
    """A detector torchvision has no builder for: its ResNet-50-FPN detector on a deeper or ResNeXt trunk, built as
    ``resnet_fpn_backbone`` builds it (frozen BN, same state-dict keys, 3 trainable stages by default).

    No COCO or backbone weights exist for these, so ``weights`` and ``weights_backbone`` must be None;
    ``make(backbone, num_classes)`` builds the detector (91 classes by default).
    """
    if weights is not None:
        raise ValueError("no pretrained weights exist for this detector; pass weights=None")
    if weights_backbone is not None:
        raise ValueError("weights_backbone is not supported for this detector; pass None")
    trainable = 3 if trainable_backbone_layers is None else trainable_backbone_layers
    body = _resnet(depth, FrozenBatchNorm2d, cardinality, base_width)
    return make(_resnet_fpn_extractor(body, trainable, **(fpn_kwargs or {})), num_classes or 91)
