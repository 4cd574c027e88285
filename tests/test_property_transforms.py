"""Property-based tests (hypothesis) of the public transforms against torchvision on the same inputs.

The property, for every transform, input and parameter drawn: flowvision returns what torchvision returns (same
shape and dtype, values within the op's tolerance, no NaN where torchvision has none), or raises a ``ValueError`` /
``TypeError`` with a message. Any other exception type, a crash or a wrong shape fails. Inputs include 1-pixel and
0-size images, huge aspect ratios, uint8 and float32, 1, 2, 3 and 4 channels, and parameters at and past their
limits. Examples are bounded and derandomized, so CI runs the same cases every time.
"""
import os
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

torch = pytest.importorskip("torch")
import torchvision.transforms as TV1  # noqa: E402
import torchvision.transforms.v2 as TV2  # noqa: E402

import flowvision.backend as fb  # noqa: E402
import flowvision.transforms as T1  # noqa: E402
import flowvision.transforms.v2 as T2  # noqa: E402

# CI draws a few examples per test (about a minute for the file on 2 cores); FLOWVISION_PROPERTY_EXAMPLES=200
# runs the long sweep. derandomize: the examples depend only on the test, so CI failures reproduce.
EXAMPLES = int(os.environ.get("FLOWVISION_PROPERTY_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
CLEAR = (ValueError, TypeError)


@st.composite
def images(draw, min_side=0, max_side=24, channels=(1, 2, 3, 4)):
    """A CHW image: uint8 or float32 in [0, 1], sides from 0 to ``max_side`` or a 1 x 97 / 97 x 1 sliver."""
    c = draw(st.sampled_from(channels))
    shape_kind = draw(st.sampled_from(["small", "small", "small", "sliver", "one"]))
    if shape_kind == "sliver":
        h, w = draw(st.sampled_from([(1, 97), (97, 1), (2, 61)]))
    elif shape_kind == "one":
        h, w = 1, 1
    else:
        h = draw(st.integers(min_side, max_side))
        w = draw(st.integers(min_side, max_side))
    dtype = draw(st.sampled_from(["uint8", "float32"]))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    if dtype == "uint8":
        return rng.integers(0, 256, (c, h, w), dtype=np.uint8)
    return rng.random((c, h, w), dtype=np.float32)


def _run(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(x), None
        except Exception as e:  # noqa: BLE001 - the property classifies every exception type
            return None, e


def _np(out):
    if isinstance(out, (list, tuple)):
        return [_np(o) for o in out]
    if isinstance(out, torch.Tensor):
        return out.numpy()
    return np.asarray(out.numpy() if hasattr(out, "numpy") else out)


def check(name, fv_fn, tv_fn, x, atol_u8=1, atol_f=1e-4, frac=0.0):
    """The property. ``frac``: fraction of elements allowed past the tolerance (interpolation rounding ties)."""
    tv_out, tv_err = _run(tv_fn, torch.from_numpy(x.copy()))
    fv_out, fv_err = _run(fv_fn, fb.from_numpy(x.copy()))
    where = f"{name} on {x.dtype} {x.shape}"
    if fv_err is not None:
        assert isinstance(fv_err, CLEAR), f"{where}: {type(fv_err).__name__}: {fv_err} (torchvision: {tv_err!r})"
        assert str(fv_err), f"{where}: {type(fv_err).__name__} without a message"
        return "error"
    if tv_err is not None:
        # torchvision refusing the input clearly (ValueError/TypeError) while flowvision accepts it is a divergence;
        # torchvision crashing on it (RuntimeError from a reshape of an empty image, ZeroDivisionError) is its bug,
        # and flowvision's answer only has to be sane
        assert not isinstance(tv_err, CLEAR), f"{where}: torchvision raises {tv_err!r}, flowvision returns a result"
        for a in (_np(fv_out) if isinstance(fv_out, (list, tuple)) else [_np(fv_out)]):
            assert a.dtype == x.dtype and (a.dtype.kind != "f" or not np.isnan(a).any()), f"{where}: {a.dtype}"
        return "torchvision-crash"
    a, b = _np(fv_out), _np(tv_out)
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), f"{where}: {len(b)} outputs expected"
    else:
        a, b = [a], [b]
    for ai, bi in zip(a, b):
        assert ai.shape == bi.shape, f"{where}: shape {ai.shape}, torchvision {bi.shape}"
        assert ai.dtype == bi.dtype, f"{where}: dtype {ai.dtype}, torchvision {bi.dtype}"
        if ai.dtype.kind == "f":
            assert not (np.isnan(ai) & ~np.isnan(bi)).any(), f"{where}: NaN where torchvision has none"
        if ai.size:
            tol = atol_u8 if ai.dtype == np.uint8 else atol_f
            bad = np.abs(ai.astype(np.float64) - bi.astype(np.float64)) > tol
            assert bad.mean() <= frac, f"{where}: {bad.sum()} of {ai.size} values differ (max " \
                                       f"{np.abs(ai.astype(np.float64) - bi.astype(np.float64)).max()})"
    return "same"


BOTH = [pytest.param((T1, TV1), id="v1"), pytest.param((T2, TV2), id="v2")]


@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), size=st.one_of(st.integers(-2, 30), st.tuples(st.integers(-1, 30), st.integers(-1, 30))),
       interp=st.sampled_from(["NEAREST", "BILINEAR", "BICUBIC", "NEAREST_EXACT"]), antialias=st.booleans())
def test_resize(mods, x, size, interp, antialias):
    fv, tv = mods
    size = list(size) if isinstance(size, tuple) else size
    fv_t = _build(lambda: fv.Resize(size, interpolation=getattr(fv.InterpolationMode, interp), antialias=antialias))
    tv_t = _build(lambda: tv.Resize(size, interpolation=getattr(tv.InterpolationMode, interp), antialias=antialias))
    if fv_t is None or tv_t is None:
        return
    # bicubic overshoot is clamped in uint8 but not in float: the float tolerance covers the kernel's rounding
    check("Resize", fv_t, tv_t, x, atol_u8=1, atol_f=2e-3, frac=0.02)


def _build(make):
    """The transform, or None when construction raises a clear error (that is part of the property too)."""
    try:
        return make()
    except Exception as e:  # noqa: BLE001
        assert isinstance(e, CLEAR), f"constructor raised {type(e).__name__}: {e}"
        return None


@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), size=st.one_of(st.integers(-1, 30), st.tuples(st.integers(0, 30), st.integers(0, 30))))
def test_center_crop_and_five_crop(mods, x, size):
    fv, tv = mods
    size = list(size) if isinstance(size, tuple) else size
    for name in ("CenterCrop", "FiveCrop", "TenCrop"):
        fv_t, tv_t = _build(lambda: getattr(fv, name)(size)), _build(lambda: getattr(tv, name)(size))
        if fv_t is not None and tv_t is not None:
            check(name, fv_t, tv_t, x, atol_u8=0, atol_f=0)


@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(min_side=1), pad=st.one_of(st.integers(-2, 6), st.lists(st.integers(-1, 6), min_size=2, max_size=4)),
       mode=st.sampled_from(["constant", "edge", "reflect", "symmetric"]), fill=st.integers(0, 255))
def test_pad(mods, x, pad, mode, fill):
    fv, tv = mods
    if x.dtype == np.float32:
        fill = fill / 255
    fv_t = _build(lambda: fv.Pad(pad, fill=fill, padding_mode=mode))
    tv_t = _build(lambda: tv.Pad(pad, fill=fill, padding_mode=mode))
    if fv_t is not None and tv_t is not None:
        check("Pad", fv_t, tv_t, x, atol_u8=0, atol_f=1e-6)


@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), data=st.data())
def test_normalize(mods, x, data):
    fv, tv = mods
    n = data.draw(st.integers(1, 4))
    mean = data.draw(st.lists(st.floats(-2, 2, width=32), min_size=n, max_size=n))
    std = data.draw(st.lists(st.sampled_from([1e-3, 0.2, 1.0, 3.0]), min_size=n, max_size=n))
    xf = x.astype(np.float32) / (255 if x.dtype == np.uint8 else 1)
    fv_t, tv_t = _build(lambda: fv.Normalize(mean, std)), _build(lambda: tv.Normalize(mean, std))
    if fv_t is not None and tv_t is not None:
        check("Normalize", fv_t, tv_t, xf, atol_f=1e-3)


def _no_subnormal(s):
    return s if s == 0 or s > 1e-6 else 1e-6


POINTWISE = {
    # name: (flowvision builder, torchvision builder, uint8 tolerance, float tolerance); p=1 makes them deterministic
    "HorizontalFlip": (lambda m, v: m.RandomHorizontalFlip(p=1), 0, 0),
    "VerticalFlip": (lambda m, v: m.RandomVerticalFlip(p=1), 0, 0),
    "Invert": (lambda m, v: m.RandomInvert(p=1), 0, 1e-6),
    "Posterize": (lambda m, v: m.RandomPosterize(bits=int(v * 9) - 1, p=1), 0, 0),
    "Solarize": (lambda m, v: m.RandomSolarize(threshold=v * 300 - 20, p=1), 0, 1e-6),
    "Sharpness": (lambda m, v: m.RandomAdjustSharpness(sharpness_factor=v * 4 - 0.5, p=1), 1, 1e-4),
    "Autocontrast": (lambda m, v: m.RandomAutocontrast(p=1), 1, 1e-4),
    "Equalize": (lambda m, v: m.RandomEqualize(p=1), 0, 0),
    "Grayscale": (lambda m, v: m.Grayscale(num_output_channels=int(v * 4)), 1, 1e-4),
    "Brightness": (lambda m, v: m.ColorJitter(brightness=(v * 2 - 0.2, v * 2 - 0.2)), 1, 1e-4),
    "Contrast": (lambda m, v: m.ColorJitter(contrast=(v * 2, v * 2)), 1, 1e-4),
    "Saturation": (lambda m, v: m.ColorJitter(saturation=(v * 2, v * 2)), 1, 1e-4),
    "Hue": (lambda m, v: m.ColorJitter(hue=(v - 0.6, v - 0.6)), 1, 2e-3),
    # sigma 0 is refused by both; a subnormal sigma would round to 0 in torchvision's float32 draw only
    "Blur": (lambda m, v: m.GaussianBlur(kernel_size=int(v * 8) | 1, sigma=(_no_subnormal(v * 3),) * 2), 1, 1e-4),
    "ConvertDtype": (lambda m, v: m.ConvertImageDtype([m and fb.float32, fb.uint8][int(v * 2) % 2]), 0, 1e-6),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), v=st.floats(0, 1))
def test_deterministic_transforms(mods, name, x, v):
    fv, tv = mods
    make, tol_u8, tol_f = POINTWISE[name]
    if name == "ConvertDtype":
        fv_t = _build(lambda: fv.ConvertImageDtype([fb.float32, fb.uint8][int(v * 2) % 2]))
        tv_t = _build(lambda: tv.ConvertImageDtype([torch.float32, torch.uint8][int(v * 2) % 2]))
    else:
        fv_t, tv_t = _build(lambda: make(fv, v)), _build(lambda: make(tv, v))
    if fv_t is None or tv_t is None:
        assert (fv_t is None) == (tv_t is None) or fv_t is None, f"{name}({v}): torchvision refuses, flowvision not"
        return
    check(name, fv_t, tv_t, x, atol_u8=tol_u8, atol_f=tol_f, frac=0.01)


GEOMETRY = {
    "Rotation": lambda m, v, f: m.RandomRotation(degrees=(v * 720 - 360, v * 720 - 360), fill=f),
    "RotationExpand": lambda m, v, f: m.RandomRotation(degrees=(v * 180, v * 180), expand=True, fill=f),
    "Affine": lambda m, v, f: m.RandomAffine(degrees=(v * 90, v * 90), scale=(v + 0.5, v + 0.5),
                                             shear=(v * 30, v * 30, -v * 10, -v * 10), fill=f),
    "PerspectiveIdentity": lambda m, v, f: m.RandomPerspective(distortion_scale=0.0, p=1.0, fill=f),
}


@pytest.mark.parametrize("name", sorted(GEOMETRY))
@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), v=st.floats(0, 1), fill=st.integers(0, 255))
def test_geometry(mods, name, x, v, fill):
    fv, tv = mods
    if x.dtype == np.float32:
        fill = fill / 255
    fv_t, tv_t = _build(lambda: GEOMETRY[name](fv, v, fill)), _build(lambda: GEOMETRY[name](tv, v, fill))
    if fv_t is not None and tv_t is not None:
        # nearest sampling: a grid point on a pixel boundary may round the other way (a few percent of pixels)
        check(name, fv_t, tv_t, x, atol_u8=0, atol_f=1e-5, frac=0.06)


RANDOM = {
    # random transforms: the output shape is known without the random draw (or compared with torchvision's)
    "RandomCrop": lambda m, v: m.RandomCrop(int(v * 12), padding=int(v * 3), pad_if_needed=v > 0.5),
    "RandomResizedCrop": lambda m, v: m.RandomResizedCrop(int(v * 12) + 1, scale=(v * 0.9 + 0.01, 1.0),
                                                          ratio=(0.5, 2.0 + v)),
    "ColorJitter": lambda m, v: m.ColorJitter(v, v, v, v / 2),
    "RandomErasing": lambda m, v: m.RandomErasing(p=1.0, scale=(0.02, v * 0.9 + 0.05), value=v),
    "RandomPerspective": lambda m, v: m.RandomPerspective(distortion_scale=v, p=1.0),
    "ElasticTransform": lambda m, v: m.ElasticTransform(alpha=v * 50.0, sigma=v * 5 + 0.1),
    "AutoAugment": lambda m, v: m.AutoAugment(),
    "RandAugment": lambda m, v: m.RandAugment(num_ops=int(v * 4), magnitude=int(v * 30)),
    "TrivialAugmentWide": lambda m, v: m.TrivialAugmentWide(num_magnitude_bins=int(v * 40)),
    "AugMix": lambda m, v: m.AugMix(severity=int(v * 12), mixture_width=int(v * 4), chain_depth=int(v * 4) - 1),
    "RandomGrayscale": lambda m, v: m.RandomGrayscale(p=v),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
@pytest.mark.parametrize("mods", BOTH)
@SETTINGS
@given(x=images(), v=st.floats(0, 1))
def test_random_transforms_shape_and_errors(mods, name, x, v):
    """Random draws differ between the libraries: shape, dtype, finiteness and the error contract must not."""
    fv, tv = mods
    fv_t, tv_t = _build(lambda: RANDOM[name](fv, v)), _build(lambda: RANDOM[name](tv, v))
    if fv_t is None or tv_t is None:
        return
    tv_out, tv_err = _run(tv_t, torch.from_numpy(x.copy()))
    fv_out, fv_err = _run(fv_t, fb.from_numpy(x.copy()))
    where = f"{name}({v}) on {x.dtype} {x.shape}"
    if fv_err is not None:
        assert isinstance(fv_err, CLEAR) and str(fv_err), f"{where}: {type(fv_err).__name__}: {fv_err}"
        return
    a = _np(fv_out)
    assert a.dtype == x.dtype, f"{where}: dtype {a.dtype}"
    if a.dtype.kind == "f":
        assert np.isfinite(a).all(), f"{where}: non-finite output"
    if tv_err is None:
        b = _np(tv_out)
        assert a.shape == b.shape, f"{where}: shape {a.shape}, torchvision {b.shape}"
