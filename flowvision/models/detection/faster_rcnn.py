"""Faster R-CNN (torchvision's FasterRCNN class, defaults, builder and parameter names)."""
from flowvision.backend import nn
from flowvision.ops import Conv2dNormActivation, FrozenBatchNorm2d, MultiScaleRoIAlign

from ..segmentation._utils import mobilenet_v3_large_backbone
from ..segmentation._weights import (MobileNet_V3_Large_Weights, ObjectDetection, ResNet50_Weights, Weights,
                                     WeightsEnum)
from .anchor_utils import AnchorGenerator
from .._factory import register_task_builder
from .backbone_utils import (_build_detector, _build_unweighted_detector, _mobilenet_extractor, _resolve_weights,
                             _validate_trainable_layers)
from .generalized_rcnn import GeneralizedRCNN
from .roi_heads import RoIHeads
from .rpn import RegionProposalNetwork, RPNHead
from .transform import GeneralizedRCNNTransform

__all__ = ["FasterRCNN", "TwoMLPHead", "FastRCNNConvFCHead", "FastRCNNPredictor", "FasterRCNN_ResNet50_FPN_Weights",
           "FasterRCNN_ResNet50_FPN_V2_Weights", "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
           "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights", "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2",
           "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn", "fasterrcnn_resnet101_fpn",
           "COCO_CATEGORIES"]

COCO_CATEGORIES = [
    "__background__", "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "N/A", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse",
    "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "N/A", "backpack", "umbrella", "N/A", "N/A", "handbag",
    "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove",
    "skateboard", "surfboard", "tennis racket", "bottle", "N/A", "wine glass", "cup", "fork", "knife", "spoon",
    "bowl", "banana", "apple", "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake",
    "chair", "couch", "potted plant", "bed", "N/A", "dining table", "N/A", "N/A", "toilet", "N/A", "tv", "laptop",
    "mouse", "remote", "keyboard", "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "N/A",
    "book", "clock", "vase", "scissors", "teddy bear", "hair drier", "toothbrush",
]


def _default_anchorgen():
    anchor_sizes = ((32,), (64,), (128,), (256,), (512,))
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


class TwoMLPHead(nn.Module):
    def __init__(self, in_channels, representation_size):
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        x = x.flatten(start_dim=1)
        x = self.fc6(x).relu()
        return self.fc7(x).relu()


class FastRCNNConvFCHead(nn.Sequential):
    """The v2 box head: Conv2dNormActivation layers, Flatten, then Linear+ReLU layers."""

    def __init__(self, input_size, conv_layers, fc_layers, norm_layer=None):
        in_channels, in_height, in_width = input_size
        blocks = []
        prev = in_channels
        for cur in conv_layers:
            blocks.append(Conv2dNormActivation(prev, cur, norm_layer=norm_layer))
            prev = cur
        blocks.append(nn.Flatten())
        prev = prev * in_height * in_width
        for cur in fc_layers:
            blocks.append(nn.Linear(prev, cur))
            blocks.append(nn.ReLU(inplace=True))
            prev = cur
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)


class FastRCNNPredictor(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x):
        if x.dim() == 4 and list(x.shape[2:]) != [1, 1]:
            raise ValueError(f"x has the wrong shape, expecting the last two dimensions to be [1,1] instead of "
                             f"{list(x.shape[2:])}")
        x = x.flatten(start_dim=1)
        return self.cls_score(x), self.bbox_pred(x)


class FasterRCNN(GeneralizedRCNN):
    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None, image_std=None,
                 rpn_anchor_generator=None, rpn_head=None, rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000, rpn_nms_thresh=0.7,
                 rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3, rpn_batch_size_per_image=256,
                 rpn_positive_fraction=0.5, rpn_score_thresh=0.0, box_roi_pool=None, box_head=None,
                 box_predictor=None, box_score_thresh=0.05, box_nms_thresh=0.5, box_detections_per_img=100,
                 box_fg_iou_thresh=0.5, box_bg_iou_thresh=0.5, box_batch_size_per_image=512,
                 box_positive_fraction=0.25, bbox_reg_weights=None, **kwargs):
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the number of output "
                             "channels (assumed to be the same for all the levels)")
        if not isinstance(rpn_anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("rpn_anchor_generator should be of type AnchorGenerator or None instead of "
                            f"{type(rpn_anchor_generator)}")
        if not isinstance(box_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError(f"box_roi_pool should be of type MultiScaleRoIAlign or None instead of {type(box_roi_pool)}")
        if num_classes is not None:
            if box_predictor is not None:
                raise ValueError("num_classes should be None when box_predictor is specified")
        elif box_predictor is None:
            raise ValueError("num_classes should not be None when box_predictor is not specified")
        out_channels = backbone.out_channels
        if rpn_anchor_generator is None:
            rpn_anchor_generator = _default_anchorgen()
        if rpn_head is None:
            rpn_head = RPNHead(out_channels, rpn_anchor_generator.num_anchors_per_location()[0])
        rpn = RegionProposalNetwork(
            rpn_anchor_generator, rpn_head, rpn_fg_iou_thresh, rpn_bg_iou_thresh, rpn_batch_size_per_image,
            rpn_positive_fraction, dict(training=rpn_pre_nms_top_n_train, testing=rpn_pre_nms_top_n_test),
            dict(training=rpn_post_nms_top_n_train, testing=rpn_post_nms_top_n_test), rpn_nms_thresh,
            score_thresh=rpn_score_thresh)
        if box_roi_pool is None:
            box_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"], output_size=7, sampling_ratio=2)
        if box_head is None:
            resolution = box_roi_pool.output_size[0]
            box_head = TwoMLPHead(out_channels * resolution ** 2, 1024)
        if box_predictor is None:
            box_predictor = FastRCNNPredictor(1024, num_classes)
        roi_heads = RoIHeads(box_roi_pool, box_head, box_predictor, box_fg_iou_thresh, box_bg_iou_thresh,
                             box_batch_size_per_image, box_positive_fraction, bbox_reg_weights, box_score_thresh,
                             box_nms_thresh, box_detections_per_img)
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        transform = GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std, **kwargs)
        super().__init__(backbone, rpn, roi_heads, transform)


class FasterRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/fasterrcnn_resnet50_fpn_coco-258fb6c6.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 41755286,
                            "_metrics": {"COCO-val2017": {"box_map": 37.0}}})
    DEFAULT = COCO_V1





def fasterrcnn_resnet50_fpn(*, weights=None, progress=True, num_classes=None,
                            weights_backbone=ResNet50_Weights.IMAGENET1K_V1, trainable_backbone_layers=None,
                            **kwargs):
    """Faster R-CNN ResNet-50-FPN (torchvision's builder; eval output: list of {boxes, labels, scores})."""
    return _build_detector(FasterRCNN_ResNet50_FPN_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress,
                           lambda backbone, n: FasterRCNN(backbone, num_classes=n, **kwargs), eps_zero=True)


@register_task_builder
def fasterrcnn_resnet101_fpn(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                             trainable_backbone_layers=None, **kwargs):
    """Faster R-CNN ResNet-101-FPN (the original flowvision's name; torchvision's ResNet-50 builder on the deeper
    trunk). No weights exist: ``weights`` and ``weights_backbone`` must be None; trainable_backbone_layers 0..5
    (default 3); ``kwargs`` go to ``FasterRCNN``."""
    return _build_unweighted_detector(lambda backbone, n: FasterRCNN(backbone, num_classes=n, **kwargs), weights,
                                      weights_backbone, num_classes, trainable_backbone_layers, depth=101)


class FasterRCNN_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/fasterrcnn_resnet50_fpn_v2_coco-dd69338a.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 43712278,
                            "_metrics": {"COCO-val2017": {"box_map": 46.7}}})
    DEFAULT = COCO_V1


def fasterrcnn_resnet50_fpn_v2(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                               trainable_backbone_layers=None, **kwargs):
    """Faster R-CNN v2 (torchvision's builder: BatchNorm FPN, two-conv RPN head, 4-conv + 1-fc box head)."""
    def make(backbone, n):
        rpn_anchor_generator = _default_anchorgen()
        rpn_head = RPNHead(backbone.out_channels, rpn_anchor_generator.num_anchors_per_location()[0], conv_depth=2)
        box_head = FastRCNNConvFCHead((backbone.out_channels, 7, 7), [256, 256, 256, 256], [1024],
                                      norm_layer=nn.BatchNorm2d)
        return FasterRCNN(backbone, num_classes=n, rpn_anchor_generator=rpn_anchor_generator, rpn_head=rpn_head,
                          box_head=box_head, **kwargs)
    return _build_detector(FasterRCNN_ResNet50_FPN_V2_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress, make, v2=True)


class FasterRCNN_MobileNet_V3_Large_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/fasterrcnn_mobilenet_v3_large_fpn-fb6a3cc7.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 19386354,
                            "_metrics": {"COCO-val2017": {"box_map": 32.8}}})
    DEFAULT = COCO_V1


class FasterRCNN_MobileNet_V3_Large_320_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/fasterrcnn_mobilenet_v3_large_320_fpn-907ea3f9.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 19386354,
                            "_metrics": {"COCO-val2017": {"box_map": 22.8}}})
    DEFAULT = COCO_V1


def _fasterrcnn_mobilenet_v3_large_fpn(*, weights, progress, num_classes, weights_backbone, trainable_backbone_layers,
                                       **kwargs):
    weights_backbone, num_classes, is_trained = _resolve_weights(weights, weights_backbone, num_classes)
    trainable_backbone_layers = _validate_trainable_layers(is_trained, trainable_backbone_layers, 6, 3)
    norm_layer = FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = mobilenet_v3_large_backbone(weights_backbone, progress, norm_layer=norm_layer)
    backbone = _mobilenet_extractor(backbone, True, trainable_backbone_layers)
    # every level (C4, C5 and the max-pooled C5) gets all five sizes x three ratios
    anchor_sizes = ((32, 64, 128, 256, 512),) * 3
    anchor_generator = AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))
    model = FasterRCNN(backbone, num_classes, rpn_anchor_generator=anchor_generator, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def fasterrcnn_mobilenet_v3_large_320_fpn(*, weights=None, progress=True, num_classes=None,
                                          weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1,
                                          trainable_backbone_layers=None, **kwargs):
    """Faster R-CNN MobileNetV3-Large-FPN for low resolution (torchvision's builder: min_size 320, max_size 640,
    150 RPN proposals, RPN score threshold 0.05)."""
    weights = FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    defaults = {"min_size": 320, "max_size": 640, "rpn_pre_nms_top_n_test": 150, "rpn_post_nms_top_n_test": 150,
                "rpn_score_thresh": 0.05}
    return _fasterrcnn_mobilenet_v3_large_fpn(weights=weights, progress=progress, num_classes=num_classes,
                                              weights_backbone=weights_backbone,
                                              trainable_backbone_layers=trainable_backbone_layers,
                                              **{**defaults, **kwargs})


def fasterrcnn_mobilenet_v3_large_fpn(*, weights=None, progress=True, num_classes=None,
                                      weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1,
                                      trainable_backbone_layers=None, **kwargs):
    """Faster R-CNN MobileNetV3-Large-FPN (torchvision's builder: FPN on the last two stages, RPN score threshold
    0.05)."""
    weights = FasterRCNN_MobileNet_V3_Large_FPN_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    return _fasterrcnn_mobilenet_v3_large_fpn(weights=weights, progress=progress, num_classes=num_classes,
                                              weights_backbone=weights_backbone,
                                              trainable_backbone_layers=trainable_backbone_layers,
                                              **{"rpn_score_thresh": 0.05, **kwargs})
