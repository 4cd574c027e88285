"""Mixup / CutMix (timm semantics) on numpy arrays, flowvision.backend tensors and DLPack tensors.

``x, target = Mixup(...)(x, y)`` mixes the float batch ``x`` (B, C, H, W) **in place** and returns
soft targets (B, num_classes) float32 of the same container type as ``y`` (numpy in -> numpy out,
torch in -> torch out through DLPack, backend in -> backend out).  torch is never imported.

Pairing: sample ``i`` is mixed with sample ``B-1-i`` (timm's ``x.flip(0)``).  timm asserts an even
batch; flowvision accepts odd batches with the same rule, so the middle sample ``(B-1)/2`` is
paired with itself: its pixels and its (smoothed) target stay its own.  In ``pair`` mode the
middle sample gets lambda 1.

Numerics equal timm's: the same float32 expressions (``x*lam + x_flip*(1-lam)``), the same draws
(``np.random`` order, reproduced by :class:`~flowvision.data.TimmRandom`), the same box maths.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from concurrent.futures import ThreadPoolExecutor
import numpy as np

from ._arrays import as_numpy, from_numpy_like, kind_of
from ._random import RngLike, resolve_rng

__all__ = ["Mixup", "FastCollateMixup", "mixup_target", "one_hot", "rand_bbox", "rand_bbox_minmax",
           "cutmix_bbox_and_lam"]


# ----------------------------------------------------------------------------------------------
# targets
# ----------------------------------------------------------------------------------------------
def _check_num_classes(num_classes) -> None:
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer, got {num_classes!r}")


def one_hot(x: Any, num_classes: int, on_value: float = 1.0, off_value: float = 0.0) -> np.ndarray:
    """One-hot (or smoothed) float32 targets for integer labels.

    Args:
        x: integer class labels, any shape (flattened).
        num_classes: number of classes.
        on_value: value at the label's class.
        off_value: value elsewhere.

    Returns:
        A (N, num_classes) float32 array.

    Examples:
        >>> from flowvision.data.mixup import one_hot
        >>> one_hot([2, 0], 3).tolist()
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    _check_num_classes(num_classes)
    x = np.asarray(x).reshape(-1).astype(np.int64)
    if x.size and (x.min() < 0 or x.max() >= num_classes):  # numpy would wrap -1 to the last class silently
        raise ValueError(f"labels must be in [0, {num_classes}), got {x.min()}..{x.max()}")
    out = np.full((x.shape[0], num_classes), off_value, dtype=np.float32)
    out[np.arange(x.shape[0]), x] = on_value
    return out


def mixup_target(target: Any, num_classes: int, lam: float = 1.0, smoothing: float = 0.0,
                 multi_label: bool = False) -> Any:
    """Soft targets ``y*lam + y.flip(0)*(1-lam)`` with label smoothing (numpy in, numpy out).

    Args:
        target: ``(B,)`` integer labels, or ``(B, num_classes)`` dense targets with ``multi_label``.
        num_classes: number of classes.
        lam: mix ratio (a float, or one per sample).
        smoothing: label smoothing.
        multi_label: the targets are dense multi-label rows.

    Returns:
        ``(B, num_classes)`` float32 soft targets.

    Raises:
        ValueError: if multi-label targets are not ``(B, num_classes)``.
    """
    _check_num_classes(num_classes)
    target = np.asarray(target)
    if multi_label:
        if target.ndim != 2 or target.shape[1] != num_classes:
            raise ValueError("multi-label mixup expects dense targets shaped (batch, num_classes)")
        y1 = target.astype(np.float32) * np.float32(1.0 - smoothing) + np.float32(0.5 * smoothing)
    else:
        off_value = smoothing / num_classes
        on_value = 1.0 - smoothing + off_value
        y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = y1[::-1]
    if isinstance(lam, np.ndarray):
        lam = lam.astype(np.float32).reshape(-1, 1)
        return y1 * lam + y2 * (np.float32(1.0) - lam)
    lam = float(lam)  # a numpy float64 scalar would promote the float32 targets
    return y1 * lam + y2 * (1.0 - lam)


# ----------------------------------------------------------------------------------------------
# boxes
# ----------------------------------------------------------------------------------------------
def rand_bbox(img_shape: Sequence[int], lam: float, margin: float = 0.0, count: Optional[int] = None,
              rng: RngLike = None) -> Tuple[Any, Any, Any, Any]:
    """Square-ish CutMix box of side ratio sqrt(1-lam), random centre, clipped to the image.

    Args:
        img_shape: the image shape; its last two entries are ``(H, W)``.
        lam: the mix ratio; the box covers about ``1 - lam`` of the image.
        margin: fraction of the box size kept away from the image border by the centre.
        count: number of boxes to draw (``None``: one, as scalars).
        rng: the random source (see :func:`resolve_rng`).

    Returns:
        ``(y_low, y_high, x_low, x_high)``.
    """
    rng = resolve_rng(rng)
    ratio = np.sqrt(1 - lam)
    img_h, img_w = img_shape[-2:]
    cut_h, cut_w = int(img_h * ratio), int(img_w * ratio)
    margin_y, margin_x = int(margin * cut_h), int(margin * cut_w)
    cy = rng.np_randint(0 + margin_y, img_h - margin_y, size=count)
    cx = rng.np_randint(0 + margin_x, img_w - margin_x, size=count)
    yl = np.clip(cy - cut_h // 2, 0, img_h)
    yh = np.clip(cy + (cut_h + 1) // 2, 0, img_h)
    xl = np.clip(cx - cut_w // 2, 0, img_w)
    xh = np.clip(cx + (cut_w + 1) // 2, 0, img_w)
    return yl, yh, xl, xh


def rand_bbox_minmax(img_shape: Sequence[int], minmax: Sequence[float], count: Optional[int] = None,
                     rng: RngLike = None) -> Tuple[Any, Any, Any, Any]:
    """Box with sides uniform in [min, max) * image side (Darknet style).

    Args:
        img_shape: the image shape; its last two entries are ``(H, W)``.
        minmax: ``(min, max)`` fraction of each side.
        count: number of boxes to draw (``None``: one, as scalars).
        rng: the random source (see :func:`resolve_rng`).

    Returns:
        ``(y_low, y_high, x_low, x_high)``.

    Raises:
        ValueError: if ``minmax`` is not a pair.
    """
    rng = resolve_rng(rng)
    if len(minmax) != 2:
        raise ValueError(f"cutmix_minmax must be (min, max), got {minmax!r}")
    img_h, img_w = img_shape[-2:]
    cut_h = rng.np_randint(int(img_h * minmax[0]), int(img_h * minmax[1]), size=count)
    cut_w = rng.np_randint(int(img_w * minmax[0]), int(img_w * minmax[1]), size=count)
    yl = rng.np_randint(0, img_h - cut_h + 1, size=count)
    xl = rng.np_randint(0, img_w - cut_w + 1, size=count)
    return yl, yl + cut_h, xl, xl + cut_w


def cutmix_bbox_and_lam(img_shape: Sequence[int], lam: float, ratio_minmax: Optional[Sequence[float]] = None,
                        correct_lam: bool = True, count: Optional[int] = None,
                        rng: RngLike = None) -> Tuple[Tuple[Any, Any, Any, Any], float]:
    """The CutMix box and the mixing weight it implies (timm's).

    Args:
        img_shape: the image shape; the last two dims are (H, W).
        lam: mixing weight drawn from the Beta distribution.
        ratio_minmax: draw the box side ratios from this range instead of from ``lam``.
        correct_lam: recompute ``lam`` from the box area after clipping to the image.
        count: how many boxes (None: one).
        rng: a random source.

    Returns:
        ``((y_low, y_high, x_low, x_high), lam)``.
    """
    if ratio_minmax is not None:
        yl, yu, xl, xu = rand_bbox_minmax(img_shape, ratio_minmax, count=count, rng=rng)
    else:
        yl, yu, xl, xu = rand_bbox(img_shape, lam, count=count, rng=rng)
    if correct_lam or ratio_minmax is not None:
        bbox_area = (yu - yl) * (xu - xl)
        lam = 1.0 - bbox_area / float(img_shape[-2] * img_shape[-1])
    return (yl, yu, xl, xu), lam


# ----------------------------------------------------------------------------------------------
# Mixup
# ----------------------------------------------------------------------------------------------
_MODES = ("batch", "pair", "elem")


class Mixup:
    """Mixup/CutMix applying one set of params per batch, per pair or per element (timm API).

    Args: mixup_alpha, cutmix_alpha, cutmix_minmax (forces cutmix_alpha=1 and lambda correction),
    prob (chance to mix, per batch/pair/element), switch_prob (CutMix instead of Mixup when both are
    on), mode ('batch' | 'pair' | 'elem'), correct_lam (lambda from the clipped box area),
    label_smoothing, num_classes, multi_label (dense (B, num_classes) targets, smoothed towards
    0.5), rng / seed (one seedable source; see :mod:`flowvision.data._random`), num_threads (split
    the batch-mode arithmetic over this many threads; 1 inside DataLoader workers).
    """

    def __init__(self, mixup_alpha: float = 1.0, cutmix_alpha: float = 0.0,
                 cutmix_minmax: Optional[Sequence[float]] = None, prob: float = 1.0, switch_prob: float = 0.5,
                 mode: str = "batch", correct_lam: bool = True, label_smoothing: float = 0.1, num_classes: int = 1000,
                 multi_label: bool = False, rng: RngLike = None, seed: Optional[int] = None,
                 num_threads: int = 1) -> None:
        self.mixup_alpha = mixup_alpha
        self.cutmix_alpha = cutmix_alpha
        self.cutmix_minmax = cutmix_minmax
        if self.cutmix_minmax is not None:
            if len(self.cutmix_minmax) != 2:
                raise ValueError(f"cutmix_minmax must be (min, max), got {cutmix_minmax!r}")
            self.cutmix_alpha = 1.0  # as timm: minmax forces cutmix on
        if not (self.mixup_alpha > 0.0 or self.cutmix_alpha > 0.0):
            raise ValueError("Mixup needs mixup_alpha > 0, cutmix_alpha > 0 or cutmix_minmax set")
        self.mix_prob = prob
        self.switch_prob = switch_prob
        self.label_smoothing = label_smoothing
        if not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
            raise ValueError(f"num_classes must be a positive int, got {num_classes!r}")
        self.num_classes = int(num_classes)
        self.multi_label = multi_label
        self.mode = mode
        self.correct_lam = correct_lam
        self.mixup_enabled = True  # the training loop may switch this off for the last epochs
        self.rng = resolve_rng(rng, seed)
        self.num_threads = max(1, int(num_threads))
        self._check_mode()

    def _check_mode(self):
        if self.mode not in _MODES:
            raise ValueError(f"unknown Mixup mode {self.mode!r}; expected one of {', '.join(_MODES)}")

    def manual_seed(self, seed):
        self.rng = resolve_rng(seed=seed)
        return self

    # --- parameters (draw order identical to timm) -----------------------------------------
    def _params_per_elem(self, batch_size):
        rng = self.rng
        lam = np.ones(batch_size, dtype=np.float32)
        use_cutmix = np.zeros(batch_size, dtype=bool)
        if self.mixup_enabled:
            if self.mixup_alpha > 0.0 and self.cutmix_alpha > 0.0:
                use_cutmix = rng.np_rand(batch_size) < self.switch_prob
                lam_cut = rng.np_beta(self.cutmix_alpha, self.cutmix_alpha, size=batch_size)
                lam_mix = rng.np_beta(self.mixup_alpha, self.mixup_alpha, size=batch_size)
                lam_mix = np.where(use_cutmix, lam_cut, lam_mix)
            elif self.mixup_alpha > 0.0:
                lam_mix = rng.np_beta(self.mixup_alpha, self.mixup_alpha, size=batch_size)
            else:
                use_cutmix = np.ones(batch_size, dtype=bool)
                lam_mix = rng.np_beta(self.cutmix_alpha, self.cutmix_alpha, size=batch_size)
            lam = np.where(rng.np_rand(batch_size) < self.mix_prob, lam_mix.astype(np.float32), lam)
        return lam, use_cutmix

    def _params_per_batch(self):
        rng = self.rng
        lam = 1.0
        use_cutmix = False
        if self.mixup_enabled and rng.np_rand() < self.mix_prob:
            if self.mixup_alpha > 0.0 and self.cutmix_alpha > 0.0:
                use_cutmix = bool(rng.np_rand() < self.switch_prob)
                lam_mix = rng.np_beta(self.cutmix_alpha, self.cutmix_alpha) if use_cutmix else \
                    rng.np_beta(self.mixup_alpha, self.mixup_alpha)
            elif self.mixup_alpha > 0.0:
                lam_mix = rng.np_beta(self.mixup_alpha, self.mixup_alpha)
            else:
                use_cutmix = True
                lam_mix = rng.np_beta(self.cutmix_alpha, self.cutmix_alpha)
            lam = float(lam_mix)
        return lam, use_cutmix

    def _box(self, shape, lam):
        return cutmix_bbox_and_lam(shape, lam, ratio_minmax=self.cutmix_minmax, correct_lam=self.correct_lam,
                                   rng=self.rng)

    # --- mixing on a numpy view --------------------------------------------------------------
    def _blend_pairs(self, x, lam):
        """x[i] = x[i]*lam + x[B-1-i]*(1-lam) for all i, in place, without a full-batch copy."""
        b = x.shape[0]
        h = b // 2
        one_m = 1.0 - lam

        def work(lo, hi):
            a = x[lo:hi]
            bb = x[b - hi:b - lo][::-1]
            ta = a * one_m
            tb = bb * one_m
            a *= lam
            a += tb
            bb *= lam
            bb += ta

        self._run_chunks(work, h)
        if b % 2:
            m = x[h]
            t = m * one_m
            m *= lam
            m += t

    def _run_chunks(self, fn, n):
        nt = min(self.num_threads, n)
        if nt <= 1:
            if n:
                fn(0, n)
            return
        bounds = np.linspace(0, n, nt + 1).astype(int)
        with ThreadPoolExecutor(nt) as ex:
            list(ex.map(lambda k: fn(bounds[k], bounds[k + 1]), range(nt)))

    @staticmethod
    def _swap_box(x, i, j, box):
        yl, yh, xl, xh = (int(v) for v in box)
        if i == j:
            return
        tmp = x[i, ..., yl:yh, xl:xh].copy()
        x[i, ..., yl:yh, xl:xh] = x[j, ..., yl:yh, xl:xh]
        x[j, ..., yl:yh, xl:xh] = tmp

    def _mix_batch(self, x):
        lam, use_cutmix = self._params_per_batch()
        if lam == 1.0:
            return 1.0
        if use_cutmix:
            (yl, yh, xl, xh), lam = self._box(x.shape, lam)
            lam = float(lam)
            b = x.shape[0]
            h = b // 2
            yl, yh, xl, xh = int(yl), int(yh), int(xl), int(xh)
            top = x[:h, ..., yl:yh, xl:xh]
            bot = x[b - h:, ..., yl:yh, xl:xh][::-1]
            tmp = top.copy()
            top[...] = bot
            bot[...] = tmp
        else:
            self._blend_pairs(x, lam)
        return lam

    def _mix_pair(self, x):
        b = x.shape[0]
        h = b // 2
        lam_batch, use_cutmix = self._params_per_elem(h)
        for i in range(h):
            j = b - i - 1
            lam = lam_batch[i]
            if lam != 1.0:
                if use_cutmix[i]:
                    box, lam = self._box(x[i].shape, lam)
                    self._swap_box(x, i, j, box)
                    lam_batch[i] = lam
                else:
                    xi = x[i].copy()
                    x[i] = x[i] * lam + x[j] * (1 - lam)
                    x[j] = x[j] * lam + xi * (1 - lam)
        mid = np.ones(b % 2, dtype=np.float32)
        return np.concatenate((lam_batch, mid, lam_batch[::-1]))

    def _mix_elem(self, x):
        b = x.shape[0]
        lam_batch, use_cutmix = self._params_per_elem(b)
        # every element reads its partner's *original* pixels: process pairs, saving both originals
        boxes = {}
        for i in range(b):
            lam = lam_batch[i]
            if lam != 1.0 and use_cutmix[i]:
                box, lam = self._box(x[i].shape, lam)
                boxes[i] = box
                lam_batch[i] = lam
        for i in range((b + 1) // 2):
            j = b - i - 1
            xi = x[i].copy()
            xj = x[j].copy() if j != i else xi
            for k, src in ((i, xj), (j, xi)) if j != i else ((i, xj),):
                lam = lam_batch[k]
                if lam == 1.0:
                    continue
                if k in boxes:
                    yl, yh, xl, xh = (int(v) for v in boxes[k])
                    x[k][..., yl:yh, xl:xh] = src[..., yl:yh, xl:xh]
                else:
                    orig_k = xi if k == i else xj
                    x[k] = orig_k * lam + src * (1 - lam)
        return lam_batch

    # --- entry point -------------------------------------------------------------------------
    def _check_batch(self, xa, ya):
        if xa.ndim != 4:
            raise ValueError(f"Mixup expects a (B, C, H, W) batch, got shape {tuple(xa.shape)}")
        if not np.issubdtype(xa.dtype, np.floating):
            raise TypeError(f"Mixup mixes float batches in place, got dtype {xa.dtype}; "
                            f"for uint8 samples use FastCollateMixup as the collate_fn")
        if xa.shape[0] == 0:
            raise ValueError("Mixup got an empty batch")
        if self.multi_label:
            if ya.shape != (xa.shape[0], self.num_classes):
                raise ValueError(f"multi-label targets must be (B, num_classes)=({xa.shape[0]}, {self.num_classes}), "
                                 f"got {tuple(ya.shape)}")
            return
        if ya.ndim != 1 or ya.shape[0] != xa.shape[0]:
            raise ValueError(f"targets must be class indices shaped ({xa.shape[0]},), got {tuple(ya.shape)}")
        if not np.issubdtype(ya.dtype, np.integer):
            raise TypeError(f"targets must be integer class indices, got dtype {ya.dtype}")
        if ya.size and (ya.min() < 0 or ya.max() >= self.num_classes):
            raise ValueError(f"target class index out of range [0, {self.num_classes}): "
                             f"min {int(ya.min())}, max {int(ya.max())}")

    def __call__(self, x, target):
        xa = as_numpy(x, "Mixup batch", writable=True)
        ya = np.asarray(target) if isinstance(target, (list, tuple)) else as_numpy(target, "Mixup target")
        self._check_batch(xa, ya)
        self._check_mode()
        if self.mode == "elem":
            lam = self._mix_elem(xa)
        elif self.mode == "pair":
            lam = self._mix_pair(xa)
        else:
            lam = self._mix_batch(xa)
        if isinstance(lam, np.ndarray):
            lam = lam.astype(xa.dtype if xa.dtype == np.float32 else np.float32)
        t = mixup_target(ya, self.num_classes, lam, self.label_smoothing, self.multi_label)
        t = np.ascontiguousarray(t)
        if isinstance(target, (list, tuple)):
            return x, from_numpy_like(t, x)
        return x, from_numpy_like(t, target)


# ----------------------------------------------------------------------------------------------
# FastCollateMixup: mix uint8 samples while collating
# ----------------------------------------------------------------------------------------------
_FAST_MODES = ("batch", "pair", "elem", "half")


class FastCollateMixup(Mixup):
    """``collate_fn`` mixing uint8 (C, H, W) samples into a uint8 batch (rounded like timm).

    ``batch`` is a list of ``(image, target)`` with numpy / backend / DLPack uint8 images. Returns
    ``(uint8 batch, soft targets)`` of the sample's container type. Mode ``half`` mixes only the
    first half of the batch and returns B//2 samples (for the JSD / AugMix split setups).

    Takes the same arguments as :class:`Mixup`.
    """

    def _check_mode(self):
        if self.mode not in _FAST_MODES:
            raise ValueError(f"unknown FastCollateMixup mode {self.mode!r}; expected one of {', '.join(_FAST_MODES)}")

    @staticmethod
    def _mix_u8(a, b, lam):
        m = a.astype(np.float32) * lam + b.astype(np.float32) * (1 - lam)
        np.rint(m, out=m)
        return m.astype(np.uint8)

    def _elem_collate(self, out, imgs, half):
        bsz = len(imgs)
        n = bsz // 2 if half else bsz
        lam_batch, use_cutmix = self._params_per_elem(n)
        for i in range(n):
            j = bsz - i - 1
            lam = lam_batch[i]
            out[i] = imgs[i]
            if lam != 1.0:
                if use_cutmix[i]:
                    (yl, yh, xl, xh), lam = self._box(out.shape, lam)
                    yl, yh, xl, xh = int(yl), int(yh), int(xl), int(xh)
                    out[i, :, yl:yh, xl:xh] = imgs[j][:, yl:yh, xl:xh]
                    lam_batch[i] = lam
                else:
                    out[i] = self._mix_u8(imgs[i], imgs[j], lam)
        if half:
            lam_batch = np.concatenate((lam_batch, np.ones(bsz - n, dtype=lam_batch.dtype)))
        return lam_batch

    def _pair_collate(self, out, imgs):
        bsz = len(imgs)
        h = bsz // 2
        lam_batch, use_cutmix = self._params_per_elem(h)
        for i in range(bsz):
            out[i] = imgs[i]
        for i in range(h):
            j = bsz - i - 1
            lam = lam_batch[i]
            if lam < 1.0:
                if use_cutmix[i]:
                    (yl, yh, xl, xh), lam = self._box(out.shape, lam)
                    self._swap_box(out, i, j, (yl, yh, xl, xh))
                    lam_batch[i] = lam
                else:
                    out[i], out[j] = self._mix_u8(imgs[i], imgs[j], lam), self._mix_u8(imgs[j], imgs[i], lam)
        return np.concatenate((lam_batch, np.ones(bsz % 2, dtype=np.float32), lam_batch[::-1]))

    def _batch_collate(self, out, imgs):
        bsz = len(imgs)
        lam, use_cutmix = self._params_per_batch()
        for i in range(bsz):
            out[i] = imgs[i]
        if use_cutmix:
            (yl, yh, xl, xh), lam = self._box(out.shape, lam)
            lam = float(lam)
        if lam == 1.0:
            return lam
        if use_cutmix:
            yl, yh, xl, xh = int(yl), int(yh), int(xl), int(xh)
            h = bsz // 2
            top = out[:h, :, yl:yh, xl:xh]
            bot = out[bsz - h:, :, yl:yh, xl:xh][::-1]
            tmp = top.copy()
            top[...] = bot
            bot[...] = tmp
        else:
            src = out.copy()
            for i in range(bsz):
                out[i] = self._mix_u8(src[i], src[bsz - 1 - i], lam)
        return lam

    def __call__(self, batch, _=None):
        if not isinstance(batch, (list, tuple)) or not batch:
            raise ValueError("FastCollateMixup expects a non-empty list of (image, target) samples")
        first = batch[0][0]
        imgs = [as_numpy(b[0], "FastCollateMixup sample") for b in batch]
        shape = imgs[0].shape
        for k, im in enumerate(imgs):
            if im.dtype != np.uint8:
                raise TypeError(f"FastCollateMixup collates uint8 (C, H, W) samples, sample {k} has dtype {im.dtype}")
            if im.shape != shape or im.ndim != 3:
                raise ValueError(f"FastCollateMixup samples must share one (C, H, W) shape: sample 0 is "
                                 f"{tuple(shape)}, sample {k} is {tuple(im.shape)}")
        bsz = len(batch)
        half = "half" in self.mode
        n_out = bsz // 2 if half else bsz
        out = np.zeros((n_out, *shape), dtype=np.uint8)
        if self.mode in ("elem", "half"):
            lam = self._elem_collate(out, imgs, half=half)
        elif self.mode == "pair":
            lam = self._pair_collate(out, imgs)
        else:
            lam = self._batch_collate(out, imgs)
        tgt = [b[1] for b in batch]
        ya = np.stack([np.asarray(as_numpy(t) if kind_of(t) in ("backend", "dlpack") else t) for t in tgt])
        if not self.multi_label and (ya.ndim != 1 or not np.issubdtype(ya.dtype, np.integer)
                                     or ya.min() < 0 or ya.max() >= self.num_classes):
            raise ValueError(f"FastCollateMixup targets must be int class indices in [0, {self.num_classes})")
        if isinstance(lam, np.ndarray):
            lam = lam.astype(np.float32)
        t = mixup_target(ya, self.num_classes, lam, self.label_smoothing, self.multi_label)[:n_out]
        t = np.ascontiguousarray(t)
        return from_numpy_like(out, first), from_numpy_like(t, first)
