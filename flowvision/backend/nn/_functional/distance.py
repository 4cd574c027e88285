"""Distances between tensors: ``cosine_similarity`` and ``pairwise_distance``."""
from ..._ops import elementwise as E, reduce as R
from ..._tensor import Tensor


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine similarity along ``dim``: ``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))``, as
    ``torch.nn.functional.cosine_similarity``.

    Args:
        x1: a tensor.
        x2: a tensor broadcastable with ``x1``.
        dim: the dim holding the vectors.
        eps: lower bound of each norm.

    Returns:
        The broadcast shape without ``dim``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.cosine_similarity(flow.tensor([[1.0, 0.0]]), flow.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    dot_ = R.sum(x1 * x2, dim)
    n1 = R.norm(x1, 2, dim)
    n2 = R.norm(x2, 2, dim)
    return dot_ / (E.clamp_min(n1, eps) * E.clamp_min(n2, eps))


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``p``-norm distance between matching vectors (last dim): ``||x1 - x2 + eps||_p``, as
    ``torch.nn.functional.pairwise_distance``.

    Args:
        x1: ``(*, D)``.
        x2: ``(*, D)``, broadcastable with ``x1``.
        p: the norm degree.
        eps: added to the difference (avoids a zero norm's undefined gradient).
        keepdim: keep the reduced last dim with size 1.

    Returns:
        ``(*)`` (``(*, 1)`` with ``keepdim``).
    """
    return R.norm(x1 - x2 + eps, p, -1, keepdim)
