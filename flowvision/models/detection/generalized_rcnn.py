"""GeneralizedRCNN: transform -> backbone -> RPN -> RoI heads -> postprocess (torchvision's wrapper)."""
from collections import OrderedDict

import numpy as np

from flowvision.backend import Tensor, nn

__all__ = ["GeneralizedRCNN"]


class GeneralizedRCNN(nn.Module):
    def __init__(self, backbone, rpn, roi_heads, transform):
        super().__init__()
        self.transform = transform
        self.backbone = backbone
        self.rpn = rpn
        self.roi_heads = roi_heads

    def forward(self, images, targets=None):
        """Training: ``model(images, targets)`` -> dict of losses. Eval: ``model(images)`` -> list of
        ``{"boxes", "labels", "scores"}`` in original image coordinates."""
        if self.training:
            _check_targets(images, targets)
        original_image_sizes = _check_images(images)
        images, targets = self.transform(images, targets)
        _check_degenerate(targets)
        features = self.backbone(images.tensors)
        if isinstance(features, Tensor):
            features = OrderedDict([("0", features)])
        proposals, proposal_losses = self.rpn(images, features, targets)
        detections, detector_losses = self.roi_heads(features, proposals, images.image_sizes, targets)
        detections = self.transform.postprocess(detections, images.image_sizes, original_image_sizes)
        losses = {}
        losses.update(detector_losses)
        losses.update(proposal_losses)
        return losses if self.training else detections


def _check_targets(images, targets):
    if targets is None:
        raise ValueError("targets should not be none when in training mode")
    if len(targets) != len(images):
        raise ValueError(f"got {len(images)} images but {len(targets)} targets")
    for target in targets:
        boxes = target.get("boxes")
        if not isinstance(boxes, Tensor):
            raise TypeError(f"Expected target boxes to be of type Tensor, got {type(boxes)}.")
        if boxes.ndim != 2 or boxes.shape[-1] != 4:
            raise ValueError(f"Expected target boxes to be a tensor of shape [N, 4], got {list(boxes.shape)}.")


def _check_images(images):
    if isinstance(images, Tensor) and images.ndim == 4:  # a batch tensor iterates into images, as in torchvision
        images = list(images.unbind(0))
    if not isinstance(images, (list, tuple)):
        raise TypeError(f"images is expected to be a list of 3d tensors of shape [C, H, W], got {type(images).__name__}")
    sizes = []
    for img in images:
        if not isinstance(img, Tensor) or img.ndim != 3:
            raise ValueError("images is expected to be a list of 3d tensors of shape [C, H, W], got "
                             f"{getattr(img, 'shape', type(img).__name__)}")
        sizes.append((int(img.shape[-2]), int(img.shape[-1])))
    return sizes


def _check_degenerate(targets):
    if targets is None:
        return
    for i, target in enumerate(targets):
        b = target["boxes"].detach().numpy()
        degenerate = (b[:, 2:] <= b[:, :2]).any(axis=1)
        if degenerate.any():
            j = int(np.nonzero(degenerate)[0][0])
            raise ValueError("All bounding boxes should have positive height and width. Found invalid box "
                             f"{b[j].tolist()} for target at index {i}.")


def _single_stage_inputs(model, images, targets):
    """The common front of the single-stage detectors (RetinaNet, FCOS, SSD): input checks, the transform,
    backbone features as a list, head outputs and anchors.
    Returns (original_image_sizes, images, targets, features, head_outputs, anchors)."""
    if model.training:
        _check_targets(images, targets)
    original_image_sizes = _check_images(images)
    images, targets = model.transform(images, targets)
    _check_degenerate(targets)
    features = model.backbone(images.tensors)
    if isinstance(features, Tensor):
        features = OrderedDict([("0", features)])
    features = list(features.values())
    head_outputs = model.head(features)
    return original_image_sizes, images, targets, features, head_outputs, model.anchor_generator(images, features)
