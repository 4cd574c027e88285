"""torchvision.transforms.v2 classes: one parameter draw per call, applied to images, videos, masks and
bounding boxes alike.

The classes live by concern, as in torchvision: ``_container``, ``_type_conversion``, ``_geometry``, ``_color``,
``_meta``, ``_augment``, ``_auto_augment`` and ``_temporal``; each calls ``v2.functional``, which dispatches per input
type to the kernels.
"""
from ._augment import CutMix, MixUp, RandomErasing, _BaseMixUpCutMix  # noqa: F401
from ._auto_augment import AugMix, AutoAugment, RandAugment, TrivialAugmentWide, _V1ImageWrapper  # noqa: F401
from ._color import (ColorJitter, GaussianBlur, GaussianNoise, Grayscale, JPEG, LinearTransformation,  # noqa: F401
                     RandomAdjustSharpness, RandomAutocontrast, RandomChannelPermutation, RandomEqualize,
                     RandomGrayscale, RandomInvert, RandomPhotometricDistort, RandomPosterize,
                     RandomSolarize, _ColorTransform, _RandomColorOp)
from ._container import Compose, Identity, Lambda, RandomApply, RandomChoice, RandomOrder  # noqa: F401
from ._geometry import (CenterCrop, ElasticTransform, FiveCrop, Pad, RandomAffine, RandomCrop,  # noqa: F401
                        RandomHorizontalFlip, RandomIoUCrop, RandomPerspective, RandomResize,
                        RandomResizedCrop, RandomRotation, RandomShortestSize, RandomVerticalFlip,
                        RandomZoomOut, Resize, ScaleJitter, TenCrop, _box_iou)
from ._meta import (ClampBoundingBoxes, ConvertBoundingBoxFormat, SanitizeBoundingBoxes,  # noqa: F401
                    _find_labels_default, _parse_labels_getter)
from ._temporal import UniformTemporalSubsample  # noqa: F401
from ._type_conversion import (ConvertImageDtype, Normalize, PILToTensor, RGB, ToDtype, ToImage,  # noqa: F401
                               ToPILImage, ToPureTensor, ToTensor)
from ._utils import (_FILL_ERR, _check_sequence_input, _convert_fill, _get_fill, _interp,  # noqa: F401
                     _setup_fill_arg, _setup_size)
