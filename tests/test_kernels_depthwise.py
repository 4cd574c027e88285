"""The NHWC depthwise kernel (`_C.conv2d_nhwc` with groups == C == O) against torch on every ISA this CPU
supports: map widths around the tile widths (unit-stride 3x3 / 5x5 runs, edge pixels, maps narrower than a run),
channel counts that leave a partial vector, strides and dilations, every epilogue with and without a residual;
bit-identical for 1/2/3 threads."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
_C = pytest.importorskip("flowvision.backend._C")

TF = torch.nn.functional
EPILOGUES = {
    "none": lambda t: t, "relu": torch.relu, "relu6": TF.relu6, "gelu": TF.gelu,
    "gelu_tanh": lambda t: TF.gelu(t, approximate="tanh"), "silu": TF.silu, "hardswish": TF.hardswish,
    "clamp": lambda t: t.clamp(-0.5, 0.7), "leaky_relu": lambda t: TF.leaky_relu(t, -0.5),  # slope: lo
}

# (N, C, H, W, K, stride, dilation)
CASES = [
    (1, 72, 14, 14, 5, 1, 1),   # MobileNetV3 5x5: 72 channels (a partial last block on AVX2 and AVX-512)
    (2, 48, 7, 7, 5, 1, 1),     # map narrower than a tile plus its edges: every tile clipped
    (1, 16, 30, 29, 3, 2, 1),   # /2: interior runs, a short last tile
    (1, 40, 1, 1, 3, 1, 1),     # one pixel: every tap but the centre outside
    (1, 19, 9, 23, 3, 1, 2),    # odd channel count (partial vector), dilation 2
    (3, 8, 12, 5, 7, 1, 1),     # 7x7 on a map narrower than the kernel, one vector of channels
    (1, 96, 16, 16, 3, 2, 1),   # EfficientNet-style /2 on six 16-channel blocks
    (1, 33, 6, 40, 5, 2, 1),    # wide row, /2, 33 channels
    (1, 20, 6, 21, 3, 1, 1),    # unit-stride 8-pixel runs with a 4-channel tail
    (2, 36, 5, 19, 5, 1, 1),    # 5x5 unit-stride runs, 4-channel tail
    (1, 24, 11, 45, 5, 2, 1),   # 5x5 /2 runs of 8, 4 and 1 pixels; the first and last rows clip the kernel
    (2, 64, 10, 58, 3, 2, 1),   # 3x3 /2 runs of 8 then 4, whole vectors only
    (1, 24, 9, 29, 7, 1, 1),    # 7x7 (ConvNeXt) runs of 6, then an overlapping run; 3-column borders
    (2, 40, 7, 7, 7, 1, 1),     # ConvNeXt's last stage: a 7x7 map, every run clipped by the padding
]


def _ref(x, w, b, k, s, d, res, act):
    y = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), s, d * (k // 2), d, x.shape[1])
    if res is not None:
        y = y + torch.from_numpy(res).permute(0, 3, 1, 2)
    return act(y).permute(0, 2, 3, 1).numpy()


def _run(case, ep, with_res, seed=0):
    n, c, h, w, k, s, d = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((c, 1, k, k), dtype=np.float32)
    b = rng.standard_normal(c, dtype=np.float32)
    pad = d * (k // 2)
    oh, ow = (h + 2 * pad - d * (k - 1) - 1) // s + 1, (w + 2 * pad - d * (k - 1) - 1) // s + 1
    res = rng.standard_normal((n, oh, ow, c), dtype=np.float32) if with_res else None
    y = _C.conv2d_nhwc(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), _C.pack_conv(wt, c), b, [s, s], [pad, pad],
                       [d, d], ep, res, -0.5, 0.7)
    return y, _ref(x, wt, b, k, s, d, res, EPILOGUES[ep])


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:4])) + f"-k{c[4]}s{c[5]}d{c[6]}")
def test_depthwise_matches_torch(isa, case):
    for ep in EPILOGUES:
        for with_res in (False, True):
            y, ref = _run(case, ep, with_res)
            scale = max(float(np.abs(ref).max()), 1.0)
            np.testing.assert_allclose(y, ref, rtol=1e-4, atol=2e-5 * scale, err_msg=f"{isa} {case} {ep} {with_res}")


def test_depthwise_bit_identical_across_threads(threads):
    for case in CASES:
        outs = []
        for nt in (1, 2, 3):
            _C.set_num_threads(nt)
            outs.append(_run(case, "silu", True)[0])
        assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2]), case


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:4])) + f"-k{c[4]}s{c[5]}d{c[6]}")
def test_depthwise_output_aliasing_its_residual_is_bit_identical(isa, case):
    """A row's last run overlaps the previous one (its first pixels computed twice) unless the residual is the output
    itself: both ways give every pixel the same bits."""
    y, _ = _run(case, "hardswish", True)
    n, c, h, w, k, s, d = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((c, 1, k, k), dtype=np.float32)
    b = rng.standard_normal(c, dtype=np.float32)
    res = rng.standard_normal(y.shape, dtype=np.float32)  # the same draws as _run's residual
    pad = d * (k // 2)
    out = _C.conv2d_nhwc(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), _C.pack_conv(wt, c), b, [s, s], [pad, pad],
                         [d, d], "hardswish", res, -0.5, 0.7, res)
    assert np.shares_memory(out, res)
    np.testing.assert_array_equal(out, y)
