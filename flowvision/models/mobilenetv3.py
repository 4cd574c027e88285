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

from ._builder import build_model_with_cfg
from ._efficientnet_builder import build_stages, decode_arch_def, init_weights_goog, round_channels
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, generate_default_cfgs)
from ._registry import register_model

__all__ = ["MobileNetV3"]


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

    def set_grad_checkpointing(self, enable=True):
        """Recorded only: the eager engine has no activation checkpointing yet (no memory is saved)."""
        self.grad_checkpointing = enable

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
        return self.blocks(self.bn1(self.conv_stem(x)))

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
