"""Segmentation/detection weights data (VOC categories, the ``SemanticSegmentation`` and ``ObjectDetection``
presets) on the zoo's shared
``Weights``/``WeightsEnum`` API. Checkpoints load through flowvision.hub (torch files are read without
torch)."""
from functools import partial

from flowvision.backend import nn

# one weights API for the whole zoo: the classification builders' Weights/WeightsEnum and backbone enums
from .._api import Weights, WeightsEnum
from ..mobilenetv3 import MobileNet_V3_Large_Weights
from ..resnet import ResNet50_Weights, ResNet101_Weights

__all__ = ["Weights", "WeightsEnum", "SemanticSegmentation", "ObjectDetection", "ResNet50_Weights",
           "ResNet101_Weights", "MobileNet_V3_Large_Weights", "VOC_CATEGORIES"]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

VOC_CATEGORIES = [
    "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
    "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor",
]


class SemanticSegmentation:
    """torchvision's preset: resize the shorter side to ``resize_size``, to float in [0, 1], normalise."""

    def __init__(self, *, resize_size=520, mean=IMAGENET_MEAN, std=IMAGENET_STD, interpolation=None,
                 antialias=True):
        from flowvision.transforms import InterpolationMode
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = InterpolationMode.BILINEAR if interpolation is None else interpolation
        self.antialias = antialias

    def __call__(self, img):
        import flowvision.backend as flow
        import flowvision.transforms.functional as F
        if isinstance(self.resize_size, list):
            img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        if not isinstance(img, flow.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, flow.float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    resize_size={self.resize_size}\n    mean={self.mean}\n"
                f"    std={self.std}\n    interpolation={self.interpolation}\n)")


class ObjectDetection(nn.Module):
    """torchvision's detection preset (one copy for every detection ``*_Weights`` enum): PIL images and
    uint8/float (B)CHW tensors to float32 in [0, 1] (no resize or normalisation: the detectors' own transform does
    both)."""

    def forward(self, img):
        import flowvision.backend as flow
        import flowvision.transforms.functional as F
        if not isinstance(img, flow.Tensor):
            img = F.pil_to_tensor(img)
        return F.convert_image_dtype(img, flow.float32)

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image tensors. "
                "The images are rescaled to ``[0.0, 1.0]``.")


_SEG_META = {"categories": VOC_CATEGORIES, "min_size": (1, 1),
             "_docs": "These weights were trained on a subset of COCO, using only the 20 categories that are "
                      "present in the Pascal VOC dataset."}


def _seg_weights(url, num_params, miou, acc):
    return Weights(url=url, transforms=partial(SemanticSegmentation, resize_size=520),
                   meta={**_SEG_META, "num_params": num_params,
                         "_metrics": {"COCO-val2017-VOC-labels": {"miou": miou, "pixel_acc": acc}}})
