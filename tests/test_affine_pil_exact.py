"""The engine's Pillow-exact affine transform (``_C.affine_u8`` / ``affine_u8_arrow``) and the PIL paths that use it
(``transforms.functional.affine`` / ``rotate`` on PIL images, the RandAugment geometric ops): byte for byte equal to
``Image.transform(AFFINE)`` / ``Image.rotate`` for every filter, on every kernel ISA (the AVX2 build samples four
bilinear pixels at a time, the portable one one)."""
import math

import numpy as np
import pytest
from PIL import Image

import flowvision.backend as fb
from flowvision.backend import _C
from flowvision.transforms import _functional_pil as F_pil

FILTERS = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
           "bicubic": Image.Resampling.BICUBIC}


def _rotation(w, h, degrees):
    a = -math.radians(degrees)
    m = [round(math.cos(a), 15), round(math.sin(a), 15), 0.0, round(-math.sin(a), 15), round(math.cos(a), 15), 0.0]
    m[2] = m[0] * -(w / 2) + m[1] * -(h / 2) + m[2] + w / 2
    m[5] = m[3] * -(w / 2) + m[4] * -(h / 2) + m[5] + h / 2
    return m


def _matrices(rng, w, h):
    """Each of Pillow's engines: rotations and shears (16.16 fixed point for nearest), translations and scales
    (its scale engine), and matrices whose corners leave +-32768 (its double engine)."""
    yield _rotation(w, h, float(rng.uniform(-180, 180)))
    yield [1, float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-9, 9)), 0, 1, 0]
    yield [1, 0, 0, float(rng.uniform(-0.5, 0.5)), 1, float(rng.uniform(-9, 9))]
    yield [1, 0, float(rng.uniform(-w, w)), 0, 1, float(rng.uniform(-h, h))]
    yield [float(rng.uniform(0.2, 3)), 0, float(rng.uniform(-5, 5)), 0, float(rng.uniform(0.2, 3)), 2.5]
    yield [float(v) for v in rng.uniform(-2, 2, 6) * [1, 1, w, 1, 1, h]]
    yield [0.5, 0.25, 40000.0, -0.25, 0.5, -3.0]  # corners beyond +-32768


def _ours(img, m, size, filt, fillcolor):
    return F_pil.transform_affine(img, m, FILTERS[filt], fillcolor, size)


@pytest.mark.parametrize("mode", ["RGB", "L"])
@pytest.mark.parametrize("filt", sorted(FILTERS))
def test_transform_equals_pillow_byte_for_byte(isa, mode, filt):
    rng = np.random.default_rng(len(mode) * 10 + len(filt))
    for trial in range(12):
        h, w = (int(v) for v in rng.integers(1, 48, 2))
        img = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).convert(mode)
        fill = int(rng.integers(0, 256)) if mode == "L" else tuple(int(v) for v in rng.integers(0, 256, 3))
        size = (w, h) if trial % 3 else tuple(int(v) for v in rng.integers(1, 60, 2))
        for m in _matrices(rng, w, h):
            ref = img.transform(size, Image.Transform.AFFINE, tuple(m), resample=FILTERS[filt], fillcolor=fill)
            got = _ours(img, m, size, filt, fill)
            assert got.mode == mode and got.size == size
            np.testing.assert_array_equal(np.asarray(got), np.asarray(ref), err_msg=f"{isa} {(h, w)} {size} {m}")


def test_fill_colours_as_pillow_parses_them():
    rng = np.random.default_rng(4)
    img = Image.fromarray(rng.integers(0, 256, (20, 30, 3), dtype=np.uint8))
    m = _rotation(30, 20, 33.0)
    for fill in [None, (10, 20, 30), "#ff8000", 7]:
        ref = img.transform(img.size, Image.Transform.AFFINE, tuple(m), resample=Image.BILINEAR, fillcolor=fill)
        np.testing.assert_array_equal(np.asarray(_ours(img, m, img.size, "bilinear", fill)), np.asarray(ref))


def test_empty_image_gives_the_fill_as_pillow_does():
    img = Image.new("RGB", (0, 5))
    ref = img.transform((4, 3), Image.Transform.AFFINE, (1, 0, 0, 0, 1, 0), resample=Image.BILINEAR,
                        fillcolor=(1, 2, 3))
    got = F_pil.transform_affine(img, [1, 0, 0, 0, 1, 0], Image.BILINEAR, (1, 2, 3), (4, 3))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


@pytest.mark.parametrize("mode", ["RGBA", "P", "I", "F", "LA"])
def test_other_modes_go_to_pillow(mode):
    img = Image.fromarray(np.random.default_rng(1).integers(0, 256, (17, 23, 3), dtype=np.uint8)).convert(mode)
    m = [1, 0.2, -3, 0.1, 1, 2]
    ref = img.transform(img.size, Image.Transform.AFFINE, tuple(m), resample=Image.NEAREST)
    got = F_pil.transform_affine(img, m, Image.NEAREST)
    assert got.mode == mode
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


@pytest.mark.parametrize("filt", sorted(FILTERS))
def test_rotate_equals_pillow_including_its_shortcuts(filt):
    rng = np.random.default_rng(9)
    for h, w in [(31, 31), (24, 40)]:
        img = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        for deg in [0, 90, 180, 270, -90, 360, 12.5, -77.0, 450.0]:
            ref = img.rotate(deg, resample=FILTERS[filt], fillcolor=(1, 2, 3))
            got = F_pil.rotate_exact(img, deg, FILTERS[filt], (1, 2, 3))
            np.testing.assert_array_equal(np.asarray(got), np.asarray(ref), err_msg=f"{(h, w)} {deg}")


def test_functional_affine_and_rotate_on_pil_equal_torchvision():
    tvf = pytest.importorskip("torchvision.transforms.functional")
    from torchvision.transforms import InterpolationMode as TvMode

    import flowvision.transforms.functional as F
    from flowvision.transforms import InterpolationMode
    img = Image.fromarray(np.random.default_rng(6).integers(0, 256, (45, 61, 3), dtype=np.uint8))
    for name in ("NEAREST", "BILINEAR", "BICUBIC"):
        ours, theirs = getattr(InterpolationMode, name), getattr(TvMode, name)
        kw = dict(angle=17.0, translate=[3, -2], scale=1.1, shear=[5.0, -3.0], fill=[9, 8, 7])
        np.testing.assert_array_equal(np.asarray(F.affine(img, interpolation=ours, **kw)),
                                      np.asarray(tvf.affine(img, interpolation=theirs, **kw)))
        np.testing.assert_array_equal(np.asarray(F.rotate(img, -31.0, interpolation=ours, fill=[4, 5, 6])),
                                      np.asarray(tvf.rotate(img, -31.0, interpolation=theirs, fill=[4, 5, 6])))


def test_kernel_threaded_equals_one_thread():
    a = np.random.default_rng(5).integers(0, 256, (300, 410, 4), dtype=np.uint8)
    old = fb.get_num_threads()
    try:
        outs = []
        for nt in (1, 2, 3):
            fb.set_num_threads(nt)
            outs.append(_C.affine_u8(a, [0.9, 0.3, -20, -0.2, 1.1, 5], [280, 400], "bilinear", [1, 2, 3, 4]))
    finally:
        fb.set_num_threads(old)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_array_entry_matches_the_pil_entry():
    img = Image.fromarray(np.random.default_rng(8).integers(0, 256, (33, 20, 3), dtype=np.uint8))
    rgbx = np.asarray(img.convert("RGBA")).copy()
    m = [1.2, 0.1, -4, 0.3, 0.8, 6]
    got = _C.affine_u8(rgbx, m, [25, 30], "bicubic", [5, 6, 7, 255])[..., :3]
    ref = img.transform((30, 25), Image.Transform.AFFINE, tuple(m), resample=Image.BICUBIC, fillcolor=(5, 6, 7))
    np.testing.assert_array_equal(got, np.asarray(ref))
    grey = img.convert("L")
    got = _C.affine_u8(np.asarray(grey), m, [25, 30], "nearest", [200])
    ref = grey.transform((30, 25), Image.Transform.AFFINE, tuple(m), resample=Image.NEAREST, fillcolor=200)
    np.testing.assert_array_equal(got, np.asarray(ref))


def test_bad_arguments_raise_clear_errors():
    a = np.zeros((4, 5, 4), np.uint8)
    bad = [
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1], [4, 5], "bilinear", [0, 0, 0, 0]), "6 values"),
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1, float("nan")], [4, 5], "bilinear", [0, 0, 0, 0]), "finite"),
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1, 0], [0, 5], "bilinear", [0, 0, 0, 0]), "positive"),
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1, 0], [4, 5], "lanczos", [0, 0, 0, 0]), "unknown filter"),
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1, 0], [4, 5], "bilinear", [0, 0, 0]), "4 byte values"),
        (lambda: _C.affine_u8(a, [1, 0, 0, 0, 1, 0], [4, 5], "bilinear", [0, 0, 0, 256]), "0..255"),
        (lambda: _C.affine_u8(a.astype(np.float32), [1, 0, 0, 0, 1, 0], [4, 5], "bilinear", [0] * 4), "uint8"),
        (lambda: _C.affine_u8(np.zeros((4, 5, 3), np.uint8), [1, 0, 0, 0, 1, 0], [4, 5], "bilinear", [0] * 3),
         "RGBX"),
        (lambda: _C.affine_u8_arrow(object(), 4, 5, 4, [1, 0, 0, 0, 1, 0], [4, 5], "bilinear", [0] * 4),
         "arrow_array"),
    ]
    for fn, msg in bad:
        with pytest.raises(ValueError, match=msg):
            fn()
