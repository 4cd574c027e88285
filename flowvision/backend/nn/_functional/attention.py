"""``scaled_dot_product_attention``: a fused CPU kernel where it applies, else the composed formula."""
import math
from typing import Optional

import numpy as np

from ... import _dtype as D
from ... import _autocast_policy as _amp
from ..._ops import elementwise as E, linalg as L, shape as S
from ..._tensor import Tensor
from .. import functional as F


@_amp.lower_precision
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """Attention ``softmax(query @ key^T * scale + mask) @ value``, as
    ``torch.nn.functional.scaled_dot_product_attention``.

    Args:
        query: ``(*, L, E)``.
        key: ``(*, S, E)``.
        value: ``(*, S, Ev)``.
        attn_mask: broadcastable to ``(*, L, S)``: a bool mask (False positions are excluded) or a float bias added
            to the scores.
        dropout_p: dropout probability applied to the attention weights.
        is_causal: mask out the future (position ``j > i``); excludes ``attn_mask``.
        scale: the score scale; ``None`` means ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: ``key``/``value`` with fewer heads (dim -3) are repeated to match
            ``query``'s.

    Returns:
        ``(*, L, Ev)``.

    Raises:
        RuntimeError: mismatched embedding dims or sequence lengths, or ``attn_mask`` with ``is_causal``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> q = k = v = flow.ones(2, 4, 5, 8)
        >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
        flowvision.Size([2, 4, 5, 8])
    """
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)} and key {list(key.shape)} must "
                           "have the same embedding dimension")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key {list(key.shape)} and value {list(value.shape)} must "
                           "have the same sequence length")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    from ..._ops.attention import ScaledDotProductAttention, fused_sdpa_supported
    if (dropout_p == 0.0 and not enable_gqa and (attn_mask is None or isinstance(attn_mask, Tensor))
            and fused_sdpa_supported(query, key, value, attn_mask)):
        # float32 on the CPU: one fused kernel over the strided views (float64/16, dropout, GQA, CUDA: below)
        return ScaledDotProductAttention.apply(query, key, value, attn_mask, scale=scale, is_causal=is_causal)
    if enable_gqa and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = S.repeat_interleave(key, rep, dim=-3)
        value = S.repeat_interleave(value, rep, dim=-3)
    L_, S_ = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = L.matmul(query * sc, S.transpose(key, -2, -1))
    if is_causal:
        causal = Tensor._wrap(np.tril(np.ones((L_, S_), bool)))
        scores = E.masked_fill(scores, E.logical_not(causal), float("-inf"))
    if attn_mask is not None:
        if attn_mask._dtype is D.bool:
            scores = E.masked_fill(scores, E.logical_not(S.expand(attn_mask, tuple(scores.shape))
                                                         if tuple(attn_mask.shape) != tuple(scores.shape) else attn_mask),
                                   float("-inf"))
        else:
            scores = scores + attn_mask
    attn = F.softmax(scores, -1)
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, True)
    return L.matmul(attn, value)
