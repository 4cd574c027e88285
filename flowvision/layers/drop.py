"""Stochastic depth (DropPath) and DropBlock (arXiv:1810.12890) with timm's signatures.

Both run the kernels of ``flowvision.ops.stochastic_depth`` (one implementation for timm's and torchvision's
APIs), so the masks are drawn on the input's device.
"""
from flowvision.backend import nn
from flowvision.ops.stochastic_depth import block_drop, sample_drop


def drop_block_2d(x, drop_prob=0.1, block_size=7, gamma_scale=1.0, with_noise=False, inplace=False,
                  couple_channels=True, scale_by_keep=True):
    """Zero (or fill with gaussian noise) random ``block_size`` squares of a (B, C, H, W) map.

    Block centres are drawn with the rate ``gamma`` that makes the expected dropped fraction ``drop_prob``
    (timm's formula) and grown to blocks with a stride-1 max-pool; the kept values are rescaled by
    numel / kept so the batch mean is preserved. ``couple_channels`` shares one mask over channels.
    """
    if x.ndim != 4:
        raise ValueError(f"drop_block_2d expects a (B, C, H, W) tensor, got shape {tuple(x.shape)}")
    B, C, H, W = x.shape
    kh, kw = min(block_size, H), min(block_size, W)
    gamma = float(gamma_scale * drop_prob * H * W) / float(kh * kw) / float((H - kh + 1) * (W - kw + 1))
    return block_drop(x, gamma, kh, kw, couple_channels=couple_channels, with_noise=with_noise,
                      scale=scale_by_keep, eps=1e-7, inplace=inplace)


class DropBlock2d(nn.Module):
    """DropBlock as a module: identity in eval mode or with ``drop_prob == 0``."""

    def __init__(self, drop_prob=0.1, block_size=7, gamma_scale=1.0, with_noise=False, inplace=False,
                 couple_channels=True, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.gamma_scale = gamma_scale
        self.block_size = block_size
        self.with_noise = with_noise
        self.inplace = inplace
        self.couple_channels = couple_channels
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        if not self.training or not self.drop_prob:
            return x
        return drop_block_2d(x, self.drop_prob, self.block_size, self.gamma_scale, self.with_noise,
                             self.inplace, self.couple_channels, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={self.drop_prob}, block_size={self.block_size}"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    """Drop whole samples of a residual branch with probability ``drop_prob`` (training only)."""
    if drop_prob == 0.0 or not training:
        return x
    return sample_drop(x, drop_prob, per_sample=True, scale_by_keep=scale_by_keep)


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"
