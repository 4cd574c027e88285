"""The engine's Pillow-exact uint8 resampling (``_C.resample_u8``) and the PIL resize path that uses it.

Two references: Pillow itself (``Image.resize``) and an independent numpy model of Pillow's fixed-point arithmetic
(22-bit weights, one rounding per pass), which also checks the pass order Pillow did not choose.
"""
import numpy as np
import pytest
from PIL import Image

import flowvision.transforms as T
import flowvision.transforms.functional as F
from flowvision.backend import _C
from flowvision.transforms import _functional_pil as F_pil

FILTERS = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC,
           "lanczos": Image.Resampling.LANCZOS, "box": Image.Resampling.BOX, "hamming": Image.Resampling.HAMMING}
SUPPORT = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0, "box": 0.5, "hamming": 1.0}


def _filter(name, x):
    ax = np.abs(x)
    if name == "bilinear":
        return np.where(ax < 1.0, 1.0 - ax, 0.0)
    if name == "box":
        return np.where((x > -0.5) & (x <= 0.5), 1.0, 0.0)
    if name == "bicubic":
        a = -0.5
        return np.where(ax < 1.0, ((a + 2.0) * ax - (a + 3.0)) * ax * ax + 1,
                        np.where(ax < 2.0, (((ax - 5) * ax + 8) * ax - 4) * a, 0.0))
    if name == "hamming":
        with np.errstate(invalid="ignore", divide="ignore"):
            px = ax * np.pi
            v = np.sin(px) / px * (np.float32(0.54) + np.float32(0.46) * np.cos(px))
        return np.where(ax == 0.0, 1.0, np.where(ax >= 1.0, 0.0, v))
    with np.errstate(invalid="ignore", divide="ignore"):  # lanczos
        px, p3 = x * np.pi, (x / 3) * np.pi
        s1 = np.where(x == 0.0, 1.0, np.sin(px) / px)
        s3 = np.where(x == 0.0, 1.0, np.sin(p3) / p3)
    return np.where((x >= -3.0) & (x < 3.0), s1 * s3, 0.0)


def _weights(in_size, out_size, name):
    """(out_size, in_size) int64 matrix of Pillow's 22-bit weights."""
    scale = in_size / out_size
    fs = max(scale, 1.0)
    support = SUPPORT[name] * fs
    m = np.zeros((out_size, in_size), np.int64)
    for o in range(out_size):
        center = (o + 0.5) * scale
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        w = _filter(name, (np.arange(lo, hi) - center + 0.5) * (1.0 / fs))
        if w.sum() != 0:
            w = w / w.sum()
        m[o, lo:hi] = np.where(w < 0, np.trunc(-0.5 + w * (1 << 22)), np.trunc(0.5 + w * (1 << 22)))
    return m


def _pass(w, a, axis):
    s = np.tensordot(w, a.astype(np.int64), axes=([1], [axis]))
    s = np.moveaxis(s, 0, axis) + (1 << 21)
    return np.clip(s >> 22, 0, 255).astype(np.uint8)


def _model(a, oh, ow, name, vertical_first):
    h, w = a.shape[:2]
    steps = [(0, oh, h), (1, ow, w)] if vertical_first else [(1, ow, w), (0, oh, h)]
    for axis, out, size in steps:
        if out != size:
            a = _pass(_weights(size, out, name), a, axis)
    return a


@pytest.mark.parametrize("name", sorted(FILTERS))
@pytest.mark.parametrize("vertical_first", [False, True])
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_kernel_equals_fixed_point_model(name, vertical_first, channels):
    rng = np.random.default_rng(channels * 7 + vertical_first)
    for h, w, oh, ow in [(37, 53, 19, 64), (40, 30, 30, 20), (9, 70, 31, 11), (64, 64, 7, 5), (5, 3, 1, 1)]:
        a = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
        got = _C.resample_u8(a, [oh, ow], name, vertical_first)
        np.testing.assert_array_equal(got, _model(a, oh, ow, name, vertical_first), err_msg=f"{(h, w, oh, ow)}")


def test_kernel_reads_a_crop_view_and_a_2d_image():
    rng = np.random.default_rng(3)
    big = rng.integers(0, 256, (90, 120, 3), dtype=np.uint8)
    view = big[7:70, 11:100]
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(_C.resample_u8(view, [40, 50], "bilinear", False),
                                  _model(np.ascontiguousarray(view), 40, 50, "bilinear", False))
    gray = big[..., 0]  # pixels 3 bytes apart: copied to contiguous pixels first
    np.testing.assert_array_equal(_C.resample_u8(gray, [33, 71], "bicubic", True),
                                  _model(np.ascontiguousarray(gray)[..., None], 33, 71, "bicubic", True)[..., 0])


def test_kernel_threaded_equals_one_thread():
    import flowvision.backend as fb
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (700, 900, 3), dtype=np.uint8)
    old = fb.get_num_threads()
    try:
        fb.set_num_threads(1)
        one = _C.resample_u8(a, [333, 555], "lanczos", False)
        fb.set_num_threads(2)
        two = _C.resample_u8(a, [333, 555], "lanczos", False)
    finally:
        fb.set_num_threads(old)
    np.testing.assert_array_equal(one, two)


def test_installed_pillow_pass_order_is_known():
    # None would leave every PIL resize to Pillow: correct, but the fast path would be gone unnoticed
    assert F_pil._pass_order_rule() is not None, "this Pillow orders its resize passes by an unknown rule"


@pytest.mark.parametrize("name", sorted(FILTERS))
@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_pil_resize_equals_pillow_byte_for_byte(name, mode):
    rng = np.random.default_rng(11)
    for _ in range(12):
        h, w = (int(v) for v in rng.integers(2, 160, 2))
        oh, ow = (int(v) for v in rng.integers(1, 160, 2))
        a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        img = Image.fromarray(a).convert(mode)
        got = F_pil.resize(img, [oh, ow], FILTERS[name])
        assert got.mode == mode and got.size == (ow, oh)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(img.resize((ow, oh), FILTERS[name])),
                                      err_msg=f"{(h, w)} -> {(oh, ow)}")


def test_random_resized_crop_on_pil_equals_torchvision():
    tv = pytest.importorskip("torchvision.transforms")
    import torch
    rng = np.random.default_rng(2)
    imgs = [Image.fromarray(rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)) for _ in range(8)]
    ours, ref = T.RandomResizedCrop(224), tv.RandomResizedCrop(224)
    for i, img in enumerate(imgs):
        torch.manual_seed(i)
        top, left, h, w = tv.RandomResizedCrop.get_params(img, ref.scale, ref.ratio)
        want = tv.functional.resized_crop(img, top, left, h, w, [224, 224])
        got = F.resized_crop(img, top, left, h, w, [224, 224])
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert isinstance(ours(imgs[0]), Image.Image)


def test_other_modes_and_nearest_stay_with_pillow():
    rng = np.random.default_rng(4)
    rgba = Image.fromarray(rng.integers(0, 256, (30, 40, 4), dtype=np.uint8), "RGBA")
    np.testing.assert_array_equal(np.asarray(F_pil.resize(rgba, [17, 23], Image.Resampling.BILINEAR)),
                                  np.asarray(rgba.resize((23, 17), Image.Resampling.BILINEAR)))
    rgb = rgba.convert("RGB")
    np.testing.assert_array_equal(np.asarray(F_pil.resize(rgb, [17, 23], Image.Resampling.NEAREST)),
                                  np.asarray(rgb.resize((23, 17), Image.Resampling.NEAREST)))


@pytest.mark.parametrize("args, match", [
    ((np.zeros((4, 4, 3), np.float32), [2, 2], "bilinear", False), "uint8"),
    ((np.zeros((4,), np.uint8), [2, 2], "bilinear", False), r"\(H, W\)"),
    ((np.zeros((4, 4, 5), np.uint8), [2, 2], "bilinear", False), "1 to 4 channels"),
    ((np.zeros((0, 4, 3), np.uint8), [2, 2], "bilinear", False), "empty"),
    ((np.zeros((4, 4, 3), np.uint8), [0, 2], "bilinear", False), "positive"),
    ((np.zeros((4, 4, 3), np.uint8), [2, 2], "bilinearr", False), "unknown filter"),
    (([[1, 2]], [2, 2], "bilinear", False), "numpy array"),
])
def test_kernel_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        _C.resample_u8(*args)


def test_pil_resize_without_arrow_export_and_in_several_blocks(monkeypatch):
    rng = np.random.default_rng(6)
    img = Image.fromarray(rng.integers(0, 256, (50, 70, 3), dtype=np.uint8))
    want = np.asarray(img.resize((31, 23), Image.Resampling.BICUBIC))
    monkeypatch.delattr(Image.Image, "__arrow_c_array__")  # a Pillow without Arrow: read through np.asarray
    np.testing.assert_array_equal(np.asarray(F_pil.resize(img, [23, 31], Image.Resampling.BICUBIC)), want)
    monkeypatch.undo()
    big = Image.new("RGB", (3000, 2200), (10, 200, 30))  # > one 16 MB memory block: no Arrow export either
    big.paste(Image.fromarray(rng.integers(0, 256, (400, 500, 3), dtype=np.uint8)), (1200, 900))
    np.testing.assert_array_equal(np.asarray(F_pil.resize(big, [500, 600], Image.Resampling.BILINEAR)),
                                  np.asarray(big.resize((600, 500), Image.Resampling.BILINEAR)))


def test_arrow_entry_rejects_what_is_not_one_block_of_pixels():
    img = Image.new("RGB", (8, 6))
    with pytest.raises(ValueError, match="arrow_array"):
        _C.resample_u8_arrow(object(), 6, 8, 4, [3, 4])
    with pytest.raises(ValueError, match="not one block"):
        _C.resample_u8_arrow(img.im.__arrow_c_array__(), 7, 8, 4, [3, 4])
    with pytest.raises(ValueError, match="1- or 4-byte"):
        _C.resample_u8_arrow(img.im.__arrow_c_array__(), 6, 8, 3, [3, 4])


# ---------------------------------------------------------------------------------------------- colour ops
_ENHANCE = {"brightness": "Brightness", "contrast": "Contrast", "saturation": "Color"}


def _pillow_sequence(img, ops):
    from PIL import ImageEnhance
    for name, factor in ops:
        img = getattr(ImageEnhance, _ENHANCE[name])(img).enhance(factor)
    return img


def test_enhance_sequence_equals_imageenhance_byte_for_byte():
    rng = np.random.default_rng(8)
    names = list(_ENHANCE)
    for _ in range(150):
        a = rng.integers(0, 256, (int(rng.integers(1, 50)), int(rng.integers(1, 50)), 3), dtype=np.uint8)
        ops = [(str(n), float(rng.uniform(0.0, 2.5))) for n in rng.permutation(names)[: rng.integers(1, 4)]]
        ops += [("saturation", 0.0)] if rng.random() < 0.1 else []
        want = np.asarray(_pillow_sequence(Image.fromarray(a), ops))
        got = F_pil.enhance_sequence(Image.fromarray(a), ops)
        assert got.mode == "RGB"
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(ops))
        np.testing.assert_array_equal(_C.color_ops_u8(a, ops), want, err_msg=str(ops))  # 3-byte pixels


def test_enhance_sequence_other_modes_go_op_by_op():
    rng = np.random.default_rng(9)
    gray = Image.fromarray(rng.integers(0, 256, (20, 30), dtype=np.uint8))
    ops = [("contrast", 1.7), ("brightness", 0.6)]
    np.testing.assert_array_equal(np.asarray(F_pil.enhance_sequence(gray, ops)),
                                  np.asarray(_pillow_sequence(gray, ops)))


def test_color_jitter_on_pil_equals_torchvision():
    tv = pytest.importorskip("torchvision.transforms")
    import torch
    rng = np.random.default_rng(10)
    imgs = [Image.fromarray(rng.integers(0, 256, (int(rng.integers(20, 90)), int(rng.integers(20, 90)), 3),
                                         dtype=np.uint8)) for _ in range(20)]
    ref = tv.ColorJitter(0.4, 0.4, 0.4)
    for i, img in enumerate(imgs):
        torch.manual_seed(i)
        fn_idx, b, c, s, h = tv.ColorJitter.get_params(ref.brightness, ref.contrast, ref.saturation, ref.hue)
        torch.manual_seed(i)
        want = ref(img)
        from flowvision.transforms._transforms_color import _apply_jitter
        got = _apply_jitter(img, fn_idx.tolist(), b, c, s, h)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_color_ops_bad_input():
    a = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match="unknown op"):
        _C.color_ops_u8(a, [("hue", 0.1)])
    with pytest.raises(ValueError, match="non-negative"):
        _C.color_ops_u8(a, [("contrast", -1.0)])
    with pytest.raises(ValueError, match=r"\(H, W, 3\)"):
        _C.color_ops_u8(np.zeros((4, 4), np.uint8), [("contrast", 1.0)])
    with pytest.raises(ValueError, match="arrow_array"):
        _C.color_ops_u8_arrow(a, 4, 4, [("contrast", 1.0)])
