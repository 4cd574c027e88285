"""Efficient Channel Attention (ECA-Net, arXiv:1910.03151) and its circular-padding variant (timm names)."""
import math

from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from .activations import create_act_layer
from .helpers import make_divisible


def _eca_kernel_size(channels, kernel_size, gamma, beta):
    """The paper's adaptive kernel size: odd, >= 3, growing with log2(channels); ``kernel_size`` if unknown."""
    if channels is not None:
        t = int(abs(math.log(channels, 2) + beta) / gamma)
        kernel_size = max(t if t % 2 else t + 1, 3)
    if kernel_size % 2 != 1:
        raise ValueError(f"ECA kernel_size must be odd, got {kernel_size}")
    return kernel_size


class EcaModule(nn.Module):
    """Channel gate from a 1D conv over the pooled channel descriptor (no dimensionality reduction).

    ``use_mlp=True`` (timm's 'ecam') puts a 1x1 conv + activation before the kernel-size conv.
    """

    def __init__(self, channels=None, kernel_size=3, gamma=2, beta=1, act_layer=None, gate_layer="sigmoid",
                 rd_ratio=1 / 8, rd_channels=None, rd_divisor=8, use_mlp=False):
        super().__init__()
        kernel_size = _eca_kernel_size(channels, kernel_size, gamma, beta)
        padding = (kernel_size - 1) // 2
        if use_mlp:
            if channels is None:
                raise ValueError("EcaModule(use_mlp=True) needs channels")
            rd_channels = rd_channels or make_divisible(channels * rd_ratio, divisor=rd_divisor)
            self.conv = nn.Conv1d(1, rd_channels, kernel_size=1, padding=0, bias=True)
            self.act = create_act_layer(act_layer or nn.ReLU)
            self.conv2 = nn.Conv1d(rd_channels, 1, kernel_size=kernel_size, padding=padding, bias=True)
        else:
            self.conv = nn.Conv1d(1, 1, kernel_size=kernel_size, padding=padding, bias=False)
            self.act = None
            self.conv2 = None
        self.gate = create_act_layer(gate_layer)

    def forward(self, x):
        y = x.mean((2, 3)).reshape(x.shape[0], 1, -1)  # channels become the 1D "length" axis
        y = self.conv(y)
        if self.conv2 is not None:
            y = self.conv2(self.act(y))
        return x * self.gate(y).reshape(x.shape[0], -1, 1, 1)


class CecaModule(nn.Module):
    """ECA with circular padding: channels have no edges, so the first and last channels see each other."""

    def __init__(self, channels=None, kernel_size=3, gamma=2, beta=1, act_layer=None, gate_layer="sigmoid"):
        super().__init__()
        kernel_size = _eca_kernel_size(channels, kernel_size, gamma, beta)
        self.padding = (kernel_size - 1) // 2
        # timm gives the conv a bias only when an act_layer is asked for (and never applies the act)
        self.conv = nn.Conv1d(1, 1, kernel_size=kernel_size, padding=0, bias=act_layer is not None)
        self.gate = create_act_layer(gate_layer)

    def forward(self, x):
        y = x.mean((2, 3)).reshape(x.shape[0], 1, -1)
        y = F.pad(y, (self.padding, self.padding), mode="circular")
        y = self.conv(y)
        return x * self.gate(y).reshape(x.shape[0], -1, 1, 1)


EfficientChannelAttn = EcaModule
CircularEfficientChannelAttn = CecaModule
