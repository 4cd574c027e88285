"""Margin and embedding losses with torch's arguments, reductions, shape checks and errors: hinge, multi-class and
multi-label margins, multi-label soft margin, triplet margins.

Each is a composition of differentiable ops, so the gradients equal torch's (which also derives most of them by
autograd); the hinges on scores use ``relu`` where torch's kernels count a term only when it is strictly positive.
"""
from typing import Callable, Optional, Union

import numpy as np

from ... import _autocast_policy as _amp
from ..._creation import full_like, tensor as _tensor
from ..._ops import elementwise as E, reduce as R, shape as S
from ..._tensor import Tensor
from .common import _check_float
from .loss import _legacy_reduction, _reduce
from .. import functional as F

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _host_long(target: Tensor, name: str) -> np.ndarray:
    """The target's class indices on the host, int64; torch's error for a non-integer target."""
    if target._dtype.is_floating_point or target._dtype.is_complex:
        raise RuntimeError(f"{name}: expected scalar type Long but found {target._dtype}")
    return np.asarray(target.cpu()._data).astype(np.int64)


def _as_matrix(input: Tensor) -> Tensor:
    """``(N, C)`` view of a margin loss's input (``(C,)`` and ``()`` are one sample), checked as torch does."""
    nd = input.ndim
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    return input if nd == 2 else S.reshape(input, (1, input.numel()))


def _reduce_samples(loss: Tensor, reduction: str, unbatched: bool) -> Tensor:
    """Per-sample losses ``(N,)`` reduced; an unbatched sample's ``'none'`` loss is 0-D, as in torch."""
    if reduction == "none":
        return S.reshape(loss, ()) if unbatched else loss
    return _reduce(loss, reduction)


def _device_const(arr: np.ndarray, like: Tensor) -> Tensor:
    return _tensor(arr, dtype=like._dtype, device=like.device)


@_amp.fp32
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Optional[bool] = None,
                         reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Hinge embedding loss, as ``torch.nn.functional.hinge_embedding_loss``: ``x`` where ``target == 1``,
    ``max(0, margin - x)`` where ``target == -1`` (other target values add both terms, as in torch).

    Args:
        input: distances or scores, any shape.
        target: labels 1 or -1, broadcastable with ``input``.
        margin: the distance below which dissimilar pairs are penalised.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-element loss (the broadcast shape) with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.hinge_embedding_loss(flow.tensor([0.3, 2.0]), flow.tensor([-1.0, 1.0]), reduction="none")
        tensor([0.7000, 2.0000])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    margin_term = E.where(target != 1, E.clamp_min(margin - input, 0), 0.0)
    loss = margin_term + E.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


@_amp.fp32
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                      reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss, as ``torch.nn.functional.multi_margin_loss``: per sample ``sum_{i != y}
    w[y] * max(0, margin - x[y] + x[i])^p / C``.

    Args:
        input: scores ``(N, C)`` or ``(C,)``.
        target: class indices ``(N,)`` or ``()``, int64, each in ``[0, C)``.
        p: 1 or 2.
        margin: the required gap between the target's score and the others'.
        weight: optional ``(C,)`` per-class weight (of the target class).
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-sample loss ``(N,)`` (``()`` for one unbatched sample) with ``reduction='none'``.

    Raises:
        ValueError: ``p`` not 1 or 2, a ``weight`` that is not 1-D, or an unknown ``reduction``.
        RuntimeError: bad input/target/weight shapes, a non-integer target, or a target out of range.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.multi_margin_loss(flow.tensor([[0.1, 0.2, 0.4, 0.8]]), flow.tensor([3]))
        tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_float(input, "multi_margin_loss")
    x = _as_matrix(input)
    n, c = x.shape
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
                           f"Input shape: {list(input.shape)}")
    t = _host_long(target, "multi_margin_loss").reshape(n)
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    index = _tensor(t.reshape(n, 1), device=input.device)
    hinge = F.relu(margin - S.gather(x, 1, index) + x)
    if p == 2:
        hinge = hinge * hinge
    not_target = np.arange(c)[None, :] != t[:, None]
    hinge = hinge * _device_const(not_target.astype(np.float32), x)
    if weight is not None:
        w = np.asarray(weight.cpu()._compute())[t]
        hinge = hinge * _device_const(w.reshape(n, 1), x)
    return _reduce_samples(R.sum(hinge, 1) / c, reduction, input.ndim < 2)


@_amp.fp32
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                           reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss, as ``torch.nn.functional.multilabel_margin_loss``: per sample ``sum_{j, i}
    max(0, 1 - (x[y[j]] - x[i])) / C`` over the target classes ``y[j]`` (the leading entries of ``target`` before
    the first -1) and the non-target classes ``i``.

    Args:
        input: scores ``(N, C)`` or ``(C,)``.
        target: int64 shaped like ``input``: class indices, padded with -1 (all values in ``[-1, C)``).
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-sample loss ``(N,)`` (``()`` for one unbatched sample) with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.
        RuntimeError: bad shapes, a non-integer target, or a target value outside ``[-1, C)``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.multilabel_margin_loss(flow.tensor([[0.1, 0.2, 0.4, 0.8]]), flow.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_float(input, "multilabel_margin_loss")
    x = _as_matrix(input)
    n, c = x.shape
    if tuple(target.shape) != tuple(input.shape) and not (input.ndim < 2 and target.numel() == c):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    t = _host_long(target, "multilabel_margin_loss").reshape(n, c)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # the entries before each row's first -1
    k = int(listed.sum(1).max()) if n else 0
    listed, safe = listed[:, :k], np.where(listed, t, 0)[:, :k]
    is_target = np.zeros((n, c), bool)
    rows, cols = np.nonzero(listed)
    is_target[rows, safe[rows, cols]] = True
    target_scores = S.gather(x, 1, _tensor(safe, device=input.device))  # (N, K)
    hinge = F.relu(1 - S.unsqueeze(target_scores, 2) + S.unsqueeze(x, 1))  # (N, K, C)
    counted = listed[:, :, None] & ~is_target[:, None, :]
    loss = R.sum(hinge * _device_const(counted.astype(np.float32), x), (1, 2)) / c
    return _reduce_samples(loss, reduction, input.ndim < 2)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                reduction: str = "mean") -> Tensor:
    """Multi-label one-versus-all logistic loss, as ``torch.nn.functional.multilabel_soft_margin_loss``: per sample
    ``-mean_i w[i] * (y[i] log(sigmoid(x[i])) + (1 - y[i]) log(sigmoid(-x[i])))`` over the last dim.

    Args:
        input: scores ``(N, C)`` or ``(C,)``.
        target: 0/1 labels shaped like ``input``.
        weight: optional per-class weight, broadcastable to ``input``.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-sample loss (``input`` without its last dim) with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.multilabel_soft_margin_loss(flow.tensor([[0.0, 0.0]]), flow.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = R.sum(loss, class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")


def _triplet(dist: Callable[[Tensor, Tensor], Tensor], anchor: Tensor, positive: Tensor, negative: Tensor,
             margin: float, swap: bool, reduction: str) -> Tensor:
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:  # Balntas et al.: the positive's distance to the negative when that is the smaller one
        dist_neg = E.minimum(dist_neg, dist(positive, negative))
    return _reduce(E.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


@_amp.fp32
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average: Optional[bool] = None,
                        reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Triplet loss ``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``pairwise_distance`` of degree ``p``,
    as ``torch.nn.functional.triplet_margin_loss``.

    Args:
        anchor: ``(N, D)`` or ``(D,)`` embeddings.
        positive: embeddings of the anchor's class, broadcastable with ``anchor``.
        negative: embeddings of another class, broadcastable with ``anchor``.
        margin: the required gap between the two distances (> 0).
        p: the norm degree of the distance.
        eps: added to the differences (as in ``pairwise_distance``).
        swap: use ``min(d(a, n), d(p, n))`` as the negative distance.
        size_average: deprecated (torch's legacy flag); with ``reduce`` it overrides ``reduction`` when given.
        reduce: deprecated (torch's legacy flag); ``False`` means ``reduction='none'``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-triplet loss with ``reduction='none'``.

    Raises:
        ValueError: ``margin <= 0`` or an unknown ``reduction``.
        RuntimeError: the three inputs differ in their number of dims.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> a, pos, neg = flow.tensor([[0.0, 0.0]]), flow.tensor([[0.0, 1.0]]), flow.tensor([[1.0, 1.0]])
        >>> F.triplet_margin_loss(a, pos, neg, eps=0.0)
        tensor(0.5858)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    return _triplet(lambda u, v: F.pairwise_distance(u, v, p, eps), anchor, positive, negative, margin, swap,
                    reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """Triplet loss with any distance, as ``torch.nn.functional.triplet_margin_with_distance_loss``:
    ``max(0, margin + d(a, p) - d(a, n))``.

    Args:
        anchor: embeddings.
        positive: embeddings of the anchor's class.
        negative: embeddings of another class.
        distance_function: ``(x, y) -> distances``; ``pairwise_distance`` when None.
        margin: the required gap between the two distances (> 0).
        swap: use ``min(d(a, n), d(p, n))`` as the negative distance.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-triplet loss with ``reduction='none'``.

    Raises:
        ValueError: ``margin <= 0`` or an unknown ``reduction``.
        RuntimeError: the three inputs differ in their number of dims.
    """
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    dist = F.pairwise_distance if distance_function is None else distance_function
    return _triplet(dist, anchor, positive, negative, margin, swap, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Union[Tensor, float], full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)^2 / var)`` (+ ``0.5 * log(2 pi)`` with
    ``full``), as ``torch.nn.functional.gaussian_nll_loss``; ``var`` is clamped at ``eps`` for the value only (its
    gradient passes through the clamp, as in torch).

    Args:
        input: predicted means.
        target: observations, shaped like ``input``.
        var: predicted variances: shaped like ``input``, or ``input``'s shape without its last dim, or with one
            dim of size 1 (homoscedastic), or a number.
        full: add the constant term.
        eps: the lower clamp of ``var``.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.

    Returns:
        A scalar, or the per-element loss with ``reduction='none'``.

    Raises:
        ValueError: a negative variance, a ``var`` shape that fits none of the above, or an unknown ``reduction``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.gaussian_nll_loss(flow.tensor([1.0, 2.0]), flow.tensor([1.0, 4.0]), flow.tensor([1.0, 2.0]))
        tensor(0.6733)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        variance = full_like(input, float(var))
    else:
        variance = var
        if bool(R.any(variance < 0)):
            raise ValueError("var has negative entry/entries")
    if tuple(variance.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(variance.shape):
            variance = S.unsqueeze(variance, -1)
        elif not (input.ndim == variance.ndim and
                  sum(v for i, v in zip(input.shape, variance.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # torch clamps a clone in place under no_grad: the clamped value, the unclamped gradient
    v = variance.detach()
    variance = variance + (E.clamp_min(v, eps) - v)
    d = input - target
    loss = 0.5 * (E.log(variance) + d * d / variance)
    if full:
        loss = loss + 0.5 * float(np.log(2 * np.pi))
    return _reduce(loss, reduction)
