"""linalg, special, fft helpers, distributions, amp.GradScaler, utils.checkpoint, jit/onnx/hub shims against
torch on the same inputs (values and gradients)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402


def _pair(a, requires_grad=False):
    return fb.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a, np.float64),
                               np.asarray(b.detach().numpy() if hasattr(b, "detach") else b, np.float64),
                               rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)
SQ = (RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float64)
SPD = (SQ @ SQ.transpose(0, 2, 1) + np.eye(3)).astype(np.float64)
VEC = RNG.standard_normal((2, 3, 4)).astype(np.float32)

GRAD_CASES = {
    "inv": (lambda L, A: L.linalg.inv(A), SQ),
    "det": (lambda L, A: L.linalg.det(A), SQ),
    "slogdet": (lambda L, A: L.linalg.slogdet(A)[1], SQ),
    "solve-mat": (lambda L, A: L.linalg.solve(A, A[..., :2] * 2 + 1), SQ),
    "solve-vec": (lambda L, A: L.linalg.solve(A, A[..., 0] - 1), SQ),
    "cholesky": (lambda L, A: L.linalg.cholesky(A @ A.mT + L.eye(3, dtype=A.dtype)), SQ),
    "cholesky-upper": (lambda L, A: L.linalg.cholesky(A @ A.mT + L.eye(3, dtype=A.dtype), upper=True), SQ),
    "matrix_power": (lambda L, A: L.linalg.matrix_power(A, 3), SQ),
    "matrix_power-neg": (lambda L, A: L.linalg.matrix_power(A, -2), SQ),
    "vector_norm": (lambda L, A: L.linalg.vector_norm(A, 3, dim=-1), SQ),
    "vector_norm-inf": (lambda L, A: L.linalg.vector_norm(A, float("inf")), SQ),
    "matrix_norm-fro": (lambda L, A: L.linalg.matrix_norm(A), SQ),
    "matrix_norm-1": (lambda L, A: L.linalg.matrix_norm(A, 1), SQ),
    "matrix_norm-inf": (lambda L, A: L.linalg.matrix_norm(A, float("inf"), keepdim=True), SQ),
    "norm": (lambda L, A: L.linalg.norm(A[0]), SQ),
    "cross": (lambda L, A: L.linalg.cross(A, A.flip(-1) + 1), SQ),
    "vecdot": (lambda L, A: L.linalg.vecdot(A, A + 1), SQ),
    "multi_dot": (lambda L, A: L.linalg.multi_dot([A[0], A[1], A[0]]), SQ),
    "lgamma": (lambda L, A: L.lgamma(A.abs() + 0.1), SQ),
    "digamma": (lambda L, A: L.digamma(A.abs() + 0.1), SQ),
    "xlogy": (lambda L, A: L.xlogy(A, A.abs() + 0.5), SQ),
    "special.entr": (lambda L, A: L.special.entr(A.abs()), SQ),
    "special.ndtr": (lambda L, A: L.special.ndtr(A), SQ),
    "cdist": (lambda L, A: L.cdist(A, A.flip(-2) * 0.5, p=2.0), SQ),
    "cdist-p1": (lambda L, A: L.cdist(A, A * 0.3, p=1.0), SQ),
}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_values_and_grads_match_torch(case):
    fn, a = GRAD_CASES[case]
    x, y = _pair(a, requires_grad=True)
    out, ref = fn(fb, x), fn(torch, y)
    _close(out, ref, rtol=1e-7, atol=1e-9)
    g = RNG.standard_normal(tuple(ref.shape))
    out.backward(fb.tensor(g))
    ref.backward(torch.tensor(g))
    _close(x.grad, y.grad, rtol=1e-6, atol=1e-8)


FWD_CASES = {
    "svdvals": lambda L, A: L.linalg.svdvals(A),
    "eigvalsh": lambda L, A: L.linalg.eigvalsh(A @ A.mT),
    "matrix_rank": lambda L, A: L.linalg.matrix_rank(A),
    "pinv": lambda L, A: L.linalg.pinv(A),
    "qr-R-abs": lambda L, A: L.linalg.qr(A).R.abs(),
    "matrix_norm-nuc": lambda L, A: L.linalg.matrix_norm(A, "nuc"),
    "matrix_norm-2": lambda L, A: L.linalg.matrix_norm(A, 2),
    "slogdet-sign": lambda L, A: L.linalg.slogdet(A - 3 * L.eye(3, dtype=A.dtype)).sign,
    "lstsq": lambda L, A: L.linalg.lstsq(A[0], A[1]).solution,
    "fftfreq": lambda L, A: L.fft.fftfreq(7, d=0.5),
    "rfftfreq": lambda L, A: L.fft.rfftfreq(8),
    "fftshift": lambda L, A: L.fft.fftshift(A, dim=(-1,)),
    "ifftshift": lambda L, A: L.fft.ifftshift(A),
    "polygamma1": lambda L, A: L.polygamma(1, A.abs() + 0.2),
    "logit": lambda L, A: L.logit(A.sigmoid(), eps=1e-6),
}


@pytest.mark.parametrize("case", list(FWD_CASES))
def test_forward_matches_torch(case):
    x, y = _pair(SQ)
    _close(FWD_CASES[case](fb, x), FWD_CASES[case](torch, y), rtol=1e-6, atol=1e-9)


def test_linalg_errors():
    with pytest.raises(fb.linalg.LinAlgError):
        fb.linalg.inv(fb.zeros(3, 3))
    with pytest.raises(fb.linalg.LinAlgError):
        fb.linalg.cholesky(-fb.eye(2))
    with pytest.raises(RuntimeError, match="square"):
        fb.linalg.det(fb.zeros(2, 3))


P = RNG.uniform(0.5, 3.0, (4,)).astype(np.float64)
Q = RNG.uniform(0.5, 3.0, (4,)).astype(np.float64)
DIST_CASES = {
    "Normal": (lambda D, a, b: D.Normal(a - 1.5, b), lambda a, b: a - 1.5),
    "Uniform": (lambda D, a, b: D.Uniform(-a, b), lambda a, b: (b - a) * 0.3),
    "Exponential": (lambda D, a, b: D.Exponential(a), lambda a, b: b),
    "Gamma": (lambda D, a, b: D.Gamma(a, b), lambda a, b: a * 0.7),
    "Beta": (lambda D, a, b: D.Beta(a, b), lambda a, b: b / (b + 3.0)),
    "Dirichlet": (lambda D, a, b: D.Dirichlet(a.reshape(2, 2) + b.reshape(2, 2)),
                  lambda a, b: (a.reshape(2, 2) / a.reshape(2, 2).sum(-1, keepdim=True))),
    "Bernoulli-probs": (lambda D, a, b: D.Bernoulli(probs=a / 4), lambda a, b: (b > 1.5).to(b.dtype)),
    "Bernoulli-logits": (lambda D, a, b: D.Bernoulli(logits=a - b), lambda a, b: (a > 1.5).to(a.dtype)),
    "Categorical-probs": (lambda D, a, b: D.Categorical(probs=a.reshape(2, 2)), lambda a, b: (b[:2] > 1.5).long()),
    "Categorical-logits": (lambda D, a, b: D.Categorical(logits=a.reshape(2, 2) - b.reshape(2, 2)),
                           lambda a, b: (a[:2] > 1.5).long()),
}


@pytest.mark.parametrize("case", list(DIST_CASES))
def test_distribution_scores_match_torch(case):
    make, value = DIST_CASES[case]
    res = {}
    for lib in (fb, torch):
        a, b = lib.tensor(P, requires_grad=True), lib.tensor(Q, requires_grad=True)
        d = make(lib.distributions, a, b)
        with (fb.no_grad() if lib is fb else torch.no_grad()):
            v = value(a.detach(), b.detach())
        lp, ent = d.log_prob(v), d.entropy()
        (lp.sum() + ent.sum()).backward()
        stats = [] if "Categorical" in case else [d.mean, d.variance]
        res[lib] = [lp, ent, *stats, a.grad, b.grad if b.grad is not None else a.grad * 0, tuple(d.batch_shape),
                    tuple(d.event_shape)]
    ours, ref = res[fb], res[torch]
    assert ours[-2:] == ref[-2:]
    for x, y in zip(ours[:-2], ref[:-2]):
        _close(x, y, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", list(DIST_CASES))
def test_distribution_samples_have_the_right_law(case):
    make, _ = DIST_CASES[case]
    fb.manual_seed(0)
    a, b = fb.tensor(P), fb.tensor(Q)
    d, ref = make(fb.distributions, a, b), make(torch.distributions, torch.tensor(P), torch.tensor(Q))
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000, *ref.batch_shape, *ref.event_shape)
    fb.manual_seed(0)
    assert np.array_equal(make(fb.distributions, a, b).sample((20000,)).numpy(), s.numpy())  # seeded
    if "Categorical" in case:
        freq = np.stack([(s.numpy() == k).mean(0) for k in range(2)], -1)
        _close(freq, ref.probs, atol=0.02)
    else:
        _close(s.numpy().mean(0), ref.mean, rtol=0.03, atol=0.03)
        _close(s.numpy().var(0), ref.variance, rtol=0.1, atol=0.03)


def test_rsample_gradients_and_kl_match_torch():
    out = {}
    for lib in (fb, torch):
        lib.manual_seed(0)
        loc, scale = lib.tensor(P, requires_grad=True), lib.tensor(Q, requires_grad=True)
        D = lib.distributions
        kl = (D.kl_divergence(D.Normal(loc, scale), D.Normal(loc * 0.5, scale + 1)).sum()
              + D.kl_divergence(D.Categorical(logits=loc.reshape(2, 2)), D.Categorical(logits=scale.reshape(2, 2))).sum()
              + D.kl_divergence(D.Beta(loc, scale), D.Beta(scale, loc)).sum()
              + D.kl_divergence(D.Gamma(loc, scale), D.Gamma(scale, loc)).sum())
        kl.backward()
        out[lib] = (kl, loc.grad, scale.grad)
    for x, y in zip(out[fb], out[torch]):
        _close(x, y, rtol=1e-6, atol=1e-8)
    loc = fb.tensor(P, requires_grad=True)
    x = fb.distributions.Normal(loc, 2.0).rsample((5,))
    x.sum().backward()
    _close(loc.grad, np.full(4, 5.0))
    with pytest.raises(ValueError, match="scale"):
        fb.distributions.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="probs"):
        fb.distributions.Bernoulli(probs=0.5, logits=0.1)


def test_grad_scaler_matches_torch():
    traj = {}
    for lib in (fb, torch):
        p = lib.nn.Parameter(lib.tensor(np.array([1.0, -2.0, 3.0], np.float32)))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=1024.0, growth_factor=2.0, backoff_factor=0.25,
                                    growth_interval=2)
        out = []
        for step in range(7):
            opt.zero_grad()
            loss = (p * p).sum() * (float("inf") if step in (2, 5) else 1.0)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            g = p.grad.detach().clone()
            scaler.step(opt)
            scaler.update()
            out.append((scaler.get_scale(), p.detach().numpy().copy(), np.isfinite(g.numpy()).all()))
        traj[lib] = (out, scaler.state_dict())
    for (s1, p1, f1), (s2, p2, f2) in zip(traj[fb][0], traj[torch][0]):
        assert s1 == s2 and f1 == f2
        np.testing.assert_allclose(p1, p2, rtol=1e-6)
    assert traj[fb][1] == traj[torch][1]
    with pytest.raises(RuntimeError, match="unscale_"):
        s = fb.amp.GradScaler("cpu")
        p = fb.nn.Parameter(fb.ones(1))
        o = fb.optim.SGD([p], lr=0.1)
        s.scale((p * 2).sum()).backward()
        s.unscale_(o)
        s.unscale_(o)


def test_autocast_contexts():
    with fb.autocast("cpu", dtype=fb.bfloat16):
        assert fb.amp.is_autocast_enabled("cpu")
        y = fb.nn.Linear(3, 2)(fb.ones(1, 3))
    assert y.dtype == fb.bfloat16 and not fb.amp.is_autocast_enabled("cpu")  # torch's CPU policy for linear
    with pytest.raises(RuntimeError, match="device_type"):
        fb.autocast("tpu")


def test_checkpoint_gradients_equal_plain_backward():
    for lib in (fb,):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Dropout(0.3), lib.nn.Linear(8, 2))
        x = lib.randn(3, 4, requires_grad=True)
        lib.manual_seed(1)
        m(x).pow(2).sum().backward()
        plain = [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]
        m.zero_grad()
        x.grad = None
        lib.manual_seed(1)
        from flowvision.backend.utils.checkpoint import checkpoint, checkpoint_sequential
        checkpoint(m, x, use_reentrant=False).pow(2).sum().backward()
        ckpt = [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]
        for a, b in zip(plain, ckpt):
            # same RNG state replayed (identical dropout masks); the no-grad forward may use the packed GEMM
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
        m.zero_grad()
        x.grad = None
        checkpoint_sequential(m, 2, x).sum().backward()
        assert all(p.grad is not None for p in m.parameters())
