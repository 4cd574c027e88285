"""Mask R-CNN (torchvision's MaskRCNN class, mask head/predictor, builder and parameter names)."""
from collections import OrderedDict

from flowvision.backend import nn
from flowvision.ops import Conv2dNormActivation, MultiScaleRoIAlign

from ..segmentation._weights import ObjectDetection, ResNet50_Weights, Weights, WeightsEnum
from .backbone_utils import _build_detector
from .faster_rcnn import COCO_CATEGORIES, FasterRCNN, FastRCNNConvFCHead, _default_anchorgen
from .rpn import RPNHead

__all__ = ["MaskRCNN", "MaskRCNNHeads", "MaskRCNNPredictor", "MaskRCNN_ResNet50_FPN_Weights",
           "MaskRCNN_ResNet50_FPN_V2_Weights", "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2"]


class MaskRCNNHeads(nn.Sequential):
    _version = 2

    def __init__(self, in_channels, layers, dilation, norm_layer=None):
        blocks = []
        next_feature = in_channels
        for layer_features in layers:
            blocks.append(Conv2dNormActivation(next_feature, layer_features, kernel_size=3, stride=1,
                                               padding=dilation, dilation=dilation, norm_layer=norm_layer))
            next_feature = layer_features
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(len(self)):
                for t in ["weight", "bias"]:
                    old = f"{prefix}mask_fcn{i + 1}.{t}"
                    if old in state_dict:
                        state_dict[f"{prefix}{i}.0.{t}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class MaskRCNNPredictor(nn.Sequential):
    def __init__(self, in_channels, dim_reduced, num_classes):
        super().__init__(OrderedDict([
            ("conv5_mask", nn.ConvTranspose2d(in_channels, dim_reduced, 2, 2, 0)),
            ("relu", nn.ReLU(inplace=True)),
            ("mask_fcn_logits", nn.Conv2d(dim_reduced, num_classes, 1, 1, 0)),
        ]))
        for name, param in self.named_parameters():
            if "weight" in name:
                nn.init.kaiming_normal_(param, mode="fan_out", nonlinearity="relu")


class MaskRCNN(FasterRCNN):
    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None, image_std=None,
                 rpn_anchor_generator=None, rpn_head=None, rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000, rpn_nms_thresh=0.7,
                 rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3, rpn_batch_size_per_image=256,
                 rpn_positive_fraction=0.5, rpn_score_thresh=0.0, box_roi_pool=None, box_head=None,
                 box_predictor=None, box_score_thresh=0.05, box_nms_thresh=0.5, box_detections_per_img=100,
                 box_fg_iou_thresh=0.5, box_bg_iou_thresh=0.5, box_batch_size_per_image=512,
                 box_positive_fraction=0.25, bbox_reg_weights=None, mask_roi_pool=None, mask_head=None,
                 mask_predictor=None, **kwargs):
        if not isinstance(mask_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError(f"mask_roi_pool should be of type MultiScaleRoIAlign or None instead of "
                            f"{type(mask_roi_pool)}")
        if num_classes is not None and mask_predictor is not None:
            raise ValueError("num_classes should be None when mask_predictor is specified")
        out_channels = backbone.out_channels
        if mask_roi_pool is None:
            mask_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"], output_size=14, sampling_ratio=2)
        if mask_head is None:
            mask_head = MaskRCNNHeads(out_channels, (256, 256, 256, 256), 1)
        if mask_predictor is None:
            mask_predictor = MaskRCNNPredictor(256, 256, num_classes)
        super().__init__(backbone, num_classes, min_size, max_size, image_mean, image_std, rpn_anchor_generator,
                         rpn_head, rpn_pre_nms_top_n_train, rpn_pre_nms_top_n_test, rpn_post_nms_top_n_train,
                         rpn_post_nms_top_n_test, rpn_nms_thresh, rpn_fg_iou_thresh, rpn_bg_iou_thresh,
                         rpn_batch_size_per_image, rpn_positive_fraction, rpn_score_thresh, box_roi_pool, box_head,
                         box_predictor, box_score_thresh, box_nms_thresh, box_detections_per_img, box_fg_iou_thresh,
                         box_bg_iou_thresh, box_batch_size_per_image, box_positive_fraction, bbox_reg_weights,
                         **kwargs)
        self.roi_heads.mask_roi_pool = mask_roi_pool
        self.roi_heads.mask_head = mask_head
        self.roi_heads.mask_predictor = mask_predictor


class MaskRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/maskrcnn_resnet50_fpn_coco-bf2d0c1e.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 44401393,
                            "_metrics": {"COCO-val2017": {"box_map": 37.9, "mask_map": 34.6}}})
    DEFAULT = COCO_V1


def maskrcnn_resnet50_fpn(*, weights=None, progress=True, num_classes=None,
                          weights_backbone=ResNet50_Weights.IMAGENET1K_V1, trainable_backbone_layers=None, **kwargs):
    """Mask R-CNN ResNet-50-FPN (torchvision's builder; eval adds "masks": [N, 1, H, W] probabilities)."""
    return _build_detector(MaskRCNN_ResNet50_FPN_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress,
                           lambda backbone, n: MaskRCNN(backbone, num_classes=n, **kwargs), eps_zero=True)


class MaskRCNN_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/maskrcnn_resnet50_fpn_v2_coco-73cbd019.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 46359409,
                            "_metrics": {"COCO-val2017": {"box_map": 47.4, "mask_map": 41.8}}})
    DEFAULT = COCO_V1


def maskrcnn_resnet50_fpn_v2(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                             trainable_backbone_layers=None, **kwargs):
    """Mask R-CNN v2 (torchvision's builder: BatchNorm FPN, two-conv RPN head, 4-conv + 1-fc box head, BatchNorm
    mask head)."""
    def make(backbone, n):
        rpn_anchor_generator = _default_anchorgen()
        rpn_head = RPNHead(backbone.out_channels, rpn_anchor_generator.num_anchors_per_location()[0], conv_depth=2)
        box_head = FastRCNNConvFCHead((backbone.out_channels, 7, 7), [256, 256, 256, 256], [1024],
                                      norm_layer=nn.BatchNorm2d)
        mask_head = MaskRCNNHeads(backbone.out_channels, [256, 256, 256, 256], 1, norm_layer=nn.BatchNorm2d)
        return MaskRCNN(backbone, num_classes=n, rpn_anchor_generator=rpn_anchor_generator, rpn_head=rpn_head,
                        box_head=box_head, mask_head=mask_head, **kwargs)
    return _build_detector(MaskRCNN_ResNet50_FPN_V2_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress, make, v2=True)
