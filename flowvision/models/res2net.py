"""Res2Net / Res2NeXt: ResNet whose bottleneck splits its 3x3 stage into ``scale`` hierarchical groups.

Gao et al., "Res2Net: A New Multi-scale Backbone Architecture" (TPAMI 2019). The network is timm's ``ResNet``
with the ``Bottle2neck`` block, so parameter names equal timm's. The original flowvision names
(``res2net50_26w_4s`` ...) are timm's names.
"""
import math

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import create_attn

from ._builder import build_model_with_cfg
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model
from .resnet import ResNet, ResidualBlockBase

__all__ = ["Bottle2neck", "res2_scales"]


def res2_scales(block, x):
    """The hierarchical 3x3 stage of a Res2Net block: ``x`` split into ``block.width``-channel groups, each
    group after the first convolved together with the previous group's output (independently in the first,
    strided block of a stage, whose last group is average-pooled instead)."""
    spx = flow.split(x, block.width, 1)
    spo = []
    sp = spx[0]
    for i, (conv, bn) in enumerate(zip(block.convs, block.bns)):
        sp = spx[i] if i == 0 or block.is_first else sp + spx[i]
        sp = block.relu(bn(conv(sp)))
        spo.append(sp)
    if block.scale > 1:
        spo.append(block.pool(spx[-1]) if block.pool is not None else spx[-1])
    return flow.cat(spo, 1)


class Bottle2neck(ResidualBlockBase):
    """1x1 conv -> ``scale`` width-groups, each (after the first) fed the previous group's 3x3 output -> 1x1.

    The first block of a stage (stride or projection) processes the groups independently and average-pools
    the last, un-convolved group so its resolution matches.
    """
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, cardinality=1, base_width=26, scale=4,
                 dilation=1, first_dilation=None, act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, attn_layer=None,
                 drop_block=None, drop_path=None, reduce_first=1):
        super().__init__()
        self.scale = scale
        self.is_first = stride > 1 or downsample is not None
        self.num_scales = max(1, scale - 1)
        width = int(math.floor(planes * (base_width / 64.0))) * cardinality
        self.width = width
        outplanes = planes * self.expansion
        first_dilation = first_dilation or dilation
        self.conv1 = nn.Conv2d(inplanes, width * scale, 1, bias=False)
        self.bn1 = norm_layer(width * scale)
        self.convs = nn.ModuleList([
            nn.Conv2d(width, width, 3, stride=stride, padding=first_dilation, dilation=first_dilation,
                      groups=cardinality, bias=False) for _ in range(self.num_scales)])
        self.bns = nn.ModuleList([norm_layer(width) for _ in range(self.num_scales)])
        self.drop_block = drop_block() if drop_block is not None else nn.Identity()
        self.pool = nn.AvgPool2d(3, stride=stride, padding=1) if self.is_first else None
        self.conv3 = nn.Conv2d(width * scale, outplanes, 1, bias=False)
        self.bn3 = norm_layer(outplanes)
        self.se = create_attn(attn_layer, outplanes)
        self.relu = act_layer(inplace=True)
        self.downsample = downsample
        self.drop_path = drop_path

    def forward(self, x):
        out = self.bn3(self.conv3(self.drop_block(res2_scales(self, self.relu(self.bn1(self.conv1(x)))))))
        return self.residual(out, x, self.relu)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv1", classifier="fc", license="unknown", hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    "res2net50_26w_4s.in1k": _cfg(),
    "res2net50_48w_2s.in1k": _cfg(),
    "res2net50_14w_8s.in1k": _cfg(),
    "res2net50_26w_6s.in1k": _cfg(),
    "res2net50_26w_8s.in1k": _cfg(),
    "res2net101_26w_4s.in1k": _cfg(),
    "res2next50.in1k": _cfg(),
    "res2net50d.in1k": _cfg(first_conv="conv1.0"),
    "res2net101d.in1k": _cfg(first_conv="conv1.0"),
})

_DEEP = dict(stem_type="deep", avg_down=True, stem_width=32)


def _r2(variant, pretrained, kwargs, layers=(3, 4, 6, 3), base_width=26, scale=4, **args):
    args = dict(block=Bottle2neck, layers=layers, base_width=base_width, block_args=dict(scale=scale), **args)
    return build_model_with_cfg(ResNet, variant, pretrained, **{**args, **kwargs})


@register_model
def res2net50_26w_4s(pretrained=False, **kwargs):
    """Res2Net-50, width 26, scale 4."""
    return _r2("res2net50_26w_4s", pretrained, kwargs)


@register_model
def res2net101_26w_4s(pretrained=False, **kwargs):
    """Res2Net-101, width 26, scale 4."""
    return _r2("res2net101_26w_4s", pretrained, kwargs, layers=(3, 4, 23, 3))


@register_model
def res2net50_26w_6s(pretrained=False, **kwargs):
    """Res2Net-50, width 26, scale 6."""
    return _r2("res2net50_26w_6s", pretrained, kwargs, scale=6)


@register_model
def res2net50_26w_8s(pretrained=False, **kwargs):
    """Res2Net-50, width 26, scale 8."""
    return _r2("res2net50_26w_8s", pretrained, kwargs, scale=8)


@register_model
def res2net50_48w_2s(pretrained=False, **kwargs):
    """Res2Net-50, width 48, scale 2."""
    return _r2("res2net50_48w_2s", pretrained, kwargs, base_width=48, scale=2)


@register_model
def res2net50_14w_8s(pretrained=False, **kwargs):
    """Res2Net-50, width 14, scale 8."""
    return _r2("res2net50_14w_8s", pretrained, kwargs, base_width=14, scale=8)


@register_model
def res2next50(pretrained=False, **kwargs):
    """Res2NeXt-50: cardinality 8, width 4, scale 4."""
    return _r2("res2next50", pretrained, kwargs, base_width=4, cardinality=8)


@register_model
def res2net50d(pretrained=False, **kwargs):
    """Res2Net-50 with the deep stem and average-pool downsampling."""
    return _r2("res2net50d", pretrained, kwargs, **_DEEP)


@register_model
def res2net101d(pretrained=False, **kwargs):
    """Res2Net-101 with the deep stem and average-pool downsampling."""
    return _r2("res2net101d", pretrained, kwargs, layers=(3, 4, 23, 3), **_DEEP)
