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
    with pytest.raises(NotImplementedError, match="complex"):
        fb.linalg.eig(fb.eye(2))
    x = fb.tensor(SQ, requires_grad=True)
    with pytest.raises(NotImplementedError, match="svd"):
        fb.linalg.svd(x).S.sum().backward()
    with pytest.raises(NotImplementedError, match="complex"):
        fb.fft.rfft(fb.ones(4))
