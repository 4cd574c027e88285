"""Parity of flowvision.transforms classes with torchvision 0.29: random classes get the same
parameters on both sides (``get_params`` patched, or scripted random draws)."""
import math
import random as pyrandom

import numpy as np
import pytest
import torch
import torchvision.transforms as TV
import torchvision.transforms.autoaugment as TVA

import flowvision.backend as fb
import flowvision.transforms as T
from flowvision.transforms import _random
from flowvision.transforms import autoaugment as FA

from test_transforms_helpers import assert_float_close, assert_image_close, assert_u8_close, fb_chw, hwc_to_chw, pil_of, \
    rand_u8, to_np, torch_chw

KINDS = ["pil", "np_u8", "fb_u8", "fb_f32", "fb_u8_batch"]


def _inputs(kind, a):
    if kind == "pil":
        return pil_of(a), pil_of(a)
    if kind == "np_u8":
        return a, torch_chw(a)
    if kind == "fb_u8":
        return fb_chw(a), torch_chw(a)
    if kind == "fb_f32":
        f = a.astype(np.float32) / 255
        return fb_chw(f), torch_chw(f)
    if kind == "fb_u8_batch":  # (N, C, H, W): one draw for the whole batch, like torchvision
        b = np.ascontiguousarray(np.stack([a, a[::-1]]).transpose(0, 3, 1, 2))
        return fb.from_numpy(b), torch.from_numpy(b.copy())
    raise ValueError(kind)


def _cmp(kind, ours, ref, atol=1e-4):
    if isinstance(ref, (tuple, list)):
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref):
            _cmp(kind, o, r, atol)
        return
    if kind == "pil" and not isinstance(ref, torch.Tensor):
        assert ours.size == ref.size and ours.mode == ref.mode
        assert_u8_close(np.asarray(ours), np.asarray(ref))
        return
    o = to_np(ours)
    if kind == "np_u8" and isinstance(ours, np.ndarray):
        o = hwc_to_chw(o)
    assert_image_close(o, to_np(ref), atol=atol)


def run(kind, ours_t, tv_t, a, atol=1e-4):
    oi, ri = _inputs(kind, a)
    _cmp(kind, ours_t(oi), tv_t(ri), atol)


def patch_params(monkeypatch, ours_cls, tv_cls, ours_params, tv_params=None):
    tv_params = ours_params if tv_params is None else tv_params
    monkeypatch.setattr(ours_cls, "get_params", staticmethod(lambda *a, **k: ours_params))
    monkeypatch.setattr(tv_cls, "get_params", staticmethod(lambda *a, **k: tv_params))


A = rand_u8(37, 45, smooth=True, seed=21)


# ----------------------------------------------------------------------------- deterministic classes
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("make", [
    lambda M: M.Resize(20), lambda M: M.Resize([15, 50], M.InterpolationMode.BICUBIC),
    lambda M: M.Resize(20, max_size=25), lambda M: M.CenterCrop(21), lambda M: M.CenterCrop([50, 10]),
    lambda M: M.Pad(3), lambda M: M.Pad([1, 2, 3, 4], padding_mode="reflect"),
    lambda M: M.Pad(2, padding_mode="symmetric"), lambda M: M.Pad([2, 5], padding_mode="edge"),
    lambda M: M.FiveCrop(9), lambda M: M.TenCrop([9, 11], vertical_flip=True),
    lambda M: M.RandomHorizontalFlip(1.0), lambda M: M.RandomVerticalFlip(1.0), lambda M: M.RandomHorizontalFlip(0.0),
    lambda M: M.RandomInvert(1.0), lambda M: M.RandomAutocontrast(1.0), lambda M: M.RandomSolarize(0.5, 1.0),
    lambda M: M.RandomAdjustSharpness(1.7, 1.0), lambda M: M.Grayscale(3), lambda M: M.RandomGrayscale(1.0),
    lambda M: M.Compose([M.CenterCrop(30), M.Resize(17)]), lambda M: M.RandomApply([M.RandomInvert(1.0)], p=1.0),
    lambda M: M.RandomApply([M.RandomInvert(1.0)], p=0.0), lambda M: M.RandomChoice([M.RandomVerticalFlip(1.0)]),
    lambda M: M.Lambda(lambda x: x),
], ids=lambda f: "")
def test_deterministic(kind, make):
    ours, ref = make(T), make(TV)
    if kind == "fb_f32" and isinstance(ours, T.RandomSolarize):
        pass
    run(kind, ours, ref, A)


@pytest.mark.parametrize("kind", ["pil", "np_u8", "fb_u8"])
def test_uint8_only(kind):
    run(kind, T.RandomPosterize(3, 1.0), TV.RandomPosterize(3, 1.0), A)
    run(kind, T.RandomEqualize(1.0), TV.RandomEqualize(1.0), A)


def test_to_tensor_normalize_compose():
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    for x in (A, pil_of(A)):
        ours = T.Compose([T.ToTensor(), T.Normalize(mean, std)])(x)
        ref = TV.Compose([TV.ToTensor(), TV.Normalize(mean, std)])(x if not isinstance(x, np.ndarray) else x)
        assert fb.is_tensor(ours)
        assert_float_close(to_np(ours), ref.numpy(), atol=1e-5)
        # unfused path gives the same numbers
        unfused = T.Normalize(mean, std)(T.ToTensor()(x))
        assert_float_close(to_np(unfused), ref.numpy(), atol=1e-5)


def test_pil_to_tensor_convert_dtype_to_pil():
    img = pil_of(A)
    t = T.PILToTensor()(img)
    np.testing.assert_array_equal(to_np(t), TV.PILToTensor()(img).numpy())
    f = T.ConvertImageDtype(fb.float32)(t)
    assert_float_close(to_np(f), TV.ConvertImageDtype(torch.float32)(TV.PILToTensor()(img)).numpy())
    back = T.ToPILImage()(f)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(TV.ToPILImage()(TV.ToTensor()(img))))


def test_linear_transformation():
    rng = np.random.default_rng(0)
    x = rng.random((3, 4, 5)).astype(np.float32)
    m = rng.random((60, 60)).astype(np.float32)
    v = rng.random(60).astype(np.float32)
    ref = TV.LinearTransformation(torch.from_numpy(m), torch.from_numpy(v))(torch.from_numpy(x)).numpy()
    ours = T.LinearTransformation(fb.from_numpy(m), fb.from_numpy(v))(fb.from_numpy(x))
    assert_float_close(to_np(ours), ref, atol=1e-4)
    ours_np = T.LinearTransformation(m, v)(np.moveaxis(x, 0, -1))
    assert_float_close(np.moveaxis(ours_np, -1, 0), ref, atol=1e-4)


# ----------------------------------------------------------------------------- random classes, forced params
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("padding,pad_if_needed,size", [(None, False, 20), (4, False, [30, 49]),
                                                        (None, True, [50, 40]), ([1, 2], True, 41)])
def test_random_crop(monkeypatch, kind, padding, pad_if_needed, size):
    ours_t = T.RandomCrop(size, padding=padding, pad_if_needed=pad_if_needed, fill=3)
    tv_t = TV.RandomCrop(size, padding=padding, pad_if_needed=pad_if_needed, fill=3)
    oi, ri = _inputs(kind, A)
    # draw with our get_params, give torchvision the same
    real = T.RandomCrop.get_params
    box = {}

    def ours_params(img, output_size):
        box["p"] = real(img, output_size)
        return box["p"]

    monkeypatch.setattr(T.RandomCrop, "get_params", staticmethod(ours_params))
    monkeypatch.setattr(TV.RandomCrop, "get_params", staticmethod(lambda img, s: box["p"]))
    _cmp(kind, ours_t(oi), tv_t(ri))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_random_resized_crop(monkeypatch, kind, seed):
    T.manual_seed(seed)
    params = T.RandomResizedCrop.get_params(A, (0.08, 1.0), (3 / 4, 4 / 3))
    patch_params(monkeypatch, T.RandomResizedCrop, TV.RandomResizedCrop, params)
    run(kind, T.RandomResizedCrop(24), TV.RandomResizedCrop(24), A)


def test_random_resized_crop_get_params_valid():
    T.manual_seed(0)
    for _ in range(200):
        i, j, h, w = T.RandomResizedCrop.get_params(A, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= i and 0 <= j and 0 < h and 0 < w and i + h <= 37 and j + w <= 45
    # impossible ratio -> fallback centre crop, same as torchvision
    assert T.RandomResizedCrop.get_params(A, (0.99, 1.0), (10.0, 20.0)) == \
        TV.RandomResizedCrop.get_params(torch_chw(A), (0.99, 1.0), (10.0, 20.0))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_color_jitter(monkeypatch, kind, seed):
    T.manual_seed(seed)
    args = (0.4, 0.4, 0.4, 0.2)
    ours_t, tv_t = T.ColorJitter(*args), TV.ColorJitter(*args)
    p = T.ColorJitter.get_params(ours_t.brightness, ours_t.contrast, ours_t.saturation, ours_t.hue)
    patch_params(monkeypatch, T.ColorJitter, TV.ColorJitter, p, (torch.tensor(p[0]),) + tuple(p[1:]))
    run(kind, ours_t, tv_t, A)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("expand,center", [(False, None), (True, None), (False, (5, 9))])
def test_random_rotation(monkeypatch, kind, expand, center):
    patch_params(monkeypatch, T.RandomRotation, TV.RandomRotation, 23.7)
    for interp in (T.InterpolationMode.NEAREST, T.InterpolationMode.BILINEAR):
        run(kind, T.RandomRotation(30, interp, expand, center, fill=4),
            TV.RandomRotation(30, TV.InterpolationMode(interp.value), expand, center, fill=4), A)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_random_affine(monkeypatch, kind, seed):
    T.manual_seed(seed)
    p = T.RandomAffine.get_params([-30, 30], [0.1, 0.2], [0.8, 1.2], [-10, 10, -5, 5], [45, 37])
    patch_params(monkeypatch, T.RandomAffine, TV.RandomAffine, p)
    run(kind, T.RandomAffine(30, (0.1, 0.2), (0.8, 1.2), (-10, 10, -5, 5), fill=(1, 2, 3)),
        TV.RandomAffine(30, (0.1, 0.2), (0.8, 1.2), (-10, 10, -5, 5), fill=(1, 2, 3)), A)


@pytest.mark.parametrize("kind", KINDS)
def test_random_perspective(monkeypatch, kind):
    T.manual_seed(3)
    p = T.RandomPerspective.get_params(45, 37, 0.5)
    patch_params(monkeypatch, T.RandomPerspective, TV.RandomPerspective, p)
    run(kind, T.RandomPerspective(0.5, p=1.0, fill=5), TV.RandomPerspective(0.5, p=1.0, fill=5), A)


@pytest.mark.parametrize("kind", KINDS)
def test_gaussian_blur_class(monkeypatch, kind):
    patch_params(monkeypatch, T.GaussianBlur, TV.GaussianBlur, 1.3)
    run(kind, T.GaussianBlur(5, (0.1, 2.0)), TV.GaussianBlur(5, (0.1, 2.0)), A)


@pytest.mark.parametrize("kind", KINDS)
def test_elastic(monkeypatch, kind):
    T.manual_seed(0)
    d = T.ElasticTransform.get_params([50.0, 50.0], [5.0, 5.0], [37, 45])
    assert d.shape == (1, 37, 45, 2)
    patch_params(monkeypatch, T.ElasticTransform, TV.ElasticTransform, d, torch.from_numpy(d))
    run(kind, T.ElasticTransform(), TV.ElasticTransform(), A)


@pytest.mark.parametrize("value", [0, (0.1, 0.2, 0.3), "random"])
@pytest.mark.parametrize("kind", ["np_u8", "fb_f32"])
def test_random_erasing(monkeypatch, value, kind):
    f = A.astype(np.float32) / 255 if kind == "fb_f32" else A
    T.manual_seed(1)
    p = T.RandomErasing.get_params(f, (0.02, 0.33), (0.3, 3.3),
                                   None if value == "random" else list(np.atleast_1d(value).astype(float)))
    i, j, h, w, v = p
    patch_params(monkeypatch, T.RandomErasing, TV.RandomErasing, (i, j, h, w, fb.from_numpy(np.asarray(v))),
                 (i, j, h, w, torch.from_numpy(np.asarray(v))))
    oi, ri = _inputs(kind, A if kind == "np_u8" else A)
    if kind == "np_u8":
        oi, ri = f, torch_chw(f)
    ours = T.RandomErasing(1.0, value=value)(oi)
    ref = TV.RandomErasing(1.0, value=value)(ri)
    _cmp(kind, ours, ref)


def test_random_order_and_choice_draws():
    T.manual_seed(0)
    seen = set()
    for _ in range(40):
        out = T.RandomChoice([T.Lambda(lambda x: 1), T.Lambda(lambda x: 2)], p=[0.2, 0.8])(0)
        seen.add(out)
    assert seen == {1, 2}
    order = []
    T.RandomOrder([T.Lambda(lambda x: order.append(1)), T.Lambda(lambda x: order.append(2))])(0)
    assert sorted(order) == [1, 2]


def test_seeding_reproducible():
    t = T.Compose([T.RandomResizedCrop(16), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1)])
    T.manual_seed(123)
    a = t(A)
    T.manual_seed(123)
    b = t(A)
    np.testing.assert_array_equal(a, b)
    fb.manual_seed(123)  # the backend's seed is the same source
    np.testing.assert_array_equal(t(A), a)


# ----------------------------------------------------------------------------- auto-augment family
OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast",
       "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize", "Invert"]


@pytest.mark.parametrize("kind", ["pil", "np_u8", "fb_u8"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mag", [0.0, 0.3, -0.7])
@pytest.mark.parametrize("interp", [T.InterpolationMode.NEAREST, T.InterpolationMode.BILINEAR])
def test_apply_op(kind, op, mag, interp):
    m = {"TranslateX": mag * 20, "TranslateY": mag * 20, "Rotate": mag * 40, "Posterize": 8 - abs(mag) * 5,
         "Solarize": 255 * abs(mag)}.get(op, mag)
    fill = None if kind == "pil" else [1.0, 2.0, 3.0]
    oi, ri = _inputs(kind, A)
    ours = FA._apply_op(oi, op, m, interp, fill)
    ref = TVA._apply_op(ri, op, m, TV.InterpolationMode(interp.value), fill)
    _cmp(kind, ours, ref)


class _Script:
    """Records torch.randint draws so flowvision can replay the same sequence."""

    def __init__(self, seed):
        self.rng = pyrandom.Random(seed)
        self.log = []

    def torch_randint(self, *args, size=None, dtype=None, low=None, high=None, **kw):
        pos = list(args)
        if pos and isinstance(pos[-1], (tuple, list)):
            size = pos.pop()
        if len(pos) == 2:
            low, high = pos
        elif len(pos) == 1:
            low, high = 0, pos[0]
        low = 0 if low is None else low
        v = self.rng.randrange(int(low), int(high))
        self.log.append((int(low), int(high), v))
        return torch.tensor([v])

    def ours_randint(self, low, high):
        if not self.log:  # torchvision stopped early (raised); any value will do
            return low
        lo, hi, v = self.log.pop(0)
        assert (lo, hi) == (low, high)
        return v


@pytest.mark.parametrize("kind", ["pil", "np_u8", "fb_u8"])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("which", ["rand", "trivial"])
def test_randaugment_trivial(monkeypatch, kind, seed, which):
    s = _Script(seed)
    monkeypatch.setattr(torch, "randint", s.torch_randint)
    if which == "rand":
        ref_t, ours_t = TV.RandAugment(num_ops=3, fill=[5, 5, 5]), T.RandAugment(num_ops=3, fill=[5, 5, 5])
    else:
        ref_t, ours_t = TV.TrivialAugmentWide(), T.TrivialAugmentWide()
    oi, ri = _inputs(kind, A)
    ref = ref_t(ri)
    monkeypatch.setattr(_random, "randint", s.ours_randint)
    ours = ours_t(oi)
    assert not s.log
    _cmp(kind, ours, ref)


@pytest.mark.parametrize("kind", ["pil", "np_u8", "fb_u8"])
@pytest.mark.parametrize("policy", list(T.AutoAugmentPolicy))
@pytest.mark.parametrize("seed", range(4))
def test_autoaugment(monkeypatch, kind, policy, seed):
    rng = np.random.default_rng(seed)
    pid = int(rng.integers(0, 25))
    probs = [float(x) for x in rng.random(2)]
    signs = [int(x) for x in rng.integers(0, 2, 2)]
    patch_params(monkeypatch, T.AutoAugment, TV.AutoAugment, (pid, probs, signs),
                 (pid, torch.tensor(probs), torch.tensor(signs)))
    run(kind, T.AutoAugment(policy), TV.AutoAugment(TVA.AutoAugmentPolicy(policy.value)), A)


@pytest.mark.parametrize("kind", ["pil", "np_u8", "fb_u8", "fb_f32"])
@pytest.mark.parametrize("seed", range(4))
def test_augmix(monkeypatch, kind, seed):
    s = _Script(seed)
    monkeypatch.setattr(torch, "randint", s.torch_randint)
    rng = np.random.default_rng(seed)
    m = rng.dirichlet([1.0, 1.0]).astype(np.float32)
    w = rng.dirichlet([1.0] * 3).astype(np.float32)
    draws = iter([torch.from_numpy(m)[None], torch.from_numpy(w)[None]])
    ref_t = TV.AugMix()
    monkeypatch.setattr(ref_t, "_sample_dirichlet", lambda params: next(draws))
    oi, ri = _inputs(kind, A)
    ours_t = T.AugMix()
    monkeypatch.setattr(ours_t, "get_params", lambda: (m, w * m[1]))
    try:
        ref = ref_t(ri)
    except TypeError:  # torchvision: Posterize/Equalize on float tensors -> TypeError; so do we
        monkeypatch.setattr(_random, "randint", s.ours_randint)
        with pytest.raises(TypeError):
            ours_t(oi)
        return
    monkeypatch.setattr(_random, "randint", s.ours_randint)
    ours = ours_t(oi)
    _cmp(kind, ours, ref, atol=1e-4)


def test_autoaugment_family_runs_on_all_inputs():
    T.manual_seed(0)
    for t in (T.AutoAugment(), T.RandAugment(), T.TrivialAugmentWide(), T.AugMix()):
        for x in (A, pil_of(A), fb_chw(A)):
            for _ in range(5):
                t(x)
