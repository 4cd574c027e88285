"""Thin modules over existing functionals: LocalResponseNorm, CosineSimilarity, PairwiseDistance, Unfold, Fold,
ChannelShuffle."""
from __future__ import annotations

from .module import Module

__all__ = ["LocalResponseNorm", "CosineSimilarity", "PairwiseDistance", "Unfold", "Fold", "ChannelShuffle"]


def _F():
    from .. import functional
    return functional


def _local_response_norm(x, size: int, alpha: float, beta: float, k: float):
    """x / (k + alpha * mean of x^2 over a window of ``size`` channels)^beta, zero-padded like torch."""
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    from ..._ops.shape import cat
    from ... import _creation as C
    sq = x * x
    c = x.shape[1]
    before, after = size // 2, (size - 1) // 2
    pads = [C.zeros(x.shape[0], n, *x.shape[2:], dtype=x.dtype) for n in (before, after)]
    padded = cat([pads[0], sq, pads[1]], 1)
    win = padded.narrow(1, 0, c)
    for j in range(1, size):  # a window of ``size`` shifted views: size tensor ops, not a per-element loop
        win = win + padded.narrow(1, j, c)
    return x / (win * (alpha / size) + k) ** beta


class LocalResponseNorm(Module):
    """Normalise over ``size`` neighbouring channels: x / (k + alpha/size * sum x^2)^beta (AlexNet)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return _F().cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return _F().pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return _F().unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return _F().fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)


class ChannelShuffle(Module):
    """Interleave ``groups`` channel groups (ShuffleNet)."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        n, c = input.shape[0], input.shape[1]
        if c % self.groups:
            raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                               f"{self.groups} groups.")
        rest = tuple(input.shape[2:])
        return input.reshape(n, self.groups, c // self.groups, *rest).transpose(1, 2).reshape(n, c, *rest)

    def extra_repr(self):
        return f"groups={self.groups}"
