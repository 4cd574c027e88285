"""Gradients of linalg.svd / svdvals / eigh / eigvalsh / qr / pinv against torch autograd on the same inputs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402


def _pair(arr):
    a = fb.tensor(arr, requires_grad=True)
    t = torch.tensor(arr, requires_grad=True)
    return a, t


def _check(arr, f_fv, f_t, rtol=1e-8, atol=1e-10):
    a, t = _pair(arr)
    f_fv(a).backward()
    f_t(t).backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def _weights(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_all_outputs(shape):
    arr = np.random.default_rng(0).standard_normal(shape)
    k = min(shape[-2:])
    wu = _weights(shape[:-1] + (k,), 1)
    ws = _weights(shape[:-2] + (k,), 2)
    wv = _weights(shape[:-2] + (k, shape[-1]), 3)

    def loss(lib, A):
        U, S, Vh = lib.linalg.svd(A, full_matrices=False)
        # squares: invariant to the sign of each singular pair
        return ((U ** 2) * lib.tensor(wu)).sum() + (S * lib.tensor(ws)).sum() + ((Vh ** 2) * lib.tensor(wv)).sum()
    _check(arr, lambda A: loss(fb, A), lambda A: loss(torch, A))


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_partial_outputs_and_svdvals(shape):
    arr = np.random.default_rng(4).standard_normal(shape)
    _check(arr, lambda A: (fb.linalg.svd(A, full_matrices=False).U ** 2)[..., 0].sum(),
           lambda A: (torch.linalg.svd(A, full_matrices=False).U ** 2)[..., 0].sum())
    _check(arr, lambda A: (fb.linalg.svd(A, full_matrices=False).Vh ** 2)[..., 0, :].sum(),
           lambda A: (torch.linalg.svd(A, full_matrices=False).Vh ** 2)[..., 0, :].sum())
    _check(arr, lambda A: (fb.linalg.svdvals(A) ** 3).sum(), lambda A: (torch.linalg.svdvals(A) ** 3).sum())
    # full_matrices=True on a square matrix: the same factors
    if shape[-1] == shape[-2]:
        _check(arr, lambda A: fb.linalg.svd(A).S.sum() + (fb.linalg.svd(A).U ** 2)[..., 1].sum(),
               lambda A: torch.linalg.svd(A).S.sum() + (torch.linalg.svd(A).U ** 2)[..., 1].sum())


def test_svdvals_finite_on_repeated_values():
    arr = np.eye(3)
    _check(arr, lambda A: fb.linalg.svdvals(A).sum(), lambda A: torch.linalg.svdvals(A).sum())
    _check(arr, lambda A: fb.linalg.svd(A).S.sum(), lambda A: torch.linalg.svd(A).S.sum())


@pytest.mark.parametrize("n,batch", [(4, ()), (3, (2,))])
def test_eigh_and_eigvalsh(n, batch):
    rng = np.random.default_rng(5)
    arr = rng.standard_normal(batch + (n, n))
    wv = rng.standard_normal(batch + (n, n))

    def loss(lib, A):
        S = A + A.mT  # torch's eigh reads one triangle; symmetrising makes the loss a function of all entries
        L, V = lib.linalg.eigh(S)
        return (L * L).sum() + ((V ** 2) * lib.tensor(wv)).sum()
    _check(arr, lambda A: loss(fb, A), lambda A: loss(torch, A))
    # eigh on the raw (non-symmetric) input: torch's gradient is not projected onto one triangle; ours neither
    _check(arr, lambda A: (fb.linalg.eigh(A).eigenvectors ** 2 * fb.tensor(wv)).sum(),
           lambda A: (torch.linalg.eigh(A).eigenvectors ** 2 * torch.tensor(wv)).sum())
    _check(arr, lambda A: (fb.linalg.eigvalsh(A + A.mT) ** 2).sum(),
           lambda A: (torch.linalg.eigvalsh(A + A.mT) ** 2).sum())


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 5, 3)])
def test_qr(shape):
    rng = np.random.default_rng(6)
    arr = rng.standard_normal(shape)
    Q0, R0 = torch.linalg.qr(torch.tensor(arr))
    wq, wr = rng.standard_normal(tuple(Q0.shape)), rng.standard_normal(tuple(R0.shape))

    def loss(lib, A):
        Q, R = lib.linalg.qr(A)
        return (Q * lib.tensor(wq)).sum() + (R * lib.tensor(wr)).sum()
    _check(arr, lambda A: loss(fb, A), lambda A: loss(torch, A))
    _check(arr, lambda A: fb.linalg.qr(A).R.sum(), lambda A: torch.linalg.qr(A).R.sum())


def test_qr_mode_r_has_no_gradient():
    A = fb.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        fb.linalg.qr(A, mode="r").R.sum().backward()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4)])
def test_pinv(shape):
    rng = np.random.default_rng(7)
    arr = rng.standard_normal(shape)
    w = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2]))
    _check(arr, lambda A: (fb.linalg.pinv(A) * fb.tensor(w)).sum(), lambda A: (torch.linalg.pinv(A) * torch.tensor(w)).sum(),
           rtol=1e-7)
    np.testing.assert_allclose(fb.linalg.pinv(fb.tensor(arr)).numpy(), torch.linalg.pinv(torch.tensor(arr)).numpy(),
                               rtol=1e-10, atol=1e-12)


def test_float32_gradients():
    arr = np.random.default_rng(8).standard_normal((4, 3)).astype(np.float32)
    a = fb.tensor(arr, requires_grad=True)
    fb.linalg.svdvals(a).sum().backward()
    assert a.grad.dtype == fb.float32
    t = torch.tensor(arr, requires_grad=True)
    torch.linalg.svdvals(t).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
