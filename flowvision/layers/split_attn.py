"""Split attention (ResNeSt): a grouped conv producing ``radix`` branches re-weighted by a softmax over them."""
from typing import Optional

from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from .helpers import make_divisible

__all__ = ["SplitAttn", "RadixSoftmax"]


class RadixSoftmax(nn.Module):
    """Softmax across the ``radix`` branches of each cardinal group (a sigmoid when radix is 1)."""

    def __init__(self, radix: int, cardinality: int):
        super().__init__()
        self.radix = radix
        self.cardinality = cardinality

    def forward(self, x):
        b = x.shape[0]
        if self.radix > 1:
            x = x.reshape(b, self.cardinality, self.radix, -1).transpose(1, 2)
            return F.softmax(x, dim=1).reshape(b, -1)
        return x.sigmoid()


class SplitAttn(nn.Module):
    """Split-Attention conv (Zhang et al., "ResNeSt: Split-Attention Networks", 2020); timm's parameter names.

    Args:
        in_channels: input channels.
        out_channels: output channels (default: ``in_channels``).
        kernel_size, stride, padding, dilation, groups, bias: of the branch convolution.
        radix: number of branches the softmax chooses between.
        rd_ratio, rd_channels, rd_divisor: width of the attention bottleneck.
        act_layer, norm_layer, drop_layer: activation, norm and (optional) DropBlock of the branch conv.
    """

    def __init__(self, in_channels: int, out_channels: Optional[int] = None, kernel_size: int = 3, stride: int = 1,
                 padding: Optional[int] = None, dilation: int = 1, groups: int = 1, bias: bool = False,
                 radix: int = 2, rd_ratio: float = 0.25, rd_channels: Optional[int] = None, rd_divisor: int = 8,
                 act_layer=nn.ReLU, norm_layer=None, drop_layer=None):
        super().__init__()
        out_channels = out_channels or in_channels
        self.radix = radix
        mid_chs = out_channels * radix
        if rd_channels is None:
            attn_chs = make_divisible(in_channels * radix * rd_ratio, min_value=32, divisor=rd_divisor)
        else:
            attn_chs = rd_channels * radix
        padding = kernel_size // 2 if padding is None else padding
        self.conv = nn.Conv2d(in_channels, mid_chs, kernel_size, stride, padding, dilation, groups=groups * radix,
                              bias=bias)
        self.bn0 = norm_layer(mid_chs) if norm_layer else nn.Identity()
        self.drop = drop_layer() if drop_layer is not None else nn.Identity()
        self.act0 = act_layer(inplace=True)
        self.fc1 = nn.Conv2d(out_channels, attn_chs, 1, groups=groups)
        self.bn1 = norm_layer(attn_chs) if norm_layer else nn.Identity()
        self.act1 = act_layer(inplace=True)
        self.fc2 = nn.Conv2d(attn_chs, mid_chs, 1, groups=groups)
        self.rsoftmax = RadixSoftmax(radix, groups)

    def forward(self, x):
        x = self.act0(self.drop(self.bn0(self.conv(x))))
        b, rc, h, w = x.shape
        if self.radix > 1:
            x = x.reshape(b, self.radix, rc // self.radix, h, w)
            x_gap = x.sum(dim=1)
        else:
            x_gap = x
        x_gap = self.act1(self.bn1(self.fc1(x_gap.mean((2, 3), keepdim=True))))
        x_attn = self.rsoftmax(self.fc2(x_gap))
        if self.radix > 1:
            return (x * x_attn.reshape(b, self.radix, rc // self.radix, 1, 1)).sum(dim=1)
        return x * x_attn.reshape(b, -1, 1, 1)
