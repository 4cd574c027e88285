"""The augment ops of :mod:`flowvision.data.auto_augment`: per-op functions, level -> argument tables, the op table.

Each op works on a PIL image or a uint8 HWC / HW numpy array. PIL input reproduces timm 1.0 pixel for pixel; arrays
take exact numpy LUT / colour arithmetic (Pillow's integer and float32 rounding) and ``cv2.warpAffine`` with Pillow's
sampling geometry for the geometric ops (see the public module's docstring).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Sequence, Union

import numpy as np
from PIL import Image, ImageFilter, ImageEnhance

from .._lazy_import import lazy_module
from ._arrays import as_numpy, from_numpy_like, kind_of
from ._random import RngLike, resolve_rng

cv2 = lazy_module("cv2")  # imported on the first OpenCV fast path, not with the package


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
    """Pillow's ``transform(AFFINE)``, byte for byte, in the engine for "L" / "RGB" images (about 4x Pillow's
    bilinear on one thread)."""
    from ..transforms._functional_pil import transform_affine
    return transform_affine(img, m, resample, _pil_fill(img, fill))


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
    from ..transforms._functional_pil import rotate_exact, rotation_matrix
    if isinstance(img, Image.Image):
        return rotate_exact(img, degrees, resample, _pil_fill(img, fill))
    if exact or int(resample) not in _CV2_INTERP:
        pil = Image.fromarray(img)
        return np.asarray(rotate_exact(pil, degrees, resample, _pil_fill(pil, fill)))
    # Pillow's Image.rotate (no expand, centre rotation): special cases, then its matrix
    angle = degrees % 360.0
    h, w = img.shape[:2]
    if angle == 0:
        return img.copy()
    if angle == 180:
        return np.ascontiguousarray(img[::-1, ::-1])
    if angle in (90, 270) and w == h:
        return np.ascontiguousarray(np.rot90(img, 1 if angle == 90 else -1))
    return _warp_np(img, rotation_matrix(w, h, angle), resample, fill)


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
        if img.mode == "RGB" and 0.0 <= factor < math.inf:  # the engine's ImageEnhance.Color, byte for byte
            from ..transforms._functional_pil import enhance_sequence
            return enhance_sequence(img, [("saturation", factor)])
        return ImageEnhance.Color(img).enhance(factor)
    if img.ndim == 2 or img.shape[2] == 1:
        return img.copy()
    if img.shape[2] == 3 and 0.0 <= factor < math.inf:  # the engine's ImageEnhance.Color, byte for byte
        from ..backend import _C
        return _C.color_ops_u8(img, [("saturation", float(factor))])
    if img.shape[2] in (3, 4):  # Pillow's C path
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
