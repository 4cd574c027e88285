"""create_transform: timm's train / eval / no-aug pipelines on flowvision.transforms.

Stages and parameters follow timm 1.0 (``transforms_factory.py``).  Differences: torchvision
classes are flowvision.transforms classes; ``auto_augment`` also accepts ``trivial...`` strings;
``rng``/``seed`` seed every random stage owned by flowvision.data (crop, auto-augment,
RandomErasing) from one source, while flips / ColorJitter / grayscale / blur use
flowvision.transforms' own seedable source (``flowvision.transforms.manual_seed``).
Not implemented (clear ``NotImplementedError``): ``tf_preprocessing``, NaFlex / patchify.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

from ._random import RngLike, resolve_rng
from .auto_augment import create_auto_augment
from .constants import DEFAULT_CROP_PCT, IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from .random_erasing import RandomErasing
from .transforms import (CenterCropOrPad, MaybePILToTensor, MaybeToTensor, RandomCropOrPad,
                         RandomResizedCropAndInterpolation, ResizeKeepRatio, TrimBorder, str_to_interp_mode,
                         str_to_pil_interp)

__all__ = ["create_transform", "transforms_imagenet_train", "transforms_imagenet_eval", "transforms_noaug_train"]


def _T():
    import flowvision.transforms as T  # lazy: Mixup/RandAugment users never import it
    return T


def _final(mean, std, use_prefetcher, normalize):
    T = _T()
    if use_prefetcher or not normalize:
        return [MaybePILToTensor()]
    return [MaybeToTensor(), T.Normalize(mean=tuple(mean), std=tuple(std))]


def transforms_noaug_train(img_size: Union[int, Tuple[int, int]] = 224, interpolation: str = "bilinear",
                           mean: Sequence[float] = IMAGENET_DEFAULT_MEAN, std: Sequence[float] = IMAGENET_DEFAULT_STD,
                           use_prefetcher: bool = False, normalize: bool = True) -> Any:
    """timm's training pipeline without augmentation: resize, center crop, to tensor, normalise.

    Args:
        img_size: output size.
        interpolation: resize interpolation (``"random"`` falls back to bilinear).
        mean: normalisation mean.
        std: normalisation std.
        use_prefetcher: stop at a uint8 array (normalisation happens on the loader's prefetcher).
        normalize: normalise (else the [0, 1] tensor).

    Returns:
        A ``Compose`` of the steps.
    """
    T = _T()
    if interpolation == "random":
        interpolation = "bilinear"  # random interpolation is not supported without augmentation
    tfl = [T.Resize(img_size, interpolation=str_to_interp_mode(interpolation)), T.CenterCrop(img_size)]
    return T.Compose(tfl + _final(mean, std, use_prefetcher, normalize))


def transforms_imagenet_train(img_size: Union[int, Tuple[int, int]] = 224, scale: Optional[Sequence[float]] = None,
                              ratio: Optional[Sequence[float]] = None, train_crop_mode: Optional[str] = None,
                              hflip: float = 0.5, vflip: float = 0.0,
                              color_jitter: Optional[Union[float, Sequence[float]]] = 0.4,
                              color_jitter_prob: Optional[float] = None, force_color_jitter: bool = False,
                              grayscale_prob: float = 0.0, gaussian_blur_prob: float = 0.0,
                              auto_augment: Optional[str] = None, interpolation: str = "random",
                              mean: Sequence[float] = IMAGENET_DEFAULT_MEAN,
                              std: Sequence[float] = IMAGENET_DEFAULT_STD, re_prob: float = 0.0, re_mode: str = "const",
                              re_count: int = 1, re_num_splits: int = 0, use_prefetcher: bool = False,
                              normalize: bool = True, separate: bool = False, naflex: bool = False,
                              patchify: bool = False, rng: RngLike = None, seed: Optional[int] = None,
                              **_ignored: Any) -> Any:
    """Train pipeline: primary (crop + flips) / secondary (auto-augment or colour) / final (tensor, norm, erase).

    Args:
        img_size: output ``(H, W)``, or an int for a square.
        scale: area range of the random resized crop (default ``(0.08, 1.0)``).
        ratio: aspect-ratio range of the random resized crop (default ``(3/4, 4/3)``).
        train_crop_mode: ``"rrc"`` (random resized crop, default), ``"rkrc"`` / ``"rkrr"`` (resize keeping
            ratio, then center / random crop-or-pad).
        hflip: horizontal-flip probability.
        vflip: vertical-flip probability.
        color_jitter: brightness/contrast/saturation[/hue] strength, one value or 3-4 values.
        color_jitter_prob: apply the jitter with this probability (``None``: always).
        force_color_jitter: jitter even with an auto-augment policy (which disables it, timm's rule).
        grayscale_prob: random-grayscale probability.
        gaussian_blur_prob: random Gaussian-blur probability.
        auto_augment: an auto-augment config string (``rand-m9-mstd0.5``, ``augmix-m5``, ``v0``...), see
            :func:`create_auto_augment`.
        interpolation: resize interpolation name (``"random"``: bilinear or bicubic per call, training).
        mean: normalization mean.
        std: normalization standard deviation.
        re_prob: random-erasing probability.
        re_mode: erasing fill: ``"const"``, ``"rand"`` or ``"pixel"``.
        re_count: maximum number of erased regions.
        re_num_splits: leave the first split of an AugMix batch unerased.
        use_prefetcher: stop at uint8 tensors (the prefetcher normalizes and erases per batch).
        normalize: end with normalization (else float tensors in ``[0, 1]``).
        separate: return the (primary, secondary, final) stages as three transforms.
        naflex: NaFlex pipeline; not implemented (raises).
        patchify: patch-sequence output; not implemented (raises).
        rng: the random source of the random transforms (see :func:`resolve_rng`).
        seed: seed of a new random source when ``rng`` is not given.
        **_ignored: other timm arguments, accepted and ignored.

    Returns:
        The training ``Compose``, or its three stages with ``separate=True``.

    Raises:
        NotImplementedError: for ``naflex`` or ``patchify``.
        ValueError: for an unknown ``train_crop_mode`` or a bad ``color_jitter``.
    """
    if naflex or patchify:
        raise NotImplementedError("NaFlex / patchify pipelines are not implemented in flowvision.data")
    T = _T()
    rng = resolve_rng(rng, seed)
    train_crop_mode = train_crop_mode or "rrc"
    if train_crop_mode not in ("rrc", "rkrc", "rkrr"):
        raise ValueError(f"train_crop_mode must be 'rrc', 'rkrc' or 'rkrr', got {train_crop_mode!r}")

    primary: List[Any] = []
    if train_crop_mode in ("rkrc", "rkrr"):
        scale = tuple(scale or (0.8, 1.00))
        ratio = tuple(ratio or (0.9, 1 / 0.9))
        primary += [
            ResizeKeepRatio(img_size, interpolation=interpolation, random_scale_prob=0.5, random_scale_range=scale,
                            random_scale_area=True, random_aspect_prob=0.5, random_aspect_range=ratio, rng=rng),
            CenterCropOrPad(img_size, padding_mode="reflect") if train_crop_mode == "rkrc" else
            RandomCropOrPad(img_size, padding_mode="reflect", rng=rng),
        ]
    else:
        scale = tuple(scale or (0.08, 1.0))
        ratio = tuple(ratio or (3.0 / 4.0, 4.0 / 3.0))
        primary += [RandomResizedCropAndInterpolation(img_size, scale=scale, ratio=ratio, interpolation=interpolation,
                                                      rng=rng)]
    if hflip > 0.0:
        primary += [T.RandomHorizontalFlip(p=hflip)]
    if vflip > 0.0:
        primary += [T.RandomVerticalFlip(p=vflip)]

    secondary: List[Any] = []
    disable_color_jitter = False
    if auto_augment:
        if not isinstance(auto_augment, str):
            raise TypeError(f"auto_augment must be a config string, got {type(auto_augment).__name__}")
        # colour jitter is off under AA/RA unless forced or a 3-Augment policy
        disable_color_jitter = not (force_color_jitter or "3a" in auto_augment)
        img_size_min = min(img_size) if isinstance(img_size, (tuple, list)) else img_size
        aa_params = dict(translate_const=int(img_size_min * 0.45),
                         img_mean=tuple(min(255, round(255 * x)) for x in mean))
        if interpolation and interpolation != "random":
            aa_params["interpolation"] = str_to_pil_interp(interpolation)
        if auto_augment.startswith("augmix"):
            aa_params["translate_pct"] = 0.3
        secondary += [create_auto_augment(auto_augment, aa_params, rng=rng)]

    if color_jitter is not None and not disable_color_jitter:
        if isinstance(color_jitter, (list, tuple)):
            if len(color_jitter) not in (3, 4):
                raise ValueError(f"color_jitter must be a scalar or 3/4 values, got {color_jitter!r}")
        else:
            # a number here: sequences took the branch above
            color_jitter = (float(color_jitter),) * 3  # type: ignore[arg-type]
        if color_jitter_prob is not None:
            secondary += [T.RandomApply([T.ColorJitter(*color_jitter)], p=color_jitter_prob)]
        else:
            secondary += [T.ColorJitter(*color_jitter)]
    if grayscale_prob:
        secondary += [T.RandomGrayscale(p=grayscale_prob)]
    if gaussian_blur_prob:
        secondary += [T.RandomApply([T.GaussianBlur(kernel_size=23)], p=gaussian_blur_prob)]

    final = _final(mean, std, use_prefetcher, normalize)
    if not (use_prefetcher or not normalize) and re_prob > 0.0:
        final += [RandomErasing(re_prob, mode=re_mode, max_count=re_count, num_splits=re_num_splits, device="cpu",
                                rng=rng)]

    if separate:
        return T.Compose(primary), T.Compose(secondary), T.Compose(final)
    return T.Compose(primary + secondary + final)


def transforms_imagenet_eval(img_size: Union[int, Tuple[int, int]] = 224, crop_pct: Optional[float] = None,
                             crop_mode: Optional[str] = None, crop_border_pixels: Optional[int] = None,
                             interpolation: str = "bilinear", mean: Sequence[float] = IMAGENET_DEFAULT_MEAN,
                             std: Sequence[float] = IMAGENET_DEFAULT_STD, use_prefetcher: bool = False,
                             normalize: bool = True, naflex: bool = False, patchify: bool = False,
                             **_ignored: Any) -> Any:
    """Eval pipeline: resize to ``floor(size / crop_pct)`` then crop (center / squash / border).

    Args:
        img_size: output ``(H, W)``, or an int for a square.
        crop_pct: eval center-crop fraction (``None``: 0.875).
        crop_mode: eval crop: ``"center"``, ``"squash"`` or ``"border"``.
        crop_border_pixels: trim this many pixels off every side first (eval).
        interpolation: resize interpolation name (``"random"``: bilinear or bicubic per call, training).
        mean: normalization mean.
        std: normalization standard deviation.
        use_prefetcher: stop at uint8 tensors (the prefetcher normalizes and erases per batch).
        normalize: end with normalization (else float tensors in ``[0, 1]``).
        naflex: NaFlex pipeline; not implemented (raises).
        patchify: patch-sequence output; not implemented (raises).
        **_ignored: other timm arguments, accepted and ignored.

    Returns:
        The eval ``Compose``.

    Raises:
        NotImplementedError: for ``naflex`` or ``patchify``.
        ValueError: for an unknown ``crop_mode`` or a bad ``img_size``.
    """
    if naflex or patchify:
        raise NotImplementedError("NaFlex / patchify pipelines are not implemented in flowvision.data")
    T = _T()
    crop_pct = crop_pct or DEFAULT_CROP_PCT
    scale_size: Tuple[int, ...]
    if isinstance(img_size, (tuple, list)):
        if len(img_size) != 2:
            raise ValueError(f"img_size must be an int or (H, W), got {img_size!r}")
        scale_size = tuple(math.floor(x / crop_pct) for x in img_size)
    else:
        scale_size = (math.floor(img_size / crop_pct),) * 2
    if crop_mode not in (None, "center", "squash", "border"):
        raise ValueError(f"crop_mode must be 'center', 'squash' or 'border', got {crop_mode!r}")

    tfl: List[Any] = []
    if crop_border_pixels:
        tfl += [TrimBorder(crop_border_pixels)]
    if crop_mode == "squash":
        tfl += [T.Resize(scale_size, interpolation=str_to_interp_mode(interpolation)), T.CenterCrop(img_size)]
    elif crop_mode == "border":
        fill = [round(255 * v) for v in mean]
        tfl += [ResizeKeepRatio(scale_size, interpolation=interpolation, longest=1.0),
                CenterCropOrPad(img_size, fill=fill)]
    else:
        if scale_size[0] == scale_size[1]:
            tfl += [T.Resize(scale_size[0], interpolation=str_to_interp_mode(interpolation))]
        else:
            tfl += [ResizeKeepRatio(scale_size, interpolation=interpolation)]
        tfl += [T.CenterCrop(img_size)]
    return T.Compose(tfl + _final(mean, std, use_prefetcher, normalize))


def create_transform(input_size: Union[int, Tuple[int, int], Tuple[int, int, int]] = 224, is_training: bool = False,
                     no_aug: bool = False, train_crop_mode: Optional[str] = None,
                     scale: Optional[Sequence[float]] = None, ratio: Optional[Sequence[float]] = None,
                     hflip: float = 0.5, vflip: float = 0.0,
                     color_jitter: Optional[Union[float, Sequence[float]]] = 0.4,
                     color_jitter_prob: Optional[float] = None, grayscale_prob: float = 0.0,
                     gaussian_blur_prob: float = 0.0, auto_augment: Optional[str] = None,
                     interpolation: str = "bilinear", mean: Sequence[float] = IMAGENET_DEFAULT_MEAN,
                     std: Sequence[float] = IMAGENET_DEFAULT_STD, re_prob: float = 0.0, re_mode: str = "const",
                     re_count: int = 1, re_num_splits: int = 0, crop_pct: Optional[float] = None,
                     crop_mode: Optional[str] = None, crop_border_pixels: Optional[int] = None,
                     tf_preprocessing: bool = False, use_prefetcher: bool = False, normalize: bool = True,
                     separate: bool = False, naflex: bool = False, patch_size: Union[int, Tuple[int, int]] = 16,
                     max_seq_len: int = 576, patchify: bool = False, patchify_channels_last: bool = True,
                     patchify_flatten: bool = True, force_color_jitter: bool = False, rng: RngLike = None,
                     seed: Optional[int] = None) -> Any:
    """timm's ``create_transform`` (same arguments and defaults; note ``interpolation='bilinear'``
    here while ``resolve_data_config`` defaults to 'bicubic', as in timm).  ``resolve_data_config``
    output can be splatted in: ``create_transform(**cfg, is_training=True)``.

    Args:
        input_size: output size: an int, ``(H, W)`` or ``(C, H, W)``.
        is_training: build the training pipeline (else the eval one).
        no_aug: training without augmentation (resize + center crop only).
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
        interpolation: resize interpolation name (``"random"``: bilinear or bicubic per call, training).
        mean: normalization mean.
        std: normalization standard deviation.
        re_prob: random-erasing probability.
        re_mode: erasing fill: ``"const"``, ``"rand"`` or ``"pixel"``.
        re_count: maximum number of erased regions.
        re_num_splits: leave the first split of an AugMix batch unerased.
        crop_pct: eval center-crop fraction (``None``: 0.875).
        crop_mode: eval crop: ``"center"``, ``"squash"`` or ``"border"``.
        crop_border_pixels: trim this many pixels off every side first (eval).
        tf_preprocessing: TF-style preprocessing; not implemented (raises).
        use_prefetcher: stop at uint8 tensors (the prefetcher normalizes and erases per batch).
        normalize: end with normalization (else float tensors in ``[0, 1]``).
        separate: return the (primary, secondary, final) stages as three transforms.
        naflex: NaFlex pipeline; not implemented (raises).
        patch_size: patch size of ``naflex`` / ``patchify`` (unused: not implemented).
        max_seq_len: sequence length of ``naflex`` (unused: not implemented).
        patchify: patch-sequence output; not implemented (raises).
        patchify_channels_last: ``patchify`` layout (unused: not implemented).
        patchify_flatten: ``patchify`` layout (unused: not implemented).
        force_color_jitter: jitter even with an auto-augment policy (which disables it, timm's rule).
        rng: the random source of the random transforms (see :func:`resolve_rng`).
        seed: seed of a new random source when ``rng`` is not given.

    Returns:
        The transform (a ``Compose``), or three with ``separate=True``.

    Raises:
        NotImplementedError: for ``tf_preprocessing``, ``naflex`` or ``patchify``.
        ValueError: for ``separate`` with ``no_aug``, or an invalid crop mode or size.
    """
    img_size = input_size[-2:] if isinstance(input_size, (tuple, list)) else input_size
    if tf_preprocessing:
        raise NotImplementedError("tf_preprocessing (TF 1.x inference preprocessing) is not implemented in "
                                  "flowvision.data; use the default PIL pipeline")
    if naflex or patchify:
        raise NotImplementedError("NaFlex / patchify pipelines are not implemented in flowvision.data")
    if is_training and no_aug:
        if separate:
            raise ValueError("separate=True (split augmentation) cannot be combined with no_aug")
        return transforms_noaug_train(img_size, interpolation=interpolation, mean=mean, std=std,
                                      use_prefetcher=use_prefetcher, normalize=normalize)
    if is_training:
        return transforms_imagenet_train(
            img_size, train_crop_mode=train_crop_mode, scale=scale, ratio=ratio, hflip=hflip, vflip=vflip,
            color_jitter=color_jitter, color_jitter_prob=color_jitter_prob, force_color_jitter=force_color_jitter,
            grayscale_prob=grayscale_prob, gaussian_blur_prob=gaussian_blur_prob, auto_augment=auto_augment,
            interpolation=interpolation, mean=mean, std=std, re_prob=re_prob, re_mode=re_mode, re_count=re_count,
            re_num_splits=re_num_splits, use_prefetcher=use_prefetcher, normalize=normalize, separate=separate,
            rng=rng, seed=seed)
    if separate:
        raise ValueError("separate=True is only supported for training transforms")
    return transforms_imagenet_eval(img_size, interpolation=interpolation, mean=mean, std=std, crop_pct=crop_pct,
                                    crop_mode=crop_mode, crop_border_pixels=crop_border_pixels,
                                    use_prefetcher=use_prefetcher, normalize=normalize)
