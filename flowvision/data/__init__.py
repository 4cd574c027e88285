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
