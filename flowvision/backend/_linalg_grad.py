"""Differentiable ``linalg.svd``/``svdvals``/``eigh``/``eigvalsh``/``eig``/``qr``/``pinv`` for real matrices.

Forwards are LAPACK (numpy); backwards are the closed forms torch uses (``svd_backward``, both branches of
``linalg_eig_backward``, ``linalg_qr_backward``, ``pinv_backward``), computed in numpy on the saved factors.
``eig``'s outputs are complex: their gradients follow torch's convention (dL/d(re) + i dL/d(im)) and, as in torch,
a loss that depends on the arbitrary phase of the eigenvectors is rejected.  An
output whose gradient is all zero is treated as unused, as torch treats an undefined gradient: the terms that divide
by eigenvalue / singular-value gaps are then skipped, so degenerate spectra stay finite when only the values are used.
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .autograd import Function


def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _used(g: Tensor | None) -> np.ndarray | None:
    if g is None:
        return None
    a = g._compute()
    return a if a.size and np.any(a) else None


def _out(a: np.ndarray, like: Tensor) -> Tensor:
    return Tensor._wrap(np.ascontiguousarray(a.astype(like._data.dtype, copy=False)), like._dtype)


def _gap(vals: np.ndarray) -> np.ndarray:
    """E[..., j, k] = vals[k] - vals[j] with ones on the diagonal (the divisor of the off-diagonal terms)."""
    e = vals[..., None, :] - vals[..., :, None]
    idx = np.arange(vals.shape[-1])
    e[..., idx, idx] = 1.0
    return e


def _lapack(fn, name):
    from .linalg import _lapack as lp
    return lp(fn, name)


def svd_backward(gU, gS, gVh, U, S, Vh):
    """dL/dA for A = U diag(S) Vh (reduced factors), torch's formula; any of gU/gS/gVh may be None."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return np.zeros(U.shape[:-1] + (n,), U.dtype)
        return U @ (gS[..., :, None] * Vh)
    V = _mT(Vh)
    gV = None if gVh is None else _mT(gVh)
    E = _gap(S * S)
    Sr, Sc = S[..., None, :], S[..., :, None]
    if gU is not None:
        UhgU = _mT(U) @ gU
        UhgU = UhgU - _mT(UhgU)
    if gV is not None:
        VhgV = _mT(V) @ gV
        VhgV = VhgV - _mT(VhgV)
    if gU is not None and gV is not None:
        ret = (UhgU * Sr + Sc * VhgV) / E
    elif gU is not None:
        ret = (UhgU / E) * Sr
    else:
        ret = Sc * (VhgV / E)
    if gS is not None:
        ret = ret + gS[..., :, None] * np.eye(S.shape[-1], dtype=S.dtype)
    if m > n and gU is not None:
        gA = U @ ret
        gUSinv = gU / Sr
        gA = (gA + gUSinv - U @ (_mT(U) @ gUSinv)) @ Vh
    elif m < n and gV is not None:
        gA = ret @ Vh
        SinvgVh = _mT(gV) / Sc
        gA = U @ (gA + SinvgVh - (SinvgVh @ V) @ Vh)
    else:
        gA = U @ (ret @ Vh)
    return gA


class Svd(Function):
    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = _lapack(lambda: np.linalg.svd(A._data, full_matrices=full_matrices), "svd")
        k = S.shape[-1]
        ctx.save_for_backward(_out(U[..., :k], A), _out(S, A), _out(Vh[..., :k, :], A))
        ctx.k = k
        return _out(U, A), _out(S, A), _out(Vh, A)

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = (t._data for t in ctx.saved_tensors)
        k = ctx.k
        gU, gS, gVh = _used(gU), _used(gS), _used(gVh)
        gU = None if gU is None else gU[..., :k]  # full_matrices: the extra columns do not enter the gradient
        gVh = None if gVh is None else gVh[..., :k, :]
        return _out(svd_backward(gU, gS, gVh, U, S, Vh), ctx.saved_tensors[0]), None


class Svdvals(Function):
    @staticmethod
    def forward(ctx, A):
        U, S, Vh = _lapack(lambda: np.linalg.svd(A._data, full_matrices=False), "svdvals")
        ctx.save_for_backward(_out(U, A), _out(Vh, A))
        return _out(S, A)

    @staticmethod
    def backward(ctx, gS):
        U, Vh = ctx.saved_tensors
        return _out(svd_backward(None, gS._compute(), None, U._data, None, Vh._data), U)


def eigh_backward(gL, gV, L, V):
    """torch's Hermitian eigendecomposition backward: V (skew(V^T gV)/2 / E + diag(gL)) V^T."""
    if gV is None:
        if gL is None:
            return np.zeros(V.shape, V.dtype)
        return (V * gL[..., None, :]) @ _mT(V)
    VhgV = _mT(V) @ gV
    ret = 0.5 * (VhgV - _mT(VhgV)) / _gap(L)
    if gL is not None:
        idx = np.arange(L.shape[-1])
        ret[..., idx, idx] = gL
    return V @ (ret @ _mT(V))


class Eigh(Function):
    @staticmethod
    def forward(ctx, A, UPLO):
        w, V = _lapack(lambda: np.linalg.eigh(A._data, UPLO=UPLO), "eigh")
        ctx.save_for_backward(_out(w, A), _out(V, A))
        return ctx.saved_tensors[0], ctx.saved_tensors[1]

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        return _out(eigh_backward(_used(gL), _used(gV), L._data, V._data), V), None


class Eigvalsh(Function):
    @staticmethod
    def forward(ctx, A, UPLO):
        w, V = _lapack(lambda: np.linalg.eigh(A._data, UPLO=UPLO), "eigvalsh")
        ctx.save_for_backward(_out(V, A))
        return _out(w, A)

    @staticmethod
    def backward(ctx, gL):
        (V,) = ctx.saved_tensors
        return _out(eigh_backward(gL._compute(), None, None, V._data), V), None


def eig_backward(gL, gV, L, V):
    """torch's general (non-Hermitian) ``linalg_eig_backward``: with E*[j, k] = conj(L[k] - L[j]),
    dA = V^-H (diag(gL) + offdiag(V^H gV - V^H V diag(re(diag(V^H gV)))) / E*) V^H (complex)."""
    Vh = np.conj(_mT(V))
    if gV is None:
        g = np.zeros(L.shape, L.dtype) if gL is None else gL
        return np.linalg.solve(Vh, g[..., :, None] * Vh)
    VhgV = Vh @ gV
    diag = np.diagonal(VhgV, axis1=-2, axis2=-1)
    if not np.allclose(diag.imag, 0.0, rtol=1e-2, atol=1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    ret = (VhgV - Vh @ (V * diag.real[..., None, :])) / _gap(np.conj(L))
    if gL is not None:
        idx = np.arange(L.shape[-1])
        ret[..., idx, idx] = gL
    return np.linalg.solve(Vh, ret @ Vh)


class Eig(Function):
    @staticmethod
    def forward(ctx, A, complex_dtype):
        w, V = _lapack(lambda: np.linalg.eig(A._data), "eig")
        L, V = (Tensor._wrap(np.ascontiguousarray(a, dtype=complex_dtype.np), complex_dtype) for a in (w, V))
        ctx.save_for_backward(L, V)
        ctx.real_input = not A._dtype.is_complex
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        gA = eig_backward(_used(gL), _used(gV), L._data, V._data)
        if ctx.real_input:  # a real input's gradient is the real part (torch's handle_r_to_c)
            return Tensor._wrap(np.ascontiguousarray(gA.real.astype(L._data.real.dtype)),
                                L._dtype.to_real()), None
        return _out(gA, L), None


def _copyltu(M: np.ndarray) -> np.ndarray:
    """The lower triangle of M mirrored to the upper one."""
    return np.tril(M) + _mT(np.tril(M, -1))


def _solve_right_upper(B: np.ndarray, R: np.ndarray) -> np.ndarray:
    """B R^{-T} for square upper-triangular R (as the solve X R^T = B)."""
    return _mT(np.linalg.solve(R, _mT(B)))


def _qr_tall(gQ, gR, Q, R):
    # m >= n (reduced): gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q
    M = R @ _mT(gR) - _mT(gQ) @ Q
    return _solve_right_upper(gQ + Q @ _copyltu(M), R)


def qr_backward(gQ, gR, Q, R):
    """dL/dA for A = Q R; for m < n, A = [X | Y] with X = Q R_X square and Y = Q R_Y."""
    m, n = Q.shape[-2], R.shape[-1]
    gQ = np.zeros_like(Q) if gQ is None else gQ
    gR = np.zeros_like(R) if gR is None else gR
    if m >= n:
        return _qr_tall(gQ, gR, Q, R)
    RX, RY = R[..., :, :m], R[..., :, m:]
    gRX, gRY = gR[..., :, :m], gR[..., :, m:]
    Y = Q @ RY
    gX = _qr_tall(gQ + Y @ _mT(gRY), gRX, Q, RX)
    return np.concatenate([gX, Q @ gRY], axis=-1)


class Qr(Function):
    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _lapack(lambda: np.linalg.qr(A._data, mode="complete" if mode == "complete" else "reduced"), "qr")
        m, n = A.shape[-2:]
        ctx.mode = mode
        ctx.save_for_backward(_out(Q, A), _out(R, A))
        if mode == "r":
            Q = np.zeros((0,), A._data.dtype)
        return _out(Q, A), _out(R, A)

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "r" or (ctx.mode == "complete" and m > n):
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'; "
                               "and mode='complete' is differentiable only when m <= n. Use mode='reduced'.")
        return _out(qr_backward(_used(gQ), _used(gR), Q._data, R._data), Q), None


def pinv_backward(g: np.ndarray, P: np.ndarray, A: np.ndarray) -> np.ndarray:
    """torch's pinv_backward (real case), smallest intermediate shapes first."""
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = _mT(P), _mT(g)
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        return -_mT(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -_mT(K @ P) + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


class Pinv(Function):
    @staticmethod
    def forward(ctx, A, rcond, hermitian):
        P = _out(_lapack(lambda: np.linalg.pinv(A._data, rcond=rcond, hermitian=hermitian), "pinv"), A)
        ctx.save_for_backward(P, A)
        return P

    @staticmethod
    def backward(ctx, g):
        P, A = ctx.saved_tensors
        return _out(pinv_backward(g._compute(), P._data, A._data), A), None, None
