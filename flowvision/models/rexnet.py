"""ReXNet (Han et al., "Rethinking Channel Dimensions for Efficient Model Design", CVPR 2021).

Inverted-residual blocks whose widths grow linearly with depth; timm's module and parameter names. The
original flowvision names ``rexnetv1_1_0 ... rexnetv1_3_0`` are aliases of timm's ``rexnet_100 ... rexnet_300``.
"""
from functools import partial
from math import ceil

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import ClassifierHead, ConvNormAct, DropPath, SEModule, create_act_layer, make_divisible

from ._builder import build_model_with_cfg
from ._contract import HeadModuleContract, check_input_channels
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["RexNet"]

SEWithNorm = partial(SEModule, norm_layer=nn.BatchNorm2d)


class LinearBottleneck(nn.Module):
    """[1x1 expand] -> 3x3 depthwise -> [SE] -> ReLU6 -> 1x1 project; the shortcut adds to the first in_chs
    channels only (the output may be wider than the input)."""

    def __init__(self, in_chs, out_chs, stride, dilation=(1, 1), exp_ratio=1.0, se_ratio=0.0, ch_div=1,
                 act_layer="swish", dw_act_layer="relu6", drop_path=None):
        super().__init__()
        self.use_shortcut = stride == 1 and dilation[0] == dilation[1] and in_chs <= out_chs
        self.in_channels = in_chs
        self.out_channels = out_chs
        if exp_ratio != 1.0:
            dw_chs = make_divisible(round(in_chs * exp_ratio), divisor=ch_div)
            self.conv_exp = ConvNormAct(in_chs, dw_chs, act_layer=act_layer)
        else:
            dw_chs = in_chs
            self.conv_exp = None
        self.conv_dw = ConvNormAct(dw_chs, dw_chs, kernel_size=3, stride=stride, dilation=dilation[0],
                                   groups=dw_chs, apply_act=False)
        self.se = SEWithNorm(dw_chs, rd_channels=make_divisible(int(dw_chs * se_ratio), ch_div)) \
            if se_ratio > 0 else None
        self.act_dw = create_act_layer(dw_act_layer)
        self.conv_pwl = ConvNormAct(dw_chs, out_chs, 1, apply_act=False)
        self.drop_path = drop_path

    def forward(self, x):
        shortcut = x
        if self.conv_exp is not None:
            x = self.conv_exp(x)
        x = self.conv_dw(x)
        if self.se is not None:
            x = self.se(x)
        x = self.conv_pwl(self.act_dw(x))
        if self.use_shortcut:
            if self.drop_path is not None:
                x = self.drop_path(x)
            x = flow.cat([x[:, :self.in_channels] + shortcut, x[:, self.in_channels:]], dim=1)
        return x


def _block_cfg(width_mult=1.0, depth_mult=1.0, initial_chs=16, final_chs=180, se_ratio=0.0, ch_div=1):
    """(out channels, expansion, stride, SE ratio) per block: widths grow linearly over the blocks."""
    layers = [ceil(n * depth_mult) for n in (1, 2, 2, 3, 3, 5)]
    strides = sum([[s] + [1] * (n - 1) for s, n in zip((1, 2, 2, 2, 1, 2), layers)], [])
    exp_ratios = [1] * layers[0] + [6] * sum(layers[1:])
    n_blocks = sum(layers)
    base_chs = initial_chs / width_mult if width_mult < 1.0 else initial_chs
    out_chs = []
    for _ in range(n_blocks):
        out_chs.append(make_divisible(round(base_chs * width_mult), divisor=ch_div))
        base_chs += final_chs / float(n_blocks)
    se_ratios = [0.0] * (layers[0] + layers[1]) + [se_ratio] * sum(layers[2:])
    return list(zip(out_chs, exp_ratios, strides, se_ratios))


def _build_blocks(block_cfg, prev_chs, width_mult, ch_div=1, output_stride=32, act_layer="swish",
                  dw_act_layer="relu6", drop_path_rate=0.0):
    feat_chs = [prev_chs]
    feature_info = []
    curr_stride = 2
    dilation = 1
    features = []
    for block_idx, (chs, exp_ratio, stride, se_ratio) in enumerate(block_cfg):
        next_dilation = dilation
        if stride > 1:
            fname = "stem" if block_idx == 0 else f"features.{block_idx - 1}"
            feature_info.append(dict(num_chs=feat_chs[-1], reduction=curr_stride, module=fname))
            if curr_stride >= output_stride:
                next_dilation = dilation * stride
                stride = 1
        dpr = drop_path_rate * block_idx / (len(block_cfg) - 1)
        features.append(LinearBottleneck(prev_chs, chs, stride, dilation=(dilation, next_dilation),
                                         exp_ratio=exp_ratio, se_ratio=se_ratio, ch_div=ch_div, act_layer=act_layer,
                                         dw_act_layer=dw_act_layer, drop_path=DropPath(dpr) if dpr > 0 else None))
        curr_stride *= stride
        dilation = next_dilation
        prev_chs = chs
        feat_chs.append(chs)
    pen_chs = make_divisible(1280 * width_mult, divisor=ch_div)
    feature_info.append(dict(num_chs=feat_chs[-1], reduction=curr_stride, module=f"features.{len(features) - 1}"))
    features.append(ConvNormAct(prev_chs, pen_chs, act_layer=act_layer))
    return features, feature_info


class RexNet(HeadModuleContract, nn.Module):
    """ReXNet.

    Args:
        in_chans, num_classes, global_pool: input channels, classes (0: no classifier), pooling type.
        output_stride: 32, 16 or 8 (later strides become dilations).
        initial_chs, final_chs: width of the first block and the width added over all blocks.
        width_mult, depth_mult: channel / depth multipliers. se_ratio: SE width ratio.
        ch_div: channel rounding divisor (8 for the rounded 'rexnetr' variants).
        act_layer, dw_act_layer: activations after the expansion and after the depthwise conv.
        drop_rate, drop_path_rate: classifier dropout and stochastic depth.
    """

    def __init__(self, in_chans=3, num_classes=1000, global_pool="avg", output_stride=32, initial_chs=16,
                 final_chs=180, width_mult=1.0, depth_mult=1.0, se_ratio=1 / 12.0, ch_div=1, act_layer="swish",
                 dw_act_layer="relu6", drop_rate=0.2, drop_path_rate=0.0):
        super().__init__()
        if output_stride not in (32, 16, 8):
            raise ValueError(f"output_stride must be 32, 16 or 8, got {output_stride}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        stem_base_chs = 32 / width_mult if width_mult < 1.0 else 32
        stem_chs = make_divisible(round(stem_base_chs * width_mult), divisor=ch_div)
        self.stem = ConvNormAct(in_chans, stem_chs, 3, stride=2, act_layer=act_layer)
        block_cfg = _block_cfg(width_mult, depth_mult, initial_chs, final_chs, se_ratio, ch_div)
        features, self.feature_info = _build_blocks(block_cfg, stem_chs, width_mult, ch_div, output_stride,
                                                    act_layer, dw_act_layer, drop_path_rate)
        self.num_features = self.head_hidden_size = features[-1].out_channels
        self.features = nn.Sequential(*features)
        self.head = ClassifierHead(self.num_features, num_classes, global_pool, drop_rate)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^stem", blocks=r"^features\.(\d+)")

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.features, self.stem(x))


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stem.conv", classifier="head.fc", license="mit"), **kwargs}


_SW = dict(hf_hub_id="timm/", crop_pct=0.95, test_crop_pct=1.0, test_input_size=(3, 288, 288), license="apache-2.0")
default_cfgs = generate_default_cfgs({
    "rexnet_100.nav_in1k": _cfg(hf_hub_id="timm/"),
    "rexnet_130.nav_in1k": _cfg(hf_hub_id="timm/"),
    "rexnet_150.nav_in1k": _cfg(hf_hub_id="timm/"),
    "rexnet_200.nav_in1k": _cfg(hf_hub_id="timm/"),
    "rexnet_300.nav_in1k": _cfg(hf_hub_id="timm/"),
    "rexnetr_100.untrained": _cfg(),
    "rexnetr_130.untrained": _cfg(),
    "rexnetr_150.untrained": _cfg(),
    "rexnetr_200.sw_in12k_ft_in1k": _cfg(**_SW),
    "rexnetr_300.sw_in12k_ft_in1k": _cfg(**_SW),
    "rexnetr_200.sw_in12k": _cfg(num_classes=11821, **_SW),
    "rexnetr_300.sw_in12k": _cfg(num_classes=11821, **_SW),
})


def _rex(variant, pretrained, kwargs, **args):
    return build_model_with_cfg(RexNet, variant, pretrained, **{**args, **kwargs})


@register_model
def rexnet_100(pretrained=False, **kwargs):
    """ReXNet 1.0x."""
    return _rex("rexnet_100", pretrained, kwargs)


@register_model
def rexnet_130(pretrained=False, **kwargs):
    """ReXNet 1.3x."""
    return _rex("rexnet_130", pretrained, kwargs, width_mult=1.3)


@register_model
def rexnet_150(pretrained=False, **kwargs):
    """ReXNet 1.5x."""
    return _rex("rexnet_150", pretrained, kwargs, width_mult=1.5)


@register_model
def rexnet_200(pretrained=False, **kwargs):
    """ReXNet 2.0x."""
    return _rex("rexnet_200", pretrained, kwargs, width_mult=2.0)


@register_model
def rexnet_300(pretrained=False, **kwargs):
    """ReXNet 3.0x."""
    return _rex("rexnet_300", pretrained, kwargs, width_mult=3.0)


@register_model
def rexnetr_100(pretrained=False, **kwargs):
    """ReXNet 1.0x, channels rounded to multiples of 8."""
    return _rex("rexnetr_100", pretrained, kwargs, ch_div=8)


@register_model
def rexnetr_130(pretrained=False, **kwargs):
    """ReXNet 1.3x, channels rounded to multiples of 8."""
    return _rex("rexnetr_130", pretrained, kwargs, width_mult=1.3, ch_div=8)


@register_model
def rexnetr_150(pretrained=False, **kwargs):
    """ReXNet 1.5x, channels rounded to multiples of 8."""
    return _rex("rexnetr_150", pretrained, kwargs, width_mult=1.5, ch_div=8)


@register_model
def rexnetr_200(pretrained=False, **kwargs):
    """ReXNet 2.0x, channels rounded to multiples of 8."""
    return _rex("rexnetr_200", pretrained, kwargs, width_mult=2.0, ch_div=8)


@register_model
def rexnetr_300(pretrained=False, **kwargs):
    """ReXNet 3.0x, channels rounded to multiples of 16."""
    return _rex("rexnetr_300", pretrained, kwargs, width_mult=3.0, ch_div=16)


for _orig, _timm in (("rexnetv1_1_0", "rexnet_100"), ("rexnetv1_1_3", "rexnet_130"), ("rexnetv1_1_5", "rexnet_150"),
                     ("rexnetv1_2_0", "rexnet_200"), ("rexnetv1_3_0", "rexnet_300")):
    register_model_alias(_orig, _timm)
