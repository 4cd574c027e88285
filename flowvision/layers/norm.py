"""Normalisation layers beyond the backend's: channels-first LayerNorm (timm's LayerNorm2d)."""
from flowvision.backend import nn
from flowvision.backend.nn import functional as F


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channel dim of an NCHW tensor (parameter names weight/bias, like nn.LayerNorm)."""

    def __init__(self, num_channels, eps=1e-6, affine=True):
        super().__init__(num_channels, eps=eps, elementwise_affine=affine)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)
