"""SSD (torchvision's SSD class, heads, VGG16 feature extractor, defaults, builder and parameter names).

Selection logic (per-class score threshold and top-k, hard negative mining) runs vectorised in numpy on detached
values; the differentiable parts (heads, box coding, losses) are engine ops.
"""
import warnings
from collections import OrderedDict
from functools import partial

import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import box_iou, clip_boxes_to_image

from .._api import ImageClassification
from ..segmentation._weights import ObjectDetection, Weights, WeightsEnum
from ..vgg import VGG16_Weights
from . import _utils as det_utils
from .anchor_utils import DefaultBoxGenerator
from .backbone_utils import _validate_trainable_layers
from .faster_rcnn import COCO_CATEGORIES
from .generalized_rcnn import _single_stage_inputs
from .transform import GeneralizedRCNNTransform

__all__ = ["SSD", "SSDHead", "SSDScoringHead", "SSDClassificationHead", "SSDRegressionHead",
           "SSDFeatureExtractorVGG", "SSD300_VGG16_Weights", "VGG16_Features_Weights",
           "ssd300_vgg16"]


class SSD300_VGG16_Weights(WeightsEnum):
    COCO_V1 = Weights(
        url="https://download.pytorch.org/models/ssd300_vgg16_coco-b556d3b4.pth",
        transforms=ObjectDetection,
        meta={"num_params": 35641826, "categories": COCO_CATEGORIES, "min_size": (1, 1),
              "recipe": "https://github.com/pytorch/vision/tree/main/references/detection#ssd300-vgg16",
              "_metrics": {"COCO-val2017": {"box_map": 25.1}}, "_ops": 34.858, "_file_size": 135.988,
              "_docs": "These weights were produced by following a similar training recipe as on the paper."})
    DEFAULT = COCO_V1


class VGG16_Features_Weights(WeightsEnum):
    """torchvision's ``VGG16_Weights.IMAGENET1K_FEATURES`` (amdegroot's SSD backbone: only ``features`` is valid,
    the classifier holds NaNs; inputs are 0..255-scaled). A separate enum because flowvision's ``VGG16_Weights``
    is the classification enum; ``ssd300_vgg16`` also accepts torchvision's member and the name."""
    IMAGENET1K_FEATURES = Weights(
        url="https://download.pytorch.org/models/vgg16_features-amdegroot-88682ab5.pth",
        transforms=partial(ImageClassification, crop_size=224, mean=(0.48235, 0.45882, 0.40784),
                           std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0)),
        meta={"num_params": 138357544, "categories": None, "min_size": (32, 32),
              "recipe": "https://github.com/amdegroot/ssd.pytorch#training-ssd",
              "_metrics": {"ImageNet-1K": {"acc@1": float("nan"), "acc@5": float("nan")}}, "_ops": 15.47,
              "_file_size": 527.802,
              "_docs": "These weights can't be used for classification because they are missing values in the "
                       "`classifier` module. Only the `features` module has valid values and can be used for "
                       "feature extraction."})
    DEFAULT = IMAGENET1K_FEATURES


def _verify_vgg16_backbone_weights(obj):
    """``weights_backbone`` of ssd300_vgg16: a VGG16_Features_Weights or (flowvision or torchvision) VGG16_Weights
    member, or a name; IMAGENET1K_FEATURES resolves to VGG16_Features_Weights, the rest to VGG16_Weights."""
    if obj is None or isinstance(obj, (VGG16_Features_Weights, VGG16_Weights)):
        return obj
    if isinstance(obj, str):
        name = obj.split(".")[-1]
    elif type(obj).__name__ in ("VGG16_Weights", "VGG16_Features_Weights"):
        name = getattr(obj, "name", None)
    else:
        raise TypeError(f"Invalid Weight class provided; expected VGG16_Features_Weights or VGG16_Weights but "
                        f"received {obj.__class__.__name__}.")
    if name in VGG16_Features_Weights.__members__ and name != "DEFAULT":
        return VGG16_Features_Weights[name]
    return VGG16_Weights.verify(name)


def _xavier_init(conv):
    for layer in conv.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0.0)


class SSDScoringHead(nn.Module):
    """One predictor per feature map; outputs are flattened (N, A*K, H, W) -> (N, H*W*A, K) and concatenated over
    the maps in order."""

    def __init__(self, module_list, num_columns):
        super().__init__()
        self.module_list = module_list
        self.num_columns = num_columns

    def forward(self, x):
        if len(x) != len(self.module_list):
            raise ValueError(f"expected {len(self.module_list)} feature maps, got {len(x)}")
        out = []
        for module, features in zip(self.module_list, x):
            r = module(features)
            n, _, h, w = r.shape
            out.append(r.view(n, -1, self.num_columns, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, self.num_columns))
        return flow.cat(out, dim=1)


class SSDClassificationHead(SSDScoringHead):
    def __init__(self, in_channels, num_anchors, num_classes):
        cls_logits = nn.ModuleList([nn.Conv2d(c, num_classes * a, kernel_size=3, padding=1)
                                    for c, a in zip(in_channels, num_anchors)])
        _xavier_init(cls_logits)
        super().__init__(cls_logits, num_classes)


class SSDRegressionHead(SSDScoringHead):
    def __init__(self, in_channels, num_anchors):
        bbox_reg = nn.ModuleList([nn.Conv2d(c, 4 * a, kernel_size=3, padding=1)
                                  for c, a in zip(in_channels, num_anchors)])
        _xavier_init(bbox_reg)
        super().__init__(bbox_reg, 4)


class SSDHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes):
        super().__init__()
        self.classification_head = SSDClassificationHead(in_channels, num_anchors, num_classes)
        self.regression_head = SSDRegressionHead(in_channels, num_anchors)

    def forward(self, x):
        return {"bbox_regression": self.regression_head(x), "cls_logits": self.classification_head(x)}


class SSD(nn.Module):
    """SSD (torchvision's class): ``forward(images: list[CHW float in 0..1], targets=None)``; training returns
    ``{"bbox_regression", "classification"}``, eval a list of ``{"boxes", "labels", "scores"}`` in original image
    coordinates. Images are resized to ``size`` (fixed) and normalised by ``image_mean``/``image_std``."""

    def __init__(self, backbone, anchor_generator, size, num_classes, image_mean=None, image_std=None, head=None,
                 score_thresh=0.01, nms_thresh=0.45, detections_per_img=200, iou_thresh=0.5, topk_candidates=400,
                 positive_fraction=0.25, **kwargs):
        super().__init__()
        if not 0.0 < positive_fraction <= 1.0:
            raise ValueError(f"positive_fraction should be in (0, 1], got {positive_fraction}")
        self.backbone = backbone
        self.anchor_generator = anchor_generator
        self.box_coder = det_utils.BoxCoder(weights=(10.0, 10.0, 5.0, 5.0))
        if head is None:
            out_channels = (backbone.out_channels if hasattr(backbone, "out_channels")
                            else det_utils.retrieve_out_channels(backbone, size))
            if len(out_channels) != len(anchor_generator.aspect_ratios):
                raise ValueError(f"The length of the output channels from the backbone ({len(out_channels)}) do not "
                                 f"match the length of the anchor generator aspect ratios "
                                 f"({len(anchor_generator.aspect_ratios)})")
            head = SSDHead(out_channels, anchor_generator.num_anchors_per_location(), num_classes)
        self.head = head
        self.proposal_matcher = det_utils.SSDMatcher(iou_thresh)
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        self.transform = GeneralizedRCNNTransform(min(size), max(size), image_mean, image_std, size_divisible=1,
                                                  fixed_size=size, **kwargs)
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates
        self.neg_to_pos_ratio = (1.0 - positive_fraction) / positive_fraction

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        bbox_regression = head_outputs["bbox_regression"]
        cls_logits = head_outputs["cls_logits"]
        num_images, num_anchors, num_classes = cls_logits.shape
        num_foreground = 0
        bbox_loss = []
        cls_targets = np.zeros((num_images, num_anchors), np.int64)
        for i, (t, anchors_i, mi) in enumerate(zip(targets, anchors, matched_idxs)):
            fg = np.nonzero(mi >= 0)[0]
            num_foreground += fg.size
            fg_t = flow.from_numpy(fg)
            matched_gt = t["boxes"][flow.from_numpy(mi[fg])]
            target_regression = self.box_coder.encode_single(matched_gt, anchors_i[fg_t])
            bbox_loss.append(F.smooth_l1_loss(bbox_regression[i][fg_t], target_regression, reduction="sum"))
            cls_targets[i, fg] = t["labels"].detach().numpy()[mi[fg]]
        cls_loss = F.cross_entropy(cls_logits.reshape(-1, num_classes), flow.from_numpy(cls_targets.reshape(-1)),
                                   reduction="none")
        # hard negative mining: per image the 3x(#positives) background anchors of highest loss (positives sort
        # last as -inf); the rank of each anchor in that order decides, as torchvision's double sort
        foreground = cls_targets > 0
        num_negative = self.neg_to_pos_ratio * foreground.sum(1, keepdims=True)
        negative_loss = cls_loss.detach().numpy().reshape(num_images, num_anchors).copy()
        negative_loss[foreground] = -np.inf
        order = np.argsort(-negative_loss, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(num_anchors), order.shape), axis=1)
        background = rank < num_negative
        n = max(1, num_foreground)
        cls_sum = (cls_loss[flow.from_numpy(np.flatnonzero(foreground))].sum()
                   + cls_loss[flow.from_numpy(np.flatnonzero(background))].sum())
        return {"bbox_regression": flow.stack(bbox_loss).sum() / n, "classification": cls_sum / n}

    def postprocess_detections(self, head_outputs, image_anchors, image_shapes):
        bbox_regression = head_outputs["bbox_regression"]
        pred_scores = F.softmax(head_outputs["cls_logits"], dim=-1)
        detections = []
        for i, (anchors, image_shape) in enumerate(zip(image_anchors, image_shapes)):
            boxes = clip_boxes_to_image(self.box_coder.decode_single(bbox_regression[i], anchors), image_shape).numpy()
            scores = pred_scores[i]
            # torchvision loops over the foreground classes: score > thresh, then the class's top-k; here all
            # classes at once: a partial selection of each class's k best anchors (O(anchors), not a sort of
            # every candidate), then those k sorted by score (descending; exact ties by anchor index)
            per_class = scores.numpy()[:, 1:].T
            per_class = np.where(per_class > self.score_thresh, per_class, -np.inf)
            k = min(self.topk_candidates, per_class.shape[1])
            if k < per_class.shape[1]:
                anchor = np.argpartition(-per_class, k - 1, axis=1)[:, :k]
            else:
                anchor = np.broadcast_to(np.arange(per_class.shape[1]), per_class.shape)
            score = np.take_along_axis(per_class, anchor, axis=1)
            order = np.lexsort((anchor, -score), axis=-1)
            anchor, score = np.take_along_axis(anchor, order, axis=1), np.take_along_axis(score, order, axis=1)
            label = np.broadcast_to(np.arange(1, per_class.shape[0] + 1)[:, None], anchor.shape)
            keep = score > -np.inf
            label, anchor, score = label[keep], anchor[keep], score[keep]
            detections.append(det_utils.nms_detections(boxes[anchor], score, label, self.nms_thresh,
                                                       self.detections_per_img))
        return detections

    def forward(self, images, targets=None):
        original_image_sizes, images, targets, features, head_outputs, anchors = _single_stage_inputs(
            self, images, targets)
        if self.training:
            matched_idxs = []
            for anchors_i, t in zip(anchors, targets):
                if t["boxes"].numel() == 0:
                    matched_idxs.append(np.full((anchors_i.shape[0],), -1, np.int64))
                    continue
                matched_idxs.append(self.proposal_matcher(box_iou(t["boxes"].detach(), anchors_i)).numpy())
            return self.compute_loss(targets, head_outputs, anchors, matched_idxs)
        with flow.no_grad():
            detections = self.postprocess_detections({k: v.detach() for k, v in head_outputs.items()}, anchors,
                                                     images.image_sizes)
        return self.transform.postprocess(detections, images.image_sizes, original_image_sizes)


# ------------------------------------------------------------------ VGG16 backbone

_VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def _vgg16_features():
    """torchvision's ``vgg16().features`` (indices = parameter names). Only the features: SSD drops the
    120M-parameter classifier, so it is never built (torchvision builds and discards it)."""
    layers, prev = [], 3
    for v in _VGG16_CFG:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv = nn.Conv2d(prev, v, kernel_size=3, padding=1)
            nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
            nn.init.zeros_(conv.bias)
            layers += [conv, nn.ReLU(inplace=True)]
            prev = v
    return nn.Sequential(*layers)


def _load_features(features, weights, progress):
    """Load the ``features.*`` entries of a classification checkpoint (VGG16, MobileNetV3, amdegroot's features)."""
    from flowvision import hub
    sd = hub.load_state_dict_from_url(weights.url, progress=progress, check_hash=True, as_numpy=True)
    sd = {k[len("features."):]: v for k, v in sd.items() if k.startswith("features.")}
    features.load_state_dict(hub.to_backend(sd), strict=True)


class SSDFeatureExtractorVGG(nn.Module):
    """VGG16 up to conv4_3 (L2-normalised, rescaled by ``scale_weight``), then conv5 + the atrous fc6/fc7 and the
    SSD extra layers: six feature maps (38, 19, 10, 5, 3, 1 at 300x300); ``highres`` adds the SSD512 layer."""

    def __init__(self, backbone, highres):
        super().__init__()
        pools = [i for i, layer in enumerate(backbone) if isinstance(layer, nn.MaxPool2d)]
        if len(pools) != 5:
            raise ValueError(f"expected the 5 max-pools of VGG16's features, got {len(pools)}")
        maxpool3_pos, maxpool4_pos = pools[2], pools[3]
        backbone[maxpool3_pos].ceil_mode = True  # 75 -> 38, the paper's conv4_3 size
        self.scale_weight = nn.Parameter(flow.ones(512) * 20)
        self.features = nn.Sequential(*backbone[:maxpool4_pos])

        def block(cin, mid, cout, **conv):
            return nn.Sequential(nn.Conv2d(cin, mid, kernel_size=1), nn.ReLU(inplace=True),
                                 nn.Conv2d(mid, cout, **conv), nn.ReLU(inplace=True))

        extra = [block(1024, 256, 512, kernel_size=3, padding=1, stride=2),   # conv8_2
                 block(512, 128, 256, kernel_size=3, padding=1, stride=2),    # conv9_2
                 block(256, 128, 256, kernel_size=3),                         # conv10_2
                 block(256, 128, 256, kernel_size=3)]                         # conv11_2
        if highres:
            extra.append(block(256, 128, 256, kernel_size=4))                # conv12_2
        extra = nn.ModuleList(extra)
        _xavier_init(extra)
        fc = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=False),  # modified pool5
                           nn.Conv2d(512, 1024, kernel_size=3, padding=6, dilation=6),          # atrous fc6
                           nn.ReLU(inplace=True), nn.Conv2d(1024, 1024, kernel_size=1),         # fc7
                           nn.ReLU(inplace=True))
        _xavier_init(fc)
        # conv5_1..conv5_3 (skipping pool5) then fc6/fc7: the second feature map
        self.extra = nn.ModuleList([nn.Sequential(*backbone[maxpool4_pos:-1], fc)] + list(extra))
        # known statically: spares SSD the probe forward pass torchvision runs (retrieve_out_channels)
        self.out_channels = [512, 1024, 512, 256, 256, 256] + ([256] if highres else [])

    def forward(self, x):
        x = self.features(x)
        output = [self.scale_weight.view(1, -1, 1, 1) * F.normalize(x)]
        for block in self.extra:
            x = block(x)
            output.append(x)
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


def _vgg_extractor(backbone, highres, trainable_layers):
    """Freeze the VGG stages before the last ``trainable_layers`` (stages start at 0 and after each pool)."""
    stage_indices = [0] + [i for i, b in enumerate(backbone) if isinstance(b, nn.MaxPool2d)][:-1]
    num_stages = len(stage_indices)
    if not 0 <= trainable_layers <= num_stages:
        raise ValueError(f"trainable_layers should be in the range [0, {num_stages}]. Instead got {trainable_layers}")
    freeze_before = len(backbone) if trainable_layers == 0 else stage_indices[num_stages - trainable_layers]
    for b in backbone[:freeze_before]:
        for parameter in b.parameters():
            parameter.requires_grad_(False)
    return SSDFeatureExtractorVGG(backbone, highres)


def ssd300_vgg16(*, weights=None, progress=True, num_classes=None,
                 weights_backbone=VGG16_Features_Weights.IMAGENET1K_FEATURES, trainable_backbone_layers=None,
                 **kwargs):
    """SSD300 with a VGG16 backbone (torchvision's builder): fixed 300x300 input, 0..255-scaled normalisation."""
    from ..segmentation._utils import _ovewrite_value_param
    weights = SSD300_VGG16_Weights.verify(weights)
    weights_backbone = _verify_vgg16_backbone_weights(weights_backbone)
    if "size" in kwargs:
        warnings.warn("The size of the model is already fixed; ignoring the parameter.")
        kwargs.pop("size")
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
    elif num_classes is None:
        num_classes = 91
    trainable_backbone_layers = _validate_trainable_layers(weights is not None or weights_backbone is not None,
                                                           trainable_backbone_layers, 5, 4)
    features = _vgg16_features()
    if weights_backbone is not None:
        _load_features(features, weights_backbone, progress)
    backbone = _vgg_extractor(features, False, trainable_backbone_layers)
    anchor_generator = DefaultBoxGenerator([[2], [2, 3], [2, 3], [2, 3], [2], [2]],
                                           scales=[0.07, 0.15, 0.33, 0.51, 0.69, 0.87, 1.05],
                                           steps=[8, 16, 32, 64, 100, 300])
    # the backbone was trained on 0..255 inputs: the std undoes ToTensor's scaling
    defaults = {"image_mean": [0.48235, 0.45882, 0.40784], "image_std": [1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0]}
    model = SSD(backbone, anchor_generator, (300, 300), num_classes, **{**defaults, **kwargs})
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
