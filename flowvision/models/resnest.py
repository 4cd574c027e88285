"""ResNeSt: ResNet with split-attention bottlenecks (Zhang et al., "ResNeSt: Split-Attention Networks", 2020).

timm's ``ResNet`` with ``ResNestBottleneck``, so parameter names equal timm's. The original flowvision names
``resnest50/101/200/269`` are aliases of timm's ``resnest50d/101e/200e/269e`` (the same networks).
"""
from flowvision.backend import nn
from flowvision.layers.split_attn import SplitAttn

from ._builder import build_model_with_cfg
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias
from .resnet import ResNet, ResidualBlockBase

__all__ = ["ResNestBottleneck"]


class ResNestBottleneck(ResidualBlockBase):
    """1x1 -> split-attention 3x3 (radix >= 1) or plain 3x3 -> 1x1; stride by average pooling when ``avd``."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, radix=1, cardinality=1, base_width=64,
                 avd=False, avd_first=False, is_first=False, reduce_first=1, dilation=1, first_dilation=None,
                 act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, attn_layer=None, drop_block=None, drop_path=None):
        super().__init__()
        if reduce_first != 1 or attn_layer is not None:
            raise ValueError("ResNestBottleneck supports neither reduce_first != 1 nor attn_layer")
        group_width = int(planes * (base_width / 64.0)) * cardinality
        first_dilation = first_dilation or dilation
        avd_stride = stride if avd and (stride > 1 or is_first) else 0
        if avd_stride:
            stride = 1
        self.radix = radix
        self.conv1 = nn.Conv2d(inplanes, group_width, 1, bias=False)
        self.bn1 = norm_layer(group_width)
        self.act1 = act_layer(inplace=True)
        self.avd_first = nn.AvgPool2d(3, avd_stride, padding=1) if avd_stride > 0 and avd_first else None
        if radix >= 1:
            self.conv2 = SplitAttn(group_width, group_width, kernel_size=3, stride=stride, padding=first_dilation,
                                   dilation=first_dilation, groups=cardinality, radix=radix, norm_layer=norm_layer,
                                   drop_layer=drop_block)
            self.bn2 = nn.Identity()
            self.drop_block = nn.Identity()
            self.act2 = nn.Identity()
        else:
            self.conv2 = nn.Conv2d(group_width, group_width, 3, stride=stride, padding=first_dilation,
                                   dilation=first_dilation, groups=cardinality, bias=False)
            self.bn2 = norm_layer(group_width)
            self.drop_block = drop_block() if drop_block is not None else nn.Identity()
            self.act2 = act_layer(inplace=True)
        self.avd_last = nn.AvgPool2d(3, avd_stride, padding=1) if avd_stride > 0 and not avd_first else None
        self.conv3 = nn.Conv2d(group_width, planes * 4, 1, bias=False)
        self.bn3 = norm_layer(planes * 4)
        self.act3 = act_layer(inplace=True)
        self.downsample = downsample
        self.drop_path = drop_path

    def forward(self, x):
        out = self.act1(self.bn1(self.conv1(x)))
        if self.avd_first is not None:
            out = self.avd_first(out)
        out = self.act2(self.drop_block(self.bn2(self.conv2(out))))
        if self.avd_last is not None:
            out = self.avd_last(out)
        return self.residual(self.bn3(self.conv3(out)), x, self.act3)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv1.0", classifier="fc", license="apache-2.0", hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    "resnest14d.gluon_in1k": _cfg(),
    "resnest26d.gluon_in1k": _cfg(),
    "resnest50d.in1k": _cfg(),
    "resnest101e.in1k": _cfg(input_size=(3, 256, 256), pool_size=(8, 8)),
    "resnest200e.in1k": _cfg(input_size=(3, 320, 320), pool_size=(10, 10), crop_pct=0.909,
                             interpolation="bicubic"),
    "resnest269e.in1k": _cfg(input_size=(3, 416, 416), pool_size=(13, 13), crop_pct=0.928,
                             interpolation="bicubic"),
    "resnest50d_4s2x40d.in1k": _cfg(interpolation="bicubic"),
    "resnest50d_1s4x24d.in1k": _cfg(interpolation="bicubic"),
})


def _rs(variant, pretrained, kwargs, layers, stem_width=32, base_width=64, cardinality=1, radix=2,
        avd_first=False):
    args = dict(block=ResNestBottleneck, layers=layers, stem_type="deep", stem_width=stem_width, avg_down=True,
                base_width=base_width, cardinality=cardinality,
                block_args=dict(radix=radix, avd=True, avd_first=avd_first))
    return build_model_with_cfg(ResNet, variant, pretrained, **{**args, **kwargs})


@register_model
def resnest14d(pretrained=False, **kwargs):
    """ResNeSt-14 (deep stem of width 32, avg-pool downsample)."""
    return _rs("resnest14d", pretrained, kwargs, (1, 1, 1, 1))


@register_model
def resnest26d(pretrained=False, **kwargs):
    """ResNeSt-26."""
    return _rs("resnest26d", pretrained, kwargs, (2, 2, 2, 2))


@register_model
def resnest50d(pretrained=False, **kwargs):
    """ResNeSt-50 (the paper's ResNeSt-50)."""
    return _rs("resnest50d", pretrained, kwargs, (3, 4, 6, 3))


@register_model
def resnest101e(pretrained=False, **kwargs):
    """ResNeSt-101 (deep stem of width 64)."""
    return _rs("resnest101e", pretrained, kwargs, (3, 4, 23, 3), stem_width=64)


@register_model
def resnest200e(pretrained=False, **kwargs):
    """ResNeSt-200."""
    return _rs("resnest200e", pretrained, kwargs, (3, 24, 36, 3), stem_width=64)


@register_model
def resnest269e(pretrained=False, **kwargs):
    """ResNeSt-269."""
    return _rs("resnest269e", pretrained, kwargs, (3, 30, 48, 8), stem_width=64)


@register_model
def resnest50d_4s2x40d(pretrained=False, **kwargs):
    """ResNeSt-50, radix 4, cardinality 2, width 40, pooling before the split-attention conv."""
    return _rs("resnest50d_4s2x40d", pretrained, kwargs, (3, 4, 6, 3), base_width=40, cardinality=2, radix=4,
               avd_first=True)


@register_model
def resnest50d_1s4x24d(pretrained=False, **kwargs):
    """ResNeSt-50, radix 1, cardinality 4, width 24, pooling before the split-attention conv."""
    return _rs("resnest50d_1s4x24d", pretrained, kwargs, (3, 4, 6, 3), base_width=24, cardinality=4, radix=1,
               avd_first=True)


for _orig, _timm in (("resnest50", "resnest50d"), ("resnest101", "resnest101e"), ("resnest200", "resnest200e"),
                     ("resnest269", "resnest269e")):
    register_model_alias(_orig, _timm)
