"""PIL kernels: thin wrappers over Pillow with torchvision's PIL-path semantics."""
import functools
import math
import numbers

import numpy as np
from PIL import Image, ImageEnhance, ImageOps


def _is_pil_image(img):
    return isinstance(img, Image.Image)


def _check(img):
    if not _is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img):
    _check(img)
    w, h = img.size
    return [len(img.getbands()), h, w]


def get_image_size(img):
    _check(img)
    return list(img.size)


def get_image_num_channels(img):
    _check(img)
    return len(img.getbands())


def hflip(img):
    _check(img)
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    _check(img)
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img, factor):
    _check(img)
    # "L" / "RGB": ImageEnhance's blend with a constant image, as one table per band (the augmentation ops' kernel)
    from ..data._augment_ops import brightness
    return brightness(img, factor)


def adjust_contrast(img, factor):
    _check(img)
    from ..data._augment_ops import contrast
    return contrast(img, factor)


def adjust_saturation(img, factor):
    _check(img)
    return ImageEnhance.Color(img).enhance(factor)


_ENHANCE_OPS = {"brightness": adjust_brightness, "contrast": adjust_contrast, "saturation": adjust_saturation}


def enhance_sequence(img, ops):
    """``ops`` = [(name, factor), ...] (brightness, contrast, saturation) applied in order, byte for byte what
    torchvision's PIL path (ImageEnhance) gives. An "RGB" image is read in place and adjusted in one engine call
    (no intermediate PIL images); other modes, or a Pillow without Arrow export, go op by op."""
    _check(img)
    capsule = _arrow_export(img) if img.mode == "RGB" and ops else None
    if capsule is not None:
        from ..backend import _C

        out = _C.color_ops_u8_arrow(capsule, img.height, img.width, [(n, float(f)) for n, f in ops])
        return Image.frombytes("RGB", img.size, out, "raw", "RGBX")
    for name, factor in ops:
        img = _ENHANCE_OPS[name](img, factor)
    return img


def adjust_sharpness(img, factor):
    _check(img)
    return ImageEnhance.Sharpness(img).enhance(factor)


def adjust_hue(img, hue_factor):
    _check(img)
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    shift = np.uint8(np.int32(hue_factor * 255) & 0xFF)
    lut = ((np.arange(256) + int(shift)) & 0xFF).astype(np.uint8)
    h = h.point(lut.tolist())
    return Image.merge("HSV", (h, s, v)).convert(mode)


def adjust_gamma(img, gamma, gain=1.0):
    _check(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    mode = img.mode
    img = img.convert("RGB")
    x = np.arange(256) / 255.0
    table = ((255 + 1 - 1e-3) * gain * np.power(x, gamma)).astype(np.int64).tolist() * 3
    return img.point(table).convert(mode)


def parse_fill(fill, img, name="fillcolor"):
    c = get_image_num_channels(img)
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and c > 1:
        fill = tuple([fill] * c)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = tuple(fill) * c
        elif len(fill) != c:
            raise ValueError(
                "The number of elements in 'fill' does not match the number of channels of the image "
                f"({len(fill)} != {c})"
            )
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    """``padding`` is normalised by the caller to [left, top, right, bottom]."""
    _check(img)
    left, top, right, bottom = padding
    if padding_mode == "constant":
        opts = parse_fill(fill, img, name="fill")
        palette = img.getpalette() if img.mode == "P" else None
        out = ImageOps.expand(img, border=(left, top, right, bottom), **opts)
        if palette is not None:
            out.putpalette(palette)
        return out
    if min(padding) < 0:
        cl, ct, cr, cb = (max(-p, 0) for p in padding)
        img = img.crop((cl, ct, img.width - cr, img.height - cb))
        left, top, right, bottom = (max(p, 0) for p in padding)
    palette = img.getpalette() if img.mode == "P" else None
    arr = np.asarray(img)
    widths = [(top, bottom), (left, right)] + ([(0, 0)] if arr.ndim == 3 else [])
    out = Image.fromarray(np.pad(arr, widths, mode=padding_mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def crop(img, top, left, height, width):
    _check(img)
    return img.crop((left, top, left + width, top + height))


# Pillow's antialiased filters by their integer constants (NEAREST is an affine map in Pillow, not a resample)
_RESAMPLE_FILTERS = {Image.Resampling.BILINEAR: "bilinear", Image.Resampling.BICUBIC: "bicubic",
                     Image.Resampling.LANCZOS: "lanczos", Image.Resampling.BOX: "box",
                     Image.Resampling.HAMMING: "hamming"}

# How a Pillow orders the two passes of a resize that changes both axes. Each pass rounds to bytes, so the order
# changes output bytes. Pillow up to 12 always resamples across first; Pillow 13 resamples down the columns first
# when the height shrinks by more than twice as many pixels as the width does.
_PASS_ORDER_RULES = {
    "across first": lambda h, w, oh, ow: False,
    "columns first when the height shrinks more": lambda h, w, oh, ow: oh < h and h - oh > 2 * (w - ow),
}


@functools.lru_cache(maxsize=None)
def _pass_order_rule():
    """The rule that reproduces the installed Pillow's bytes on probe resizes on both sides of each rule's boundary,
    or None (then every resize is left to Pillow)."""
    from ..backend import _C

    rng = np.random.default_rng(0)
    probes = [(40, 30, 30, 20), (40, 30, 18, 26), (30, 40, 20, 30), (24, 60, 10, 50), (60, 24, 50, 10),
              (33, 17, 20, 40)]
    found = []
    for name, rule in _PASS_ORDER_RULES.items():
        ok = True
        for h, w, oh, ow in probes:
            a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            ref = np.asarray(Image.fromarray(a).resize((ow, oh), Image.Resampling.BILINEAR))
            ok &= np.array_equal(_C.resample_u8(a, [oh, ow], "bilinear", rule(h, w, oh, ow)), ref)
        if ok:
            found.append(rule)
    return found[0] if len(found) == 1 else None


def resize(img, size, interpolation=Image.BILINEAR):
    """``size`` is [h, w]. Byte for byte Pillow's result; "L" and "RGB" images with an antialiasing filter are
    resampled by the engine's integer kernel (Pillow's arithmetic, vectorised and threaded), the rest by Pillow."""
    _check(img)
    oh, ow = int(size[0]), int(size[1])
    filt = _RESAMPLE_FILTERS.get(interpolation)
    if filt is not None and img.mode in ("L", "RGB") and (oh, ow) != (img.height, img.width):
        rule = _pass_order_rule()
        if rule is not None:
            return _resample(img, oh, ow, filt, rule(img.height, img.width, oh, ow))
    return img.resize((ow, oh), interpolation)


def _resample(img, oh, ow, filt, vertical_first):
    """The engine's resample of an "L" or "RGB" image, read in place through Pillow's Arrow export where Pillow
    has one (np.asarray copies the image through Pillow's raw encoder: slower than the resample itself)."""
    from ..backend import _C

    capsule = _arrow_export(img)
    if capsule is None:
        return Image.fromarray(_C.resample_u8(np.asarray(img), [oh, ow], filt, vertical_first))
    px = 1 if img.mode == "L" else 4
    out = _C.resample_u8_arrow(capsule, img.height, img.width, px, [oh, ow], filt, vertical_first)
    return Image.fromarray(out) if px == 1 else Image.frombytes("RGB", (ow, oh), out, "raw", "RGBX")


def _arrow_export(img):
    """The 'arrow_array' capsule of the image's memory (Pillow's "RGB" memory is 4 bytes a pixel), or None: a
    Pillow without Arrow export, or an image in several memory blocks (over 16 MB), which Pillow does not export."""
    if not hasattr(img, "__arrow_c_array__"):
        return None
    img.load()
    try:
        return img.im.__arrow_c_array__()
    except (ValueError, OSError, AttributeError):
        return None


_AFFINE_FILTERS = {Image.Resampling.NEAREST: "nearest", Image.Resampling.BILINEAR: "bilinear",
                   Image.Resampling.BICUBIC: "bicubic"}


@functools.lru_cache(maxsize=64)
def _fill_bytes(mode, fillcolor):
    """The bytes of one pixel of ``Image.new(mode, size, fillcolor)`` (Pillow's colour parsing), padded to the
    image memory's pixel size (4 for "RGB")."""
    px = Image.new(mode, (1, 1), fillcolor).tobytes()
    return tuple(px) + (255,) if mode == "RGB" else tuple(px)


def transform_affine(img, matrix, resample=Image.NEAREST, fillcolor=None, size=None):
    """``img.transform(size or img.size, Image.AFFINE, matrix, resample, fillcolor=fillcolor)``, byte for byte.
    "L" and "RGB" images with a nearest / bilinear / bicubic filter run in the engine (cpu/affine_u8.cpp: Pillow's
    transform engines reproduced, the bilinear one vectorised), read in place through Pillow's Arrow export; the
    rest go to Pillow."""
    size = tuple(img.size) if size is None else (int(size[0]), int(size[1]))
    filt = _AFFINE_FILTERS.get(resample)
    capsule = None
    if (filt is not None and img.mode in ("L", "RGB") and len(matrix) >= 6 and min(size) > 0
            and img.width > 0 and img.height > 0):
        try:
            fill = _fill_bytes(img.mode, fillcolor)
        except (TypeError, ValueError):  # a colour Pillow would reject: let Pillow say so
            fill = None
        if fill is not None:
            capsule = _arrow_export(img)
    if capsule is None:
        return img.transform(size, Image.Transform.AFFINE, tuple(matrix), resample=resample, fillcolor=fillcolor)
    from ..backend import _C

    px = 1 if img.mode == "L" else 4
    out = _C.affine_u8_arrow(capsule, img.height, img.width, px, [float(v) for v in matrix[:6]],
                             [size[1], size[0]], filt, list(fill))
    return Image.fromarray(out, "L") if px == 1 else Image.frombytes("RGB", size, out, "raw", "RGBX")


def rotation_matrix(w, h, angle):
    """The affine matrix ``Image.rotate`` builds for a rotation by ``angle`` degrees about the centre of a w x h
    image (no expand, no translation), in Pillow's steps: the output pixel -> source point map."""
    rad = -math.radians(angle)
    m = [round(math.cos(rad), 15), round(math.sin(rad), 15), 0.0,
         round(-math.sin(rad), 15), round(math.cos(rad), 15), 0.0]
    cx, cy = w / 2, h / 2
    m[2] = m[0] * -cx + m[1] * -cy + m[2] + cx
    m[5] = m[3] * -cx + m[4] * -cy + m[5] + cy
    return m


def rotate_exact(img, angle, resample=Image.NEAREST, fillcolor=None):
    """``img.rotate(angle, resample, fillcolor=fillcolor)`` (about the centre, no expand), byte for byte: Pillow's
    own shortcuts for 0 / 90 / 180 / 270 degrees, else its matrix through :func:`transform_affine`."""
    angle = angle % 360.0
    w, h = img.size
    if angle == 0:
        return img.copy()
    if angle == 180:
        return img.transpose(Image.Transpose.ROTATE_180)
    if angle in (90, 270) and w == h:
        return img.transpose(Image.Transpose.ROTATE_90 if angle == 90 else Image.Transpose.ROTATE_270)
    return transform_affine(img, rotation_matrix(w, h, angle), resample, fillcolor)


def affine(img, matrix, interpolation=Image.NEAREST, fill=None):
    _check(img)
    return transform_affine(img, matrix, interpolation, parse_fill(fill, img)["fillcolor"])


def rotate(img, angle, interpolation=Image.NEAREST, expand=False, center=None, fill=None):
    _check(img)
    if not expand and center is None:
        return rotate_exact(img, angle, interpolation, parse_fill(fill, img)["fillcolor"])
    return img.rotate(angle, interpolation, expand, center, **parse_fill(fill, img))


def perspective(img, coeffs, interpolation=Image.BICUBIC, fill=None):
    _check(img)
    return img.transform(img.size, Image.PERSPECTIVE, coeffs, interpolation, **parse_fill(fill, img))


def to_grayscale(img, num_output_channels=1):
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        return Image.merge("RGB", [img.convert("L")] * 3)
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img):
    _check(img)
    return ImageOps.invert(img)


def posterize(img, bits):
    _check(img)
    if bits == 0:
        # Pillow >= 13 rejects 0 bits; older Pillow (and torchvision's tensor path) give a black image.
        return img.point([0] * 256 * len(img.getbands())) if img.mode != "1" else img.point(lambda _: 0)
    return ImageOps.posterize(img, bits)


def solarize(img, threshold):
    _check(img)
    return ImageOps.solarize(img, threshold)


def autocontrast(img):
    _check(img)
    return ImageOps.autocontrast(img)


def equalize(img):
    _check(img)
    return ImageOps.equalize(img)


def is_number(x):
    return isinstance(x, numbers.Number)
