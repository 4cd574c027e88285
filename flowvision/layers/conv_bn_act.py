"""Conv -> Norm -> Act block (timm names: conv, bn with act inside)."""
from flowvision.backend import nn

from .norm_act import BatchNormAct2d
from .padding import create_conv2d


class ConvNormAct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding="", dilation=1, groups=1,
                 bias=False, apply_act=True, act_layer=nn.ReLU, eps=1e-5, drop_layer=None):
        super().__init__()
        self.conv = create_conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                  dilation=dilation, groups=groups, bias=bias)
        self.bn = BatchNormAct2d(out_channels, eps=eps, apply_act=apply_act, act_layer=act_layer,
                                 drop_layer=drop_layer)

    @property
    def in_channels(self):
        return self.conv.in_channels

    @property
    def out_channels(self):
        return self.conv.out_channels

    def forward(self, x):
        return self.bn(self.conv(x))


ConvBnAct = ConvNormAct
