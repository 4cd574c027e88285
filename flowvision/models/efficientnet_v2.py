"""EfficientNetV2 S / M / L with torchvision's structure and parameter names (``features.N.M.block.K``,
``classifier.1``): FusedMBConv stages, then MBConv stages, BN eps 1e-3. torchvision-API only.

flowvision's timm-named EfficientNet family (``efficientnet.py``) keeps timm's names; these builders are the
torchvision ``efficientnet_v2_s/m/l`` so that torchvision's checkpoints load with ``strict=True``.
"""
import math
from functools import partial

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.layers import make_divisible
from flowvision.ops import Conv2dNormActivation, SqueezeExcitation, StochasticDepth

from ._api import load_weights, register_builder
from .tv_models import WEIGHTS, tv_prologue

__all__ = ["EfficientNetV2TV", "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"]


class MBConv(nn.Module):
    """[1x1 expand] -> depthwise kxk -> SE (squeeze = in/4, SiLU/sigmoid) -> 1x1 project; residual when it fits."""

    def __init__(self, expand_ratio, kernel, stride, in_chs, out_chs, sd_prob, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and in_chs == out_chs
        expanded = make_divisible(in_chs * expand_ratio, 8)
        layers = []
        if expanded != in_chs:
            layers.append(Conv2dNormActivation(in_chs, expanded, 1, norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel, stride, groups=expanded, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        layers.append(SqueezeExcitation(expanded, max(1, in_chs // 4), activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, out_chs, 1, norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(sd_prob, "row")
        self.out_channels = out_chs

    def forward(self, x):
        y = self.block(x)
        return self.stochastic_depth(y) + x if self.use_res_connect else y


class FusedMBConv(nn.Module):
    """kxk expand conv (or a single kxk conv when expand_ratio is 1) -> 1x1 project; no SE."""

    def __init__(self, expand_ratio, kernel, stride, in_chs, out_chs, sd_prob, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and in_chs == out_chs
        expanded = make_divisible(in_chs * expand_ratio, 8)
        if expanded != in_chs:
            layers = [Conv2dNormActivation(in_chs, expanded, kernel, stride, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU),
                      Conv2dNormActivation(expanded, out_chs, 1, norm_layer=norm_layer, activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(in_chs, out_chs, kernel, stride, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(sd_prob, "row")
        self.out_channels = out_chs

    def forward(self, x):
        y = self.block(x)
        return self.stochastic_depth(y) + x if self.use_res_connect else y


# per stage: (block, expand_ratio, kernel, stride, in_chs, out_chs, num_layers)
_F, _M = FusedMBConv, MBConv
_SETTINGS = {
    "efficientnet_v2_s": ([(_F, 1, 3, 1, 24, 24, 2), (_F, 4, 3, 2, 24, 48, 4), (_F, 4, 3, 2, 48, 64, 4),
                           (_M, 4, 3, 2, 64, 128, 6), (_M, 6, 3, 1, 128, 160, 9), (_M, 6, 3, 2, 160, 256, 15)],
                          0.2),
    "efficientnet_v2_m": ([(_F, 1, 3, 1, 24, 24, 3), (_F, 4, 3, 2, 24, 48, 5), (_F, 4, 3, 2, 48, 80, 5),
                           (_M, 4, 3, 2, 80, 160, 7), (_M, 6, 3, 1, 160, 176, 14), (_M, 6, 3, 2, 176, 304, 18),
                           (_M, 6, 3, 1, 304, 512, 5)], 0.3),
    "efficientnet_v2_l": ([(_F, 1, 3, 1, 32, 32, 4), (_F, 4, 3, 2, 32, 64, 7), (_F, 4, 3, 2, 64, 96, 7),
                           (_M, 4, 3, 2, 96, 192, 10), (_M, 6, 3, 1, 192, 224, 19), (_M, 6, 3, 2, 224, 384, 25),
                           (_M, 6, 3, 1, 384, 640, 7)], 0.4),
}


class EfficientNetV2TV(nn.Module):
    """torchvision's EfficientNet body for the V2 settings: stem conv, stages, 1x1 head conv (``last_channel``),
    global average pool, Dropout + Linear."""

    def __init__(self, setting, dropout, stochastic_depth_prob=0.2, num_classes=1000, norm_layer=None,
                 last_channel=1280):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3)
        layers = [Conv2dNormActivation(3, setting[0][4], 3, 2, norm_layer=norm_layer, activation_layer=nn.SiLU)]
        total, idx = sum(s[6] for s in setting), 0
        for block, expand, kernel, stride, in_chs, out_chs, n in setting:
            stage = []
            for j in range(n):
                stage.append(block(expand, kernel, stride if j == 0 else 1, in_chs if j == 0 else out_chs, out_chs,
                                   stochastic_depth_prob * idx / total, norm_layer))
                idx += 1
            layers.append(nn.Sequential(*stage))
        last_in = setting[-1][5]
        last_channel = last_channel or 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_channel, 1, norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                r = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -r, r)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(flow.flatten(self.avgpool(self.features(x)), 1))


def _efficientnet_v2(name, weights, progress, kwargs):
    weights = tv_prologue(name, weights, kwargs)
    setting, dropout = _SETTINGS[name]
    model = EfficientNetV2TV(setting, kwargs.pop("dropout", dropout), **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


@register_builder(weights=WEIGHTS["efficientnet_v2_s"])
def efficientnet_v2_s(*, weights=None, progress=True, **kwargs):
    """torchvision's EfficientNetV2-S (``weights``: EfficientNet_V2_S_Weights, its name, "DEFAULT" or None)."""
    return _efficientnet_v2("efficientnet_v2_s", weights, progress, kwargs)


@register_builder(weights=WEIGHTS["efficientnet_v2_m"])
def efficientnet_v2_m(*, weights=None, progress=True, **kwargs):
    """torchvision's EfficientNetV2-M (``weights``: EfficientNet_V2_M_Weights, its name, "DEFAULT" or None)."""
    return _efficientnet_v2("efficientnet_v2_m", weights, progress, kwargs)


@register_builder(weights=WEIGHTS["efficientnet_v2_l"])
def efficientnet_v2_l(*, weights=None, progress=True, **kwargs):
    """torchvision's EfficientNetV2-L (``weights``: EfficientNet_V2_L_Weights, its name, "DEFAULT" or None)."""
    return _efficientnet_v2("efficientnet_v2_l", weights, progress, kwargs)
