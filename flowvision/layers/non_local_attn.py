"""Spatial non-local block (Non-local Neural Networks, arXiv:1711.07971), timm's NonLocalAttn names."""
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from .helpers import make_divisible


class NonLocalAttn(nn.Module):
    """Embedded-Gaussian self-attention over all H*W positions, projected back and added (after BN) to x.

    The BN's affine params start at zero (timm), so a fresh block is the identity.
    """

    def __init__(self, in_channels, use_scale=True, rd_ratio=1 / 8, rd_channels=None, rd_divisor=8, **_):
        super().__init__()
        if rd_channels is None:
            rd_channels = make_divisible(in_channels * rd_ratio, divisor=rd_divisor)
        # timm scales by the *input* width (not the reduced one); kept for weight compatibility
        self.scale = in_channels ** -0.5 if use_scale else 1.0
        self.t = nn.Conv2d(in_channels, rd_channels, kernel_size=1, stride=1, bias=True)
        self.p = nn.Conv2d(in_channels, rd_channels, kernel_size=1, stride=1, bias=True)
        self.g = nn.Conv2d(in_channels, rd_channels, kernel_size=1, stride=1, bias=True)
        self.z = nn.Conv2d(rd_channels, in_channels, kernel_size=1, stride=1, bias=True)
        self.norm = nn.BatchNorm2d(in_channels)
        self.reset_parameters()

    def forward(self, x):
        shortcut = x
        t, p, g = self.t(x), self.p(x), self.g(x)
        B, C, H, W = t.shape
        t = t.reshape(B, C, H * W).permute(0, 2, 1)
        p = p.reshape(B, C, H * W)
        g = g.reshape(B, C, H * W).permute(0, 2, 1)
        att = F.softmax(flow.bmm(t, p) * self.scale, dim=2)  # (B, HW, HW)
        x = flow.bmm(att, g).permute(0, 2, 1).reshape(B, C, H, W)
        return self.norm(self.z(x)) + shortcut

    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0.0)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 0)
                nn.init.constant_(m.bias, 0)
