"""Keypoint R-CNN (torchvision's KeypointRCNN class, keypoint head/predictor, builder and parameter names)."""
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import MultiScaleRoIAlign

from ..segmentation._weights import ObjectDetection, ResNet50_Weights, Weights, WeightsEnum
from ..segmentation._utils import _ovewrite_value_param
from .backbone_utils import _build_detector
from .faster_rcnn import FasterRCNN

__all__ = ["KeypointRCNN", "KeypointRCNNHeads", "KeypointRCNNPredictor", "KeypointRCNN_ResNet50_FPN_Weights",
           "keypointrcnn_resnet50_fpn", "COCO_PERSON_CATEGORIES", "COCO_PERSON_KEYPOINT_NAMES"]

COCO_PERSON_CATEGORIES = ["no person", "person"]
COCO_PERSON_KEYPOINT_NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
    "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
    "right_ankle",
]


class KeypointRCNNHeads(nn.Sequential):
    """``len(layers)`` 3x3 conv + ReLU pairs (parameter names ``0.weight``, ``2.weight``, ...)."""

    def __init__(self, in_channels, layers):
        blocks = []
        next_feature = in_channels
        for out_channels in layers:
            blocks.append(nn.Conv2d(next_feature, out_channels, 3, stride=1, padding=1))
            blocks.append(nn.ReLU(inplace=True))
            next_feature = out_channels
        super().__init__(*blocks)
        for m in self.children():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.constant_(m.bias, 0)


class KeypointRCNNPredictor(nn.Module):
    """Stride-2 transposed conv to one heatmap per keypoint, then 2x bilinear upsampling (14x14 RoIs -> 56x56)."""

    def __init__(self, in_channels, num_keypoints):
        super().__init__()
        deconv_kernel = 4
        self.kps_score_lowres = nn.ConvTranspose2d(in_channels, num_keypoints, deconv_kernel, stride=2,
                                                   padding=deconv_kernel // 2 - 1)
        nn.init.kaiming_normal_(self.kps_score_lowres.weight, mode="fan_out", nonlinearity="relu")
        nn.init.constant_(self.kps_score_lowres.bias, 0)
        self.up_scale = 2
        self.out_channels = num_keypoints

    def forward(self, x):
        x = self.kps_score_lowres(x)
        return F.interpolate(x, scale_factor=float(self.up_scale), mode="bilinear", align_corners=False,
                             recompute_scale_factor=False)


class KeypointRCNN(FasterRCNN):
    """Faster R-CNN plus a keypoint branch. Training targets add ``keypoints`` ``[N, K, 3]`` float32 (x, y,
    visibility); eval output adds ``keypoints`` ``[N, K, 3]`` and ``keypoints_scores`` ``[N, K]``."""

    def __init__(self, backbone, num_classes=None, min_size=None, max_size=1333, image_mean=None, image_std=None,
                 rpn_anchor_generator=None, rpn_head=None, rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000, rpn_nms_thresh=0.7,
                 rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3, rpn_batch_size_per_image=256,
                 rpn_positive_fraction=0.5, rpn_score_thresh=0.0, box_roi_pool=None, box_head=None,
                 box_predictor=None, box_score_thresh=0.05, box_nms_thresh=0.5, box_detections_per_img=100,
                 box_fg_iou_thresh=0.5, box_bg_iou_thresh=0.5, box_batch_size_per_image=512,
                 box_positive_fraction=0.25, bbox_reg_weights=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None, num_keypoints=None, **kwargs):
        if not isinstance(keypoint_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError(f"keypoint_roi_pool should be of type MultiScaleRoIAlign or None instead of "
                            f"{type(keypoint_roi_pool)}")
        if min_size is None:  # multi-scale training sizes (eval uses the last)
            min_size = (640, 672, 704, 736, 768, 800)
        if num_keypoints is not None:
            if keypoint_predictor is not None:
                raise ValueError("num_keypoints should be None when keypoint_predictor is specified")
        else:
            num_keypoints = 17
        out_channels = backbone.out_channels
        if keypoint_roi_pool is None:
            keypoint_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"], output_size=14,
                                                   sampling_ratio=2)
        if keypoint_head is None:
            keypoint_head = KeypointRCNNHeads(out_channels, tuple(512 for _ in range(8)))
        if keypoint_predictor is None:
            keypoint_predictor = KeypointRCNNPredictor(512, num_keypoints)
        super().__init__(backbone, num_classes, min_size, max_size, image_mean, image_std, rpn_anchor_generator,
                         rpn_head, rpn_pre_nms_top_n_train, rpn_pre_nms_top_n_test, rpn_post_nms_top_n_train,
                         rpn_post_nms_top_n_test, rpn_nms_thresh, rpn_fg_iou_thresh, rpn_bg_iou_thresh,
                         rpn_batch_size_per_image, rpn_positive_fraction, rpn_score_thresh, box_roi_pool, box_head,
                         box_predictor, box_score_thresh, box_nms_thresh, box_detections_per_img, box_fg_iou_thresh,
                         box_bg_iou_thresh, box_batch_size_per_image, box_positive_fraction, bbox_reg_weights,
                         **kwargs)
        self.roi_heads.keypoint_roi_pool = keypoint_roi_pool
        self.roi_heads.keypoint_head = keypoint_head
        self.roi_heads.keypoint_predictor = keypoint_predictor


_KEYPOINT_META = {"categories": COCO_PERSON_CATEGORIES, "keypoint_names": COCO_PERSON_KEYPOINT_NAMES,
                  "min_size": (1, 1), "num_params": 59137258}


class KeypointRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_LEGACY = Weights(url="https://download.pytorch.org/models/keypointrcnn_resnet50_fpn_coco-9f466800.pth",
                          transforms=ObjectDetection,
                          meta={**_KEYPOINT_META, "_metrics": {"COCO-val2017": {"box_map": 50.6, "kp_map": 61.1}}})
    COCO_V1 = Weights(url="https://download.pytorch.org/models/keypointrcnn_resnet50_fpn_coco-fc266e95.pth",
                      transforms=ObjectDetection,
                      meta={**_KEYPOINT_META, "_metrics": {"COCO-val2017": {"box_map": 54.6, "kp_map": 65.0}}})
    DEFAULT = COCO_V1


def keypointrcnn_resnet50_fpn(*, weights=None, progress=True, num_classes=None, num_keypoints=None,
                              weights_backbone=ResNet50_Weights.IMAGENET1K_V1, trainable_backbone_layers=None,
                              **kwargs):
    """Keypoint R-CNN ResNet-50-FPN (torchvision's builder; default 2 classes and 17 COCO keypoints)."""
    weights = KeypointRCNN_ResNet50_FPN_Weights.verify(weights)
    if weights is not None:
        num_keypoints = _ovewrite_value_param("num_keypoints", num_keypoints, len(weights.meta["keypoint_names"]))
    elif num_keypoints is None:
        num_keypoints = 17
    return _build_detector(KeypointRCNN_ResNet50_FPN_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress,
                           lambda backbone, n: KeypointRCNN(backbone, n, num_keypoints=num_keypoints, **kwargs),
                           eps_zero=True, default_num_classes=2)
