"""NHWC direct convolution (`_C.pack_conv` / `_C.conv2d_nhwc`), NHWC pooling and layout transposes against
torch, on every ISA this CPU supports; results bit-identical for 1/2/3 threads; F.conv2d's inference path
through the direct kernel (weights packed once per version); bad inputs raise clear errors."""
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


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def make(n, c, h, w, o, k, groups, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((o, c // groups) + k, dtype=np.float32)
    b = rng.standard_normal(o, dtype=np.float32)
    return x, wt, b


def ref_conv(x, w, b, s, p, d, g):
    return TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), None if b is None else torch.from_numpy(b), s, p, d, g)


def check(y, ref, what=""):
    ref = ref.numpy() if isinstance(ref, torch.Tensor) else ref
    assert y.shape == ref.shape, f"{what}: shape {y.shape} vs {ref.shape}"
    scale = max(float(np.abs(ref).max()), 1.0)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=2e-5 * scale, err_msg=what)


# (N, C, H, W, O, (KH, KW), stride, padding, dilation, groups)
CASES = [
    (1, 16, 9, 9, 24, (3, 3), (1, 1), (1, 1), (1, 1), 1),            # general 3x3
    (3, 8, 11, 7, 40, (3, 3), (2, 2), (1, 1), (1, 1), 1),            # stride 2, odd sizes, batch 3, 40 = 2 blocks
    (2, 32, 8, 8, 96, (3, 3), (1, 1), (1, 1), (1, 1), 1),            # 96 channels: evened-out blocks
    (1, 3, 23, 21, 64, (7, 7), (2, 2), (3, 3), (1, 1), 1),           # 7x7/2 stem on 3 channels
    (2, 3, 17, 17, 16, (3, 3), (2, 2), (1, 1), (1, 1), 1),           # 3x3/2 stem
    (1, 8, 13, 13, 8, (5, 5), (1, 1), (2, 2), (1, 1), 1),            # 5x5
    (1, 12, 15, 14, 20, (3, 3), (1, 1), (2, 2), (2, 2), 1),          # dilation 2 (DeepLab style)
    (1, 6, 17, 16, 10, (3, 3), (1, 2), (3, 0), (3, 1), 1),           # dilation 3, asymmetric stride/padding
    (1, 5, 9, 9, 7, (3, 2), (1, 1), (0, 1), (1, 1), 1),              # rectangular kernel, no padding in H
    (2, 8, 4, 4, 16, (3, 3), (1, 1), (0, 0), (1, 1), 1),             # no padding: every tile interior, tail tile
    (1, 6, 7, 7, 9, (7, 7), (1, 1), (0, 0), (1, 1), 1),              # kernel as large as the input (VGG fc6)
    (1, 8, 2, 3, 12, (3, 3), (1, 1), (1, 1), (1, 1), 1),             # input smaller than the kernel + padding
    (1, 4, 1, 1, 8, (7, 7), (2, 2), (3, 3), (1, 1), 1),              # one pixel, every tap but the centre clipped
    (1, 16, 10, 10, 32, (3, 3), (1, 1), (1, 1), (1, 1), 2),          # 2 groups
    (2, 64, 7, 7, 64, (3, 3), (1, 1), (1, 1), (1, 1), 32),           # ResNeXt-like, 2 channels per group
    (1, 64, 9, 9, 128, (3, 3), (2, 2), (1, 1), (1, 1), 4),           # 16/32 channels per group, stride 2
    (2, 24, 9, 9, 24, (3, 3), (1, 1), (1, 1), (1, 1), 24),           # depthwise 3x3
    (1, 40, 12, 13, 40, (5, 5), (2, 2), (2, 2), (1, 1), 40),         # depthwise 5x5/2 (40: partial vector)
    (1, 19, 16, 16, 19, (7, 7), (1, 1), (3, 3), (1, 1), 19),         # depthwise 7x7, odd channel count
    (1, 32, 11, 11, 32, (3, 3), (2, 2), (2, 2), (2, 2), 32),         # depthwise dilated strided
    (1, 8, 7, 7, 16, (3, 3), (1, 1), (1, 1), (1, 1), 8),             # channel multiplier 2 (general kernel)
    (2, 20, 6, 5, 36, (1, 1), (1, 1), (0, 0), (1, 1), 1),            # 1x1: packed SGEMM
    (1, 20, 7, 7, 12, (1, 1), (2, 2), (0, 0), (1, 1), 1),            # strided 1x1
    (1, 20, 5, 5, 12, (1, 1), (1, 1), (1, 1), (1, 1), 1),            # padded 1x1
    (1, 36, 9, 8, 36, (3, 3), (2, 2), (1, 1), (1, 1), 9),            # narrow groups (4 wide), partial vector
    (2, 64, 10, 9, 64, (3, 3), (1, 1), (1, 1), (1, 1), 8),           # narrow groups (8 wide)
    (1, 32, 12, 12, 32, (3, 3), (1, 1), (2, 2), (2, 2), 16),         # narrow groups (2 wide), dilated
    (1, 64, 7, 7, 128, (3, 3), (1, 1), (1, 1), (1, 1), 1),           # 7x7 map: 5-pixel tiles (AVX-512, 64-lane blocks)
    (1, 32, 7, 7, 48, (3, 3), (1, 1), (1, 1), (1, 1), 1),            # 7x7 map, 48 lanes: 7-pixel tiles
    (1, 16, 7, 7, 32, (3, 3), (2, 2), (1, 1), (1, 1), 1),            # 4x4 output (16 pixels), 32 lanes: 8-pixel tiles
    (2, 3, 15, 13, 20, (5, 5), (2, 1), (2, 2), (2, 1), 1),           # 3 channels, dilated in H: zero-filled cut rows
    (1, 5, 9, 10, 64, (3, 3), (1, 1), (1, 1), (1, 1), 1),            # 5 channels, edge tiles with cut rows
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:5])) + f"-k{c[5][0]}{c[5][1]}s{c[6][0]}"
                         f"{c[6][1]}p{c[7][0]}{c[7][1]}d{c[8][0]}{c[8][1]}g{c[9]}")
def test_conv2d_nhwc_matches_torch(isa, case):
    n, c, h, w, o, k, s, p, d, g = case
    x, wt, b = make(n, c, h, w, o, k, g)
    pk = _C.pack_conv(wt, g)
    assert (pk.O, pk.C, pk.KH, pk.KW, pk.groups) == (o, c, k[0], k[1], g)
    ref = ref_conv(x, wt, b, s, p, d, g)
    check(nchw(_C.conv2d_nhwc(nhwc(x), pk, b, list(s), list(p), list(d))), ref, f"{isa} {case}")
    check(nchw(_C.conv2d_nhwc(nhwc(x), pk, None, list(s), list(p), list(d))), ref_conv(x, wt, None, s, p, d, g),
          f"{isa} {case} no bias")
    # the eager path's variant writes NCHW directly
    check(_C.conv2d_nhwc_to_nchw(nhwc(x), pk, b, list(s), list(p), list(d), "relu"), torch.relu(ref),
          f"{isa} {case} NCHW out")


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[15], CASES[17], CASES[21], CASES[24]],
                         ids=["general", "stem", "grouped", "depthwise", "1x1", "narrow-grouped"])
def test_conv2d_nhwc_epilogues_and_residual(isa, case):
    n, c, h, w, o, k, s, p, d, g = case
    x, wt, b = make(n, c, h, w, o, k, g, seed=1)
    pk = _C.pack_conv(wt, g)
    conv = ref_conv(x, wt, b, s, p, d, g)
    res = np.random.default_rng(2).standard_normal(conv.shape, dtype=np.float32)
    for ep, fn in EPILOGUES.items():
        y = _C.conv2d_nhwc(nhwc(x), pk, b, list(s), list(p), list(d), ep, None, -0.5, 0.7)
        check(nchw(y), fn(conv), f"{isa} {ep}")
        y = _C.conv2d_nhwc(nhwc(x), pk, b, list(s), list(p), list(d), ep, nhwc(res), -0.5, 0.7)
        check(nchw(y), fn(conv + torch.from_numpy(res)), f"{isa} {ep} + residual")


@pytest.mark.parametrize("case", [CASES[0], CASES[21]], ids=["3x3", "1x1"])
def test_conv2d_nhwc_out_and_inplace_residual(case):
    n, c, h, w, o, k, s, p, d, g = case
    x, wt, b = make(n, c, h, w, o, k, g, seed=3)
    pk = _C.pack_conv(wt, g)
    conv = ref_conv(x, wt, b, s, p, d, g)
    res = nhwc(np.random.default_rng(4).standard_normal(conv.shape, dtype=np.float32))
    out = res.copy()
    # the residual may be the output buffer itself (an in-place "y += conv(x)")
    y = _C.conv2d_nhwc(nhwc(x), pk, b, list(s), list(p), list(d), "relu", out, 0.0, 0.0, out)
    assert y is out
    check(nchw(out), torch.relu(conv + torch.from_numpy(nchw(res))), "in-place residual")


def test_conv2d_nhwc_bit_identical_across_threads(threads):
    for case in [CASES[2], CASES[3], CASES[6], CASES[9], CASES[15], CASES[18], CASES[25], CASES[27], CASES[30],
                 (2, 64, 20, 20, 64, (3, 3), (1, 1), (1, 1), (1, 1), 1), (1, 256, 7, 7, 512, (3, 3), (1, 1), (1, 1), (1, 1), 1)]:
        n, c, h, w, o, k, s, p, d, g = case
        x, wt, b = make(n, c, h, w, o, k, g, seed=5)
        pk = _C.pack_conv(wt, g)
        outs = []
        for nt in (1, 2, 3):
            _C.set_num_threads(nt)
            outs.append(_C.conv2d_nhwc(nhwc(x), pk, b, list(s), list(p), list(d), "silu"))
        assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2]), case


# ---------------------------------------------------------------------------------------------- pooling
POOLS = [((3, 3), (2, 2), (1, 1), (1, 1), False), ((3, 3), (2, 2), (1, 1), (1, 1), True), ((2, 2), (2, 2), (0, 0),
         (1, 1), False), ((3, 2), (1, 2), (1, 0), (2, 1), True)]


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("c", [5, 37])
def test_pooling_nhwc_matches_torch(isa, pool, c):
    k, s, p, d, ceil = pool
    x = np.random.default_rng(6).standard_normal((2, c, 13, 10), dtype=np.float32)
    x[0, 1, 2, 3] = np.nan  # NaN propagates through max pooling like torch
    t = torch.from_numpy(x)
    y = nchw(_C.max_pool2d_nhwc(nhwc(x), list(k), list(s), list(p), list(d), ceil))
    np.testing.assert_array_equal(y, TF.max_pool2d(t, k, s, p, d, ceil).numpy())
    # the same results as the NCHW kernel
    np.testing.assert_array_equal(y, _C.max_pool2d_forward(x, list(k), list(s), list(p), list(d), ceil)[0])
    x = np.nan_to_num(x)
    t = torch.from_numpy(x)
    for cip in (True, False):
        y = nchw(_C.avg_pool2d_nhwc(nhwc(x), list(k), list(s), list(p), ceil, cip))
        np.testing.assert_allclose(y, TF.avg_pool2d(t, k, s, p, ceil, cip).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(y, _C.avg_pool2d_forward(x, list(k), list(s), list(p), ceil, cip))


@pytest.mark.parametrize("osz", [(1, 1), (3, 4), (13, 10), (5, 7)])
def test_adaptive_avg_pool_nhwc_matches_torch(isa, osz):
    x = np.random.default_rng(7).standard_normal((2, 70, 13, 10), dtype=np.float32)
    y = nchw(_C.adaptive_avg_pool2d_nhwc(nhwc(x), list(osz)))
    np.testing.assert_allclose(y, TF.adaptive_avg_pool2d(torch.from_numpy(x), osz).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(y, _C.adaptive_avg_pool2d_forward(x, list(osz)))


def test_layout_transposes(isa, threads):
    # (2, 3, 37, 41): 3 rows of 1517 columns (the RGB interleave: 8 pixels at a time, then single ones);
    # (2, 3, 70, 61): 4270 columns, two interleave tasks per image; (2, 24, 9, 13), (1, 20, 5, 7), (2, 72, 28, 28):
    # whole 8 x 8 register blocks with row and column remainders of every size
    for shape in [(2, 5, 3, 7), (1, 64, 17, 19), (3, 3, 16, 16), (2, 3, 37, 41), (1, 600, 1, 3), (2, 3, 70, 61),
                  (1, 3, 1, 5), (2, 24, 9, 13), (1, 20, 5, 7), (2, 72, 28, 28), (1, 8, 8, 1), (1, 9, 31, 1)]:
        x = np.random.default_rng(8).standard_normal(shape, dtype=np.float32)
        for nt in (1, 2, 3):
            _C.set_num_threads(nt)
            y = _C.nchw_to_nhwc(x)
            np.testing.assert_array_equal(y, x.transpose(0, 2, 3, 1))
            np.testing.assert_array_equal(_C.nhwc_to_nchw(y), x)


# ---------------------------------------------------------------------------------------------- SE gate
@pytest.mark.parametrize("kind", ["sigmoid", "hardsigmoid", "none"])
@pytest.mark.parametrize("c", [7, 40, 96])
def test_channel_gate_nhwc_matches_torch(isa, kind, c):
    rng = np.random.default_rng(c)
    x = rng.standard_normal((3, 5, 6, c), dtype=np.float32)
    g = (rng.standard_normal((3, c)) * 4).astype(np.float32)
    g[0, 0] = np.nan  # a NaN gate makes its channel NaN, as in torch
    act = {"sigmoid": torch.sigmoid, "hardsigmoid": TF.hardsigmoid, "none": lambda t: t}[kind]
    ref = torch.from_numpy(x) * act(torch.from_numpy(g))[:, None, None, :]
    y = _C.channel_gate_nhwc(x, g, kind)
    np.testing.assert_allclose(y, ref.numpy(), rtol=1e-6, atol=1e-6, err_msg=f"{isa} {kind}")
    assert np.isnan(y[0, :, :, 0]).all() and not np.isnan(y[1]).any()
    # equal bit for bit to the unfused steps (the engine's activation, then a broadcast multiply)
    gated = g if kind == "none" else _C.pointwise(g, kind)
    assert np.array_equal(y, x * gated[:, None, None, :], equal_nan=True)
    # (N, 1, 1, C) gates (an NHWC squeeze-excitation branch) and in place
    out = x.copy()
    assert _C.channel_gate_nhwc(out, g.reshape(3, 1, 1, c), kind, out) is out
    assert np.array_equal(out, y, equal_nan=True)


def test_channel_gate_nhwc_threads_and_errors(threads):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 40, 40, 72), dtype=np.float32)
    g = rng.standard_normal((2, 72), dtype=np.float32)
    outs = []
    for nt in (1, 2, 3):
        _C.set_num_threads(nt)
        outs.append(_C.channel_gate_nhwc(x, g))
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])
    bad = [
        (lambda: _C.channel_gate_nhwc(x[0], g), "4-D"),
        (lambda: _C.channel_gate_nhwc(x, g[:, :71]), "one value per"),
        (lambda: _C.channel_gate_nhwc(x, g[:1]), "one value per"),
        (lambda: _C.channel_gate_nhwc(x, g.astype(np.float64)), "float32"),
        (lambda: _C.channel_gate_nhwc(x, g, "tanh"), "unknown kind"),
        (lambda: _C.channel_gate_nhwc(x, g, "sigmoid", np.zeros((2, 40, 40, 71), np.float32)), "out must be"),
        (lambda: _C.channel_gate_nhwc(x, g, "sigmoid", x[:, 1:].reshape(-1)[:x.size - 40 * 72 * 2].reshape(
            2, 39, 40, 72)), "out must be"),
    ]
    for fn, msg in bad:
        with pytest.raises(ValueError, match=msg):
            fn()
    shifted = np.zeros(x.size + 72, np.float32)
    xs = shifted[:x.size].reshape(x.shape)
    xs[...] = x
    with pytest.raises(ValueError, match="overlap"):
        _C.channel_gate_nhwc(xs, g, "sigmoid", shifted[72:].reshape(x.shape))


# ---------------------------------------------------------------------------------------------- F.conv2d
@pytest.mark.parametrize("case", [CASES[0], CASES[3], CASES[6], CASES[10], CASES[16], (1, 64, 9, 9, 64, (3, 3), (1, 1), (1, 1),
                                  (1, 1), 4)])
def test_f_conv2d_inference_uses_direct_kernel(case):
    n, c, h, w, o, k, s, p, d, g = case
    x, wt, b = make(n, c, h, w, o, k, g, seed=9)
    fx, fw, fb = flow.from_numpy(x), flow.from_numpy(wt.copy()), flow.from_numpy(b)
    assert F._direct_conv_ok(fx, fw, g)
    with flow.no_grad():
        y = F.conv2d(fx, fw, fb, s, p, d, g)
        check(y.numpy(), ref_conv(x, wt, b, s, p, d, g), str(case))
        pk = _kernels.packed_conv(fw, g)
        assert _kernels.packed_conv(fw, g) is pk  # packed once
        fw.add_(0.5)  # a new weight version is packed again
        y = F.conv2d(fx, fw, fb, s, p, d, g)
        assert _kernels.packed_conv(fw, g) is not pk
        check(y.numpy(), ref_conv(x, wt + 0.5, b, s, p, d, g), f"{case} after update")
    fw.requires_grad_()
    y = F.conv2d(fx, fw, fb, s, p, d, g)  # autograd: the Conv2d Function, not the inference kernel
    assert y.requires_grad


def test_f_conv2d_direct_path_choice():
    def ok(c, h, o, k, g):
        return F._direct_conv_ok(flow.from_numpy(np.zeros((1, c, h, h), np.float32)),
                                 flow.from_numpy(np.zeros((o, c // g, k, k), np.float32)), g)
    assert ok(64, 56, 64, 3, 1) and ok(3, 224, 64, 7, 1) and ok(144, 56, 144, 5, 144) and ok(512, 14, 512, 3, 32)
    assert ok(128, 56, 128, 3, 32)  # 4 channels per group: the narrow-group kernel
    assert not ok(96, 28, 96, 3, 32)  # 3 channels per group: OC blocks mostly padding
    assert not ok(32, 112, 32, 3, 32)  # depthwise on a large map: the transposes cost more than the kernel saves
    assert not F._direct_conv_ok(flow.from_numpy(np.zeros((1, 8, 9, 9))), flow.from_numpy(np.zeros((8, 8, 3, 3))), 1)


# ---------------------------------------------------------------------------------------------- errors
def test_bad_inputs_raise_clear_errors():
    x, wt, b = make(1, 8, 9, 9, 16, (3, 3), 1)
    pk = _C.pack_conv(wt, 1)
    xn = nhwc(x)
    bad = [
        (lambda: _C.pack_conv(wt.astype(np.float64), 1), "float32"),
        (lambda: _C.pack_conv(wt[0], 1), "4-D"),
        (lambda: _C.pack_conv(wt, 3), "divisible by groups"),
        (lambda: _C.pack_conv(wt, 0), "groups must be >= 1"),
        (lambda: _C.conv2d_nhwc(xn.astype(np.float64), pk), "float32"),
        (lambda: _C.conv2d_nhwc(x, pk), "C=8"),  # NCHW passed by mistake
        (lambda: _C.conv2d_nhwc(xn[0], pk), "(N, H, W, C)"),
        (lambda: _C.conv2d_nhwc(xn, pk, b[:3]), "bias"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, [0, 1]), "invalid stride"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, [1, 1], [-1, 0]), "invalid stride"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, [1, 1, 1]), "2 elements"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, [1, 1], [0, 0], [5, 5]), "does not fit"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, epilogue="tanh"), "unknown epilogue"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, residual=np.zeros((1, 9, 9, 16), np.float32)), "residual"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, out=np.zeros((1, 7, 7, 15), np.float32)), "out must be"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, out=np.zeros((1, 7, 7, 16), np.float64)), "float32"),
        (lambda: _C.conv2d_nhwc(xn, pk, None, out=np.zeros((1, 7, 16, 7), np.float32).transpose(0, 1, 3, 2)),
         "out must be"),
        (lambda: _C.max_pool2d_nhwc(xn[0], [2, 2], [2, 2]), "4-D"),
        (lambda: _C.max_pool2d_nhwc(xn, [3, 3], [1, 1], [2, 2]), "at most half"),
        (lambda: _C.avg_pool2d_nhwc(xn, [0, 3], [1, 1]), "invalid kernel"),
        (lambda: _C.adaptive_avg_pool2d_nhwc(xn, [0, 1]), "positive"),
        (lambda: _C.nchw_to_nhwc(x[0]), "4-D"),
    ]
    for fn, msg in bad:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            fn()
    if len(ISAS) > 1:
        old = _C.cpu_isa()
        other = ISAS[0] if old != ISAS[0] else ISAS[1]
        try:
            _C._set_isa_for_testing(other)
            with pytest.raises(ValueError, match="pack it again"):
                _C.conv2d_nhwc(xn, pk)
        finally:
            _C._set_isa_for_testing(old)
