"""CBAM (arXiv:1807.06521): channel attention then spatial attention, and timm's 'light' variants.

Names and defaults are timm's (``channel.fc1/fc2``, ``spatial.conv.conv/bn``), so its state_dicts load.
"""
from flowvision import backend as flow
from flowvision.backend import nn

from .activations import create_act_layer, get_act_layer
from .conv_bn_act import ConvNormAct
from .helpers import make_divisible


class ChannelAttn(nn.Module):
    """Shared MLP over the avg- and max-pooled descriptors, summed, then gated."""

    def __init__(self, channels, rd_ratio=1 / 16, rd_channels=None, rd_divisor=1, act_layer=nn.ReLU,
                 gate_layer="sigmoid", mlp_bias=False):
        super().__init__()
        if not rd_channels:
            rd_channels = make_divisible(channels * rd_ratio, rd_divisor, round_limit=0.0)
        self.fc1 = nn.Conv2d(channels, rd_channels, 1, bias=mlp_bias)
        self.act = create_act_layer(get_act_layer(act_layer), inplace=True)
        self.fc2 = nn.Conv2d(rd_channels, channels, 1, bias=mlp_bias)
        self.gate = create_act_layer(gate_layer)

    def forward(self, x):
        x_avg = self.fc2(self.act(self.fc1(x.mean((2, 3), keepdim=True))))
        x_max = self.fc2(self.act(self.fc1(x.amax((2, 3), keepdim=True))))
        return x * self.gate(x_avg + x_max)


class LightChannelAttn(ChannelAttn):
    """One MLP pass over the average of the avg- and max-pooled descriptors (always a sigmoid gate, as timm)."""

    def forward(self, x):
        x_pool = 0.5 * x.mean((2, 3), keepdim=True) + 0.5 * x.amax((2, 3), keepdim=True)
        return x * flow.sigmoid(self.fc2(self.act(self.fc1(x_pool))))


class SpatialAttn(nn.Module):
    """Conv + BN over the [mean, max] channel-pooled maps, gated."""

    def __init__(self, kernel_size=7, gate_layer="sigmoid"):
        super().__init__()
        self.conv = ConvNormAct(2, 1, kernel_size, apply_act=False)
        self.gate = create_act_layer(gate_layer)

    def forward(self, x):
        x_attn = flow.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        return x * self.gate(self.conv(x_attn))


class LightSpatialAttn(nn.Module):
    """Conv + BN over the average of the mean- and max-pooled channel maps, gated."""

    def __init__(self, kernel_size=7, gate_layer="sigmoid"):
        super().__init__()
        self.conv = ConvNormAct(1, 1, kernel_size, apply_act=False)
        self.gate = create_act_layer(gate_layer)

    def forward(self, x):
        x_attn = 0.5 * x.mean(dim=1, keepdim=True) + 0.5 * x.amax(dim=1, keepdim=True)
        return x * self.gate(self.conv(x_attn))


class CbamModule(nn.Module):
    def __init__(self, channels, rd_ratio=1 / 16, rd_channels=None, rd_divisor=1, spatial_kernel_size=7,
                 act_layer=nn.ReLU, gate_layer="sigmoid", mlp_bias=False):
        super().__init__()
        self.channel = ChannelAttn(channels, rd_ratio=rd_ratio, rd_channels=rd_channels, rd_divisor=rd_divisor,
                                   act_layer=act_layer, gate_layer=gate_layer, mlp_bias=mlp_bias)
        self.spatial = SpatialAttn(spatial_kernel_size, gate_layer=gate_layer)

    def forward(self, x):
        return self.spatial(self.channel(x))


class LightCbamModule(nn.Module):
    def __init__(self, channels, rd_ratio=1 / 16, rd_channels=None, rd_divisor=1, spatial_kernel_size=7,
                 act_layer=nn.ReLU, gate_layer="sigmoid", mlp_bias=False):
        super().__init__()
        self.channel = LightChannelAttn(channels, rd_ratio=rd_ratio, rd_channels=rd_channels,
                                        rd_divisor=rd_divisor, act_layer=act_layer, gate_layer=gate_layer,
                                        mlp_bias=mlp_bias)
        # timm's light spatial branch keeps its default sigmoid gate whatever gate_layer is
        self.spatial = LightSpatialAttn(spatial_kernel_size)

    def forward(self, x):
        return self.spatial(self.channel(x))
