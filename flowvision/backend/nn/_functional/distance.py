"""Distances between tensors: ``cosine_similarity`` and ``pairwise_distance``."""
from ..._ops import elementwise as E, reduce as R


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    dot_ = R.sum(x1 * x2, dim)
    n1 = R.norm(x1, 2, dim)
    n2 = R.norm(x2, 2, dim)
    return dot_ / (E.clamp_min(n1, eps) * E.clamp_min(n2, eps))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return R.norm(x1 - x2 + eps, p, -1, keepdim)
