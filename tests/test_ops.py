"""flowvision.ops vs torchvision.ops: values, kept indices and gradients on random, degenerate, tied and empty
inputs."""
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tvops = pytest.importorskip("torchvision.ops")

import flowvision.backend as flow  # noqa: E402
import flowvision.ops as ops  # noqa: E402
from flowvision.backend import nn  # noqa: E402
from flowvision.backend.autograd import gradcheck  # noqa: E402


def T(a, requires_grad=False):
    t = flow.tensor(np.asarray(a))
    return t.requires_grad_() if requires_grad else t


def R(a, requires_grad=False):
    t = torch.tensor(np.asarray(a))
    return t.requires_grad_() if requires_grad else t


def npy(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def rand_boxes(n, seed=0, scale=50.0, dtype=np.float32, degenerate=False):
    rng = np.random.default_rng(seed)
    b = rng.random((n, 4)) * scale
    b[:, 2:] = b[:, :2] + rng.random((n, 2)) * scale / 2
    if degenerate and n >= 4:
        b[0, 2] = b[0, 0]          # zero width
        b[1, 3] = b[1, 1]          # zero height
        b[2] = b[3]                # duplicate box
    return b.astype(dtype)


def close(a, b, atol=1e-5, rtol=1e-5):
    np.testing.assert_allclose(npy(a), npy(b), atol=atol, rtol=rtol)


# ------------------------------------------------------------------ boxes
@pytest.mark.parametrize("fmt", ["xyxy", "xywh", "cxcywh"])
def test_box_area_iou_convert(fmt):
    b1, b2 = rand_boxes(7, 1, degenerate=True), rand_boxes(5, 2)
    close(ops.box_area(T(b1), fmt=fmt), tvops.box_area(R(b1), fmt=fmt))
    close(ops.box_iou(T(b1), T(b2), fmt=fmt), tvops.box_iou(R(b1), R(b2), fmt=fmt))
    for out in ["xyxy", "xywh", "cxcywh"]:
        close(ops.box_convert(T(b1), fmt, out), tvops.box_convert(R(b1), fmt, out))
    with pytest.raises(ValueError):
        ops.box_convert(T(b1), fmt, "xyxyxyxy")


def test_box_area_int_upcast_and_batched_iou():
    b = (rand_boxes(6, 3) * 2).astype(np.uint8)
    a, at = ops.box_area(T(b)), tvops.box_area(R(b))
    assert str(a.dtype).endswith(str(at.dtype).split(".")[-1])
    np.testing.assert_array_equal(npy(a), npy(at))
    bb1, bb2 = rand_boxes(12, 4).reshape(2, 6, 4), rand_boxes(8, 5).reshape(2, 4, 4)
    close(ops.box_iou(T(bb1), T(bb2)), tvops.box_iou(R(bb1), R(bb2)))


@pytest.mark.parametrize("name", ["generalized_box_iou", "distance_box_iou", "complete_box_iou"])
def test_pairwise_iou_variants(name):
    b1, b2 = rand_boxes(6, 5, degenerate=True)[2:], rand_boxes(4, 6)
    close(getattr(ops, name)(T(b1), T(b2)), getattr(tvops, name)(R(b1), R(b2)), atol=1e-5)
    e = np.zeros((0, 4), np.float32)
    assert tuple(getattr(ops, name)(T(e), T(b2)).shape) == (0, 4)


@pytest.mark.parametrize("name", ["generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_box_iou_losses_and_grads(name, reduction):
    b1, b2 = rand_boxes(8, 7).astype(np.float64), rand_boxes(8, 8).astype(np.float64)
    b2[0] = b1[0]  # identical pair
    b2[1] = b1[1] + 100  # disjoint pair
    x, xt = T(b1, True), R(b1, True)
    out = getattr(ops, name)(x, T(b2), reduction=reduction, eps=1e-6)
    ref = getattr(tvops, name)(xt, R(b2), reduction=reduction, eps=1e-6)
    close(out, ref, atol=1e-10, rtol=1e-9)
    out.sum().backward()
    ref.sum().backward()
    close(x.grad, xt.grad, atol=1e-10, rtol=1e-8)
    # empty input, mean reduction: 0 (not NaN), as torchvision
    e = np.zeros((0, 4))
    assert float(getattr(ops, name)(T(e), T(e), reduction="mean")) == 0.0
    with pytest.raises(ValueError):
        getattr(ops, name)(T(b1), T(b2), reduction="avg")


@pytest.mark.parametrize("alpha,gamma", [(0.25, 2), (-1, 1.5), (0.7, 0)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_sigmoid_focal_loss(alpha, gamma, reduction):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 9)) * 3).astype(np.float64)
    t = (rng.random((4, 9)) > 0.7).astype(np.float64)
    a, at = T(x, True), R(x, True)
    out = ops.sigmoid_focal_loss(a, T(t), alpha, gamma, reduction)
    ref = tvops.sigmoid_focal_loss(at, R(t), alpha, gamma, reduction)
    close(out, ref, atol=1e-12, rtol=1e-10)
    out.sum().backward()
    ref.sum().backward()
    close(a.grad, at.grad, atol=1e-12, rtol=1e-9)
    with pytest.raises(ValueError):
        ops.sigmoid_focal_loss(a, T(t), alpha=1.5)


def test_clip_remove_small_masks_to_boxes():
    b = rand_boxes(20, 9, scale=80) - 10
    close(ops.clip_boxes_to_image(T(b), (37, 45)), tvops.clip_boxes_to_image(R(b), (37, 45)))
    for m in (0.0, 3.0, 12.5):
        np.testing.assert_array_equal(npy(ops.remove_small_boxes(T(b), m)), npy(tvops.remove_small_boxes(R(b), m)))
    rng = np.random.default_rng(0)
    masks = np.zeros((5, 17, 23), np.uint8)
    masks[0, 3:9, 4:15] = 1
    masks[1, 5, 7] = 1                            # single pixel
    masks[3] = rng.random((17, 23)) > 0.97        # scattered; mask 2 and 4 empty
    masks[4, :, 22] = 1                           # one column
    np.testing.assert_array_equal(npy(ops.masks_to_boxes(T(masks))), npy(tvops.masks_to_boxes(R(masks))))
    assert tuple(ops.masks_to_boxes(T(np.zeros((0, 4, 4)))).shape) == (0, 4)


# ------------------------------------------------------------------ nms
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("thr", [0.0, 0.3, 0.5, 0.9])
def test_nms_keep_identical(dtype, thr):
    rng = np.random.default_rng(int(thr * 10))
    b = rand_boxes(300, 11, scale=100, dtype=dtype, degenerate=True)
    s = rng.random(300).astype(dtype)
    s[50:80] = s[40]            # ties: stable order
    s[100:105] = 0.5
    keep = ops.nms(T(b), T(s), thr)
    ref = tvops.nms(R(b), R(s), thr)
    assert keep.dtype == flow.int64
    np.testing.assert_array_equal(npy(keep), npy(ref))


def test_nms_empty_and_bad_input():
    e = np.zeros((0, 4), np.float32)
    assert tuple(ops.nms(T(e), T(np.zeros(0, np.float32)), 0.5).shape) == (0,)
    assert tuple(ops.batched_nms(T(e), T(np.zeros(0, np.float32)), T(np.zeros(0, np.int64)), 0.5).shape) == (0,)
    with pytest.raises(ValueError):
        ops.nms(T(np.zeros((3, 5), np.float32)), T(np.zeros(3, np.float32)), 0.5)
    with pytest.raises(ValueError):
        ops.nms(T(np.zeros((3, 4), np.float32)), T(np.zeros(2, np.float32)), 0.5)


@pytest.mark.parametrize("n", [200, 1500])  # 1500 boxes * 4 > 4000: torchvision's per-class path
def test_batched_nms(n):
    rng = np.random.default_rng(n)
    b = rand_boxes(n, n, scale=60)
    s = rng.random(n).astype(np.float32)
    idx = rng.integers(0, 5, n)
    keep = ops.batched_nms(T(b), T(s), T(idx), 0.5)
    ref = tvops.batched_nms(R(b), R(s), R(idx), 0.5)
    np.testing.assert_array_equal(npy(keep), npy(ref))


# ------------------------------------------------------------------ RoIAlign / RoIPool
def _roi_inputs(dtype=np.float32, seed=0, n=2, k=12, c=3, h=13, w=17):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    b = rand_boxes(k, seed + 1, scale=2 * w, dtype=dtype, degenerate=True) - 3  # some outside, some degenerate
    b[-1] = [-30, -30, -20, -20]  # fully outside
    rois = np.concatenate([rng.integers(0, n, (k, 1)).astype(dtype), b], 1)
    return x, rois


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 0, 2])
@pytest.mark.parametrize("scale,out", [(0.5, (5, 4)), (1.0, 3)])
def test_roi_align_forward_backward(aligned, sampling_ratio, scale, out):
    x, rois = _roi_inputs()
    xf, xt = T(x, True), R(x, True)
    y = ops.roi_align(xf, T(rois), out, scale, sampling_ratio, aligned)
    yt = tvops.roi_align(xt, R(rois), out, scale, sampling_ratio, aligned)
    close(y, yt, atol=1e-5)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    (y * T(g)).sum().backward()
    (yt * R(g)).sum().backward()
    close(xf.grad, xt.grad, atol=1e-5)


@pytest.mark.parametrize("box", [[1, 9.0, 2.0, 3.0, 8.0], [0, 9.0, 8.0, 3.0, 2.0], [1, 3.0, 8.0, 9.0, 2.0]])
def test_roi_align_inverted_box_aligned(box):
    # x2 < x1 and/or y2 < y1 with aligned=True: a negative sampling grid has no samples, so the output and its
    # gradient are 0. torchvision gives 0 when both sides are inverted and raises (a C++ vector-size error) when
    # only one is; we give 0 in every case.
    x, _ = _roi_inputs()
    rois = np.array([box], np.float32)
    xf = T(x, True)
    y = ops.roi_align(xf, T(rois), (3, 2), 1.0, -1, True)
    assert tuple(y.shape) == (1, 3, 3, 2) and not np.any(npy(y))
    y.sum().backward()
    assert not np.any(npy(xf.grad))
    if box[1] > box[3] and box[2] > box[4]:
        close(y, tvops.roi_align(R(x), R(rois), (3, 2), 1.0, -1, True), atol=0)


def test_roi_align_list_boxes_module_and_empty():
    x, rois = _roi_inputs(np.float64, seed=3)
    boxes = [rois[rois[:, 0] == i, 1:] for i in range(2)]
    y = ops.roi_align(T(x), [T(b) for b in boxes], (4, 4), 0.25, 2, True)
    yt = tvops.roi_align(R(x), [R(b) for b in boxes], (4, 4), 0.25, 2, True)
    close(y, yt, atol=1e-12)
    m = ops.RoIAlign((4, 4), 0.25, 2, aligned=True)
    assert repr(m) == repr(tvops.RoIAlign((4, 4), 0.25, 2, aligned=True))
    close(m(T(x), [T(b) for b in boxes]), yt, atol=1e-12)
    e = ops.roi_align(T(x), T(np.zeros((0, 5))), 3)
    assert tuple(e.shape) == (0, 3, 3, 3)
    with pytest.raises(ValueError):
        ops.roi_align(T(x), T(np.zeros((2, 4))), 3)
    with pytest.raises(ValueError):   # batch index out of range
        ops.roi_align(T(x), T(np.array([[5, 0, 0, 4, 4.0]])), 3)


def test_roi_align_gradcheck_float64():
    x, rois = _roi_inputs(np.float64, seed=5, k=5, c=2, h=7, w=8)
    rois[:, 1:] = np.abs(rois[:, 1:]) % 8  # inside, so the sampling grid is smooth
    rois[:, 3:] = rois[:, 1:3] + 2.3
    xf = T(x, True)
    for aligned, sr in [(False, 2), (True, -1)]:
        assert gradcheck(lambda t: ops.roi_align(t, T(rois), (3, 2), 0.8, sr, aligned), (xf,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_pool_forward_backward(scale):
    x, rois = _roi_inputs(seed=7)
    xf, xt = T(x, True), R(x, True)
    y = ops.roi_pool(xf, T(rois), (3, 4), scale)
    yt = tvops.roi_pool(xt, R(rois), (3, 4), scale)
    close(y, yt, atol=0)
    g = np.random.default_rng(2).standard_normal(tuple(yt.shape)).astype(np.float32)
    (y * T(g)).sum().backward()
    (yt * R(g)).sum().backward()
    close(xf.grad, xt.grad, atol=1e-6)
    assert repr(ops.RoIPool(3, 0.5)) == repr(tvops.RoIPool(3, 0.5))


def test_multiscale_roi_align():
    rng = np.random.default_rng(0)
    feats = OrderedDict((k, rng.standard_normal((2, 4, s, s + 2)).astype(np.float32))
                        for k, s in [("feat1", 64), ("feat2", 32), ("feat3", 16), ("feat4", 8)])
    boxes = [rand_boxes(10, 1, scale=300), rand_boxes(7, 2, scale=120), ]
    boxes[0][0] = [0, 0, 250, 250]
    boxes[1][0] = [10, 10, 12, 12]
    image_shapes = [(256, 264), (250, 260)]
    names = ["feat1", "feat3", "feat4"]
    m = ops.MultiScaleRoIAlign(names, 5, 2)
    mt = tvops.MultiScaleRoIAlign(names, 5, 2)
    xf = OrderedDict((k, T(v, True)) for k, v in feats.items())
    xt = OrderedDict((k, R(v, True)) for k, v in feats.items())
    y = m(xf, [T(b) for b in boxes], image_shapes)
    yt = mt(xt, [R(b) for b in boxes], image_shapes)
    close(y, yt, atol=1e-5)
    assert m.scales == mt.scales
    y.sum().backward()
    yt.sum().backward()
    for k in names:
        close(xf[k].grad, xt[k].grad, atol=1e-5)
    # canonical scale / level change the level mapping
    m2 = ops.MultiScaleRoIAlign(names, (3, 2), -1, canonical_scale=112, canonical_level=3)
    mt2 = tvops.MultiScaleRoIAlign(names, (3, 2), -1, canonical_scale=112, canonical_level=3)
    close(m2(xf, [T(b) for b in boxes], image_shapes), mt2(xt, [R(b) for b in boxes], image_shapes), atol=1e-5)


# ------------------------------------------------------------------ layers
def _load(ours, ref):
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()}, strict=True)


def test_frozen_batchnorm_and_conv_norm_act():
    tn = torch.nn
    ref = tvops.FrozenBatchNorm2d(5, eps=1e-3)
    with torch.no_grad():
        for n in ["weight", "bias", "running_mean"]:
            getattr(ref, n).copy_(torch.randn(5))
        ref.running_var.copy_(torch.rand(5) + 0.5)
    ours = ops.FrozenBatchNorm2d(5, eps=1e-3)
    sd = {k: v.numpy() for k, v in ref.state_dict().items()}
    sd["num_batches_tracked"] = np.array(3)  # dropped like torchvision
    ours.load_state_dict(sd)
    assert repr(ours) == repr(ref)
    x = np.random.default_rng(0).standard_normal((2, 5, 4, 3)).astype(np.float32)
    close(ours(T(x)), ref(R(x)))

    ref = tvops.Conv2dNormActivation(3, 8, 3, stride=2, groups=1, dilation=2, activation_layer=tn.Hardswish)
    ours = ops.Conv2dNormActivation(3, 8, 3, stride=2, dilation=2, activation_layer=nn.Hardswish)
    assert list(ours.state_dict()) == list(ref.state_dict())
    _load(ours, ref)
    ours.eval(), ref.eval()
    x = np.random.default_rng(1).standard_normal((1, 3, 11, 9)).astype(np.float32)
    close(ours(T(x)), ref(R(x)))
    a = ops.Conv2dNormActivation(4, 4, (3, 5), norm_layer=None, activation_layer=None)
    b = tvops.Conv2dNormActivation(4, 4, (3, 5), norm_layer=None, activation_layer=None)
    assert a[0].padding == b[0].padding and (a[0].bias is None) == (b[0].bias is None)


def test_squeeze_excitation_and_mlp():
    tn = torch.nn
    ref = tvops.SqueezeExcitation(8, 4, scale_activation=tn.Hardsigmoid)
    ours = ops.SqueezeExcitation(8, 4, scale_activation=nn.Hardsigmoid)
    _load(ours, ref)
    x = np.random.default_rng(2).standard_normal((2, 8, 5, 5)).astype(np.float32)
    close(ours(T(x)), ref(R(x)))
    ref = tvops.MLP(6, [12, 7, 3], norm_layer=tn.LayerNorm, dropout=0.1).eval()
    ours = ops.MLP(6, [12, 7, 3], norm_layer=nn.LayerNorm, dropout=0.1).eval()
    assert list(ours.state_dict()) == list(ref.state_dict())
    _load(ours, ref)
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    close(ours(T(x)), ref(R(x)))


@pytest.mark.parametrize("extra", [None, "pool", "p6p7", "p6p7_c5"])
def test_feature_pyramid_network(extra):
    tn = torch.nn
    from torchvision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7
    chans = [4, 8, 16]
    mk = {None: (None, None), "pool": (ops.LastLevelMaxPool(), LastLevelMaxPool()),
          "p6p7": (ops.LastLevelP6P7(6, 6), LastLevelP6P7(6, 6)),
          "p6p7_c5": (ops.LastLevelP6P7(16, 6), LastLevelP6P7(16, 6))}[extra]
    norm = (nn.BatchNorm2d, tn.BatchNorm2d) if extra == "pool" else (None, None)
    ours = ops.FeaturePyramidNetwork(chans, 6, extra_blocks=mk[0], norm_layer=norm[0]).eval()
    ref = tvops.FeaturePyramidNetwork(chans, 6, extra_blocks=mk[1], norm_layer=norm[1]).eval()
    assert list(ours.state_dict()) == list(ref.state_dict())
    _load(ours, ref)
    rng = np.random.default_rng(4)
    feats = [rng.standard_normal((1, c, s, s + 1)).astype(np.float32) for c, s in zip(chans, [16, 8, 3])]
    out = ours(OrderedDict((f"c{i}", T(f)) for i, f in enumerate(feats)))
    ref_out = ref(OrderedDict((f"c{i}", R(f)) for i, f in enumerate(feats)))
    assert list(out) == list(ref_out)
    for k in out:
        close(out[k], ref_out[k], atol=1e-5)


def test_stochastic_depth_and_drop_block():
    x = T(np.ones((2000, 3), np.float32))
    assert ops.stochastic_depth(x, 0.3, "row", training=False) is x
    y = npy(ops.StochasticDepth(0.3, "row")(x))
    assert np.all((y == 0) | np.isclose(y, 1 / 0.7))
    assert abs((y[:, 0] == 0).mean() - 0.3) < 0.05 and (y == y[:, :1]).all()
    yb = npy(ops.stochastic_depth(x, 0.5, "batch"))
    assert len(np.unique(yb)) == 1
    assert repr(ops.StochasticDepth(0.3, "row")) == repr(tvops.StochasticDepth(0.3, "row"))
    with pytest.raises(ValueError):
        ops.stochastic_depth(x, 0.3, "col")
    flow.manual_seed(0)
    z = T(np.ones((8, 4, 16, 16), np.float32))
    d = npy(ops.drop_block2d(z, 0.2, 3))
    zeros = d == 0
    assert 0.1 < zeros.mean() < 0.3
    np.testing.assert_allclose(d[~zeros], d.size / (1e-6 + (~zeros).sum()), rtol=1e-5)
    assert ops.DropBlock2d(0.2, 3).eval()(z) is z
    with pytest.raises(ValueError):
        ops.drop_block2d(z, 0.2, 4)
    with pytest.raises(ValueError):
        ops.drop_block2d(T(np.ones((2, 3))), 0.2, 3)
    assert repr(ops.DropBlock2d(0.2, 3)) == repr(tvops.DropBlock2d(0.2, 3))


def test_all_names_match_torchvision():
    skip = {"deform_conv2d", "DeformConv2d", "ps_roi_align", "PSRoIAlign", "ps_roi_pool", "PSRoIPool",
            "Conv3dNormActivation", "drop_block3d", "DropBlock3d"}
    missing = [n for n in tvops.__all__ if n not in skip and not hasattr(ops, n)]
    assert not missing
