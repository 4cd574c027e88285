"""PackedSequence helpers, RNN/LSTM/GRU on packed input, LSTM proj_size, F.local_response_norm: against torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections")


def _copy(tm, fm):
    sd = {k: fb.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert set(sd) == set(fm.state_dict()), (sorted(sd), sorted(fm.state_dict()))
    fm.load_state_dict(sd)


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy() if hasattr(a, "detach") else a, b.detach().numpy(),
                               rtol=tol, atol=tol)


LENGTHS = [5, 2, 4, 1]


def _padded(seed=0, feat=3):
    x = np.random.default_rng(seed).standard_normal((max(LENGTHS), len(LENGTHS), feat)).astype(np.float32)
    for b, n in enumerate(LENGTHS):
        x[n:, b] = 0
    return x


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_roundtrip(batch_first):
    x = _padded()
    if batch_first:
        x = x.transpose(1, 0, 2).copy()
    fp = fb.nn.utils.rnn.pack_padded_sequence(fb.tensor(x), LENGTHS, batch_first=batch_first, enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), LENGTHS, batch_first=batch_first,
                                                 enforce_sorted=False)
    _close(fp.data, tp.data, 0)
    assert fp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert fp.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert fp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    fo, fl = fb.nn.utils.rnn.pad_packed_sequence(fp, batch_first=batch_first, padding_value=-1.0, total_length=7)
    to, tl = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-1.0, total_length=7)
    _close(fo, to, 0)
    assert fl.tolist() == tl.tolist() and fl.dtype == fb.int64
    seqs = [torch.arange(n * 2, dtype=torch.float32).reshape(n, 2) for n in (3, 2, 2)]
    fs = fb.nn.utils.rnn.pack_sequence([fb.tensor(s.numpy()) for s in seqs])
    ts = torch.nn.utils.rnn.pack_sequence(seqs)
    _close(fs.data, ts.data, 0)
    assert fs.sorted_indices is None and ts.sorted_indices is None
    back = fb.nn.utils.rnn.unpack_sequence(fs)
    for a, b in zip(back, seqs):
        _close(a, b, 0)


def test_pack_errors():
    x = fb.zeros(4, 2, 3)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        fb.nn.utils.rnn.pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        fb.nn.utils.rnn.pack_padded_sequence(x, [2, 0])
    with pytest.raises(ValueError, match="batch_size"):
        fb.nn.utils.rnn.pack_padded_sequence(x, [2])


@pytest.mark.parametrize("kind,kw", [("RNN", {}), ("GRU", {"num_layers": 2}), ("LSTM", {"bidirectional": True}),
                                     ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
                                     ("GRU", {"bidirectional": True, "batch_first": True})])
def test_rnn_on_packed_input(kind, kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(3, 4, **kw)
    fm = getattr(fb.nn, kind)(3, 4, **kw)
    _copy(tm, fm)
    bf = kw.get("batch_first", False)
    x = _padded(1)
    if bf:
        x = x.transpose(1, 0, 2).copy()
    xt = torch.tensor(x, requires_grad=True)
    xf = fb.tensor(x, requires_grad=True)
    tp = torch.nn.utils.rnn.pack_padded_sequence(xt, LENGTHS, batch_first=bf, enforce_sorted=False)
    fp = fb.nn.utils.rnn.pack_padded_sequence(xf, LENGTHS, batch_first=bf, enforce_sorted=False)
    dirs = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1) * dirs
    rng = np.random.default_rng(3)
    h0 = rng.standard_normal((L, len(LENGTHS), kw.get("proj_size") or 4)).astype(np.float32)
    if kind == "LSTM":
        c0 = rng.standard_normal((L, len(LENGTHS), 4)).astype(np.float32)
        thx, fhx = (torch.tensor(h0), torch.tensor(c0)), (fb.tensor(h0), fb.tensor(c0))
    else:
        thx, fhx = torch.tensor(h0), fb.tensor(h0)
    to, th = tm(tp, thx)
    fo, fh = fm(fp, fhx)
    assert isinstance(fo, fb.nn.utils.rnn.PackedSequence)
    _close(fo.data, to.data)
    for a, b in zip(fh if kind == "LSTM" else (fh,), th if kind == "LSTM" else (th,)):
        _close(a, b)
    tpad, _ = torch.nn.utils.rnn.pad_packed_sequence(to, batch_first=bf)
    fpad, _ = fb.nn.utils.rnn.pad_packed_sequence(fo, batch_first=bf)
    _close(fpad, tpad)
    w = rng.standard_normal(tuple(tpad.shape)).astype(np.float32)
    hsum_t = (th[0] if kind == "LSTM" else th).sum()
    hsum_f = (fh[0] if kind == "LSTM" else fh).sum()
    ((tpad * torch.tensor(w)).sum() + hsum_t).backward()
    ((fpad * fb.tensor(w)).sum() + hsum_f).backward()
    _close(xf.grad, xt.grad)
    for (n, p) in tm.named_parameters():
        _close(dict(fm.named_parameters())[n].grad, p.grad)


@pytest.mark.parametrize("kw", [{"proj_size": 3}, {"proj_size": 2, "num_layers": 2, "bidirectional": True,
                                                   "batch_first": True}])
def test_lstm_proj_size_padded(kw):
    torch.manual_seed(1)
    tm, fm = torch.nn.LSTM(4, 5, **kw), fb.nn.LSTM(4, 5, **kw)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in fm.named_parameters()]
    assert repr(tm) == repr(fm).replace("flowvision.backend.", "")
    _copy(tm, fm)
    x = np.random.default_rng(2).standard_normal((2, 6, 4)).astype(np.float32)
    xt, xf = torch.tensor(x, requires_grad=True), fb.tensor(x, requires_grad=True)
    to, (th, tc) = tm(xt)
    fo, (fh, fc) = fm(xf)
    _close(fo, to)
    _close(fh, th)
    _close(fc, tc)
    (to.sum() + tc.sum()).backward()
    (fo.sum() + fc.sum()).backward()
    _close(xf.grad, xt.grad)
    assert tuple(fm.weight_hr_l0.shape) == tuple(tm.weight_hr_l0.shape)
    _close(fm.weight_hr_l0.grad, tm.weight_hr_l0.grad)


def test_proj_size_errors():
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        fb.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        fb.nn.modules.rnn.RNNBase("GRU", 3, 4, proj_size=2)


@pytest.mark.parametrize("shape", [(2, 7, 5), (2, 6, 4, 3), (1, 5, 3, 2, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm_functional(shape, size):
    x = np.random.default_rng(size).standard_normal(shape).astype(np.float64)
    xt, xf = torch.tensor(x, requires_grad=True), fb.tensor(x, requires_grad=True)
    yt = torch.nn.functional.local_response_norm(xt, size, alpha=0.3, beta=0.6, k=1.5)
    yf = fb.nn.functional.local_response_norm(xf, size, alpha=0.3, beta=0.6, k=1.5)
    _close(yf, yt, 1e-12)
    yt.pow(2).sum().backward()
    yf.pow(2).sum().backward()
    _close(xf.grad, xt.grad, 1e-10)
    _close(fb.nn.LocalResponseNorm(size)(fb.tensor(x)), torch.nn.LocalResponseNorm(size)(torch.tensor(x)), 1e-12)
