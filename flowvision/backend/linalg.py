"""``torch.linalg``: norms, inverse, determinants, solves and decompositions.

Norms, ``cross``, ``matrix_power``, ``multi_dot`` and ``vecdot`` are composed from differentiable ops.  ``inv``,
``det``, ``slogdet``, ``solve`` and ``cholesky`` are LAPACK (numpy) forwards with their closed-form gradients.
``svd``/``svdvals``/``eigh``/``eigvalsh``/``eig``/``eigvals``/``qr``/``pinv`` have torch's gradients
(``_linalg_grad``); ``lstsq``/``matrix_rank`` compute forward values only (backpropagating through them raises
``NotImplementedError``); ``eig`` returns complex tensors.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._tensor import Tensor
from .autograd import Function
from ._ops.linalg import matmul  # noqa: F401
from ._ops.shape import diagonal as _diagonal, stack as _stack
from . import _autocast_policy as _amp
from . import _linalg_grad as _LG

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "det", "slogdet", "solve", "cholesky", "qr",
           "svd", "svdvals", "eigh", "eigvalsh", "pinv", "matrix_rank", "lstsq", "cross", "matrix_power",
           "multi_dot", "vecdot", "matmul", "diagonal", "eig", "eigvals", "LinAlgError"]


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a singular or non-positive-definite input."""


def _check_square(A: Tensor, name: str) -> None:
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else '?'} by {A.shape[-1] if A.ndim else '?'} matrices")
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.{name}: Expected a floating point tensor as input. Got {A.dtype}")


def _wrap(arr, like: Tensor) -> Tensor:
    return Tensor._wrap(np.ascontiguousarray(arr, dtype=like._data.dtype), like._dtype)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _lapack(fn, name):
    try:
        return fn()
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"linalg.{name}: {e}") from None


# ---------------------------------------------------------------------------------------------- norms
def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements when None); ord = inf / -inf / 0 as in torch."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    if dim is None:
        x, dim = x.reshape(-1), 0
        if keepdim:
            raise RuntimeError("linalg.vector_norm with keepdim=True needs an explicit dim here")
    a = x.abs()
    if ord == float("inf"):
        return a.amax(dim, keepdim)
    if ord == float("-inf"):
        return a.amin(dim, keepdim)
    if ord == 0:
        return (a != 0).to(x.dtype).sum(dim, keepdim)
    return a.norm(p=float(ord), dim=dim, keepdim=keepdim)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """Frobenius, nuclear, 1/-1 (column sums), inf/-inf (row sums) and 2/-2 (singular values) norms."""
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (d % A.ndim for d in dim)
    if ord == "fro":
        out = A.pow(2).sum((d0, d1), keepdim=True).sqrt()
    elif ord == "nuc" or ord in (2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        red = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        out = red.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    elif ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=True)
        out = sums.amax(red_dim, keepdim=True) if ord in (1, float("inf")) else sums.amin(red_dim, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``vector_norm`` for 1-D reductions, ``matrix_norm`` for 2-D ones (torch.linalg.norm's dispatch)."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2 or (dim is None and ord is not None and
                                                                           A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if dim is None and ord is not None and A.ndim != 1:
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return _diagonal(A, offset, dim1, dim2)


@_amp.lower_precision
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """3-vector cross product along ``dim`` (broadcasting like torch)."""
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return _stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
                  dim if dim >= 0 else dim + max(input.ndim, other.ndim))


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A @ A @ ... (n times) by repeated squaring; n < 0 uses ``inv(A)``; n = 0 the identity."""
    _check_square(A, "matrix_power")
    if n == 0:
        from ._creation import eye
        return eye(A.shape[-1], dtype=A.dtype).expand(*A.shape).clone()
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def multi_dot(tensors) -> Tensor:
    """Chained matrix product (1-D first/last operands are treated as row/column vectors)."""
    if len(tensors) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got " + str(len(tensors)))
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


# ----------------------------------------------------------------------------- LAPACK with gradients
class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        out = _wrap(_lapack(lambda: np.linalg.inv(A._data), "inv"), A)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (Ainv,) = ctx.saved_tensors
        return -(Ainv.mT @ g @ Ainv.mT)


@_amp.fp32
def inv(A: Tensor) -> Tensor:
    """Matrix inverse; raises ``LinAlgError`` for a singular matrix."""
    _check_square(A, "inv")
    return _Inv.apply(A)


@_amp.fp32
def inv_ex(A: Tensor, *, check_errors: bool = False):
    """(inverse, info) with info 0 (a singular matrix raises ``LinAlgError`` instead of reporting info > 0)."""
    from ._creation import zeros
    from ._dtype import int32
    return namedtuple("inv_ex", "inverse info")(inv(A), zeros(*A.shape[:-2], dtype=int32))


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        d = np.linalg.det(A._data)
        ctx.det = d
        return _wrap(np.asarray(d), A)

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        # d det / dA = det * A^{-T}; the adjugate keeps it finite for singular A
        a = A._data.astype(np.float64)
        u, s, vt = np.linalg.svd(a)
        # adj(A)^T = det(U) det(V) * U diag(prod_{j != i} s_j) V^T
        n = s.shape[-1]
        prods = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], -1)
        sign = np.linalg.det(u) * np.linalg.det(vt)
        cof = sign[..., None, None] * (u * prods[..., None, :]) @ vt
        return g.unsqueeze(-1).unsqueeze(-1) * _wrap(cof, A)


def det(A: Tensor) -> Tensor:
    _check_square(A, "det")
    return _Det.apply(A)


class _SlogdetLogabs(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        _, logabs = np.linalg.slogdet(A._data)
        return _wrap(np.asarray(logabs), A)

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * _wrap(_mT(_lapack(lambda: np.linalg.inv(A._data), "slogdet")), A)


def slogdet(A: Tensor):
    """(sign, log|det|); the gradient flows through log|det|."""
    _check_square(A, "slogdet")
    sign, _ = np.linalg.slogdet(A._data)
    return namedtuple("slogdet", "sign logabsdet")(_wrap(np.asarray(sign), A), _SlogdetLogabs.apply(A))


class _Solve(Function):
    @staticmethod
    def forward(ctx, A, B, vec):
        b = B._data[..., None] if vec else B._data
        X = _lapack(lambda: np.linalg.solve(A._data, b), "solve")
        X = X[..., 0] if vec else X
        out = _wrap(X, B)
        ctx.save_for_backward(A, out)
        ctx.vec = vec
        return out

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        gB = solve(A.mT, g)
        if ctx.vec:
            gA = -(gB.unsqueeze(-1) @ X.unsqueeze(-2))
        else:
            gA = -(gB @ X.mT)
        return gA, gB, None


@_amp.fp32
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A @ X = B (``left=False``: X @ A = B)."""
    _check_square(A, "solve")
    if not left:
        return solve(A.mT, B.mT).mT
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return _Solve.apply(A, B, vec)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, A, upper):
        L = _lapack(lambda: np.linalg.cholesky(A._data), "cholesky")
        out = _wrap(L, A)
        ctx.save_for_backward(out)
        ctx.upper = upper
        return _wrap(_mT(L), A) if upper else out

    @staticmethod
    def backward(ctx, g):
        (L,) = ctx.saved_tensors
        gL = g.mT if ctx.upper else g
        # Phi(L^T gL): lower triangle with the diagonal halved; gA = sym(L^{-T} Phi L^{-1})
        P = (L.mT @ gL).tril()
        P = P - 0.5 * P * _eye_like(P)
        Linv = inv(L)
        S = Linv.mT @ P @ Linv
        return 0.5 * (S + S.mT), None


def _eye_like(P):
    from ._creation import eye
    return eye(P.shape[-1], dtype=P.dtype)


@_amp.fp32
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Cholesky factor of a symmetric positive-definite matrix; ``LinAlgError`` otherwise."""
    _check_square(A, "cholesky")
    return _Cholesky.apply(A, upper)


# --------------------------------------------------------------------------------- forward-only values
class _NoGrad(Function):
    @staticmethod
    def forward(ctx, A, name, values):
        ctx.name = name
        return values

    @staticmethod
    def backward(ctx, *g):
        raise NotImplementedError(f"the gradient of linalg.{ctx.name} is not implemented in this engine")


def _forward_only(A: Tensor, name: str, *arrays):
    outs = tuple(_wrap(a, A) for a in arrays)
    if A.requires_grad:
        res = _NoGrad.apply(A, name, outs[0] if len(outs) == 1 else outs)
        return res
    return outs[0] if len(outs) == 1 else outs


@_amp.fp32
def svd(A: Tensor, full_matrices: bool = True):
    """A = U diag(S) Vh; differentiable (torch's formula; with full_matrices the extra columns carry no gradient)."""
    return namedtuple("svd", "U S Vh")(*_LG.Svd.apply(A, full_matrices))


@_amp.fp32
def svdvals(A: Tensor) -> Tensor:
    """Singular values, descending; differentiable."""
    return _LG.Svdvals.apply(A)


@_amp.fp32
def eigh(A: Tensor, UPLO: str = "L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix; differentiable."""
    return namedtuple("eigh", "eigenvalues eigenvectors")(*_LG.Eigh.apply(A, UPLO))


@_amp.fp32
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """Eigenvalues of a symmetric matrix; differentiable."""
    return _LG.Eigvalsh.apply(A, UPLO)


@_amp.fp32
def qr(A: Tensor, mode: str = "reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return namedtuple("qr", "Q R")(*_LG.Qr.apply(A, mode))


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    rcond = 1e-15 if rtol is None else rtol
    if rtol is None and atol is None:
        rcond = max(A.shape[-2:]) * np.finfo(A._data.dtype).eps
    return _LG.Pinv.apply(A, rcond, hermitian)


@_amp.fp32
def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    s = np.linalg.svd(A._data, compute_uv=False)
    smax = s.max(-1, keepdims=True) if s.size else s
    if atol is None and rtol is None:
        rtol = max(A.shape[-2:]) * np.finfo(A._data.dtype).eps
    tol = np.maximum(atol or 0.0, (rtol or 0.0) * smax)
    from ._creation import tensor
    return tensor((s > tol).sum(-1).astype(np.int64))


@_amp.fp32
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """Least-squares solution of A @ X = B (2-D A); forward only."""
    if A.ndim != 2:
        raise NotImplementedError("linalg.lstsq here supports a single (2-D) matrix A")
    X, res, rank, sv = np.linalg.lstsq(A._data, B._data, rcond=rcond)
    from ._creation import tensor
    return namedtuple("lstsq", "solution residuals rank singular_values")(
        _forward_only(A, "lstsq", X), tensor(res.astype(A._data.dtype)), tensor(np.int64(rank)),
        tensor(sv.astype(A._data.dtype)))


@_amp.fp32
def eig(A: Tensor):
    """Eigenvalues and eigenvectors of a general square matrix (complex results, LAPACK geev as torch uses);
    differentiable as in torch (a loss must not depend on the eigenvectors' phases)."""
    _check_square(A, "eig")
    return namedtuple("eig", "eigenvalues eigenvectors")(*_LG.Eig.apply(A, A._dtype.to_complex()))


@_amp.fp32
def eigvals(A: Tensor) -> Tensor:
    """Eigenvalues of a general square matrix (complex); differentiable."""
    return eig(A).eigenvalues
