"""create_transform / resolve_data_config / timm transforms vs timm 1.0.

Equivalence: both pipelines are flattened into stages, each described by its class name and the
parameters that define it (sizes, scale/ratio, interpolation, probabilities, jitter ranges,
mean/std, erasing args, auto-augment ops).  torchvision class names map to the flowvision.transforms
classes of the same name.  Deterministic eval pipelines are also compared numerically.
"""
import random

import numpy as np
import pytest
from PIL import Image

import flowvision.data as fd

timm_data = pytest.importorskip("timm.data")
tv = pytest.importorskip("torchvision.transforms")
torch = pytest.importorskip("torch")


def _interp(x):
    if isinstance(x, (tuple, list)):
        return tuple(_interp(v) for v in x)
    if isinstance(x, Image.Resampling):
        return x.name.lower()
    v = getattr(x, "value", x)
    return v if isinstance(v, str) else Image.Resampling(v).name.lower()


def _ops(ops):
    return [(o.name, o.prob, o.magnitude, o.magnitude_std, o.magnitude_max, tuple(o.hparams.get("img_mean", ())),
             o.hparams.get("translate_const"), o.hparams.get("translate_pct"),
             _interp(o.hparams["interpolation"]) if "interpolation" in o.hparams else None) for o in ops]


def _describe(t):
    name = type(t).__name__
    d = {}
    if hasattr(t, "transforms") and name in ("Compose",):
        return [s for sub in t.transforms for s in _describe(sub)]
    if name == "RandomApply":
        return [("RandomApply", t.p, tuple(_describe(s)[0] for s in t.transforms))]
    for k in ("size", "scale", "ratio", "p", "longest", "random_scale_prob", "random_scale_range", "random_scale_area",
              "random_aspect_prob", "random_aspect_range", "fill", "padding_mode", "border_size", "kernel_size",
              "probability", "mode", "min_count", "max_count", "num_splits", "num_layers", "alpha", "width", "depth",
              "blended"):
        if hasattr(t, k):
            v = getattr(t, k)
            d[k] = tuple(v) if isinstance(v, (list, tuple)) else v
    if hasattr(t, "interpolation"):
        d["interpolation"] = _interp(t.interpolation)
    for k in ("brightness", "contrast", "saturation", "hue"):
        if hasattr(t, k):
            v = getattr(t, k)
            d[k] = None if v is None else tuple(float(x) for x in v)
    if name == "Normalize":
        d["mean"] = tuple(np.round(np.asarray(t.mean, np.float64).reshape(-1), 6))
        d["std"] = tuple(np.round(np.asarray(t.std, np.float64).reshape(-1), 6))
    if hasattr(t, "ops"):
        d["ops"] = _ops(t.ops)
        d["choice_weights"] = None if getattr(t, "choice_weights", None) is None else tuple(t.choice_weights)
    if hasattr(t, "policy"):
        d["policy"] = [_ops(sp) for sp in t.policy]
    return [(name, tuple(sorted(d.items())))]


TRAIN_CASES = [
    dict(),
    dict(auto_augment="rand-m9-mstd0.5-inc1", interpolation="bicubic", re_prob=0.25, re_mode="pixel", re_count=1),
    dict(auto_augment="rand-m7-n3-mstd0.5-tweights", interpolation="random", re_prob=0.3, re_count=3, re_num_splits=2),
    dict(auto_augment="augmix-m5-w4-d2", interpolation="bilinear", separate=False),
    dict(auto_augment="original-mstd0.5", hflip=0.0, vflip=0.5),
    dict(auto_augment="3a", color_jitter=0.3),
    dict(color_jitter=(0.4, 0.4, 0.4, 0.1), color_jitter_prob=0.8, grayscale_prob=0.2, gaussian_blur_prob=0.5),
    dict(train_crop_mode="rkrc", scale=(0.7, 1.0)),
    dict(train_crop_mode="rkrr", ratio=(0.8, 1.25)),
    dict(input_size=(3, 192, 256), scale=(0.35, 1.0), ratio=(0.5, 2.0), auto_augment="rand-m9-n2-mstd1"),
    dict(use_prefetcher=True, re_prob=0.5),
    dict(normalize=False),
    dict(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), auto_augment="v0r"),
    dict(no_aug=True),
    dict(no_aug=True, interpolation="random"),
]

EVAL_CASES = [
    dict(), dict(crop_pct=0.95, interpolation="bicubic"), dict(crop_mode="squash", crop_pct=1.0),
    dict(crop_mode="border", crop_pct=0.9, mean=(0.5, 0.5, 0.5)), dict(input_size=(3, 160, 224), crop_pct=0.9),
    dict(crop_border_pixels=4), dict(use_prefetcher=True), dict(normalize=False),
]


@pytest.mark.parametrize("case", range(len(TRAIN_CASES)))
def test_train_pipeline_equivalent(case):
    kw = dict(input_size=224, is_training=True)
    kw.update(TRAIN_CASES[case])
    assert _describe(fd.create_transform(**kw)) == _describe(timm_data.create_transform(**kw))


@pytest.mark.parametrize("case", range(len(EVAL_CASES)))
def test_eval_pipeline_equivalent(case):
    kw = dict(input_size=224, is_training=False)
    kw.update(EVAL_CASES[case])
    assert _describe(fd.create_transform(**kw)) == _describe(timm_data.create_transform(**kw))


def test_separate_returns_three_stages():
    ours = fd.create_transform(224, is_training=True, auto_augment="augmix-m3", separate=True)
    ref = timm_data.create_transform(224, is_training=True, auto_augment="augmix-m3", separate=True)
    assert len(ours) == 3 and [_describe(s) for s in ours] == [_describe(s) for s in ref]


@pytest.mark.parametrize("case", [dict(), dict(crop_pct=0.95, interpolation="bicubic"), dict(crop_mode="squash"),
                                  dict(crop_mode="border", crop_pct=0.9)])
def test_eval_output_close_to_timm(case):
    r = np.random.default_rng(0)
    img = Image.fromarray(r.integers(0, 256, (300, 260, 3), dtype=np.uint8))
    ours = fd.create_transform(224, **case)(img)
    ref = timm_data.create_transform(224, **case)(img)
    a = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours)
    assert a.shape == tuple(ref.shape)
    np.testing.assert_allclose(a, ref.numpy(), atol=0.02)


def test_rrc_params_match_timm_with_timm_random():
    img = Image.new("RGB", (320, 240))
    ref = timm_data.transforms.RandomResizedCropAndInterpolation(224, interpolation="random")
    ours = fd.RandomResizedCropAndInterpolation(224, interpolation="random", rng=fd.TimmRandom())
    for seed in range(20):
        random.seed(seed)
        p_ref = ref.get_params(img, ref.scale, ref.ratio)
        i_ref = random.choice(ref.interpolation)
        random.seed(seed)
        p_ours = ours.get_params(img, ours.scale, ours.ratio, ours.rng)
        i_ours = ours.rng.choice(ours.interpolation)
        assert p_ref == p_ours and _interp(i_ref) == _interp(i_ours)


def test_resize_keep_ratio_and_crop_or_pad_params():
    img = Image.new("RGB", (300, 200))
    ref = timm_data.transforms.ResizeKeepRatio(224, random_scale_prob=0.5, random_aspect_prob=0.5)
    ours = fd.ResizeKeepRatio(224, random_scale_prob=0.5, random_aspect_prob=0.5, rng=fd.TimmRandom())
    for seed in range(20):
        random.seed(seed)
        a = ref.get_params(img, ref.size, ref.longest, 0.5, ref.random_scale_range, False, 0.5, ref.random_aspect_range)
        random.seed(seed)
        b = ours.get_params(img, ours.size, ours.longest, 0.5, ours.random_scale_range, False, 0.5,
                            ours.random_aspect_range, ours.rng)
        assert a == b
        random.seed(seed)
        a = timm_data.transforms.RandomCropOrPad.get_params(img, (224, 224))
        random.seed(seed)
        assert a == fd.RandomCropOrPad.get_params(img, (224, 224), fd.TimmRandom())
    # crop/pad outputs
    arr = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    pil = Image.fromarray(arr)
    np.testing.assert_array_equal(np.asarray(fd.center_crop_or_pad(pil, (9, 4), fill=7)),
                                  np.asarray(timm_data.transforms.center_crop_or_pad(pil, (9, 4), fill=7)))
    np.testing.assert_array_equal(np.asarray(fd.crop_or_pad(pil, -2, 3, 6, 6, fill=1)),
                                  np.asarray(timm_data.transforms.crop_or_pad(pil, -2, 3, 6, 6, fill=1)))
    np.testing.assert_array_equal(fd.ToNumpy()(pil), timm_data.transforms.ToNumpy()(pil))


def test_tensor_passthrough_and_pil_to_tensor():
    pil = Image.fromarray(np.full((4, 5, 3), 200, np.uint8))
    t = fd.MaybePILToTensor()(pil)
    assert tuple(t.shape) == (3, 4, 5) and fd.MaybePILToTensor()(t) is t
    f = fd.MaybeToTensor()(pil)
    assert fd.MaybeToTensor()(f) is f
    np.testing.assert_allclose(np.asarray(f.numpy()), 200 / 255, rtol=1e-6)


@pytest.mark.parametrize("args,cfg", [
    (dict(input_size=(3, 256, 256)), None),
    (dict(img_size=300, in_chans=1, mean=(0.5,), std=(0.25,)), None),
    (dict(interpolation="bilinear", crop_pct=0.9, crop_mode="squash"), dict(input_size=(3, 384, 384), mean=(0.5,) * 3)),
    (dict(), dict(input_size=(3, 224, 224), test_input_size=(3, 288, 288), test_crop_pct=1.0, crop_pct=0.95,
                  interpolation="bilinear", mean=(0.1, 0.2, 0.3), std=(0.3, 0.2, 0.1), crop_mode="border")),
    (dict(chans=4, mean=(0.5,), std=(0.5,)), None),
])
@pytest.mark.parametrize("use_test_size", [False, True])
def test_resolve_data_config_matches_timm(args, cfg, use_test_size):
    ours = fd.resolve_data_config(args, pretrained_cfg=cfg, use_test_size=use_test_size)
    ref = timm_data.resolve_data_config(args, pretrained_cfg=cfg, use_test_size=use_test_size)
    assert ours == ref

    class M:
        pretrained_cfg = cfg or {}
    assert fd.resolve_model_data_config(M(), args=args, use_test_size=use_test_size) == \
        timm_data.resolve_model_data_config(M(), args=args, use_test_size=use_test_size)


def test_constants():
    for k in ("DEFAULT_CROP_PCT", "IMAGENET_DEFAULT_MEAN", "IMAGENET_DEFAULT_STD", "IMAGENET_INCEPTION_MEAN",
              "IMAGENET_DPN_MEAN", "IMAGENET_DPN_STD", "OPENAI_CLIP_MEAN", "OPENAI_CLIP_STD"):
        assert getattr(fd, k) == getattr(timm_data, k)


def test_errors():
    with pytest.raises(NotImplementedError, match="tf_preprocessing"):
        fd.create_transform(224, tf_preprocessing=True)
    with pytest.raises(ValueError, match="train_crop_mode"):
        fd.create_transform(224, is_training=True, train_crop_mode="nope")
    with pytest.raises(ValueError, match="'q3'"):
        fd.create_transform(224, is_training=True, auto_augment="rand-q3")
    with pytest.raises(ValueError):
        fd.resolve_data_config(dict(input_size=(224, 224)))
    with pytest.raises(ValueError, match="channels"):
        fd.resolve_data_config(dict(mean=(0.1, 0.2)))


def test_train_pipeline_runs_and_is_seeded():
    import flowvision.transforms as T
    img = Image.fromarray(np.random.default_rng(0).integers(0, 256, (256, 300, 3), dtype=np.uint8))
    outs = []
    for _ in range(2):
        T.manual_seed(0)
        tf = fd.create_transform(224, is_training=True, auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.5,
                                 interpolation="bicubic", seed=3)
        outs.append([np.asarray(tf(img).numpy()).copy() for _ in range(3)])
    for a, b in zip(*outs):
        assert a.shape == (3, 224, 224) and a.dtype == np.float32
        np.testing.assert_array_equal(a, b)
