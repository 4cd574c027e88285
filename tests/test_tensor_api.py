"""The Tensor API against torch: creation, random generation, dtype promotion, half-precision conversions,
properties, ``__repr__`` and DLPack/numpy interop without copies."""
import itertools
import math

import numpy as np
import pytest
import torch

import flowvision.backend as flow

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def fdt(name):
    return getattr(flow, name)


def tdt(name):
    return getattr(torch, name)


def name_of(dt):
    return str(dt).replace("torch.", "").replace("flowvision.backend.", "")


def same(f, t, exact=True):
    assert tuple(f.shape) == tuple(t.shape), (f.shape, t.shape)
    assert name_of(f.dtype) == name_of(t.dtype), (f.dtype, t.dtype)
    a = f.float().numpy() if f.dtype is flow.bfloat16 else f.numpy()
    b = t.float().numpy() if t.dtype is torch.bfloat16 else t.numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ creation
@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2, 3], [True, False], [[1, 2], [3, 4]], 3, 2.5, True, [], [[]], [[1.5], [2.5]],
    np.array([1, 2], np.int32), np.array([1.0], np.float16), np.array(3.0), np.float64(2.0), np.int64(7),
    [np.float32(1), 2], (1, 2.5), [[True, 1], [0, 2]],
], ids=repr)
def test_tensor_infers_dtype_and_copies(data):
    f, t = flow.tensor(data), torch.tensor(data)
    same(f, t)
    if isinstance(data, np.ndarray) and data.ndim:
        data[...] = 0
        assert f.numpy().ravel()[0] != 0 or t.numpy().ravel()[0] == 0  # tensor() copied


@pytest.mark.parametrize("dt", DTYPES)
def test_tensor_with_dtype(dt):
    vals = [[0.0, 1.5, -2.7], [3.9, 255.0, 1e-3]]
    if dt == "uint8" or dt == "int8":
        vals = [[0.0, 1.5, 2.7], [3.9, 100.0, 1e-3]]
    same(flow.tensor(vals, dtype=fdt(dt)), torch.tensor(vals, dtype=tdt(dt)))
    same(flow.zeros(2, 3, dtype=fdt(dt)), torch.zeros(2, 3, dtype=tdt(dt)))
    same(flow.ones((2, 1), dtype=fdt(dt)), torch.ones((2, 1), dtype=tdt(dt)))
    same(flow.full((3,), 1, dtype=fdt(dt)), torch.full((3,), 1, dtype=tdt(dt)))
    e_f, e_t = flow.empty(2, 0, 3, dtype=fdt(dt)), torch.empty(2, 0, 3, dtype=tdt(dt))
    assert tuple(e_f.shape) == tuple(e_t.shape) and name_of(e_f.dtype) == name_of(e_t.dtype)


def test_full_infers_dtype_from_fill_value():
    for v in (3, 2.5, True, -1):
        same(flow.full((2, 2), v), torch.full((2, 2), v))


def test_like_functions():
    f, t = flow.tensor([[1, 2, 3]], dtype=flow.int32), torch.tensor([[1, 2, 3]], dtype=torch.int32)
    same(flow.zeros_like(f), torch.zeros_like(t))
    same(flow.ones_like(f, dtype=flow.float64), torch.ones_like(t, dtype=torch.float64))
    same(flow.full_like(f, 7), torch.full_like(t, 7))
    e = flow.empty_like(f)
    assert e.shape == f.shape and e.dtype is flow.int32
    assert flow.ones_like(flow.ones(2), requires_grad=True).requires_grad


def test_as_tensor_and_from_numpy_share_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = flow.from_numpy(a)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    assert np.shares_memory(t.numpy(), a)
    # as_tensor: shares when the dtype matches, copies otherwise (like torch)
    assert flow.as_tensor(a).data_ptr() == a.__array_interface__["data"][0]
    c = flow.as_tensor(a, dtype=flow.float64)
    assert c.dtype is flow.float64 and not np.shares_memory(c.numpy(), a)
    assert flow.as_tensor(t) is t
    # tensor() always copies
    assert not np.shares_memory(flow.tensor(a).numpy(), a)
    # non-contiguous arrays keep their strides
    nc = np.arange(12.0).reshape(3, 4)[:, ::2]
    tn = flow.from_numpy(nc)
    assert tn.stride() == torch.from_numpy(nc).stride() and not tn.is_contiguous()
    with pytest.raises(TypeError):
        flow.from_numpy([1, 2])


@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((2, 9), {}), ((1, 2, 0.25), {}), ((10, 0, -3), {}), ((0.0, 1.0, 0.1), {}), ((-1.5, 2.5, 0.5), {}),
    ((5,), {"dtype": "float64"}), ((0, 10, 3), {"dtype": "int32"}), ((0, 1, 0.3), {"dtype": "float64"}),
], ids=str)
def test_arange(args, kw):
    fk = {k: fdt(v) for k, v in kw.items()}
    tk = {k: tdt(v) for k, v in kw.items()}
    same(flow.arange(*args, **fk), torch.arange(*args, **tk), exact=False)


@pytest.mark.parametrize("args", [(0, 1, 5), (-2.5, 7, 11), (3, 3, 1), (0, 1, 0), (10, -10, 7), (0, 1, 100),
                                  (8.68, -2.84, 267), (0.1, 0.7, 9), (-1, 1, 20)])
def test_linspace(args):
    """Bit-exact for float32/64 and integers: torch's two-ended formula with a fused multiply-add in the dtype's
    precision. float16/bfloat16 within one ulp of the dtype at max(|start|, |end|): torch's vectorised half kernel
    keeps the step in the half type on AVX2 but in float32 on AVX-512, so torch's own result depends on the CPU
    (ours is the float32-step one, rounded once); the half-type step's error grows with the index, up to about
    half an ulp of the range's magnitude."""
    for dt in ("float32", "float64", "int64", "int32"):
        same(flow.linspace(*args, dtype=fdt(dt)), torch.linspace(*args, dtype=tdt(dt)))
    for dt in ("float16", "bfloat16"):
        f, t = flow.linspace(*args, dtype=fdt(dt)), torch.linspace(*args, dtype=tdt(dt))
        assert tuple(f.shape) == tuple(t.shape) and name_of(f.dtype) == name_of(t.dtype)
        a, b = f.float().numpy(), t.float().numpy()
        # one ulp of the half type: float32's spacing scaled by the mantissa bits the half type lacks
        ulp = float(np.spacing(np.float32(max(abs(args[0]), abs(args[1]))))) * 2.0 ** (13 if dt == "float16" else 16)
        assert np.all(np.abs(a - b) <= ulp), (dt, ulp, a, b)
    same(flow.linspace(*args), torch.linspace(*args))


def test_eye():
    same(flow.eye(3), torch.eye(3))
    same(flow.eye(2, 4, dtype=flow.int64), torch.eye(2, 4, dtype=torch.int64))


def test_random_shapes_dtypes_and_ranges():
    flow.manual_seed(0)
    r = flow.rand(1000, 3)
    assert r.shape == (1000, 3) and r.dtype is flow.float32 and 0 <= float(r.min()) and float(r.max()) < 1
    n = flow.randn(4000, dtype=flow.float64)
    assert n.dtype is flow.float64 and abs(float(n.mean())) < 0.1 and abs(float(n.std()) - 1) < 0.1
    i = flow.randint(3, 7, (500,))
    assert i.dtype is flow.int64 and set(np.unique(i.numpy())) == {3, 4, 5, 6}
    assert flow.randint(5, (2, 2), dtype=flow.int32).dtype is flow.int32
    p = flow.randperm(50)
    assert p.dtype is flow.int64 and sorted(p.tolist()) == list(range(50))
    nm = flow.normal(flow.full((3000,), 5.0), 2.0)
    assert abs(float(nm.mean()) - 5) < 0.2 and abs(float(nm.std()) - 2) < 0.2
    nm2 = flow.normal(1.0, 0.5, size=(2, 3))
    assert nm2.shape == (2, 3)
    b = flow.bernoulli(flow.full((4000,), 0.3))
    assert b.dtype is flow.float32 and set(np.unique(b.numpy())) <= {0.0, 1.0} and abs(float(b.mean()) - 0.3) < 0.05
    assert flow.rand(2, 3, dtype=flow.bfloat16).dtype is flow.bfloat16
    assert flow.randn(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        flow.rand(2, dtype=flow.int64)


def test_manual_seed_reproducibility():
    def draw():
        return [flow.rand(3).numpy().copy(), flow.randn(2, 2).numpy().copy(), flow.randint(0, 100, (5,)).numpy(),
                flow.randperm(7).numpy(), flow.normal(0.0, 1.0, (3,)).numpy(),
                flow.bernoulli(flow.full((6,), 0.5)).numpy()]
    flow.manual_seed(1234)
    a = draw()
    flow.manual_seed(1234)
    b = draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    flow.manual_seed(4321)
    c = draw()
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    assert flow.initial_seed() == 4321
    state = flow.get_rng_state()
    d = flow.rand(4).numpy().copy()
    flow.set_rng_state(state)
    np.testing.assert_array_equal(flow.rand(4).numpy(), d)


def test_generator_is_independent_of_the_default_one():
    g1, g2 = flow.Generator().manual_seed(7), flow.Generator().manual_seed(7)
    flow.manual_seed(0)
    x = flow.rand(5, generator=g1).numpy().copy()
    flow.rand(100)  # advancing the default generator does not affect g2
    np.testing.assert_array_equal(flow.randn(0).numpy(), np.zeros(0, np.float32))
    y = flow.rand(5, generator=g2).numpy()
    np.testing.assert_array_equal(x, y)
    flow.manual_seed(0)
    z = flow.rand(5).numpy().copy()
    flow.manual_seed(0)
    _ = flow.randint(0, 10, (3,), generator=g1)  # using g1 does not advance the default generator
    np.testing.assert_array_equal(flow.rand(5).numpy(), z)
    for fn in (lambda g: flow.randn(3, generator=g), lambda g: flow.randperm(6, generator=g),
               lambda g: flow.bernoulli(flow.full((5,), 0.5), generator=g),
               lambda g: flow.normal(0.0, 1.0, (3,), generator=g)):
        np.testing.assert_array_equal(fn(flow.Generator().manual_seed(3)).numpy(),
                                      fn(flow.Generator().manual_seed(3)).numpy())
    assert g1.initial_seed() == 7


# ------------------------------------------------------------------ dtype promotion
@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_result_type_all_pairs(a):
    for b in DTYPES:
        assert name_of(flow.promote_types(fdt(a), fdt(b))) == name_of(torch.promote_types(tdt(a), tdt(b))), (a, b)
        fa, ta = flow.ones(2, dtype=fdt(a)), torch.ones(2, dtype=tdt(a))
        f0, t0 = flow.ones((), dtype=fdt(b)), torch.ones((), dtype=tdt(b))
        fb, tb = flow.ones(2, dtype=fdt(b)), torch.ones(2, dtype=tdt(b))
        fa0, ta0 = flow.ones((), dtype=fdt(a)), torch.ones((), dtype=tdt(a))
        for fx, fy, tx, ty, what in [(fa, fb, ta, tb, "tensor,tensor"), (fa, f0, ta, t0, "tensor,0-dim"),
                                     (f0, fa, t0, ta, "0-dim,tensor"), (fa0, f0, ta0, t0, "0-dim,0-dim")]:
            assert name_of(flow.result_type(fx, fy)) == name_of(torch.result_type(tx, ty)), (a, b, what)
    for s in (1, -2, 2.5, True, False, 0.0):
        fa, ta = flow.ones(2, dtype=fdt(a)), torch.ones(2, dtype=tdt(a))
        fa0, ta0 = flow.ones((), dtype=fdt(a)), torch.ones((), dtype=tdt(a))
        assert name_of(flow.result_type(fa, s)) == name_of(torch.result_type(ta, s)), (a, s)
        assert name_of(flow.result_type(fa0, s)) == name_of(torch.result_type(ta0, s)), (a, s, "0-dim")
        assert name_of(flow.result_type(s, fa)) == name_of(torch.result_type(s, ta)), (s, a)


def test_default_dtype_drives_float_inference():
    prev = flow.get_default_dtype()
    try:
        flow.set_default_dtype(flow.float64)
        torch_prev = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            same(flow.tensor([1.5]), torch.tensor([1.5]))
            same(flow.ones(2) + 1, torch.ones(2) + 1)
            same(flow.tensor([1, 2]) * 0.5, torch.tensor([1, 2]) * 0.5)
            assert name_of(flow.arange(0.0, 1.0, 0.5).dtype) == name_of(torch.arange(0.0, 1.0, 0.5).dtype)
        finally:
            torch.set_default_dtype(torch_prev)
    finally:
        flow.set_default_dtype(prev)
    assert flow.get_default_dtype() is flow.float32
    with pytest.raises(TypeError):
        flow.set_default_dtype(flow.int64)


# ------------------------------------------------------------------ half-precision conversions
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 1.00390625, 1.005859375, 1.0078125, 3.140625, 65504.0, 65520.0, 1e5, -1e-8,
                    6e-8, 1e-40, 3.4e38, np.inf, -np.inf, np.nan, 1 / 3, 255.5, -2.5, 0.1, 1e-3], np.float32)


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_half_conversion_round_trips(half):
    rng = np.random.default_rng(0)
    vals = np.concatenate([SPECIAL, (rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 6, 2000)).astype(np.float32)])
    f = flow.tensor(vals).to(fdt(half))
    t = torch.tensor(vals).to(tdt(half))
    np.testing.assert_array_equal(f.float().numpy(), t.float().numpy())  # rounding to nearest even, nan, inf
    np.testing.assert_array_equal(f.double().numpy(), t.double().numpy())
    np.testing.assert_array_equal(f.float().to(fdt(half)).float().numpy(), t.float().numpy())  # idempotent
    other = "float16" if half == "bfloat16" else "bfloat16"
    np.testing.assert_array_equal(f.to(fdt(other)).float().numpy(), t.to(tdt(other)).float().numpy())
    ints = np.array([0, 1, -7, 255, 256, 257, 1000, 65519, 70000], np.int64)
    np.testing.assert_array_equal(flow.tensor(ints).to(fdt(half)).float().numpy(),
                                  torch.tensor(ints).to(tdt(half)).float().numpy())
    fin = np.array([-3.7, -0.5, 0.5, 2.9, 100.2], np.float32)
    for it in ("int64", "int32", "uint8", "bool"):
        if it == "uint8":
            fin = np.abs(fin)
        same(flow.tensor(fin).to(fdt(half)).to(fdt(it)), torch.tensor(fin).to(tdt(half)).to(tdt(it)))
    assert flow.tensor(1.5, dtype=fdt(half)).item() == 1.5


def test_bfloat16_storage_is_the_top_half_of_float32():
    vals = np.array([1.0, -2.5, 3.140625], np.float32)
    f = flow.tensor(vals, dtype=flow.bfloat16)
    t = torch.tensor(vals, dtype=torch.bfloat16)
    np.testing.assert_array_equal(f._data, t.view(torch.int16).numpy().view(np.uint16))
    assert f.element_size() == 2 and f.nbytes == 6


# ------------------------------------------------------------------ properties
def test_properties():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    f, t = flow.tensor(a), torch.tensor(a)
    assert f.shape == t.shape and isinstance(f.shape, tuple) and f.size() == t.size()
    assert f.size(1) == t.size(1) and f.size(-1) == t.size(-1)
    assert f.ndim == t.ndim == f.dim() == 3
    assert f.numel() == t.numel() == 24
    assert f.shape.numel() == 24
    assert str(f.device) == str(t.device) == "cpu" and f.device.type == "cpu"
    assert f.is_leaf and not f.requires_grad and f.grad is None and f.grad_fn is None
    assert f.stride() == t.stride() and f.is_contiguous()
    assert f.element_size() == t.element_size() and f.is_floating_point()
    same(f.mT, t.mT)
    same(f[0].T, t[0].T)
    assert f.tolist() == t.tolist()
    assert f.numpy() is f.numpy() or np.shares_memory(f.numpy(), f.numpy())
    assert f[1, 2, 3].item() == t[1, 2, 3].item() == 23.0 and isinstance(f[1, 2, 3].item(), float)
    assert flow.tensor(5).item() == 5 and isinstance(flow.tensor(5).item(), int)
    assert flow.tensor(True).item() is True
    assert flow.tensor([[1, 2]], dtype=flow.uint8).tolist() == [[1, 2]]
    assert flow.tensor(2.5, dtype=flow.bfloat16).tolist() == 2.5
    assert len(f) == 2 and [tuple(x.shape) for x in f] == [(3, 4), (3, 4)]
    x = flow.ones(2, requires_grad=True)
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.grad_fn is not None and y.requires_grad
    assert float(flow.tensor(2.5)) == 2.5 and int(flow.tensor(3)) == 3
    assert flow.tensor([7]).__index__() == 7
    with pytest.raises(RuntimeError):
        f.item()
    with pytest.raises(RuntimeError):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]
    assert f.to("cpu") is f and f.cpu() is f
    assert f.to(flow.float64).dtype is flow.float64 and f.double().dtype is flow.float64
    assert f.type() == "flowvision.FloatTensor" and flow.ones(1, dtype=flow.int64).type() == "flowvision.LongTensor"
    with pytest.raises((RuntimeError, NotImplementedError)):
        f.cuda()


# ------------------------------------------------------------------ __repr__
REPR_CASES = [
    lambda m: m.tensor([1.0, 2.0, 3.0]),
    lambda m: m.tensor([1.5, -2.25, 3.125]),
    lambda m: m.tensor(3.5),
    lambda m: m.tensor(7),
    lambda m: m.tensor([1, 2, 3]),
    lambda m: m.tensor([[1, -20], [300, 4]]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([]),
    lambda m: m.zeros(2, 0),
    lambda m: m.tensor([1e-5, 1.0]),
    lambda m: m.tensor([1e10, 1.0]),
    lambda m: m.tensor([123456.0, 0.5]),
    lambda m: m.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
    lambda m: m.tensor([0.1, 0.2], dtype=m.float64),
    lambda m: m.tensor([1, 2], dtype=m.int32),
    lambda m: m.tensor([1, 2], dtype=m.uint8),
    lambda m: m.tensor([1.5, 2.0], dtype=m.float16),
    lambda m: m.tensor([1.5, 2.0], dtype=m.bfloat16),
    lambda m: m.arange(12.0).reshape(3, 4),
    lambda m: m.arange(24).reshape(2, 3, 4),
    lambda m: m.arange(2000.0),
    lambda m: m.arange(3000).reshape(30, 100),
    lambda m: m.ones(2, requires_grad=True),
    lambda m: m.ones(2, requires_grad=True) * 2,
    lambda m: m.ones(2, 2, requires_grad=True).sum(),
    lambda m: m.tensor([0.0001, 0.001]),
    lambda m: m.tensor([[0.5, 100.0], [1000.0, 2.0]]),
    lambda m: m.tensor(-0.0),
    lambda m: m.linspace(-1, 1, 20).reshape(4, 5),
]


@pytest.mark.parametrize("k", range(len(REPR_CASES)))
def test_repr_matches_torch(k):
    mk = REPR_CASES[k]
    want = repr(mk(torch)).replace("torch.", "flowvision.backend.")
    got = repr(mk(flow))
    assert got == want


def test_repr_deliberate_differences():
    """Deliberate: torch.Size prints as ``torch.Size``, ours as ``flowvision.Size``; an empty tensor's size
    suffix is printed as a tuple in both."""
    assert repr(flow.ones(2, 3).shape) == "flowvision.Size([2, 3])"


# ------------------------------------------------------------------ DLPack / numpy interop without copies
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
def test_dlpack_torch_both_ways(dt):
    f = flow.arange(6).reshape(2, 3).to(fdt(dt))
    t = torch.from_dlpack(f)
    assert t.data_ptr() == f.data_ptr() and name_of(t.dtype) == dt and tuple(t.shape) == (2, 3)
    t2 = torch.arange(8).reshape(2, 4).to(tdt(dt))
    f2 = flow.from_dlpack(t2)
    assert f2.data_ptr() == t2.data_ptr() and f2.dtype is fdt(dt) and tuple(f2.shape) == (2, 4)
    if dt != "bool":
        t2[0, 0] = 5
        assert f2[0, 0].item() == 5  # no copy: writes are visible
        f[1, 1] = 3
        assert t[1, 1].item() == 3
    # strided views cross as views
    tv = torch.arange(12.0).reshape(3, 4)[:, 1::2]
    fv = flow.from_dlpack(tv)
    assert fv.data_ptr() == tv.data_ptr() and fv.stride() == tv.stride()
    np.testing.assert_array_equal(fv.numpy(), tv.numpy())


def test_dlpack_numpy_both_ways():
    a = np.arange(10.0, dtype=np.float32)
    f = flow.from_dlpack(a)
    assert f.data_ptr() == a.__array_interface__["data"][0]
    back = np.from_dlpack(f)
    assert back.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    back[3] = -1
    assert a[3] == -1 and f[3].item() == -1
    g = flow.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        g.__dlpack__()
    assert torch.from_dlpack(g.detach()).data_ptr() == g.data_ptr()


def test_tensor_from_torch_tensor_copies():
    t = torch.arange(4.0)
    f = flow.tensor(t)
    assert f.data_ptr() != t.data_ptr() and f.tolist() == t.tolist()
    g = flow.as_tensor(t)
    assert g.data_ptr() == t.data_ptr()


def test_bfloat16_from_torch_without_copy_and_export_limitation():
    t = torch.tensor([1.5, 2.25, -3.0], dtype=torch.bfloat16)
    f = flow.from_dlpack(t)
    assert f.dtype is flow.bfloat16 and f.data_ptr() == t.data_ptr()
    t[0] = 7.0
    assert f.tolist() == [7.0, 2.25, -3.0]
    assert flow.as_tensor(t).data_ptr() == t.data_ptr()
    c = flow.tensor(t)
    assert c.data_ptr() != t.data_ptr() and c.dtype is flow.bfloat16 and c.tolist() == [7.0, 2.25, -3.0]
    # deliberate limitation: numpy (our storage) has no bfloat16 DLPack type, so exporting one raises clearly
    with pytest.raises(TypeError, match="bfloat16"):
        torch.from_dlpack(f)


def test_tensor_copies_a_torch_tensor_that_requires_grad():
    t = torch.ones(2, requires_grad=True)
    f = flow.tensor(t)
    assert f.tolist() == [1.0, 1.0] and not f.requires_grad and f.data_ptr() != t.data_ptr()
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        flow.from_dlpack(t)  # zero-copy import refuses, like torch's own export


@pytest.mark.parametrize("opts", [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False), dict(linewidth=40),
                                  dict(threshold=5, edgeitems=2), dict(profile="short"), dict(edgeitems=0, threshold=3)],
                         ids=str)
def test_repr_with_printoptions(opts):
    data = [np.linspace(-3, 50, 12).reshape(3, 4), np.array([1e-6, 2.5, 300.0]), np.arange(20.0), np.array([1, 22, 333])]
    try:
        torch.set_printoptions(**opts)
        flow.set_printoptions(**opts)
        for a in data:
            want = repr(torch.tensor(a, dtype=torch.float32 if a.dtype.kind == "f" else torch.int64))
            assert repr(flow.tensor(a, dtype=flow.float32 if a.dtype.kind == "f" else flow.int64)) == want
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)
        flow.set_printoptions(profile="default", sci_mode=None)
