"""flowvision.backend._C: every compiled kernel against torch (forward and autograd backward).

Kernels are called directly on numpy arrays. float32 is checked with rtol 1e-4 / atol 1e-5
(GEMM-based kernels use a looser atol, see GEMM_ATOL), float64 is checked on the backward
kernels (that is what gradcheck uses). Each ISA path that this CPU supports is exercised
through `_C._set_isa_for_testing`, and a subprocess checks the FLOWVISION_ISA /
FLOWVISION_NUM_THREADS environment overrides.
"""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

_C = pytest.importorskip("flowvision.backend._C")

ISAS = list(_C.supported_isas())
NATIVE_ISA = ISAS[-1]  # what cpuid picks with no FLOWVISION_ISA (this process may run under one)

# GEMM-based kernels sum K products in a different order (blocked, FMA-contracted) than
# MKL/oneDNN; with K up to a few hundred and O(1) inputs the float32 difference is ~1e-5
# absolute, so they get atol 1e-4.
GEMM_ATOL = 1e-4


def rng(seed=0):
    return np.random.default_rng(seed)


def randn(*shape, dtype=np.float32, seed=0):
    return rng(seed).standard_normal(shape).astype(dtype)


def close(a, b, rtol=1e-4, atol=1e-5, what=""):
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def tt(a, grad=False):
    t = torch.from_numpy(np.array(a))
    return t.requires_grad_(grad)


# ---------------------------------------------------------------------------- gemm
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 5, 7, 3), (3, 17, 33, 29), (1, 64, 64, 64), (2, 13, 300, 70),
                                   (2, 1, 70, 300), (1, 3, 300, 90), (2, 90, 300, 2), (1, 40, 5, 1)])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_gemm(isa, shape, ta, tb):
    B, M, K, N = shape
    a = randn(B, K, M, seed=1) if ta else randn(B, M, K, seed=1)
    b = randn(B, N, K, seed=2) if tb else randn(B, K, N, seed=2)
    ref = (tt(a).transpose(1, 2) if ta else tt(a)) @ (tt(b).transpose(1, 2) if tb else tt(b))
    close(_C.gemm(a, b, ta, tb), ref, atol=GEMM_ATOL, what=f"gemm {shape} ta={ta} tb={tb}")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref64 = (tt(a64).transpose(1, 2) if ta else tt(a64)) @ (tt(b64).transpose(1, 2) if tb else tt(b64))
    close(_C.gemm(a64, b64, ta, tb), ref64, rtol=1e-10, atol=1e-10)


def test_gemm_large_blocks():
    # crosses the K (256), M and N (3072) cache blocks
    a, b = randn(1, 150, 700, seed=3), randn(1, 700, 3100, seed=4)
    close(_C.gemm(a, b, False, False), tt(a) @ tt(b), atol=3e-4)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("M,N,K", [(389, 383, 700), (577, 64, 900), (1153, 128, 300), (100, 130, 2000),
                                   (383, 600, 1700)])  # few rows, several column blocks sharing one packed A
def test_gemm_thread_partitions(threads, M, N, K):
    # row splits of the few-rows path, whole row blocks per thread and unsplit columns in the general path, with a
    # transposed A (the weight gradient's layout) whose row count is not a multiple of the micro-tile
    a, b = randn(K, M, seed=7), randn(K, N, seed=8)
    import flowvision.backend as flow

    before = flow.get_num_threads()
    flow.set_num_threads(threads)
    try:
        got, got_plain = _C.gemm(a, b, True, False), _C.gemm(np.ascontiguousarray(a.T), b, False, False)
    finally:
        flow.set_num_threads(before)
    ref = tt(a).t() @ tt(b)
    close(got, ref, atol=3e-4, what=f"gemm^T {M}x{N}x{K} on {threads} threads")
    close(got_plain, ref, atol=3e-4, what=f"gemm {M}x{N}x{K} on {threads} threads")


@pytest.mark.parametrize("K", [1, 7, 8, 9, 15, 16, 23, 64, 767, 768, 769, 1541])
@pytest.mark.parametrize("M", [6, 13, 390, 779])
def test_gemm_row_major_a_pack_equals_transposed(isa, M, K):
    # a row-major A is packed by an 8-step register transpose (AVX2 / AVX-512), a transposed A by copies: the same
    # micro-panels, so the products are bit-identical. K covers every remainder mod 8 (the masked last store of a
    # panel) and several K blocks; M both row paths and a partial last panel.
    a, b = randn(M, K, seed=11), randn(K, 37, seed=12)
    got = _C.gemm(a, b, False, False)
    np.testing.assert_array_equal(got, _C.gemm(np.ascontiguousarray(a.T), b, True, False))
    close(got, tt(a) @ tt(b), atol=3e-4, what=f"gemm {M}x{K}x37")


def test_gemm_many_batches():
    a, b = randn(24, 9, 16, seed=5), randn(24, 16, 11, seed=6)
    close(_C.gemm(a, b, False, True if False else False), tt(a) @ tt(b), atol=GEMM_ATOL)


# ---------------------------------------------------------------------------- conv2d
CONV_CASES = [
    # N, C, H, W, O, (kh, kw), stride, padding, dilation, groups
    (2, 3, 9, 11, 5, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 4, 8, 8, 6, (3, 2), (2, 2), (1, 0), (1, 1), 2),
    (2, 6, 10, 7, 6, (3, 3), (2, 1), (1, 1), (2, 2), 6),   # depthwise, stride, dilation
    (2, 16, 12, 12, 16, (3, 3), (1, 1), (1, 1), (1, 1), 16),  # depthwise 3x3
    (1, 8, 5, 5, 16, (1, 1), (1, 1), (0, 0), (1, 1), 1),   # pointwise
    (3, 4, 7, 7, 8, (1, 1), (2, 2), (0, 0), (1, 1), 1),    # strided 1x1
    (1, 1, 1, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1), 1),    # size 1
    (2, 8, 13, 13, 8, (5, 5), (1, 1), (2, 2), (1, 1), 4),
    (1, 3, 17, 17, 19, (7, 7), (2, 2), (3, 3), (1, 1), 1),  # stem-like
    (1, 2, 4, 4, 3, (3, 3), (1, 1), (3, 3), (1, 1), 1),    # padding larger than needed
    (2, 4, 11, 9, 6, (3, 3), (2, 1), (2, 1), (2, 3), 2),   # grouped + dilation + mixed stride
    (1, 6, 5, 5, 4, (1, 1), (1, 1), (0, 0), (1, 1), 2),    # grouped pointwise
    (2, 3, 6, 6, 6, (3, 3), (1, 1), (1, 1), (1, 1), 3),    # depth multiplier 2 (general path)
    (3, 5, 9, 9, 7, (2, 2), (3, 3), (0, 0), (1, 1), 1),    # stride > kernel
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(isa, case):
    N, C, H, W, O, k, s, p, d, g = case
    x = randn(N, C, H, W, seed=1)
    w = randn(O, C // g, *k, seed=2) * 0.5
    b = randn(O, seed=3)
    y = _C.conv2d_forward(x, w, b, s, p, d, g)
    close(y, F.conv2d(tt(x), tt(w), tt(b), s, p, d, g), atol=GEMM_ATOL, what=f"conv fwd {case}")
    close(_C.conv2d_forward(x, w, None, s, p, d, g), F.conv2d(tt(x), tt(w), None, s, p, d, g), atol=GEMM_ATOL)

    for dt, rtol, atol in ((np.float32, 1e-4, GEMM_ATOL), (np.float64, 1e-9, 1e-9)):
        xt, wt = tt(x.astype(dt), True), tt(w.astype(dt), True)
        yt = F.conv2d(xt, wt, None, s, p, d, g)
        gy = randn(*yt.shape, dtype=dt, seed=4)
        yt.backward(tt(gy))
        gx = _C.conv2d_backward_input(gy, w.astype(dt), x.shape, s, p, d, g)
        gw = _C.conv2d_backward_weight(gy, x.astype(dt), w.shape, s, p, d, g)
        close(gx, xt.grad, rtol=rtol, atol=atol, what=f"conv grad_x {case} {dt.__name__}")
        close(gw, wt.grad, rtol=rtol, atol=atol * 10, what=f"conv grad_w {case} {dt.__name__}")


def test_conv_transpose_via_backward_input():
    # conv_transpose2d(x, w) == conv2d_backward_input(x, w, out_shape) (incl. output_padding)
    x, w = randn(2, 6, 5, 5), randn(6, 2, 3, 3, seed=1)  # (C_in, C_out/groups, kh, kw), groups=1
    ref = F.conv_transpose2d(tt(x), tt(w), stride=2, padding=1, output_padding=1)
    out = _C.conv2d_backward_input(x, w, (2, 2, 10, 10), (2, 2), (1, 1), (1, 1), 1)
    close(out, ref, atol=GEMM_ATOL)


@pytest.mark.parametrize("case", [((3, 3), (1, 1), (1, 1), (1, 1)), ((2, 3), (2, 1), (1, 0), (2, 1)),
                                  ((1, 1), (1, 1), (0, 0), (1, 1))])
def test_im2col_col2im(case):
    k, d, p, s = case
    x = randn(2, 3, 9, 8)
    cols = _C.im2col(x, k, d, p, s)
    close(cols, F.unfold(tt(x), k, d, p, s), what="im2col")
    c = randn(*cols.shape, seed=1)
    close(_C.col2im(c, (9, 8), k, d, p, s), F.fold(tt(c), (9, 8), k, d, p, s), what="col2im")
    c64 = c.astype(np.float64)
    close(_C.col2im(c64, (9, 8), k, d, p, s), F.fold(tt(c64), (9, 8), k, d, p, s), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- pooling
MAXPOOL_CASES = [
    # H, W, kernel, stride, padding, dilation, ceil_mode
    (8, 8, (2, 2), (2, 2), (0, 0), (1, 1), False),
    (9, 7, (3, 3), (2, 2), (1, 1), (1, 1), False),
    (9, 7, (3, 3), (2, 2), (1, 1), (1, 1), True),
    (10, 11, (3, 2), (2, 3), (1, 1), (2, 1), True),
    (5, 5, (3, 3), (3, 3), (0, 0), (1, 1), True),   # last window partly outside
    (1, 1, (1, 1), (1, 1), (0, 0), (1, 1), False),
    (6, 6, (4, 4), (3, 3), (2, 2), (1, 1), True),
]


@pytest.mark.parametrize("case", MAXPOOL_CASES)
def test_max_pool2d(case):
    H, W, k, s, p, d, cm = case
    x = randn(2, 3, H, W)
    y, idx = _C.max_pool2d_forward(x, k, s, p, d, cm)
    yt, it = F.max_pool2d(tt(x), k, s, p, d, ceil_mode=cm, return_indices=True)
    close(y, yt, rtol=0, atol=0)
    np.testing.assert_array_equal(idx, it.numpy())
    for dt in (np.float32, np.float64):
        xt = tt(x.astype(dt), True)
        yt = F.max_pool2d(xt, k, s, p, d, ceil_mode=cm)
        gy = randn(*yt.shape, dtype=dt, seed=2)
        yt.backward(tt(gy))
        close(_C.max_pool2d_backward(gy, idx, x.shape), xt.grad, rtol=1e-12, atol=1e-6)


AVGPOOL_CASES = [
    # H, W, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (8, 8, (2, 2), (2, 2), (0, 0), False, True, 0),
    (9, 7, (3, 3), (2, 2), (1, 1), False, True, 0),
    (9, 7, (3, 3), (2, 2), (1, 1), False, False, 0),
    (9, 7, (3, 3), (2, 2), (1, 1), True, True, 0),
    (9, 7, (3, 3), (2, 2), (1, 1), True, False, 0),
    (10, 11, (3, 2), (2, 3), (1, 1), True, True, 5),
    (5, 6, (4, 4), (3, 3), (2, 2), True, True, 0),
    (1, 1, (1, 1), (1, 1), (0, 0), False, True, 0),
]


@pytest.mark.parametrize("case", AVGPOOL_CASES)
def test_avg_pool2d(case):
    H, W, k, s, p, cm, cip, dv = case
    x = randn(2, 3, H, W)
    y = _C.avg_pool2d_forward(x, k, s, p, cm, cip, dv)
    close(y, F.avg_pool2d(tt(x), k, s, p, cm, cip, dv or None), what=f"avg fwd {case}")
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        xt = tt(x.astype(dt), True)
        yt = F.avg_pool2d(xt, k, s, p, cm, cip, dv or None)
        gy = randn(*yt.shape, dtype=dt, seed=2)
        yt.backward(tt(gy))
        close(_C.avg_pool2d_backward(gy, x.shape, k, s, p, cm, cip, dv), xt.grad, rtol=1e-6, atol=tol)


@pytest.mark.parametrize("hw,out", [((7, 7), (1, 1)), ((7, 10), (3, 4)), ((5, 5), (7, 7)), ((13, 6), (5, 6))])
def test_adaptive_pool(hw, out):
    x = randn(2, 3, *hw)
    close(_C.adaptive_avg_pool2d_forward(x, out), F.adaptive_avg_pool2d(tt(x), out))
    y, idx = _C.adaptive_max_pool2d_forward(x, out)
    yt, it = F.adaptive_max_pool2d(tt(x), out, return_indices=True)
    close(y, yt, rtol=0, atol=0)
    np.testing.assert_array_equal(idx, it.numpy())
    for dt in (np.float32, np.float64):
        xt = tt(x.astype(dt), True)
        yt = F.adaptive_avg_pool2d(xt, out)
        gy = randn(*yt.shape, dtype=dt, seed=2)
        yt.backward(tt(gy))
        close(_C.adaptive_avg_pool2d_backward(gy, x.shape), xt.grad, rtol=1e-6, atol=1e-6)
        xt = tt(x.astype(dt), True)
        F.adaptive_max_pool2d(xt, out).backward(tt(gy))
        close(_C.max_pool2d_backward(gy, idx, x.shape), xt.grad, rtol=1e-12, atol=1e-6)


# ---------------------------------------------------------------------------- normalisation
@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (2, 7), (3, 5, 17), (2, 1, 1, 1), (1, 3, 1, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm(isa, shape, affine):
    C = shape[1]
    x = randn(*shape) * 2 + 1
    w, b = (randn(C, seed=1), randn(C, seed=2)) if affine else (None, None)
    y, mean, invstd = _C.batch_norm_train_forward(x, w, b, 1e-5)
    ref = F.batch_norm(tt(x), None, None, None if w is None else tt(w), None if b is None else tt(b), True, 0.1, 1e-5)
    axes = (0,) + tuple(range(2, len(shape)))
    close(y, ref, atol=1e-5, what="bn train fwd")
    close(mean, x.mean(axes), atol=1e-5)
    close(invstd, (1 / np.sqrt(x.astype(np.float64).var(axes) + 1e-5)).astype(np.float32), rtol=1e-4, atol=1e-4)

    rm, rv = randn(C, seed=3), np.abs(randn(C, seed=4)) + 0.5
    close(_C.batch_norm_infer_forward(x, rm, rv, w, b, 1e-5),
          F.batch_norm(tt(x), tt(rm), tt(rv), None if w is None else tt(w), None if b is None else tt(b), False,
                       0.1, 1e-5))

    for dt, rtol, atol in ((np.float32, 1e-4, 1e-4), (np.float64, 1e-9, 1e-9)):
        xd = x.astype(dt)
        wd = randn(C, dtype=dt, seed=1)
        gy = randn(*shape, dtype=dt, seed=5)
        # training
        xt, wt, bt = tt(xd, True), tt(wd, True), tt(np.zeros(C, dt), True)
        F.batch_norm(xt, None, None, wt, bt, True, 0.1, 1e-5).backward(tt(gy))
        _, m, istd = _C.batch_norm_train_forward(xd, wd, None, 1e-5)
        gx, gw, gb = _C.batch_norm_backward(gy, xd, wd, m, istd, True)
        close(gx, xt.grad, rtol=rtol, atol=atol, what="bn grad_x train")
        close(gw, wt.grad, rtol=rtol, atol=atol, what="bn grad_w train")
        close(gb, bt.grad, rtol=rtol, atol=atol, what="bn grad_b train")
        # eval: running stats passed as mean / invstd
        rmd, rvd = rm.astype(dt), rv.astype(dt)
        xt, wt, bt = tt(xd, True), tt(wd, True), tt(np.zeros(C, dt), True)
        F.batch_norm(xt, tt(rmd), tt(rvd), wt, bt, False, 0.1, 1e-5).backward(tt(gy))
        gx, gw, gb = _C.batch_norm_backward(gy, xd, wd, rmd, 1 / np.sqrt(rvd + 1e-5), False)
        close(gx, xt.grad, rtol=rtol, atol=atol, what="bn grad_x eval")
        close(gw, wt.grad, rtol=rtol, atol=atol, what="bn grad_w eval")
        close(gb, bt.grad, rtol=rtol, atol=atol, what="bn grad_b eval")


@pytest.mark.parametrize("M,N", [(1, 1), (5, 7), (33, 768), (8, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(isa, M, N, affine):
    x = randn(M, N) * 3 + 0.5
    w, b = (randn(N, seed=1), randn(N, seed=2)) if affine else (None, None)
    y, mean, rstd = _C.layer_norm_forward(x, w, b, 1e-5)
    ref = F.layer_norm(tt(x), (N,), None if w is None else tt(w), None if b is None else tt(b), 1e-5)
    close(y, ref, atol=2e-5, what="ln fwd")
    assert mean.shape == (M,) and rstd.shape == (M,)
    for dt, rtol, atol in ((np.float32, 1e-4, 1e-4), (np.float64, 1e-9, 1e-9)):
        xd = x.astype(dt)
        wd = None if w is None else w.astype(dt)
        xt = tt(xd, True)
        wt = None if wd is None else tt(wd, True)
        bt = None if wd is None else tt(np.zeros(N, dt), True)
        gy = randn(M, N, dtype=dt, seed=5)
        F.layer_norm(xt, (N,), wt, bt, 1e-5).backward(tt(gy))
        _, m, r = _C.layer_norm_forward(xd, wd, None, 1e-5)
        gx, gw, gb = _C.layer_norm_backward(gy, xd, wd, m, r)
        close(gx, xt.grad, rtol=rtol, atol=atol, what="ln grad_x")
        if wd is None:
            assert gw is None
        else:
            close(gw, wt.grad, rtol=rtol, atol=atol, what="ln grad_w")
            close(gb, bt.grad, rtol=rtol, atol=atol, what="ln grad_b")


@pytest.mark.parametrize("shape,G", [((2, 6, 4, 5), 3), ((3, 4, 7), 4), ((1, 8, 1, 1), 2), ((2, 5, 3, 3), 1)])
def test_group_norm(isa, shape, G):
    N, C = shape[:2]
    x = randn(*shape) * 2 - 1
    w, b = randn(C, seed=1), randn(C, seed=2)
    xs = x.reshape(N, C, -1)
    y, mean, rstd = _C.group_norm_forward(xs, G, w, b, 1e-5)
    close(y.reshape(shape), F.group_norm(tt(x), G, tt(w), tt(b), 1e-5), atol=2e-5, what="gn fwd")
    assert mean.shape == (N, G)
    y0, _, _ = _C.group_norm_forward(xs, G, None, None, 1e-5)
    close(y0.reshape(shape), F.group_norm(tt(x), G, None, None, 1e-5), atol=2e-5)
    for dt, rtol, atol in ((np.float32, 1e-4, 1e-4), (np.float64, 1e-9, 1e-9)):
        xd, wd = xs.astype(dt), w.astype(dt)
        xt, wt, bt = tt(x.astype(dt), True), tt(wd, True), tt(b.astype(dt), True)
        gy = randn(*shape, dtype=dt, seed=5)
        F.group_norm(xt, G, wt, bt, 1e-5).backward(tt(gy))
        _, m, r = _C.group_norm_forward(xd, G, wd, None, 1e-5)
        gx, gw, gb = _C.group_norm_backward(gy.reshape(N, C, -1), xd, G, wd, m, r)
        close(gx.reshape(shape), xt.grad, rtol=rtol, atol=atol, what="gn grad_x")
        close(gw, wt.grad, rtol=rtol, atol=atol, what="gn grad_w")
        close(gb, bt.grad, rtol=rtol, atol=atol, what="gn grad_b")


# ---------------------------------------------------------------------------- softmax, activations
@pytest.mark.parametrize("M,N", [(1, 1), (3, 5), (7, 17), (12, 197), (2, 1000)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(isa, M, N, log):
    x = randn(M, N) * 4
    fn = F.log_softmax if log else F.softmax
    y = _C.softmax_forward(x, log)
    close(y, fn(tt(x), -1), rtol=1e-5, atol=1e-6, what="softmax fwd")
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        xt = tt(x.astype(dt), True)
        yt = fn(xt, -1)
        gy = randn(M, N, dtype=dt, seed=3)
        yt.backward(tt(gy))
        close(_C.softmax_backward(gy, yt.detach().numpy(), log), xt.grad, rtol=1e-5, atol=tol, what="softmax bwd")


def test_softmax_extremes():
    x = np.array([[0.0, -np.inf, 1.0, -1e30], [100.0, 100.0, -100.0, 50.0], [-np.inf] * 3 + [0.0]], np.float32)
    close(_C.softmax_forward(x, False), F.softmax(tt(x), -1), rtol=1e-5, atol=1e-7)
    close(_C.softmax_forward(x, True), F.log_softmax(tt(x), -1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("approx", ["none", "tanh"])
def test_gelu_silu(approx):
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        x = randn(3, 37, dtype=dt) * 3
        gy = randn(3, 37, dtype=dt, seed=1)
        xt = tt(x, True)
        yt = F.gelu(xt, approximate=approx)
        yt.backward(tt(gy))
        close(_C.gelu_forward(x, approx), yt, rtol=1e-5, atol=tol)
        close(_C.gelu_backward(gy, x, approx), xt.grad, rtol=1e-5, atol=tol)
        xt = tt(x, True)
        yt = F.silu(xt)
        yt.backward(tt(gy))
        close(_C.silu_forward(x), yt, rtol=1e-5, atol=tol)
        close(_C.silu_backward(gy, x), xt.grad, rtol=1e-5, atol=tol)


# ---------------------------------------------------------------------------- interpolate
INTERP_CASES = [
    # in_hw, out_hw, scale (None = size given), mode, align_corners, antialias
    ((5, 7), (10, 14), None, "nearest", None, False),
    ((5, 7), (8, 3), None, "nearest", None, False),
    ((5, 7), None, (1.7, 0.6), "nearest", None, False),
    ((5, 7), (8, 3), None, "nearest-exact", None, False),
    ((5, 7), None, (2.3, 0.45), "nearest-exact", None, False),
    ((5, 7), (9, 13), None, "bilinear", False, False),
    ((5, 7), (9, 13), None, "bilinear", True, False),
    ((8, 9), (3, 4), None, "bilinear", False, False),
    ((5, 7), None, (1.5, 2.5), "bilinear", False, False),
    ((5, 7), (5, 7), None, "bilinear", False, False),
    ((1, 1), (3, 2), None, "bilinear", True, False),
    ((6, 7), (11, 5), None, "bicubic", False, False),
    ((6, 7), (11, 5), None, "bicubic", True, False),
    ((6, 7), None, (1.6, 0.7), "bicubic", False, False),
    ((16, 15), (5, 6), None, "bilinear", False, True),
    ((16, 15), (5, 6), None, "bilinear", True, True),
    ((6, 7), (13, 3), None, "bilinear", False, True),   # up in H, down in W
    ((16, 15), (5, 6), None, "bicubic", False, True),
    ((16, 15), None, (0.35, 0.5), "bilinear", False, True),
    ((6, 7), (15, 16), None, "bicubic", False, True),     # antialias while upsampling
    ((9, 8), (4, 3), None, "nearest-exact", None, False),
    ((5, 7), None, (1.5, 2.5), "bilinear", True, False),  # scale ignored with align_corners
    ((4, 4), None, (2.0, 2.0), "bicubic", True, False),
]


@pytest.mark.parametrize("case", INTERP_CASES)
def test_interpolate(case):
    in_hw, out_hw, scale, mode, ac, aa = case
    x = randn(2, 3, *in_hw)
    kw = dict(mode=mode, antialias=aa)
    if ac is not None:
        kw["align_corners"] = ac
    if scale is None:
        kw["size"] = out_hw
    else:
        kw["scale_factor"] = scale
    ref = F.interpolate(tt(x), **kw)
    oh, ow = ref.shape[2:]
    y = _C.interpolate_forward(x, (oh, ow), mode, bool(ac), scale or (0.0, 0.0), aa)
    close(y, ref, atol=2e-5, what=f"interp fwd {case}")
    for dt, tol in ((np.float32, 2e-5), (np.float64, 1e-12)):
        xt = tt(x.astype(dt), True)
        yt = F.interpolate(xt, **kw)
        gy = randn(*yt.shape, dtype=dt, seed=2)
        yt.backward(tt(gy))
        gx = _C.interpolate_backward(gy, x.shape, (oh, ow), mode, bool(ac), scale or (0.0, 0.0), aa)
        close(gx, xt.grad, rtol=1e-5, atol=tol, what=f"interp bwd {case} {dt.__name__}")
    # the overload without output_size
    gx2 = _C.interpolate_backward(gy, x.shape, mode, bool(ac), scale or (0.0, 0.0), aa)
    np.testing.assert_array_equal(gx, gx2)


# ---------------------------------------------------------------------------- threads, ISA, errors
def _run_all_kernels(seed=0):
    x = randn(3, 8, 15, 15, seed=seed)
    w = randn(8, 4, 3, 3, seed=seed + 1)
    out = [
        _C.gemm(randn(2, 150, 300, seed=seed), randn(2, 300, 70, seed=seed + 1), False, True if False else False),
        _C.conv2d_forward(x, w, None, (2, 2), (1, 1), (1, 1), 2),
        _C.conv2d_backward_weight(randn(3, 8, 8, 8, seed=seed), x, w.shape, (2, 2), (1, 1), (1, 1), 2),
        _C.conv2d_backward_input(randn(3, 8, 8, 8, seed=seed), w, x.shape, (2, 2), (1, 1), (1, 1), 2),
        _C.layer_norm_backward(randn(300, 200, seed=seed), randn(300, 200, seed=seed + 2), randn(200),
                               np.zeros(300, np.float32), np.ones(300, np.float32))[1],
        _C.softmax_forward(randn(64, 300, seed=seed), False),
        _C.batch_norm_train_forward(x, None, None, 1e-5)[0],
    ]
    return out


def test_thread_counts_give_identical_results():
    before = _C.get_num_threads()
    try:
        _C.set_num_threads(1)
        assert _C.get_num_threads() == 1
        one = _run_all_kernels()
        _C.set_num_threads(2)
        assert _C.get_num_threads() == 2
        two = _run_all_kernels()
        _C.set_num_threads(3)
        three = _run_all_kernels()
    finally:
        _C.set_num_threads(before)
    for a, b, c in zip(one, two, three):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_default_threads_and_env_overrides():
    assert _C.get_num_threads() >= 1
    code = (
        "from flowvision.backend import _C; import numpy as np;"
        "a = np.ones((1, 40, 50), np.float32);"
        "assert np.allclose(_C.gemm(a, a, False, True), 50);"
        "print(_C.cpu_isa(), _C.get_num_threads())"
    )
    for want in ISAS:
        env = dict(os.environ, FLOWVISION_ISA=want, FLOWVISION_NUM_THREADS="3")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [want, "3"]
    # asking for more than the CPU has is clamped; unknown values are ignored
    env = dict(os.environ, FLOWVISION_ISA="bogus")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split()[0] == NATIVE_ISA


def test_idle_spin_follows_env():
    """After a parallel kernel the worker spins (runnable, state R) for FLOWVISION_SPIN_MS before it sleeps (S):
    50 ms after a call it still spins with 1000 ms and sleeps with 0."""
    code = (
        "import os, time, threading, numpy as np; from flowvision.backend import _C;"
        "_C.set_num_threads(2); a = np.ones((400, 400), np.float32); _C.gemm(a, a, False, False);"
        "me = str(threading.get_native_id());"
        "_C.gemm(a, a, False, False); time.sleep(0.05);"
        "print(''.join(open(f'/proc/self/task/{t}/stat').read().rsplit(')', 1)[1].split()[0]"
        "              for t in os.listdir('/proc/self/task') if t != me))"
    )
    states = {}
    for ms in ("0", "1000"):
        env = dict(os.environ, FLOWVISION_SPIN_MS=ms, FLOWVISION_NUM_THREADS="2")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        states[ms] = r.stdout.split()[-1]
    assert "R" not in states["0"] and "R" in states["1000"], states


def test_set_num_threads_stress():
    # creating/joining pools back to back (workers that start late must still see the shutdown);
    # in a subprocess so a regression fails with a timeout instead of hanging the suite
    code = (
        "from flowvision.backend import _C; import numpy as np;"
        "a = np.ones((1, 300, 300), np.float32)\n"
        "for i in range(100):\n"
        "    _C.set_num_threads(1 + i % 3); _C.gemm(a, a, False, False)\n"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("env_isa, expect", [
    ("portable", "forced by FLOWVISION_ISA=portable"),
    ("bogus", "FLOWVISION_ISA=bogus is not an ISA"),
    ("", "the CPU "),
])
def test_isa_reason(env_isa, expect):
    """cpu_isa_reason says why the table was chosen: cpuid, a forced lower level, or an ignored value."""
    code = "from flowvision.backend import _C; print(_C.cpu_isa()); print(_C.cpu_isa_reason())"
    env = dict(os.environ, FLOWVISION_ISA=env_isa)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    isa, reason = r.stdout.splitlines()
    assert expect in reason, reason
    assert isa == ("portable" if env_isa == "portable" else NATIVE_ISA)


def test_isa_reason_higher_than_cpu_is_ignored():
    higher = [i for i in ("avx2", "avx512") if i not in _C.supported_isas()]
    if not higher:
        pytest.skip("this CPU supports every kernel ISA")  # the AVX-512 machines; the AVX2 ones run it
    env = dict(os.environ, FLOWVISION_ISA=higher[-1])
    r = subprocess.run([sys.executable, "-c", "from flowvision.backend import _C; print(_C.cpu_isa_reason())"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert "asks for more than the CPU has and was ignored" in r.stdout, r.stdout + r.stderr
    with pytest.raises(ValueError, match="not supported by this CPU"):
        _C._set_isa_for_testing(higher[-1])


def test_isa_setter_rejects_unknown():
    before = _C.cpu_isa()
    with pytest.raises(ValueError):
        _C._set_isa_for_testing("sse9")
    assert _C.cpu_isa() == before


def test_errors_name_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(2, 5, 6\)"):
        _C.gemm(np.zeros((2, 3, 4), np.float32), np.zeros((2, 5, 6), np.float32), False, False)
    with pytest.raises(ValueError, match=r"\(1, 3, 8, 8\).*\(4, 2, 3, 3\)"):
        _C.conv2d_forward(np.zeros((1, 3, 8, 8), np.float32), np.zeros((4, 2, 3, 3), np.float32), None,
                          (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ValueError, match=r"\(1, 4, 6, 6\)"):
        _C.conv2d_backward_input(np.zeros((1, 4, 6, 6), np.float32), np.zeros((4, 3, 3, 3), np.float32),
                                 (1, 3, 9, 9), (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ValueError, match=r"\(2, 5\).*\(2, 6\)"):
        _C.softmax_backward(np.zeros((2, 5), np.float32), np.zeros((2, 6), np.float32), False)
    with pytest.raises(ValueError, match="half of kernel"):
        _C.max_pool2d_forward(np.zeros((1, 1, 5, 5), np.float32), (2, 2), (1, 1), (2, 2), (1, 1), False)
    with pytest.raises(ValueError, match=r"\(1, 2, 3\)"):
        _C.max_pool2d_forward(np.zeros((1, 2, 3), np.float32), (2, 2), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        _C.layer_norm_forward(np.zeros((2, 5), np.float32), np.zeros(4, np.float32), None, 1e-5)
    with pytest.raises(ValueError, match="mode"):
        _C.interpolate_forward(np.zeros((1, 1, 2, 2), np.float32), (4, 4), "trilinear", False, None, False)
    with pytest.raises(ValueError, match=r"\(1, 6, 5\)"):
        _C.group_norm_forward(np.zeros((1, 6, 5), np.float32), 4, None, None, 1e-5)


def test_coexists_with_torch_threads():
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a, b = randn(4, 64, 96), randn(4, 96, 80, seed=1)
        ref = (tt(a) @ tt(b)).numpy()
        errors = []

        def ours():
            try:
                for _ in range(20):
                    np.testing.assert_allclose(_C.gemm(a, b, False, False), ref, rtol=1e-4, atol=GEMM_ATOL)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        th = [threading.Thread(target=ours) for _ in range(2)]
        for t in th:
            t.start()
        for _ in range(20):  # torch (OpenMP) in the main thread meanwhile, interleaved with our pool
            x = torch.randn(8, 16, 20, 20)
            F.conv2d(x, torch.randn(16, 16, 3, 3), padding=1).sum()
            _C.conv2d_forward(x.numpy(), np.ones((4, 16, 1, 1), np.float32), None, (1, 1), (0, 0), (1, 1), 1)
        for t in th:
            t.join(60)
        assert not errors, errors[0]
    finally:
        torch.set_num_threads(torch_threads)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pool_survives_fork():
    _C.set_num_threads(2)
    _C.gemm(randn(1, 200, 200), randn(1, 200, 200), False, False)  # parent pool is running
    pid = os.fork()
    if pid == 0:  # child: must not deadlock on the parent's (absent) workers
        try:
            c = _C.gemm(np.ones((1, 200, 300), np.float32), np.ones((1, 300, 100), np.float32), False, False)
            os._exit(0 if np.all(c == 300) and _C.get_num_threads() == 2 else 1)
        except BaseException:
            os._exit(2)
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("forked child deadlocked in the thread pool")


def test_float64_and_forcecast():
    a = np.arange(12, dtype=np.int64).reshape(1, 3, 4)
    assert _C.gemm(a, a, False, True).dtype == np.float32  # non-float inputs are cast to float32
    assert _C.gemm(a.astype(np.float64), a, False, True).dtype == np.float64
    # non-contiguous inputs are made contiguous
    x = randn(2, 3, 8, 8)[:, :, ::2, ::2]
    close(_C.softmax_forward(x, False), F.softmax(tt(np.ascontiguousarray(x)), -1), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- CUDA switch
def test_cuda_module_imports_lazily():
    import importlib.util

    import flowvision.backend.cuda as cuda

    built = importlib.util.find_spec("flowvision.backend._C_cuda") is not None
    assert cuda.is_built() == built
    if cuda.is_available():
        assert cuda.device_count() > 0
        assert isinstance(cuda.get_device_name(0), str)
    else:
        assert cuda.device_count() == 0
        with pytest.raises(RuntimeError):
            cuda.get_device_name(0)


# ---------------------------------------------------------------- pointwise activations
_POINTWISE = {"relu": lambda t: torch.relu(t), "clamp": lambda t: torch.clamp(t, -0.5, 6.0),
              "sigmoid": lambda t: torch.sigmoid(t), "hardswish": lambda t: torch.nn.functional.hardswish(t),
              "hardsigmoid": lambda t: torch.nn.functional.hardsigmoid(t)}


@pytest.mark.parametrize("kind", sorted(_POINTWISE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_matches_torch(isa, kind, dtype):
    x = (np.random.RandomState(0).randn(3, 1037) * 8).astype(dtype)  # odd length: vector body + scalar tail
    x[0, :6] = [np.nan, np.inf, -np.inf, -3.0, 3.0, -100.0]
    want = _POINTWISE[kind](torch.from_numpy(x)).numpy()
    rtol, atol = (2e-6, 1e-7) if dtype == np.float32 else (1e-12, 1e-14)
    np.testing.assert_allclose(_C.pointwise(x, kind, -0.5, 6.0), want, rtol=rtol, atol=atol, equal_nan=True)
    inplace = x.copy()
    assert _C.pointwise(inplace, kind, -0.5, 6.0, out=inplace) is not None
    np.testing.assert_allclose(inplace, want, rtol=rtol, atol=atol, equal_nan=True)


def test_pointwise_bad_input():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="unknown kind 'gelu'"):
        _C.pointwise(x, "gelu")
    with pytest.raises(ValueError, match="x's shape"):
        _C.pointwise(x, "relu", out=np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="x's dtype"):
        _C.pointwise(x, "relu", out=np.zeros((2, 3), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.pointwise(x, "relu", out=np.zeros((3, 2), np.float32).T)


# ---------------------------------------------------------------- threaded add / mul
@pytest.mark.parametrize("shapes", [((4, 16, 24, 24), (4, 16, 24, 24)), ((4, 16, 24, 24), (4, 16, 1, 1)),
                                    ((64, 3, 49, 49), (3, 49, 49)), ((4, 16, 1, 1), (4, 16, 24, 24)),
                                    ((300, 301), (301,)), ((300, 301), (300, 1))],
                         ids=["same", "per-row", "repeated-block", "swapped", "bias", "column"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_add_mul_equals_numpy_bit_for_bit(isa, shapes, dtype):
    from flowvision.backend._ops.broadcast import threaded_add_mul as _threaded_add_mul
    r = rng(1)
    a, b = (r.standard_normal(s).astype(dtype) for s in shapes)
    a.flat[::97] = np.nan
    for op, f in (("add", np.add), ("mul", np.multiply)):
        y = _threaded_add_mul(a, b, op)
        assert y is not None, "pattern should take the kernel"
        np.testing.assert_array_equal(y, f(a, b))
        assert y.dtype == dtype and y.shape == f(a, b).shape


def test_threaded_add_mul_falls_back():
    from flowvision.backend._ops.broadcast import threaded_add_mul as _threaded_add_mul
    a = np.ones((8, 32, 56, 56), np.float32)
    assert _threaded_add_mul(a, np.ones((32, 1, 1), np.float32), "add") is None  # middle-axis broadcast
    assert _threaded_add_mul(a, np.ones((8, 32, 56, 56), np.float64), "add") is None  # mixed dtypes
    assert _threaded_add_mul(a[:, :, ::2], np.ones((8, 32, 28, 56), np.float32), "add") is None  # strided
    assert _threaded_add_mul(np.ones(10, np.float32), np.ones(10, np.float32), "add") is None  # small
    with pytest.raises(ValueError, match="unknown op"):
        _C.binary(a, a, "sub", 1, a.size, 0)
    with pytest.raises(ValueError, match="elements"):
        _C.binary(a, a[:1], "add", 1, a.size, 0)


# ---------------------------------------------------------------- per-channel scale (layer scale, SE gate)
_SCALE_CASES = {  # big operand's shape, its permutation into the op (None: as is), small operand's shape
    "convnext-layer-scale-nhwc": ((4, 20, 20, 96), (0, 3, 1, 2), (1, 96, 1, 1)),
    "vit-layer-scale": ((4, 197, 64), None, (64,)),
    "se-gate": ((4, 72, 14, 14), None, (4, 72, 1, 1)),
    "per-channel-nchw": ((4, 64, 28, 28), None, (64, 1, 1)),
    "per-pixel": ((4, 64, 28, 28), None, (1, 1, 28, 28)),
    "two-broadcast-runs": ((4, 64, 28, 28), None, (4, 1, 28, 1)),  # falls back to numpy
}


@pytest.mark.parametrize("case", list(_SCALE_CASES))
@pytest.mark.parametrize("scale_first", [False, True])
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)], ids=["both", "big", "small"])
def test_per_channel_scale_backward_matches_torch(isa, case, scale_first, need):
    """x * s with s broadcast over x (any operand order, either gradient alone, a channels-last view as in ConvNeXt's
    layer scale): gradients equal torch's."""
    import flowvision.backend as flow
    shape, perm, sshape = _SCALE_CASES[case]
    r = rng(3)
    x = r.standard_normal(shape).astype(np.float32)
    s = r.standard_normal(sshape).astype(np.float32)
    out_shape = shape if perm is None else tuple(shape[p] for p in perm)
    gy = r.standard_normal(out_shape).astype(np.float32)
    grads = []
    for lib in (flow, torch):
        xt, st = lib.tensor(x, requires_grad=need[0]), lib.tensor(s, requires_grad=need[1])
        xv = xt.permute(*perm) if perm else xt * 1.0
        y = st * xv if scale_first else xv * st
        y.backward(lib.tensor(gy))
        grads.append((xt.grad, st.grad))
    (fx, fs), (tx, ts) = grads
    for f, t in ((fx, tx), (fs, ts)):
        assert (f is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-5, atol=1e-4 * max(1.0, np.abs(t.numpy()).max()))


@pytest.mark.parametrize("shapes", [((8, 14, 14, 96), (96,)), ((4, 32, 20, 20), (1, 32, 1, 1)),
                                    ((4, 197, 64), (1, 197, 64)), ((4, 32, 20, 20), (4, 1, 20, 1))],
                         ids=["nhwc-bias", "channel-bias", "position-embedding", "two-runs-numpy"])
def test_bias_gradient_sums_match_torch(isa, shapes):
    """x + b with b broadcast: b's gradient (the sum of g over the broadcast axes, on the threaded kernel where b
    varies along one run of axes) equals torch's."""
    import flowvision.backend as flow
    xs, bs = shapes
    r = rng(5)
    x, b = r.standard_normal(xs).astype(np.float32), r.standard_normal(bs).astype(np.float32)
    g = r.standard_normal(xs).astype(np.float32)
    grads = []
    for lib in (flow, torch):
        bt = lib.tensor(b, requires_grad=True)
        (lib.tensor(x) + bt).backward(lib.tensor(g))
        grads.append(bt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-4)
    assert grads[0].shape == bs


def test_kernel_input_of_a_permuted_view_is_its_contiguous_copy(isa):
    """_kin copies an NHWC view of NCHW data (and the reverse) on the threaded layout kernel: the same values as
    numpy's contiguous copy; other strided views take numpy's copy."""
    from flowvision.backend.nn._functional.common import _kin
    a = rng(6).standard_normal((2, 24, 9, 7)).astype(np.float32)
    for view in (a.transpose(0, 2, 3, 1), a.transpose(0, 3, 1, 2), a.transpose(1, 0, 2, 3), a[:, ::2]):
        k = _kin(view)
        assert k.flags.c_contiguous and k.shape == view.shape
        np.testing.assert_array_equal(k, view)


def test_per_channel_scale_layout_and_kernel(isa, threads):
    """The layout rule finds the (A, C, B) view in memory order; the kernel's sums do not depend on the thread
    count; bad arguments are clear errors."""
    from flowvision.backend._ops.broadcast import scale_backward, scale_layout, threaded_add_mul
    nhwc_view = np.zeros((2, 5, 6, 8), np.float32).transpose(0, 3, 1, 2)
    assert scale_layout(nhwc_view, (1, 8, 1, 1)) == ([0, 2, 3, 1], 60, 8, 1)
    assert scale_layout(np.zeros((2, 8, 5, 6)), (8, 1, 1)) == ([0, 1, 2, 3], 2, 8, 30)
    assert scale_layout(np.zeros((2, 8, 5, 6)), (2, 1, 5, 1)) is None
    assert scale_layout(np.zeros((2, 8, 5, 6)), ()) is None
    r = rng(4)
    g, x = (r.standard_normal((64, 96, 40)).astype(np.float32) for _ in range(2))
    s = r.standard_normal(96).astype(np.float32)
    sums = []
    for n in (1, 2, 3):
        _C.set_num_threads(n)
        sums.append(_C.scale_backward(g, x, s, 64, 96, 40)[1])
    np.testing.assert_array_equal(sums[0], sums[1])
    np.testing.assert_array_equal(sums[0], sums[2])
    np.testing.assert_allclose(_C.scale_backward(g, None, None, 64, 96, 40, False, True)[1],
                               g.astype(np.float64).sum((0, 2)), rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match="A\\*C\\*B"):
        _C.scale_backward(g, x, s, 64, 96, 41)
    with pytest.raises(ValueError, match="needs 'scale'"):
        _C.scale_backward(g, x, None, 64, 96, 40)
    with pytest.raises(ValueError, match="shape"):
        _C.scale_backward(g, x[:1], s, 64, 96, 40)
    # the forward over a strided view: equal to numpy bit for bit; a channels-last view times a per-channel value
    # comes back NCHW-contiguous (what the residual add and the next convolution take), others in memory order
    xv = r.standard_normal((2, 30, 30, 64)).astype(np.float32).transpose(0, 3, 1, 2)
    sv = r.standard_normal((1, 64, 1, 1)).astype(np.float32)
    for op, f in (("mul", np.multiply), ("add", np.add)):
        y = threaded_add_mul(xv, sv, op)
        np.testing.assert_array_equal(y, f(xv, sv))
        assert y.flags.c_contiguous
    xt = r.standard_normal((300, 200)).T  # float64, a transposed matrix times one value per column of it
    st = r.standard_normal((1, 300))
    y = threaded_add_mul(xt, st, "mul")
    np.testing.assert_array_equal(y, xt * st)
    assert y.strides == (xt * st).strides
    assert scale_backward(np.ones((2, 3), np.float32), None, None, (3,), False, True) is None  # small: numpy


@pytest.mark.parametrize("name,args", [("relu", ()), ("hardtanh", (-0.5, 2.0)), ("relu6", ()), ("hardswish", ()),
                                       ("hardsigmoid", ())])
def test_inplace_activation_in_storage(name, args):
    """inplace=True without autograd writes into the tensor's storage (same object, version bumped); a strided view
    takes the general path and still writes through to its base."""
    import flowvision.backend as flow
    import flowvision.backend.nn.functional as F
    x = rng(2).standard_normal((2, 3, 17, 19)).astype(np.float32) * 4
    want = getattr(torch.nn.functional, name)(torch.from_numpy(x), *args).numpy()
    t = flow.from_numpy(x.copy())
    v0 = t._version[0]
    with flow.no_grad():
        out = getattr(F, name)(t, *args, inplace=True)
    assert out is t and t._version[0] > v0
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6, atol=1e-7)
    base = flow.from_numpy(x.copy())
    with flow.no_grad():
        getattr(F, name)(base[:, :, ::2], *args, inplace=True)
    np.testing.assert_allclose(base.numpy()[:, :, ::2], want[:, :, ::2], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(base.numpy()[:, :, 1::2], x[:, :, 1::2])
