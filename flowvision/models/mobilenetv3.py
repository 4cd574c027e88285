"""MobileNetV3 large/small, with timm's module and parameter names.

conv_stem -> bn1 (hard-swish) -> blocks (EfficientNet-style block strings, SE sized from the expanded width
with a hard-sigmoid gate) -> global_pool -> conv_head (1x1, bias) -> act2 -> classifier. ``forward_features``
ends at the last block (960 / 576 channels); the pooled 1280 / 1024-wide conv_head output is ``pre_logits``.
MobileNetV2 (``mobilenetv2_*``) is an EfficientNet in timm and lives in ``efficientnet.py``.
"""
from functools import partial

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import BatchNormAct2d, SelectAdaptivePool2d, SqueezeExcite, create_conv2d, get_act_layer

from flowvision.layers import make_divisible
from flowvision.ops.misc import Conv2dNormActivation, SqueezeExcitation

from ._api import convert_by_position, define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import checkpoint_seq
from ._efficientnet_builder import build_stages, decode_arch_def, init_weights_goog, round_channels
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, generate_default_cfgs)
from ._registry import register_model

__all__ = ["MobileNetV3", "MobileNetV3TV"]


class MobileNetV3(nn.Module):
    def __init__(self, block_args, num_classes=1000, in_chans=3, stem_size=16, fix_stem=False, num_features=1280,
                 head_bias=True, pad_type="", act_layer=None, norm_layer=None, se_layer=None, se_from_exp=True,
                 round_chs_fn=round_channels, drop_rate=0.0, drop_path_rate=0.0, global_pool="avg", bn_eps=1e-5):
        super().__init__()
        act_layer = get_act_layer(act_layer) or nn.ReLU
        norm_act_layer = norm_layer or partial(BatchNormAct2d, eps=bn_eps)
        se_layer = se_layer or SqueezeExcite
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        if not fix_stem:
            stem_size = round_chs_fn(stem_size)
        self.conv_stem = create_conv2d(in_chans, stem_size, 3, stride=2, padding=pad_type)
        self.bn1 = norm_act_layer(stem_size, act_layer=act_layer)
        self.blocks, feature_info, head_chs = build_stages(
            block_args, stem_size, round_chs_fn=round_chs_fn, pad_type=pad_type, act_layer=act_layer,
            norm_layer=norm_act_layer, se_layer=se_layer, se_from_exp=se_from_exp, drop_path_rate=drop_path_rate)
        if block_args[0][0]["stride"] > 1:  # the stem output is a feature level of its own
            feature_info.insert(0, dict(num_chs=stem_size, reduction=2, module="bn1"))
        self.feature_info = feature_info
        self.num_features = head_chs
        self.head_hidden_size = num_features
        self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
        self.conv_head = create_conv2d(head_chs * self.global_pool.feat_mult(), num_features, 1, padding=pad_type,
                                       bias=head_bias)
        self.norm_head = nn.Identity()
        self.act2 = act_layer(inplace=True)
        self.flatten = nn.Flatten(1) if global_pool else nn.Identity()
        self.classifier = nn.Linear(num_features, num_classes) if num_classes > 0 else nn.Identity()
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

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = num_classes
        if global_pool is not None:
            self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
            self.flatten = nn.Flatten(1) if global_pool else nn.Identity()
        self.classifier = nn.Linear(self.head_hidden_size, num_classes) if num_classes > 0 else nn.Identity()

    def forward_features(self, x):
        if x.ndim != 4 or x.shape[1] != self.conv_stem.in_channels:
            raise ValueError(f"expected a (B, {self.conv_stem.in_channels}, H, W) tensor, got {tuple(x.shape)}")
        x = self.bn1(self.conv_stem(x))
        if self.grad_checkpointing and self.training:  # timm's checkpoint_seq(flatten=True): block by block
            return checkpoint_seq([blk for stage in self.blocks for blk in stage], x)
        return self.blocks(x)

    def forward_head(self, x, pre_logits=False):
        x = self.global_pool(x)
        x = self.flatten(self.act2(self.norm_head(self.conv_head(x))))
        if pre_logits:
            return x
        if self.drop_rate > 0.0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return self.classifier(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


_LARGE = [["ds_r1_k3_s1_e1_c16_nre"], ["ir_r1_k3_s2_e4_c24_nre", "ir_r1_k3_s1_e3_c24_nre"],
          ["ir_r3_k5_s2_e3_c40_se0.25_nre"], ["ir_r1_k3_s2_e6_c80", "ir_r1_k3_s1_e2.5_c80", "ir_r2_k3_s1_e2.3_c80"],
          ["ir_r2_k3_s1_e6_c112_se0.25"], ["ir_r3_k5_s2_e6_c160_se0.25"], ["cn_r1_k1_s1_c960"]]
_SMALL = [["ds_r1_k3_s2_e1_c16_se0.25_nre"], ["ir_r1_k3_s2_e4.5_c24_nre", "ir_r1_k3_s1_e3.67_c24_nre"],
          ["ir_r1_k5_s2_e4_c40_se0.25", "ir_r2_k5_s1_e6_c40_se0.25"], ["ir_r2_k5_s1_e3_c48_se0.25"],
          ["ir_r3_k5_s2_e6_c96_se0.25"], ["cn_r1_k1_s1_c576"]]


def _gen_mobilenet_v3(variant, channel_multiplier=1.0, depth_multiplier=1.0, pretrained=False, **kwargs):
    small = "small" in variant
    se_layer = partial(SqueezeExcite, gate_layer="hard_sigmoid", force_act_layer=nn.ReLU, rd_round_fn=round_channels)
    args = dict(block_args=decode_arch_def(_SMALL if small else _LARGE, depth_multiplier=depth_multiplier),
                num_features=1024 if small else 1280,
                stem_size=16, fix_stem=channel_multiplier < 0.75,
                round_chs_fn=partial(round_channels, multiplier=channel_multiplier), act_layer="hard_swish",
                se_layer=se_layer)
    return build_model_with_cfg(MobileNetV3, variant, pretrained, **{**args, **kwargs})


# timm's first MobileNetV3 ("rw"): no-skip first block, SE reduced from the expanded width with the block's own
# activation and round(), head conv without bias, TF BatchNorm eps
_RW = [["ds_r1_k3_s1_e1_c16_nre_noskip"], *_LARGE[1:]]


def _gen_mobilenet_v3_rw(variant, channel_multiplier=1.0, pretrained=False, **kwargs):
    args = dict(block_args=decode_arch_def(_RW), head_bias=False,
                round_chs_fn=partial(round_channels, multiplier=channel_multiplier), act_layer="hard_swish",
                se_layer=partial(SqueezeExcite, gate_layer="hard_sigmoid"), bn_eps=1e-3)
    return build_model_with_cfg(MobileNetV3, variant, pretrained, **{**args, **kwargs})


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv_stem", classifier="classifier", license="apache-2.0"), **kwargs}


_W = "https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-weights/"
default_cfgs = generate_default_cfgs({
    "mobilenetv3_large_075": _cfg(),
    "mobilenetv3_large_150d.ra4_e3600_r256_in1k": _cfg(hf_hub_id="timm/", input_size=(3, 256, 256), pool_size=(8, 8),
                                                       crop_pct=0.95, mean=IMAGENET_INCEPTION_MEAN,
                                                       std=IMAGENET_INCEPTION_STD, test_input_size=(3, 320, 320),
                                                       test_crop_pct=1.0),
    "mobilenetv3_rw.rmsp_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic",
                                     url=_W + "mobilenetv3_100-35495452.pth"),
    "mobilenetv3_large_100.ra_in1k": _cfg(interpolation="bicubic", hf_hub_id="timm/",
                                          url=_W + "mobilenetv3_large_100_ra-f55367f5.pth"),
    "mobilenetv3_small_050.lamb_in1k": _cfg(interpolation="bicubic", hf_hub_id="timm/",
                                            url=_W + "mobilenetv3_small_050_lambc-4b7bbe87.pth"),
    "mobilenetv3_small_075.lamb_in1k": _cfg(interpolation="bicubic", hf_hub_id="timm/",
                                            url=_W + "mobilenetv3_small_075_lambc-384766db.pth"),
    "mobilenetv3_small_100.lamb_in1k": _cfg(interpolation="bicubic", hf_hub_id="timm/",
                                            url=_W + "mobilenetv3_small_100_lamb-266a294c.pth"),
})


@register_model
def mobilenetv3_large_075(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_large_075", 0.75, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_large_100(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_large_100", 1.0, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_small_050(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_small_050", 0.50, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_small_075(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_small_075", 0.75, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_small_100(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_small_100", 1.0, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_large_150d(pretrained=False, **kwargs):
    return _gen_mobilenet_v3("mobilenetv3_large_150d", 1.5, depth_multiplier=1.2, pretrained=pretrained, **kwargs)


@register_model
def mobilenetv3_rw(pretrained=False, **kwargs):
    return _gen_mobilenet_v3_rw("mobilenetv3_rw", 1.0, pretrained=pretrained, **kwargs)


# --- torchvision's MobileNetV3 (``features.N.block.M.*``, ``classifier.0/3``; BN eps 1e-3) ------------------

def tv_mobilenet_init(model):
    """torchvision's MobileNet init: kaiming fan-out convs, unit norms, N(0, 0.01) linears."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)


class InvertedResidualV3TV(nn.Module):
    """torchvision's MobileNetV3 block: [expand 1x1] -> depthwise -> [SE, hard-sigmoid gate] -> project."""

    def __init__(self, inp, kernel, exp, out, use_se, act, stride, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and inp == out
        act_layer = nn.Hardswish if act == "HS" else nn.ReLU
        layers = []
        if exp != inp:
            layers.append(Conv2dNormActivation(inp, exp, 1, norm_layer=norm_layer, activation_layer=act_layer))
        layers.append(Conv2dNormActivation(exp, exp, kernel, stride, groups=exp, norm_layer=norm_layer,
                                           activation_layer=act_layer))
        if use_se:
            layers.append(SqueezeExcitation(exp, make_divisible(exp // 4, 8), scale_activation=nn.Hardsigmoid))
        layers.append(Conv2dNormActivation(exp, out, 1, norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = out

    def forward(self, x):
        y = self.block(x)
        return y + x if self.use_res_connect else y


# (input, kernel, expanded, output, SE, activation, stride) per block, as torchvision's setting
V3_LARGE_TV = [(16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2), (24, 3, 72, 24, False, "RE", 1),
               (24, 5, 72, 40, True, "RE", 2), (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
               (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1),
               (80, 3, 184, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
               (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
               (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1),
               (160, 5, 960, 160, True, "HS", 1)]
V3_SMALL_TV = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
               (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
               (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
               (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1)]


class MobileNetV3TV(nn.Module):
    """torchvision's MobileNetV3 (``features.N.block.M.*``, ``classifier.0/3``); BN eps 1e-3."""

    def __init__(self, setting, last_channel, num_classes=1000, dropout=0.2):
        super().__init__()
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        layers = [Conv2dNormActivation(3, setting[0][0], 3, 2, norm_layer=norm_layer, activation_layer=nn.Hardswish)]
        for inp, k, exp, out, se, act, stride in setting:
            layers.append(InvertedResidualV3TV(inp, k, exp, out, se, act, stride, norm_layer))
        last_in = setting[-1][3]
        layers.append(Conv2dNormActivation(last_in, 6 * last_in, 1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(6 * last_in, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        tv_mobilenet_init(self)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _tv_mobilenet_v3(name, weights, **kwargs):
    setting, last = (V3_LARGE_TV, 1280) if name == "mobilenet_v3_large" else (V3_SMALL_TV, 1024)
    return MobileNetV3TV(setting, last, **kwargs)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "mobilenet_v3_large": ("MobileNet_V3_Large_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v3_large-8738ca79.pth", 5483032, (1, 1), 224, 256, "bilinear", 74.042, 91.34),
        ("IMAGENET1K_V2", "mobilenet_v3_large-5c1a4163.pth", 5483032, (1, 1), 224, 232, "bilinear", 75.274, 92.566),
    ]),
    "mobilenet_v3_small": ("MobileNet_V3_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mobilenet_v3_small-047dcff4.pth", 2542856, (1, 1), 224, 256, "bilinear", 67.668, 87.402),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_mobilenet_v3)
register_tv_counterpart({"mobilenet_v3_large": "mobilenetv3_large_100", "mobilenet_v3_small": "mobilenetv3_small_100"},
                        convert_by_position, bn_eps=1e-3)
