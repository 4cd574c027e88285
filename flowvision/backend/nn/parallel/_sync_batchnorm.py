"""Batch normalisation with statistics over every rank's batch (what ``nn.SyncBatchNorm`` runs in training).

Forward all-reduces per-channel [sum, sum of squares, count] in float64 (one collective), so the mean and
variance equal BatchNorm's over the concatenated batch. Backward all-reduces [sum(dy), sum(dy * x_hat)] (one
collective); the weight and bias gradients stay local, as in torch, because DistributedDataParallel averages
them afterwards.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...distributed import collectives as C
from ...distributed._mpi import wait_all


def _allreduce_sum(pg, arr: np.ndarray, what: str) -> np.ndarray:
    MPI = C._MPI
    req = pg.comm.Iallreduce(MPI.IN_PLACE, [arr, MPI.DOUBLE], MPI.SUM)
    wait_all(MPI, [req], pg.timeout, what)
    return arr


class _SyncBatchNormFn(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, pg):
        x = input._compute()
        axes = (0,) + tuple(range(2, x.ndim))
        c = x.shape[1]
        stats = np.empty(2 * c + 1, np.float64)
        stats[:c] = x.sum(axis=axes, dtype=np.float64)
        stats[c:2 * c] = np.square(x, dtype=np.float64).sum(axis=axes)
        stats[2 * c] = x.size // c
        _allreduce_sum(pg, stats, "SyncBatchNorm statistics")
        n = stats[2 * c]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(x.shape)} "
                             "summed over all ranks")
        mean = stats[:c] / n
        var = np.maximum(stats[c:2 * c] / n - mean * mean, 0.0)
        if running_mean is not None:
            rm = running_mean._data
            rm[...] = (1 - momentum) * rm + momentum * mean
            running_mean._version[0] += 1
        if running_var is not None:
            rv = running_var._data
            rv[...] = (1 - momentum) * rv + momentum * var * (n / (n - 1))
            running_var._version[0] += 1
        shape = (1, c) + (1,) * (x.ndim - 2)
        invstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype)
        xhat = (x - mean.astype(x.dtype).reshape(shape)) * invstd.reshape(shape)
        y = xhat
        w = weight._compute() if weight is not None else None
        if w is not None:
            y = y * w.reshape(shape)
        if bias is not None:
            y = y + bias._compute().reshape(shape)
        ctx.xhat, ctx.invstd, ctx.w, ctx.n, ctx.pg, ctx.shape = xhat, invstd, w, n, pg, shape
        ctx.has_bias = bias is not None
        return Tensor._wrap(np.ascontiguousarray(y, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_out):
        gy = grad_out._compute()
        xhat, invstd, w, shape = ctx.xhat, ctx.invstd, ctx.w, ctx.shape
        axes = (0,) + tuple(range(2, gy.ndim))
        c = gy.shape[1]
        local = np.empty(2 * c, np.float64)
        local[:c] = gy.sum(axis=axes, dtype=np.float64)
        local[c:] = (gy * xhat).sum(axis=axes, dtype=np.float64)
        grad_w = local[c:].astype(gy.dtype) if w is not None else None
        grad_b = local[:c].astype(gy.dtype) if ctx.has_bias else None
        total = _allreduce_sum(ctx.pg, local.copy(), "SyncBatchNorm backward")
        mean_dy = (total[:c] / ctx.n).astype(gy.dtype).reshape(shape)
        mean_dy_xhat = (total[c:] / ctx.n).astype(gy.dtype).reshape(shape)
        scale = invstd.reshape(shape) if w is None else (w * invstd).reshape(shape)
        gx = (gy - mean_dy - xhat * mean_dy_xhat) * scale
        wrap = lambda a: None if a is None else Tensor._wrap(np.ascontiguousarray(a))  # noqa: E731
        return wrap(gx), wrap(grad_w), wrap(grad_b), None, None, None, None, None


def sync_batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                    running_mean: Optional[Tensor], running_var: Optional[Tensor], eps: float, momentum: float,
                    process_group: Optional[C.ProcessGroup] = None) -> Tensor:
    """Training-mode batch norm of ``input`` (N, C, ...) with statistics over all ranks of ``process_group``."""
    _, pg = C._comm_and_mpi(process_group)
    dtype = input.dtype
    if not input.is_floating_point():
        raise TypeError(f"SyncBatchNorm needs a floating point input, got {dtype}")
    x = input if dtype.name in ("float32", "float64") else input.float()
    out = _SyncBatchNormFn.apply(x, weight, bias, running_mean, running_var, float(eps), float(momentum), pg)
    return out if out.dtype is dtype else out.to(dtype)
