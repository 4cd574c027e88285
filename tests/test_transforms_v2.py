"""flowvision.transforms.v2 vs torchvision.transforms.v2 (0.29): images, masks and boxes under the same
parameters; one draw per call applied to every item of a sample."""
import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as TV2
import torchvision.transforms.v2.functional as TF2
from torchvision import tv_tensors as TVT

import flowvision.backend as fb
import flowvision.transforms as T
import flowvision.transforms.v2 as V2
import flowvision.transforms.v2.functional as F2
from flowvision.transforms.v2 import tv_tensors as FVT

from test_transforms_helpers import assert_float_close, assert_u8_close, rand_u8, to_np

H, W = 37, 53
FORMATS = ["XYXY", "XYWH", "CXCYWH"]


def _boxes_xyxy(dtype=np.float32):
    b = np.array([[3, 4, 20, 30], [10, 2, 50, 35], [40, 20, 52, 36], [0, 0, 5, 5]], np.float64)
    return b.astype(dtype)


def _fmt_boxes(fmt, dtype=np.float32):
    xyxy = torch.from_numpy(_boxes_xyxy(np.float32))
    arr = TF2.convert_bounding_box_format(xyxy, old_format=TVT.BoundingBoxFormat.XYXY,
                                          new_format=TVT.BoundingBoxFormat[fmt]).numpy().astype(dtype)
    return arr


def sample(fmt="XYXY", box_dtype=np.float32, img_dtype=np.uint8):
    img = np.moveaxis(rand_u8(H, W, smooth=True, seed=5), -1, 0).copy()
    if img_dtype == np.float32:
        img = (img / 255).astype(np.float32)
    mask = (np.arange(H * W).reshape(H, W) % 7 == 0).astype(np.uint8) * 3
    mask[5:20, 10:30] = 1
    boxes = _fmt_boxes(fmt, box_dtype)
    ours = dict(image=FVT.Image(img.copy()), mask=FVT.Mask(mask.copy()),
                boxes=FVT.BoundingBoxes(boxes.copy(), format=fmt, canvas_size=(H, W)),
                labels=fb.from_numpy(np.arange(4)), meta="keep")
    ref = dict(image=TVT.Image(torch.from_numpy(img.copy())), mask=TVT.Mask(torch.from_numpy(mask.copy())),
               boxes=TVT.BoundingBoxes(torch.from_numpy(boxes.copy()), format=fmt, canvas_size=(H, W)),
               labels=torch.arange(4), meta="keep")
    return ours, ref


def compare(ours, ref, box_atol=1e-3):
    assert set(ours) == set(ref)
    assert ours["meta"] == "keep"
    oi, ri = to_np(ours["image"]), ref["image"].numpy()
    assert isinstance(ours["image"], FVT.Image)
    if ri.dtype == np.uint8:
        assert_u8_close(oi, ri)
    else:
        assert_float_close(oi, ri, atol=1e-4)
    assert isinstance(ours["mask"], FVT.Mask)
    np.testing.assert_array_equal(to_np(ours["mask"]), ref["mask"].numpy())
    ob, rb = ours["boxes"], ref["boxes"]
    assert isinstance(ob, FVT.BoundingBoxes)
    assert tuple(ob.canvas_size) == tuple(rb.canvas_size)
    assert ob.format.name == rb.format.name
    assert to_np(ob).dtype == rb.numpy().dtype
    np.testing.assert_allclose(to_np(ob), rb.numpy(), atol=box_atol)
    np.testing.assert_array_equal(to_np(ours["labels"]), ref["labels"].numpy())


def _run_fn(name, args, kwargs, fmt="XYXY", box_dtype=np.float32, img_dtype=np.uint8, ref_args=None):
    ours, ref = sample(fmt, box_dtype, img_dtype)
    ra = ref_args if ref_args is not None else args
    o = {k: (getattr(F2, name)(v, *args, **kwargs) if k in ("image", "mask", "boxes") else v) for k, v in ours.items()}
    r = {k: (getattr(TF2, name)(v, *ra, **kwargs) if k in ("image", "mask", "boxes") else v) for k, v in ref.items()}
    compare(o, r)


GEOM = [
    ("resize", ([20],), {}), ("resize", ([50, 70],), {}), ("resize", ([24],), {"max_size": 30}),
    ("resize", ([30, 20],), {"antialias": False}),
    ("crop", (3, 5, 20, 30), {}), ("crop", (-4, -6, 30, 50), {}), ("crop", (10, 20, 40, 40), {}),
    ("center_crop", ([21, 31],), {}), ("center_crop", ([50, 60],), {}),
    ("resized_crop", (2, 3, 25, 40, [33, 21]), {}),
    ("pad", ([3, 5],), {}), ("pad", ([1, 2, 3, 4],), {"fill": 0}),
    ("horizontal_flip", (), {}), ("vertical_flip", (), {}),
    ("rotate", (30.0,), {}), ("rotate", (-75.0,), {"expand": True}), ("rotate", (20.0,), {"center": [10, 5]}),
    ("affine", (), dict(angle=15.0, translate=[3, -4], scale=1.1, shear=[5.0, 2.0])),
    ("affine", (), dict(angle=-30.0, translate=[0, 0], scale=0.8, shear=0.0, center=[20, 10])),
    ("perspective", ([[0, 0], [52, 0], [52, 36], [0, 36]], [[3, 2], [50, 1], [49, 35], [2, 30]]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", GEOM, ids=[f"{g[0]}{i}" for i, g in enumerate(GEOM)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_geometry_functional(name, args, kwargs, fmt):
    _run_fn(name, args, kwargs, fmt)


@pytest.mark.parametrize("name,args,kwargs", GEOM[::3], ids=[f"{g[0]}{i}" for i, g in enumerate(GEOM[::3])])
@pytest.mark.parametrize("box_dtype", [np.int64])
def test_geometry_int_boxes_float_image(name, args, kwargs, box_dtype):
    _run_fn(name, args, kwargs, "XYXY", box_dtype, np.float32)


@pytest.mark.parametrize("interp", ["nearest", "bilinear"])
def test_elastic_functional(interp):
    rng = np.random.default_rng(0)
    d = ((rng.random((1, H, W, 2)) - 0.5) * 0.1).astype(np.float32)
    ours, ref = sample()
    o = {k: (F2.elastic(v, fb.from_numpy(d), interpolation=interp) if k in ("image", "mask", "boxes") else v)
         for k, v in ours.items()}
    r = {k: (TF2.elastic(v, torch.from_numpy(d), interpolation=TV2.InterpolationMode(interp))
             if k in ("image", "mask", "boxes") else v) for k, v in ref.items()}
    compare(o, r)


@pytest.mark.parametrize("old", FORMATS)
@pytest.mark.parametrize("new", FORMATS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_convert_and_clamp(old, new, dtype):
    arr = _fmt_boxes(old, dtype) * (2 if dtype == np.int64 else 1.5)
    arr = arr.astype(dtype)
    ob = FVT.BoundingBoxes(arr, format=old, canvas_size=(H, W))
    rb = TVT.BoundingBoxes(torch.from_numpy(arr), format=old, canvas_size=(H, W))
    o = F2.convert_bounding_box_format(ob, new_format=new)
    r = TF2.convert_bounding_box_format(rb, new_format=new)
    np.testing.assert_allclose(to_np(o), r.numpy(), atol=1e-4)
    assert o.format.name == new
    np.testing.assert_allclose(to_np(F2.clamp_bounding_boxes(ob)), TF2.clamp_bounding_boxes(rb).numpy(), atol=1e-4)
    np.testing.assert_allclose(to_np(V2.ClampBoundingBoxes()(ob)), TV2.ClampBoundingBoxes()(rb).numpy(), atol=1e-4)
    np.testing.assert_allclose(to_np(V2.ConvertBoundingBoxFormat(new)(ob)),
                               TV2.ConvertBoundingBoxFormat(new)(rb).numpy(), atol=1e-4)


def test_sanitize_bounding_boxes():
    arr = np.array([[0, 0, 10, 10], [5, 5, 5.5, 20], [-1, 2, 8, 9], [30, 30, 60, 36], [2, 2, 3, 3],
                    [10, 10, 40, 30]], np.float32)
    ours, ref = sample()
    ours["boxes"] = FVT.BoundingBoxes(arr, format="XYXY", canvas_size=(H, W))
    ref["boxes"] = TVT.BoundingBoxes(torch.from_numpy(arr), format="XYXY", canvas_size=(H, W))
    ours["labels"] = fb.from_numpy(np.arange(6))
    ref["labels"] = torch.arange(6)
    masks = np.zeros((6, H, W), np.uint8)
    masks[np.arange(6), np.arange(6), np.arange(6)] = 1
    ours["mask"] = FVT.Mask(masks.copy())
    ref["mask"] = TVT.Mask(torch.from_numpy(masks.copy()))
    for kw in (dict(), dict(min_size=3, min_area=20)):
        compare(V2.SanitizeBoundingBoxes(**kw)(dict(ours)), TV2.SanitizeBoundingBoxes(**kw)(dict(ref)))
    ob, valid = F2.sanitize_bounding_boxes(ours["boxes"])
    rb, rvalid = TF2.sanitize_bounding_boxes(ref["boxes"])
    np.testing.assert_array_equal(to_np(valid), rvalid.numpy())


# ----------------------------------------------------------------------------- classes with shared params
def _to_torch_params(p):
    out = {}
    for k, v in p.items():
        if k in ("is_within_crop_area",):
            out[k] = torch.from_numpy(np.asarray(v))
        elif k == "displacement":
            out[k] = torch.from_numpy(np.asarray(v))
        elif k == "fn_idx":
            out[k] = torch.tensor(v)
        elif k == "channel_permutation" and v is not None:
            out[k] = torch.tensor(v)
        else:
            out[k] = v
    return out


def _run_class(monkeypatch, ours_t, ref_t, fmt="XYXY", seed=0, convert=_to_torch_params, transform_first=None):
    T.manual_seed(seed)
    ours, ref = sample(fmt)
    flat_params = {}
    real = type(ours_t).make_params

    def ours_make(self, flat):
        flat_params["p"] = real(self, flat)
        return flat_params["p"]

    monkeypatch.setattr(type(ours_t), "make_params", ours_make)
    monkeypatch.setattr(type(ref_t), "make_params", lambda self, flat: convert(flat_params["p"]))
    o = ours_t(ours)
    r = ref_t(ref)
    compare(o, r)
    return flat_params["p"]


CLASSES = [
    ("Resize(25)", lambda M: M.Resize(25)),
    ("RandomResizedCrop", lambda M: M.RandomResizedCrop(24)),
    ("RandomCrop", lambda M: M.RandomCrop(30, padding=4)),
    ("RandomCrop_pad_if_needed", lambda M: M.RandomCrop([45, 60], pad_if_needed=True)),
    ("RandomHorizontalFlip", lambda M: M.RandomHorizontalFlip(1.0)),
    ("RandomVerticalFlip", lambda M: M.RandomVerticalFlip(1.0)),
    ("RandomZoomOut", lambda M: M.RandomZoomOut(fill={M.tv_tensors.Image if hasattr(M, "tv_tensors") else None: 7,
                                                      "others": 0} if False else 0, p=1.0)),
    ("RandomRotation", lambda M: M.RandomRotation(40, expand=True)),
    ("RandomAffine", lambda M: M.RandomAffine(20, (0.1, 0.1), (0.8, 1.2), (-5, 5, -5, 5))),
    ("RandomPerspective", lambda M: M.RandomPerspective(0.4, p=1.0)),
    ("ElasticTransform", lambda M: M.ElasticTransform(alpha=20.0, sigma=4.0)),
    ("RandomIoUCrop", lambda M: M.RandomIoUCrop()),
    ("ScaleJitter", lambda M: M.ScaleJitter((40, 60))),
    ("RandomShortestSize", lambda M: M.RandomShortestSize([20, 30, 40], max_size=60)),
    ("RandomResize", lambda M: M.RandomResize(20, 50)),
    ("CenterCrop", lambda M: M.CenterCrop(30)),
    ("Pad", lambda M: M.Pad([2, 3], fill=5)),
    ("ColorJitter", lambda M: M.ColorJitter(0.4, 0.4, 0.4, 0.1)),
    ("RandomPhotometricDistort", lambda M: M.RandomPhotometricDistort(p=1.0)),
    ("Grayscale", lambda M: M.Grayscale(3)),
    ("GaussianBlur", lambda M: M.GaussianBlur(5)),
]


@pytest.mark.parametrize("name,make", CLASSES, ids=[c[0] for c in CLASSES])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", [0, 1])
def test_v2_classes(monkeypatch, name, make, fmt, seed):
    ours_t, ref_t = make(V2), make(TV2)
    if name == "ColorJitter":
        def conv(p):
            q = _to_torch_params(p)
            return q
    else:
        conv = _to_torch_params
    _run_class(monkeypatch, ours_t, ref_t, fmt, seed, conv)


def test_one_draw_per_call_applies_to_all():
    T.manual_seed(0)
    img = FVT.Image(np.arange(2 * 4 * 6, dtype=np.uint8).reshape(2, 4, 6))
    pair = (img, FVT.Image(img.numpy().copy()))
    for _ in range(10):
        a, b = V2.RandomHorizontalFlip()(pair)
        np.testing.assert_array_equal(to_np(a), to_np(b))
        a, b = V2.RandomResizedCrop(3)(pair)
        np.testing.assert_array_equal(to_np(a), to_np(b))


def test_pure_tensor_heuristic_and_passthrough():
    t = fb.from_numpy(rand_u8(8, 9).transpose(2, 0, 1).copy())
    other = fb.from_numpy(np.zeros((3, 8, 9), np.uint8))
    out_a, out_b, s, n = V2.Resize(4)(t, other, "x", 3)
    assert tuple(out_a.shape) == (3, 4, 4) and tuple(out_b.shape) == (3, 8, 9) and s == "x" and n == 3
    # with an explicit Image, pure tensors pass through
    img = FVT.Image(t)
    i2, t2 = V2.Resize(4)(img, t)
    assert isinstance(i2, FVT.Image) and tuple(i2.shape) == (3, 4, 4) and tuple(t2.shape) == (3, 8, 9)
    # numpy HWC arrays and PIL images are images too
    arr = rand_u8(8, 9)
    assert V2.Resize(4)(arr).shape == (4, 4, 3)
    assert V2.Resize(4)(T.functional.to_pil_image(arr)).size == (4, 4)


def test_type_conversion():
    arr = rand_u8(8, 9)
    img = V2.ToImage()(arr)
    assert isinstance(img, FVT.Image) and tuple(img.shape) == (3, 8, 9)
    ref = TV2.ToImage()(arr)
    np.testing.assert_array_equal(to_np(img), ref.numpy())
    pil = T.functional.to_pil_image(arr)
    np.testing.assert_array_equal(to_np(V2.ToImage()(pil)), TV2.ToImage()(pil).numpy())
    f = V2.ToDtype(fb.float32, scale=True)(img)
    assert isinstance(f, FVT.Image)
    assert_float_close(to_np(f), TV2.ToDtype(torch.float32, scale=True)(ref).numpy(), atol=1e-6)
    back = V2.ToDtype(fb.uint8, scale=True)(f)
    np.testing.assert_array_equal(to_np(back), TV2.ToDtype(torch.uint8, scale=True)(
        TV2.ToDtype(torch.float32, scale=True)(ref)).numpy())
    d = V2.ToDtype({FVT.Image: fb.float32, "others": None}, scale=True)(
        {"image": img, "mask": FVT.Mask(np.zeros((8, 9), np.uint8))})
    assert to_np(d["image"]).dtype == np.float32 and to_np(d["mask"]).dtype == np.uint8
    pure = V2.ToPureTensor()(img)
    assert fb.is_tensor(pure) and not isinstance(pure, FVT.Image)
    n = V2.Normalize([0.5, 0.5, 0.5], [0.2, 0.2, 0.2])(f)
    assert isinstance(n, FVT.Image)
    assert_float_close(to_np(n), TV2.Normalize([0.5] * 3, [0.2] * 3)(
        TV2.ToDtype(torch.float32, scale=True)(ref)).numpy(), atol=1e-5)


@pytest.mark.parametrize("cls", ["CutMix", "MixUp"])
@pytest.mark.parametrize("labels_2d", [False, True])
def test_cutmix_mixup(monkeypatch, cls, labels_2d):
    rng = np.random.default_rng(0)
    imgs = rng.random((5, 3, 12, 14)).astype(np.float32)
    labels = np.array([0, 3, 1, 2, 3])
    if labels_2d:
        labels = np.eye(4, dtype=np.float32)[labels]
    T.manual_seed(1)
    ours_t = getattr(V2, cls)(num_classes=4)
    ref_t = getattr(TV2, cls)(num_classes=4)
    box = {}
    real = type(ours_t).make_params
    monkeypatch.setattr(type(ours_t), "make_params", lambda self, flat: box.setdefault("p", real(self, flat)))
    monkeypatch.setattr(type(ref_t), "make_params", lambda self, flat: box["p"])
    oi, ol = ours_t(FVT.Image(imgs.copy()) if False else fb.from_numpy(imgs.copy()), fb.from_numpy(labels.copy()))
    ri, rl = ref_t(torch.from_numpy(imgs.copy()), torch.from_numpy(labels.copy()))
    assert_float_close(to_np(oi), ri.numpy(), atol=1e-6)
    assert_float_close(to_np(ol), rl.numpy(), atol=1e-6)


def test_cutmix_mixup_errors():
    imgs = fb.from_numpy(np.zeros((4, 3, 8, 8), np.float32))
    with pytest.raises(ValueError):
        V2.CutMix()(imgs, fb.from_numpy(np.arange(4)))  # num_classes missing for 1-D labels
    with pytest.raises(ValueError):
        V2.MixUp(num_classes=4)(imgs, fb.from_numpy(np.arange(3)))  # batch mismatch
    with pytest.raises(ValueError):
        V2.MixUp(num_classes=4)(T.functional.to_pil_image(rand_u8(4, 4)), fb.from_numpy(np.arange(1)))


def test_zoom_out_iou_crop_keep_boxes_inside():
    T.manual_seed(3)
    t = V2.Compose([V2.RandomZoomOut(p=1.0), V2.RandomIoUCrop(), V2.SanitizeBoundingBoxes()])
    for _ in range(10):
        ours, _ = sample()
        out = t(ours)
        b = to_np(out["boxes"])
        h, w = out["boxes"].canvas_size
        assert (b[:, 0::2] <= w).all() and (b[:, 1::2] <= h).all() and (b >= 0).all()
        assert tuple(out["image"].shape[-2:]) == (h, w) == tuple(out["mask"].shape[-2:])
        assert b.shape[0] == to_np(out["labels"]).shape[0]


def test_register_kernel():
    class MyType(FVT.TVTensor):
        pass

    @F2.register_kernel(F2.horizontal_flip, MyType)
    def _flip(x):
        return "flipped"

    assert F2.horizontal_flip(MyType._from_array(np.zeros((1, 2, 2)))) == "flipped"


def test_tv_tensors_basics():
    b = FVT.BoundingBoxes([1, 2, 3, 4], format="xywh", canvas_size=(10, 20))
    assert tuple(b.shape) == (1, 4) and b.format == FVT.BoundingBoxFormat.XYWH
    plain = b + 1
    assert not isinstance(plain, FVT.BoundingBoxes)
    w = FVT.wrap(plain, like=b)
    assert isinstance(w, FVT.BoundingBoxes) and w.canvas_size == (10, 20)
    with pytest.raises(ValueError):
        FVT.BoundingBoxes(np.zeros((2, 3)), format="XYXY", canvas_size=(5, 5))
    with pytest.raises(ValueError):
        FVT.BoundingBoxes(np.zeros((2, 4)), format="XYXYXY", canvas_size=(5, 5))
    assert tuple(FVT.Image(np.zeros((5, 6))).shape) == (1, 5, 6)
    with pytest.raises(ValueError):
        FVT.Video(np.zeros((3, 4, 5)))


COLOR = [("adjust_brightness", (1.3,)), ("adjust_contrast", (0.6,)), ("adjust_contrast", (1.7,)),
         ("adjust_saturation", (0.3,)), ("adjust_saturation", (1.6,)), ("adjust_sharpness", (1.9,)),
         ("adjust_hue", (0.2,)), ("rgb_to_grayscale", (3,)), ("rgb_to_grayscale", (1,)), ("invert", ()),
         ("posterize", (3,)), ("solarize", (100,)), ("autocontrast", ()), ("equalize", ()),
         ("adjust_gamma", (0.7,)), ("gaussian_blur", ([5, 3], [1.2, 0.8])), ("permute_channels", ([2, 0, 1],))]


@pytest.mark.parametrize("name,args", COLOR, ids=[f"{c[0]}{i}" for i, c in enumerate(COLOR)])
@pytest.mark.parametrize("kind", ["image_u8", "batch_u8", "image_f32", "pil", "np_u8"])
def test_color_functional_v2(name, args, kind):
    a = rand_u8(19, 23, seed=9)
    if kind == "image_f32" and name in ("posterize", "equalize"):
        return
    if kind == "image_f32" and name == "solarize":
        args = (0.4,)
    chw = np.moveaxis(a, -1, 0).copy()
    if kind == "pil":
        pil = T.functional.to_pil_image(a)
        o, r = getattr(F2, name)(pil, *args), getattr(TF2, name)(pil, *args)
        assert_u8_close(np.asarray(o), np.asarray(r))
        return
    if kind == "image_u8":
        ours_in, ref_in = FVT.Image(chw), TVT.Image(torch.from_numpy(chw))
    elif kind == "batch_u8":
        b = np.stack([chw, chw[:, ::-1].copy()])
        ours_in, ref_in = fb.from_numpy(b), torch.from_numpy(b)
    elif kind == "np_u8":
        ours_in, ref_in = a, torch.from_numpy(chw)
    else:
        f = (chw / 255).astype(np.float32)
        ours_in, ref_in = FVT.Image(f), TVT.Image(torch.from_numpy(f))
    o = getattr(F2, name)(ours_in, *args)
    r = getattr(TF2, name)(ref_in, *args)
    if kind == "image_u8" or kind == "image_f32":
        assert isinstance(o, FVT.Image)
    o = to_np(o)
    if kind == "np_u8":
        o = np.moveaxis(o, -1, 0)
    r = r.numpy()
    if r.dtype == np.uint8:
        assert_u8_close(o, r)
    else:
        assert_float_close(o, r, atol=1e-5)


@pytest.mark.parametrize("interp", ["bilinear", "bicubic", "nearest", "nearest-exact"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("size", [[20, 28], [50, 71], [37, 20]])
def test_resize_image_v2_uint8(interp, antialias, size):
    chw = np.moveaxis(rand_u8(37, 53, seed=2), -1, 0).copy()
    o = F2.resize(FVT.Image(chw), size, interpolation=interp, antialias=antialias)
    r = TF2.resize(TVT.Image(torch.from_numpy(chw)), size, interpolation=TV2.InterpolationMode(interp),
                   antialias=antialias)
    assert_u8_close(to_np(o), r.numpy())


def test_video_and_misc_v2():
    rng = np.random.default_rng(0)
    vid = rng.integers(0, 255, (4, 3, 20, 24), dtype=np.uint8)
    ov, rv = FVT.Video(vid.copy()), TVT.Video(torch.from_numpy(vid.copy()))
    for name, args in (("resize", ([10, 12],)), ("horizontal_flip", ()), ("crop", (2, 3, 10, 11)),
                       ("rotate", (20.0,)), ("adjust_brightness", (1.3,)), ("adjust_saturation", (0.5,))):
        o, r = getattr(F2, name)(ov, *args), getattr(TF2, name)(rv, *args)
        assert isinstance(o, FVT.Video)
        assert_u8_close(to_np(o), r.numpy())
    o = V2.UniformTemporalSubsample(2)(ov)
    np.testing.assert_array_equal(to_np(o), TV2.UniformTemporalSubsample(2)(rv).numpy())
    g = FVT.Image(rng.integers(0, 255, (1, 8, 9), dtype=np.uint8))
    np.testing.assert_array_equal(to_np(V2.RGB()(g)), TV2.RGB()(TVT.Image(torch.from_numpy(to_np(g).copy()))).numpy())
    img = FVT.Image(rng.integers(0, 255, (3, 20, 24), dtype=np.uint8))
    ref_img = TVT.Image(torch.from_numpy(to_np(img).copy()))
    for o, r in zip(V2.FiveCrop(8)(img), TV2.FiveCrop(8)(ref_img)):
        np.testing.assert_array_equal(to_np(o), r.numpy())
    for o, r in zip(V2.TenCrop(8, vertical_flip=True)(img), TV2.TenCrop(8, vertical_flip=True)(ref_img)):
        np.testing.assert_array_equal(to_np(o), r.numpy())
    f = V2.GaussianNoise(sigma=0.05)(FVT.Image(np.full((3, 8, 9), 0.5, np.float32)))
    assert isinstance(f, FVT.Image) and 0.3 < to_np(f).mean() < 0.7 and to_np(f).std() > 0.01
    j = V2.JPEG(50)(img)
    assert isinstance(j, FVT.Image) and tuple(j.shape) == (3, 20, 24)


def test_channel_permutation_and_erasing_v2(monkeypatch):
    ours, ref = sample()
    _run_class(monkeypatch, V2.RandomChannelPermutation(), TV2.RandomChannelPermutation(),
               convert=lambda p: {"permutation": torch.tensor(p["permutation"])})
    ours, ref = sample(img_dtype=np.float32)
    T.manual_seed(2)
    t = V2.RandomErasing(p=1.0, value=0.3)
    p = t.make_params([ours["image"]])
    monkeypatch.setattr(V2.RandomErasing, "make_params", lambda self, flat: p)
    monkeypatch.setattr(TV2.RandomErasing, "make_params", lambda self, flat: dict(
        i=p["i"], j=p["j"], h=p["h"], w=p["w"], v=torch.from_numpy(np.asarray(p["v"]))))
    o = V2.RandomErasing(p=1.0, value=0.3)(ours)
    r = TV2.RandomErasing(p=1.0, value=0.3)(ref)
    compare(o, r)


def test_custom_v2_transform_subclass():
    class MyFlip(V2.Transform):
        def make_params(self, flat_inputs):
            return {"do": True}

        def transform(self, inpt, params):
            return self._call_kernel(F2.horizontal_flip, inpt) if params["do"] else inpt

    ours, ref = sample()
    out = MyFlip()(ours)
    r = {k: (TF2.horizontal_flip(v) if k in ("image", "mask", "boxes") else v) for k, v in ref.items()}
    compare(out, r)
