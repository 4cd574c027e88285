"""AutoAugment, RandAugment, AugMix, 3-Augment and TrivialAugment with timm's ops and levels.

Inputs: PIL images, uint8 HWC (or HW) numpy arrays, and uint8 flowvision.backend / DLPack (torch)
tensors in HWC or CHW layout (handled as numpy views; returned as the same type and layout).

* **PIL input** gives timm 1.0's output pixel for pixel: geometric ops call the same PIL
  transforms; the lookup-table ops (AutoContrast, Equalize, Invert, Posterize, Solarize,
  SolarizeAdd) compute timm's table in numpy and apply it once; Sharpness reproduces Pillow's
  SMOOTH filter + blend exactly in numpy/OpenCV (4x faster than ``ImageEnhance.Sharpness``).
* **uint8 array input** never goes through PIL for the common ops: the LUT and colour ops are
  exact (same float32 arithmetic as Pillow's ``Image.blend``), and geometric ops use
  ``cv2.warpAffine`` with Pillow's sampling geometry (pixel centres, out-of-image fill,
  edge replication).  OpenCV's bilinear/bicubic kernels differ from Pillow's by a few grey levels,
  so geometric ops on arrays are close but not bit-exact; pass ``hparams['pil_exact']=True`` to
  route them through Pillow for bit-exact array results.
* OpenCV's own thread pool is left as configured; for per-image work inside DataLoader workers
  ``cv2.setNumThreads(1)`` avoids oversubscription (the benchmark runs that way).
* Randomness comes from one :class:`~flowvision.data.RandomSource` per transform (``seed=`` /
  ``rng=``); :class:`~flowvision.data.TimmRandom` reproduces timm's own draw sequence.

Config strings (``rand-m9-n2-mstd0.5-inc1``, ``augmix-m5-w4-d2``, ``original-mstd0.5``,
``trivial``) follow timm's grammar; malformed sections raise ``ValueError`` naming the section.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np
from PIL import Image, ImageFilter, ImageEnhance

from .._lazy_import import lazy_module
from ._arrays import as_numpy, from_numpy_like, kind_of
from ._random import RandomSource, RngLike, resolve_rng

cv2 = lazy_module("cv2")  # imported on the first OpenCV fast path, not with the package

__all__ = [
    "AugmentOp", "AutoAugment", "RandAugment", "AugMixAugment", "TrivialAugment",
    "auto_augment_policy", "auto_augment_transform", "rand_augment_transform", "rand_augment_ops",
    "rand_augment_choices", "augment_and_mix_transform", "augmix_ops", "trivial_augment_transform",
    "create_auto_augment", "parse_rand_augment_config", "NAME_TO_OP", "LEVEL_TO_ARG",
    "apply_op",
]

_LEVEL_DENOM = 10.0
_FILL = (128, 128, 128)
_HPARAMS_DEFAULT: Dict[str, Any] = dict(translate_const=250, img_mean=_FILL)

_R = Image.Resampling
_RANDOM_INTERPOLATION = (_R.BILINEAR, _R.BICUBIC)
# OpenCV's INTER_NEAREST / INTER_LINEAR / INTER_CUBIC (fixed values; reading cv2.* here would import OpenCV)
_CV2_INTERP = {int(_R.NEAREST): 0, int(_R.BILINEAR): 1, int(_R.BICUBIC): 2}
_STR_TO_PIL = {"nearest": _R.NEAREST, "bilinear": _R.BILINEAR, "bicubic": _R.BICUBIC,
               "box": _R.BOX, "hamming": _R.HAMMING, "lanczos": _R.LANCZOS}

# ----------------------------------------------------------------------------------------------
# exact numpy building blocks (reproduce Pillow's integer / float32 arithmetic)
# ----------------------------------------------------------------------------------------------
_IDX = np.arange(256)


def _apply_lut(arr: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """Per-channel (256, C) or shared (256,) uint8 table -> new array."""
    if lut.ndim == 2 and (arr.ndim == 2 or arr.shape[2] == 1):
        lut = lut[:, 0]
    if arr.ndim == 3 and arr.shape[2] > 4:
        return lut[arr] if lut.ndim == 1 else np.take_along_axis(lut, arr.reshape(-1, arr.shape[2]), 0).reshape(arr.shape)
    src = np.ascontiguousarray(arr)
    if lut.ndim == 2:
        if (lut == lut[:, :1]).all():
            out = cv2.LUT(src, np.ascontiguousarray(lut[:, 0]))
        else:  # split / LUT / merge beats OpenCV's multi-channel-table path
            out = cv2.merge([cv2.LUT(ch, np.ascontiguousarray(lut[:, k])) for k, ch in enumerate(cv2.split(src))])
    else:
        out = cv2.LUT(src, lut)
    return out.reshape(arr.shape)


def _pil_lut(img: Image.Image, lut: np.ndarray) -> Image.Image:
    if img.mode not in ("L", "RGB"):
        raise ValueError(f"lookup-table augment ops support PIL modes L and RGB, got {img.mode}")
    nb = len(img.getbands())
    if lut.ndim == 1:
        lut = np.tile(lut, nb)
    else:
        lut = lut.T.reshape(-1)
    table = lut.tolist()
    try:  # Image.point() minus its per-entry round() loop (the table is already integral)
        img.load()
        return img._new(img.im.point(table, None))
    except (AttributeError, TypeError):  # pragma: no cover - other Pillow internals
        return img.point(table)


_GRAY_M = np.array([[19595.0, 38470.0, 7471.0]], np.float32)  # Pillow: L = (R*19595+G*38470+B*7471+0x8000)>>16


def _gray_f32(arrf: np.ndarray) -> np.ndarray:
    """Exact Pillow 'L' conversion of a float32 RGB array (integer sums < 2**24 stay exact)."""
    s = cv2.transform(np.ascontiguousarray(arrf), _GRAY_M)
    s = s.reshape(arrf.shape[:2])
    s += 32768.0  # type: ignore[arg-type]  # cv2.transform of float32 input is float32
    s *= 1.0 / 65536.0  # type: ignore[arg-type]
    np.floor(s, out=s)
    return s


def _blend_f32(deg: np.ndarray, img: np.ndarray, alpha: float) -> np.ndarray:
    """Pillow ``Image.blend(deg, img, alpha)`` on float32 arrays holding uint8 values."""
    t = np.subtract(img, deg, dtype=np.float32)  # exact: integer-valued operands
    t *= np.float32(alpha)
    t += deg
    np.clip(t, 0.0, 255.0, out=t)
    return t.astype(np.uint8)


def _blend_lut(deg_value: float, alpha: float) -> np.ndarray:
    """Table for a blend with a constant degenerate image."""
    d = np.float32(deg_value)
    t = (np.arange(256, dtype=np.float32) - d) * np.float32(alpha) + d
    return np.clip(t, 0, 255).astype(np.uint8)


_SMOOTH_K = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / 13.0


def _smooth(arr: np.ndarray) -> np.ndarray:
    """Pillow's ``ImageFilter.SMOOTH`` (3x3 kernel [1 1 1;1 5 1;1 1 1]/13, border rows/cols copied).

    Pillow rounds S/13 half up; S/13 is never exactly x.5 (13 is odd), so OpenCV's
    round-to-nearest uint8 output is the same value."""
    src = np.ascontiguousarray(arr)
    out = cv2.filter2D(src, -1, _SMOOTH_K, borderType=cv2.BORDER_REPLICATE).reshape(arr.shape)
    out[0] = arr[0]
    out[-1] = arr[-1]
    out[:, 0] = arr[:, 0]
    out[:, -1] = arr[:, -1]
    return out


# ----------------------------------------------------------------------------------------------
# the ops: each works on a PIL image or a uint8 HWC / HW numpy array
# ----------------------------------------------------------------------------------------------
def _fill_for(arr: np.ndarray, fill):
    c = 1 if arr.ndim == 2 else arr.shape[2]
    if np.isscalar(fill):
        fill = (fill,) * c
    fill = tuple(fill)
    if len(fill) < c:
        fill = fill + (fill[-1],) * (c - len(fill))
    return fill[:c] if c > 1 else fill[0]


def _warp_np(arr: np.ndarray, m, resample, fill) -> np.ndarray:
    """Pillow ``transform(AFFINE, m)`` geometry via cv2.warpAffine.

    Same pixel-centre convention.  Pillow clamps taps at the edge and switches to ``fill`` where a
    pixel centre maps outside the image; OpenCV's constant border blends ``fill`` in over one
    pixel instead, so results differ (by at most half the fill/edge contrast) in a band of about
    one pixel along the border of the valid area, and by OpenCV's rounding elsewhere."""
    a, b, c, d, e, f = m
    h, w = arr.shape[:2]
    M = np.array([[a, b, c + 0.5 * a + 0.5 * b - 0.5], [d, e, f + 0.5 * d + 0.5 * e - 0.5]], np.float64)
    interp = _CV2_INTERP.get(int(resample), cv2.INTER_LINEAR)
    src = np.ascontiguousarray(arr)
    # OpenCV's 4-channel bilinear / nearest warps are much faster than the 3-channel ones (not so for cubic)
    three = src.ndim == 3 and src.shape[2] == 3 and interp != cv2.INTER_CUBIC
    fillv = _fill_for(arr, fill)
    if three:
        src = cv2.cvtColor(src, cv2.COLOR_RGB2RGBA)
        fillv = tuple(fillv) + (0,)
    border = tuple(fillv) + (0,) * (4 - len(fillv)) if isinstance(fillv, tuple) else (fillv,) * 4
    out = cv2.warpAffine(src, M, (w, h), flags=interp | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=tuple(float(v) for v in border))
    if three:
        out = cv2.cvtColor(out, cv2.COLOR_RGBA2RGB)
    return out.reshape(arr.shape)


def _cubic_weights(t):
    # Pillow's affine bicubic (Geometry.c): p1=v2, p2=v3-v1, p3=2(v1-v2)+v3-v4, p4=-v1+v2-v3+v4
    return np.array([-t + 2 * t * t - t ** 3, 1 - 2 * t * t + t ** 3, t + t * t - t ** 3, -t * t + t ** 3])


def _translate_np(arr: np.ndarray, t: float, axis: int, resample, fill) -> np.ndarray:
    """out(x) = in(x + t) along ``axis`` with Pillow's kernels, as one small separable filter."""
    size = arr.shape[axis]
    r = int(resample)
    if r == int(_R.NEAREST):
        n, taps, lo = math.floor(t + 0.5), np.ones(1), 0
    else:
        n = math.floor(t)
        frac = t - n
        if r == int(_R.BICUBIC):
            taps, lo = _cubic_weights(frac), -1
        else:
            taps, lo = np.array([1.0 - frac, frac]), 0
    pad = 2
    src = np.ascontiguousarray(arr)
    if axis == 1:
        src = cv2.copyMakeBorder(src, 0, 0, pad, pad, cv2.BORDER_REPLICATE)
        kernel = taps.reshape(1, -1).astype(np.float32)
        anchor = (-lo, 0)
    else:
        src = cv2.copyMakeBorder(src, pad, pad, 0, 0, cv2.BORDER_REPLICATE)
        kernel = taps.reshape(-1, 1).astype(np.float32)
        anchor = (0, -lo)
    if taps.size > 1:
        # Pillow truncates the interpolated value; OpenCV rounds: shift by (almost) half a level
        g = cv2.filter2D(src, -1, kernel, anchor=anchor, delta=-0.4999, borderType=cv2.BORDER_REPLICATE)
    else:
        g = src
    g = g.reshape(src.shape[:2] + arr.shape[2:])
    out = np.empty_like(arr)
    v0 = min(max(math.ceil(-t - 0.5), 0), size)
    v1 = min(max(math.ceil(size - t - 0.5), 0), size)
    fillv = _fill_for(arr, fill)
    if axis == 1:
        out[:, :v0] = fillv
        out[:, v1:] = fillv
        if v1 > v0:
            out[:, v0:v1] = g[:, v0 + n + pad:v1 + n + pad]
    else:
        out[:v0] = fillv
        out[v1:] = fillv
        if v1 > v0:
            out[v0:v1] = g[v0 + n + pad:v1 + n + pad]
    return out


def _pil_fill(img, fill):
    """timm passes an RGB fill tuple whatever the mode (Pillow then fails on 'L' images): adapt it."""
    if isinstance(fill, (tuple, list)):
        nb = len(img.getbands())
        if nb == 1:
            return fill[0]
        if nb == 4 and len(fill) == 3:
            return tuple(fill) + (255,)
    return fill


def _pil_affine(img, m, resample, fill):
    return img.transform(img.size, Image.Transform.AFFINE, tuple(m), resample=resample, fillcolor=_pil_fill(img, fill))


def _affine_any(img, m, resample, fill, exact):
    if isinstance(img, Image.Image):
        return _pil_affine(img, m, resample, fill)
    if exact or int(resample) not in _CV2_INTERP:
        return np.asarray(_pil_affine(Image.fromarray(img), m, resample, fill))
    return _warp_np(img, m, resample, fill)


def shear_x(img, factor, fill=_FILL, resample=_R.BICUBIC, exact=False, **_):
    return _affine_any(img, (1, factor, 0, 0, 1, 0), resample, fill, exact)


def shear_y(img, factor, fill=_FILL, resample=_R.BICUBIC, exact=False, **_):
    return _affine_any(img, (1, 0, 0, factor, 1, 0), resample, fill, exact)


def _size(img):
    return img.size if isinstance(img, Image.Image) else (img.shape[1], img.shape[0])


def translate_x_abs(img, pixels, fill=_FILL, resample=_R.BICUBIC, exact=False, **_):
    if isinstance(img, Image.Image) or exact or int(resample) not in _CV2_INTERP:
        return _affine_any(img, (1, 0, pixels, 0, 1, 0), resample, fill, True)
    return _translate_np(img, pixels, 1, resample, fill)


def translate_y_abs(img, pixels, fill=_FILL, resample=_R.BICUBIC, exact=False, **_):
    if isinstance(img, Image.Image) or exact or int(resample) not in _CV2_INTERP:
        return _affine_any(img, (1, 0, 0, 0, 1, pixels), resample, fill, True)
    return _translate_np(img, pixels, 0, resample, fill)


def translate_x_rel(img, pct, **kw):
    return translate_x_abs(img, pct * _size(img)[0], **kw)


def translate_y_rel(img, pct, **kw):
    return translate_y_abs(img, pct * _size(img)[1], **kw)


def rotate(img, degrees, fill=_FILL, resample=_R.BICUBIC, exact=False, **_):
    if isinstance(img, Image.Image):
        return img.rotate(degrees, resample=resample, fillcolor=_pil_fill(img, fill))
    if exact or int(resample) not in _CV2_INTERP:
        pil = Image.fromarray(img)
        return np.asarray(pil.rotate(degrees, resample=resample, fillcolor=_pil_fill(pil, fill)))
    # Pillow's Image.rotate (no expand, centre rotation): special cases, then its matrix
    angle = degrees % 360.0
    h, w = img.shape[:2]
    if angle == 0:
        return img.copy()
    if angle == 180:
        return np.ascontiguousarray(img[::-1, ::-1])
    if angle in (90, 270) and w == h:
        return np.ascontiguousarray(np.rot90(img, 1 if angle == 90 else -1))
    rad = -math.radians(angle)
    m = [round(math.cos(rad), 15), round(math.sin(rad), 15), 0.0,
         round(-math.sin(rad), 15), round(math.cos(rad), 15), 0.0]
    cx, cy = w / 2.0, h / 2.0
    m[2] = m[0] * -cx + m[1] * -cy + m[2] + cx
    m[5] = m[3] * -cx + m[4] * -cy + m[5] + cy
    return _warp_np(img, m, resample, fill)


def _channels_hist(img):
    if isinstance(img, Image.Image):
        h = np.asarray(img.histogram(), np.int64)
        return h.reshape(-1, 256)
    if img.ndim == 2:
        return np.bincount(img.ravel(), minlength=256)[None]
    return np.stack([cv2.calcHist([np.ascontiguousarray(img)], [c], None, [256], [0, 256]).ravel()
                     for c in range(img.shape[2])]).astype(np.int64)


def _lut_op(img, lut):
    if isinstance(img, Image.Image):
        return _pil_lut(img, lut)
    return _apply_lut(img, lut)


def auto_contrast(img, **_):
    hist = _channels_hist(img)
    luts = []
    for h in hist:
        nz = np.flatnonzero(h)
        if nz.size == 0 or nz[-1] <= nz[0]:
            luts.append(_IDX.astype(np.uint8))
            continue
        lo, hi = int(nz[0]), int(nz[-1])
        scale = 255.0 / (hi - lo)
        offset = -lo * scale
        v = (_IDX * scale + offset).astype(np.int64)  # int() truncation, as Pillow
        luts.append(np.clip(v, 0, 255).astype(np.uint8))
    return _lut_op(img, np.stack(luts, 1))


def equalize(img, **_):
    hist = _channels_hist(img)
    luts = []
    for h in hist:
        nz = h[h > 0]
        if nz.size <= 1:
            luts.append(_IDX.astype(np.uint8))
            continue
        step = (int(nz.sum()) - int(nz[-1])) // 255
        if not step:
            luts.append(_IDX.astype(np.uint8))
            continue
        n = step // 2 + np.concatenate(([0], np.cumsum(h)[:-1]))
        luts.append(np.clip(n // step, 0, 255).astype(np.uint8))
    return _lut_op(img, np.stack(luts, 1))


_INVERT_LUT = (255 - _IDX).astype(np.uint8)


def invert(img, **_):
    return _lut_op(img, _INVERT_LUT)


_LUT_CACHE: Dict[tuple, np.ndarray] = {}


def _cached_lut(key, build):
    lut = _LUT_CACHE.get(key)
    if lut is None:
        lut = _LUT_CACHE[key] = build()
    return lut


def solarize(img, thresh, **_):
    lut = _cached_lut(("sol", int(thresh)), lambda: np.where(_IDX < thresh, _IDX, 255 - _IDX).astype(np.uint8))
    return _lut_op(img, lut)


def solarize_add(img, add, thresh=128, **_):
    if isinstance(img, Image.Image) and img.mode not in ("L", "RGB"):
        return img
    lut = _cached_lut(("sadd", int(add), int(thresh)),
                      lambda: np.where(_IDX < thresh, np.minimum(255, _IDX + add), _IDX).astype(np.uint8))
    return _lut_op(img, lut)


def posterize(img, bits_to_keep, **_):
    if bits_to_keep >= 8:
        return img
    # Pillow >= 13 rejects bits < 1; earlier Pillow (and timm's intent) gave a black image.
    bits = max(int(bits_to_keep), 0)
    mask = ~(2 ** (8 - bits) - 1) & 0xFF
    lut = _cached_lut(("post", bits), lambda: (_IDX & mask).astype(np.uint8))
    return _lut_op(img, lut)


def color(img, factor, **_):
    if isinstance(img, Image.Image):
        return ImageEnhance.Color(img).enhance(factor)
    if img.ndim == 2 or img.shape[2] == 1:
        return img.copy()
    if img.shape[2] in (3, 4):  # Pillow's C path is the fastest exact one here
        mode = "RGB" if img.shape[2] == 3 else "RGBA"
        return np.asarray(ImageEnhance.Color(Image.fromarray(img, mode)).enhance(factor))
    f = img.astype(np.float32)
    g = _gray_f32(f[..., :3])[..., None]
    return _blend_f32(g, f, factor)


def _gray_mean(img) -> int:
    if isinstance(img, Image.Image):
        h = np.asarray(img.convert("L").histogram(), np.float64)
        total, n = float((h * _IDX).sum()), float(h.sum())
    else:
        if img.ndim == 2 or img.shape[2] == 1:
            g = img.reshape(img.shape[0], img.shape[1])
            total = float(g.sum(dtype=np.float64))
        else:
            g = _gray_f32(img[..., :3].astype(np.float32))
            total = float(g.sum(dtype=np.float64))
        n = float(img.shape[0] * img.shape[1])
    return int(total / n + 0.5)


def _keep_alpha(img, out):
    if not isinstance(img, Image.Image) and img.ndim == 3 and img.shape[2] == 4:
        out[..., 3] = img[..., 3]  # Pillow's enhancers keep the alpha band
    return out


def contrast(img, factor, **_):
    if isinstance(img, Image.Image) and img.mode not in ("L", "RGB"):
        return ImageEnhance.Contrast(img).enhance(factor)
    mean = _gray_mean(img)
    return _keep_alpha(img, _lut_op(img, _blend_lut(mean, factor)))


def brightness(img, factor, **_):
    if isinstance(img, Image.Image) and img.mode not in ("L", "RGB"):
        return ImageEnhance.Brightness(img).enhance(factor)
    return _keep_alpha(img, _lut_op(img, _blend_lut(0.0, factor)))


def sharpness(img, factor, **_):
    if isinstance(img, Image.Image):
        if img.mode not in ("L", "RGB"):
            return ImageEnhance.Sharpness(img).enhance(factor)
        arr = np.asarray(img)
        return Image.fromarray(_blend_f32(_smooth(arr).astype(np.float32), arr, factor))
    return _blend_f32(_smooth(img).astype(np.float32), img, factor)


def gaussian_blur(img, factor, **_):
    if isinstance(img, Image.Image):
        return img.filter(ImageFilter.GaussianBlur(radius=factor))
    return np.asarray(Image.fromarray(img).filter(ImageFilter.GaussianBlur(radius=factor)))


def gaussian_blur_rand(img, factor, rng=None, **kw):
    radius = rng.uniform(0.1, 2.0 * factor)
    return gaussian_blur(img, radius)


def desaturate(img, factor, **kw):
    factor = min(1.0, max(0.0, 1.0 - factor))  # enhance factor 0 = grayscale, 1.0 = no change
    return color(img, factor, **kw)


# ----------------------------------------------------------------------------------------------
# level -> argument functions (timm's tables; draws go through the op's RandomSource)
# ----------------------------------------------------------------------------------------------
def _randomly_negate(v, rng):
    return -v if rng.random() > 0.5 else v


def _rotate_level_to_arg(level, _hparams, rng):
    return _randomly_negate((level / _LEVEL_DENOM) * 30.0, rng),


def _enhance_level_to_arg(level, _hparams, rng):
    return (level / _LEVEL_DENOM) * 1.8 + 0.1,


def _enhance_increasing_level_to_arg(level, _hparams, rng):
    level = (level / _LEVEL_DENOM) * 0.9
    return max(0.1, 1.0 + _randomly_negate(level, rng)),


def _minmax_level_to_arg(level, _hparams, rng, min_val=0.0, max_val=1.0, clamp=True):
    level = min_val + (max_val - min_val) * (level / _LEVEL_DENOM)
    if clamp:
        level = max(min_val, min(max_val, level))
    return level,


def _shear_level_to_arg(level, _hparams, rng):
    return _randomly_negate((level / _LEVEL_DENOM) * 0.3, rng),


def _translate_abs_level_to_arg(level, hparams, rng):
    return _randomly_negate((level / _LEVEL_DENOM) * float(hparams.get("translate_const", 250)), rng),


def _translate_rel_level_to_arg(level, hparams, rng):
    return _randomly_negate((level / _LEVEL_DENOM) * hparams.get("translate_pct", 0.45), rng),


def _posterize_level_to_arg(level, _hparams, rng=None):
    return int((level / _LEVEL_DENOM) * 4),


def _posterize_increasing_level_to_arg(level, hparams, rng=None):
    return 4 - _posterize_level_to_arg(level, hparams)[0],


def _posterize_original_level_to_arg(level, _hparams, rng=None):
    return int((level / _LEVEL_DENOM) * 4) + 4,


def _solarize_level_to_arg(level, _hparams, rng=None):
    return min(256, int((level / _LEVEL_DENOM) * 256)),


def _solarize_increasing_level_to_arg(level, hparams, rng=None):
    return 256 - _solarize_level_to_arg(level, hparams)[0],


def _solarize_add_level_to_arg(level, _hparams, rng=None):
    return min(128, int((level / _LEVEL_DENOM) * 110)),


def _minmax(min_val, max_val):
    def fn(level, hparams, rng):
        return _minmax_level_to_arg(level, hparams, rng, min_val=min_val, max_val=max_val)
    return fn


LEVEL_TO_ARG = {
    "AutoContrast": None,
    "Equalize": None,
    "Invert": None,
    "Rotate": _rotate_level_to_arg,
    "Posterize": _posterize_level_to_arg,
    "PosterizeIncreasing": _posterize_increasing_level_to_arg,
    "PosterizeOriginal": _posterize_original_level_to_arg,
    "Solarize": _solarize_level_to_arg,
    "SolarizeIncreasing": _solarize_increasing_level_to_arg,
    "SolarizeAdd": _solarize_add_level_to_arg,
    "Color": _enhance_level_to_arg,
    "ColorIncreasing": _enhance_increasing_level_to_arg,
    "Contrast": _enhance_level_to_arg,
    "ContrastIncreasing": _enhance_increasing_level_to_arg,
    "Brightness": _enhance_level_to_arg,
    "BrightnessIncreasing": _enhance_increasing_level_to_arg,
    "Sharpness": _enhance_level_to_arg,
    "SharpnessIncreasing": _enhance_increasing_level_to_arg,
    "ShearX": _shear_level_to_arg,
    "ShearY": _shear_level_to_arg,
    "TranslateX": _translate_abs_level_to_arg,
    "TranslateY": _translate_abs_level_to_arg,
    "TranslateXRel": _translate_rel_level_to_arg,
    "TranslateYRel": _translate_rel_level_to_arg,
    "Desaturate": _minmax(0.5, 1.0),
    "GaussianBlur": _minmax(0.1, 2.0),
    "GaussianBlurRand": _minmax(0.0, 1.0),
}

NAME_TO_OP: Dict[str, Callable[..., Any]] = {
    "AutoContrast": auto_contrast,
    "Equalize": equalize,
    "Invert": invert,
    "Rotate": rotate,
    "Posterize": posterize,
    "PosterizeIncreasing": posterize,
    "PosterizeOriginal": posterize,
    "Solarize": solarize,
    "SolarizeIncreasing": solarize,
    "SolarizeAdd": solarize_add,
    "Color": color,
    "ColorIncreasing": color,
    "Contrast": contrast,
    "ContrastIncreasing": contrast,
    "Brightness": brightness,
    "BrightnessIncreasing": brightness,
    "Sharpness": sharpness,
    "SharpnessIncreasing": sharpness,
    "ShearX": shear_x,
    "ShearY": shear_y,
    "TranslateX": translate_x_abs,
    "TranslateY": translate_y_abs,
    "TranslateXRel": translate_x_rel,
    "TranslateYRel": translate_y_rel,
    "Desaturate": desaturate,
    "GaussianBlur": gaussian_blur,
    "GaussianBlurRand": gaussian_blur_rand,
}

_GEOMETRIC = frozenset({"Rotate", "ShearX", "ShearY", "TranslateX", "TranslateY", "TranslateXRel", "TranslateYRel"})


def _as_resample(v):
    if isinstance(v, str):
        key = v.lower()
        if key == "random":
            return _RANDOM_INTERPOLATION
        if key not in _STR_TO_PIL:
            raise ValueError(f"unknown interpolation {v!r}; expected one of {sorted(_STR_TO_PIL)} or 'random'")
        return _STR_TO_PIL[key]
    if isinstance(v, (list, tuple)):
        return tuple(_as_resample(x) for x in v)
    return _R(int(v)) if not isinstance(v, _R) else v


# ----------------------------------------------------------------------------------------------
# image container handling (PIL / numpy / backend / DLPack, HWC or CHW)
# ----------------------------------------------------------------------------------------------
class _Img:
    """Unwraps an input image to PIL or a uint8 HWC/HW numpy array and wraps results back."""

    __slots__ = ("kind", "like", "chw")

    @staticmethod
    def unwrap(img, what="image"):
        if isinstance(img, Image.Image):
            return img, None
        kind = kind_of(img)
        if kind == "other":
            raise TypeError(f"{what}: expected a PIL image, a uint8 numpy array or a uint8 tensor, got {type(img).__name__}")
        arr = as_numpy(img, what)
        if arr.dtype != np.uint8:
            raise TypeError(
                f"{what}: augmentation ops need uint8 pixels (0..255), got dtype {arr.dtype}; "
                f"apply them before ToTensor/Normalize (or convert with (x*255).round().astype(uint8))")
        if arr.ndim not in (2, 3):
            raise ValueError(f"{what}: expected an HWC, CHW or HW image, got shape {tuple(arr.shape)}")
        chw = False
        if arr.ndim == 3 and arr.shape[0] in (1, 3, 4) and arr.shape[2] not in (1, 3, 4):
            chw = True
            arr = np.ascontiguousarray(arr.transpose(1, 2, 0))
        info = _Img()
        info.kind, info.like, info.chw = kind, img, chw
        return arr, info

    @staticmethod
    def wrap(out, info):
        if info is None:
            return out
        if isinstance(out, Image.Image):
            out = np.asarray(out)
        if info.chw:
            out = out.transpose(2, 0, 1)
        if info.kind == "numpy":
            return out
        return from_numpy_like(np.ascontiguousarray(out), info.like)


def apply_op(img: Any, name: str, *args: Any, fill: Union[int, float, Sequence[float]] = _FILL,
             resample: int = _R.BICUBIC, rng: RngLike = None, exact: bool = False) -> Any:
    """Apply one op with explicit arguments (no randomness except GaussianBlurRand's radius).

    Args:
        img: PIL image, numpy HWC uint8 array or CHW tensor.
        name: the op name (a key of ``NAME_TO_OP``: ``"Rotate"``, ``"Solarize"``...).
        *args: the op's arguments (its level already mapped, e.g. degrees for ``Rotate``).
        fill: fill colour of the geometric ops.
        resample: PIL resampling mode of the geometric ops.
        rng: the random source of the ops that draw (see :func:`resolve_rng`).
        exact: geometric ops on arrays reproduce PIL bit for bit (slower).

    Returns:
        The transformed image, of the type of ``img``.

    Raises:
        ValueError: for an unknown op name.
    """
    if name not in NAME_TO_OP:
        raise ValueError(f"unknown augment op {name!r}; known ops: {', '.join(NAME_TO_OP)}")
    x, info = _Img.unwrap(img)
    out = NAME_TO_OP[name](x, *args, fill=fill, resample=_as_resample(resample), rng=resolve_rng(rng), exact=exact)
    return _Img.wrap(out, info)


# ----------------------------------------------------------------------------------------------
# AugmentOp and the policies
# ----------------------------------------------------------------------------------------------
class AugmentOp:
    """One timm augment op: applied with ``prob``; ``magnitude`` on timm's 0..10 scale.

    hparams: ``img_mean`` (fill colour), ``interpolation`` (PIL resample / name; default random
    bilinear-or-bicubic per call), ``translate_const``, ``translate_pct``, ``magnitude_std``
    (gaussian noise on the magnitude; ``inf`` = uniform in [0, m]), ``magnitude_max`` (clip
    instead of 10), ``pil_exact`` (bit-exact geometric ops on arrays through Pillow).

    Args:
        name: the op name (a key of ``NAME_TO_OP``).
        prob: probability of applying the op.
        magnitude: the magnitude on timm's 0..10 scale.
        hparams: the hyper-parameters above.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.

    Raises:
        ValueError: for an unknown op name.
    """

    def __init__(self, name: str, prob: float = 0.5, magnitude: float = 10, hparams: Optional[Dict] = None,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        if name not in NAME_TO_OP:
            raise ValueError(f"unknown augment op {name!r}; known ops: {', '.join(NAME_TO_OP)}")
        hparams = hparams or _HPARAMS_DEFAULT
        self.name = name
        self.aug_fn = NAME_TO_OP[name]
        self.level_fn = LEVEL_TO_ARG[name]
        self.prob = prob
        self.magnitude = magnitude
        self.hparams = dict(hparams)
        self.fill = tuple(hparams["img_mean"]) if "img_mean" in hparams else _FILL
        self.resample = _as_resample(hparams["interpolation"]) if "interpolation" in hparams else _RANDOM_INTERPOLATION
        self.magnitude_std = self.hparams.get("magnitude_std", 0)
        self.magnitude_max = self.hparams.get("magnitude_max", None)
        self.exact = bool(self.hparams.get("pil_exact", False))
        self._geometric = name in _GEOMETRIC
        self.rng = resolve_rng(rng, seed)

    @property
    def kwargs(self):  # timm attribute name
        return dict(fillcolor=self.fill, resample=self.resample)

    def _magnitude(self):
        magnitude = self.magnitude
        rng = self.rng
        if self.magnitude_std > 0:
            if self.magnitude_std == float("inf"):
                magnitude = rng.uniform(0, magnitude)
            else:
                magnitude = rng.gauss(magnitude, self.magnitude_std)
        upper = self.magnitude_max or _LEVEL_DENOM
        return max(0.0, min(magnitude, upper))

    def _apply(self, x):
        """Apply to an unwrapped image (PIL or numpy)."""
        rng = self.rng
        if self.prob < 1.0 and rng.random() > self.prob:
            return x
        magnitude = self._magnitude()
        args = self.level_fn(magnitude, self.hparams, rng) if self.level_fn is not None else ()
        resample = self.resample
        if self._geometric and isinstance(resample, tuple):
            resample = rng.choice(resample)
        return self.aug_fn(x, *args, fill=self.fill, resample=resample, rng=rng, exact=self.exact)

    def __call__(self, img):
        x, info = _Img.unwrap(img)
        return _Img.wrap(self._apply(x), info)

    def __repr__(self):
        fs = f"{self.__class__.__name__}(name={self.name}, p={self.prob}, m={self.magnitude}, mstd={self.magnitude_std}"
        if self.magnitude_max is not None:
            fs += f", mmax={self.magnitude_max}"
        return fs + ")"


def _share_rng(ops, rng):
    for op in ops:
        op.rng = rng
    return ops


_POLICIES = {
    "v0": [
        [("Equalize", 0.8, 1), ("ShearY", 0.8, 4)],
        [("Color", 0.4, 9), ("Equalize", 0.6, 3)],
        [("Color", 0.4, 1), ("Rotate", 0.6, 8)],
        [("Solarize", 0.8, 3), ("Equalize", 0.4, 7)],
        [("Solarize", 0.4, 2), ("Solarize", 0.6, 2)],
        [("Color", 0.2, 0), ("Equalize", 0.8, 8)],
        [("Equalize", 0.4, 8), ("SolarizeAdd", 0.8, 3)],
        [("ShearX", 0.2, 9), ("Rotate", 0.6, 8)],
        [("Color", 0.6, 1), ("Equalize", 1.0, 2)],
        [("Invert", 0.4, 9), ("Rotate", 0.6, 0)],
        [("Equalize", 1.0, 9), ("ShearY", 0.6, 3)],
        [("Color", 0.4, 7), ("Equalize", 0.6, 0)],
        [("Posterize", 0.4, 6), ("AutoContrast", 0.4, 7)],
        [("Solarize", 0.6, 8), ("Color", 0.6, 9)],
        [("Solarize", 0.2, 4), ("Rotate", 0.8, 9)],
        [("Rotate", 1.0, 7), ("TranslateYRel", 0.8, 9)],
        [("ShearX", 0.0, 0), ("Solarize", 0.8, 4)],
        [("ShearY", 0.8, 0), ("Color", 0.6, 4)],
        [("Color", 1.0, 0), ("Rotate", 0.6, 2)],
        [("Equalize", 0.8, 4), ("Equalize", 0.0, 8)],
        [("Equalize", 1.0, 4), ("AutoContrast", 0.6, 2)],
        [("ShearY", 0.4, 7), ("SolarizeAdd", 0.6, 7)],
        [("Posterize", 0.8, 2), ("Solarize", 0.6, 10)],
        [("Solarize", 0.6, 8), ("Equalize", 0.6, 1)],
        [("Color", 0.8, 6), ("Rotate", 0.4, 5)],
    ],
    "original": [
        [("PosterizeOriginal", 0.4, 8), ("Rotate", 0.6, 9)],
        [("Solarize", 0.6, 5), ("AutoContrast", 0.6, 5)],
        [("Equalize", 0.8, 8), ("Equalize", 0.6, 3)],
        [("PosterizeOriginal", 0.6, 7), ("PosterizeOriginal", 0.6, 6)],
        [("Equalize", 0.4, 7), ("Solarize", 0.2, 4)],
        [("Equalize", 0.4, 4), ("Rotate", 0.8, 8)],
        [("Solarize", 0.6, 3), ("Equalize", 0.6, 7)],
        [("PosterizeOriginal", 0.8, 5), ("Equalize", 1.0, 2)],
        [("Rotate", 0.2, 3), ("Solarize", 0.6, 8)],
        [("Equalize", 0.6, 8), ("PosterizeOriginal", 0.4, 6)],
        [("Rotate", 0.8, 8), ("Color", 0.4, 0)],
        [("Rotate", 0.4, 9), ("Equalize", 0.6, 2)],
        [("Equalize", 0.0, 7), ("Equalize", 0.8, 8)],
        [("Invert", 0.6, 4), ("Equalize", 1.0, 8)],
        [("Color", 0.6, 4), ("Contrast", 1.0, 8)],
        [("Rotate", 0.8, 8), ("Color", 1.0, 2)],
        [("Color", 0.8, 8), ("Solarize", 0.8, 7)],
        [("Sharpness", 0.4, 7), ("Invert", 0.6, 8)],
        [("ShearX", 0.6, 5), ("Equalize", 1.0, 9)],
        [("Color", 0.4, 0), ("Equalize", 0.6, 3)],
        [("Equalize", 0.4, 7), ("Solarize", 0.2, 4)],
        [("Solarize", 0.6, 5), ("AutoContrast", 0.6, 5)],
        [("Invert", 0.6, 4), ("Equalize", 1.0, 8)],
        [("Color", 0.6, 4), ("Contrast", 1.0, 8)],
        [("Equalize", 0.8, 8), ("Equalize", 0.6, 3)],
    ],
    "3a": [
        [("Solarize", 1.0, 5)],  # 128 threshold at magnitude 5
        [("Desaturate", 1.0, 10)],  # grayscale at magnitude 10
        [("GaussianBlurRand", 1.0, 10)],
    ],
}


def _research_posterize(policy, src):
    return [[(("PosterizeIncreasing" if n == src else n), p, m) for n, p, m in sp] for sp in policy]


_POLICIES["v0r"] = _research_posterize(_POLICIES["v0"], "Posterize")
_POLICIES["originalr"] = _research_posterize(_POLICIES["original"], "PosterizeOriginal")


def auto_augment_policy(name: str = "v0", hparams: Optional[Dict] = None, rng: RngLike = None,
                        seed: Optional[int] = None) -> List[List["AugmentOp"]]:
    """The AutoAugment policy ``name`` (v0, v0r, original, originalr, 3a) as lists of AugmentOps.

    Args:
        name: ``"v0"``, ``"v0r"``, ``"original"``, ``"originalr"`` or ``"3a"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``, ``magnitude_std``...).
        rng: the random source shared by the ops.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The sub-policies, each a list of ops.

    Raises:
        ValueError: for an unknown policy name.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    if name not in _POLICIES:
        raise ValueError(f"unknown AutoAugment policy {name!r}; expected one of {', '.join(_POLICIES)}")
    rng = resolve_rng(rng, seed)
    return [_share_rng([AugmentOp(*a, hparams=hparams) for a in sp], rng) for sp in _POLICIES[name]]


class _Policy:
    """Common container handling and seeding for the policy transforms."""

    rng: RandomSource

    def _ops_all(self):
        raise NotImplementedError

    def _set_rng(self, rng):
        self.rng = rng
        for op in self._ops_all():
            op.rng = rng

    def manual_seed(self, seed):
        """Restart this transform's random sequence from ``seed``."""
        self._set_rng(RandomSource(seed))
        return self

    def __call__(self, img):
        x, info = _Img.unwrap(img)
        return _Img.wrap(self._apply(x), info)


class AutoAugment(_Policy):
    """An AutoAugment policy (timm's): each call applies one randomly chosen sub-policy (a list of ops).

    Args:
        policy: sub-policies, each a list of :class:`AugmentOp` (see :func:`auto_augment_policy`).
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.
    """

    def __init__(self, policy: List[List[Any]], rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.policy = policy
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (policy[0][0].rng if policy and policy[0] else RandomSource()))

    def _ops_all(self):
        return [op for sp in self.policy for op in sp]

    def _apply(self, x):
        sub_policy = self.rng.choice(self.policy)
        for op in sub_policy:
            x = op._apply(x)
        return x

    def __repr__(self):
        fs = self.__class__.__name__ + "(policy="
        for p in self.policy:
            fs += "\n\t[" + ", ".join(str(op) for op in p) + "]"
        return fs + ")"


_RAND_TRANSFORMS = [
    "AutoContrast", "Equalize", "Invert", "Rotate", "Posterize", "Solarize", "SolarizeAdd", "Color",
    "Contrast", "Brightness", "Sharpness", "ShearX", "ShearY", "TranslateXRel", "TranslateYRel",
]
_RAND_INCREASING_TRANSFORMS = [
    "AutoContrast", "Equalize", "Invert", "Rotate", "PosterizeIncreasing", "SolarizeIncreasing",
    "SolarizeAdd", "ColorIncreasing", "ContrastIncreasing", "BrightnessIncreasing", "SharpnessIncreasing",
    "ShearX", "ShearY", "TranslateXRel", "TranslateYRel",
]
_RAND_3A = ["SolarizeIncreasing", "Desaturate", "GaussianBlur"]
_RAND_WEIGHTED_3A = {
    "SolarizeIncreasing": 6, "Desaturate": 6, "GaussianBlur": 6, "Rotate": 3, "ShearX": 2, "ShearY": 2,
    "PosterizeIncreasing": 1, "AutoContrast": 1, "ColorIncreasing": 1, "SharpnessIncreasing": 1,
    "ContrastIncreasing": 1, "BrightnessIncreasing": 1, "Equalize": 1, "Invert": 1,
}
_RAND_WEIGHTED_0 = {
    "Rotate": 3, "ShearX": 2, "ShearY": 2, "TranslateXRel": 1, "TranslateYRel": 1, "ColorIncreasing": 0.25,
    "SharpnessIncreasing": 0.25, "AutoContrast": 0.25, "SolarizeIncreasing": 0.05, "SolarizeAdd": 0.05,
    "ContrastIncreasing": 0.05, "BrightnessIncreasing": 0.05, "Equalize": 0.05, "PosterizeIncreasing": 0.05,
    "Invert": 0.05,
}
_RAND_CHOICES: Dict[str, Any] = {"weights": _RAND_WEIGHTED_0, "3aw": _RAND_WEIGHTED_3A, "3a": _RAND_3A}


def rand_augment_choices(name: str, increasing: bool = True) -> Union[Dict[str, float], List[str]]:
    """The op set for a ``t<name>`` section: 'weights', '3a', '3aw' (ValueError otherwise).

    Args:
        name: the section's name after ``t``.
        increasing: accepted for timm's signature; the named sets do not depend on it.

    Returns:
        Op names, or ``{op name: relative weight}`` for the weighted sets.

    Raises:
        ValueError: for an unknown name.
    """
    if name in _RAND_CHOICES:
        return _RAND_CHOICES[name]
    raise ValueError(f"unknown RandAugment transform set {name!r} (section 't{name}'); "
                     f"expected one of {', '.join('t' + k for k in _RAND_CHOICES)}")


def _get_weighted_transforms(transforms: Dict):
    names, probs = list(zip(*transforms.items()))
    weights = np.array(probs)
    return list(names), weights / np.sum(weights)


def rand_augment_ops(magnitude: float = 10, prob: float = 0.5, hparams: Optional[Dict] = None,
                     transforms: Optional[Union[Dict, List]] = None, rng: RngLike = None,
                     seed: Optional[int] = None) -> List["AugmentOp"]:
    """The RandAugment operations (timm's list) at ``magnitude``, each applied with probability ``prob``.

    Args:
        magnitude: operation strength (0-10 scale, timm's).
        prob: probability that a chosen op is applied.
        hparams: timm's augmentation hyper-parameters.
        transforms: operation names (or a name -> weight mapping) instead of the default set.
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.

    Returns:
        A list of :class:`AugmentOp`.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    transforms = transforms or _RAND_TRANSFORMS
    rng = resolve_rng(rng, seed)
    return _share_rng([AugmentOp(name, prob=prob, magnitude=magnitude, hparams=hparams) for name in transforms], rng)


class RandAugment(_Policy):
    """``num_layers`` ops drawn per image (with replacement; without, when weighted), each applied with its prob.

    Args:
        ops: the ops to draw from.
        num_layers: ops applied per image.
        choice_weights: relative probability of each op (``None``: uniform).
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], num_layers: int = 2, choice_weights: Optional[Sequence[float]] = None,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self.num_layers = num_layers
        self.choice_weights = choice_weights
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _apply(self, x):
        idx = self.rng.np_choice(len(self.ops), self.num_layers, replace=self.choice_weights is None,
                                 p=self.choice_weights)
        ops = self.ops
        for i in idx:
            x = ops[i]._apply(x)
        return x

    def __repr__(self):
        fs = self.__class__.__name__ + f"(n={self.num_layers}, ops="
        for op in self.ops:
            fs += f"\n\t{op}"
        return fs + ")"


# ----------------------------------------------------------------------------------------------
# config-string grammar
# ----------------------------------------------------------------------------------------------
_SECTION = re.compile(r"(\d.*)")


def _split_sections(config_str: str, kind: str):
    if not isinstance(config_str, str) or not config_str:
        raise ValueError(f"{kind} config must be a non-empty string, got {config_str!r}")
    parts = config_str.split("-")
    head, rest = parts[0], parts[1:]
    # negative numbers have no place in the grammar: 'mstd-1' would split into 'mstd', '1'
    return head, [p for p in rest if p != ""]


_KNOWN_KEYS = {
    "RandAugment": ("m", "n", "p", "mstd", "mmax", "inc"),
    "AutoAugment": ("mstd",),
    "AugMix": ("m", "w", "d", "a", "b", "mstd"),
    "TrivialAugment": ("mmax", "inc"),
}


def _key_val(section: str, config_str: str, kind: str):
    """``'mstd0.5'`` -> ``('mstd', '0.5')``; a known key without a number (timm skips it) -> ``(key, None)``."""
    cs = _SECTION.split(section)
    if len(cs) < 2:
        if section in _KNOWN_KEYS.get(kind, ()):
            warnings.warn(f"{kind} config section {section!r} in {config_str!r} has no value; ignored (as timm does)",
                          stacklevel=3)
            return section, None
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"expected <key><number>, e.g. 'm9' or 'mstd0.5'")
    if not cs[0]:
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"expected <key><number>, e.g. 'm9' or 'mstd0.5'")
    return cs[0], cs[1]


def _num(conv, val, section, config_str, kind):
    try:
        return conv(val)
    except ValueError:
        raise ValueError(f"malformed {kind} config section {section!r} in {config_str!r}: "
                         f"{val!r} is not a valid {conv.__name__}") from None


def parse_rand_augment_config(config_str: str, hparams: Optional[Dict] = None) -> Dict:
    """Parse ``rand-...`` into ``dict(magnitude, num_layers, prob, increasing, transforms, hparams)``.

    Args:
        config_str: the ``rand-...`` config.
        hparams: hyper-parameters to start from (copied; ``magnitude_std`` / ``magnitude_max`` are set from the config).

    Returns:
        The parsed settings.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "RandAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    head, sections = _split_sections(config_str, kind)
    if head != "rand":
        raise ValueError(f"RandAugment config must start with 'rand', got {head!r} in {config_str!r}")
    out: Dict[str, Any] = dict(magnitude=_LEVEL_DENOM, num_layers=2, prob=0.5, increasing=False, transforms=None)
    for c in sections:
        if c.startswith("t"):
            if out["transforms"] is None:
                out["transforms"] = c[1:]
            continue
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            mstd = _num(float, val, c, config_str, kind)
            if mstd > 100:
                mstd = float("inf")  # uniform sampling in [0, magnitude]
            hparams.setdefault("magnitude_std", mstd)
        elif key == "mmax":
            hparams.setdefault("magnitude_max", _num(int, val, c, config_str, kind))
        elif key == "inc":
            # timm 1.0 parses bool(int(val)): 'inc0' is off (older timm used bool('0') == True)
            out["increasing"] = bool(_num(int, val, c, config_str, kind))
        elif key == "m":
            out["magnitude"] = _num(int, val, c, config_str, kind)
        elif key == "n":
            out["num_layers"] = _num(int, val, c, config_str, kind)
        elif key == "p":
            out["prob"] = _num(float, val, c, config_str, kind)
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; "
                             f"known keys: m, n, p, mstd, mmax, inc, t<name>")
    out["hparams"] = hparams
    return out


def rand_augment_transform(config_str: str, hparams: Optional[Dict] = None,
                           transforms: Optional[Union[str, Dict, List]] = None, rng: RngLike = None,
                           seed: Optional[int] = None) -> "RandAugment":
    """RandAugment from a config string, e.g. ``rand-m9-mstd0.5-inc1`` (see module docstring).

    Args:
        config_str: the config, ``rand`` then ``-m<magnitude>``, ``-n<layers>``, ``-mstd<std>``, ``-inc<0|1>``...
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        transforms: op names, ``{op: weight}``, or a set name (``"3a"``); default the config's ``t`` section or
            timm's standard set.
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The RandAugment transform.

    Raises:
        ValueError: for a malformed config string or an unknown op.
    """
    cfg = parse_rand_augment_config(config_str, hparams)
    chosen: Any = cfg["transforms"] if transforms is None else transforms  # a set name, op names or weights
    if isinstance(chosen, str):
        chosen = rand_augment_choices(chosen, increasing=cfg["increasing"])
    elif chosen is None:
        chosen = _RAND_INCREASING_TRANSFORMS if cfg["increasing"] else _RAND_TRANSFORMS
    choice_weights = None
    if isinstance(chosen, dict):
        chosen, choice_weights = _get_weighted_transforms(chosen)
    for name in chosen:
        if name not in NAME_TO_OP:
            raise ValueError(f"unknown augment op {name!r} in RandAugment transforms")
    rng = resolve_rng(rng, seed)
    ops = rand_augment_ops(magnitude=cfg["magnitude"], prob=cfg["prob"], hparams=cfg["hparams"],
                           transforms=chosen, rng=rng)
    return RandAugment(ops, cfg["num_layers"], choice_weights=choice_weights, rng=rng)


def auto_augment_transform(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                           seed: Optional[int] = None) -> "AutoAugment":
    """AutoAugment from ``<policy>[-mstd<float>]``, policy in v0, v0r, original, originalr, 3a.

    Args:
        config_str: e.g. ``"v0"`` or ``"original-mstd0.5"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The AutoAugment transform.

    Raises:
        ValueError: for a malformed config string or an unknown policy.
    """
    kind = "AutoAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    policy_name, sections = _split_sections(config_str, kind)
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            hparams.setdefault("magnitude_std", _num(float, val, c, config_str, kind))
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: mstd")
    rng = resolve_rng(rng, seed)
    return AutoAugment(auto_augment_policy(policy_name, hparams=hparams, rng=rng), rng=rng)


_AUGMIX_TRANSFORMS = [
    "AutoContrast", "ColorIncreasing", "ContrastIncreasing", "BrightnessIncreasing", "SharpnessIncreasing",
    "Equalize", "Rotate", "PosterizeIncreasing", "SolarizeIncreasing", "ShearX", "ShearY", "TranslateXRel",
    "TranslateYRel",
]


def augmix_ops(magnitude: float = 10, hparams: Optional[Dict] = None, transforms: Optional[Sequence[str]] = None,
               rng: RngLike = None, seed: Optional[int] = None) -> List["AugmentOp"]:
    """The AugMix operations (timm's list), each applied with probability 1 at ``magnitude``.

    Args:
        magnitude: operation strength (0-10 scale, timm's).
        hparams: timm's augmentation hyper-parameters (``img_mean``, ``magnitude_std``, ...).
        transforms: operation names to use instead of the default AugMix set.
        rng: a random source shared by the ops; ``seed`` builds one.
        seed: seed of a new random source.

    Returns:
        A list of :class:`AugmentOp`.
    """
    hparams = hparams or _HPARAMS_DEFAULT
    transforms = transforms or _AUGMIX_TRANSFORMS
    rng = resolve_rng(rng, seed)
    return _share_rng([AugmentOp(name, prob=1.0, magnitude=magnitude, hparams=hparams) for name in transforms], rng)


class AugMixAugment(_Policy):
    """AugMix: ``width`` chains of ``depth`` ops mixed with Dirichlet weights, blended with Beta(m).

    Args:
        ops: the ops to chain.
        alpha: Dirichlet / Beta concentration.
        width: number of chains.
        depth: ops per chain (``-1``: 1 to 3 at random).
        blended: blend the chains one by one (timm's ``blended`` variant).
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], alpha: float = 1.0, width: int = 3, depth: int = -1, blended: bool = False,
                 rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self.alpha = alpha
        self.width = width
        self.depth = depth
        self.blended = blended
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _chain(self, x):
        depth = self.depth if self.depth > 0 else int(self.rng.np_randint(1, 4))
        idx = self.rng.np_choice(len(self.ops), depth, replace=True)
        for i in idx:
            x = self.ops[i]._apply(x)
        return x

    @staticmethod
    def _calc_blended_weights(ws, m):
        ws = ws * m
        cump = 1.0
        rws = []
        for w in ws[::-1]:
            alpha = w / cump
            cump *= 1 - alpha
            rws.append(alpha)
        return np.array(rws[::-1], dtype=np.float32)

    def _apply(self, x):
        mixing_weights = np.float32(self.rng.np_dirichlet([self.alpha] * self.width))
        m = np.float32(self.rng.np_beta(self.alpha, self.alpha))
        is_pil = isinstance(x, Image.Image)
        if self.blended:
            ws = self._calc_blended_weights(mixing_weights, m)
            orig = x
            out = x
            for w in ws:
                aug = self._chain(orig)
                if is_pil:
                    out = Image.blend(out, aug, float(w))
                else:
                    out = _blend_f32(out.astype(np.float32), aug.astype(np.float32), float(w))
            return out
        base = np.asarray(x) if is_pil else x
        mixed = np.zeros(base.shape, dtype=np.float32)
        for mw in mixing_weights:
            aug = self._chain(x)
            mixed += mw * np.asarray(aug, dtype=np.float32)
        np.clip(mixed, 0, 255.0, out=mixed)
        mixed_u8 = mixed.astype(np.uint8)
        if is_pil:
            return Image.blend(x, Image.fromarray(mixed_u8), float(m))
        return _blend_f32(base.astype(np.float32), mixed_u8.astype(np.float32), float(m))

    def __repr__(self):
        fs = self.__class__.__name__ + f"(alpha={self.alpha}, width={self.width}, depth={self.depth}, ops="
        for op in self.ops:
            fs += f"\n\t{op}"
        return fs + ")"


def augment_and_mix_transform(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                              seed: Optional[int] = None) -> "AugMixAugment":
    """AugMix from ``augmix[-m<int>][-w<int>][-d<int>][-a<float>][-b<0|1>][-mstd<float>]``.

    Args:
        config_str: e.g. ``"augmix-m5-w4-d2"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The AugMix transform.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "AugMix"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else hparams
    head, sections = _split_sections(config_str, kind)
    if head != "augmix":
        raise ValueError(f"AugMix config must start with 'augmix', got {head!r} in {config_str!r}")
    magnitude, width, depth, alpha, blended = 3, 3, -1, 1.0, False
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mstd":
            hparams.setdefault("magnitude_std", _num(float, val, c, config_str, kind))
        elif key == "m":
            magnitude = _num(int, val, c, config_str, kind)
        elif key == "w":
            width = _num(int, val, c, config_str, kind)
        elif key == "d":
            depth = _num(int, val, c, config_str, kind)
        elif key == "a":
            alpha = _num(float, val, c, config_str, kind)
        elif key == "b":
            blended = bool(_num(int, val, c, config_str, kind))  # timm 1.0: 'b0' is off
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: m, w, d, a, b, mstd")
    hparams.setdefault("magnitude_std", float("inf"))  # uniform magnitude unless mstd given
    rng = resolve_rng(rng, seed)
    ops = augmix_ops(magnitude=magnitude, hparams=hparams, rng=rng)
    return AugMixAugment(ops, alpha=alpha, width=width, depth=depth, blended=blended, rng=rng)


class TrivialAugment(_Policy):
    """TrivialAugment (Müller & Hutter 2021) over timm's op set: one op per image, always applied,
    magnitude uniform in [0, magnitude_max].

    Args:
        ops: the ops to draw from.
        rng: the random source (see :func:`resolve_rng`).
        seed: seed of a new source when ``rng`` is not given.
    """

    def __init__(self, ops: Sequence[Any], rng: RngLike = None, seed: Optional[int] = None) -> None:
        self.ops = list(ops)
        self._set_rng(resolve_rng(rng, seed) if (rng is not None or seed is not None) else
                      (self.ops[0].rng if self.ops else RandomSource()))

    def _ops_all(self):
        return self.ops

    def _apply(self, x):
        return self.rng.choice(self.ops)._apply(x)

    def __repr__(self):
        return self.__class__.__name__ + "(ops=" + "".join(f"\n\t{op}" for op in self.ops) + ")"


def trivial_augment_transform(config_str: str = "trivial", hparams: Optional[Dict] = None, rng: RngLike = None,
                              seed: Optional[int] = None) -> "TrivialAugment":
    """TrivialAugment from ``trivial[-mmax<int>][-inc<0|1>]`` (not in timm; flowvision addition).

    Ops: timm's RandAugment set (``inc1``: the increasing variants); magnitude ~ U(0, mmax), mmax=10.

    Args:
        config_str: e.g. ``"trivial"`` or ``"trivial-mmax20-inc1"``.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The TrivialAugment transform.

    Raises:
        ValueError: for a malformed config string.
    """
    kind = "TrivialAugment"
    hparams = dict(_HPARAMS_DEFAULT) if not hparams else dict(hparams)
    head, sections = _split_sections(config_str, kind)
    if head != "trivial":
        raise ValueError(f"TrivialAugment config must start with 'trivial', got {head!r} in {config_str!r}")
    mmax, increasing = int(_LEVEL_DENOM), False
    for c in sections:
        key, val = _key_val(c, config_str, kind)
        if val is None:
            continue
        if key == "mmax":
            mmax = _num(int, val, c, config_str, kind)
        elif key == "inc":
            increasing = bool(_num(int, val, c, config_str, kind))
        else:
            raise ValueError(f"unknown {kind} config section {c!r} in {config_str!r}; known keys: mmax, inc")
    hparams["magnitude_std"] = float("inf")
    hparams["magnitude_max"] = mmax
    names = _RAND_INCREASING_TRANSFORMS if increasing else _RAND_TRANSFORMS
    rng = resolve_rng(rng, seed)
    ops = _share_rng([AugmentOp(n, prob=1.0, magnitude=mmax, hparams=hparams) for n in names], rng)
    return TrivialAugment(ops, rng=rng)


def create_auto_augment(config_str: str, hparams: Optional[Dict] = None, rng: RngLike = None,
                        seed: Optional[int] = None) -> Any:
    """Dispatch on the config prefix like timm's create_transform: rand / augmix / trivial / policy.

    Args:
        config_str: a ``rand-...``, ``augmix-...``, ``trivial...`` or AutoAugment policy config.
        hparams: op hyper-parameters (``translate_const``, ``img_mean``...).
        rng: the random source.
        seed: seed of a new source when ``rng`` is not given.

    Returns:
        The auto-augment transform.

    Raises:
        ValueError: for a malformed config string.
    """
    if not isinstance(config_str, str):
        raise TypeError(f"auto_augment must be a config string, got {type(config_str).__name__}")
    if config_str.startswith("rand"):
        return rand_augment_transform(config_str, hparams, rng=rng, seed=seed)
    if config_str.startswith("augmix"):
        return augment_and_mix_transform(config_str, hparams, rng=rng, seed=seed)
    if config_str.startswith("trivial"):
        return trivial_augment_transform(config_str, hparams, rng=rng, seed=seed)
    return auto_augment_transform(config_str, hparams, rng=rng, seed=seed)
