"""Stochastic depth (DropPath)."""
from flowvision import backend as flow
from flowvision.backend import nn


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    """Drop whole samples of a residual branch with probability ``drop_prob`` (training only)."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    mask = flow.bernoulli(flow.full(shape, keep_prob, dtype=x.dtype))
    if keep_prob > 0.0 and scale_by_keep:
        mask = mask / keep_prob
    return x * mask


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"
