"""Blocks shared by EfficientNet, MobileNetV2 and MobileNetV3 (timm names: conv_pw/bn1/conv_dw/bn2/se/conv_pwl/bn3).

``norm_layer`` is a BatchNormAct2d factory taking ``act_layer``/``apply_act``; ``se_layer`` a SqueezeExcite
factory called with the SE input channels.
"""
from flowvision.backend import nn
from flowvision.layers import BatchNormAct2d, DropPath, create_conv2d, make_divisible

__all__ = ["DepthwiseSeparableConv", "InvertedResidual", "ConvBnAct"]


class ConvBnAct(nn.Module):
    """conv -> BN+act (+ residual only with ``skip=True``); MobileNetV3's final 1x1 'cn' block."""

    def __init__(self, in_chs, out_chs, kernel_size, stride=1, dilation=1, pad_type="", skip=False,
                 act_layer=nn.ReLU, norm_layer=BatchNormAct2d, drop_path_rate=0.0):
        super().__init__()
        self.has_skip = skip and stride == 1 and in_chs == out_chs
        self.conv = create_conv2d(in_chs, out_chs, kernel_size, stride=stride, dilation=dilation, padding=pad_type)
        self.bn1 = norm_layer(out_chs, act_layer=act_layer)
        self.aa = nn.Identity()
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.aa(self.bn1(self.conv(x)))
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


class DepthwiseSeparableConv(nn.Module):
    """dw conv -> BN+act -> (SE) -> pw conv -> BN (+ residual when shapes allow)."""

    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, dilation=1, pad_type="", noskip=False,
                 pw_act=False, act_layer=nn.ReLU, norm_layer=BatchNormAct2d, se_layer=None, drop_path_rate=0.0):
        super().__init__()
        self.has_skip = (stride == 1 and in_chs == out_chs) and not noskip
        self.conv_dw = create_conv2d(in_chs, in_chs, dw_kernel_size, stride=stride, dilation=dilation,
                                     padding=pad_type, depthwise=True)
        self.bn1 = norm_layer(in_chs, act_layer=act_layer)
        self.aa = nn.Identity()
        self.se = se_layer(in_chs, act_layer=act_layer) if se_layer else nn.Identity()
        self.conv_pw = create_conv2d(in_chs, out_chs, 1, padding=pad_type)
        self.bn2 = norm_layer(out_chs, act_layer=act_layer, apply_act=pw_act)
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.aa(self.bn1(self.conv_dw(x)))
        x = self.bn2(self.conv_pw(self.se(x)))
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


class InvertedResidual(nn.Module):
    """pw expand -> BN+act -> dw conv -> BN+act -> (SE) -> pw project -> BN (+ residual)."""

    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, dilation=1, pad_type="", noskip=False,
                 exp_ratio=1.0, act_layer=nn.ReLU, norm_layer=BatchNormAct2d, se_layer=None, drop_path_rate=0.0):
        super().__init__()
        mid_chs = make_divisible(in_chs * exp_ratio)
        self.has_skip = (in_chs == out_chs and stride == 1) and not noskip
        self.conv_pw = create_conv2d(in_chs, mid_chs, 1, padding=pad_type)
        self.bn1 = norm_layer(mid_chs, act_layer=act_layer)
        self.conv_dw = create_conv2d(mid_chs, mid_chs, dw_kernel_size, stride=stride, dilation=dilation,
                                     padding=pad_type, depthwise=True)
        self.bn2 = norm_layer(mid_chs, act_layer=act_layer)
        self.aa = nn.Identity()
        self.se = se_layer(mid_chs, act_layer=act_layer) if se_layer else nn.Identity()
        self.conv_pwl = create_conv2d(mid_chs, out_chs, 1, padding=pad_type)
        self.bn3 = norm_layer(out_chs, act_layer=act_layer, apply_act=False)
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.bn1(self.conv_pw(x))
        x = self.aa(self.bn2(self.conv_dw(x)))
        x = self.bn3(self.conv_pwl(self.se(x)))
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x
