"""flowvision.data: timm-grade training augmentation that works standalone in any data loader.

Importing this package pulls in numpy, Pillow and OpenCV only: never flowvision.models, never
torch, and flowvision.transforms only lazily inside :func:`create_transform`.
"""
from ._random import RandomSource, TimmRandom, resolve_rng
from .auto_augment import (
    AugmentOp, AutoAugment, RandAugment, AugMixAugment, TrivialAugment, auto_augment_policy,
    auto_augment_transform, rand_augment_transform, rand_augment_ops, rand_augment_choices,
    augment_and_mix_transform, augmix_ops, trivial_augment_transform, create_auto_augment,
    parse_rand_augment_config, apply_op,
)
from .mixup import Mixup, FastCollateMixup, mixup_target, one_hot, rand_bbox, rand_bbox_minmax, cutmix_bbox_and_lam
from .random_erasing import RandomErasing
from .constants import *  # noqa: F401,F403
from .config import resolve_data_config, resolve_model_data_config
from .transforms import (ToNumpy, ToTensor, MaybeToTensor, MaybePILToTensor, str_to_interp_mode, str_to_pil_interp,
                         interp_mode_to_str, RandomResizedCropAndInterpolation, CenterCropOrPad, center_crop_or_pad,
                         crop_or_pad, RandomCropOrPad, RandomPad, ResizeKeepRatio, TrimBorder)
from .transforms_factory import create_transform, transforms_imagenet_train, transforms_imagenet_eval, transforms_noaug_train
from .dataset import AugMixDataset
from .loader import fast_collate, PrefetchLoader, RepeatAugSampler, OrderedDistributedSampler, create_loader
from .scheduler import (Scheduler, CosineLRScheduler, StepLRScheduler, MultiStepLRScheduler, PolyLRScheduler,
                        TanhLRScheduler, PlateauLRScheduler)
from .utils import accuracy, AverageMeter, ModelEmaV2, ModelEmaV3, dispatch_clip_grad, adaptive_clip_grad

_LAZY_LOSSES = ("LabelSmoothingCrossEntropy", "SoftTargetCrossEntropy", "JsdCrossEntropy", "BinaryCrossEntropy")


def __getattr__(name):
    # the losses are flowvision.backend modules: load the engine only when they are asked for
    if name in _LAZY_LOSSES:
        from . import loss
        return getattr(loss, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_LOSSES))
