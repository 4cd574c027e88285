"""complex64/complex128 tensors: creation, promotion, arithmetic, real/imag/abs/angle, torch.fft with gradients.

Every value and gradient is compared with torch on the same inputs (torch's convention for complex gradients:
dL/d(re) + i dL/d(im))."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402

RNG = np.random.default_rng(0)


def _c(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _close(a, b, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    np.testing.assert_allclose(a, b.detach().resolve_conj().numpy(), rtol=tol, atol=tol)


def _dt(t):
    return str(t.dtype).split(".")[-1]


def test_creation_and_dtypes():
    for data in ([1 + 2j, 3.0], [[1j]], 2 - 1j):
        a, b = fb.tensor(data), torch.tensor(data)
        assert _dt(a) == _dt(b)
        _close(a, b, 0)
    for fn in ("zeros", "ones"):
        for dt in ("complex64", "complex128", "cfloat", "cdouble"):
            a, b = getattr(fb, fn)(2, 3, dtype=getattr(fb, dt)), getattr(torch, fn)(2, 3, dtype=getattr(torch, dt))
            assert _dt(a) == _dt(b) and a.is_complex() and not a.is_floating_point()
    r = fb.randn(40000, dtype=fb.cfloat)
    assert r.dtype == fb.complex64
    assert abs(float(r.real.var()) - 0.5) < 0.02 and abs(float(r.imag.var()) - 0.5) < 0.02  # torch's variance split
    u = fb.rand(1000, dtype=fb.cdouble)
    assert u.dtype == fb.complex128 and 0 <= float(u.real.min()) and float(u.imag.max()) < 1
    assert fb.tensor([1.0]).is_complex() is False


@pytest.mark.parametrize("other", ["f32", "f64", "i64", "c128", 2j, 1.5, 3])
def test_promotion_matches_torch(other):
    mk = {"f32": lambda L: L.ones(2), "f64": lambda L: L.ones(2, dtype=L.float64),
          "i64": lambda L: L.ones(2, dtype=L.int64), "c128": lambda L: L.ones(2, dtype=L.complex128)}
    for base in ("c64", "f32", "f64", "i64"):
        mkb = {"c64": lambda L: L.ones(2, dtype=L.complex64), **mk}[base]
        o_f = mk[other](fb) if isinstance(other, str) else other
        o_t = mk[other](torch) if isinstance(other, str) else other
        if base != "c64" and not (isinstance(other, complex) or other == "c128"):
            continue
        assert _dt(mkb(fb) * o_f) == _dt(mkb(torch) * o_t), (base, other)
        assert _dt(mkb(fb) + o_f) == _dt(mkb(torch) + o_t), (base, other)
    assert fb.promote_types(fb.float64, fb.complex64) == fb.complex128
    assert torch.promote_types(torch.float64, torch.complex64) == torch.complex128


def test_arithmetic_values_and_gradients():
    xa, ya = _c((3, 4)), _c((4,))
    x, y = fb.tensor(xa, requires_grad=True), fb.tensor(ya, requires_grad=True)
    tx, ty = torch.tensor(xa, requires_grad=True), torch.tensor(ya, requires_grad=True)

    def f(L, a, b):
        z = (a * b + a / (b + 3) - b * 2j) * 0.5 - a
        return z, (z.abs() ** 2).sum() + z.real.sum() * 0.3 + z.imag.mean()
    z, loss = f(fb, x, y)
    tz, tloss = f(torch, tx, ty)
    _close(z, tz)
    loss.backward()
    tloss.backward()
    _close(x.grad, tx.grad)
    _close(y.grad, ty.grad)
    _close(x.detach().sum(), tx.detach().sum())
    _close(x.detach().mean(0), tx.detach().mean(0))
    _close(fb.exp(x.detach()), torch.exp(tx.detach()))


def test_real_imag_angle_abs_conj_gradients():
    a = _c((5,), np.complex128)
    a[0] = 0  # abs/angle at zero: torch's subgradient 0
    x, t = fb.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = RNG.standard_normal((5,))

    def loss(L, v):
        W = L.tensor(w)
        return (v.real * W).sum() + (v.imag * W * 2).sum() + (v.abs() * W * 3).sum() + (v.angle() * W).sum() \
            + (L.conj(v) * v.conj()).real.sum()
    loss(fb, x).backward()
    loss(torch, t).backward()
    _close(x.grad, t.grad, 1e-10)
    assert _dt(x.real) == _dt(t.real) == "float64" and _dt(x.abs()) == "float64"
    _close(fb.angle(fb.tensor([-1.0, 2.0])), torch.angle(torch.tensor([-1.0, 2.0])))
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        fb.ones(2).imag
    assert fb.ones(2).real is not None


def test_view_as_real_complex_polar():
    a = _c((2, 3))
    x, t = fb.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    r = fb.view_as_real(x)
    tr = torch.view_as_real(t)
    _close(r, tr, 0)
    w = RNG.standard_normal(tuple(tr.shape)).astype(np.float32)
    (r * fb.tensor(w)).sum().backward()
    (tr * torch.tensor(w)).sum().backward()
    _close(x.grad, t.grad)
    pr = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    p, tp = fb.tensor(pr, requires_grad=True), torch.tensor(pr, requires_grad=True)
    (fb.view_as_complex(p) * (1 + 2j)).real.sum().backward()
    (torch.view_as_complex(tp) * (1 + 2j)).real.sum().backward()
    _close(p.grad, tp.grad)
    mag, ph = np.abs(RNG.standard_normal(4)), RNG.standard_normal(4)
    m, h = fb.tensor(mag, requires_grad=True), fb.tensor(ph, requires_grad=True)
    tm, th = torch.tensor(mag, requires_grad=True), torch.tensor(ph, requires_grad=True)
    zf, zt = fb.polar(m, h), torch.polar(tm, th)
    _close(zf, zt, 1e-12)
    (zf * (0.5 - 1j)).imag.sum().backward()
    (zt * (0.5 - 1j)).imag.sum().backward()
    _close(m.grad, tm.grad, 1e-12)
    _close(h.grad, th.grad, 1e-12)
    re, im = fb.tensor(mag, requires_grad=True), fb.tensor(ph, requires_grad=True)
    tre, tim = torch.tensor(mag, requires_grad=True), torch.tensor(ph, requires_grad=True)
    (fb.complex(re, im) * (2 + 1j)).abs().sum().backward()
    (torch.complex(tre, tim) * (2 + 1j)).abs().sum().backward()
    _close(re.grad, tre.grad, 1e-12)
    _close(im.grad, tim.grad, 1e-12)


CASES = [
    ("fft", {}, (6,), True), ("fft", {"n": 9, "norm": "ortho"}, (2, 7), False), ("fft", {"n": 4, "dim": 0}, (6, 3), True),
    ("ifft", {"norm": "forward"}, (5,), False), ("ifft", {"n": 8}, (3, 6), True),
    ("rfft", {}, (8,), True), ("rfft", {"n": 11, "norm": "ortho"}, (2, 9), True), ("rfft", {"n": 6, "dim": 0}, (9, 2), True),
    ("irfft", {}, (5,), False), ("irfft", {"n": 9}, (2, 5), False), ("irfft", {"n": 6, "norm": "forward"}, (3, 5), False),
    ("fft2", {}, (2, 4, 6), True), ("ifft2", {"s": (5, 3), "norm": "ortho"}, (4, 4), False),
    ("rfft2", {}, (3, 6, 8), True), ("irfft2", {"s": (4, 7)}, (4, 5), False),
    ("fftn", {"dim": (0, 2)}, (3, 2, 5), False), ("ifftn", {}, (2, 3, 4), False),
    ("rfftn", {"s": (4, 4)}, (3, 5, 6), True), ("irfftn", {}, (3, 4, 5), False),
    ("hfft", {}, (5,), False), ("ihfft", {"n": 7}, (6,), True),
]


@pytest.mark.parametrize("name,kw,shape,real", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("prec", ["single", "double"])
def test_fft_values_and_gradients(name, kw, shape, real, prec):
    if real:
        a = RNG.standard_normal(shape).astype(np.float32 if prec == "single" else np.float64)
    else:
        a = _c(shape, np.complex64 if prec == "single" else np.complex128)
    x, t = fb.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = getattr(fb.fft, name)(x, **kw), getattr(torch.fft, name)(t, **kw)
    assert _dt(y) == _dt(ty) and tuple(y.shape) == tuple(ty.shape)
    tol = 2e-4 if prec == "single" else 1e-10
    _close(y, ty, tol)
    w = RNG.standard_normal(tuple(ty.shape))

    def loss(L, v):
        W = L.tensor(w)
        if v.is_complex():
            return (v.abs() * W).sum() + (v.real * W).sum() * 0.5 - v.imag.sum()
        return (v * W).sum() + (v ** 2).sum()
    loss(fb, y).backward()
    loss(torch, ty).backward()
    assert _dt(x.grad) == _dt(t.grad)
    _close(x.grad, t.grad, tol * 10)


def test_fft_filter_roundtrip_and_errors():
    img = RNG.standard_normal((1, 8, 8)).astype(np.float32)
    x, t = fb.tensor(img, requires_grad=True), torch.tensor(img, requires_grad=True)
    mask = (np.arange(5)[None, :] < 3).astype(np.float32)

    def low_pass(L, v):
        return L.fft.irfft2(L.fft.rfft2(v) * L.tensor(mask), s=(8, 8))
    yf, yt = low_pass(fb, x), low_pass(torch, t)
    _close(yf, yt)
    (yf ** 2).sum().backward()
    (yt ** 2).sum().backward()
    _close(x.grad, t.grad)
    _close(fb.fft.fftshift(fb.fft.fft(fb.tensor(img[0]))), torch.fft.fftshift(torch.fft.fft(torch.tensor(img[0]))), 2e-4)
    with pytest.raises(RuntimeError, match="real input"):
        fb.fft.rfft(fb.ones(4, dtype=fb.complex64))
    with pytest.raises(ValueError, match="normalization"):
        fb.fft.fft(fb.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        fb.fft.fft(fb.ones(4), n=0)
    _close(fb.fft.fft(fb.arange(4)), torch.fft.fft(torch.arange(4)))


def test_linalg_eig_complex_results():
    a = RNG.standard_normal((5, 5)).astype(np.float32)
    w, V = fb.linalg.eig(fb.tensor(a))
    tw = torch.linalg.eig(torch.tensor(a)).eigenvalues
    assert _dt(w) == _dt(tw) == "complex64"
    np.testing.assert_allclose(np.sort_complex(w.numpy()), np.sort_complex(tw.numpy()), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.astype(np.complex64) @ V.numpy(), V.numpy() * w.numpy()[None, :], atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(V.numpy(), axis=0), 1, rtol=1e-5)
    np.testing.assert_allclose(np.sort_complex(fb.linalg.eigvals(fb.tensor(a)).numpy()), np.sort_complex(tw.numpy()),
                               rtol=1e-4, atol=1e-5)
    x, tx = fb.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    fb.linalg.eigvals(x).abs().sum().backward()
    torch.linalg.eigvals(tx).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("fn", ["exp", "log", "sin", "cos", "tanh", "sqrt", "sigmoid", "reciprocal", "square", "rsqrt"])
def test_holomorphic_unary_gradients(fn):
    z = (RNG.random(6) + 1j * RNG.random(6) + 0.3).astype(np.complex128)
    x, t = fb.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    yf, yt = getattr(fb, fn)(x), getattr(torch, fn)(t)
    _close(yf, yt, 1e-12)
    ((yf * (0.3 - 1j)).real.sum() + yf.abs().sum()).backward()
    ((yt * (0.3 - 1j)).real.sum() + yt.abs().sum()).backward()
    _close(x.grad, t.grad, 1e-10)
