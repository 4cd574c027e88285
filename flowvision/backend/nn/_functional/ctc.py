"""Connectionist temporal classification loss, as ``torch.nn.functional.ctc_loss``.

The forward and backward passes are the log-space alpha/beta recursions of Graves et al. (2006), vectorised over the
batch and the extended label positions (one step per time frame). The gradient with respect to ``log_probs`` is
torch's: ``exp(lp) - exp(log(alpha * beta summed per class) + nll - lp)``, which assumes ``log_probs`` comes from a
``log_softmax`` (then the gradient of the logits is exact).
"""
from typing import Sequence, Union

import numpy as np

from ... import _autocast_policy as _amp
from ..._creation import tensor as _tensor
from ..._ops import reduce as R, shape as S
from ..._tensor import Tensor
from ...autograd.graph import Function
from .common import _check_float

_NEG_INF = -np.inf


def _lengths(value: Union[Tensor, Sequence[int]], name: str, n: int) -> np.ndarray:
    arr = np.asarray(value.cpu()._data if isinstance(value, Tensor) else value).astype(np.int64).reshape(-1)
    if arr.size != n:
        raise RuntimeError(f"{name} must be of size batch_size (expected {n}, got {arr.size})")
    return arr


def _lse3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.maximum(np.maximum(a, b), c)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - m_safe) + np.exp(b - m_safe) + np.exp(c - m_safe)) + m_safe


class _CTC(Function):
    """Per-sample CTC negative log-likelihood ``(N,)`` of log-probabilities ``(T, N, C)``."""

    @staticmethod
    def forward(ctx, lp, labels, input_lengths, target_lengths, blank, zero_infinity):
        t_max, n, _ = lp.shape
        s_max = labels.shape[1]
        s_len = 2 * target_lengths + 1
        s_idx = np.arange(s_max)
        in_seq = s_idx[None, :] < s_len[:, None]  # (N, S)
        # a skip from s - 2 to s: s holds a label that differs from the label at s - 2
        prev2 = np.concatenate([np.full((n, 2), -1, np.int64), labels[:, :-2]], 1) if s_max > 2 else \
            np.full((n, s_max), -1, np.int64)
        skip = (labels != blank) & (labels != prev2) & (s_idx[None, :] >= 2)
        emit = np.take_along_axis(lp, np.broadcast_to(labels[None], (t_max, n, s_max)), 2)  # (T, N, S)
        emit = np.where(in_seq[None], emit, _NEG_INF)
        pad1 = np.full((n, 1), _NEG_INF)
        pad2 = np.full((n, 2), _NEG_INF)
        alpha = np.full((t_max, n, s_max), _NEG_INF)
        if t_max:
            alpha[0][:, :2] = emit[0][:, :2]
        for t in range(1, t_max):
            a = alpha[t - 1]
            a1 = np.concatenate([pad1, a[:, :-1]], 1)
            a2 = np.where(skip, np.concatenate([pad2, a[:, :-2]], 1), _NEG_INF)
            alpha[t] = _lse3(a, a1, a2) + emit[t]
        rows = np.arange(n)
        last_t = np.maximum(input_lengths - 1, 0)
        end = alpha[last_t, rows]  # (N, S)
        end_last = end[rows, s_len - 1]
        end_prev = np.where(s_len > 1, end[rows, np.maximum(s_len - 2, 0)], _NEG_INF)
        nll = -np.logaddexp(end_last, end_prev)
        nll = np.where(input_lengths > 0, nll, np.where(target_lengths == 0, 0.0, np.inf))
        ctx.save_for_backward(lp)
        ctx.args = (labels, input_lengths, blank, zero_infinity, alpha, emit, skip, s_len, nll)
        if zero_infinity:
            nll = np.where(np.isinf(nll), 0.0, nll)
        return nll.astype(lp.dtype)

    @staticmethod
    def backward(ctx, g):
        (lp,) = ctx.saved
        labels, input_lengths, blank, zero_infinity, alpha, emit, skip, s_len, nll = ctx.args
        t_max, n, c = lp.shape
        s_max = labels.shape[1]
        rows = np.arange(n)
        beta = np.full((t_max, n, s_max), _NEG_INF)
        pad1 = np.full((n, 1), _NEG_INF)
        pad2 = np.full((n, 2), _NEG_INF)
        skip_from = np.concatenate([skip[:, 2:], np.zeros((n, 2), bool)], 1)  # s -> s + 2 allowed
        init = np.full((n, s_max), _NEG_INF)
        init[rows, s_len - 1] = 0.0
        init[rows[s_len > 1], (s_len - 2)[s_len > 1]] = 0.0
        for t in range(t_max - 1, -1, -1):
            if t + 1 < t_max:
                b = beta[t + 1]
                b1 = np.concatenate([b[:, 1:], pad1], 1)
                b2 = np.where(skip_from, np.concatenate([b[:, 2:], pad2], 1), _NEG_INF)
                step = _lse3(b, b1, b2)
            else:
                step = np.full((n, s_max), _NEG_INF)
            step = np.where((t == input_lengths - 1)[:, None], init, step)
            beta[t] = np.where((t < input_lengths)[:, None], step + emit[t], _NEG_INF)
        ab = alpha + beta  # (T, N, S)
        lcab = np.full((n, c, t_max), _NEG_INF)
        valid = np.arange(s_max)[None, :] < s_len[:, None]
        ni, si = np.nonzero(valid)
        np.logaddexp.at(lcab, (ni, labels[ni, si]), np.transpose(ab, (1, 2, 0))[ni, si])
        lcab = np.transpose(lcab, (2, 0, 1))  # (T, N, C)
        with np.errstate(over="ignore", invalid="ignore"):
            grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
        grad = np.where((np.arange(t_max)[:, None] < input_lengths[None, :])[:, :, None], grad, 0.0)
        if zero_infinity:
            grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
        return ((grad * g[None, :, None]).astype(lp.dtype),)


@_amp.fp32
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Union[Tensor, Sequence[int]],
             target_lengths: Union[Tensor, Sequence[int]], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss, as ``torch.nn.functional.ctc_loss``.

    Args:
        log_probs: ``(T, N, C)`` or unbatched ``(T, C)`` log-probabilities (a ``log_softmax`` over ``C``).
        targets: ``(N, S)`` padded label sequences, or all sequences concatenated in one 1-D tensor; no label may
            be ``blank``.
        input_lengths: ``(N,)`` frames used per sample (each ``<= T``).
        target_lengths: ``(N,)`` labels per sample.
        blank: the blank class index.
        reduction: ``'none'`` (per sample), ``'mean'`` (each loss divided by its target length, then averaged over
            the batch) or ``'sum'``.
        zero_infinity: replace infinite losses (impossible alignments) and their gradients by zero.

    Returns:
        A scalar, or the per-sample loss ``(N,)`` (``()`` unbatched) with ``reduction='none'``.

    Raises:
        ValueError: an unknown ``reduction``.
        RuntimeError: bad shapes or lengths, or a blank index out of range.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> lp = F.log_softmax(flow.zeros(3, 1, 2), 2)
        >>> F.ctc_loss(lp, flow.tensor([[1]]), [3], [1], reduction="sum")
        tensor(0.2877)
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_float(log_probs, "ctc_loss")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = S.unsqueeze(log_probs, 1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D or 3-D, got {list(log_probs.shape)}")
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    in_len = _lengths(input_lengths, "input_lengths", n)
    tg_len = _lengths(target_lengths, "target_lengths", n)
    if (in_len < 0).any() or (in_len > t_max).any():
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value "
                           f"{int(in_len.max())}")
    if (tg_len < 0).any():
        raise RuntimeError("ctc_loss: target_lengths must be non-negative")
    tg = np.asarray(targets.cpu()._data).astype(np.int64)
    l_max = int(tg_len.max()) if n else 0
    padded = np.zeros((n, l_max), np.int64)
    if tg.ndim == 1 and not unbatched:  # concatenated sequences
        if tg.size < tg_len.sum():
            raise RuntimeError(f"ctc_loss: expected targets to hold {int(tg_len.sum())} labels, got {tg.size}")
        starts = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        for i in range(n):  # one slice per sample
            padded[i, :tg_len[i]] = tg[starts[i]:starts[i] + tg_len[i]]
    else:
        tg = tg.reshape(n, -1) if tg.ndim == 1 else tg
        if tg.ndim != 2 or tg.shape[0] != n or tg.shape[1] < l_max:
            raise RuntimeError(f"ctc_loss: expected targets of shape ({n}, >= {l_max}), got {list(targets.shape)}")
        padded = np.where(np.arange(l_max)[None, :] < tg_len[:, None], tg[:, :l_max], 0)
    if padded.size and (padded.min() < 0 or padded.max() >= c):
        raise RuntimeError("ctc_loss: target index out of range")
    # extended sequences: blank, l1, blank, l2, ..., blank
    labels = np.full((n, 2 * l_max + 1), blank, np.int64)
    labels[:, 1::2] = padded
    nll = _CTC.apply(log_probs, labels, in_len, tg_len, blank, zero_infinity)
    if reduction == "mean":
        denom = _tensor(np.maximum(tg_len, 1).astype(np.float64), dtype=nll._dtype, device=nll.device)
        return R.mean(nll / denom)
    if reduction == "sum":
        return R.sum(nll)
    return S.reshape(nll, ()) if unbatched else nll
