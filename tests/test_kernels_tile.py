"""The shared FMA register tile (cpu/fma_tile.h) in the GEMM, NHWC conv, depthwise and attention kernels: each
output is one k-ordered chain of FMAs, so the tile shape a call happens to get (GEMV panel grouping, conv tile
height chosen from the pixel count, depthwise pixel runs vs edge pixels) never changes a bit; and the results
match a float64 reference on every ISA this CPU runs."""
import numpy as np
import pytest

_C = pytest.importorskip("flowvision.backend._C")


def _conv_ref(x, w, b, stride, pad, groups):
    """float64 NHWC conv: x (N, H, W, C), w (O, C/g, k, k)."""
    x = x.astype(np.float64)
    N, H, W, C = x.shape
    O, cg, k, _ = w.shape
    og = O // groups
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    OH = (H + 2 * pad - k) // stride + 1
    y = np.zeros((N, OH, OH, O))
    for kh in range(k):
        for kw in range(k):
            patch = xp[:, kh:kh + stride * OH:stride, kw:kw + stride * OH:stride, :]
            for g in range(groups):
                y[..., g * og:(g + 1) * og] += patch[..., g * cg:(g + 1) * cg] @ w[g * og:(g + 1) * og, :, kh, kw].T
    return y + b


@pytest.mark.parametrize("M", [1, 2, 3, 4])
@pytest.mark.parametrize("N", [8, 40, 100, 1000])
def test_gemv_rows_equal_tile_rows_bitwise(isa, M, N):
    # few rows run the GEMV kernel (several weight panels per pass), many rows the full tile: with K <= 768 (one
    # K block) both sum each column in k order from zero, then add the bias -- the same bits
    rng = np.random.default_rng(M * N)
    K = 300
    a = rng.standard_normal((12, K), dtype=np.float32)
    w = rng.standard_normal((N, K), dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    pk = _C.pack_b(w, True)
    full = _C.gemm_packed(a, pk, b)
    few = _C.gemm_packed(np.ascontiguousarray(a[:M]), pk, b)
    np.testing.assert_array_equal(few, full[:M])
    ref = a[:M].astype(np.float64) @ w.T.astype(np.float64) + b
    np.testing.assert_allclose(few, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("O", [8, 24, 64])
def test_conv_tile_height_does_not_change_bits(isa, O):
    # conv tiles run over the batch-flattened pixels and their height is chosen from the pixel count: the first
    # image alone (49 pixels) and in a batch of 3 (147) get different tile heights, the same bits
    rng = np.random.default_rng(O)
    x = rng.standard_normal((3, 7, 7, 16), dtype=np.float32)
    w = rng.standard_normal((O, 16, 3, 3), dtype=np.float32) * np.float32(1 / 12)
    b = rng.standard_normal(O, dtype=np.float32)
    pk = _C.pack_conv(w, 1)
    one = _C.conv2d_nhwc(np.ascontiguousarray(x[:1]), pk, b, [1, 1], [1, 1])
    three = _C.conv2d_nhwc(x, pk, b, [1, 1], [1, 1])
    np.testing.assert_array_equal(one[0], three[0])
    np.testing.assert_allclose(three, _conv_ref(x, w, b, 1, 1, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k,stride,C", [(3, 1, 32), (3, 2, 20), (5, 1, 40), (7, 1, 24)])
def test_depthwise_interior_runs_match_edge_pixels(isa, k, stride, C):
    # interior pixels run in groups of several pixels, edge pixels one at a time (clipped taps): a map that is
    # all interior after padding removal must give the same bits through both routes. Compare the conv of a padded
    # input (interior runs) with the same output pixels of the unpadded conv (edge code where the taps clip)
    rng = np.random.default_rng(k * C)
    H = 23
    x = rng.standard_normal((1, H, H, C), dtype=np.float32)
    w = rng.standard_normal((C, 1, k, k), dtype=np.float32) * np.float32(1 / k)
    b = rng.standard_normal(C, dtype=np.float32)
    pk = _C.pack_conv(w, C)
    y = _C.conv2d_nhwc(x, pk, b, [stride, stride], [k // 2, k // 2], [1, 1], "silu")
    ref = _conv_ref(x, w, b, stride, k // 2, C)
    np.testing.assert_allclose(y, ref / (1 + np.exp(-ref)), rtol=1e-4, atol=1e-4)
    # the explicitly zero-padded input: every pixel is interior, no tap is clipped
    p = k // 2
    xp = np.ascontiguousarray(np.pad(x, ((0, 0), (p, p), (p, p), (0, 0))))
    y2 = _C.conv2d_nhwc(xp, pk, b, [stride, stride], [0, 0], [1, 1], "silu")
    # clipped taps skip zero terms that the padded input multiplies in: x*0 added to a sum leaves it unchanged
    # unless the sum is -0.0, so compare as values
    np.testing.assert_array_equal(y2 + 0.0, y + 0.0)


def test_depthwise_thread_count_independent(threads):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 30, 30, 72), dtype=np.float32)
    w = rng.standard_normal((72, 1, 3, 3), dtype=np.float32)
    pk = _C.pack_conv(w, 72)
    outs = []
    for nt in (1, 2):
        _C.set_num_threads(nt)
        outs.append(_C.conv2d_nhwc(x, pk, None, [1, 1], [1, 1], [1, 1], "hardswish"))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("N,D", [(49, 32), (50, 64), (7, 16)])
def test_attention_tile_matches_reference(isa, N, D):
    rng = np.random.default_rng(N + D)
    q, k, v = (rng.standard_normal((3, N, D), dtype=np.float32) for _ in range(3))
    out = _C.sdpa(q, k, v)
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / np.sqrt(D)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    # one query row alone takes a partial tile: same bits as inside the full batch of rows
    one = _C.sdpa(np.ascontiguousarray(q[:, 5:6]), k, v)
    np.testing.assert_array_equal(one, out[:, 5:6])
