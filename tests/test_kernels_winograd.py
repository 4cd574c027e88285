"""Winograd F(4x4, 3x3): the float32 unit-stride 3x3 convs with whole-vector channel counts (cpu/conv_winograd.cpp,
chosen by cpu/conv.cpp) for the forward, the input gradient and the weight gradient, against torch's float64 result
on every ISA this CPU supports, through every code path the shapes select: one and several tile chunks, one and
several output-channel blocks, padding 0 / 1 / 2, maps that are not a multiple of the 4x4 tile, a bias; and
bit-identical across thread counts.

The tolerance is relative to the result's largest magnitude, as Winograd's error is (the transforms mix a tile's
values): F(4x4, 3x3) with points 0, +-1, +-2 measures 2e-6 .. 1.4e-5 of it on these shapes (a direct conv's: ~1e-6),
so 4e-5 bounds it with room and still fails a wrong transform, tile offset or block (those are off by O(1)).
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
_C = pytest.importorskip("flowvision.backend._C")

REL = 4e-5

# N, C, H, W, O, padding: every case runs Winograd's weight gradient on every ISA (channels a multiple of 16, maps
# whose 4x4 tiles waste little), all but one its forward and input gradient too
CASES = [
    (2, 64, 28, 28, 64, 1),     # ResNet layer1 at 112x112
    (16, 64, 28, 28, 64, 1),    # 784 tiles: two chunks of tiles
    (8, 384, 8, 8, 384, 1),     # three output-channel blocks
    (2, 512, 4, 4, 512, 1),     # one tile per image: the forward stays direct (too few products saved to pay for
                                # the filter transform), the weight gradient runs Winograd in five blocks
    (3, 32, 7, 7, 48, 1),       # 7x7: partial tiles at the right and bottom edges
    (2, 16, 9, 13, 32, 1),      # odd, rectangular map
    (1, 16, 10, 10, 16, 0),     # no padding (the input gradient is then padded by 2)
    (1, 16, 10, 11, 16, 2),     # padding 2 (the input gradient is then unpadded)
    (2, 48, 14, 14, 96, 1),     # more output than input channels
]


def _data(case):
    n, c, h, w, o, _ = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = (rng.standard_normal((o, c, 3, 3)) * np.sqrt(2.0 / (9 * c))).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    return x, wt, b


def _close(out, ref, what):
    ref = ref.detach().numpy() if hasattr(ref, "detach") else ref
    assert out.shape == ref.shape, what
    err = float(np.abs(np.asarray(out, np.float64) - ref).max())
    scale = float(np.abs(ref).max())
    assert err <= REL * scale, f"{what}: max abs diff {err:.3g} > {REL} x {scale:.3g}"


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}c{c[1]}h{c[2]}w{c[3]}o{c[4]}p{c[5]}" for c in CASES])
def test_winograd_conv_matches_torch_float64(isa, case):
    x, w, b = _data(case)
    p = case[5]
    s, pd, d = [1, 1], [p, p], [1, 1]
    tx, tw, tb = (torch.from_numpy(a).double().requires_grad_(True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, 1, p)
    _close(_C.conv2d_forward(x, w, b, s, pd, d, 1), ty, "forward")
    _close(_C.conv2d_forward(x, w, None, s, pd, d, 1), ty - tb[:, None, None], "forward without bias")
    gy = np.random.default_rng(1).standard_normal(ty.shape).astype(np.float32)
    ty.backward(torch.from_numpy(gy).double())
    _close(_C.conv2d_backward_input(gy, w, x.shape, s, pd, d, 1), tx.grad, "input gradient")
    _close(_C.conv2d_backward_weight(gy, x, w.shape, s, pd, d, 1), tw.grad, "weight gradient")


@pytest.mark.parametrize("case", [CASES[1], CASES[2], CASES[3]], ids=["chunks", "blocks", "weight-blocks"])
def test_winograd_conv_bit_identical_across_threads(threads, case):
    x, w, b = _data(case)
    p = case[5]
    s, pd, d = [1, 1], [p, p], [1, 1]
    gy = np.random.default_rng(1).standard_normal(_C.conv2d_forward(x, w, b, s, pd, d, 1).shape).astype(np.float32)
    runs = []
    for n in (1, 2, 3):
        _C.set_num_threads(n)
        runs.append((_C.conv2d_forward(x, w, b, s, pd, d, 1), _C.conv2d_backward_input(gy, w, x.shape, s, pd, d, 1),
                     _C.conv2d_backward_weight(gy, x, w.shape, s, pd, d, 1)))
    for run in runs[1:]:
        for a, ref in zip(run, runs[0]):
            np.testing.assert_array_equal(a, ref)


def test_winograd_conv_of_nonfinite_input_stays_local(isa):
    """An inf in one image reaches only that image's outputs (the tiles of different images never mix)."""
    x, w, b = _data(CASES[0])
    x[1, 3, 5, 7] = np.inf
    y = np.asarray(_C.conv2d_forward(x, w, b, [1, 1], [1, 1], [1, 1], 1))
    assert np.isfinite(y[0]).all()
    assert not np.isfinite(y[1]).all()


@pytest.fixture
def winograd_switch():
    from flowvision.backend.backends import cpu
    yield cpu
    cpu.allow_winograd = True


def test_winograd_switch_and_reference_kernels(winograd_switch):
    """allow_winograd = False gives the direct conv (a direct conv's accuracy, other bits than Winograd's);
    reference_kernels() gives it on its thread whatever the switch says."""
    from flowvision.backend._ops.kernel_select import reference_kernels
    x, w, b = _data(CASES[2])
    args = ([1, 1], [1, 1], [1, 1], 1)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                                     torch.from_numpy(b).double(), 1, 1).numpy()
    fast = np.asarray(_C.conv2d_forward(x, w, b, *args))
    winograd_switch.allow_winograd = False
    assert winograd_switch.allow_winograd is False and not _C.winograd_allowed()
    direct = np.asarray(_C.conv2d_forward(x, w, b, *args))
    assert float(np.abs(direct - ref).max()) <= 3e-6 * float(np.abs(ref).max())
    assert not np.array_equal(fast, direct)
    winograd_switch.allow_winograd = True
    np.testing.assert_array_equal(_C.conv2d_forward(x, w, b, *args), fast)
    with reference_kernels():
        assert not _C.winograd_allowed()
        np.testing.assert_array_equal(_C.conv2d_forward(x, w, b, *args), direct)
    assert _C.winograd_allowed()
    with pytest.raises(TypeError, match="True or False"):
        winograd_switch.allow_winograd = 1


# ---------------------------------------------------------------- captured plans: NHWC, filters transformed once
def _nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("ep", ["none", "relu", "gelu"])
def test_winograd_packed_nhwc_conv_matches_torch(isa, ep):
    """conv2d_nhwc with a Winograd-packed weight: bias, residual and the epilogue fused in the output transform,
    NHWC and NCHW outputs."""
    n, c, h, o = 2, 32, 20, 48
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
    w = (rng.standard_normal((o, c, 3, 3)) * np.sqrt(2.0 / (9 * c))).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    res = rng.standard_normal((n, o, h, h)).astype(np.float32)
    args = ([1, 1], [1, 1], [1, 1])
    assert _C.winograd_plan_suits(list(x.shape), list(w.shape), *args, 1)
    pk = _C.pack_conv(w, 1, winograd=True)
    assert pk.winograd and not _C.pack_conv(w, 1).winograd
    assert pk.nbytes > _C.pack_conv(w, 1).nbytes + 36 * c * o * 4 - 1
    t = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                                   torch.from_numpy(b).double(), 1, 1)
    act = {"none": lambda v: v, "relu": torch.relu, "gelu": torch.nn.functional.gelu}[ep]
    ref = act(t + torch.from_numpy(res).double()).numpy()
    y = np.asarray(_C.conv2d_nhwc(_nhwc(x), pk, b, *args, ep, _nhwc(res), 0.0, 0.0, None))
    _close(y.transpose(0, 3, 1, 2), ref, f"NHWC Winograd conv, {ep} epilogue with residual")
    y2 = np.asarray(_C.conv2d_nhwc_to_nchw(_nhwc(x), pk, b, *args, ep, 0.0, 0.0))
    _close(y2, act(t).numpy(), f"NHWC Winograd conv to NCHW, {ep} epilogue")
    # a map too small to pay: the same packed weight runs the direct kernel
    xs = x[:1, :, :3, :3].copy()
    assert not _C.winograd_plan_suits(list(xs.shape), list(w.shape), *args, 1)
    ys = np.asarray(_C.conv2d_nhwc(_nhwc(xs), pk, b, *args, "none", None, 0.0, 0.0, None))
    np.testing.assert_array_equal(ys, np.asarray(_C.conv2d_nhwc(_nhwc(xs), _C.pack_conv(w, 1), b, *args, "none",
                                                                None, 0.0, 0.0, None)))


@pytest.mark.parametrize("dilation,padding,hw", [(2, 2, (19, 23)), (4, 4, (33, 30)), (3, 0, (20, 17)),
                                                (2, 3, (13, 15)), (6, 6, (40, 40))])
def test_dilated_winograd_matches_torch(isa, dilation, padding, hw):
    """Dilated 3x3 convs (DeepLabV3 / FCN backbones and ASPP) in a plan: the 4 x 4 tiles of each dilation phase,
    maps that leave partial tiles in every phase, padding other than the dilation, bias / residual / epilogue."""
    n, c, o = 2, 16, 24
    rng = np.random.default_rng(dilation * 10 + padding)
    x = rng.standard_normal((n, c) + hw).astype(np.float32)
    w = (rng.standard_normal((o, c, 3, 3)) * np.sqrt(2.0 / (9 * c))).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    t = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                                   torch.from_numpy(b).double(), 1, padding, dilation)
    res = rng.standard_normal(tuple(t.shape)).astype(np.float32)
    args = ([1, 1], [padding, padding], [dilation, dilation])
    assert _C.winograd_plan_suits(list(x.shape), list(w.shape), *args, 1)
    pk = _C.pack_conv(w, 1, winograd=True)
    y = np.asarray(_C.conv2d_nhwc(_nhwc(x), pk, b, *args, "relu", _nhwc(res), 0.0, 0.0, None))
    _close(y.transpose(0, 3, 1, 2), torch.relu(t + torch.from_numpy(res).double()).numpy(),
           f"dilated Winograd conv, dilation {dilation}, padding {padding}")
    # the direct kernel on the same shapes agrees as closely
    direct = np.asarray(_C.conv2d_nhwc(_nhwc(x), _C.pack_conv(w, 1), b, *args, "relu", _nhwc(res), 0.0, 0.0, None))
    np.testing.assert_allclose(y, direct, rtol=1e-4, atol=1e-4 * np.abs(direct).max())


def test_dilated_winograd_only_where_its_tiles_pay():
    w = [64, 64, 3, 3]
    # a plan takes a dilated conv whose phases tile well
    assert _C.winograd_plan_suits([1, 64, 65, 65], w, [1, 1], [2, 2], [2, 2], 1)
    assert _C.winograd_plan_suits([1, 64, 65, 65], w, [1, 1], [4, 4], [4, 4], 1)
    # ASPP's rates on a 65 x 65 map: a third or more of the taps in the padding, which the direct kernel skips and
    # Winograd's tiles compute (rate 12 measured 0.94x, rate 24 0.74x); rate 36: phases of 1-2 pixels
    for rate in (12, 24, 36):
        assert not _C.winograd_plan_suits([1, 64, 65, 65], w, [1, 1], [rate, rate], [rate, rate], 1), rate
    # padding beyond twice the dilation, strides: direct
    assert not _C.winograd_plan_suits([1, 64, 65, 65], w, [1, 1], [5, 5], [2, 2], 1)
    assert not _C.winograd_plan_suits([1, 64, 65, 65], w, [2, 2], [2, 2], [2, 2], 1)


def test_winograd_pack_rejects_other_weights():
    rng = np.random.default_rng(5)
    with pytest.raises(ValueError, match="ungrouped 3x3"):
        _C.pack_conv(rng.standard_normal((16, 16, 1, 1)).astype(np.float32), 1, winograd=True)
    with pytest.raises(ValueError, match="ungrouped 3x3"):
        _C.pack_conv(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), 2, winograd=True)
    with pytest.raises(ValueError, match="whole vectors"):
        _C.pack_conv(rng.standard_normal((18, 18, 3, 3)).astype(np.float32), 1, winograd=True)


def _small_cnn():
    import flowvision.backend as flow
    nn = flow.nn
    flow.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, 10)).eval()


def test_compiled_plan_takes_winograd_and_matches_eager(winograd_switch):
    import flowvision.backend as flow
    model = _small_cnn()
    x = flow.from_numpy(np.random.default_rng(6).standard_normal((2, 3, 24, 24)).astype(np.float32))
    cm = flow.compile(model, x)
    plan = cm.plans[(tuple(x.shape), x._dtype)]
    assert plan.winograd_convs == 2  # the 32 -> 32 and 32 -> 64 convs; the 3-channel stem stays direct
    with flow.no_grad():
        ref = model(x).numpy()
    _close(cm(x).numpy(), ref, "captured with Winograd vs eager")
    winograd_switch.allow_winograd = False
    cm2 = flow.compile(model, x)
    assert cm2.plans[(tuple(x.shape), x._dtype)].winograd_convs == 0


def test_compile_rebuilds_a_plan_whose_winograd_fails_validation(monkeypatch):
    """A plan outside the tolerance because of Winograd is rebuilt with direct convs, silently (no fallback)."""
    import warnings

    import flowvision.backend as flow
    from flowvision.backend import _capture
    real = _capture.CompiledModule._matches
    monkeypatch.setattr(_capture.CompiledModule, "_matches",
                        lambda self, plan, x, ref: plan.winograd_convs == 0 and real(self, plan, x, ref))
    model = _small_cnn()
    x = flow.from_numpy(np.random.default_rng(6).standard_normal((2, 3, 24, 24)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = flow.compile(model, x)
        out = cm(x)
    plan = cm.plans[(tuple(x.shape), x._dtype)]
    assert plan.winograd_convs == 0 and plan.executor == "native"
    with flow.no_grad():
        np.testing.assert_allclose(out.numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)


def test_compile_validates_winograd_plans_at_the_kernels_error_bound():
    """A 256-channel 3x3 conv on a 48 x 48 map errs by ~1.1e-5 of its largest output as Winograd: above the direct
    kernels' absolute tolerance (1e-5 of it at rtol 1e-4), inside Winograd's (4e-5). The plan keeps Winograd; with a
    tighter rtol it goes direct."""
    import flowvision.backend as flow
    nn = flow.nn
    flow.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.ReLU()).eval()
    x = flow.from_numpy(np.random.default_rng(0).standard_normal((1, 256, 48, 48)).astype(np.float32))
    with flow.no_grad():
        ref = model(x).numpy()
    loose = flow.compile(model, x, validate=False)
    err = np.abs(loose(x).numpy() - ref) - 1e-4 * np.abs(ref)
    assert 1e-5 < err.max() / np.abs(ref).max() < 4e-5  # the case this test is about
    cm = flow.compile(model, x)
    assert cm.fallback_reason is None and cm.plans[(tuple(x.shape), x._dtype)].winograd_convs == 1
    strict = flow.compile(model, x, rtol=2e-5)
    assert strict.plans[(tuple(x.shape), x._dtype)].winograd_convs == 0
