"""numpy kernels for images laid out as ``(..., H, W, C)``.

Every kernel takes an array with an explicit channel axis (the dispatch layer adds one for
2-D images) and may return a non-contiguous view; the dispatch layer (``functional.py`` for
numpy input, ``_functional_tensor.py`` for backend tensors) fixes the final layout.

Numerics follow torchvision's *tensor* path: colour ops compute in float32 and truncate when
casting back to an integer dtype, resize/blur/geometric ops round, float images live in [0, 1].
uint8 images take OpenCV / lookup-table fast paths that give the same numbers.
"""
import functools

import numpy as np

from .._lazy_import import lazy_module

cv2 = lazy_module("cv2")  # imported on the first OpenCV fast path, not with the package

__all__ = []  # private module

_BLOCK = 16  # output rows per band-GEMM block in resize


# ----------------------------------------------------------------------------- helpers
def max_value(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return 1.0
    if dtype == np.bool_:
        return 1
    return int(np.iinfo(dtype).max)


def _is_float(img):
    return img.dtype.kind == "f"


def _work_dtype(img):
    return np.float64 if img.dtype == np.float64 else np.float32


def _cast_out(res, dtype, clip=True):
    """Cast a float result back to ``dtype`` the way torch's ``_cast_squeeze_out`` does (round for ints)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        res = np.rint(res)
        if clip:
            info = np.iinfo(dtype) if dtype.kind != "b" else None
            if info is not None:
                res = np.clip(res, info.min, info.max)
    return res.astype(dtype, copy=False)


def _trunc_cast(res, dtype, bound):
    """torch's ``.clamp(0, bound).to(dtype)``: clamp then truncate toward zero."""
    res = np.clip(res, 0, bound)
    return res.astype(dtype, copy=False)


def _as_images(img):
    """(..., H, W, C) -> (N, H, W, C) view plus the leading shape."""
    lead = img.shape[:-3]
    return img.reshape((-1,) + img.shape[-3:]), lead


def _cv2_ok(img):
    """Can this single image go straight through an OpenCV call? (OpenCV returns None for an empty image.)"""
    return img.ndim == 3 and img.shape[-1] <= 4 and img.dtype in (np.uint8, np.float32) and img.size > 0


_PERM: dict[tuple[int, ...], tuple[int, ...]] = {}


def hwc_to_chw(a):
    """(..., H, W, C) -> (..., C, H, W) view (a cheaper ``np.moveaxis(a, -1, -3)``)."""
    key = (a.ndim, 0)
    perm = _PERM.get(key)
    if perm is None:
        perm = _PERM[key] = tuple(range(a.ndim - 3)) + (a.ndim - 1, a.ndim - 3, a.ndim - 2)
    return a.transpose(perm)


def chw_to_hwc(a):
    """(..., C, H, W) -> (..., H, W, C) view."""
    key = (a.ndim, 1)
    perm = _PERM.get(key)
    if perm is None:
        perm = _PERM[key] = tuple(range(a.ndim - 3)) + (a.ndim - 2, a.ndim - 1, a.ndim - 3)
    return a.transpose(perm)


_CV2_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)


def _pixel_contiguous(img):
    c = img.shape[-1]
    return img.strides[-1] == img.itemsize and img.strides[-2] == img.itemsize * c


def is_planar(img):
    """An (..., H, W, C) view of a C-contiguous (..., C, H, W) buffer (a backend tensor seen channels-last)."""
    return img.ndim >= 3 and not img.flags.c_contiguous and hwc_to_chw(img).flags.c_contiguous


def to_planar(img):
    """(..., H, W, C) -> C-contiguous (..., C, H, W); OpenCV's split when the pixels are interleaved."""
    planes = hwc_to_chw(img)
    if planes.flags.c_contiguous:
        return planes
    c = img.shape[-1]
    if img.ndim == 3 and 1 < c <= 4 and img.dtype in _CV2_DTYPES and _pixel_contiguous(img):
        out = np.empty((c,) + img.shape[:2], img.dtype)
        cv2.split(img, [out[i] for i in range(c)])
        return out
    return np.ascontiguousarray(planes)


def to_interleaved(img):
    """(..., H, W, C) -> C-contiguous (..., H, W, C); OpenCV's merge when the input is planar."""
    if img.flags.c_contiguous:
        return img
    c = img.shape[-1]
    planes = hwc_to_chw(img)
    if img.ndim == 3 and 1 < c <= 4 and img.dtype in _CV2_DTYPES and planes.flags.c_contiguous:
        return cv2.merge([planes[i] for i in range(c)])
    return np.ascontiguousarray(img)


def _same_layout(out, like):
    """Give ``out`` (interleaved) the layout of ``like`` (planar stays planar: no transposes downstream)."""
    if is_planar(like) and out.ndim == like.ndim:
        return chw_to_hwc(to_planar(out))
    return out


def _per_image(fn, img, *args, **kwargs):
    """Apply an (H, W, C) kernel to every image of a batch."""
    if img.ndim == 3:
        return fn(img, *args, **kwargs)
    flat, lead = _as_images(img)
    outs = [fn(x, *args, **kwargs) for x in flat]
    out = np.stack(outs)
    return out.reshape(lead + out.shape[1:])


def _cv2_image(fn, img):
    """Run ``fn`` (an OpenCV call) on an (H, W, C) image, restoring the channel axis it drops for C == 1;
    the result keeps the input's layout (interleaved or planar)."""
    src = to_interleaved(img)
    out = fn(src)
    if out.ndim == 2:
        out = out[:, :, None]
    return _same_layout(out, img)


def _lut(img, table):
    """Apply a 256-entry lookup table (uint8 -> dtype) to a uint8 image."""
    table = np.asarray(table)
    if table.dtype == np.uint8 and table.ndim == 1 and img.dtype == np.uint8:
        if img.flags.c_contiguous or is_planar(img):  # elementwise: any contiguous buffer will do
            buf = img if img.flags.c_contiguous else hwc_to_chw(img)
            out = cv2.LUT(buf.reshape(-1, buf.shape[-1]), table).reshape(buf.shape)
            return out if img.flags.c_contiguous else chw_to_hwc(out)
    if table.ndim == 2:  # one table per channel: table is (256, C)
        return table[img, np.arange(img.shape[-1])]
    return table[img]


def get_dimensions(img):
    return [img.shape[-1], img.shape[-3], img.shape[-2]]


# ----------------------------------------------------------------------------- dtype
def convert_image_dtype(img, dtype):
    dtype = np.dtype(dtype)
    if img.dtype == dtype:
        return img
    if _is_float(img):
        if dtype.kind == "f":
            return img.astype(dtype)
        if (img.dtype == np.float32 and dtype in (np.int32, np.int64)) or (
            img.dtype == np.float64 and dtype == np.int64
        ):
            raise RuntimeError(f"The cast from {img.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        res = img * img.dtype.type(max_value(dtype) + 1.0 - eps)
        return res.astype(dtype)
    in_max = max_value(img.dtype)
    if dtype.kind == "f":
        return img.astype(dtype) / dtype.type(in_max)
    out_max = max_value(dtype)
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return (img // factor).astype(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return img.astype(dtype) * dtype.type(factor)


def to_chw_float(img, scale, bias=None):
    """(H, W, C) array -> contiguous (C, H, W) float32 ``img * scale[c] + bias[c]`` (ToTensor / Normalize)."""
    h, w, c = img.shape
    out = np.empty((c, h, w), np.float32)
    planes = to_planar(img)
    for i, p in enumerate(planes):
        np.multiply(p, np.float32(scale[i]), out=out[i], casting="unsafe")
        if bias is not None and bias[i] != 0:
            out[i] += np.float32(bias[i])
    return out


# ----------------------------------------------------------------------------- flips / crop / pad
def hflip(img):
    if img.flags.c_contiguous and _cv2_ok(img):
        return _cv2_image(lambda x: cv2.flip(x, 1), img)  # a contiguous copy at memcpy speed
    return img[..., :, ::-1, :]


def vflip(img):
    if img.flags.c_contiguous and _cv2_ok(img):
        return _cv2_image(lambda x: cv2.flip(x, 0), img)
    return img[..., ::-1, :, :]


def crop(img, top, left, height, width):
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        return pad(img[..., max(top, 0):max(bottom, 0), max(left, 0):max(right, 0), :], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right, :]


_NP_PAD = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}
# OpenCV's cv::BorderTypes values (fixed in its API); reading cv2.BORDER_* here would import OpenCV with the module
_CV2_PAD = {"constant": 0, "edge": 1, "reflect": 4, "symmetric": 2}  # CONSTANT, REPLICATE, REFLECT_101, REFLECT


def pad(img, padding, fill=0, padding_mode="constant"):
    """``padding`` is [left, top, right, bottom]; negative values crop (like torch.nn.functional.pad)."""
    left, top, right, bottom = (int(p) for p in padding)
    if min(left, top, right, bottom) < 0:
        h, w = img.shape[-3], img.shape[-2]
        img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0), :]
        left, top, right, bottom = max(left, 0), max(top, 0), max(right, 0), max(bottom, 0)
    if left == top == right == bottom == 0:
        return img
    if padding_mode == "reflect":
        h, w = img.shape[-3], img.shape[-2]
        if max(top, bottom) >= h or max(left, right) >= w:
            raise ValueError(
                f"Padding size should be less than the corresponding input dimension for reflect padding, "
                f"got padding {padding} for an image of size {(h, w)}"
            )
    if fill is None:
        fill = 0
    c = img.shape[-1]
    if _cv2_ok(img) and (padding_mode != "constant" or np.ndim(fill) == 0 or len(fill) == c):
        value = fill if np.ndim(fill) == 0 else tuple(float(f) for f in fill)
        if np.ndim(value) == 0:
            value = (float(value),) * 4
        return _cv2_image(
            lambda x: cv2.copyMakeBorder(x, top, bottom, left, right, _CV2_PAD[padding_mode], value=value), img
        )
    widths = [(0, 0)] * (img.ndim - 3) + [(top, bottom), (left, right), (0, 0)]
    if padding_mode == "constant":
        if np.ndim(fill) == 0:
            return np.pad(img, widths, mode="constant", constant_values=np.asarray(fill).astype(img.dtype))
        out = np.empty(img.shape[:-3] + (img.shape[-3] + top + bottom, img.shape[-2] + left + right, c), img.dtype)
        out[...] = np.asarray(fill).astype(img.dtype)
        out[..., top:top + img.shape[-3], left:left + img.shape[-2], :] = img
        return out
    return np.pad(img, widths, mode=_NP_PAD[padding_mode])


# ----------------------------------------------------------------------------- resize
def _filter_bilinear(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _filter_bicubic(x, a):
    x = np.abs(x)
    return np.where(
        x < 1.0,
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0,
        np.where(x < 2.0, (((x - 5.0) * x + 8.0) * x - 4.0) * a, 0.0),
    )


@functools.lru_cache(maxsize=512)
def _resize_matrix(in_size, out_size, mode, antialias):
    """Dense (out, in) interpolation matrix with torch's ``interpolate`` weights (align_corners=False)."""
    scale = in_size / out_size
    i = np.arange(out_size, dtype=np.float64)
    mat = np.zeros((out_size, in_size), np.float64)
    rows = np.arange(out_size)
    if antialias:
        interp = 2.0 if mode == "bilinear" else 4.0
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        center = scale * (i + 0.5)
        xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
        xmax = np.minimum((center + support + 0.5).astype(np.int64), in_size)
        k = np.arange(int((xmax - xmin).max()))
        x = (k[None, :] + xmin[:, None] - center[:, None] + 0.5) * invscale
        w = _filter_bilinear(x) if mode == "bilinear" else _filter_bicubic(x, -0.5)
        w[k[None, :] >= (xmax - xmin)[:, None]] = 0.0
        total = w.sum(1, keepdims=True)
        w = np.divide(w, total, out=np.zeros_like(w), where=total != 0)
        # each row's taps are distinct columns, so writing them is adding them to zeros (np.add.at is ~1 ms here,
        # and RandomResizedCrop's random sizes rebuild this matrix on nearly every call)
        valid = k[None, :] < (xmax - xmin)[:, None]
        mat[np.broadcast_to(rows[:, None], valid.shape)[valid], (xmin[:, None] + k[None, :])[valid]] = w[valid]
        return mat
    src = (i + 0.5) * scale - 0.5
    if mode == "bilinear":
        src = np.maximum(src, 0.0)
        i0 = np.floor(src).astype(np.int64)
        i0 = np.minimum(i0, in_size - 1)
        i1 = np.minimum(i0 + 1, in_size - 1)
        lam = src - i0
        np.add.at(mat, (rows, i0), 1.0 - lam)
        np.add.at(mat, (rows, i1), lam)
        return mat
    # bicubic, A = -0.75, indices clamped to the border
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    for k in range(-1, 3):
        wk = _filter_bicubic(t - k, -0.75)
        np.add.at(mat, (rows, np.clip(i0 + k, 0, in_size - 1)), wk)
    return mat


@functools.lru_cache(maxsize=512)
def _resize_blocks(in_size, out_size, mode, antialias, transposed, dtype):
    """Split the banded interpolation matrix into dense blocks of ``_BLOCK`` output rows."""
    mat = _resize_matrix(in_size, out_size, mode, antialias)
    blocks = []
    for o0 in range(0, out_size, _BLOCK):
        o1 = min(o0 + _BLOCK, out_size)
        nz = np.nonzero(mat[o0:o1].any(0))[0]
        lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, 1)
        w = mat[o0:o1, lo:hi].astype(dtype)
        blocks.append((o0, o1, lo, hi, np.ascontiguousarray(w.T) if transposed else w))
    return blocks


def _nearest_index(in_size, out_size, exact):
    scale = np.float32(in_size) / np.float32(out_size)
    i = np.arange(out_size, dtype=np.float32)
    src = np.floor(((i + np.float32(0.5)) if exact else i) * scale).astype(np.int64)
    return np.minimum(src, in_size - 1)


def resize(img, size, interpolation="bilinear", antialias=True, round_between=False):
    """Resize (..., H, W, C) to ``size`` = [h, w] with torch ``interpolate`` semantics.

    Integer images are computed in float32 and rounded once (torchvision v1's tensor path).
    ``round_between=True`` rounds to the integer dtype after the horizontal pass too, which is what
    torch's native uint8 kernel (used by torchvision v2 and by PIL) does.
    """
    oh, ow = int(size[0]), int(size[1])
    h, w = img.shape[-3], img.shape[-2]
    if interpolation in ("nearest", "nearest-exact"):
        exact = interpolation == "nearest-exact"
        ys = _nearest_index(h, oh, exact)
        xs = _nearest_index(w, ow, exact)
        return img[..., ys[:, None], xs[None, :], :]
    if interpolation not in ("bilinear", "bicubic"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with array/tensor input")
    antialias = bool(antialias)
    wdt = _work_dtype(img)
    lead, c = img.shape[:-3], img.shape[-1]
    # planes: (P, H, W) contiguous float, P = N*C
    pv = hwc_to_chw(img)
    if pv.flags.c_contiguous or (img.ndim == 3 and 1 < c <= 4 and img.dtype in _CV2_DTYPES
                                 and _pixel_contiguous(img)):
        planes = to_planar(img).reshape((-1, h, w)).astype(wdt, copy=False)
    else:  # strided view of a planar buffer (a crop of a tensor): gather and convert in one pass
        planes = np.asarray(pv, dtype=wdt, order="C").reshape((-1, h, w))
    p = planes.shape[0]
    if ow != w:
        tmp = np.empty((p * h, ow), wdt)
        flat = planes.reshape(p * h, w)
        for o0, o1, lo, hi, wt in _resize_blocks(w, ow, interpolation, antialias, True, wdt):
            np.matmul(flat[:, lo:hi], wt, out=tmp[:, o0:o1])
        planes = tmp.reshape(p, h, ow)
        if round_between and oh != h and img.dtype.kind in "iub":
            planes += wdt(0.5)  # fixed-point kernels round halves up
            np.floor(planes, out=planes)
            np.clip(planes, 0, max_value(img.dtype), out=planes)
    if oh != h:
        tmp = np.empty((p, oh, ow), wdt)
        for o0, o1, lo, hi, wt in _resize_blocks(h, oh, interpolation, antialias, False, wdt):
            np.matmul(wt, planes[:, lo:hi], out=tmp[:, o0:o1])
        planes = tmp
    if img.dtype.kind in "iub":
        if round_between:
            planes = np.floor(planes + wdt(0.5))
        planes = _cast_out(planes, img.dtype)
    elif planes.dtype != img.dtype:
        planes = planes.astype(img.dtype)
    out = planes.reshape(lead + (c, oh, ow))
    return chw_to_hwc(out)


# ----------------------------------------------------------------------------- colour
_GRAY = (0.2989, 0.587, 0.114)


def _gray_float(img):
    """0.2989 R + 0.587 G + 0.114 B in the working float dtype, shape (..., H, W)."""
    wdt = _work_dtype(img)
    if img.ndim == 3 and img.dtype in (np.uint8, np.float32) and img.flags.c_contiguous:
        f = img if img.dtype == np.float32 else img.astype(np.float32)
        return cv2.transform(f, np.array([_GRAY], np.float32))
    r, g, b = (img[..., i].astype(wdt) for i in range(3))
    return wdt(_GRAY[0]) * r + wdt(_GRAY[1]) * g + wdt(_GRAY[2]) * b


def rgb_to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-1] == 3:
        g = _gray_float(img)
        if img.dtype.kind != "f":
            g = g.astype(img.dtype)
        elif g.dtype != img.dtype:
            g = g.astype(img.dtype)
        g = g[..., None]
    else:
        g = img.copy(order="K")
    if num_output_channels == 3:
        return np.broadcast_to(g, g.shape[:-1] + (3,)) if g.shape[-1] == 1 else g
    return g


def _blend(img1, img2, ratio):
    """torch's ``_blend``: ``(ratio*img1 + (1-ratio)*img2).clamp(0, bound).to(dtype)`` (truncating)."""
    ratio = float(ratio)
    bound = max_value(img1.dtype)
    wdt = _work_dtype(img1)
    if img1.dtype == np.uint8 and isinstance(img2, np.ndarray) and img2.shape == img1.shape:
        # exactly torch's float32 sequence: r*x, (1-r)*y, add, clamp, truncate (no FMA, so results that are
        # integers in exact arithmetic land on the same side as torch's)
        res = img1.astype(np.float32)
        res *= np.float32(ratio)
        tmp = img2.astype(np.float32)
        tmp *= np.float32(1.0 - ratio)
        res += tmp
        np.clip(res, 0, 255, out=res)
        return res.astype(np.uint8)
    res = wdt(ratio) * img1.astype(wdt, copy=False) + wdt(1.0 - ratio) * np.asarray(img2).astype(wdt, copy=False)
    return _trunc_cast(res, img1.dtype, bound)


def _blend_scalar_u8(img, ratio, other):
    """``_blend`` against a scalar for uint8: a 256-entry LUT computed in float32."""
    x = np.arange(256, dtype=np.float32)
    table = np.float32(ratio) * x + np.float32(1.0 - ratio) * np.float32(other)
    table = np.clip(table, 0, 255).astype(np.uint8)
    return _lut(img, table)


def adjust_brightness(img, brightness_factor):
    if img.dtype == np.uint8:
        return _blend_scalar_u8(img, brightness_factor, 0.0)
    return _blend(img, np.zeros((), img.dtype), brightness_factor)


def adjust_contrast(img, contrast_factor):
    c = img.shape[-1]
    wdt = img.dtype if _is_float(img) else np.float32
    if c == 3:
        g = _gray_float(img)
        if img.dtype.kind != "f":
            g = g.astype(img.dtype)
        mean_src = g.astype(wdt, copy=False)
    else:
        mean_src = img.astype(wdt, copy=False)
    if img.ndim == 3:
        mean = np.float32(mean_src.mean(dtype=np.float64)) if wdt == np.float32 else mean_src.mean()
        if img.dtype == np.uint8:
            return _blend_scalar_u8(img, contrast_factor, mean)
        return _blend(img, np.asarray(mean, wdt), contrast_factor)
    axes = tuple(range(img.ndim - 3, mean_src.ndim))
    mean = mean_src.mean(axis=axes, keepdims=True).astype(wdt)
    if mean_src.ndim == img.ndim - 1:
        mean = mean[..., None]
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if img.shape[-1] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img, 1), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    maxc = img.max(-1)
    minc = img.min(-1)
    eqc = maxc == minc
    cr = maxc - minc
    ones = np.ones_like(maxc)
    s = cr / np.where(eqc, ones, maxc)
    crd = np.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / crd, (maxc - g) / crd, (maxc - b) / crd
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = np.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return h, s, maxc


def _hsv2rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int32) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    r = np.choose(i, [v, q, p, p, t, v])
    g = np.choose(i, [t, v, v, q, p, p])
    b = np.choose(i, [p, p, t, v, v, q])
    return np.stack([r, g, b], -1).astype(v.dtype, copy=False)


def adjust_hue(img, hue_factor):
    if img.shape[-1] == 1:
        return img
    orig = img.dtype
    f = convert_image_dtype(img, np.float32)  # torchvision computes hue in float32 for every dtype
    if f.dtype == np.float32 and _cv2_ok(f):
        hsv = cv2.cvtColor(to_interleaved(f), cv2.COLOR_RGB2HSV)  # H in degrees
        h = hsv[..., 0] * np.float32(1.0 / 360.0)
        h += np.float32(hue_factor)
        h -= np.floor(h)  # torch's ``% 1.0`` (np.mod is several times slower)
        hsv[..., 0] = h * np.float32(360.0)
        hsv[..., 0][hsv[..., 0] >= 360.0] = 0.0
        out = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
        np.clip(out, 0.0, 1.0, out=out)
        out = _same_layout(out, img)
    else:
        h, s, v = _rgb2hsv(f)
        h = np.mod(h + f.dtype.type(hue_factor), f.dtype.type(1.0))
        out = _hsv2rgb(h, s, v)
    return convert_image_dtype(out, orig) if not _is_float(img) else out.astype(orig, copy=False)


def adjust_gamma(img, gamma, gain=1.0):
    if img.dtype == np.uint8:
        x = np.arange(256, dtype=np.float32) / np.float32(255)
        table = np.clip(np.float32(gain) * np.power(x, np.float32(gamma)), 0, 1)
        return _lut(img, convert_image_dtype(table, np.uint8))
    dtype = img.dtype
    res = img if _is_float(img) else convert_image_dtype(img, np.float32)
    res = np.clip(res.dtype.type(gain) * np.power(res, res.dtype.type(gamma)), 0, 1)
    return convert_image_dtype(res, dtype)


def invert(img):
    if img.dtype == np.uint8 and _cv2_ok(img):
        return _cv2_image(cv2.bitwise_not, img)
    if _is_float(img):
        return img.dtype.type(1.0) - img
    return (max_value(img.dtype) - img).astype(img.dtype)


def posterize(img, bits):
    mask = np.uint8((0xFF << (8 - int(bits))) & 0xFF)
    return np.bitwise_and(img, mask)


def solarize(img, threshold):
    if img.dtype == np.uint8:
        x = np.arange(256)
        table = np.where(x >= threshold, 255 - x, x).astype(np.uint8)
        return _lut(img, table)
    return np.where(img >= threshold, invert(img), img)


def _blurred_degenerate(img):
    kernel = np.ones((3, 3), np.float32)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()

    def one(x):
        if _cv2_ok(x):
            out = _cv2_image(lambda a: cv2.filter2D(a, -1, kernel, borderType=cv2.BORDER_REPLICATE), x)
        else:
            wdt = _work_dtype(x)
            f = x.astype(wdt)
            out = np.zeros_like(f)
            hh, ww = x.shape[0], x.shape[1]
            for dy in range(3):
                for dx in range(3):
                    out[1:-1, 1:-1] += kernel[dy, dx] * f[dy:hh - 2 + dy, dx:ww - 2 + dx]
            out = _cast_out(out, x.dtype) if x.dtype.kind != "f" else out.astype(x.dtype)
        res = x.copy(order="K")
        res[1:-1, 1:-1] = out[1:-1, 1:-1]
        return res

    return _per_image(one, img)


def adjust_sharpness(img, sharpness_factor):
    if img.shape[-2] <= 2 or img.shape[-3] <= 2:
        return img
    return _blend(img, _blurred_degenerate(img), sharpness_factor)


def autocontrast(img):
    bound = max_value(img.dtype)
    wdt = img.dtype.type if _is_float(img) else np.float32
    axes = (-3, -2)
    minimum = img.min(axis=axes, keepdims=True).astype(wdt)
    maximum = img.max(axis=axes, keepdims=True).astype(wdt)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = wdt(bound) / (maximum - minimum)
    bad = ~np.isfinite(scale)
    minimum[bad] = 0
    scale[bad] = 1
    if img.dtype == np.uint8 and img.ndim == 3:
        x = np.arange(256, dtype=np.float32)[:, None]
        table = _trunc_cast((x - minimum[0, 0][None, :]) * scale[0, 0][None, :], np.uint8, 255)
        return _lut(img, table)
    return _trunc_cast((img.astype(wdt) - minimum) * scale, img.dtype, bound)


def _equalize_channel(ch):
    hist = np.bincount(ch.reshape(-1), minlength=256).astype(np.int64)
    nonzero = hist[hist != 0]
    step = int(nonzero[:-1].sum()) // 255
    if step == 0:
        return None
    lut = (np.cumsum(hist) + step // 2) // step
    lut = np.concatenate([[0], lut[:-1]]).clip(0, 255).astype(np.uint8)
    return lut


def equalize(img):
    flat, lead = _as_images(img)
    out = np.empty_like(flat)
    for n in range(flat.shape[0]):
        for c in range(flat.shape[-1]):
            ch = flat[n, :, :, c]
            lut = _equalize_channel(ch)
            out[n, :, :, c] = ch if lut is None else lut[ch]
    return out.reshape(img.shape)


# ----------------------------------------------------------------------------- filters
def _gaussian_kernel1d(ksize, sigma, dtype):
    half = (ksize - 1) * 0.5
    x = np.linspace(-half, half, ksize).astype(dtype)
    pdf = np.exp(-0.5 * (x / dtype(sigma)) ** 2)
    return (pdf / pdf.sum()).astype(dtype)


def gaussian_blur(img, kernel_size, sigma):
    wdt = _work_dtype(img)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0], wdt)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1], wdt)
    h, w = img.shape[-3], img.shape[-2]
    if kernel_size[0] // 2 >= w or kernel_size[1] // 2 >= h:
        raise ValueError(
            f"kernel_size {list(kernel_size)} is too large for an image of size {(h, w)}: "
            "reflect padding needs kernel_size // 2 < size"
        )

    def one(x):
        f = x.astype(wdt, copy=False)
        if f.shape[-1] <= 4 and wdt == np.float32:
            out = _cv2_image(lambda a: cv2.sepFilter2D(a, -1, kx, ky, borderType=cv2.BORDER_REFLECT_101), f)
        else:
            px, py = kernel_size[0] // 2, kernel_size[1] // 2
            p = np.pad(f, ((py, py), (px, px), (0, 0)), mode="reflect")
            tmp = sum(kx[i] * p[:, i:i + w] for i in range(kernel_size[0]))
            out = sum(ky[i] * tmp[i:i + h] for i in range(kernel_size[1]))
        return _cast_out(out, x.dtype) if x.dtype.kind != "f" else out.astype(x.dtype, copy=False)

    return _per_image(one, img)


# ----------------------------------------------------------------------------- geometry
def _fill_vector(fill, c, dtype):
    if fill is None:
        return None
    f = np.asarray(fill, dtype=np.float64).reshape(-1)
    if f.size == 1:
        f = np.repeat(f, c)
    return f.astype(dtype)


def grid_sample(img, gx, gy, mode="bilinear", fill=None):
    """Sample (..., H, W, C) at pixel coordinates (gx, gy) of shape (oh, ow) like torch ``grid_sample``
    (align_corners=False, zero padding), then blend ``fill`` in where the sample left the image
    (torchvision's mask trick)."""
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{mode}' is unsupported with array/tensor input")
    h, w, c = img.shape[-3], img.shape[-2], img.shape[-1]
    wdt = gx.dtype.type
    f = img if img.dtype == gx.dtype else img.astype(gx.dtype)
    fillv = _fill_vector(fill, c, gx.dtype)
    if mode == "nearest":
        ix = np.rint(gx).astype(np.int64)
        iy = np.rint(gy).astype(np.int64)
        valid = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        out = f[..., np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1), :] * valid[..., None].astype(gx.dtype)
        if fillv is not None:
            out = np.where(valid[..., None], out, fillv)
    else:
        x0 = np.floor(gx)
        y0 = np.floor(gy)
        ax = gx - x0
        ay = gy - y0
        x0 = x0.astype(np.int64)
        y0 = y0.astype(np.int64)
        out = 0
        mask = 0
        for dy, wy in ((0, wdt(1) - ay), (1, ay)):
            for dx, wx in ((0, wdt(1) - ax), (1, ax)):
                xi, yi = x0 + dx, y0 + dy
                valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
                wgt = (wy * wx) * valid
                out = out + f[..., np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1), :] * wgt[..., None]
                mask = mask + wgt
        if fillv is not None:
            m = mask[..., None]
            out = out * m + (wdt(1) - m) * fillv
    if img.dtype.kind in "iub":
        return _cast_out(out, img.dtype)
    return out.astype(img.dtype, copy=False)


def _affine_grid(matrix, w, h, ow, oh, dtype):
    """Source pixel coordinates for torchvision's centred inverse affine ``matrix`` (6 floats)."""
    theta = np.asarray(matrix, dtype=dtype).reshape(2, 3)
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 + 0.5 - 1, ow).astype(dtype)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 + 0.5 - 1, oh).astype(dtype)
    rt = theta / np.array([[0.5 * w], [0.5 * h]], dtype=dtype)
    gx = rt[0, 0] * xs[None, :] + rt[0, 1] * ys[:, None] + rt[0, 2]
    gy = rt[1, 0] * xs[None, :] + rt[1, 1] * ys[:, None] + rt[1, 2]
    return _unnormalize(gx, w), _unnormalize(gy, h)


def _unnormalize(g, size):
    one = g.dtype.type(1)
    return ((g + one) * g.dtype.type(size) - one) / g.dtype.type(2)


def _grid_dtype(img):
    return np.float64 if img.dtype == np.float64 else np.float32


def affine(img, matrix, interpolation="nearest", fill=None):
    h, w = img.shape[-3], img.shape[-2]
    gx, gy = _affine_grid(matrix, w, h, w, h, _grid_dtype(img))
    return grid_sample(img, gx, gy, interpolation, fill)


def compute_affine_output_size(matrix, w, h):
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, -0.5 * h, 1.0]], np.float32)
    theta = np.asarray(matrix, np.float32).reshape(2, 3)
    new = pts @ theta.T
    mn = new.min(0) + np.array([w * 0.5, h * 0.5], np.float32)
    mx = new.max(0) + np.array([w * 0.5, h * 0.5], np.float32)
    tol = np.float32(1e-4)
    cmax = np.ceil(np.trunc(mx / tol) * tol)
    cmin = np.floor(np.trunc(mn / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def rotate(img, matrix, interpolation="nearest", expand=False, fill=None):
    h, w = img.shape[-3], img.shape[-2]
    ow, oh = compute_affine_output_size(matrix, w, h) if expand else (w, h)
    gx, gy = _affine_grid(matrix, w, h, ow, oh, _grid_dtype(img))
    return grid_sample(img, gx, gy, interpolation, fill)


def perspective(img, coeffs, interpolation="bilinear", fill=None):
    h, w = img.shape[-3], img.shape[-2]
    dt = _grid_dtype(img)
    c = np.asarray(coeffs, dtype=dt)
    xs = np.linspace(0.5, w + 0.5 - 1.0, w).astype(dt)[None, :]
    ys = np.linspace(0.5, h + 0.5 - 1.0, h).astype(dt)[:, None]
    # same operation order as torchvision's _perspective_grid (theta rescaled first, then x*a + y*b + c)
    t1 = c[:6].reshape(2, 3) / np.array([[0.5 * w], [0.5 * h]], dtype=dt)
    den = xs * c[6] + ys * c[7] + dt(1.0)
    gx = (xs * t1[0, 0] + ys * t1[0, 1] + t1[0, 2]) / den - dt(1.0)
    gy = (xs * t1[1, 0] + ys * t1[1, 1] + t1[1, 2]) / den - dt(1.0)
    return grid_sample(img, _unnormalize(gx, w), _unnormalize(gy, h), interpolation, fill)


def elastic_transform(img, displacement, interpolation="bilinear", fill=None):
    """``displacement`` is (1, H, W, 2) in normalised [-1, 1] grid units, like torchvision's."""
    h, w = img.shape[-3], img.shape[-2]
    dt = _grid_dtype(img)
    gxs = np.linspace((-w + 1) / w, (w - 1) / w, w).astype(np.float32)
    gys = np.linspace((-h + 1) / h, (h - 1) / h, h).astype(np.float32)
    d = np.asarray(displacement, dtype=np.float32)[0]
    gx = (gxs[None, :] + d[..., 0]).astype(dt)
    gy = (gys[:, None] + d[..., 1]).astype(dt)
    return grid_sample(img, _unnormalize(gx, w), _unnormalize(gy, h), interpolation, fill)


# ----------------------------------------------------------------------------- misc
def normalize(img, mean, std, inplace=False):
    dtype = img.dtype
    mean = np.asarray(mean, dtype=dtype).reshape(-1)
    std = np.asarray(std, dtype=dtype).reshape(-1)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    out = img if inplace else img.copy(order="K")
    np.subtract(out, mean, out=out)
    np.divide(out, std, out=out)
    return out


def erase(img, i, j, h, w, v, inplace=False):
    out = img if inplace else img.copy(order="K")
    out[..., i:i + h, j:j + w, :] = v
    return out


def linear_transformation(flat, matrix, mean_vector):
    return (flat - mean_vector) @ matrix
