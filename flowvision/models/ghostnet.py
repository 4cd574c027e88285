"""GhostNet (v1, v2): MobileNet-style blocks whose 1x1 convs make half their maps with a cheap depthwise conv.

Han et al., "GhostNet: More Features from Cheap Operations" (CVPR 2020); Tang et al., "GhostNetV2: Enhance
Cheap Operation with Long-Range Attention" (NeurIPS 2022). timm's module and parameter names; the original
flowvision name ``ghostnet`` is an alias of ``ghostnet_100``.
"""
import math
from functools import partial

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import SelectAdaptivePool2d, SqueezeExcite, make_divisible

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none, linear_head
from ._efficientnet_blocks import ConvBnAct
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["GhostNet"]

_SE_LAYER = partial(SqueezeExcite, gate_layer="hard_sigmoid", rd_round_fn=partial(make_divisible, divisor=4))


def _conv_bn(in_chs, out_chs, kernel_size, stride=1, groups=1, act=True, padding=None):
    padding = kernel_size // 2 if padding is None else padding
    layers = [nn.Conv2d(in_chs, out_chs, kernel_size, stride, padding, groups=groups, bias=False),
              nn.BatchNorm2d(out_chs)]
    return layers + [nn.ReLU(inplace=True)] if act else layers


class GhostModule(nn.Module):
    """A 1x1 conv making ``out/ratio`` maps, a depthwise conv deriving the rest from them, concatenated.

    With ``mode='attn'`` (GhostNetV2) the result is gated by a DFC attention map computed at half resolution
    (a 1x1 conv, then 1x5 and 5x1 depthwise convs) and upsampled (nearest).
    """

    def __init__(self, in_chs, out_chs, kernel_size=1, ratio=2, dw_size=3, stride=1, use_act=True, mode="original"):
        super().__init__()
        self.out_chs = out_chs
        self.mode = mode
        init_chs = math.ceil(out_chs / ratio)
        new_chs = init_chs * (ratio - 1)
        self.primary_conv = nn.Sequential(*_conv_bn(in_chs, init_chs, kernel_size, stride, act=use_act))
        self.cheap_operation = nn.Sequential(*_conv_bn(init_chs, new_chs, dw_size, 1, groups=init_chs,
                                                       act=use_act))
        if mode == "attn":
            self.short_conv = nn.Sequential(
                *_conv_bn(in_chs, out_chs, kernel_size, stride, act=False),
                *_conv_bn(out_chs, out_chs, (1, 5), groups=out_chs, act=False, padding=(0, 2)),
                *_conv_bn(out_chs, out_chs, (5, 1), groups=out_chs, act=False, padding=(2, 0)))

    def forward(self, x):
        x1 = self.primary_conv(x)
        out = flow.cat([x1, self.cheap_operation(x1)], dim=1)[:, :self.out_chs]
        if self.mode == "attn":
            res = self.short_conv(F.avg_pool2d(x, kernel_size=2, stride=2))
            out = out * F.interpolate(res.sigmoid(), size=(out.shape[-2], out.shape[-1]), mode="nearest")
        return out


class GhostBottleneck(nn.Module):
    """Ghost module (expand) -> [strided depthwise conv] -> [SE] -> ghost module (project), plus shortcut."""

    def __init__(self, in_chs, mid_chs, out_chs, dw_kernel_size=3, stride=1, se_ratio=0.0, mode="original"):
        super().__init__()
        self.stride = stride
        self.ghost1 = GhostModule(in_chs, mid_chs, mode=mode)
        if stride > 1:
            self.conv_dw = nn.Conv2d(mid_chs, mid_chs, dw_kernel_size, stride=stride,
                                     padding=(dw_kernel_size - 1) // 2, groups=mid_chs, bias=False)
            self.bn_dw = nn.BatchNorm2d(mid_chs)
        else:
            self.conv_dw = None
            self.bn_dw = None
        self.se = _SE_LAYER(mid_chs, rd_ratio=se_ratio) if se_ratio else None
        self.ghost2 = GhostModule(mid_chs, out_chs, use_act=False)
        if in_chs == out_chs and stride == 1:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                *_conv_bn(in_chs, in_chs, dw_kernel_size, stride, groups=in_chs, act=False,
                          padding=(dw_kernel_size - 1) // 2),
                *_conv_bn(in_chs, out_chs, 1, act=False))

    def forward(self, x):
        out = self.ghost1(x)
        if self.conv_dw is not None:
            out = self.bn_dw(self.conv_dw(out))
        if self.se is not None:
            out = self.se(out)
        return self.ghost2(out) + self.shortcut(x)


# k, expansion, out channels, SE ratio, stride -- per stage (the paper's Table 1)
_GHOST_CFGS = [
    [[3, 16, 16, 0, 1]],
    [[3, 48, 24, 0, 2]], [[3, 72, 24, 0, 1]],
    [[5, 72, 40, 0.25, 2]], [[5, 120, 40, 0.25, 1]],
    [[3, 240, 80, 0, 2]],
    [[3, 200, 80, 0, 1], [3, 184, 80, 0, 1], [3, 184, 80, 0, 1], [3, 480, 112, 0.25, 1], [3, 672, 112, 0.25, 1]],
    [[5, 672, 160, 0.25, 2]],
    [[5, 960, 160, 0, 1], [5, 960, 160, 0.25, 1], [5, 960, 160, 0, 1], [5, 960, 160, 0.25, 1]],
]


class GhostNet(ClassifierContract, nn.Module):
    """GhostNet.

    Args:
        cfgs: per stage, a list of (kernel, expansion, out channels, SE ratio, stride) blocks.
        num_classes: classes (0: no classifier). width: channel multiplier. in_chans: input channels.
        global_pool: pooling type before the 1280-wide 1x1 head conv. drop_rate: dropout before the classifier.
        version: 'v1' or 'v2' (DFC attention in the expansion ghost modules from the third block on).
    """
    head_attr = "classifier"

    def __init__(self, cfgs=_GHOST_CFGS, num_classes=1000, width=1.0, in_chans=3, output_stride=32,
                 global_pool="avg", drop_rate=0.2, version="v1"):
        super().__init__()
        if output_stride != 32:
            raise ValueError("GhostNet supports only output_stride=32 (no dilation)")
        if version not in ("v1", "v2"):
            raise ValueError(f"version must be 'v1' or 'v2', got {version!r}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        stem_chs = make_divisible(16 * width, 4)
        self.feature_info = [dict(num_chs=stem_chs, reduction=2, module="conv_stem")]
        self.conv_stem = nn.Conv2d(in_chans, stem_chs, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(stem_chs)
        self.act1 = nn.ReLU(inplace=True)
        prev_chs = stem_chs
        stages = []
        layer_idx = 0
        net_stride = 2
        for stage_idx, cfg in enumerate(cfgs):
            layers = []
            s = 1
            for k, exp_size, c, se_ratio, s in cfg:
                out_chs = make_divisible(c * width, 4)
                mid_chs = make_divisible(exp_size * width, 4)
                mode = "attn" if version == "v2" and layer_idx > 1 else "original"
                layers.append(GhostBottleneck(prev_chs, mid_chs, out_chs, k, s, se_ratio=se_ratio, mode=mode))
                prev_chs = out_chs
                layer_idx += 1
            if s > 1:
                net_stride *= 2
                self.feature_info.append(dict(num_chs=prev_chs, reduction=net_stride, module=f"blocks.{stage_idx}"))
            stages.append(nn.Sequential(*layers))
        out_chs = make_divisible(exp_size * width, 4)
        stages.append(nn.Sequential(ConvBnAct(prev_chs, out_chs, 1)))
        self.blocks = nn.Sequential(*stages)
        self.num_features = out_chs
        self.head_hidden_size = 1280
        self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
        self.conv_head = nn.Conv2d(out_chs, self.head_hidden_size, 1, 1, 0, bias=True)
        self.act2 = nn.ReLU(inplace=True)
        self.flatten = nn.Flatten(1) if global_pool else nn.Identity()
        self.classifier = linear_head(self.head_hidden_size, num_classes)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^conv_stem|bn1", blocks=[(r"^blocks\.(\d+)" if coarse else r"^blocks\.(\d+)\.(\d+)",
                                                      None), (r"conv_head", (99999,))])

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            if global_pool not in ("", "avg", "max", "avgmax"):
                raise ValueError("GhostNet's head conv needs a pooling that keeps the width ('', avg, max, avgmax)")
            self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
            self.flatten = nn.Flatten(1) if global_pool else nn.Identity()
        self.classifier = linear_head(self.head_hidden_size, num_classes)

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.blocks, self.act1(self.bn1(self.conv_stem(x))))

    def forward_head(self, x, pre_logits=False):
        x = self.flatten(self.act2(self.conv_head(self.global_pool(x))))
        if self.drop_rate > 0.0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return x if pre_logits else self.classifier(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv_stem", classifier="classifier", license="apache-2.0"), **kwargs}


default_cfgs = generate_default_cfgs({
    "ghostnet_050.untrained": _cfg(),
    "ghostnet_100.in1k": _cfg(hf_hub_id="timm/"),
    "ghostnet_130.untrained": _cfg(),
    "ghostnetv2_100.in1k": _cfg(hf_hub_id="timm/"),
    "ghostnetv2_130.in1k": _cfg(hf_hub_id="timm/"),
    "ghostnetv2_160.in1k": _cfg(hf_hub_id="timm/"),
})


def _ghost(variant, pretrained, kwargs, width, version="v1"):
    return build_model_with_cfg(GhostNet, variant, pretrained, **{**dict(width=width, version=version), **kwargs})


@register_model
def ghostnet_050(pretrained=False, **kwargs):
    """GhostNet 0.5x."""
    return _ghost("ghostnet_050", pretrained, kwargs, 0.5)


@register_model
def ghostnet_100(pretrained=False, **kwargs):
    """GhostNet 1.0x."""
    return _ghost("ghostnet_100", pretrained, kwargs, 1.0)


@register_model
def ghostnet_130(pretrained=False, **kwargs):
    """GhostNet 1.3x."""
    return _ghost("ghostnet_130", pretrained, kwargs, 1.3)


@register_model
def ghostnetv2_100(pretrained=False, **kwargs):
    """GhostNetV2 1.0x."""
    return _ghost("ghostnetv2_100", pretrained, kwargs, 1.0, "v2")


@register_model
def ghostnetv2_130(pretrained=False, **kwargs):
    """GhostNetV2 1.3x."""
    return _ghost("ghostnetv2_130", pretrained, kwargs, 1.3, "v2")


@register_model
def ghostnetv2_160(pretrained=False, **kwargs):
    """GhostNetV2 1.6x."""
    return _ghost("ghostnetv2_160", pretrained, kwargs, 1.6, "v2")


register_model_alias("ghostnet", "ghostnet_100")
