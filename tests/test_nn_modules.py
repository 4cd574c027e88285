"""nn modules against torch: constructor arguments, parameter names/shapes, init statistics, forward outputs
with the same weights, state_dict loading (strict and not), error messages, repr and Module semantics."""
import math
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as tnn  # noqa: E402

import flowvision.backend as fb  # noqa: E402
from flowvision.backend import nn  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().float().numpy() if x.dtype == torch.bfloat16 else x.detach().numpy()
    if isinstance(x, fb.Tensor):
        return x.detach().float().numpy() if x.dtype == fb.bfloat16 else x.detach().numpy()
    return np.asarray(x)


def _to_fb(a):
    return fb.tensor(a) if isinstance(a, np.ndarray) else a


def _to_t(a):
    return torch.tensor(a) if isinstance(a, np.ndarray) else a


def _sd_numpy(m):
    return OrderedDict((k, v.detach().numpy().copy()) for k, v in m.state_dict().items())


def _build(name, args, kwargs):
    return getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)


# ------------------------------------------------------------------ input factories
def _x(*shape):
    return lambda r: (r.standard_normal(shape).astype(np.float32),)


def _pos(*shape):
    return lambda r: (r.uniform(0.05, 0.95, shape).astype(np.float32),)


def _ints(high, *shape):
    return lambda r: (r.integers(0, high, shape).astype(np.int64),)


def _attn(L, S, N, E, kdim=None, vdim=None, batch_first=False):
    def f(r):
        def seq(n, d):
            shape = (N, n, d) if batch_first else (n, N, d)
            return r.standard_normal(shape).astype(np.float32)
        return seq(L, E), seq(S, kdim or E), seq(S, vdim or E)
    return f


def _cls(n, c):
    return lambda r: (r.standard_normal((n, c)).astype(np.float32), r.integers(0, c, (n,)).astype(np.int64))


def _pair(*shape):
    return lambda r: (r.standard_normal(shape).astype(np.float32), r.standard_normal(shape).astype(np.float32))


def _prob_pair(*shape):
    return lambda r: (r.uniform(0.05, 0.95, shape).astype(np.float32), r.uniform(0, 1, shape).astype(np.float32))


# (module name, args, kwargs, input factory); every one is built in both libraries with the same arguments
SPECS = [
    ("Identity", (), {}, _x(2, 3)),
    ("Linear", (16, 32), {}, _x(4, 16)),
    ("Linear", (16, 32), {"bias": False}, _x(2, 3, 16)),
    ("Bilinear", (4, 5, 6), {}, lambda r: (r.standard_normal((3, 4)).astype(np.float32),
                                           r.standard_normal((3, 5)).astype(np.float32))),
    ("Conv1d", (4, 8, 3), {"stride": 2, "padding": 1}, _x(2, 4, 11)),
    ("Conv2d", (4, 8, 3), {"padding": 1, "groups": 2}, _x(2, 4, 9, 9)),
    ("Conv2d", (4, 8, 3), {"padding": "same", "dilation": 2}, _x(2, 4, 9, 9)),
    ("Conv2d", (4, 6, (3, 5)), {"stride": (2, 1), "padding": (1, 2), "bias": False}, _x(1, 4, 8, 8)),
    ("Conv2d", (4, 8, 3), {"padding": 1, "padding_mode": "reflect"}, _x(2, 4, 7, 7)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1}, _x(2, 4, 5, 5)),
    ("ConvTranspose2d", (4, 6, 4), {"stride": 2, "groups": 2, "bias": False}, _x(1, 4, 5, 5)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2}, _x(2, 4, 7)),
    ("BatchNorm1d", (8,), {}, _x(6, 8)),
    ("BatchNorm1d", (8,), {"momentum": 0.3}, _x(4, 8, 5)),
    ("BatchNorm2d", (8,), {}, _x(3, 8, 5, 5)),
    ("BatchNorm2d", (8,), {"affine": False, "track_running_stats": False}, _x(3, 8, 4, 4)),
    ("BatchNorm2d", (8,), {"momentum": None, "eps": 1e-3}, _x(3, 8, 4, 4)),
    ("BatchNorm2d", (8,), {"bias": False}, _x(3, 8, 4, 4)),
    ("SyncBatchNorm", (8,), {}, _x(3, 8, 4, 4)),
    ("LayerNorm", (16,), {}, _x(3, 5, 16)),
    ("LayerNorm", ([4, 16],), {"elementwise_affine": False}, _x(3, 4, 16)),
    ("LayerNorm", (16,), {"bias": False, "eps": 1e-6}, _x(3, 16)),
    ("GroupNorm", (2, 8), {}, _x(3, 8, 4, 4)),
    ("GroupNorm", (4, 8), {"affine": False}, _x(2, 8, 5)),
    ("GroupNorm", (4, 8), {"bias": False}, _x(2, 8, 5)),
    ("InstanceNorm2d", (8,), {}, _x(3, 8, 5, 5)),
    ("InstanceNorm2d", (8,), {"affine": True, "track_running_stats": True}, _x(3, 8, 5, 5)),
    ("Dropout", (0.3,), {}, _x(4, 10)),
    ("Dropout2d", (0.3,), {}, _x(2, 4, 3, 3)),
    ("ReLU", (), {}, _x(4, 10)),
    ("ReLU6", (), {}, lambda r: (r.standard_normal((4, 10)).astype(np.float32) * 5,)),
    ("LeakyReLU", (0.2,), {}, _x(4, 10)),
    ("PReLU", (8,), {}, _x(2, 8, 3)),
    ("PReLU", (), {"init": 0.1}, _x(2, 8)),
    ("ELU", (), {"alpha": 0.5}, _x(4, 10)),
    ("CELU", (), {"alpha": 0.7}, _x(4, 10)),
    ("SELU", (), {}, _x(4, 10)),
    ("GELU", (), {}, _x(4, 10)),
    ("GELU", (), {"approximate": "tanh"}, _x(4, 10)),
    ("SiLU", (), {}, _x(4, 10)),
    ("Mish", (), {}, _x(4, 10)),
    ("Sigmoid", (), {}, _x(4, 10)),
    ("Tanh", (), {}, _x(4, 10)),
    ("Hardsigmoid", (), {}, lambda r: (r.standard_normal((4, 10)).astype(np.float32) * 4,)),
    ("Hardswish", (), {}, lambda r: (r.standard_normal((4, 10)).astype(np.float32) * 4,)),
    ("Hardtanh", (-2.0, 2.0), {}, lambda r: (r.standard_normal((4, 10)).astype(np.float32) * 3,)),
    ("Softplus", (2.0, 10.0), {}, lambda r: (r.standard_normal((4, 10)).astype(np.float32) * 8,)),
    ("Softsign", (), {}, _x(4, 10)),
    ("Tanhshrink", (), {}, _x(4, 10)),
    ("Softshrink", (0.3,), {}, _x(4, 10)),
    ("Hardshrink", (0.3,), {}, _x(4, 10)),
    ("LogSigmoid", (), {}, _x(4, 10)),
    ("Threshold", (0.1, 20.0), {}, _x(4, 10)),
    ("GLU", (), {}, _x(4, 10)),
    ("Softmax", (), {"dim": 1}, _x(4, 10)),
    ("LogSoftmax", (), {"dim": -1}, _x(4, 10)),
    ("Softmin", (), {"dim": 1}, _x(4, 10)),
    ("Softmax2d", (), {}, _x(2, 3, 4, 4)),
    ("MaxPool2d", (3, 2, 1), {}, _x(2, 3, 9, 9)),
    ("MaxPool2d", (2,), {"ceil_mode": True}, _x(2, 3, 7, 7)),
    ("MaxPool1d", (2,), {}, _x(2, 3, 8)),
    ("AvgPool2d", (3, 2, 1), {"count_include_pad": False}, _x(2, 3, 8, 8)),
    ("AvgPool2d", (2,), {}, _x(2, 3, 8, 8)),
    ("AvgPool1d", (2,), {}, _x(2, 3, 8)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, _x(2, 3, 7, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, _x(2, 3, 7, 8)),
    ("AdaptiveMaxPool2d", (3,), {}, _x(2, 3, 7, 8)),
    ("AdaptiveAvgPool1d", (3,), {}, _x(2, 3, 8)),
    ("Upsample", (), {"scale_factor": 2}, _x(1, 2, 4, 5)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": False}, _x(1, 2, 4, 5)),
    ("Upsample", (), {"size": (7, 9), "mode": "bicubic", "align_corners": True}, _x(1, 2, 4, 5)),
    ("UpsamplingBilinear2d", (), {"scale_factor": 2}, _x(1, 2, 4, 5)),
    ("UpsamplingNearest2d", (), {"size": (5, 7)}, _x(1, 2, 4, 5)),
    ("Flatten", (), {}, _x(2, 3, 4, 5)),
    ("Flatten", (0, 2), {}, _x(2, 3, 4, 5)),
    ("Unflatten", (1, (2, 4)), {}, _x(3, 8, 5)),
    ("Embedding", (10, 6), {}, _ints(10, 3, 4)),
    ("Embedding", (10, 6), {"padding_idx": 0}, _ints(10, 3, 4)),
    ("ZeroPad2d", ((1, 2, 3, 4),), {}, _x(1, 2, 4, 4)),
    ("ConstantPad2d", (2, 3.5), {}, _x(1, 2, 4, 4)),
    ("ReflectionPad2d", (2,), {}, _x(1, 2, 5, 5)),
    ("ReplicationPad2d", ((1, 0, 2, 1),), {}, _x(1, 2, 4, 4)),
    ("PixelShuffle", (2,), {}, _x(2, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, _x(2, 2, 6, 4)),
    ("MultiheadAttention", (16, 4), {}, _attn(5, 7, 2, 16)),
    ("MultiheadAttention", (16, 4), {"batch_first": True}, _attn(5, 5, 2, 16, batch_first=True)),
    ("MultiheadAttention", (16, 2), {"kdim": 8, "vdim": 12}, _attn(5, 6, 3, 16, 8, 12)),
    ("MultiheadAttention", (16, 4), {"add_bias_kv": True, "add_zero_attn": True, "bias": False}, _attn(4, 6, 2, 16)),
    ("TransformerEncoderLayer", (16, 4, 32), {"dropout": 0.0}, _x(5, 2, 16)),
    ("TransformerEncoderLayer", (16, 4, 32), {"dropout": 0.0, "batch_first": True, "norm_first": True,
                                              "activation": "gelu"}, _x(2, 5, 16)),
    ("TransformerDecoderLayer", (16, 4, 32), {"dropout": 0.0},
     lambda r: (r.standard_normal((4, 2, 16)).astype(np.float32), r.standard_normal((6, 2, 16)).astype(np.float32))),
    ("CrossEntropyLoss", (), {}, _cls(6, 5)),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1, "reduction": "sum"}, _cls(6, 5)),
    ("NLLLoss", (), {}, lambda r: (np.log(r.dirichlet(np.ones(5), 6)).astype(np.float32),
                                   r.integers(0, 5, (6,)).astype(np.int64))),
    ("MSELoss", (), {}, _pair(4, 5)),
    ("L1Loss", (), {"reduction": "none"}, _pair(4, 5)),
    ("SmoothL1Loss", (), {"beta": 0.5}, _pair(4, 5)),
    ("HuberLoss", (), {"delta": 0.7}, _pair(4, 5)),
    ("BCELoss", (), {}, _prob_pair(4, 5)),
    ("BCEWithLogitsLoss", (), {}, lambda r: (r.standard_normal((4, 5)).astype(np.float32),
                                             r.uniform(0, 1, (4, 5)).astype(np.float32))),
    ("KLDivLoss", (), {"reduction": "batchmean"}, lambda r: (np.log(r.dirichlet(np.ones(5), 4)).astype(np.float32),
                                                             r.dirichlet(np.ones(5), 4).astype(np.float32))),
]


def _spec_id(spec):
    name, args, kwargs, _ = spec
    inner = ",".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return f"{name}({inner})"


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if o is not None]
    return [out]


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_module_matches_torch(spec):
    """Same parameter/buffer names, shapes and dtypes; torch's weights load strictly; same outputs (train and
    eval mode), and the same running statistics afterwards."""
    name, args, kwargs, make_inputs = spec
    ours, ref = _build(name, args, kwargs)
    sd_ours, sd_ref = ours.state_dict(), ref.state_dict()
    assert list(sd_ours.keys()) == list(sd_ref.keys())
    for k in sd_ref:
        assert tuple(sd_ours[k].shape) == tuple(sd_ref[k].shape), k
        assert sd_ours[k].dtype.name == str(sd_ref[k].dtype).replace("torch.", ""), k
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in ref.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in ref.named_modules()]

    res = ours.load_state_dict(_sd_numpy(ref))
    assert res.missing_keys == [] and res.unexpected_keys == []
    rng = np.random.default_rng(0)
    inputs = make_inputs(rng)
    for mode in ("train", "eval"):
        if name.startswith("Dropout") and mode == "train":
            continue
        getattr(ours, mode)()
        getattr(ref, mode)()
        out_o = _outputs(ours(*[_to_fb(a) for a in inputs]))
        out_r = _outputs(ref(*[_to_t(a) for a in inputs]))
        assert len(out_o) == len(out_r)
        for a, b in zip(out_o, out_r):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(_np(a), _np(b), rtol=RTOL, atol=ATOL, err_msg=f"{mode} output")
    for k, v in ref.state_dict().items():  # running stats updated the same way
        np.testing.assert_allclose(_np(ours.state_dict()[k]), _np(v), rtol=RTOL, atol=ATOL, err_msg=k)


def test_module_backward_matches_torch():
    """Gradients reach every parameter with torch's values through a mixed stack."""
    ours = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.GELU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 4 * 4, 5), nn.LayerNorm(5))
    ref = tnn.Sequential(tnn.Conv2d(3, 8, 3, padding=1), tnn.BatchNorm2d(8), tnn.GELU(), tnn.MaxPool2d(2),
                         tnn.Flatten(), tnn.Linear(8 * 4 * 4, 5), tnn.LayerNorm(5))
    ours.load_state_dict(_sd_numpy(ref))
    x = np.random.default_rng(1).standard_normal((4, 3, 8, 8)).astype(np.float32)
    (ours(fb.tensor(x)) ** 2).sum().backward()
    (ref(torch.tensor(x)) ** 2).sum().backward()
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), ref.named_parameters()):
        assert n1 == n2
        np.testing.assert_allclose(_np(p1.grad), _np(p2.grad), rtol=1e-3, atol=1e-5, err_msg=n1)


def test_constructor_signatures_match_torch():
    """Every Module class flowvision exports under a torch.nn name takes the same arguments, in the same order
    and kind, with the same defaults."""
    import inspect
    checked = 0
    for name in dir(nn):
        obj = getattr(nn, name)
        if not (isinstance(obj, type) and issubclass(obj, nn.Module)) or not hasattr(tnn, name):
            continue
        ours = list(inspect.signature(obj.__init__).parameters.values())
        ref = list(inspect.signature(getattr(tnn, name).__init__).parameters.values())
        assert [(p.name, p.kind) for p in ours] == [(p.name, p.kind) for p in ref], name
        for a, b in zip(ours, ref):
            if callable(b.default):  # e.g. TransformerEncoderLayer(activation=F.relu): ours is "relu"
                continue
            assert a.default == b.default, (name, a.name, a.default, b.default)
        checked += 1
    assert checked >= 100


# ------------------------------------------------------------------ initialisation statistics
INIT_SPECS = [
    ("Linear", (256, 128), {}),
    ("Conv2d", (32, 64, 3), {}),
    ("Conv1d", (16, 64, 5), {}),
    ("ConvTranspose2d", (32, 16, 3), {}),
    ("Bilinear", (32, 16, 64), {}),
    ("Embedding", (1000, 64), {}),
    ("PReLU", (64,), {}),
    ("MultiheadAttention", (64, 4), {}),
    ("MultiheadAttention", (64, 4), {"kdim": 32, "vdim": 48, "add_bias_kv": True}),
    ("BatchNorm2d", (64,), {}),
    ("LayerNorm", (64,), {}),
    ("GroupNorm", (4, 64), {}),
    ("TransformerEncoderLayer", (64, 4, 128), {}),
]


@pytest.mark.parametrize("spec", INIT_SPECS, ids=[_spec_id(s + (None,)) for s in INIT_SPECS])
def test_default_init_statistics_match_torch(spec):
    name, args, kwargs = spec
    torch.manual_seed(0)
    fb.manual_seed(0)
    ours, ref = _build(name, args, kwargs)
    theirs = dict(ref.named_parameters())
    for n, p in ours.named_parameters():
        a, b = _np(p).astype(np.float64).ravel(), _np(theirs[n]).astype(np.float64).ravel()
        assert a.shape == b.shape, n
        sd_b = b.std()
        if sd_b == 0:  # constant init (ones/zeros/constant)
            np.testing.assert_array_equal(a, b, err_msg=n)
            continue
        tol = 4 * sd_b / math.sqrt(a.size) + 1e-12
        assert abs(a.mean() - b.mean()) < 2 * tol, (n, a.mean(), b.mean())
        assert abs(a.std() - sd_b) < (0.05 + 4 / math.sqrt(2 * a.size)) * sd_b, (n, a.std(), sd_b)
        # uniform inits: same bounds
        if a.size >= 500:
            assert abs(a.max() - b.max()) < 0.1 * sd_b * 4 or abs(np.abs(a).max() / np.abs(b).max() - 1) < 0.25, n
    # buffers are deterministic
    tb = dict(ref.named_buffers())
    for n, b in ours.named_buffers():
        np.testing.assert_array_equal(_np(b), _np(tb[n]))


def test_init_functions_statistics():
    t = fb.empty(400, 300)
    nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2 / 400)) < 0.02 * math.sqrt(2 / 400)
    nn.init.kaiming_uniform_(t, a=0.1)
    bound = math.sqrt(3) * nn.init.calculate_gain("leaky_relu", 0.1) / math.sqrt(300)
    assert t.numpy().max() <= bound and t.numpy().min() >= -bound and t.numpy().max() > 0.99 * bound
    nn.init.xavier_uniform_(t, gain=2.0)
    assert abs(t.numpy().std() - 2 * math.sqrt(2 / 700)) < 0.02 * 2 * math.sqrt(2 / 700)
    nn.init.xavier_normal_(t)
    assert abs(t.numpy().std() - math.sqrt(2 / 700)) < 0.02 * math.sqrt(2 / 700)
    nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    v = t.numpy()
    ref = torch.empty(400, 300)
    tnn.init.trunc_normal_(ref, mean=0.5, std=1.0, a=-1.0, b=1.5)
    assert v.min() >= -1.0 and v.max() <= 1.5
    assert abs(v.mean() - ref.mean().item()) < 0.01 and abs(v.std() - ref.std().item()) < 0.01
    nn.init.normal_(t, 2.0, 0.5)
    assert abs(t.numpy().mean() - 2.0) < 0.01 and abs(t.numpy().std() - 0.5) < 0.01
    nn.init.uniform_(t, -3, -1)
    assert t.numpy().min() >= -3 and t.numpy().max() <= -1
    q = fb.empty(6, 10)
    nn.init.orthogonal_(q, gain=3.0)
    np.testing.assert_allclose(q.numpy() @ q.numpy().T, 9 * np.eye(6), atol=1e-4)
    nn.init.eye_(q)
    np.testing.assert_array_equal(q.numpy(), np.eye(6, 10))
    w = fb.empty(4, 2, 3, 3)
    nn.init.dirac_(w)
    ref = torch.empty(4, 2, 3, 3)
    tnn.init.dirac_(ref)
    np.testing.assert_array_equal(w.numpy(), ref.numpy())
    nn.init.constant_(w, 0.25)
    assert (w.numpy() == 0.25).all()
    for nl in ("linear", "conv2d", "sigmoid", "tanh", "relu", "selu"):
        assert nn.init.calculate_gain(nl) == pytest.approx(tnn.init.calculate_gain(nl))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(tnn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("bogus")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(fb.empty(5))
    p = nn.Parameter(fb.zeros(3, 3))
    nn.init.ones_(p)  # initialisers work on leaves that require grad
    assert p.requires_grad and (p.detach().numpy() == 1).all() and p.grad_fn is None


def test_init_bfloat16_and_generator():
    t = fb.empty(50, 40, dtype=fb.bfloat16)
    nn.init.normal_(t, 0, 1)
    assert t.dtype == fb.bfloat16 and abs(t.float().numpy().std() - 1) < 0.1
    g1, g2 = fb.Generator().manual_seed(5), fb.Generator().manual_seed(5)
    a, b = fb.empty(3, 4), fb.empty(3, 4)
    nn.init.kaiming_uniform_(a, generator=g1)
    nn.init.kaiming_uniform_(b, generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# ------------------------------------------------------------------ state_dict loading
class _NetOurs(nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
        self.head = nn.Linear(4, 2)
        if extra:
            self.extra = nn.Linear(2, 2)
        self.register_buffer("scale", fb.ones(1))
        self.register_buffer("cache", fb.zeros(2), persistent=False)

    def forward(self, x):
        x = self.features(x).mean(dim=(2, 3))
        return self.head(x) * self.scale


class _NetRef(tnn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.features = tnn.Sequential(tnn.Conv2d(3, 4, 3), tnn.BatchNorm2d(4), tnn.ReLU())
        self.head = tnn.Linear(4, 2)
        if extra:
            self.extra = tnn.Linear(2, 2)
        self.register_buffer("scale", torch.ones(1))
        self.register_buffer("cache", torch.zeros(2), persistent=False)

    def forward(self, x):
        x = self.features(x).mean(dim=(2, 3))
        return self.head(x) * self.scale


def test_torch_state_dict_loads_strictly_and_gives_same_outputs():
    ref = _NetRef().eval()
    with torch.no_grad():
        ref.features[1].running_mean.uniform_(-1, 1)
        ref.features[1].running_var.uniform_(0.5, 2)
        ref.scale.fill_(1.5)
    ours = _NetOurs().eval()
    assert list(ours.state_dict()) == list(ref.state_dict())
    res = ours.load_state_dict(_sd_numpy(ref))
    assert repr(res) == "<All keys matched successfully>"
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(ours(fb.tensor(x)).numpy(force=True), ref(torch.tensor(x)).detach().numpy(),
                               rtol=RTOL, atol=ATOL)
    # the loaded values are copies, the parameters stay the same objects
    w = ours.head.weight
    ours.load_state_dict({k: fb.tensor(v) for k, v in _sd_numpy(ref).items()})
    assert ours.head.weight is w and isinstance(w, nn.Parameter)


def test_strict_false_reports_keys_like_torch():
    src_ref = _NetRef(extra=True)
    sd = _sd_numpy(src_ref)
    del sd["head.bias"]
    sd["bogus.weight"] = np.zeros(3, np.float32)
    sd["features.0.extra"] = np.zeros(1, np.float32)
    ours, ref = _NetOurs(), _NetRef()
    r_ours = ours.load_state_dict(sd, strict=False)
    r_ref = ref.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}, strict=False)
    assert r_ours.missing_keys == r_ref.missing_keys == ["head.bias"]
    assert r_ours.unexpected_keys == r_ref.unexpected_keys
    assert sorted(r_ours.unexpected_keys) == ["bogus.weight", "extra.bias", "extra.weight", "features.0.extra"]
    with pytest.raises(RuntimeError) as e:
        ours.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for _NetOurs:")
    assert 'Missing key(s) in state_dict: "head.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "features.0.extra", "bogus.weight", "extra.weight", "extra.bias".' in msg \
        or "Unexpected key(s) in state_dict:" in msg
    with pytest.raises(RuntimeError) as e2:
        ref.load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
    assert str(e2.value).split(":", 1)[1] == msg.split(":", 1)[1]


def test_shape_mismatch_names_key_and_both_shapes():
    ours = _NetOurs()
    sd = {k: v.clone() for k, v in ours.state_dict().items()}
    sd["head.weight"] = fb.zeros(3, 4)
    with pytest.raises(RuntimeError) as e:
        ours.load_state_dict(sd)
    msg = str(e.value)
    assert "size mismatch for head.weight" in msg
    assert "[3, 4]" in msg and "[2, 4]" in msg
    # also with strict=False (torch raises for size mismatches regardless of strict)
    with pytest.raises(RuntimeError, match="size mismatch for head.weight"):
        ours.load_state_dict(sd, strict=False)


def test_state_dict_metadata_and_old_batchnorm_checkpoints():
    ours = nn.BatchNorm2d(3)
    sd = ours.state_dict()
    assert sd._metadata[""]["version"] == 2
    old = OrderedDict((k, v) for k, v in sd.items() if k != "num_batches_tracked")  # no metadata: old format
    res = nn.BatchNorm2d(3).load_state_dict(old)
    assert res.missing_keys == []


def test_assign_load():
    m = nn.Linear(3, 2)
    new_w = fb.randn(2, 3)
    m.load_state_dict({"weight": new_w, "bias": fb.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    np.testing.assert_array_equal(m.weight.detach().numpy(), new_w.numpy())


# ------------------------------------------------------------------ Module semantics
def test_module_attribute_semantics():
    m = nn.Module()
    m.w = nn.Parameter(fb.ones(2))
    m.sub = nn.Linear(2, 2)
    m.register_buffer("buf", fb.zeros(2))
    m.register_buffer("tmp", fb.zeros(1), persistent=False)
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"] and "plain" in m.__dict__
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    with pytest.raises(TypeError, match="cannot assign"):
        m.w = fb.ones(2)
    m.w = None
    assert m.w is None and "w" in m._parameters and "w" not in m.state_dict()
    m.buf = fb.ones(3)  # reassigning a buffer keeps it a buffer
    assert "buf" in m._buffers and m.buf.shape == (3,)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", fb.zeros(1))
    with pytest.raises(TypeError):
        m.register_parameter("q", fb.zeros(1))
    with pytest.raises(KeyError):
        m.register_buffer("a.b", fb.zeros(1))
    with pytest.raises(TypeError):
        m.sub = 5
    del m.sub
    assert "sub" not in m._modules
    m.add_module("child", nn.ReLU())
    assert m.get_submodule("child") is m.child
    m.register_buffer("buf2", fb.ones(1))
    m.buf2 = nn.Parameter(fb.ones(1))  # a Parameter replaces the buffer
    assert "buf2" in m._parameters and "buf2" not in m._buffers
    assert "child" in dir(m) and "w" in dir(m)


def test_named_members_dedupe_and_traversal():
    shared = nn.Linear(3, 3)
    m = nn.Sequential(shared, nn.ReLU(), shared, nn.Sequential(nn.Linear(3, 1)))
    ref_shared = tnn.Linear(3, 3)
    r = tnn.Sequential(ref_shared, tnn.ReLU(), ref_shared, tnn.Sequential(tnn.Linear(3, 1)))
    assert [n for n, _ in m.named_modules()] == [n for n, _ in r.named_modules()]
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in r.named_parameters()]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in r.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in m.named_children()] == [n for n, _ in r.named_children()]
    assert list(m.state_dict()) == list(r.state_dict())
    assert [n for n, _ in m.named_parameters(prefix="model", recurse=False)] == []
    assert len(list(m.modules())) == len(list(r.modules()))
    assert m.get_parameter("3.0.weight") is m[3][0].weight


def test_train_eval_apply_zero_grad_requires_grad():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2)))
    m.eval()
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError):
        m.train("yes")
    seen = []
    m.apply(lambda x: seen.append(type(x).__name__))
    assert seen == ["Linear", "Dropout", "BatchNorm1d", "Sequential", "Sequential"]
    m(fb.randn(4, 2)).sum().backward()
    assert m[0].weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert (m[0].weight.grad.numpy() == 0).all()
    m.zero_grad()
    assert m[0].weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_dtype_keeps_parameter_identity():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    w = m[0].weight
    m.to(fb.float64)
    assert m[0].weight is w and w.dtype == fb.float64 and m[1].running_mean.dtype == fb.float64
    assert m[1].num_batches_tracked.dtype == fb.int64  # integer buffers keep their dtype
    m.half()
    assert w.dtype == fb.float16
    m.bfloat16()
    assert w.dtype == fb.bfloat16
    m.float()
    assert w.dtype == fb.float32 and isinstance(w, nn.Parameter) and w.requires_grad
    m.to("cpu")
    with pytest.raises(TypeError):
        m.to(fb.int64)
    out = m(fb.randn(4, 2))
    assert out.dtype == fb.float32


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    h3 = m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(kwargs) or None, with_kwargs=True)
    out = m(fb.randn(3, 2))
    np.testing.assert_allclose(out.numpy(force=True), (m.bias.detach().numpy() + 1)[None].repeat(3, 0), rtol=1e-6)
    assert calls == [{}]
    h1.remove()
    h2.remove()
    h3.remove()
    x = fb.randn(3, 2)
    np.testing.assert_allclose(m(x).numpy(force=True),
                               x.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy(), rtol=1e-5)
    order = []
    m.register_forward_pre_hook(lambda *a: order.append("b"))
    m.register_forward_pre_hook(lambda *a: order.append("a"), prepend=True)
    m(x)
    assert order == ["a", "b"]
    h = nn.modules.module.register_module_forward_hook(lambda mod, a, o: o * 0)
    try:
        assert (m(x).numpy(force=True) == 0).all()
    finally:
        h.remove()


def test_repr_matches_torch():
    def build(lib):
        return lib.Sequential(
            lib.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), lib.BatchNorm2d(8), lib.ReLU(inplace=True),
            lib.MaxPool2d(3, 2, 1), lib.Conv2d(8, 8, 3, padding=1, groups=8, padding_mode="reflect"),
            lib.AdaptiveAvgPool2d(1), lib.Flatten(), lib.Dropout(0.2), lib.Linear(8, 4), lib.GELU(),
            lib.LayerNorm(4, eps=1e-6), lib.GroupNorm(2, 4), lib.BatchNorm1d(4, bias=False), lib.LayerNorm(4, bias=False), lib.Identity(), lib.Softmax(dim=-1),
            lib.ModuleList([lib.ReLU6(), lib.LeakyReLU(0.1)]), lib.Embedding(10, 3, padding_idx=1),
            lib.ConvTranspose2d(4, 2, 2, stride=2), lib.Upsample(scale_factor=2.0, mode="nearest"),
            lib.PixelShuffle(2), lib.Hardtanh(0.0, 6.0), lib.ZeroPad2d(1), lib.InstanceNorm2d(3),
            lib.MultiheadAttention(8, 2))
    assert repr(build(nn)) == repr(build(tnn))


def test_containers():
    s = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert isinstance(s.a, nn.ReLU) and s[1] is s.b and len(s) == 2 and isinstance(s[-1], nn.Tanh)
    assert isinstance(s[:1], nn.Sequential) and len(s[:1]) == 1
    s2 = nn.Sequential(nn.ReLU(), nn.Tanh())
    s2.append(nn.Sigmoid())
    s2.insert(0, nn.Identity())
    assert [type(x).__name__ for x in s2] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    del s2[1]
    assert list(s2._modules) == ["0", "1", "2"]
    with pytest.raises(IndexError):
        s2[5]
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    ml.extend([nn.ReLU()])
    assert len(ml) == 5 and isinstance(ml[-1], nn.ReLU) and len(list(ml.parameters())) == 6
    ml.insert(1, nn.Tanh())
    assert isinstance(ml[1], nn.Tanh) and len(ml) == 6
    md = nn.ModuleDict({"x": nn.ReLU(), "y": nn.Linear(1, 1)})
    md["z"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y", "z"] and "y" in md and len(md) == 3
    assert list(dict(md.named_parameters())) == ["y.weight", "y.bias"]
    pl = nn.ParameterList([nn.Parameter(fb.ones(2)), fb.zeros(3)])
    assert isinstance(pl[1], nn.Parameter) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"a": nn.Parameter(fb.ones(1))})
    pd["b"] = fb.zeros(2)
    assert list(pd.keys()) == ["a", "b"] and [n for n, _ in pd.named_parameters()] == ["a", "b"]
    # state dict names of nested containers equal torch's
    ours = nn.ModuleDict({"blocks": nn.ModuleList([nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))])})
    ref = tnn.ModuleDict({"blocks": tnn.ModuleList([tnn.Sequential(tnn.Linear(2, 2), tnn.LayerNorm(2))])})
    assert list(ours.state_dict()) == list(ref.state_dict())


def test_parameter():
    p = nn.Parameter(fb.ones(2, 2))
    assert isinstance(p, fb.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor(")
    q = nn.Parameter(fb.ones(2), requires_grad=False)
    assert not q.requires_grad
    t = fb.zeros(3)
    p2 = nn.Parameter(t)
    p2.detach()._data[0] = 5  # shares storage with the wrapped tensor
    assert t.numpy()[0] == 5
    with pytest.raises(RuntimeError):
        nn.Parameter(fb.zeros(2, dtype=fb.int64))
    import copy
    import pickle
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c is not p and c.requires_grad
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.requires_grad
    m = copy.deepcopy(nn.Linear(3, 3))
    assert isinstance(m.weight, nn.Parameter)


def test_module_errors():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 3, 3, padding_mode="wrap")
    with pytest.raises(ValueError, match=r"num_channels \(8\) must be divisible by num_groups \(3\)"):
        nn.GroupNorm(3, 8)
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(fb.randn(2, 3))
    with pytest.raises(ValueError, match="dropout probability"):
        nn.Dropout(1.5)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        nn.MultiheadAttention(10, 3)


def test_multihead_attention_masks_match_torch():
    torch.manual_seed(0)
    ref = tnn.MultiheadAttention(8, 2, batch_first=True)
    ours = nn.MultiheadAttention(8, 2, batch_first=True)
    ours.load_state_dict(_sd_numpy(ref))
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 4, 8)).astype(np.float32)
    kv = rng.standard_normal((3, 6, 8)).astype(np.float32)
    kpm = np.zeros((3, 6), bool)
    kpm[0, 4:] = True
    kpm[2, 1] = True
    attn_bool = np.triu(np.ones((4, 6), bool), 3)
    attn_float = rng.standard_normal((3 * 2, 4, 6)).astype(np.float32)
    cases = [dict(key_padding_mask=kpm), dict(attn_mask=attn_bool), dict(attn_mask=attn_float),
             dict(key_padding_mask=kpm, attn_mask=attn_bool, average_attn_weights=False),
             dict(need_weights=False, key_padding_mask=kpm.astype(np.float32) * -1e4)]
    for kw in cases:
        o_out, o_w = ours(fb.tensor(q), fb.tensor(kv), fb.tensor(kv), **{k: _to_fb(v) if isinstance(v, np.ndarray) else v
                                                                    for k, v in kw.items()})
        r_out, r_w = ref(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                         **{k: _to_t(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        np.testing.assert_allclose(_np(o_out), _np(r_out), rtol=RTOL, atol=ATOL)
        if r_w is None:
            assert o_w is None
        else:
            np.testing.assert_allclose(_np(o_w), _np(r_w), rtol=RTOL, atol=ATOL)
    # causal self-attention and unbatched input
    x = rng.standard_normal((5, 8)).astype(np.float32)
    causal = tnn.Transformer.generate_square_subsequent_mask(5)
    o = ours(fb.tensor(x), fb.tensor(x), fb.tensor(x), attn_mask=fb.tensor(causal.numpy()))[0]
    r = ref(torch.tensor(x), torch.tensor(x), torch.tensor(x), attn_mask=causal)[0]
    np.testing.assert_allclose(_np(o), _np(r), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(nn.Transformer.generate_square_subsequent_mask(5).numpy(), causal.numpy())


def test_sync_batchnorm_convert_and_transformer_encoder_stack():
    m = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))
    w = m[1].weight
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert isinstance(c[1], nn.SyncBatchNorm) and c[1].weight is w
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8))
    rlayer = tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    renc = tnn.TransformerEncoder(rlayer, 2, norm=tnn.LayerNorm(8), enable_nested_tensor=False)
    assert list(enc.state_dict()) == list(renc.state_dict())
    enc.load_state_dict(_sd_numpy(renc))
    x = np.random.default_rng(0).standard_normal((4, 2, 8)).astype(np.float32)
    np.testing.assert_allclose(_np(enc(fb.tensor(x))), _np(renc(torch.tensor(x))), rtol=RTOL, atol=ATOL)
