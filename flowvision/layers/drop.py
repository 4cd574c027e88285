"""Stochastic depth (DropPath) and DropBlock (arXiv:1810.12890)."""
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F


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
    with flow.no_grad():
        seeds = flow.bernoulli(flow.full((B, 1 if couple_channels else C, H, W), min(gamma, 1.0), dtype=x.dtype))
        block_mask = F.max_pool2d(seeds, kernel_size=(kh, kw), stride=1, padding=(kh // 2, kw // 2))
        if kh % 2 == 0 or kw % 2 == 0:  # an even window pads one more row/col than it consumes
            block_mask = block_mask[..., (kh + 1) % 2:, (kw + 1) % 2:]
        keep_mask = 1.0 - block_mask
    if with_noise:
        with flow.no_grad():
            noise = flow.randn(tuple(keep_mask.shape), dtype=x.dtype) * block_mask
        return x.mul_(keep_mask).add_(noise) if inplace else x * keep_mask + noise
    if scale_by_keep:
        with flow.no_grad():
            keep_mask = keep_mask * (keep_mask.numel() / (float(keep_mask.sum()) + 1e-7))
    return x.mul_(keep_mask) if inplace else x * keep_mask


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
