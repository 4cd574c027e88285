"""``linear`` (one packed GEMM at inference, matmul + add under autograd) and ``bilinear``."""
from typing import Any, Optional

import numpy as np

from ... import _C
from ... import _autocast_policy as _amp
from ..._ops import kernel_select as _select, linalg as L, shape as S
from ..._tensor import Tensor
from ...autograd.graph import Function


@_amp.lower_precision
def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """Affine map ``y = input @ weight.T + bias`` over the last dim, as ``torch.nn.functional.linear``.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: optional ``(out_features,)``.

    Returns:
        ``(*, out_features)``.

    Raises:
        RuntimeError: ``input``'s last dim differs from ``in_features``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.linear(flow.ones(2, 3), flow.ones(4, 3), flow.zeros(4))
        tensor([[3., 3., 3., 3.],
                [3., 3., 3., 3.]])
    """
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear(): mat1 and mat2 shapes cannot be multiplied (input {list(input.shape)}, "
                           f"weight {list(weight.shape)}: in_features {weight.shape[-1]} != {input.shape[-1]})")
    if _linear_fast_ok(input, weight, bias):
        from ... import _kernels
        y = _kernels.linear_packed(input._data, weight, None if bias is None else bias._data)
        return Tensor._wrap(y, input._dtype)
    return Linear.apply(input, weight, bias)


def _linear_ops(x, w, b):
    out = L.matmul(x, S.t(w))
    return out + b if b is not None else out


class Linear(Function):
    """y = x @ w.T + b. On the CPU it is matmul and add (what capture fuses); a device runs one GEMM with the bias
    in its epilogue (and autocast lowers it as one op)."""

    decomposition: Any = staticmethod(_linear_ops)

    @staticmethod
    def forward_cuda(ctx, x, w, b):
        xp = ctx.xp
        x2 = xp.reshape(x, [-1, x.shape[-1]])
        ctx.save_for_backward(x2, w)
        ctx.args = (x.shape, b is not None)
        return xp.reshape(xp.gemm(x2, w, b, False, True), list(x.shape[:-1]) + [w.shape[0]])

    @staticmethod
    def backward(ctx, g):
        x2, w = ctx.saved
        shape, has_b = ctx.args
        need = ctx.needs_input_grad
        xp = ctx.xp
        g2 = xp.reshape(g, [-1, w.shape[0]])
        gx = xp.reshape(xp.gemm(g2, w), shape) if need[0] else None
        gw = xp.gemm(g2, x2, None, True, False) if need[1] else None
        gb = xp.sum(g2, axis=0) if has_b and need[2] else None
        return gx, gw, gb


def _linear_fast_ok(x, w, b, conv=False):
    """Inference path of linear / 1x1 conv (no autograd recorded): the weight packed once, bias fused."""
    from ...autograd.grad_mode import is_grad_enabled
    if not _select.packed_allowed():
        return False
    if is_grad_enabled() and (x.requires_grad or w.requires_grad or (b is not None and b.requires_grad)):
        return False
    if not hasattr(_C, "gemm_packed_a") or x.ndim < 1 or w.ndim != (4 if conv else 2):
        return False
    dt = x._data.dtype
    return (dt in (np.float32, np.float64) and w._data.dtype == dt and (b is None or (b._data.dtype == dt and b.ndim == 1))
            and x._device == w._device)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """Bilinear map ``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``, as
    ``torch.nn.functional.bilinear``.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)``.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: optional ``(out_features,)``.

    Returns:
        ``(*, out_features)``.
    """
    out = L.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out
