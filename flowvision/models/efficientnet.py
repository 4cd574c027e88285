"""EfficientNet (B0-B7), EfficientNet-Lite (0-4) and their TensorFlow-ported ``tf_`` variants.

Module and parameter names equal timm's (conv_stem, bn1, blocks.S.B.*, conv_head, bn2, classifier).
``tf_`` variants use TensorFlow 'SAME' padding (asymmetric for stride 2) and BN eps 1e-3.
Architectures are given as timm-style block strings, e.g. ``'ir_r2_k3_s2_e6_c24_se0.25'``.
"""
from functools import partial

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import BatchNormAct2d, SqueezeExcite, create_classifier, create_conv2d, get_act_layer

from ._builder import build_model_with_cfg
from ._efficientnet_blocks import ConvBnAct, DepthwiseSeparableConv, InvertedResidual
from ._efficientnet_builder import build_stages, decode_arch_def, init_weights_goog, round_channels
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, generate_default_cfgs)
from ._registry import register_model

__all__ = ["EfficientNet", "DepthwiseSeparableConv", "InvertedResidual", "ConvBnAct", "decode_arch_def",
           "round_channels"]

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

    def set_grad_checkpointing(self, enable=True):
        """Recorded only: the eager engine has no activation checkpointing yet (no memory is saved)."""
        self.grad_checkpointing = enable

    def get_classifier(self):
        return self.classifier

    def reset_classifier(self, num_classes, global_pool="avg"):
        self.num_classes = num_classes
        self.global_pool, self.classifier = create_classifier(self.num_features, num_classes, pool_type=global_pool)

    def forward_features(self, x):
        if x.ndim != 4 or x.shape[1] != self.conv_stem.in_channels:
            raise ValueError(f"expected a (B, {self.conv_stem.in_channels}, H, W) tensor, got {tuple(x.shape)}")
        x = self.bn1(self.conv_stem(x))
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
