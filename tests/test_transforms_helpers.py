"""Shared helpers for the transforms / io / utils parity tests (torch and torchvision are the reference)."""
import numpy as np
import torch
from PIL import Image

import flowvision.backend as fb


def rand_u8(h, w, c=3, seed=0, smooth=False):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
    if smooth and h > 4 and w > 4:
        import cv2

        a = cv2.GaussianBlur(a, (5, 5), 1.5)
        if a.ndim == 2:
            a = a[:, :, None]
    return a


def pil_of(a):
    if a.ndim == 3 and a.shape[2] == 1:
        return Image.fromarray(a[:, :, 0])
    return Image.fromarray(a)


def torch_chw(a):
    """HWC numpy -> CHW torch tensor (copy)."""
    if a.ndim == 2:
        a = a[:, :, None]
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(a, -1, -3)))


def fb_chw(a):
    if a.ndim == 2:
        a = a[:, :, None]
    return fb.from_numpy(np.ascontiguousarray(np.moveaxis(a, -1, -3)))


def to_np(x):
    """Anything image-like -> numpy CHW (tensors) or HWC (PIL / ndarray) as given."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    if fb.is_tensor(x):
        return np.asarray(x.numpy())
    if isinstance(x, Image.Image):
        return np.asarray(x)
    return np.asarray(x)


def hwc_to_chw(a):
    if a.ndim == 2:
        return a[None]
    return np.moveaxis(a, -1, -3)


def assert_u8_close(ours, ref, max_abs=1, mean_abs=0.05, msg=""):
    ours = np.asarray(ours)
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, f"{msg} shape {ours.shape} != {ref.shape}"
    assert ours.dtype == ref.dtype, f"{msg} dtype {ours.dtype} != {ref.dtype}"
    if ours.size == 0:
        return
    d = np.abs(ours.astype(np.int64) - ref.astype(np.int64))
    assert d.max() <= max_abs and d.mean() <= mean_abs, f"{msg} max {d.max()} mean {d.mean():.4f}"


def assert_float_close(ours, ref, atol=1e-5, msg=""):
    ours = np.asarray(ours)
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, f"{msg} shape {ours.shape} != {ref.shape}"
    assert ours.dtype == ref.dtype, f"{msg} dtype {ours.dtype} != {ref.dtype}"
    if ours.size:
        np.testing.assert_allclose(ours, ref, atol=atol, rtol=0, err_msg=msg)


def assert_image_close(ours, ref, atol=1e-5, msg="", **kw):
    ours = np.asarray(ours)
    if ours.dtype.kind in "ui":
        assert_u8_close(ours, ref, msg=msg, **kw)
    else:
        assert_float_close(ours, ref, atol=atol, msg=msg)
