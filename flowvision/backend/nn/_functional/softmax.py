"""``softmax``, ``log_softmax``, ``softmin`` and ``gumbel_softmax``."""
from typing import Optional

import numpy as np

from ... import _C, _dtype as D
from ..._ops import reduce as R, shape as S
from ..._ops._util import wrap_dim
from ..._tensor import Tensor
from ...autograd.graph import Function
from ...random import _rng
from .common import _check_float, _const, _kin
from .. import functional as F


class _Softmax(Function):
    capture_role = "softmax"

    @staticmethod
    def forward(ctx, x, dim, log):
        moved = np.moveaxis(x, dim, -1)
        shp = moved.shape
        x2 = _kin(moved).reshape(-1, shp[-1]) if moved.size else _kin(moved).reshape(0, max(shp[-1], 1))
        y2 = _C.softmax_forward(x2, log) if x2.size else x2.copy()
        y = np.moveaxis(y2.reshape(shp), -1, dim)
        ctx.save_for_backward(y2)
        ctx.args = (dim, log, shp)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, dim, log):
        xp = ctx.xp
        moved = xp.moveaxis(x, dim, -1)
        shp = moved.shape
        y2 = xp.softmax_forward(xp.reshape(moved, [-1, shp[-1]]), log)
        ctx.save_for_backward(y2)
        ctx.args = (dim, log, shp)
        return xp.moveaxis(xp.reshape(y2, shp), -1, dim)

    @staticmethod
    def backward(ctx, g):
        (y2,) = ctx.saved
        dim, log, shp = ctx.args
        xp = ctx.xp
        g2 = _kin(xp.moveaxis(g, dim, -1)).astype(y2.dtype, copy=False).reshape(y2.shape)
        gx = xp.softmax_backward(g2, y2, log) if y2.size else g2
        return xp.moveaxis(gx.reshape(shp), -1, dim), None, None


def _softmax_dim(input, dim):
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return wrap_dim(dim, input.ndim) if input.ndim else 0


def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[D.dtype] = None) -> Tensor:
    """Softmax along ``dim``, as ``torch.nn.functional.softmax``: ``exp(x_i) / sum_j exp(x_j)`` (the values along
    ``dim`` sum to 1).

    Args:
        input: a floating-point tensor of any shape.
        dim: the dim to normalise over; ``None`` picks torch's legacy default (0 for 0-, 1- and 3-D input, else 1).
        _stacklevel: accepted for torch compatibility (unused).
        dtype: cast the input to this dtype first.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the (cast) input is not a floating-point tensor.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.softmax(flow.tensor([[0.0, 0.0], [0.0, 2.0]]), dim=1)
        tensor([[0.5000, 0.5000],
                [0.1192, 0.8808]])
    """
    return _softmax(input, dim, dtype, False)


def _softmax(input, dim, dtype, log):
    """softmax / log_softmax (``log``) after the optional cast; a 0-d input as one element."""
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "log_softmax" if log else "softmax")
    if input.ndim == 0:
        return _Softmax.apply(S.reshape(input, (1,)), 0, log).reshape(())
    return _Softmax.apply(input, _softmax_dim(input, dim), log)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
                dtype: Optional[D.dtype] = None) -> Tensor:
    """Logarithm of the softmax along ``dim``, as ``torch.nn.functional.log_softmax``: ``x_i - log(sum_j exp(x_j))``,
    computed stably; arguments, result and errors as :func:`softmax`."""
    return _softmax(input, dim, dtype, True)


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[D.dtype] = None) -> Tensor:
    """Softmin along ``dim``, as ``torch.nn.functional.softmin``: ``softmax(-x)``.

    Args:
        input: a floating-point tensor of any shape.
        dim: the dim to normalise over; ``None`` picks torch's legacy default (0 for 0-, 1- and 3-D input, else 1).
        _stacklevel: accepted for torch compatibility (unused).
        dtype: cast the input to this dtype first.

    Returns:
        A tensor shaped like ``input``.
    """
    return F.softmax(-input, dim, dtype=dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Sample from the Gumbel-softmax (concrete) distribution, as ``torch.nn.functional.gumbel_softmax``:
    ``softmax((logits + g) / tau)`` with i.i.d. Gumbel(0, 1) noise ``g``.

    Args:
        logits: unnormalised log-probabilities, ``(*, num_classes)``.
        tau: temperature (> 0).
        hard: return one-hot samples (the argmax) whose gradient is that of the soft sample (straight-through).
        eps: accepted for torch compatibility (unused).
        dim: the class dim.

    Returns:
        A tensor shaped like ``logits``: probabilities summing to 1 along ``dim`` (one-hot with ``hard``).
    """
    gumbels = _const(-np.log(_rng().exponential(size=tuple(logits.shape))).astype(logits._compute().dtype),
                     logits._dtype)
    y = F.softmax((logits + gumbels) / tau, dim)
    if hard:
        idx = R.argmax(y, dim, keepdim=True)
        hard_y = S.scatter(y.detach() * 0, dim, idx, 1.0)
        return hard_y - y.detach() + y
    return y
