"""Packed GEMM (`_C.pack_b` / `_C.gemm_packed`), its fused epilogues, the FMA-peak probe, and F.linear's
inference path (weight packed once, re-packed when the weight's version or the ISA changes)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
_C = pytest.importorskip("flowvision.backend._C")

from flowvision import backend as flow  # noqa: E402
from flowvision.backend import _kernels  # noqa: E402
import flowvision.backend.nn.functional as F  # noqa: E402

ISAS = list(_C.supported_isas())
TF = torch.nn.functional
EPILOGUES = {
    "none": lambda t: t, "relu": torch.relu, "relu6": TF.relu6, "gelu": TF.gelu,
    "gelu_tanh": lambda t: TF.gelu(t, approximate="tanh"), "silu": TF.silu, "hardswish": TF.hardswish,
    "clamp": lambda t: t.clamp(-0.5, 0.7), "leaky_relu": lambda t: TF.leaky_relu(t, -0.5),  # slope: lo
}


@pytest.mark.parametrize("shape", [(1, 1000, 300), (2, 130, 600), (3, 5, 7), (4, 70, 260), (7, 70, 3), (197, 130, 300), (300, 77, 513),
                                   (400, 257, 260),
                                   (301, 70, 40), (1000, 96, 16)])  # short K: rows written in chunks across panels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_packed_epilogues(isa, shape, dtype):
    M, N, K = shape
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    w = rng.standard_normal((N, K)).astype(dtype)
    b = rng.standard_normal(N).astype(dtype)
    r = rng.standard_normal((M, N)).astype(dtype)
    pk = _C.pack_b(w, True)
    assert (pk.K, pk.N, pk.isa, pk.dtype) == (K, N, isa, np.dtype(dtype))
    pre = torch.from_numpy(a.astype(np.float64) @ w.astype(np.float64).T + b + r)
    scale = float(pre.abs().max())
    tol = 2e-6 * np.sqrt(K) if dtype == np.float32 else 1e-12
    for ep, fn in EPILOGUES.items():
        y = _C.gemm_packed(a, pk, b, ep, r, -0.5, 0.7)
        assert y.dtype == dtype and y.shape == (M, N)
        assert np.abs(y - fn(pre).numpy()).max() <= tol * scale, ep
    # no bias / residual, and B given as (K, N)
    y = _C.gemm_packed(a, _C.pack_b(np.ascontiguousarray(w.T)))
    np.testing.assert_allclose(y, a @ w.T, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_epilogue_inplace_is_the_fused_epilogue(isa, dtype):
    """_C.epilogue_inplace (the NCHW conv's epilogue in a captured plan) applies every kind with the fused GEMM's
    math: equal to torch, and bit for bit to gemm_packed's fused result (float32 GELU / SiLU: the GEMM runs them
    on whole vectors of its tile, the in-place pass has a scalar tail, so within rounding there)."""
    M, N, K = 37, 133, 70  # N: not a whole number of vectors
    rng = np.random.default_rng(7)
    a, w = rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((N, K)).astype(dtype)
    b, r = rng.standard_normal(N).astype(dtype), rng.standard_normal((M, N)).astype(dtype)
    pk = _C.pack_b(w, True)
    pre = _C.gemm_packed(a, pk, b, "none", r)
    pre.reshape(-1)[:2] = [np.nan, -0.0]
    assert set(EPILOGUES) == set(_C.Epilogue.__members__)
    for ep, fn in EPILOGUES.items():
        y = pre.copy()
        assert _C.epilogue_inplace(y, ep, -0.5, 0.7) is None
        want = fn(torch.from_numpy(pre.astype(np.float64))).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-6, err_msg=ep)
        if dtype == np.float64 or ep not in ("gelu", "gelu_tanh", "silu"):
            fused = _C.gemm_packed(a, pk, b, ep, r, -0.5, 0.7)
            np.testing.assert_array_equal(y.reshape(-1)[2:], fused.reshape(-1)[2:], err_msg=ep)
    with pytest.raises(ValueError, match="unknown epilogue"):
        _C.epilogue_inplace(pre.copy(), "tanh")
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.epilogue_inplace(pre.copy()[:, ::2], "relu")
    with pytest.raises(ValueError, match="float32 or float64"):
        _C.epilogue_inplace(np.ones(4, np.int32), "relu")


def test_gemm_packed_matches_gemm_bitwise():
    """Same micro-kernel and K blocking as _C.gemm: identical results (F.linear's fast path relies on it)."""
    rng = np.random.default_rng(1)
    for M, N, K in [(197, 768, 768), (600, 300, 600), (64, 3072, 260), (50, 100, 1700)]:  # 1700: three K blocks
        a = rng.standard_normal((M, K), dtype=np.float32)
        w = rng.standard_normal((N, K), dtype=np.float32)
        np.testing.assert_array_equal(_C.gemm_packed(a, _C.pack_b(w, True)), _C.gemm(a, w, False, True))


def test_gemm_packed_errors():
    pk = _C.pack_b(np.ones((4, 3), np.float32), True)
    with pytest.raises(ValueError, match="K=3"):
        _C.gemm_packed(np.ones((2, 4), np.float32), pk)
    with pytest.raises(ValueError, match="epilogue"):
        _C.gemm_packed(np.ones((2, 3), np.float32), pk, None, "tanh")
    with pytest.raises(ValueError, match="residual"):
        _C.gemm_packed(np.ones((2, 3), np.float32), pk, None, "none", np.ones((2, 5), np.float32))
    if len(ISAS) > 1:
        old = _C.cpu_isa()
        try:
            _C._set_isa_for_testing(next(isa for isa in ISAS if isa != old))  # not the ISA pk was packed for
            with pytest.raises(ValueError, match="pack it again"):
                _C.gemm_packed(np.ones((2, 3), np.float32), pk)
        finally:
            _C._set_isa_for_testing(old)


def test_fma_peak_probe():
    g = _C.fma_peak_gflops(0.05, 1)
    assert g > 0.5


def test_linear_inference_path_repacks_on_version_and_isa():
    rng = np.random.default_rng(2)
    x = flow.from_numpy(rng.standard_normal((2, 5, 16), dtype=np.float32))
    w = flow.from_numpy(rng.standard_normal((8, 16), dtype=np.float32))
    b = flow.from_numpy(rng.standard_normal(8, dtype=np.float32))
    w.requires_grad_()
    ref = lambda: x.numpy() @ w.detach().numpy().T + b.numpy()  # noqa: E731
    with flow.no_grad():
        np.testing.assert_allclose(F.linear(x, w, b).numpy(), ref(), rtol=1e-5, atol=1e-5)
        pk = _kernels.packed_weight(w)
        F.linear(x, w, b)
        assert _kernels.packed_weight(w) is pk  # cached
        w.mul_(2.0)  # in-place: version bump -> re-pack
        np.testing.assert_allclose(F.linear(x, w, b).numpy(), ref(), rtol=1e-5, atol=1e-5)
        assert _kernels.packed_weight(w) is not pk
        for isa_name in ISAS:  # the packed layout follows the ISA in use
            old = _C.cpu_isa()
            _C._set_isa_for_testing(isa_name)
            try:
                np.testing.assert_allclose(F.linear(x, w, b).numpy(), ref(), rtol=1e-5, atol=1e-5)
            finally:
                _C._set_isa_for_testing(old)
    # with autograd the composed path is used (gradients flow)
    y = F.linear(x, w, b)
    assert y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(x.numpy().reshape(-1, 16).sum(0), (8, 16)), rtol=1e-5)
    # optimizer steps bump the version too
    opt = flow.optim.SGD([w], lr=0.1)
    with flow.no_grad():
        F.linear(x, w, b)
    opt.step()
    with flow.no_grad():
        np.testing.assert_allclose(F.linear(x, w, b).numpy(), ref(), rtol=1e-5, atol=1e-5)
    # the cache entry goes away with the weight
    n = len(_kernels._PACKED)
    del w, opt, y
    import gc
    gc.collect()
    assert len(_kernels._PACKED) < n


def test_linear_float64_and_1d():
    w = flow.from_numpy(np.arange(12.0).reshape(3, 4))
    with flow.no_grad():
        y = F.linear(flow.from_numpy(np.ones(4)), w)
    assert y.dtype == flow.float64 and tuple(y.shape) == (3,)
    np.testing.assert_allclose(y.numpy(), np.arange(12.0).reshape(3, 4).sum(1))


@pytest.mark.parametrize("shape", [(1, 64, 256, 56), (2, 2048, 512, 7), (3, 5, 7, 3), (1, 13, 300, 20)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_packed_a_conv1x1(isa, shape, dtype):
    n, o, c, hw = shape
    rng = np.random.default_rng(o + c)
    x = rng.standard_normal((n, c, hw, hw)).astype(dtype)
    w = rng.standard_normal((o, c, 1, 1)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    ref = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    pk = _C.pack_a(w.reshape(o, c))
    assert (pk.M, pk.K, pk.isa) == (o, c, isa)
    tol = 2e-6 * np.sqrt(c) if dtype == np.float32 else 1e-12
    scale = np.abs(ref).max()
    y = _C.gemm_packed_a(pk, x.reshape(n, c, -1), b).reshape(ref.shape)
    assert np.abs(y - ref).max() <= tol * scale
    r = rng.standard_normal(ref.shape).astype(dtype)
    y = _C.gemm_packed_a(pk, x.reshape(n, c, -1), b, "relu", r.reshape(n, o, -1)).reshape(ref.shape)
    assert np.abs(y - np.maximum(ref + r, 0)).max() <= tol * scale
    y2 = _C.gemm_packed_a(pk, x[0].reshape(c, -1))  # 2-D b
    assert np.abs(y2 - (ref[0] - b[:, None, None]).reshape(o, -1)).max() <= tol * scale
    # the existing conv kernel computes the same GEMM
    np.testing.assert_allclose(y.reshape(ref.shape) * 0 + _C.gemm_packed_a(pk, x.reshape(n, c, -1), b).reshape(ref.shape),
                               _C.conv2d_forward(x, w, b, [1, 1], [0, 0], [1, 1], 1), rtol=1e-4, atol=tol * scale)


def test_conv2d_1x1_inference_path():
    rng = np.random.default_rng(3)
    x = flow.from_numpy(rng.standard_normal((2, 16, 9, 9), dtype=np.float32))
    w = flow.from_numpy(rng.standard_normal((24, 16, 1, 1), dtype=np.float32))
    b = flow.from_numpy(rng.standard_normal(24, dtype=np.float32))
    w.requires_grad_()
    ref = lambda: TF.conv2d(torch.from_numpy(x.numpy()), torch.from_numpy(w.detach().numpy()),  # noqa: E731
                            torch.from_numpy(b.numpy())).numpy()
    with flow.no_grad():
        np.testing.assert_allclose(F.conv2d(x, w, b).numpy(), ref(), rtol=1e-4, atol=1e-4)
        pk = _kernels.packed_weight(w, "conv1x1")
        w.add_(1.0)
        np.testing.assert_allclose(F.conv2d(x, w, b).numpy(), ref(), rtol=1e-4, atol=1e-4)
        assert _kernels.packed_weight(w, "conv1x1") is not pk
        np.testing.assert_allclose(F.conv2d(x[0], w).numpy(), ref()[0] - b.numpy()[:, None, None], rtol=1e-4,
                                   atol=1e-4)  # unbatched, no bias
    y = F.conv2d(x, w, b)  # autograd: the Conv2d Function
    assert y.requires_grad
    y.sum().backward()
    assert w.grad is not None and tuple(w.grad.shape) == (24, 16, 1, 1)


@pytest.mark.parametrize("stride", [(2, 2), (2, 1), (3, 3)])
def test_conv2d_1x1_strided_inference_path(stride):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 8, 11, 10), dtype=np.float32)
    w = rng.standard_normal((12, 8, 1, 1), dtype=np.float32)
    b = rng.standard_normal(12, dtype=np.float32)
    ref = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride).numpy()
    with flow.no_grad():
        y = F.conv2d(flow.from_numpy(x), flow.from_numpy(w), flow.from_numpy(b), stride)
    assert tuple(y.shape) == ref.shape
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 3, 9])
def test_conv2d_1x1_one_pixel_inference_path(n):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, 40, 1, 1), dtype=np.float32)
    w = rng.standard_normal((96, 40, 1, 1), dtype=np.float32)
    b = rng.standard_normal(96, dtype=np.float32)
    ref = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    with flow.no_grad():
        y = F.conv2d(flow.from_numpy(x), flow.from_numpy(w), flow.from_numpy(b))
    assert tuple(y.shape) == ref.shape
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- transformer shapes (short K, narrow N, few rows)
# N values give a half-empty (narrow-kernel) or partial last panel on every ISA (panel width 64 / 16 / 8 floats);
# M values leave every row remainder; K = 96 is one K block, 300 and 520 two and three (the last one partial).
TRANSFORMER_SHAPES = [(5, 96, 96), (49, 300, 160), (61, 96, 200), (131, 520, 40), (98, 192, 24), (13, 384, 12)]


def _reference(a, w, b, r):
    return a.astype(np.float64) @ w.astype(np.float64).T + b + r


@pytest.mark.parametrize("shape", TRANSFORMER_SHAPES)
def test_gemm_packed_transformer_shapes(isa, shape):
    M, K, N = shape
    rng = np.random.default_rng(M * 7 + K + N)
    a = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((N, K), dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    r = rng.standard_normal((M, N), dtype=np.float32)
    pk = _C.pack_b(w, True)
    pre = torch.from_numpy(_reference(a, w, b, r))
    tol = 2e-6 * np.sqrt(K) * float(pre.abs().max())
    for ep, fn in EPILOGUES.items():
        y = _C.gemm_packed(a, pk, b, ep, r, -0.5, 0.7)
        err = np.abs(y - fn(pre).numpy()).max()
        assert err <= tol, (ep, err)
    # bias only / residual only / neither
    np.testing.assert_allclose(_C.gemm_packed(a, pk, b), pre.numpy() - r, rtol=0, atol=tol)
    np.testing.assert_allclose(_C.gemm_packed(a, pk, None, "none", r), pre.numpy() - b, rtol=0, atol=tol)
    np.testing.assert_allclose(_C.gemm_packed(a, pk), pre.numpy() - b - r, rtol=0, atol=tol)
    # float64: the same paths at double width
    pk64 = _C.pack_b(w.astype(np.float64), True)
    y64 = _C.gemm_packed(a.astype(np.float64), pk64, b.astype(np.float64), "gelu", r.astype(np.float64))
    assert np.abs(y64 - TF.gelu(pre).numpy()).max() <= 1e-12 * float(pre.abs().max())


@pytest.mark.parametrize("shape", [(49, 768, 768), (300, 96, 96), (1000, 96, 160), (196, 300, 200)])
def test_gemm_packed_bit_identical_across_threads(isa, shape):
    """The K summation order does not depend on how the tiles are split between threads."""
    M, K, N = shape
    rng = np.random.default_rng(M + K)
    a = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((N, K), dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    r = rng.standard_normal((M, N), dtype=np.float32)
    pk = _C.pack_b(w, True)
    old = flow.get_num_threads()
    try:
        outs = {}
        for t in (1, 2, 3):
            flow.set_num_threads(t)
            outs[t] = [_C.gemm_packed(a, pk, b, "gelu"), _C.gemm_packed(a, pk, b, "none", r),
                       _C.gemm_packed(a, pk, None, "relu")]
    finally:
        flow.set_num_threads(old)
    for t in (2, 3):
        for x, y in zip(outs[1], outs[t]):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("shape", [(3, 300, 70), (5, 96, 96), (61, 300, 200), (49, 96, 40)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_packed_out(isa, shape, dtype):
    M, K, N = shape
    rng = np.random.default_rng(M + N)
    a = rng.standard_normal((M, K)).astype(dtype)
    w = rng.standard_normal((N, K)).astype(dtype)
    b = rng.standard_normal(N).astype(dtype)
    r = rng.standard_normal((M, N)).astype(dtype)
    pk = _C.pack_b(w, True)
    want = _C.gemm_packed(a, pk, b, "relu6", r)
    tol = (2e-6 * np.sqrt(K) if dtype == np.float32 else 1e-12) * np.abs(_reference(a, w, b, r)).max()
    assert np.abs(want - np.clip(_reference(a, w, b, r), 0, 6)).max() <= tol
    out = np.full((M, N), np.nan, dtype)
    y = _C.gemm_packed(a, pk, b, "relu6", r, out=out)
    assert y is out
    np.testing.assert_array_equal(out, want)
    # out is the residual itself (the captured plan's in-place residual add): read before written, per element
    res = r.copy()
    y = _C.gemm_packed(a, pk, b, "relu6", res, out=res)
    assert y is res
    np.testing.assert_array_equal(res, want)
    # a C-contiguous view into a bigger arena
    arena = np.zeros(M * N + 16, dtype)
    view = arena[8:8 + M * N].reshape(M, N)
    _C.gemm_packed(a, pk, b, "relu6", r, out=view)
    np.testing.assert_array_equal(view, want)
    assert not arena[:8].any() and not arena[8 + M * N:].any()


def test_gemm_packed_a_out_aliasing_residual(isa):
    rng = np.random.default_rng(11)
    w = rng.standard_normal((20, 300), dtype=np.float32)  # K = 300: two K blocks of partial sums
    x = rng.standard_normal((2, 300, 50), dtype=np.float32)
    b = rng.standard_normal(20, dtype=np.float32)
    r = rng.standard_normal((2, 20, 50), dtype=np.float32)
    pk = _C.pack_a(w)
    want = _C.gemm_packed_a(pk, x, b, "relu", r)
    ref = np.maximum(np.einsum("ok,bkn->bon", w.astype(np.float64), x) + b[:, None] + r, 0)
    assert np.abs(want - ref).max() <= 2e-6 * np.sqrt(300) * np.abs(ref).max()
    out = np.empty_like(r)
    assert _C.gemm_packed_a(pk, x, b, "relu", r, out=out) is out
    np.testing.assert_array_equal(out, want)
    res = r.copy()
    _C.gemm_packed_a(pk, x, b, "relu", res, out=res)
    np.testing.assert_array_equal(res, want)


def test_gemm_packed_out_errors():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((6, 8), dtype=np.float32)
    pk = _C.pack_b(rng.standard_normal((5, 8), dtype=np.float32), True)
    with pytest.raises(ValueError, match=r"out must be a writeable C-contiguous float32 array of shape \(6, 5\)"):
        _C.gemm_packed(a, pk, out=np.empty((5, 6), np.float32))
    with pytest.raises(ValueError, match="float32"):
        _C.gemm_packed(a, pk, out=np.empty((6, 5), np.float64))
    with pytest.raises(ValueError, match="not C-contiguous"):
        _C.gemm_packed(a, pk, out=np.empty((6, 10), np.float32)[:, ::2])
    ro = np.empty((6, 5), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _C.gemm_packed(a, pk, out=ro)
    with pytest.raises(ValueError, match="out must be a numpy"):
        _C.gemm_packed(a, pk, out=[[0.0] * 5] * 6)
    big = np.zeros(64, np.float32)
    a_in = big[:48].reshape(6, 8)
    with pytest.raises(ValueError, match="must not overlap a"):
        _C.gemm_packed(a_in, pk, out=big[30:60].reshape(6, 5))
    r = np.zeros(40, np.float32)
    with pytest.raises(ValueError, match="residual itself or not overlap"):
        _C.gemm_packed(a, pk, None, "none", r[:30].reshape(6, 5), out=r[5:35].reshape(6, 5))
    pka = _C.pack_a(rng.standard_normal((4, 8), dtype=np.float32))
    with pytest.raises(ValueError, match=r"shape \(4, 3\)"):
        _C.gemm_packed_a(pka, np.ones((8, 3), np.float32), out=np.empty((3, 4), np.float32))
    bb = np.ones(40, np.float32)
    with pytest.raises(ValueError, match="must not overlap b"):
        _C.gemm_packed_a(pka, bb[:24].reshape(8, 3), out=bb[:12].reshape(4, 3))


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(3136, 96, 384), (3136, 384, 96), (784, 192, 768), (196, 1536, 384),
                                   (49, 3072, 768), (1576, 768, 2304), (197, 3072, 768)])
def test_gemm_packed_layer_shapes_full_size(shape):
    M, K, N = shape
    rng = np.random.default_rng(M + K + N)
    a = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((N, K), dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    r = rng.standard_normal((M, N), dtype=np.float32)
    pre = torch.from_numpy(_reference(a, w, b, r))
    tol = 2e-6 * np.sqrt(K) * float(pre.abs().max())
    pk = _C.pack_b(w, True)
    assert np.abs(_C.gemm_packed(a, pk, b, "gelu", r) - TF.gelu(pre).numpy()).max() <= tol
    res = r.copy()
    _C.gemm_packed(a, pk, b, "none", res, out=res)
    assert np.abs(res - pre.numpy()).max() <= tol


def test_linear_and_conv1x1_packed_out():
    rng = np.random.default_rng(13)
    w = flow.from_numpy(rng.standard_normal((24, 16), dtype=np.float32))
    b = rng.standard_normal(24, dtype=np.float32)
    x = rng.standard_normal((2, 5, 16), dtype=np.float32)
    r = rng.standard_normal((2, 5, 24), dtype=np.float32)
    want = _kernels.linear_packed(x, w, b, "gelu", r)
    ref = TF.gelu(torch.from_numpy(x.astype(np.float64) @ w.numpy().astype(np.float64).T + b + r)).numpy()
    np.testing.assert_allclose(want, ref, rtol=0, atol=1e-5)
    out = np.empty((2, 5, 24), np.float32)
    assert _kernels.linear_packed(x, w, b, "gelu", r, out=out) is out
    np.testing.assert_array_equal(out, want)
    res = r.copy()
    _kernels.linear_packed(x, w, b, "gelu", res, out=res)  # in place on the residual
    np.testing.assert_array_equal(res, want)
    with pytest.raises(ValueError, match=r"shape \(2, 5, 24\)"):
        _kernels.linear_packed(x, w, b, out=np.empty((10, 24), np.float32))
    wc = flow.from_numpy(rng.standard_normal((12, 8, 1, 1), dtype=np.float32))
    for hw in (1, 5):
        xc = rng.standard_normal((2, 8, hw, hw), dtype=np.float32)
        rc = rng.standard_normal((2, 12, hw, hw), dtype=np.float32)
        want = _kernels.conv1x1_packed(xc, wc, None, "relu", rc)
        ref = np.maximum(TF.conv2d(torch.from_numpy(xc), torch.from_numpy(wc.numpy())).numpy() + rc, 0)
        np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-5)
        out = np.empty_like(rc)
        assert _kernels.conv1x1_packed(xc, wc, None, "relu", rc, out=out) is out
        np.testing.assert_array_equal(out, want)
        with pytest.raises(ValueError, match="C-contiguous"):
            _kernels.conv1x1_packed(xc, wc, out=np.empty((2, 12, hw, 2 * hw), np.float32)[..., ::2])


@pytest.mark.parametrize("ep", ["gelu", "gelu_tanh", "silu", "hardswish", "relu6"])
def test_gemm_packed_fused_activation_accuracy(isa, ep):
    """The activations applied in registers on the tile's store, over [-12, 12] and at NaN / +-inf."""
    M, N = 64, 256
    a = np.linspace(-12, 12, M, dtype=np.float32)[:, None]  # K = 1, weight 1: y = act(a_i + bias_j)
    b = np.linspace(-0.2, 0.2, N, dtype=np.float32)
    pk = _C.pack_b(np.ones((N, 1), np.float32), True)
    pre = (a + b[None, :]).astype(np.float32)
    y = _C.gemm_packed(a, pk, b, ep)
    ref = EPILOGUES[ep](torch.from_numpy(pre.astype(np.float64))).numpy()
    assert np.abs(y - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), np.abs(y - ref).max()
    assert (np.abs(y - ref) <= 4e-7 * np.maximum(1.0, np.abs(pre))).all()
    special = np.array([[np.nan], [np.inf], [0.0], [-0.0], [1e30], [-3.0]], np.float32)
    ys = _C.gemm_packed(np.repeat(special, 2, 0), pk, None, ep)[::2, 0]
    assert np.isnan(ys[0]) and ys[2] == 0.0
    want = EPILOGUES[ep](torch.from_numpy(special[1:, 0].astype(np.float64))).numpy()
    np.testing.assert_allclose(ys[1:][[0, 3]], want[[0, 3]], rtol=1e-6)  # inf, 1e30 (finite/inf as torch)
