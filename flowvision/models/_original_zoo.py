"""Names of the original flowvision zoo that neither timm nor torchvision registers.

- Detection builders torchvision does not ship: Faster R-CNN and RetinaNet on a ResNet-101 FPN and RetinaNet on a
  ResNeXt-50 (32x4d) FPN -- torchvision's ResNet-50 builders with the backbone swapped, as its
  ``resnet_fpn_backbone`` builds them (same state-dict keys); no COCO weights exist for them (the original had
  none either), so ``weights`` must be None.
- The segmentation names with a ``_coco`` suffix (``fcn_resnet50_coco`` ...): aliases of torchvision's builders.
- ``resolvable_names(pattern)``: every name ``create_model`` accepts (registered models, aliases such as the
  original's spellings, torchvision and task builders) -- what ``flowvision models`` lists.
"""
import fnmatch
from typing import List, Optional

from flowvision.ops import FrozenBatchNorm2d, LastLevelP6P7

from ._factory import _TASK_BUILDERS, register_task_builder
from ._registry import list_models, register_model_alias

__all__ = ["fasterrcnn_resnet101_fpn", "retinanet_resnet101_fpn", "retinanet_resnext50_32x4d_fpn",
           "resolvable_names"]

for _seg in ("fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
             "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"):
    register_model_alias(f"{_seg}_coco", _seg)


def resolvable_names(pattern: str = "") -> List[str]:
    """Every name ``create_model`` resolves that matches the fnmatch ``pattern`` ('' = all), sorted.

    Args:
        pattern: an fnmatch pattern such as ``'resnet*'``.

    Returns:
        Registered model names plus aliases (the original flowvision's spellings), torchvision builders and task
        builders (style transfer, the detectors above).
    """
    from . import _registry
    from ._api import list_builders
    names = set(list_models()) | set(getattr(_registry, "_model_aliases", {})) | set(list_builders()) | \
        set(_TASK_BUILDERS)
    if pattern:
        names = set(fnmatch.filter(names, pattern))
    return sorted(names)


def _backbone(depth: int, groups: int, width: int, trainable_layers: int, retinanet: bool):
    from .detection.backbone_utils import _resnet_fpn_extractor
    from .resnet import Bottleneck, ResNet
    layers = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}[depth]
    # torchvision keeps every BN gamma at 1 (zero_init_residual=False); frozen BatchNorm as in its detectors
    body = ResNet(block=Bottleneck, layers=layers, cardinality=groups, base_width=width,
                  norm_layer=FrozenBatchNorm2d, zero_init_last=False)
    if retinanet:
        return _resnet_fpn_extractor(body, trainable_layers, [2, 3, 4], LastLevelP6P7(256, 256))
    return _resnet_fpn_extractor(body, trainable_layers)


def _check(weights, trainable_backbone_layers: Optional[int]) -> int:
    if weights is not None:
        raise ValueError("no pretrained weights exist for this detector; pass weights=None")
    layers = 3 if trainable_backbone_layers is None else trainable_backbone_layers
    if not 0 <= layers <= 5:
        raise ValueError(f"trainable_backbone_layers must be in 0..5, got {layers}")
    return layers


@register_task_builder
def fasterrcnn_resnet101_fpn(*, weights=None, progress: bool = True, num_classes: Optional[int] = None,
                             weights_backbone=None, trainable_backbone_layers: Optional[int] = None, **kwargs):
    """Faster R-CNN with a ResNet-101 FPN backbone (torchvision's ResNet-50 builder with the deeper backbone).

    Args:
        weights: must be None (no COCO weights). num_classes: classes including background (default 91).
        weights_backbone: unsupported (None). trainable_backbone_layers: 0..5 (default 3).
        **kwargs: passed to ``FasterRCNN``.
    """
    from .detection.faster_rcnn import FasterRCNN
    layers = _check(weights, trainable_backbone_layers)
    if weights_backbone is not None:
        raise ValueError("weights_backbone is not supported for this detector; pass None")
    return FasterRCNN(_backbone(101, 1, 64, layers, False), num_classes or 91, **kwargs)


def _retinanet(depth, groups, width, weights, num_classes, weights_backbone, trainable_backbone_layers, kwargs):
    from .detection.retinanet import RetinaNet
    layers = _check(weights, trainable_backbone_layers)
    if weights_backbone is not None:
        raise ValueError("weights_backbone is not supported for this detector; pass None")
    return RetinaNet(_backbone(depth, groups, width, layers, True), num_classes or 91, **kwargs)


@register_task_builder
def retinanet_resnet101_fpn(*, weights=None, progress: bool = True, num_classes: Optional[int] = None,
                            weights_backbone=None, trainable_backbone_layers: Optional[int] = None, **kwargs):
    """RetinaNet with a ResNet-101 FPN backbone (P3-P7, torchvision's v1 RetinaNet layout)."""
    return _retinanet(101, 1, 64, weights, num_classes, weights_backbone, trainable_backbone_layers, kwargs)


@register_task_builder
def retinanet_resnext50_32x4d_fpn(*, weights=None, progress: bool = True, num_classes: Optional[int] = None,
                                  weights_backbone=None, trainable_backbone_layers: Optional[int] = None, **kwargs):
    """RetinaNet with a ResNeXt-50 (32x4d) FPN backbone."""
    return _retinanet(50, 32, 4, weights, num_classes, weights_backbone, trainable_backbone_layers, kwargs)
