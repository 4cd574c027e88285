"""nn surface added for torch scripts, against torch with the same weights and inputs: RNN/LSTM/GRU and cells,
grid_sample/affine_grid, LocalResponseNorm & co., weight_norm/spectral_norm/parametrize, full backward hooks."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402
from flowvision.backend import nn  # noqa: E402
import flowvision.backend.nn.functional as F  # noqa: E402

RNG = np.random.default_rng(0)


def _copy_weights(ours, ref):
    sd = {k: fb.tensor(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    ours.load_state_dict(sd)


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


RNN_CASES = [
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict()),
    ("GRU", dict(num_layers=2, batch_first=True)),
    ("GRU", dict(bidirectional=True, bias=False)),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, batch_first=True)),
]


@pytest.mark.parametrize("name,kw", RNN_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(RNN_CASES)])
def test_recurrent_layers_match_torch(name, kw):
    ref = getattr(torch.nn, name)(3, 4, **kw)
    ours = getattr(nn, name)(3, 4, **kw)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    _copy_weights(ours, ref)
    x = RNG.standard_normal((2, 5, 3) if kw.get("batch_first") else (5, 2, 3)).astype(np.float32)
    xo, xr = fb.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (oo, ho), (orf, hr) = ours(xo), ref(xr)
    _close(oo, orf)
    for a, b in zip(ho if isinstance(ho, tuple) else (ho,), hr if isinstance(hr, tuple) else (hr,)):
        _close(a, b)
    g = RNG.standard_normal(tuple(orf.shape)).astype(np.float32)
    oo.backward(fb.tensor(g))
    orf.backward(torch.tensor(g))
    _close(xo.grad, xr.grad)
    for (n, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        _close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
    # unbatched input with an explicit initial state
    x1 = x[0] if kw.get("batch_first") else x[:, 0]
    d = 2 if kw.get("bidirectional") else 1
    h0 = RNG.standard_normal((kw.get("num_layers", 1) * d, 4)).astype(np.float32)
    hx_o = (fb.tensor(h0), fb.tensor(h0 * 0.5)) if name == "LSTM" else fb.tensor(h0)
    hx_r = (torch.tensor(h0), torch.tensor(h0 * 0.5)) if name == "LSTM" else torch.tensor(h0)
    _close(ours(fb.tensor(x1), hx_o)[0], ref(torch.tensor(x1), hx_r)[0])


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(name):
    ref, ours = getattr(torch.nn, name)(3, 5), getattr(nn, name)(3, 5)
    _copy_weights(ours, ref)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    h = RNG.standard_normal((4, 5)).astype(np.float32)
    hx_o = (fb.tensor(h), fb.tensor(-h)) if name == "LSTMCell" else fb.tensor(h)
    hx_r = (torch.tensor(h), torch.tensor(-h)) if name == "LSTMCell" else torch.tensor(h)
    a, b = ours(fb.tensor(x), hx_o), ref(torch.tensor(x), hx_r)
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        _close(u, v)
    for u, v in zip(ours(fb.tensor(x[0])) if name == "LSTMCell" else (ours(fb.tensor(x[0])),),
                    ref(torch.tensor(x[0])) if name == "LSTMCell" else (ref(torch.tensor(x[0])),)):
        _close(u, v)


def test_rnn_bad_input():
    with pytest.raises(RuntimeError, match="input_size"):
        nn.LSTM(3, 4)(fb.zeros(5, 2, 7))
    with pytest.raises(ValueError, match="2D or 3D"):
        nn.GRU(3, 4)(fb.zeros(5))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    theta = (np.eye(2, 3)[None] + 0.3 * RNG.standard_normal((2, 2, 3))).astype(np.float32)
    res = {}
    for lib, fn in ((fb, F), (torch, torch.nn.functional)):
        xi = lib.tensor(x, requires_grad=True)
        th = lib.tensor(theta, requires_grad=True)
        grid = fn.affine_grid(th, (2, 3, 4, 7), align_corners=align_corners)
        out = fn.grid_sample(xi, grid * 1.2, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))).sum().backward()
        res[lib] = (grid, out, xi.grad, th.grad)
    for a, b in zip(res[fb], res[torch]):
        if a is None:  # nearest sampling: no gradient reaches the grid (torch reports zeros)
            assert mode == "nearest" and not b.abs().sum()
            continue
        _close(a, b, rtol=1e-4, atol=1e-5)


def test_grid_sample_errors():
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(fb.zeros(1, 1, 2, 2), fb.zeros(1, 2, 2, 2), padding_mode="wrap")
    with pytest.raises(RuntimeError, match="batch"):
        F.grid_sample(fb.zeros(2, 1, 2, 2), fb.zeros(1, 2, 2, 2))
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(fb.zeros(1, 3, 3), (1, 1, 2, 2))


SMALL_MODULES = [
    ("LocalResponseNorm", (3,), dict(alpha=1e-2, beta=0.6, k=2.0), [(2, 6, 4, 4)]),
    ("CosineSimilarity", (), dict(dim=1), [(4, 5), (4, 5)]),
    ("PairwiseDistance", (), dict(p=3.0), [(4, 5), (4, 5)]),
    ("Unfold", (2,), dict(padding=1, stride=2), [(2, 3, 5, 5)]),
    ("Fold", ((4, 5), 2), dict(), [(2, 12, 12)]),
    ("ChannelShuffle", (3,), dict(), [(2, 6, 2, 2)]),
]


@pytest.mark.parametrize("name,args,kw,shapes", SMALL_MODULES, ids=[c[0] for c in SMALL_MODULES])
def test_small_modules_match_torch(name, args, kw, shapes):
    xs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    a = getattr(nn, name)(*args, **kw)(*[fb.tensor(x) for x in xs])
    b = getattr(torch.nn, name)(*args, **kw)(*[torch.tensor(x) for x in xs])
    _close(a, b)


def test_weight_norm_and_spectral_norm_match_torch():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for make in (lambda L: L.nn.utils.weight_norm(L.nn.Linear(4, 5), dim=0),
                 lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 5), dim=1),
                 lambda L: L.nn.utils.spectral_norm(L.nn.Linear(4, 5), n_power_iterations=2),
                 lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(4, 5))):
        ref, ours = make(torch), make(fb)
        assert list(ours.state_dict()) == list(ref.state_dict())
        _copy_weights(ours, ref)
        for _ in range(2):  # training mode: power iterations update u, v
            xo, xr = fb.tensor(x), torch.tensor(x)
            a, b = ours(xo), ref(xr)
            _close(a, b)
            a.sum().backward()
            b.sum().backward()
        for (n, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
            _close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
        ours.eval(), ref.eval()
        _close(ours(fb.tensor(x)), ref(torch.tensor(x)))
    m = nn.utils.weight_norm(nn.Linear(4, 5))
    w = m(fb.tensor(x))
    nn.utils.remove_weight_norm(m)
    assert "weight" in dict(m.named_parameters())
    _close(m(fb.tensor(x)), w)


def test_register_parametrization_matches_torch():
    class Sym:
        @staticmethod
        def make(L):
            class Symmetric(L.nn.Module):
                def forward(self, X):
                    return X.triu() + X.triu(1).transpose(0, 1)
            return Symmetric()

    a = RNG.standard_normal((4, 4)).astype(np.float32)
    res = {}
    for L in (fb, torch):
        m = L.nn.Linear(4, 4)
        m.weight.data.copy_(L.tensor(a))
        m.bias.data.zero_()
        L.nn.utils.parametrize.register_parametrization(m, "weight", Sym.make(L))
        assert L.nn.utils.parametrize.is_parametrized(m, "weight")
        out = m(L.tensor(a))
        out.sum().backward()
        res[L] = (m.weight, out, m.parametrizations.weight.original.grad, sorted(m.state_dict()))
        with L.nn.utils.parametrize.cached():
            assert m.weight is m.weight
        L.nn.utils.parametrize.remove_parametrizations(m, "weight")
        assert not L.nn.utils.parametrize.is_parametrized(m)
        res[L] += (m.weight,)
    assert res[fb][3] == res[torch][3]
    for x, y in zip(res[fb][:3] + res[fb][4:], res[torch][:3] + res[torch][4:]):
        _close(x, y)


def test_full_backward_hooks_match_torch():
    def run(L):
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2))
        m[0].weight.data.copy_(L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)))
        m[2].weight.data.copy_(L.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)))
        m[0].bias.data.fill_(0.1)
        m[2].bias.data.fill_(-0.2)
        seen = []
        m[2].register_full_backward_hook(lambda mod, gi, go: seen.append(("post", gi[0], go[0])))
        m[2].register_full_backward_pre_hook(lambda mod, go: seen.append(("pre", go[0])) or (go[0] * 3,))
        h = m[0].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0.5,))
        x = L.tensor(np.ones((2, 3), np.float32), requires_grad=True)
        m(x).pow(2).sum().backward()
        h.remove()
        m(x).sum().backward()
        return seen, x.grad, m[0].weight.grad
    (so, xo, wo), (sr, xr, wr) = run(fb), run(torch)
    assert [s[0] for s in so] == [s[0] for s in sr]
    for a, b in zip(so, sr):
        for u, v in zip(a[1:], b[1:]):
            _close(u, v)
    _close(xo, xr)
    _close(wo, wr)


def test_tensor_and_creation_extras():
    x = fb.arange(10.0)
    assert x[range(2, 5)].tolist() == [2.0, 3.0, 4.0]
    assert fb.rand(size=(2, 3)).shape == (2, 3) and fb.zeros(size=[4]).shape == (4,)
    assert x.pin_memory() is x and not x.is_pinned() and not x.is_xpu and not x.is_mps
    with pytest.raises(RuntimeError, match="rank 4"):  # as torch
        fb.ones(2, 3).to(memory_format=fb.channels_last)
    assert fb.ones(1, 2, 3, 3).to(memory_format=fb.channels_last).stride() == (18, 1, 6, 2)
    import pickle
    assert pickle.loads(pickle.dumps(fb.device("cuda:1"))) == fb.device("cuda", 1)
