"""flowvision.utils vs torchvision.utils (0.29)."""
import numpy as np
import pytest
import torch
import torchvision.utils as TU
from PIL import Image

import flowvision.backend as fb
import flowvision.utils as U

from test_transforms_helpers import assert_float_close, assert_u8_close, rand_u8, to_np


def _img(c=3, h=40, w=50, dtype=np.uint8, seed=0):
    a = np.moveaxis(rand_u8(h, w, c=c, seed=seed), -1, 0).copy()
    if dtype != np.uint8:
        a = (a / 255).astype(dtype)
    return a


@pytest.mark.parametrize("n,nrow,padding,normalize,value_range,scale_each,pad_value", [
    (1, 8, 2, False, None, False, 0.0), (5, 2, 3, False, None, False, 0.5), (7, 3, 0, True, None, False, 0.0),
    (4, 8, 2, True, (0.2, 0.8), False, 1.0), (6, 4, 1, True, None, True, 0.0)])
@pytest.mark.parametrize("c", [1, 3])
def test_make_grid(n, nrow, padding, normalize, value_range, scale_each, pad_value, c):
    a = np.random.default_rng(n).random((n, c, 9, 11)).astype(np.float32)
    kw = dict(nrow=nrow, padding=padding, normalize=normalize, value_range=value_range, scale_each=scale_each,
              pad_value=pad_value)
    ref = TU.make_grid(torch.from_numpy(a.copy()), **kw).numpy()
    ours = U.make_grid(fb.from_numpy(a.copy()), **kw)
    assert fb.is_tensor(ours)
    assert_float_close(to_np(ours), ref, atol=1e-6)
    ours_list = U.make_grid([fb.from_numpy(x.copy()) for x in a], **kw)
    assert_float_close(to_np(ours_list), ref, atol=1e-6)


def test_make_grid_uint8_and_2d():
    a = _img()[None].repeat(3, 0)
    np.testing.assert_array_equal(to_np(U.make_grid(fb.from_numpy(a))), TU.make_grid(torch.from_numpy(a)).numpy())
    g = np.random.default_rng(0).random((5, 6)).astype(np.float32)
    np.testing.assert_array_equal(to_np(U.make_grid(fb.from_numpy(g))), TU.make_grid(torch.from_numpy(g)).numpy())


def test_save_image(tmp_path):
    a = np.random.default_rng(0).random((4, 3, 9, 11)).astype(np.float32)
    U.save_image(fb.from_numpy(a), tmp_path / "ours.png", nrow=2)
    TU.save_image(torch.from_numpy(a), str(tmp_path / "ref.png"), nrow=2)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "ours.png")),
                                  np.asarray(Image.open(tmp_path / "ref.png")))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("kw", [dict(), dict(fill=True, width=3), dict(labels=["a", "bb", "c"], colors="red"),
                                dict(labels=["x", "y", "z"], fill_labels=True, colors=[(1, 2, 3), "blue", "#00ff00"],
                                     label_background_colors="yellow")])
def test_draw_bounding_boxes(dtype, c, kw):
    img = _img(c=c, dtype=dtype)
    boxes = np.array([[1, 2, 20, 30], [10, 5, 45, 38], [0, 0, 49, 39]], np.float32)
    ref = TU.draw_bounding_boxes(torch.from_numpy(img), torch.from_numpy(boxes), **kw).numpy()
    ours = to_np(U.draw_bounding_boxes(fb.from_numpy(img), fb.from_numpy(boxes), **kw))
    if dtype == np.uint8:
        assert_u8_close(ours, ref, 0, 0)
    else:
        assert_float_close(ours, ref, atol=1e-6)


def test_draw_rotated_boxes():
    img = _img()
    boxes = np.array([[5, 5, 30, 8, 28, 30, 3, 27]], np.float32)
    ref = TU.draw_bounding_boxes(torch.from_numpy(img), torch.from_numpy(boxes), width=2).numpy()
    np.testing.assert_array_equal(to_np(U.draw_bounding_boxes(fb.from_numpy(img), fb.from_numpy(boxes), width=2)), ref)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.8, 1.0])
def test_draw_segmentation_masks(dtype, alpha):
    img = _img(dtype=dtype)
    rng = np.random.default_rng(0)
    masks = rng.random((3, 40, 50)) > 0.6
    for colors in (None, "red", [(10, 20, 30), "green", "#123456"]):
        ref = TU.draw_segmentation_masks(torch.from_numpy(img), torch.from_numpy(masks), alpha, colors).numpy()
        ours = to_np(U.draw_segmentation_masks(fb.from_numpy(img), fb.from_numpy(masks), alpha, colors))
        if dtype == np.uint8:
            assert_u8_close(ours, ref)
        else:
            assert_float_close(ours, ref, atol=1e-6)
    ref = TU.draw_segmentation_masks(torch.from_numpy(img), torch.from_numpy(masks[0]), alpha).numpy()
    assert_u8_close(to_np(U.draw_segmentation_masks(fb.from_numpy(img), fb.from_numpy(masks[0]), alpha)), ref) \
        if dtype == np.uint8 else None


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_draw_keypoints(dtype):
    img = _img(dtype=dtype)
    kp = np.array([[[5, 5], [20, 30], [40, 10]], [[1, 38], [25, 25], [48, 2]]], np.float32)
    vis = np.array([[True, True, False], [True, True, True]])
    for kw in (dict(), dict(connectivity=[(0, 1), (1, 2)], colors="red", radius=3, width=2),
               dict(connectivity=[(0, 1), (1, 2)], visibility="vis")):
        kwt = dict(kw)
        kwo = dict(kw)
        if kw.get("visibility") == "vis":
            kwt["visibility"] = torch.from_numpy(vis)
            kwo["visibility"] = fb.from_numpy(vis)
        ref = TU.draw_keypoints(torch.from_numpy(img), torch.from_numpy(kp), **kwt).numpy()
        ours = to_np(U.draw_keypoints(fb.from_numpy(img), fb.from_numpy(kp), **kwo))
        if dtype == np.uint8:
            np.testing.assert_array_equal(ours, ref)
        else:
            assert_float_close(ours, ref, atol=1e-6)


def test_flow_to_image():
    f = np.random.default_rng(0).standard_normal((2, 2, 15, 17)).astype(np.float32)
    ref = TU.flow_to_image(torch.from_numpy(f)).numpy()
    assert_u8_close(to_np(U.flow_to_image(fb.from_numpy(f))), ref)
    assert_u8_close(to_np(U.flow_to_image(fb.from_numpy(f[0]))), TU.flow_to_image(torch.from_numpy(f[0])).numpy())


def test_bad_inputs():
    img = fb.from_numpy(_img())
    with pytest.raises(TypeError):
        U.draw_bounding_boxes([1, 2], fb.from_numpy(np.zeros((1, 4), np.float32)))
    with pytest.raises(ValueError):
        U.draw_bounding_boxes(img, fb.from_numpy(np.array([[5, 5, 1, 1]], np.float32)))
    with pytest.raises(ValueError):
        U.draw_bounding_boxes(fb.from_numpy(np.zeros((2, 3, 4, 4), np.uint8)), fb.from_numpy(np.zeros((1, 4))))
    with pytest.raises(ValueError):
        U.draw_bounding_boxes(img, fb.from_numpy(np.zeros((2, 4), np.float32)), labels=["a"])
    with pytest.raises(ValueError):
        U.draw_segmentation_masks(img, fb.from_numpy(np.zeros((1, 40, 50), np.uint8)))
    with pytest.raises(ValueError):
        U.draw_segmentation_masks(img, fb.from_numpy(np.zeros((1, 4, 5), bool)))
    with pytest.raises(ValueError):
        U.draw_segmentation_masks(fb.from_numpy(np.zeros((1, 40, 50), np.uint8)), fb.from_numpy(np.zeros((40, 50), bool)))
    with pytest.raises(ValueError):
        U.draw_keypoints(img, fb.from_numpy(np.zeros((3, 2), np.float32)))
    with pytest.raises(ValueError):
        U.draw_segmentation_masks(img, fb.from_numpy(np.zeros((2, 40, 50), bool)), colors=["red"])
    with pytest.raises(TypeError):
        U.make_grid("abc")
    with pytest.raises(ValueError):
        U.flow_to_image(fb.from_numpy(np.zeros((3, 4, 4), np.float32)))
    with pytest.warns(UserWarning):
        U.draw_bounding_boxes(img, fb.from_numpy(np.zeros((0, 4), np.float32)))
