"""The training convolution kernels on the shapes of a ResNet step: `_C.conv2d_forward` (which runs float32
ungrouped KxK convs with >= 16 input channels through the NHWC direct kernel), `_C.conv2d_backward_input` (a unit-stride
conv's through the same kernel, as a conv of gy with the flipped weight) and `_C.conv2d_backward_weight`, against torch on every ISA this CPU supports, and bit-identical across thread counts.
The cases avoid the shapes Winograd takes (unit-stride 3x3 with both channel counts whole vectors):
tests/test_kernels_winograd.py covers those.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
_C = pytest.importorskip("flowvision.backend._C")

# N, C, H, W, O, k, stride, padding, dilation
CASES = [
    (2, 16, 9, 11, 24, (3, 3), (1, 1), (1, 1), (1, 1)),    # direct forward, odd map, OC not a vector multiple
    (2, 32, 8, 8, 32, (3, 3), (2, 2), (1, 1), (1, 1)),     # stride 2
    (1, 16, 7, 7, 8, (3, 3), (1, 1), (0, 0), (1, 1)),      # no padding, few output channels
    (2, 20, 10, 9, 17, (3, 2), (2, 1), (2, 0), (2, 1)),    # dilation, mixed stride, rectangular kernel
    (1, 16, 4, 4, 16, (3, 3), (1, 1), (3, 3), (1, 1)),     # padding larger than the kernel reach
    (3, 24, 6, 6, 40, (5, 5), (3, 3), (2, 2), (1, 1)),     # stride > 1 with a wide kernel
    (2, 16, 9, 10, 20, (3, 3), (1, 1), (2, 1), (2, 1)),    # unit stride, dilation: the direct input gradient
    (1, 16, 6, 6, 16, (3, 1), (1, 1), (1, 0), (1, 1)),     # unit stride, a 3x1 kernel
    (2, 15, 8, 8, 16, (3, 3), (1, 1), (1, 1), (1, 1)),     # 15 channels: the im2col path
    (2, 64, 5, 5, 64, (1, 1), (2, 2), (0, 0), (1, 1)),     # strided 1x1
]

ATOL = 2e-4


def _data(case, dtype=np.float32):
    n, c, h, w, o, k, s, p, d = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = (rng.standard_normal((o, c, *k)) * 0.2).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    return x, wt, b


@pytest.mark.parametrize("case", CASES)
def test_training_conv_matches_torch(isa, case):
    x, w, b = _data(case)
    s, p, d = case[6:]
    tx, tw, tb = (torch.from_numpy(a).requires_grad_(True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, s, p, d)
    y = _C.conv2d_forward(x, w, b, s, p, d, 1)
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-4, atol=ATOL)
    np.testing.assert_allclose(_C.conv2d_forward(x, w, None, s, p, d, 1), (ty - tb[:, None, None]).detach().numpy(),
                               rtol=1e-4, atol=ATOL)
    gy = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    gx = _C.conv2d_backward_input(gy, w, x.shape, s, p, d, 1)
    gw = _C.conv2d_backward_weight(gy, x, w.shape, s, p, d, 1)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-4, atol=ATOL)
    np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-4, atol=ATOL * 10)


@pytest.mark.parametrize("case", CASES[:2])
def test_training_conv_float64_matches_torch(case):
    x, w, b = _data(case, np.float64)
    s, p, d = case[6:]
    ty = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), s, p, d)
    np.testing.assert_allclose(_C.conv2d_forward(x, w, b, s, p, d, 1), ty.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES[:2])
def test_training_conv_forward_bit_identical_across_threads(threads, case):
    x, w, b = _data(case)
    s, p, d = case[6:]
    _C.set_num_threads(1)
    one = _C.conv2d_forward(x, w, b, s, p, d, 1)
    _C.set_num_threads(2)
    np.testing.assert_array_equal(_C.conv2d_forward(x, w, b, s, p, d, 1), one)


# Depthwise convs (groups == C == O). N, C, H, W, k, stride, padding, dilation
DW_CASES = [
    (2, 24, 14, 14, (7, 7), (1, 1), (3, 3), (1, 1)),   # ConvNeXt's 7x7: NHWC forward / input grad, weight grad by rows
    (2, 20, 9, 11, (3, 3), (1, 1), (1, 1), (1, 1)),    # channels not a vector multiple, odd map
    (1, 16, 10, 7, (5, 5), (1, 1), (2, 2), (1, 1)),    # 5x5 (EfficientNet)
    (2, 16, 8, 8, (3, 3), (1, 1), (0, 0), (1, 1)),     # no padding
    (1, 8, 9, 9, (5, 3), (1, 1), (1, 0), (1, 1)),      # rectangular kernel, padding below the reach
    (2, 16, 9, 9, (3, 3), (2, 2), (1, 1), (1, 1)),     # stride 2: the NCHW input-gradient / weight-gradient loops
    (1, 12, 10, 10, (3, 3), (1, 1), (2, 2), (2, 2)),   # dilation: the NHWC input gradient, NCHW weight gradient
    (1, 16, 6, 6, (4, 4), (1, 1), (1, 2), (1, 1)),     # a 4-wide kernel: NCHW weight gradient
]


def _dw_data(case, dtype=np.float32):
    n, c, h, w, k = case[:5]
    rng = np.random.default_rng(2)
    return (rng.standard_normal((n, c, h, w)).astype(dtype), (rng.standard_normal((c, 1, *k)) * 0.3).astype(dtype),
            rng.standard_normal(c).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_training_conv_matches_torch(isa, case, dtype):
    x, w, b = _dw_data(case, dtype)
    s, p, d = case[5:]
    c = x.shape[1]
    tx, tw, tb = (torch.from_numpy(a).requires_grad_(True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, s, p, d, c)
    tol = dict(rtol=1e-4, atol=ATOL) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    y = _C.conv2d_forward(x, w, b, s, p, d, c)
    np.testing.assert_allclose(y, ty.detach().numpy(), **tol)
    gy = np.random.default_rng(3).standard_normal(y.shape).astype(dtype)
    ty.backward(torch.from_numpy(gy))
    np.testing.assert_allclose(_C.conv2d_backward_input(gy, w, x.shape, s, p, d, c), tx.grad.numpy(), **tol)
    tol_w = dict(rtol=1e-4, atol=ATOL * 10) if dtype == np.float32 else tol
    np.testing.assert_allclose(_C.conv2d_backward_weight(gy, x, w.shape, s, p, d, c), tw.grad.numpy(), **tol_w)


@pytest.mark.parametrize("case", DW_CASES[:3])
def test_depthwise_training_conv_bit_identical_across_threads(threads, case):
    x, w, b = _dw_data(case)
    s, p, d = case[5:]
    c = x.shape[1]
    gy = np.random.default_rng(3).standard_normal(_C.conv2d_forward(x, w, b, s, p, d, c).shape).astype(np.float32)
    runs = []
    for n in (1, 2, 3):
        _C.set_num_threads(n)
        runs.append((_C.conv2d_forward(x, w, b, s, p, d, c), _C.conv2d_backward_input(gy, w, x.shape, s, p, d, c),
                     _C.conv2d_backward_weight(gy, x, w.shape, s, p, d, c)))
    for other in runs[1:]:
        for a, b_ in zip(runs[0], other):
            np.testing.assert_array_equal(a, b_)
