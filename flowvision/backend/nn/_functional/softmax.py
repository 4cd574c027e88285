"""``softmax``, ``log_softmax``, ``softmin`` and ``gumbel_softmax``."""
import numpy as np

from ... import _C
from ..._ops import reduce as R, shape as S
from ..._ops._util import wrap_dim
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


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "softmax")
    if input.ndim == 0:
        return _Softmax.apply(S.reshape(input, (1,)), 0, False).reshape(())
    return _Softmax.apply(input, _softmax_dim(input, dim), False)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "log_softmax")
    if input.ndim == 0:
        return _Softmax.apply(S.reshape(input, (1,)), 0, True).reshape(())
    return _Softmax.apply(input, _softmax_dim(input, dim), True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return F.softmax(-input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    gumbels = _const(-np.log(_rng().exponential(size=tuple(logits.shape))).astype(logits._compute().dtype),
                     logits._dtype)
    y = F.softmax((logits + gumbels) / tau, dim)
    if hard:
        idx = R.argmax(y, dim, keepdim=True)
        hard_y = S.scatter(y.detach() * 0, dim, idx, 1.0)
        return hard_y - y.detach() + y
    return y
