"""Loss functions with torch's arguments and reductions (including the legacy ``size_average``/``reduce``)."""
from typing import Optional

import numpy as np

from ... import _dtype as D
from ... import _autocast_policy as _amp
from ..._ops import elementwise as E, reduce as R, shape as S
from ..._tensor import Tensor
from ..._xp import namespace
from ...autograd.graph import Function
from .common import _array, _check_float, _const
from .. import functional as F


def _reduce(loss, reduction):
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_target_shape(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{name}: Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(input.shape)}) is not supported. Please ensure they have the same size.")


def _weighted(loss: Tensor, weight: Optional[Tensor], input: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
    """Elementwise ``weight * loss`` reduced as torch's weighted regression losses: ``'mean'`` is
    ``sum(weight * loss) / sum(weight)`` (mse, l1) or the plain mean (huber)."""
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return R.sum(loss) / R.sum(weight)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _reduce(loss, reduction)


class _NllPick(Function):
    """-input[n, index[n, ...], ...] * weight[n, ...]: the per-element negative log-likelihood of class indices."""

    @staticmethod
    def forward(ctx, x, index, weight):
        ctx.args = (x.shape, index, weight)
        return -np.squeeze(np.take_along_axis(x, np.expand_dims(index, 1), axis=1), 1) * weight

    @staticmethod
    def forward_cuda(ctx, x, index, weight):
        xp = ctx.xp
        ctx.args = (x.shape, index, weight)
        classes = xp.reshape(xp.arange(x.shape[1]), [x.shape[1] if i == 1 else 1 for i in range(x.ndim)])
        picked = xp.sum(xp.where(xp.equal(classes, xp.expand_dims(index, 1)), x, 0), axis=1)
        return -picked * weight

    @staticmethod
    def backward(ctx, g):
        shape, index, weight = ctx.args
        xp = ctx.xp
        return (xp.put_along_axis_zeros(shape, xp.expand_dims(index, 1), xp.expand_dims(-g * weight, 1), 1),)


@_amp.fp32
def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
             ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities, as ``torch.nn.functional.nll_loss``:
    ``loss[n] = -weight[t[n]] * input[n, t[n]]``.

    Args:
        input: log-probabilities ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.
        target: class indices ``(N)``, ``(N, d1, ...)`` or ``()``, each in ``[0, C)`` or ``ignore_index``.
        weight: optional ``(C,)`` per-class weight.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        ignore_index: targets equal to it contribute nothing (neither to the mean's denominator).
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` (divided by the summed weights of the non-ignored targets) or ``'sum'``.

    Returns:
        A scalar, or the per-sample loss shaped like ``target`` with ``reduction='none'``. A mean over no
        non-ignored target is NaN.

    Raises:
        ValueError: a 0-D input, a batch mismatch, or an unknown ``reduction``.
        RuntimeError: floating-point targets.
        IndexError: a target out of ``[0, C)``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.nll_loss(flow.tensor([[-0.5, -1.0], [-2.0, -0.1]]), flow.tensor([0, 1]))
        tensor(0.3000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError("nll_loss(): input must have at least one dimension")
    if target._dtype.is_floating_point:
        raise RuntimeError(f"nll_loss(): expected target of integer class indices, got {target._dtype}")
    unbatched = input.ndim == 1
    if unbatched:
        input, target = S.unsqueeze(input, 0), S.unsqueeze(target, 0)
    n, c = input.shape[0], input.shape[1]
    if target.shape[0] != n or tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({target.shape[0]}); input "
                         f"{list(input.shape)}, target {list(target.shape)}")
    t = target._data.astype(np.int64)
    xp = namespace(t)
    valid = t != ignore_index
    if (valid & ((t < 0) | (t >= c))).any():
        th = target.cpu()._data.astype(np.int64)
        bad = th[(th != ignore_index) & ((th < 0) | (th >= c))][0]
        raise IndexError(f"Target {bad} is out of bounds (number of classes {c}).")
    safe = xp.where(valid, t, 0)
    cdt = _array(input).dtype
    w = xp.ones(c, cdt) if weight is None else _array(weight)
    wt_np = (xp.take(w, safe) * valid).astype(cdt)
    loss = _NllPick.apply(input, index=safe, weight=wt_np)
    if reduction == "none":
        return S.squeeze(loss, 0) if unbatched else loss
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "mean":
        total = float(wt_np.sum())
        if total == 0:  # every target ignored: torch gives a NaN loss but zero (not NaN) gradients
            return R.sum(loss) * 0.0 + float("nan")
        return R.sum(loss) / total
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_amp.fp32
def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits and targets, as ``torch.nn.functional.cross_entropy``: :func:`nll_loss` of
    ``log_softmax(input)`` over the class dim for class-index targets, ``-sum(target * log_softmax(input))`` for
    class-probability targets.

    Args:
        input: unnormalised logits ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``; floating point.
        target: class indices (shaped like ``input`` without the class dim) or class probabilities (shaped like
            ``input``, floating point).
        weight: optional ``(C,)`` per-class weight.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        ignore_index: index targets equal to it contribute nothing.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        label_smoothing: in ``[0, 1]``: the target becomes ``(1 - s) * target + s / C``.

    Returns:
        A scalar, or the per-sample loss with ``reduction='none'``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: ``label_smoothing`` outside ``[0, 1]``, mismatched shapes, or an unknown ``reduction``.
        IndexError: a class index out of range.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.cross_entropy(flow.tensor([[0.0, 0.0]]), flow.tensor([1]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float(input, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    logp = F.log_softmax(input, class_dim)
    if target._dtype.is_floating_point:  # class probabilities
        _check_target_shape(input, target, "cross_entropy")
        tgt = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
        prod_ = logp * tgt
        if weight is not None:
            wshape = (c,) + (1,) * (input.ndim - class_dim - 1)
            prod_ = prod_ * S.reshape(weight, wshape)
        loss = -R.sum(prod_, class_dim)
        if reduction == "mean":
            return R.sum(loss) / (input.numel() // c) if input.ndim > 1 else loss
        return _reduce(loss, reduction)
    nll = F.nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore = E.eq(target, ignore_index)
    if weight is not None:
        wshape = (c,) + (1,) * (input.ndim - class_dim - 1)
        smooth = -R.sum(logp * S.reshape(weight, wshape), class_dim)
    else:
        smooth = -R.sum(logp, class_dim)
    smooth = E.masked_fill(smooth, ignore, 0.0)
    if reduction == "mean":
        t = target._data.astype(np.int64)
        xp = namespace(t)
        valid = t != ignore_index
        if weight is not None:
            denom = (xp.take(_array(weight), xp.where(valid, t, 0)) * valid).sum()
        else:
            denom = valid.sum()
        ret = R.sum(smooth) / float(denom)
    elif reduction == "sum":
        ret = R.sum(smooth)
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


def mse_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
             reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    """Mean squared error ``(input - target)^2``, as ``torch.nn.functional.mse_loss``.

    Args:
        input: predictions, any shape.
        target: targets, shaped like ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'`` (per element), ``'mean'`` or ``'sum'``.
        weight: optional per-element weight shaped like ``input``; ``'mean'`` is then
            ``sum(weight * loss) / sum(weight)``.

    Returns:
        A scalar tensor, or the per-element loss shaped like ``input`` with ``reduction='none'``.

    Raises:
        ValueError: ``target``'s or ``weight``'s shape differs from ``input``'s, or ``reduction`` is unknown.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.mse_loss(flow.tensor([1.0, 2.0]), flow.tensor([1.0, 4.0]))
        tensor(2.)
    """
    return _elementwise_loss("mse_loss", lambda d: d * d, input, target, size_average, reduce, reduction, weight)


def _elementwise_loss(name, of_difference, input, target, size_average, reduce, reduction, weight):
    """mse / l1: ``of_difference(input - target)`` per element, optionally weighted, reduced."""
    _check_target_shape(input, target, name)
    if weight is None:  # torch's autocast runs the fused loss in float32, the weighted composite as given
        input, target = _amp.cast_fp32(input), _amp.cast_fp32(target)
    return _weighted(of_difference(input - target), weight, input, _legacy_reduction(size_average, reduce, reduction),
                     True)


def l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
            reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    """Mean absolute error ``|input - target|``, as ``torch.nn.functional.l1_loss``; arguments, result and errors as
    :func:`mse_loss`."""
    return _elementwise_loss("l1_loss", E.abs, input, target, size_average, reduce, reduction, weight)


@_amp.fp32
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                   reduce: Optional[bool] = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Smooth L1 loss: ``0.5 * d^2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 * beta``, as
    ``torch.nn.functional.smooth_l1_loss``.

    Args:
        input: predictions, any shape.
        target: targets, shaped like ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'`` (per element), ``'mean'`` or ``'sum'``.
        beta: the switch point between the quadratic and linear parts (0 gives the L1 loss).

    Returns:
        A scalar tensor, or the per-element loss shaped like ``input`` with ``reduction='none'``.

    Raises:
        ValueError: ``target``'s shape differs from ``input``'s, or ``reduction`` is unknown.
        RuntimeError: ``beta`` is negative.
    """
    _check_target_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = E.abs(input - target)
    if beta == 0:
        loss = d
    else:
        loss = E.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Optional[Tensor] = None) -> Tensor:
    """Huber loss: ``0.5 * d^2`` where ``d = |input - target| < delta``, else ``delta * (d - 0.5 * delta)``, as
    ``torch.nn.functional.huber_loss``.

    Args:
        input: predictions, any shape.
        target: targets, shaped like ``input``.
        reduction: ``'none'`` (per element), ``'mean'`` or ``'sum'``.
        delta: the switch point between the quadratic and linear parts.
        weight: optional per-element weight shaped like ``input`` (``'mean'`` stays the plain mean, as in torch).

    Returns:
        A scalar tensor, or the per-element loss shaped like ``input`` with ``reduction='none'``.

    Raises:
        ValueError: ``target``'s or ``weight``'s shape differs from ``input``'s, or ``reduction`` is unknown.
    """
    _check_target_shape(input, target, "huber_loss")
    d = E.abs(input - target)
    loss = E.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _weighted(loss, weight, input, reduction, False)


class _BCE(Function):
    """Elementwise binary cross-entropy with torch's formulas: the logs are clamped at -100 (finite losses at
    0 and 1) and d/dx = (x - t) / max(x (1 - x), 1e-12) (finite gradients there too)."""

    @staticmethod
    def forward(ctx, x, t):
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(x), -100.0)
            log_1mx = np.maximum(np.log(1 - x), -100.0)
        ctx.save_for_backward(x, t)
        return (-(t * log_x + (1 - t) * log_1mx)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved
        gx = g * (x - t) / np.maximum((1 - x) * x, 1e-12) if ctx.needs_input_grad[0] else None
        gt = None
        if ctx.needs_input_grad[1]:  # like torch, the target gradient uses the unclamped logs
            with np.errstate(divide="ignore", invalid="ignore"):
                gt = g * (np.log(1 - x) - np.log(x))
        return gx, gt


@_amp.fp32
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities: ``-(t * log(x) + (1 - t) * log(1 - x))``, the logs clamped at -100, as
    ``torch.nn.functional.binary_cross_entropy``.

    Args:
        input: predictions, any shape.
        target: targets, shaped like ``input``.
        weight: optional rescaling, broadcastable to ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'`` (per element), ``'mean'`` or ``'sum'``.

    Returns:
        A scalar tensor, or the per-element loss shaped like ``input`` with ``reduction='none'``.

    Raises:
        ValueError: ``target``'s shape differs from ``input``'s, or ``reduction`` is unknown.
        RuntimeError: an input value outside ``[0, 1]``.
    """
    _check_target_shape(input, target, "binary_cross_entropy")
    x = input._compute()
    if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = _BCE.apply(input, target, _dtype=D.result_type(input, target))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                     reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> Tensor:
    """Binary cross-entropy of logits, ``binary_cross_entropy(sigmoid(input), target)`` computed stably, as
    ``torch.nn.functional.binary_cross_entropy_with_logits``.

    Args:
        input: predictions, any shape.
        target: targets, shaped like ``input``.
        weight: optional rescaling, broadcastable to ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'`` (per element), ``'mean'`` or ``'sum'``.
        pos_weight: optional weight of the positive term, broadcastable to ``input`` (one per class).

    Returns:
        A scalar tensor, or the per-element loss shaped like ``input`` with ``reduction='none'``.

    Raises:
        ValueError: ``target``'s shape differs from ``input``'s, or ``reduction`` is unknown.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(flow.tensor([0.0]), flow.tensor([1.0]))
        tensor(0.6931)
    """
    _check_target_shape(input, target, "binary_cross_entropy_with_logits")
    # (1 - t) * x + (1 + (pw - 1) * t) * log(1 + exp(-x)), written stably with softplus(-x)
    sp = E.log1p(E.exp(-E.abs(input))) + E.clamp_min(-input, 0)
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def kl_div(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence ``target * (log(target) - input)`` with ``input`` given as log-probabilities, as
    ``torch.nn.functional.kl_div`` (0 where ``target`` is 0).

    Args:
        input: log-probabilities, any shape.
        target: probabilities (log-probabilities with ``log_target``), shaped like ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` (over all elements), ``'batchmean'`` (sum / batch size: the true KL
            divergence) or ``'sum'``.
        log_target: ``target`` holds log-probabilities.

    Returns:
        A scalar, or the per-element loss with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.
    """
    if log_target:
        loss = E.exp(target) * (target - input)
    else:
        t = target._compute()
        safe_log = _const(np.where(t > 0, np.log(np.where(t > 0, t, 1)), 0).astype(t.dtype), target._dtype)
        loss = target * (safe_log - input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "batchmean":
        return R.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


@_amp.fp32
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                     reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-target * input))``, as ``torch.nn.functional.soft_margin_loss``.

    Args:
        input: scores, any shape.
        target: labels 1 or -1, shaped like ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-element loss with ``reduction='none'``.
    """
    return _reduce(E.log1p(E.exp(-target * input)), _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                        reduction: str = "mean") -> Tensor:
    """Ranking loss ``max(0, -target * (input1 - input2) + margin)``, as ``torch.nn.functional.margin_ranking_loss``.

    Args:
        input1: scores of the first items.
        input2: scores of the second items.
        target: 1 where ``input1`` should rank higher, -1 where ``input2`` should.
        margin: the required score gap.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-pair loss with ``reduction='none'``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(E.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@_amp.fp32
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                          reduction: str = "mean") -> Tensor:
    """Cosine embedding loss, as ``torch.nn.functional.cosine_embedding_loss``: ``1 - cos(x1, x2)`` for ``target == 1``,
    ``max(0, cos(x1, x2) - margin)`` for ``target == -1`` (cosine similarity over dim 1).

    Args:
        input1: ``(N, D)`` embeddings.
        input2: ``(N, D)`` embeddings.
        target: ``(N,)`` labels 1 (similar) or -1 (dissimilar).
        margin: the cosine below which dissimilar pairs cost nothing.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-pair loss with ``reduction='none'``.
    """
    cos = F.cosine_similarity(input1, input2, 1)
    loss = E.where(target > 0, 1 - cos, E.clamp_min(cos - margin, 0))
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@_amp.fp32
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Optional[bool] = None, eps: float = 1e-8, reduce: Optional[bool] = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of a Poisson target, as ``torch.nn.functional.poisson_nll_loss``: ``exp(input) - target
    * input`` with ``log_input``, else ``input - target * log(input + eps)``; ``full`` adds the Stirling
    approximation of ``log(target!)``, ``target * log(target) - target + 0.5 * log(2 pi target)``, where
    ``target > 1``.

    Args:
        input: the expectation (its log with ``log_input``).
        target: observed counts, shaped like ``input``.
        log_input: ``input`` is the log of the rate.
        full: add the Stirling term.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        eps: keeps the log finite when ``log_input`` is False.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-element loss with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.poisson_nll_loss(flow.tensor([0.0, 1.0]), flow.tensor([1.0, 3.0]), full=True)
        tensor(1.2412)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    loss = E.exp(input) - target * input if log_input else input - target * E.log(input + eps)
    if full:
        stirling = target * E.log(target) - target + 0.5 * E.log(2 * np.pi * target)
        loss = loss + E.masked_fill(stirling, target <= 1, 0.0)
    return _reduce(loss, reduction)
