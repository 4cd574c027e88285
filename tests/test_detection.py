"""Detection building blocks vs torchvision 0.29: anchors, box coding, matchers, sampler, R-CNN transform."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tvdet = pytest.importorskip("torchvision.models.detection")

import flowvision.backend as flow  # noqa: E402
import flowvision.models.detection as det  # noqa: E402
from torchvision.models.detection import _utils as tvu  # noqa: E402
from torchvision.models.detection.anchor_utils import AnchorGenerator as TvAnchorGenerator  # noqa: E402
from torchvision.models.detection.image_list import ImageList as TvImageList  # noqa: E402
from torchvision.models.detection.roi_heads import paste_masks_in_image as tv_paste  # noqa: E402
from torchvision.models.detection.transform import GeneralizedRCNNTransform as TvTransform  # noqa: E402


def T(a):
    return flow.tensor(np.asarray(a))


def R(a):
    return torch.tensor(np.asarray(a))


def npy(x):
    return x.detach().numpy()


def rand_boxes(n, seed=0, scale=100.0):
    rng = np.random.default_rng(seed)
    b = rng.random((n, 4)) * scale
    b[:, 2:] = b[:, :2] + 1 + rng.random((n, 2)) * scale / 2
    return b.astype(np.float32)


@pytest.mark.parametrize("sizes,ratios", [(((32,), (64,), (128,)), ((0.5, 1.0, 2.0),) * 3),
                                          ((16, 48), (0.7, 1.3)),
                                          (((128, 256, 512),), ((0.5, 1.0, 2.0),))])
def test_anchor_generator(sizes, ratios):
    ours, ref = det.AnchorGenerator(sizes, ratios), TvAnchorGenerator(sizes, ratios)
    assert ours.num_anchors_per_location() == ref.num_anchors_per_location()
    n = len(ref.sizes)
    rng = np.random.default_rng(0)
    img = rng.random((2, 3, 96, 128)).astype(np.float32)
    feats = [rng.random((2, 4, 96 // 2 ** (i + 3), 128 // 2 ** (i + 3))).astype(np.float32) for i in range(n)]
    a = ours(det.ImageList(T(img), [(90, 120), (96, 100)]), [T(f) for f in feats])
    b = ref(TvImageList(R(img), [(90, 120), (96, 100)]), [R(f) for f in feats])
    assert len(a) == len(b) == 2
    for x, y in zip(a, b):
        np.testing.assert_array_equal(npy(x), npy(y))


@pytest.mark.parametrize("weights", [(1.0, 1.0, 1.0, 1.0), (10.0, 10.0, 5.0, 5.0)])
def test_box_coder(weights):
    ref_boxes, props = [rand_boxes(6, 1), rand_boxes(4, 2)], [rand_boxes(6, 3), rand_boxes(4, 4)]
    ours, ref = det.BoxCoder(weights), tvu.BoxCoder(weights)
    for x, y in zip(ours.encode([T(b) for b in ref_boxes], [T(p) for p in props]),
                    ref.encode([R(b) for b in ref_boxes], [R(p) for p in props])):
        np.testing.assert_allclose(npy(x), npy(y), rtol=1e-6, atol=1e-6)
    codes = np.random.default_rng(5).standard_normal((10, 8)).astype(np.float32) * 3  # large dw: clip
    codes[0, 2] = 20.0
    a = ours.decode(T(codes), [T(p) for p in props])
    b = ref.decode(R(codes), [R(p) for p in props])
    assert tuple(a.shape) == tuple(b.shape) == (10, 2, 4)
    np.testing.assert_allclose(npy(a), npy(b), rtol=1e-6, atol=1e-4)
    # differentiable decode
    c = T(codes).requires_grad_()
    ours.decode_single(c, T(np.concatenate(props))).sum().backward()
    assert c.grad is not None and np.isfinite(npy(c.grad)).all()


@pytest.mark.parametrize("normalize", [True, False])
def test_box_linear_coder(normalize):
    refb, pts = rand_boxes(7, 6), rand_boxes(7, 7)
    ours, ref = det.BoxLinearCoder(normalize), tvu.BoxLinearCoder(normalize)
    np.testing.assert_allclose(npy(ours.encode(T(refb), T(pts))), npy(ref.encode(R(refb), R(pts))), rtol=1e-6)
    codes = np.random.default_rng(8).random((7, 4)).astype(np.float32)
    np.testing.assert_allclose(npy(ours.decode(T(codes), T(refb))), npy(ref.decode(R(codes), R(refb))), rtol=1e-6)


@pytest.mark.parametrize("allow_low", [False, True])
@pytest.mark.parametrize("thresholds", [(0.7, 0.3), (0.5, 0.4), (0.5, 0.5)])
def test_matcher(allow_low, thresholds):
    from flowvision.ops import box_iou
    gt, anchors = rand_boxes(5, 9), rand_boxes(200, 10)
    anchors[7] = gt[2]  # exact match
    anchors[8] = anchors[9] = gt[3] + 0.5  # ties for the best anchor of a gt
    q = npy(box_iou(T(gt), T(anchors)))
    ours, ref = det.Matcher(*thresholds, allow_low), tvu.Matcher(*thresholds, allow_low)
    np.testing.assert_array_equal(npy(ours(T(q))), npy(ref(R(q))))
    np.testing.assert_array_equal(npy(det.SSDMatcher(0.5)(T(q))), npy(tvu.SSDMatcher(0.5)(R(q))))
    with pytest.raises(ValueError, match="ground-truth"):
        ours(T(np.zeros((0, 5), np.float32)))
    with pytest.raises(ValueError, match="proposal"):
        ours(T(np.zeros((3, 0), np.float32)))


def test_balanced_sampler():
    rng = np.random.default_rng(0)
    m = rng.integers(-1, 4, 500)
    m[:20] = 1
    ours = det.BalancedPositiveNegativeSampler(64, 0.25)
    pos, neg = ours([T(m), T(np.where(m > 0, 0, m))])
    p, n = npy(pos[0]).astype(bool), npy(neg[0]).astype(bool)
    assert p.sum() == 16 and n.sum() == 48 and (m[p] >= 1).all() and (m[n] == 0).all()
    p1, n1 = npy(pos[1]).astype(bool), npy(neg[1]).astype(bool)
    assert p1.sum() == 0 and n1.sum() == 64
    # when everything fits, the selection equals torchvision's (no randomness involved)
    small = np.array([1, 0, -1, 2, 0, 0, -1, 3])
    a = ours([T(small)])
    b = tvu.BalancedPositiveNegativeSampler(64, 0.25)([R(small)])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(npy(x[0]), npy(y[0]))
    g1, g2 = flow.Generator().manual_seed(3), flow.Generator().manual_seed(3)
    s1 = det.BalancedPositiveNegativeSampler(64, 0.25, generator=g1)([T(m)])
    s2 = det.BalancedPositiveNegativeSampler(64, 0.25, generator=g2)([T(m)])
    np.testing.assert_array_equal(npy(s1[0][0]), npy(s2[0][0]))


@pytest.mark.parametrize("kw", [dict(min_size=64, max_size=100), dict(min_size=(40, 48), max_size=70),
                                dict(min_size=32, max_size=64, fixed_size=(40, 56), size_divisible=1)])
def test_generalized_rcnn_transform(kw):
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    ours, ref = det.GeneralizedRCNNTransform(image_mean=mean, image_std=std, **kw).eval(), \
        TvTransform(image_mean=mean, image_std=std, **kw).eval()
    assert repr(ours) == repr(ref)
    rng = np.random.default_rng(0)
    imgs = [rng.random((3, 37, 51)).astype(np.float32), rng.random((3, 45, 30)).astype(np.float32)]
    masks = (rng.random((2, 37, 51)) > 0.5).astype(np.uint8)
    kps = rng.random((2, 3, 3)).astype(np.float32) * 30
    tgt = [{"boxes": rand_boxes(2, 1, 30), "labels": np.array([1, 2]), "masks": masks, "keypoints": kps},
           {"boxes": rand_boxes(3, 2, 25), "labels": np.array([3, 1, 1])}]
    il, t1 = ours([T(i) for i in imgs], [{k: T(v) for k, v in t.items()} for t in tgt])
    rl, t2 = ref([R(i) for i in imgs], [{k: R(v) for k, v in t.items()} for t in tgt])
    assert il.image_sizes == [tuple(s) for s in rl.image_sizes]
    np.testing.assert_allclose(npy(il.tensors), npy(rl.tensors), atol=1e-5)
    for a, b in zip(t1, t2):
        assert list(a) == list(b)
        for k in a:
            np.testing.assert_allclose(npy(a[k]), npy(b[k]), atol=1e-5)
    # postprocess back to the original sizes (boxes, keypoints, pasted masks)
    res = [{"boxes": T(rand_boxes(4, 3, 40)), "masks": T(rng.random((4, 1, 28, 28)).astype(np.float32)),
            "keypoints": T(kps[:1].repeat(4, 0))}, {"boxes": T(np.zeros((0, 4), np.float32)),
                                                     "masks": T(np.zeros((0, 1, 28, 28), np.float32))}]
    rres = [{k: R(npy(v)) for k, v in r.items()} for r in res]
    orig = [(37, 51), (45, 30)]
    a = ours.postprocess(res, il.image_sizes, orig)
    b = ref.postprocess(rres, rl.image_sizes, orig)
    for x, y in zip(a, b):
        for k in y:
            assert tuple(x[k].shape) == tuple(y[k].shape), k
            np.testing.assert_allclose(npy(x[k]), npy(y[k]), atol=1e-5)


def test_paste_masks_edge_boxes():
    rng = np.random.default_rng(1)
    masks = rng.random((5, 1, 14, 14)).astype(np.float32)
    boxes = np.array([[-10, -5, 20, 30], [40, 40, 80, 90], [5, 5, 5.5, 5.2], [0, 0, 63, 47], [70, 70, 90, 90]],
                     np.float32)
    ours = npy(det.paste_masks_in_image(T(masks), T(boxes), (48, 64)))
    np.testing.assert_allclose(ours[:4], npy(tv_paste(R(masks[:4]), R(boxes[:4]), (48, 64))), atol=1e-6)
    assert not ours[4].any()  # entirely outside the image: empty (torchvision raises a shape error here)
    # many masks, float64: the batched separable resize equals torchvision's per-box interpolate
    m64 = rng.random((40, 1, 28, 28))
    b64 = rng.random((40, 4)) * 200
    b64[:, 2:] = b64[:, :2] + rng.random((40, 2)) * 120 + 1  # some cross the right/bottom border
    np.testing.assert_allclose(npy(det.paste_masks_in_image(T(m64), T(b64), (240, 300))),
                               npy(tv_paste(R(m64), R(b64), (240, 300))), atol=1e-12)


def test_transform_bad_inputs():
    tr = det.GeneralizedRCNNTransform(32, 64, [0.5] * 3, [0.2] * 3)
    with pytest.raises(TypeError, match="floating"):
        tr([T(np.zeros((3, 8, 8), np.uint8))])
    with pytest.raises(ValueError):
        tr([T(np.zeros((8, 8), np.float32))])
    with pytest.raises(ValueError):
        tr([T(np.zeros((3, 8, 8), np.float32))], [])


@pytest.mark.parametrize("kw,grids,img", [
    (dict(aspect_ratios=[[2], [2, 3], [2, 3], [2, 3], [2], [2]], scales=[0.07, 0.15, 0.33, 0.51, 0.69, 0.87, 1.05],
          steps=[8, 16, 32, 64, 100, 300]), [(38, 38), (19, 19), (10, 10), (5, 5), (3, 3), (1, 1)], (300, 300)),
    (dict(aspect_ratios=[[2, 3]] * 6, min_ratio=0.2, max_ratio=0.95), [(20, 20), (10, 10), (5, 5), (3, 3), (2, 2),
                                                                       (1, 1)], (320, 320)),
    (dict(aspect_ratios=[[2]], clip=False), [(4, 6)], (64, 96)),
])
def test_default_box_generator(kw, grids, img):
    from torchvision.models.detection.anchor_utils import DefaultBoxGenerator as TvDBG
    ours, ref = det.DefaultBoxGenerator(**kw), TvDBG(**kw)
    assert ours.num_anchors_per_location() == ref.num_anchors_per_location()
    assert ours.scales == ref.scales
    feats = [np.zeros((2, 1) + g, np.float32) for g in grids]
    x = np.zeros((2, 3) + img, np.float32)
    a = ours(det.ImageList(T(x), [img, img]), [T(f) for f in feats])
    b = ref(TvImageList(R(x), [img, img]), [R(f) for f in feats])
    assert len(a) == len(b) == 2
    for p, q in zip(a, b):
        np.testing.assert_allclose(npy(p), npy(q), rtol=0, atol=1e-5)
