"""torchvision.transforms (v1) classes on PIL images, numpy HWC arrays and backend tensors.

The classes live by concern in ``_transforms_conversion``, ``_transforms_containers``, ``_transforms_geometry``,
``_transforms_color`` and ``_transforms_misc``; each calls ``flowvision.transforms.functional``, which dispatches to
the per-backend kernels.
"""
from .functional import InterpolationMode
from ._transform_base import Transform  # noqa: F401
from ._transforms_color import (ColorJitter, GaussianBlur, Grayscale, RandomAdjustSharpness, RandomAutocontrast,
                                RandomEqualize, RandomGrayscale, RandomInvert, RandomPosterize, RandomSolarize)
from ._transforms_containers import (Compose, Lambda, RandomApply, RandomChoice, RandomOrder,  # noqa: F401
                                     RandomTransforms)
from ._transforms_conversion import ConvertImageDtype, Normalize, PILToTensor, ToPILImage, ToTensor
from ._transforms_geometry import (_array_fill, _check_sequence_input, _setup_angle, _setup_size,  # noqa: F401
                                   CenterCrop, ElasticTransform, FiveCrop, Pad, RandomAffine, RandomCrop,
                                   RandomHorizontalFlip, RandomPerspective, RandomResizedCrop, RandomRotation,
                                   RandomVerticalFlip, Resize, TenCrop)
from ._transforms_misc import LinearTransformation, RandomErasing

__all__ = [
    "Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize", "Resize",
    "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice", "RandomOrder", "RandomCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "FiveCrop", "TenCrop",
    "LinearTransformation", "ColorJitter", "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale",
    "RandomPerspective", "RandomErasing", "GaussianBlur", "InterpolationMode", "RandomInvert", "RandomPosterize",
    "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "ElasticTransform",
]

