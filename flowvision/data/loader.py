"""Loaders: fast uint8 collation, a CPU "prefetcher" (normalise + RandomErasing after collation),
RepeatAugSampler, and create_loader on flowvision's DataLoader."""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from ._arrays import as_numpy, kind_of
from .constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from .dataset import AugMixDataset
from .mixup import FastCollateMixup
from .random_erasing import RandomErasing
from .transforms_factory import create_transform

__all__ = ["fast_collate", "PrefetchLoader", "RepeatAugSampler", "OrderedDistributedSampler", "create_loader"]


def _u8(x):
    return as_numpy(x, "fast_collate sample") if kind_of(x) != "other" else np.asarray(x)


def fast_collate(batch: Sequence[Any]) -> Tuple[Any, Any]:
    """List of ``(uint8 CHW image, target)`` -> ``(uint8 (B, C, H, W) numpy batch, int64 targets)``.

    Tuples of images (AugMixDataset) are de-interleaved split-major: ``out[i + j*B] = batch[i][0][j]``
    and the targets are repeated per split.

    Args:
        batch: the samples, each ``(image, target)`` with a uint8 CHW image (or a tuple of them).

    Returns:
        ``(images, targets)`` as numpy arrays.
    """
    if not batch or not isinstance(batch[0], tuple):
        raise ValueError("fast_collate expects a non-empty list of (image, target) tuples")
    b = len(batch)
    targets = np.stack([np.asarray(as_numpy(t) if kind_of(t) in ("backend", "dlpack") else t) for _, t in batch])
    if targets.ndim == 1:
        targets = targets.astype(np.int64)
    if isinstance(batch[0][0], tuple):
        n = len(batch[0][0])
        first = _u8(batch[0][0][0])
        out = np.empty((b * n, *first.shape), np.uint8)
        for i in range(b):
            if len(batch[i][0]) != n:
                raise ValueError("all samples must carry the same number of splits")
            for j in range(n):
                out[i + j * b] = _u8(batch[i][0][j])
        return out, np.concatenate([targets] * n)
    first = _u8(batch[0][0])
    out = np.empty((b, *first.shape), np.uint8)
    for i in range(b):
        out[i] = _u8(batch[i][0])
    return out, targets


class PrefetchLoader:
    """Wraps a loader yielding uint8 batches: converts to float, normalises with mean/std (0..1
    scale, like timm's PrefetchLoader) and applies RandomErasing to the batch, on the CPU.

    ``as_backend=True`` yields flowvision.backend tensors, otherwise numpy arrays.

    Args:
        loader: the loader of uint8 batches.
        mean: normalization mean (0..1 scale).
        std: normalization standard deviation (0..1 scale).
        channels: image channels (a mean / std of another length is averaged).
        img_dtype: float dtype of the output images.
        re_prob: random-erasing probability.
        re_mode: erasing fill: ``"const"``, ``"rand"`` or ``"pixel"``.
        re_count: maximum number of erased regions.
        re_num_splits: leave the first split of an AugMix batch unerased.
        as_backend: yield backend tensors (else numpy arrays).
        seed: seed of the erasing draws.
    """

    def __init__(self, loader: Any, mean: Sequence[float] = IMAGENET_DEFAULT_MEAN,
                 std: Sequence[float] = IMAGENET_DEFAULT_STD, channels: int = 3, img_dtype: Any = np.float32,
                 re_prob: float = 0.0, re_mode: str = "const", re_count: int = 1, re_num_splits: int = 0,
                 as_backend: bool = True, seed: Optional[int] = None) -> None:
        mean = tuple(mean) if len(tuple(mean)) == channels else (float(np.mean(mean)),) * channels
        std = tuple(std) if len(tuple(std)) == channels else (float(np.mean(std)),) * channels
        self.loader = loader
        self.mean = (np.asarray(mean, np.float32) * 255).reshape(1, channels, 1, 1)
        self.std = (np.asarray(std, np.float32) * 255).reshape(1, channels, 1, 1)
        self.img_dtype = np.dtype(img_dtype)
        self.random_erasing = (RandomErasing(probability=re_prob, mode=re_mode, max_count=re_count,
                                             num_splits=re_num_splits, seed=seed) if re_prob > 0.0 else None)
        self.as_backend = as_backend

    def _wrap(self, x):
        if not self.as_backend:
            return x
        import flowvision.backend as fb
        return fb.from_numpy(np.ascontiguousarray(x))

    def __iter__(self):
        for x, y in self.loader:
            xa = np.asarray(as_numpy(x) if kind_of(x) != "other" else x)
            ya = np.asarray(as_numpy(y) if kind_of(y) != "other" else y)
            xf = xa.astype(self.img_dtype)
            xf -= self.mean
            xf /= self.std
            if self.random_erasing is not None:
                self.random_erasing(xf)
            yield self._wrap(xf), self._wrap(ya)

    def __len__(self):
        return len(self.loader)

    @property
    def sampler(self):
        return self.loader.sampler

    @property
    def dataset(self):
        return self.loader.dataset

    @property
    def mixup_enabled(self):
        cf = getattr(self.loader, "collate_fn", None)
        return bool(getattr(cf, "mixup_enabled", False))

    @mixup_enabled.setter
    def mixup_enabled(self, x):
        cf = getattr(self.loader, "collate_fn", None)
        if isinstance(cf, FastCollateMixup):
            cf.mixup_enabled = x


def _dist_defaults(num_replicas, rank):
    if num_replicas is None:
        num_replicas = int(os.environ.get("WORLD_SIZE", 1))
    if rank is None:
        rank = int(os.environ.get("RANK", 0))
    return num_replicas, rank


class RepeatAugSampler:
    """Repeated augmentation (DeiT): each index repeated ``num_repeats`` times, spread across ranks.

    Same index arithmetic as timm's sampler; the epoch permutation comes from a numpy generator
    seeded with ``(seed, epoch)`` (timm uses ``torch.randperm``), so the order differs from timm's.

    Args:
        dataset: the dataset (its length).
        num_replicas: number of processes (default WORLD_SIZE).
        rank: this process's rank (default RANK).
        shuffle: shuffle each epoch.
        num_repeats: repeats of each index.
        selected_round: round the dataset length down to a multiple of this before dividing (0: no rounding).
        selected_ratio: samples per rank per epoch = dataset length / this (0: ``num_replicas``).
        seed: base seed of the epoch permutations.
    """

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, num_repeats: int = 3, selected_round: int = 256, selected_ratio: int = 0,
                 seed: int = 0) -> None:
        num_replicas, rank = _dist_defaults(num_replicas, rank)
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.num_repeats = num_repeats
        self.epoch = 0
        self.seed = seed
        n = len(dataset)
        self.num_samples = int(math.ceil(n * num_repeats / num_replicas))
        self.total_size = self.num_samples * num_replicas
        selected_ratio = selected_ratio or num_replicas
        if selected_round:
            self.num_selected_samples = int(math.floor(n // selected_round * selected_round / selected_ratio))
        else:
            self.num_selected_samples = int(math.ceil(n / selected_ratio))

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng([self.seed, self.epoch]).permutation(n)
        else:
            indices = np.arange(n)
        if isinstance(self.num_repeats, float) and not float(self.num_repeats).is_integer():
            repeat_size = math.ceil(self.num_repeats * n)
            indices = indices[(np.arange(repeat_size) // self.num_repeats).astype(np.int64)]
        else:
            indices = np.repeat(indices, int(self.num_repeats))
        indices = indices.tolist()
        padding = self.total_size - len(indices)
        if padding > 0:
            indices += indices[:padding]
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices[:self.num_selected_samples])

    def __len__(self):
        return self.num_selected_samples

    def set_epoch(self, epoch: int):
        self.epoch = epoch


class OrderedDistributedSampler:
    """Distributed eval sampler: contiguous-free strided split, padded to equal length, no shuffle.

    Args:
        dataset: the dataset (its length).
        num_replicas: number of processes (default WORLD_SIZE).
        rank: this process's rank (default RANK).
    """

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None) -> None:
        num_replicas, rank = _dist_defaults(num_replicas, rank)
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.num_samples = int(math.ceil(len(dataset) / num_replicas))
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        indices = list(range(len(self.dataset)))
        indices += indices[:(self.total_size - len(indices))]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples


def create_loader(dataset: Any, input_size: Union[int, Tuple[int, int], Tuple[int, int, int]], batch_size: int,
                  is_training: bool = False, no_aug: bool = False, re_prob: float = 0.0, re_mode: str = "const",
                  re_count: int = 1, re_split: bool = False, train_crop_mode: Optional[str] = None,
                  scale: Optional[Sequence[float]] = None, ratio: Optional[Sequence[float]] = None, hflip: float = 0.5,
                  vflip: float = 0.0, color_jitter: Optional[Union[float, Sequence[float]]] = 0.4,
                  color_jitter_prob: Optional[float] = None, grayscale_prob: float = 0.0,
                  gaussian_blur_prob: float = 0.0, auto_augment: Optional[str] = None, num_aug_repeats: int = 0,
                  num_aug_splits: int = 0, interpolation: str = "bilinear",
                  mean: Sequence[float] = IMAGENET_DEFAULT_MEAN, std: Sequence[float] = IMAGENET_DEFAULT_STD,
                  num_workers: int = 1, distributed: bool = False, crop_pct: Optional[float] = None,
                  crop_mode: Optional[str] = None, crop_border_pixels: Optional[int] = None,
                  collate_fn: Optional[Callable] = None, pin_memory: bool = False, img_dtype: Any = np.float32,
                  use_prefetcher: bool = True, persistent_workers: bool = True, tf_preprocessing: bool = False,
                  seed: Optional[int] = None, as_backend: bool = True, timeout: float = 0, **_ignored: Any) -> Any:
    """timm's ``create_loader`` on ``flowvision.backend.utils.data.DataLoader``.

    Sets ``dataset.transform`` from :func:`create_transform`; with ``use_prefetcher`` the samples stay
    uint8, are collated by :func:`fast_collate` (or the given ``collate_fn``, e.g. FastCollateMixup)
    and normalised + randomly erased per batch by :class:`PrefetchLoader` on the CPU.
    ``num_aug_splits > 1`` wraps the dataset in :class:`AugMixDataset`; ``distributed`` uses
    RepeatAugSampler (``num_aug_repeats``) or DistributedSampler for training and
    OrderedDistributedSampler for eval (ranks from RANK / WORLD_SIZE).

    Args:
        dataset: a map-style dataset with a settable ``transform``.
        input_size: output size: an int, ``(H, W)`` or ``(C, H, W)``.
        batch_size: samples per batch.
        is_training: build the training pipeline (else the eval one).
        no_aug: training without augmentation (resize + center crop only).
        re_prob: random-erasing probability.
        re_mode: erasing fill: ``"const"``, ``"rand"`` or ``"pixel"``.
        re_count: maximum number of erased regions.
        re_split: erase per augmentation split (AugMix).
        train_crop_mode: ``"rrc"`` (random resized crop, default), ``"rkrc"`` / ``"rkrr"`` (resize keeping
            ratio, then center / random crop-or-pad).
        scale: area range of the random resized crop (default ``(0.08, 1.0)``).
        ratio: aspect-ratio range of the random resized crop (default ``(3/4, 4/3)``).
        hflip: horizontal-flip probability.
        vflip: vertical-flip probability.
        color_jitter: brightness/contrast/saturation[/hue] strength, one value or 3-4 values.
        color_jitter_prob: apply the jitter with this probability (``None``: always).
        grayscale_prob: random-grayscale probability.
        gaussian_blur_prob: random Gaussian-blur probability.
        auto_augment: an auto-augment config string (``rand-m9-mstd0.5``, ``augmix-m5``, ``v0``...), see
            :func:`create_auto_augment`.
        num_aug_repeats: repeated-augmentation count (RepeatAugSampler; needs ``distributed``).
        num_aug_splits: AugMix splits (> 1 wraps the dataset in AugMixDataset).
        interpolation: resize interpolation name (``"random"``: bilinear or bicubic per call, training).
        mean: normalization mean.
        std: normalization standard deviation.
        num_workers: loader worker processes.
        distributed: shard with a distributed sampler (ranks from RANK / WORLD_SIZE).
        crop_pct: eval center-crop fraction (``None``: 0.875).
        crop_mode: eval crop: ``"center"``, ``"squash"`` or ``"border"``.
        crop_border_pixels: trim this many pixels off every side first (eval).
        collate_fn: batch collation (default :func:`fast_collate` with the prefetcher).
        pin_memory: DataLoader's ``pin_memory``.
        img_dtype: dtype of the prefetcher's normalized images.
        use_prefetcher: collate uint8 and normalize / erase per batch in :class:`PrefetchLoader`.
        persistent_workers: keep workers between epochs.
        tf_preprocessing: TF-style preprocessing; not implemented (raises).
        seed: seed of the random source (augmentation, prefetcher erasing, sampler).
        as_backend: the prefetcher yields backend tensors (else numpy arrays).
        timeout: DataLoader's per-batch timeout (workers only).
        **_ignored: other timm arguments, accepted and ignored.

    Returns:
        The DataLoader, wrapped in :class:`PrefetchLoader` with ``use_prefetcher``.

    Raises:
        ValueError: for ``num_aug_repeats`` without ``distributed``.
    """
    from flowvision.backend.utils.data import DataLoader, DistributedSampler, default_collate

    re_num_splits = (num_aug_splits or 2) if re_split else 0
    transform = create_transform(
        input_size, is_training=is_training, no_aug=no_aug, train_crop_mode=train_crop_mode, scale=scale,
        ratio=ratio, hflip=hflip, vflip=vflip, color_jitter=color_jitter, color_jitter_prob=color_jitter_prob,
        grayscale_prob=grayscale_prob, gaussian_blur_prob=gaussian_blur_prob, auto_augment=auto_augment,
        interpolation=interpolation, mean=mean, std=std, crop_pct=crop_pct, crop_mode=crop_mode,
        crop_border_pixels=crop_border_pixels, re_prob=re_prob, re_mode=re_mode, re_count=re_count,
        re_num_splits=re_num_splits, tf_preprocessing=tf_preprocessing, use_prefetcher=use_prefetcher,
        separate=num_aug_splits > 0, seed=seed)
    if isinstance(dataset, AugMixDataset):
        dataset.transform = transform
    elif num_aug_splits > 1:
        dataset.transform = transform
        dataset = AugMixDataset(dataset, num_splits=num_aug_splits)
    elif hasattr(dataset, "transform"):
        dataset.transform = transform

    sampler: Any = None
    if distributed:
        if is_training:
            sampler = (RepeatAugSampler(dataset, num_repeats=num_aug_repeats, seed=seed or 0) if num_aug_repeats
                       else DistributedSampler(dataset, *_dist_defaults(None, None)))
        else:
            sampler = OrderedDistributedSampler(dataset)
    elif num_aug_repeats:
        raise ValueError("num_aug_repeats (RepeatAugSampler) needs distributed=True")

    if collate_fn is None:
        collate_fn = fast_collate if use_prefetcher else default_collate
    loader: Any = DataLoader(dataset, batch_size=batch_size, shuffle=sampler is None and is_training,
                        num_workers=num_workers, sampler=sampler, collate_fn=collate_fn, pin_memory=pin_memory,
                        drop_last=is_training, persistent_workers=persistent_workers and num_workers > 0,
                        timeout=timeout if num_workers > 0 else 0)
    if use_prefetcher:
        channels = input_size[0] if isinstance(input_size, (tuple, list)) and len(input_size) == 3 else 3
        loader = PrefetchLoader(loader, mean=mean, std=std, channels=channels, img_dtype=img_dtype,
                                re_prob=re_prob if is_training else 0.0, re_mode=re_mode, re_count=re_count,
                                re_num_splits=re_num_splits, as_backend=as_backend, seed=seed)
    return loader

