"""EfficientNet (B0-B7), EfficientNet-Lite (0-4) and their TensorFlow-ported ``tf_`` variants.

Module and parameter names equal timm's (conv_stem, bn1, blocks.S.B.*, conv_head, bn2, classifier).
``tf_`` variants use TensorFlow 'SAME' padding (asymmetric for stride 2) and BN eps 1e-3.
Architectures are given as timm-style block strings, e.g. ``'ir_r2_k3_s2_e6_c24_se0.25'``.
"""
import math
from functools import partial

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import BatchNormAct2d, SqueezeExcite, create_classifier, create_conv2d, get_act_layer

from flowvision.layers import make_divisible
from flowvision.ops import Conv2dNormActivation, SqueezeExcitation, StochasticDepth

from ._api import convert_by_position, define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import checkpoint_seq
from ._efficientnet_blocks import ConvBnAct, DepthwiseSeparableConv, InvertedResidual
from ._efficientnet_builder import build_stages, decode_arch_def, init_weights_goog, round_channels
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, generate_default_cfgs)
from ._registry import register_model
from .mobilenetv3 import tv_mobilenet_init

__all__ = ["EfficientNet", "DepthwiseSeparableConv", "InvertedResidual", "ConvBnAct", "decode_arch_def",
           "round_channels", "EfficientNetTV", "EfficientNetV2TV", "MobileNetV2TV"]

BN_EPS_TF_DEFAULT = 1e-3


class EfficientNet(nn.Module):
    def __init__(self, block_args, num_classes=1000, num_features=1280, in_chans=3, stem_size=32, fix_stem=False,
                 global_pool="avg", pad_type="", round_chs_fn=round_channels, act_layer=None, norm_layer=None,
                 se_layer=None, bn_eps=1e-5, drop_rate=0.0, drop_path_rate=0.0):
        super().__init__()
        act_layer = get_act_layer(act_layer) or nn.ReLU
        norm_act_layer = partial(BatchNormAct2d, eps=bn_eps) if norm_layer is None else norm_layer
        se_layer = se_layer or SqueezeExcite
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False

        if not fix_stem:
            stem_size = round_chs_fn(stem_size)
        self.conv_stem = create_conv2d(in_chans, stem_size, 3, stride=2, padding=pad_type)
        self.bn1 = norm_act_layer(stem_size, act_layer=act_layer)

        self.blocks, self.feature_info, in_chs = build_stages(
            block_args, stem_size, round_chs_fn=round_chs_fn, pad_type=pad_type, act_layer=act_layer,
            norm_layer=norm_act_layer, se_layer=se_layer, se_from_exp=False, drop_path_rate=drop_path_rate)

        self.num_features = self.head_hidden_size = num_features
        self.conv_head = create_conv2d(in_chs, num_features, 1, padding=pad_type)
        self.bn2 = norm_act_layer(num_features, act_layer=act_layer)
        self.global_pool, self.classifier = create_classifier(num_features, num_classes, pool_type=global_pool)
        self.init_weights()

    def init_weights(self):
        init_weights_goog(self)

    def no_weight_decay(self):
        return set()

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, run every block of every stage under ``checkpoint``: only its input is kept and its
        activations are recomputed in backward (timm's ``checkpoint_seq(flatten=True)``; the same values)."""
        self.grad_checkpointing = bool(enable)

    def get_classifier(self):
        return self.classifier

    def reset_classifier(self, num_classes, global_pool="avg"):
        self.num_classes = num_classes
        self.global_pool, self.classifier = create_classifier(self.num_features, num_classes, pool_type=global_pool)

    def forward_features(self, x):
        if x.ndim != 4 or x.shape[1] != self.conv_stem.in_channels:
            raise ValueError(f"expected a (B, {self.conv_stem.in_channels}, H, W) tensor, got {tuple(x.shape)}")
        x = self.bn1(self.conv_stem(x))
        if self.grad_checkpointing and self.training:  # timm's checkpoint_seq(flatten=True): block by block
            x = checkpoint_seq([blk for stage in self.blocks for blk in stage], x)
        else:
            x = self.blocks(x)
        return self.bn2(self.conv_head(x))

    def forward_head(self, x, pre_logits=False):
        x = self.global_pool(x)
        if self.drop_rate > 0.0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return x if pre_logits else self.classifier(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


_B_ARCH = [["ds_r1_k3_s1_e1_c16_se0.25"], ["ir_r2_k3_s2_e6_c24_se0.25"], ["ir_r2_k5_s2_e6_c40_se0.25"],
           ["ir_r3_k3_s2_e6_c80_se0.25"], ["ir_r3_k5_s1_e6_c112_se0.25"], ["ir_r4_k5_s2_e6_c192_se0.25"],
           ["ir_r1_k3_s1_e6_c320_se0.25"]]
_LITE_ARCH = [["ds_r1_k3_s1_e1_c16"], ["ir_r2_k3_s2_e6_c24"], ["ir_r2_k5_s2_e6_c40"], ["ir_r3_k3_s2_e6_c80"],
              ["ir_r3_k5_s1_e6_c112"], ["ir_r4_k5_s2_e6_c192"], ["ir_r1_k3_s1_e6_c320"]]


def _gen_efficientnet(variant, channel_multiplier=1.0, depth_multiplier=1.0, pretrained=False, **kwargs):
    round_chs_fn = partial(round_channels, multiplier=channel_multiplier)
    args = dict(block_args=decode_arch_def(_B_ARCH, depth_multiplier), num_features=round_chs_fn(1280),
                stem_size=32, round_chs_fn=round_chs_fn, act_layer="swish")
    return build_model_with_cfg(EfficientNet, variant, pretrained, **{**args, **kwargs})


def _gen_efficientnet_lite(variant, channel_multiplier=1.0, depth_multiplier=1.0, pretrained=False, **kwargs):
    args = dict(block_args=decode_arch_def(_LITE_ARCH, depth_multiplier, fix_first_last=True), num_features=1280,
                stem_size=32, fix_stem=True, round_chs_fn=partial(round_channels, multiplier=channel_multiplier),
                act_layer="relu6")
    return build_model_with_cfg(EfficientNet, variant, pretrained, **{**args, **kwargs})


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv_stem", classifier="classifier", license="apache-2.0"), **kwargs}


def _lcfg(size, crop, **kwargs):  # tf lite: inception mean/std
    return _cfg(input_size=(3, size, size), pool_size=(-(-size // 32), -(-size // 32)), crop_pct=crop,
                mean=IMAGENET_INCEPTION_MEAN, std=IMAGENET_INCEPTION_STD, **kwargs)


def _scfg(size, crop, **kwargs):
    return _cfg(input_size=(3, size, size), pool_size=(-(-size // 32), -(-size // 32)), crop_pct=crop, **kwargs)


default_cfgs = generate_default_cfgs({
    "efficientnet_b0.ra_in1k": _cfg(hf_hub_id="timm/"),
    "efficientnet_b1.ft_in1k": _scfg(224, 0.875, hf_hub_id="timm/", test_input_size=(3, 256, 256),
                                     test_crop_pct=1.0),
    "efficientnet_b2.ra_in1k": _scfg(256, 0.875, test_crop_pct=1.0, hf_hub_id="timm/", test_input_size=(3, 288, 288)),
    "efficientnet_b3.ra2_in1k": _scfg(288, 0.875, test_crop_pct=1.0, hf_hub_id="timm/", test_input_size=(3, 320, 320)),
    "efficientnet_b4.ra2_in1k": _scfg(320, 0.875, test_crop_pct=1.0, hf_hub_id="timm/", test_input_size=(3, 384, 384)),
    "efficientnet_b5.sw_in12k_ft_in1k": _scfg(448, 1.0, hf_hub_id="timm/"),
    "efficientnet_b6": _scfg(528, 0.942),
    "efficientnet_b7": _scfg(600, 0.949),
    "efficientnet_lite0.ra_in1k": _cfg(hf_hub_id="timm/"),
    "efficientnet_lite1": _scfg(240, 0.882),
    "efficientnet_lite2": _scfg(260, 0.890),
    "efficientnet_lite3": _scfg(300, 0.904),
    "efficientnet_lite4": _scfg(380, 0.922),
    "tf_efficientnet_b0.ns_jft_in1k": _scfg(224, 0.875, hf_hub_id="timm/"),
    "tf_efficientnet_b0.ap_in1k": _scfg(224, 0.875, hf_hub_id="timm/", mean=IMAGENET_INCEPTION_MEAN,
                                        std=IMAGENET_INCEPTION_STD),
    "tf_efficientnet_b0.in1k": _scfg(224, 0.875, hf_hub_id="timm/"),
    "tf_efficientnet_b1.ns_jft_in1k": _scfg(240, 0.882, hf_hub_id="timm/"),
    "tf_efficientnet_b2.ns_jft_in1k": _scfg(260, 0.890, hf_hub_id="timm/"),
    "tf_efficientnet_b3.ns_jft_in1k": _scfg(300, 0.904, hf_hub_id="timm/"),
    "tf_efficientnet_b4.ns_jft_in1k": _scfg(380, 0.922, hf_hub_id="timm/"),
    "tf_efficientnet_b5.ns_jft_in1k": _scfg(456, 0.934, hf_hub_id="timm/"),
    "tf_efficientnet_b6.ns_jft_in1k": _scfg(528, 0.942, hf_hub_id="timm/"),
    "tf_efficientnet_b7.ns_jft_in1k": _scfg(600, 0.949, hf_hub_id="timm/"),
    "tf_efficientnet_lite0.in1k": _lcfg(224, 0.875, hf_hub_id="timm/"),
    "tf_efficientnet_lite1.in1k": _lcfg(240, 0.882, hf_hub_id="timm/"),
    "tf_efficientnet_lite2.in1k": _lcfg(260, 0.890, hf_hub_id="timm/"),
    "tf_efficientnet_lite3.in1k": _lcfg(300, 0.904, hf_hub_id="timm/", interpolation="bilinear"),
    "tf_efficientnet_lite4.in1k": _lcfg(380, 0.920, hf_hub_id="timm/", interpolation="bilinear"),
})

_B_SCALES = {0: (1.0, 1.0), 1: (1.0, 1.1), 2: (1.1, 1.2), 3: (1.2, 1.4), 4: (1.4, 1.8), 5: (1.6, 2.2),
             6: (1.8, 2.6), 7: (2.0, 3.1)}
_LITE_SCALES = {0: (1.0, 1.0), 1: (1.0, 1.1), 2: (1.1, 1.2), 3: (1.2, 1.4), 4: (1.4, 1.8)}
_TF = dict(bn_eps=BN_EPS_TF_DEFAULT, pad_type="same")


def _b(i, pretrained, kwargs, tf=False):
    cm, dm = _B_SCALES[i]
    name = f"{'tf_' if tf else ''}efficientnet_b{i}"
    return _gen_efficientnet(name, cm, dm, pretrained, **{**(_TF if tf else {}), **kwargs})


def _lite(i, pretrained, kwargs, tf=False):
    cm, dm = _LITE_SCALES[i]
    name = f"{'tf_' if tf else ''}efficientnet_lite{i}"
    return _gen_efficientnet_lite(name, cm, dm, pretrained, **{**(_TF if tf else {}), **kwargs})


@register_model
def efficientnet_b0(pretrained=False, **kwargs):
    return _b(0, pretrained, kwargs)


@register_model
def efficientnet_b1(pretrained=False, **kwargs):
    return _b(1, pretrained, kwargs)


@register_model
def efficientnet_b2(pretrained=False, **kwargs):
    return _b(2, pretrained, kwargs)


@register_model
def efficientnet_b3(pretrained=False, **kwargs):
    return _b(3, pretrained, kwargs)


@register_model
def efficientnet_b4(pretrained=False, **kwargs):
    return _b(4, pretrained, kwargs)


@register_model
def efficientnet_b5(pretrained=False, **kwargs):
    return _b(5, pretrained, kwargs)


@register_model
def efficientnet_b6(pretrained=False, **kwargs):
    return _b(6, pretrained, kwargs)


@register_model
def efficientnet_b7(pretrained=False, **kwargs):
    return _b(7, pretrained, kwargs)


@register_model
def efficientnet_lite0(pretrained=False, **kwargs):
    return _lite(0, pretrained, kwargs)


@register_model
def efficientnet_lite1(pretrained=False, **kwargs):
    return _lite(1, pretrained, kwargs)


@register_model
def efficientnet_lite2(pretrained=False, **kwargs):
    return _lite(2, pretrained, kwargs)


@register_model
def efficientnet_lite3(pretrained=False, **kwargs):
    return _lite(3, pretrained, kwargs)


@register_model
def efficientnet_lite4(pretrained=False, **kwargs):
    return _lite(4, pretrained, kwargs)


@register_model
def tf_efficientnet_b0(pretrained=False, **kwargs):
    return _b(0, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b1(pretrained=False, **kwargs):
    return _b(1, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b2(pretrained=False, **kwargs):
    return _b(2, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b3(pretrained=False, **kwargs):
    return _b(3, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b4(pretrained=False, **kwargs):
    return _b(4, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b5(pretrained=False, **kwargs):
    return _b(5, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b6(pretrained=False, **kwargs):
    return _b(6, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_b7(pretrained=False, **kwargs):
    return _b(7, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_lite0(pretrained=False, **kwargs):
    return _lite(0, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_lite1(pretrained=False, **kwargs):
    return _lite(1, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_lite2(pretrained=False, **kwargs):
    return _lite(2, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_lite3(pretrained=False, **kwargs):
    return _lite(3, pretrained, kwargs, tf=True)


@register_model
def tf_efficientnet_lite4(pretrained=False, **kwargs):
    return _lite(4, pretrained, kwargs, tf=True)




_MBV2_ARCH = [["ds_r1_k3_s1_c16"], ["ir_r2_k3_s2_e6_c24"], ["ir_r3_k3_s2_e6_c32"], ["ir_r4_k3_s2_e6_c64"],
              ["ir_r3_k3_s1_e6_c96"], ["ir_r3_k3_s2_e6_c160"], ["ir_r1_k3_s1_e6_c320"]]


def _gen_mobilenet_v2(variant, channel_multiplier=1.0, depth_multiplier=1.0, fix_stem_head=False, pretrained=False,
                      **kwargs):
    """MobileNetV2 as an EfficientNet (ReLU6, no SE); the 'd' variants scale depth and keep stem/head fixed."""
    round_chs_fn = partial(round_channels, multiplier=channel_multiplier)
    args = dict(block_args=decode_arch_def(_MBV2_ARCH, depth_multiplier, fix_first_last=fix_stem_head),
                num_features=1280 if fix_stem_head else max(1280, round_chs_fn(1280)), stem_size=32,
                fix_stem=fix_stem_head, round_chs_fn=round_chs_fn, act_layer="relu6")
    return build_model_with_cfg(EfficientNet, variant, pretrained, **{**args, **kwargs})


_MBV2_URL = "https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-weights/"
default_cfgs.update(generate_default_cfgs({
    "mobilenetv2_035": _cfg(),
    "mobilenetv2_050.lamb_in1k": _cfg(hf_hub_id="timm/", url=_MBV2_URL + "mobilenetv2_050-3d30d450.pth"),
    "mobilenetv2_075": _cfg(),
    "mobilenetv2_100.ra_in1k": _cfg(hf_hub_id="timm/", url=_MBV2_URL + "mobilenetv2_100_ra-b33bc2c4.pth"),
    "mobilenetv2_110d.ra_in1k": _cfg(hf_hub_id="timm/", url=_MBV2_URL + "mobilenetv2_110d_ra-77090ade.pth"),
    "mobilenetv2_120d.ra_in1k": _cfg(hf_hub_id="timm/", url=_MBV2_URL + "mobilenetv2_120d_ra-5987e2ed.pth"),
    "mobilenetv2_140.ra_in1k": _cfg(hf_hub_id="timm/", url=_MBV2_URL + "mobilenetv2_140_ra-21a4e913.pth"),
}))


@register_model
def mobilenetv2_035(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_035", 0.35, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_050(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_050", 0.5, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_075(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_075", 0.75, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_100(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_100", 1.0, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_110d(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_110d", 1.1, 1.2, fix_stem_head=True, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_120d(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_120d", 1.2, 1.4, fix_stem_head=True, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv2_140(pretrained=False, **kwargs):
    return _gen_mobilenet_v2("mobilenetv2_140", 1.4, pretrained=pretrained, **kwargs)


# --- torchvision's EfficientNet B0-B7 / V2 and MobileNetV2 (``features.N...``, ``classifier.1``) ------------

class MBConvTV(nn.Module):
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


class FusedMBConvTV(nn.Module):
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
_F, _M = FusedMBConvTV, MBConvTV
_V2_SETTINGS = {
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


class EfficientNetTV(nn.Module):
    """torchvision's EfficientNet (B0-B7 and V2; ``features.N.M.block.K``, ``classifier.1``): stem conv,
    stages, 1x1 head conv (``last_channel``, None: 4x the last stage's width), global average pool, Dropout +
    Linear."""

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
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


EfficientNetV2TV = EfficientNetTV
# B0 per stage: (expand_ratio, kernel, stride, in_chs, out_chs, num_layers), scaled by (width, depth) per model
_B0_SETTING = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
               (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
_B_SCALING = {"efficientnet_b0": (1.0, 1.0, 0.2), "efficientnet_b1": (1.0, 1.1, 0.2),
              "efficientnet_b2": (1.1, 1.2, 0.3), "efficientnet_b3": (1.2, 1.4, 0.3),
              "efficientnet_b4": (1.4, 1.8, 0.4), "efficientnet_b5": (1.6, 2.2, 0.4),
              "efficientnet_b6": (1.8, 2.6, 0.5), "efficientnet_b7": (2.0, 3.1, 0.5)}


def _tv_efficientnet(name, weights, **kwargs):
    if name in _V2_SETTINGS:
        setting, dropout = _V2_SETTINGS[name]
        return EfficientNetTV(setting, kwargs.pop("dropout", dropout), **kwargs)
    width, depth, dropout = _B_SCALING[name]
    setting = [(MBConvTV, e, k, s, make_divisible(i * width, 8), make_divisible(o * width, 8),
                int(math.ceil(n * depth))) for e, k, s, i, o, n in _B0_SETTING]
    # B5-B7 carry ported TF weights: BN eps 1e-3; B0-B4 torch's default
    norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01) if name[-1] in "567" else nn.BatchNorm2d
    kwargs.setdefault("norm_layer", norm)
    return EfficientNetTV(setting, kwargs.pop("dropout", dropout), last_channel=None, **kwargs)


class InvertedResidualV2TV(nn.Module):
    """torchvision's MobileNetV2 block: [1x1 expand, ReLU6] -> depthwise 3x3 (ReLU6) -> 1x1 project + BN."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2d):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden, 1, norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden, hidden, 3, stride, groups=hidden, norm_layer=norm_layer,
                                        activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2TV(nn.Module):
    """torchvision's MobileNetV2 (``features.N.conv.M``, ``classifier.1``)."""

    def __init__(self, num_classes=1000, width_mult=1.0, round_nearest=8, dropout=0.2):
        super().__init__()
        setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                   [6, 320, 1, 1]]
        inp = make_divisible(32 * width_mult, round_nearest)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, inp, stride=2, activation_layer=nn.ReLU6)]
        for t, c, n, s in setting:
            out = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(InvertedResidualV2TV(inp, out, s if i == 0 else 1, t))
                inp = out
        features.append(Conv2dNormActivation(inp, self.last_channel, 1, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))
        tv_mobilenet_init(self)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "efficientnet_b0": ("EfficientNet_B0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b0_rwightman-7f5810bc.pth", 5288548, (1, 1), 224, 256, "bicubic", 77.692, 93.532),
    ]),
    "efficientnet_b1": ("EfficientNet_B1_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "efficientnet_b1_rwightman-bac287d4.pth", 7794184, (1, 1), 240, 256, "bicubic", 78.642, 94.186),
        ("IMAGENET1K_V2", "efficientnet_b1-c27df63c.pth", 7794184, (1, 1), 240, 255, "bilinear", 79.838, 94.934),
    ]),
    "efficientnet_b2": ("EfficientNet_B2_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b2_rwightman-c35c1473.pth", 9109994, (1, 1), 288, 288, "bicubic", 80.608, 95.31),
    ]),
    "efficientnet_b3": ("EfficientNet_B3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b3_rwightman-b3899882.pth", 12233232, (1, 1), 300, 320, "bicubic", 82.008, 96.054),
    ]),
    "efficientnet_b4": ("EfficientNet_B4_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b4_rwightman-23ab8bcd.pth", 19341616, (1, 1), 380, 384, "bicubic", 83.384, 96.594),
    ]),
    "efficientnet_b5": ("EfficientNet_B5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b5_lukemelas-1a07897c.pth", 30389784, (1, 1), 456, 456, "bicubic", 83.444, 96.628),
    ]),
    "efficientnet_b6": ("EfficientNet_B6_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b6_lukemelas-24a108a5.pth", 43040704, (1, 1), 528, 528, "bicubic", 84.008, 96.916),
    ]),
    "efficientnet_b7": ("EfficientNet_B7_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b7_lukemelas-c5b4e57e.pth", 66347960, (1, 1), 600, 600, "bicubic", 84.122, 96.908),
    ]),
    "efficientnet_v2_s": ("EfficientNet_V2_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_s-dd5fe13b.pth", 21458488, (33, 33), 384, 384, "bilinear", 84.228, 96.878),
    ]),
    "efficientnet_v2_m": ("EfficientNet_V2_M_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_m-dc08266a.pth", 54139356, (33, 33), 480, 480, "bilinear", 85.112, 97.156),
    ]),
    "efficientnet_v2_l": ("EfficientNet_V2_L_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_l-59c71312.pth", 118515272, (33, 33), 480, 480, "bicubic", 85.808, 97.788,
         dict(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))),
    ]),
    "mobilenet_v2": ("MobileNet_V2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v2-b0353104.pth", 3504872, (1, 1), 224, 256, "bilinear", 71.878, 90.286),
        ("IMAGENET1K_V2", "mobilenet_v2-7ebf99e0.pth", 3504872, (1, 1), 224, 232, "bilinear", 72.154, 90.822),
    ]),
}

_TV_ENUMS = tv_weights_enums(__name__, _TV_WEIGHTS)
define_tv_builders(globals(), {n: e for n, e in _TV_ENUMS.items() if n != "mobilenet_v2"}, _tv_efficientnet)
define_tv_builders(globals(), {"mobilenet_v2": _TV_ENUMS["mobilenet_v2"]},
                   lambda name, weights, **kwargs: MobileNetV2TV(**kwargs))
register_tv_counterpart({n: n for n in _B_SCALING if n[-1] not in "567"}, convert_by_position)
register_tv_counterpart({n: n for n in ("efficientnet_b5", "efficientnet_b6", "efficientnet_b7")},
                        convert_by_position, bn_eps=1e-3)
register_tv_counterpart({"mobilenet_v2": "mobilenetv2_100"}, convert_by_position)
