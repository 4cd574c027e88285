"""Batch, layer, group, instance, RMS and local-response normalisation, and ``normalize``."""
import numbers
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from ... import _C
from ..._ops import elementwise as E, reduce as R, shape as S
from ..._tensor import Tensor
from ..._xp import namespace
from ...autograd.graph import Function
from ...autograd.grad_mode import no_grad
from .common import _array, _check_float, _ema_, _kin, _opt
from .. import functional as F


class BatchNormTrain(Function):
    """The autograd op of :func:`batch_norm` in training mode: normalises with the batch statistics and returns
    ``(output, mean, invstd)``.
    """

    @staticmethod
    def forward(ctx, x, w, b, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y, mean, invstd = _C.batch_norm_train_forward(x3, _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False), mean, invstd

    @staticmethod
    def forward_cuda(ctx, x, w, b, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, invstd = ctx.xp.batch_norm_train_forward(x3, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape), mean, invstd

    @staticmethod
    def backward(ctx, g, _gm, _gi):
        x3, w = ctx.saved
        shape, mean, invstd, has_b = ctx.args
        gx, gw, gb = ctx.xp.batch_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3,
                                            _opt(w, x3), mean, invstd, True)
        return gx.reshape(shape), gw if w is not None else None, gb if has_b else None


class BatchNormEval(Function):
    """The autograd op of :func:`batch_norm` in eval mode: normalises with the running statistics."""

    capture_role = "batch_norm_eval"

    @staticmethod
    def forward(ctx, x, rm, rv, w, b, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y = _C.batch_norm_infer_forward(x3, _opt(rm, x3), _opt(rv, x3), _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, _opt(rm, x3), (1.0 / np.sqrt(_opt(rv, x3) + eps)).astype(x3.dtype), b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, rm, rv, w, b, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, invstd = ctx.xp.batch_norm_infer(x3, rm, rv, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, invstd, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x3, w = ctx.saved
        shape, mean, invstd, has_b = ctx.args
        gx, gw, gb = ctx.xp.batch_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3,
                                            _opt(w, x3), mean, invstd, False)
        return gx.reshape(shape), None, None, gw if w is not None else None, gb if has_b else None


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation over dim 1, as ``torch.nn.functional.batch_norm``:
    ``y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]``.

    While ``training``, mean and (biased) variance are the batch statistics over every dim but 1, and the running
    statistics, when given, are updated in place: ``running = (1 - momentum) * running + momentum * batch`` (the
    unbiased variance for ``running_var``). Otherwise the running statistics normalise.

    Args:
        input: ``(N, C, *)``; a floating-point tensor.
        running_mean: ``(C,)`` or None (training only).
        running_var: ``(C,)`` or None (training only).
        weight: optional ``(C,)`` scale.
        bias: optional ``(C,)`` shift.
        training: normalise with the batch statistics (and update the running ones).
        momentum: weight of the batch statistics in the running update.
        eps: added to the variance for stability.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: fewer than 2 dims, or one value per channel while training.
        RuntimeError: a statistic/affine tensor is not ``(C,)``, or running statistics are missing in eval mode.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> x = flow.tensor([[1.0, 2.0], [3.0, 6.0]])
        >>> F.batch_norm(x, flow.zeros(2), flow.ones(2), training=True)
        tensor([[-1.0000, -1.0000],
                [ 1.0000,  1.0000]])
    """
    _check_float(input, "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"batch_norm(): expected at least 2D input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm(): {name} should contain {c} elements (input {list(input.shape)}), got "
                               f"shape {list(t.shape)}")
    if training:
        n = input.numel() // c
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
        y, mean, invstd = BatchNormTrain.apply(input, weight, bias, eps)
        if running_mean is not None and running_var is not None:
            xp = namespace(invstd._data)
            var = 1.0 / (_array(invstd).astype(xp.float64) ** 2) - eps
            _ema_(running_mean, _array(mean).astype(xp.float64), momentum)
            _ema_(running_var, var * n / (n - 1), momentum)
        return y
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm(): running_mean and running_var must be given when training=False")
    return BatchNormEval.apply(input, running_mean, running_var, weight, bias, eps)


class LayerNorm(Function):
    """The autograd op behind :func:`layer_norm` over the trailing ``normalized_shape`` dims."""

    capture_role = "layer_norm"

    @staticmethod
    def forward(ctx, x, w, b, nshape, eps):
        n = int(np.prod(nshape)) if nshape else 1
        x2 = _kin(x).reshape(-1, n)
        wk = None if w is None else _kin(w).reshape(-1).astype(x2.dtype, copy=False)
        bk = None if b is None else _kin(b).reshape(-1).astype(x2.dtype, copy=False)
        y, mean, rstd = _C.layer_norm_forward(x2, wk, bk, eps)
        ctx.save_for_backward(x2, wk)
        ctx.args = (x.shape, mean, rstd, nshape, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, nshape, eps):
        xp = ctx.xp
        n = int(np.prod(nshape)) if nshape else 1
        x2 = xp.reshape(x, [-1, n])
        wk = None if w is None else xp.reshape(w, [n])
        bk = None if b is None else xp.reshape(b, [n])
        y, mean, rstd = xp.layer_norm_forward(x2, wk, bk, eps)
        ctx.save_for_backward(x2, wk)
        ctx.args = (x.shape, mean, rstd, nshape, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x2, wk = ctx.saved
        shape, mean, rstd, nshape, has_b = ctx.args
        gx, gw, gb = ctx.xp.layer_norm_backward(_kin(g).astype(x2.dtype, copy=False).reshape(x2.shape), x2, wk, mean, rstd)
        return (gx.reshape(shape), None if wk is None else gw.reshape(nshape),
                gb.reshape(nshape) if has_b and gb is not None else None)


def _normalized_shape(normalized_shape: Any) -> Tuple[Any, ...]:
    """``normalized_shape`` (an int for the last dim, or a shape) as a tuple."""
    return (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)


def layer_norm(input: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Layer normalisation over the trailing ``normalized_shape`` dims, as ``torch.nn.functional.layer_norm``:
    ``y = (x - mean) / sqrt(var + eps) * weight + bias`` with the (biased) statistics of each trailing block.

    Args:
        input: ``(*, *normalized_shape)``; a floating-point tensor.
        normalized_shape: the trailing shape to normalise over (an int for the last dim).
        weight: optional elementwise scale of shape ``normalized_shape``.
        bias: optional elementwise shift of shape ``normalized_shape``.
        eps: added to the variance for stability.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        RuntimeError: the input's trailing shape, ``weight`` or ``bias`` do not match ``normalized_shape``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.layer_norm(flow.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    _check_float(input, "layer_norm")
    nshape = _normalized_shape(normalized_shape)
    if tuple(input.shape[input.ndim - len(nshape):]) != nshape or len(nshape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(nshape)}, expected input with shape [*, "
                           f"{', '.join(map(str, nshape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != nshape:
            raise RuntimeError(f"layer_norm(): {name} must have shape {list(nshape)}, got {list(t.shape)}")
    return LayerNorm.apply(input, weight, bias, nshape, eps)


class GroupNorm(Function):
    """The autograd op behind :func:`group_norm`."""

    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        x3 = _kin(x).reshape(x.shape[0], x.shape[1], -1)
        y, mean, rstd = _C.group_norm_forward(x3, groups, _opt(w, x3), _opt(b, x3), eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, rstd, groups, b is not None)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, groups, eps):
        x3 = ctx.xp.reshape(x, [x.shape[0], x.shape[1], -1])
        y, mean, rstd = ctx.xp.group_norm_forward(x3, groups, w, b, eps)
        ctx.save_for_backward(x3, w)
        ctx.args = (x.shape, mean, rstd, groups, b is not None)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x3, w = ctx.saved
        shape, mean, rstd, groups, has_b = ctx.args
        gx, gw, gb = ctx.xp.group_norm_backward(_kin(g).astype(x3.dtype, copy=False).reshape(x3.shape), x3, groups,
                                            _opt(w, x3), mean, rstd)
        return gx.reshape(shape), gw if w is not None else None, gb if has_b else None


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5) -> Tensor:
    """Group normalisation, as ``torch.nn.functional.group_norm``: the channels are split into ``num_groups`` groups,
    each ``(sample, group)`` is normalised by its own mean and (biased) variance, then scaled and shifted per channel.

    Args:
        input: ``(N, C, *)``; a floating-point tensor, ``C`` divisible by ``num_groups``.
        num_groups: number of channel groups.
        weight: optional ``(C,)`` scale.
        bias: optional ``(C,)`` shift.
        eps: added to the variance for stability.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        RuntimeError: fewer than 2 dims, or ``C`` not divisible by ``num_groups``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.group_norm(flow.randn(2, 4, 3, 3), 2).shape
        flowvision.Size([2, 4, 3, 3])
    """
    _check_float(input, "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"group_norm(): expected at least 2D input, got {list(input.shape)}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return GroupNorm.apply(input, weight, bias, int(num_groups), eps)


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance normalisation: each ``(sample, channel)`` is normalised over its spatial dims, as
    ``torch.nn.functional.instance_norm``.

    With ``use_input_stats`` (default) the per-instance statistics normalise and the running statistics, when given,
    are updated in place with their mean over the batch; otherwise the running statistics normalise (as
    :func:`batch_norm` in eval mode).

    Args:
        input: ``(N, C, *)``; a floating-point tensor.
        running_mean: optional ``(C,)``.
        running_var: optional ``(C,)``.
        weight: optional ``(C,)`` scale.
        bias: optional ``(C,)`` shift.
        use_input_stats: normalise with each instance's own statistics.
        momentum: weight of the new statistics in the running update.
        eps: added to the variance for stability.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
    """
    _check_float(input, "instance_norm")
    if not use_input_stats:
        return F.batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n, c = input.shape[:2]
    if running_mean is not None and running_var is not None:
        with no_grad():
            x = input._compute().reshape(n, c, -1).astype(np.float64)
            m = x.mean(-1).mean(0)
            cnt = x.shape[-1]
            v = (x.var(-1) * cnt / max(cnt - 1, 1)).mean(0)
            _ema_(running_mean, m, momentum)
            _ema_(running_var, v, momentum)
    return F.group_norm(input, c, weight, bias, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Local response normalisation across channels, as ``torch.nn.functional.local_response_norm``:
    ``y = x / (k + alpha / size * sum of x^2 over the size neighbouring channels) ** beta``.

    Args:
        input: ``(N, C, *)``, at least 3-D.
        size: number of neighbouring channels summed.
        alpha: multiplicative factor.
        beta: exponent.
        k: additive factor.

    Returns:
        A tensor shaped like ``input``.
    """
    from ..modules.extra import _local_response_norm
    return _local_response_norm(input, size, alpha, beta, k)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Optional[Tensor] = None) -> Tensor:
    """Divide by the ``p``-norm along ``dim``: ``x / max(||x||_p, eps)``, as ``torch.nn.functional.normalize``.

    Args:
        input: a tensor of any shape.
        p: exponent of the norm.
        dim: dim to normalise over.
        eps: lower bound of the norm (avoids division by zero).
        out: accepted for torch compatibility and ignored; the result is returned.

    Returns:
        A tensor shaped like ``input``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.normalize(flow.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    denom = E.clamp_min(R.norm(input, p, dim, keepdim=True), eps)
    return input / S.expand_as(denom, input)


def rms_norm(input: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, as ``torch.nn.functional.rms_norm``:
    ``y = x / sqrt(mean(x^2) + eps) * weight``.

    Args:
        input: ``(*, *normalized_shape)``.
        normalized_shape: the trailing shape to normalise over (an int for the last dim).
        weight: optional elementwise scale of shape ``normalized_shape``.
        eps: added to the mean square; ``None`` means the machine epsilon of the input's dtype.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        RuntimeError: the input's trailing shape does not match ``normalized_shape``.
    """
    nshape = _normalized_shape(normalized_shape)
    if tuple(input.shape[input.ndim - len(nshape):]) != nshape:
        raise RuntimeError(f"Given normalized_shape={list(nshape)}, expected input with shape [*, "
                           f"{', '.join(map(str, nshape))}], but got input of size{list(input.shape)}")
    dims = tuple(range(input.ndim - len(nshape), input.ndim))
    if eps is None:
        eps = float(np.finfo(input._compute().dtype).eps)
    out = input * E.rsqrt(R.mean(input * input, dims, keepdim=True) + eps)
    return out * weight if weight is not None else out
