"""torchvision.transforms.v2 for flowvision: transforms over any (nested) tuple / list / dict sample, one
random draw per call applied to images, videos, masks and bounding boxes alike.

``flowvision.transforms.v2.tv_tensors`` holds the typed containers (``Image``, ``Video``, ``Mask``,
``BoundingBoxes``); ``flowvision.tv_tensors`` re-exports them at the top level.
"""
from . import functional, tv_tensors
from ._transform import Transform
from ._transforms import (JPEG, RGB, AugMix, AutoAugment, CenterCrop, ClampBoundingBoxes, ColorJitter, Compose,
                          ConvertBoundingBoxFormat, ConvertImageDtype, CutMix, ElasticTransform, FiveCrop,
                          GaussianBlur, GaussianNoise, Grayscale, Identity, Lambda, LinearTransformation, MixUp,
                          Normalize, Pad, PILToTensor, RandAugment, RandomAdjustSharpness, RandomAffine, RandomApply,
                          RandomAutocontrast, RandomChannelPermutation, RandomChoice, RandomCrop, RandomEqualize,
                          RandomErasing, RandomGrayscale, RandomHorizontalFlip, RandomInvert, RandomIoUCrop,
                          RandomOrder, RandomPerspective, RandomPhotometricDistort, RandomPosterize, RandomResize,
                          RandomResizedCrop, RandomRotation, RandomShortestSize, RandomSolarize, RandomVerticalFlip,
                          RandomZoomOut, Resize, SanitizeBoundingBoxes, ScaleJitter, TenCrop, ToDtype, ToImage,
                          ToPILImage, ToPureTensor, ToTensor, TrivialAugmentWide, UniformTemporalSubsample)
from ..autoaugment import AutoAugmentPolicy
from ..functional import InterpolationMode

__all__ = [n for n in dir() if not n.startswith("_")]
