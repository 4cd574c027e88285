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
