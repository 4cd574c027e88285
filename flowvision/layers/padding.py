"""TensorFlow-style 'same' padding and the conv factory used by EfficientNet-family models."""
import math

from flowvision.backend import nn
from flowvision.backend.nn import functional as F


def get_padding(kernel_size, stride=1, dilation=1):
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2


def is_static_pad(kernel_size, stride=1, dilation=1):
    return stride == 1 and (dilation * (kernel_size - 1)) % 2 == 0


def get_same_padding(x, kernel_size, stride, dilation):
    return max((math.ceil(x / stride) - 1) * stride + (kernel_size - 1) * dilation + 1 - x, 0)


def pad_same(x, kernel_size, stride, dilation=(1, 1), value=0.0):
    ih, iw = x.shape[-2:]
    pad_h = get_same_padding(ih, kernel_size[0], stride[0], dilation[0])
    pad_w = get_same_padding(iw, kernel_size[1], stride[1], dilation[1])
    if pad_h > 0 or pad_w > 0:
        x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2], value=value)
    return x


class Conv2dSame(nn.Conv2d):
    """Conv2d with TensorFlow 'SAME' padding computed from the input size (asymmetric when needed)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, 0, dilation, groups, bias)

    def forward(self, x):
        x = pad_same(x, self.kernel_size, self.stride, self.dilation)
        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


def get_padding_value(padding, kernel_size, stride=1, dilation=1):
    """(padding, dynamic): '' / 'same' / 'valid' / int -> a static padding or a dynamic-same flag."""
    dynamic = False
    if isinstance(padding, str):
        padding = padding.lower()
        if padding == "same":
            if is_static_pad(kernel_size, stride, dilation):
                padding = get_padding(kernel_size, stride, dilation)
            else:
                padding, dynamic = 0, True
        elif padding == "valid":
            padding = 0
        else:
            padding = get_padding(kernel_size, stride, dilation)
    return padding, dynamic


def create_conv2d(in_channels, out_channels, kernel_size, stride=1, padding="", dilation=1, depthwise=False,
                  groups=1, bias=False):
    """A Conv2d (or Conv2dSame for dynamic TF padding). ``padding=''`` is PyTorch-style symmetric."""
    groups = in_channels if depthwise else groups
    padding, dynamic = get_padding_value(padding, kernel_size, stride, dilation)
    cls = Conv2dSame if dynamic else nn.Conv2d
    return cls(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
               groups=groups, bias=bias)
