"""ReXNet-lite (Han et al., "Rethinking Channel Dimensions for Efficient Model Design", CVPR 2021; the "lite"
models of the authors' release): ReXNet without SE modules and SiLU -- ReLU6 everywhere, 3x3 depthwise
inverted residuals whose output widths grow linearly with depth (16 blocks in six groups), a 1280-wide final
1x1 conv and a 1x1-conv head (1024 hidden units).

timm has no ReXNet-lite: parameter names follow the authors' release (``features.3.out.0``, ``output.0``,
``output.4``) so their checkpoints load unchanged; the original flowvision names are ``rexnet_lite_1_0``,
``_1_3``, ``_1_5`` and ``_2_0`` (width multipliers). Sizes and costs: the authors' ReXNet-lite table
(FLOPs/params at 224x224).

Ambiguous details and what is implemented: channel widths are rounded to multiples of 8 and the final conv
widens with the multiplier above 1.0 (the released models); the shortcut adds the input to the first
``in_channels`` output channels (the outputs are wider), as in ReXNet.
"""
from typing import List, Optional, Union

import flowvision.backend as flow
from flowvision.backend import nn

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, check_mean_pool, classifier_or_none
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["ReXNetV1Lite"]


def _divisible(v: float, divisor: int = 8) -> int:
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _conv_bn(cin: int, cout: int, kernel: int = 1, stride: int = 1, groups: int = 1, act: bool = True) -> list:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return layers + [nn.ReLU6()] if act else layers


class LinearBottleneck(nn.Module):
    """[1x1 expand x t + ReLU6] -> depthwise + ReLU6 -> 1x1 linear projection; partial-channel shortcut."""

    def __init__(self, in_channels: int, channels: int, t: int, kernel_size: int = 3, stride: int = 1):
        super().__init__()
        self.use_shortcut = stride == 1 and in_channels <= channels
        self.in_channels = in_channels
        dw = in_channels * t
        layers = _conv_bn(in_channels, dw) if t != 1 else []
        layers += _conv_bn(dw, dw, kernel_size, stride, groups=dw) + _conv_bn(dw, channels, act=False)
        self.out = nn.Sequential(*layers)

    def forward(self, x):
        out = self.out(x)
        if self.use_shortcut:
            c = self.in_channels
            out = flow.cat([out[:, :c] + x, out[:, c:]], dim=1)
        return out


class ReXNetV1Lite(ClassifierContract, nn.Module):
    """ReXNet-lite image classifier.

    Args:
        multiplier: width multiplier. in_chans, num_classes: as usual (0 classes: no final 1x1 conv).
        drop_rate: dropout before the last 1x1 conv. global_pool: 'avg' or ''.
    """

    head_attr = "output"

    def __init__(self, multiplier: float = 1.0, in_chans: int = 3, num_classes: int = 1000, drop_rate: float = 0.2,
                 global_pool: str = "avg", input_ch: int = 16, final_ch: int = 164, img_size=None,
                 drop_path_rate: float = 0.0):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        layers, group_strides = [1, 2, 2, 3, 3, 5], [1, 2, 2, 2, 1, 2]
        strides = sum([[s] + [1] * (n - 1) for n, s in zip(layers, group_strides)], [])
        n_blocks = sum(layers)
        inplanes = input_ch / multiplier if multiplier < 1.0 else input_ch
        first = _divisible(int(round((32 / multiplier if multiplier < 1.0 else 32) * multiplier)))
        ins, outs = [first], [_divisible(int(round(inplanes * multiplier)))]
        for _ in range(1, n_blocks):
            ins.append(_divisible(int(round(inplanes * multiplier))))
            inplanes += final_ch / (n_blocks - 1)
            outs.append(_divisible(int(round(inplanes * multiplier))))
        features = _conv_bn(in_chans, first, 3, 2)
        self.feature_info, self._feature_idx, reduction = [], [], 2
        for i, (cin, cout, s) in enumerate(zip(ins, outs, strides)):
            features.append(LinearBottleneck(cin, cout, 1 if i == 0 else 6, 3, s))
            reduction *= s
            last_of_reduction = i == n_blocks - 1 or strides[i + 1] == 2
            if last_of_reduction and i < n_blocks - 1:
                idx = len(features) - 1
                self._feature_idx.append(idx)
                self.feature_info.append(dict(num_chs=cout, reduction=reduction, module=f"features.{idx}"))
        pen = int(1280 * multiplier) if multiplier > 1 else 1280
        features += _conv_bn(outs[-1], pen)
        self._feature_idx.append(len(features) - 1)
        self.feature_info.append(dict(num_chs=pen, reduction=reduction, module=f"features.{len(features) - 1}"))
        self.features = nn.Sequential(*features)
        self.num_features, self.head_hidden_size = pen, 1024
        self.output = nn.Sequential(nn.Conv2d(pen, 1024, 1), nn.BatchNorm2d(1024), nn.ReLU6(), nn.Dropout(drop_rate),
                                    self._classifier(num_classes))

    @staticmethod
    def _classifier(num_classes: int) -> nn.Module:
        return nn.Conv2d(1024, num_classes, 1) if num_classes > 0 else nn.Identity()

    def get_classifier(self, name_only: bool = False):
        return "output.4" if name_only else self.output[4]

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^features\.[012]\.", blocks=[(r"^features\.(\d+)", None), (r"^output", (99999,))])

    def reset_classifier(self, num_classes: int, global_pool: Optional[str] = None) -> None:
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            self.global_pool = check_mean_pool(global_pool)
        self.output[4] = self._classifier(num_classes)

    def forward_intermediates(self, x, indices: Optional[Union[int, List[int]]] = None, norm: bool = False,
                              stop_early: bool = False, output_fmt: str = "NCHW",
                              intermediates_only: bool = False):
        """(final features, [outputs at the five reductions]) for ``indices`` (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"ReXNet-lite's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        take, max_index = feature_take_indices(len(self._feature_idx), indices)
        stop = self._feature_idx[max_index] if stop_early else len(self.features) - 1
        wanted = {self._feature_idx[i] for i in take}
        outs = []
        for j in range(stop + 1):
            x = self.features[j](x)
            if j in wanted:
                outs.append(x)
        return outs if intermediates_only else (x, outs)

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.features, x)

    def forward_head(self, x, pre_logits: bool = False):
        if self.global_pool == "avg":
            x = x.mean(dim=(2, 3), keepdim=True)
        x = self.output[3](self.output[2](self.output[1](self.output[0](x))))
        if pre_logits:
            return x.flatten(1)
        return self.output[4](x).flatten(1)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="features.0", classifier="output.4", license="mit"), **kwargs}


_MULTS = {"rexnet_lite_1_0": 1.0, "rexnet_lite_1_3": 1.3, "rexnet_lite_1_5": 1.5, "rexnet_lite_2_0": 2.0}
default_cfgs = generate_default_cfgs({name: _cfg() for name in _MULTS})


def _lite(variant: str, pretrained: bool, kwargs):
    return build_model_with_cfg(ReXNetV1Lite, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3, 4)),
                                **{**dict(multiplier=_MULTS[variant]), **kwargs})


@register_model
def rexnet_lite_1_0(pretrained: bool = False, **kwargs) -> ReXNetV1Lite:
    """ReXNet-lite 1.0x."""
    return _lite("rexnet_lite_1_0", pretrained, kwargs)


@register_model
def rexnet_lite_1_3(pretrained: bool = False, **kwargs) -> ReXNetV1Lite:
    """ReXNet-lite 1.3x."""
    return _lite("rexnet_lite_1_3", pretrained, kwargs)


@register_model
def rexnet_lite_1_5(pretrained: bool = False, **kwargs) -> ReXNetV1Lite:
    """ReXNet-lite 1.5x."""
    return _lite("rexnet_lite_1_5", pretrained, kwargs)


@register_model
def rexnet_lite_2_0(pretrained: bool = False, **kwargs) -> ReXNetV1Lite:
    """ReXNet-lite 2.0x."""
    return _lite("rexnet_lite_2_0", pretrained, kwargs)
