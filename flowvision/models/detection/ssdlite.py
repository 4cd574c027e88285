"""SSDLite320 with a MobileNetV3-Large backbone (torchvision's heads, feature extractor, defaults, builder and
parameter names). The backbone is built from mobilenetv3.py's torchvision-named MobileNetV3 blocks: the detector needs
the reduced tail and a configurable norm layer, which the classification builder does not take."""
import warnings
from collections import OrderedDict
from functools import partial

from flowvision.backend import nn
from flowvision.ops import Conv2dNormActivation

from ..segmentation._weights import ObjectDetection, Weights, WeightsEnum
from ..mobilenetv3 import V3_LARGE_TV, InvertedResidualV3TV, MobileNet_V3_Large_Weights
from . import _utils as det_utils
from .anchor_utils import DefaultBoxGenerator
from .backbone_utils import _validate_trainable_layers
from .faster_rcnn import COCO_CATEGORIES
from .ssd import SSD, SSDScoringHead, _load_features

__all__ = ["SSDLiteHead", "SSDLiteClassificationHead", "SSDLiteRegressionHead", "SSDLiteFeatureExtractorMobileNet",
           "SSDLite320_MobileNet_V3_Large_Weights", "ssdlite320_mobilenet_v3_large"]


class SSDLite320_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_V1 = Weights(
        url="https://download.pytorch.org/models/ssdlite320_mobilenet_v3_large_coco-a79551df.pth",
        transforms=ObjectDetection,
        meta={"num_params": 3440060, "categories": COCO_CATEGORIES, "min_size": (1, 1),
              "recipe": "https://github.com/pytorch/vision/tree/main/references/detection#ssdlite320-mobilenetv3-large",
              "_metrics": {"COCO-val2017": {"box_map": 21.3}}, "_ops": 0.583, "_file_size": 13.418,
              "_docs": "These weights were produced by following a similar training recipe as on the paper."})
    DEFAULT = COCO_V1


def _prediction_block(in_channels, out_channels, kernel_size, norm_layer):
    """Depthwise conv + BN + ReLU6, then a 1x1 conv predictor."""
    return nn.Sequential(Conv2dNormActivation(in_channels, in_channels, kernel_size=kernel_size, groups=in_channels,
                                              norm_layer=norm_layer, activation_layer=nn.ReLU6),
                         nn.Conv2d(in_channels, out_channels, 1))


def _extra_block(in_channels, out_channels, norm_layer):
    """1x1 reduce to half, 3x3 depthwise stride 2, 1x1 expand (all BN + ReLU6)."""
    mid = out_channels // 2
    return nn.Sequential(
        Conv2dNormActivation(in_channels, mid, kernel_size=1, norm_layer=norm_layer, activation_layer=nn.ReLU6),
        Conv2dNormActivation(mid, mid, kernel_size=3, stride=2, groups=mid, norm_layer=norm_layer,
                             activation_layer=nn.ReLU6),
        Conv2dNormActivation(mid, out_channels, kernel_size=1, norm_layer=norm_layer, activation_layer=nn.ReLU6))


def _normal_init(conv):
    for layer in conv.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, mean=0.0, std=0.03)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0.0)


class SSDLiteHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, norm_layer):
        super().__init__()
        self.classification_head = SSDLiteClassificationHead(in_channels, num_anchors, num_classes, norm_layer)
        self.regression_head = SSDLiteRegressionHead(in_channels, num_anchors, norm_layer)

    def forward(self, x):
        return {"bbox_regression": self.regression_head(x), "cls_logits": self.classification_head(x)}


class SSDLiteClassificationHead(SSDScoringHead):
    def __init__(self, in_channels, num_anchors, num_classes, norm_layer):
        cls_logits = nn.ModuleList([_prediction_block(c, num_classes * a, 3, norm_layer)
                                    for c, a in zip(in_channels, num_anchors)])
        _normal_init(cls_logits)
        super().__init__(cls_logits, num_classes)


class SSDLiteRegressionHead(SSDScoringHead):
    def __init__(self, in_channels, num_anchors, norm_layer):
        bbox_reg = nn.ModuleList([_prediction_block(c, 4 * a, 3, norm_layer) for c, a in zip(in_channels, num_anchors)])
        _normal_init(bbox_reg)
        super().__init__(bbox_reg, 4)


class SSDLiteFeatureExtractorMobileNet(nn.Module):
    """MobileNet ``features`` split at the C4 block's expansion layer (two maps: C4 expansion output and the last
    conv), then four extra blocks: six feature maps (20, 10, 5, 3, 2, 1 at 320x320).

    ``backbone``: the features Sequential; ``out_channels``: channels of its last layer."""

    def __init__(self, backbone, c4_pos, norm_layer, width_mult=1.0, min_depth=16, out_channels=None):
        super().__init__()
        if backbone[c4_pos].use_res_connect:
            raise ValueError("backbone[c4_pos].use_res_connect should be False")
        c4 = backbone[c4_pos].block
        self.features = nn.Sequential(
            nn.Sequential(*backbone[:c4_pos], c4[0]),        # start .. C4 expansion layer
            nn.Sequential(c4[1:], *backbone[c4_pos + 1:]))   # C4 depthwise .. end
        if out_channels is None:
            out_channels = getattr(backbone[-1], "out_channels", None)
            if out_channels is None:
                out_channels = backbone[-1][0].out_channels
        depth = lambda d: max(min_depth, int(d * width_mult))  # noqa: E731
        self.extra = nn.ModuleList([_extra_block(out_channels, depth(512), norm_layer),
                                    _extra_block(depth(512), depth(256), norm_layer),
                                    _extra_block(depth(256), depth(256), norm_layer),
                                    _extra_block(depth(256), depth(128), norm_layer)])
        _normal_init(self.extra)

    def forward(self, x):
        output = []
        for block in self.features:
            x = block(x)
            output.append(x)
        for block in self.extra:
            x = block(x)
            output.append(x)
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


def _mobilenet_v3_large_features(norm_layer, reduced_tail):
    """torchvision's ``mobilenet_v3_large(norm_layer=, reduced_tail=).features`` from mobilenetv3.py's blocks, and the
    indices of its stride-2 blocks (torchvision's ``_is_cn``)."""
    divider = 2 if reduced_tail else 1
    setting = [list(s) for s in V3_LARGE_TV]
    for s in setting[-3:]:  # the C4 stage: output (and, after the first block, input/expansion) halved
        s[3] //= divider
    for s in setting[-2:]:
        s[0] //= divider
        s[2] //= divider
    layers = [Conv2dNormActivation(3, setting[0][0], 3, 2, norm_layer=norm_layer, activation_layer=nn.Hardswish)]
    strided = []
    for inp, k, exp, out, se, act, stride in setting:
        if stride > 1:
            strided.append(len(layers))
        layers.append(InvertedResidualV3TV(inp, k, exp, out, se, act, stride, norm_layer))
    last_in = setting[-1][3]
    layers.append(Conv2dNormActivation(last_in, 6 * last_in, 1, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish))
    return nn.Sequential(*layers), strided, 6 * last_in


def _mobilenet_extractor(features, strided, trainable_layers, norm_layer, out_channels):
    """Freeze the stages before the last ``trainable_layers`` (stages start at 0, at each stride-2 block and at the
    last conv) and split at the last stride-2 block (C4)."""
    stage_indices = [0] + list(strided) + [len(features) - 1]
    num_stages = len(stage_indices)
    if not 0 <= trainable_layers <= num_stages:
        raise ValueError(f"trainable_layers should be in the range [0, {num_stages}], instead got {trainable_layers}")
    freeze_before = len(features) if trainable_layers == 0 else stage_indices[num_stages - trainable_layers]
    for b in features[:freeze_before]:
        for parameter in b.parameters():
            parameter.requires_grad_(False)
    return SSDLiteFeatureExtractorMobileNet(features, stage_indices[-2], norm_layer, out_channels=out_channels)


def ssdlite320_mobilenet_v3_large(*, weights=None, progress=True, num_classes=None,
                                  weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1,
                                  trainable_backbone_layers=None, norm_layer=None, **kwargs):
    """SSDLite320 with a MobileNetV3-Large backbone (torchvision's builder): fixed 320x320 input, mean/std 0.5;
    without backbone weights the C4 stage has the reduced tail (half the channels)."""
    from ..segmentation._utils import _ovewrite_value_param
    weights = SSDLite320_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    if "size" in kwargs:
        warnings.warn("The size of the model is already fixed; ignoring the parameter.")
        kwargs.pop("size")
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
    elif num_classes is None:
        num_classes = 91
    trainable_backbone_layers = _validate_trainable_layers(weights is not None or weights_backbone is not None,
                                                           trainable_backbone_layers, 6, 6)
    reduce_tail = weights_backbone is None  # MobileNetV3 paper, Table 6
    if norm_layer is None:
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
    features, strided, last_channels = _mobilenet_v3_large_features(norm_layer, reduce_tail)
    if weights_backbone is not None:
        _load_features(features, weights_backbone, progress)
    else:
        _normal_init(features)
    backbone = _mobilenet_extractor(features, strided, trainable_backbone_layers, norm_layer, last_channels)
    size = (320, 320)
    anchor_generator = DefaultBoxGenerator([[2, 3] for _ in range(6)], min_ratio=0.2, max_ratio=0.95)
    out_channels = det_utils.retrieve_out_channels(backbone, size)
    num_anchors = anchor_generator.num_anchors_per_location()
    if len(out_channels) != len(anchor_generator.aspect_ratios):
        raise ValueError(f"The length of the output channels from the backbone {len(out_channels)} do not match the "
                         f"length of the anchor generator aspect ratios {len(anchor_generator.aspect_ratios)}")
    defaults = {"score_thresh": 0.001, "nms_thresh": 0.55, "detections_per_img": 300, "topk_candidates": 300,
                "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    model = SSD(backbone, anchor_generator, size, num_classes,
                head=SSDLiteHead(out_channels, num_anchors, num_classes, norm_layer), **{**defaults, **kwargs})
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
