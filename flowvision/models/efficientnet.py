"""EfficientNet (B0-B7), EfficientNet-Lite (0-4) and their TensorFlow-ported ``tf_`` variants.

Module and parameter names equal timm's (conv_stem, bn1, blocks.S.B.*, conv_head, bn2, classifier).
``tf_`` variants use TensorFlow 'SAME' padding (asymmetric for stride 2) and BN eps 1e-3.
Architectures are given as timm-style block strings, e.g. ``'ir_r2_k3_s2_e6_c24_se0.25'``.
"""
import math
import re
from functools import partial

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import (BatchNormAct2d, DropPath, SqueezeExcite, create_classifier, create_conv2d,
                               get_act_layer, make_divisible)

from ._builder import build_model_with_cfg
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, generate_default_cfgs)
from ._registry import register_model

__all__ = ["EfficientNet", "DepthwiseSeparableConv", "InvertedResidual", "decode_arch_def", "round_channels"]

BN_EPS_TF_DEFAULT = 1e-3


def round_channels(channels, multiplier=1.0, divisor=8, channel_min=None, round_limit=0.9):
    if not multiplier:
        return channels
    return make_divisible(channels * multiplier, divisor, channel_min, round_limit=round_limit)


class DepthwiseSeparableConv(nn.Module):
    """dw conv -> BN+act -> (SE) -> pw conv -> BN (+ residual when shapes allow)."""

    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, dilation=1, pad_type="", noskip=False,
                 pw_act=False, act_layer=nn.ReLU, norm_layer=BatchNormAct2d, se_layer=None, drop_path_rate=0.0):
        super().__init__()
        self.has_skip = (stride == 1 and in_chs == out_chs) and not noskip
        self.conv_dw = create_conv2d(in_chs, in_chs, dw_kernel_size, stride=stride, dilation=dilation,
                                     padding=pad_type, depthwise=True)
        self.bn1 = norm_layer(in_chs, act_layer=act_layer)
        self.aa = nn.Identity()
        self.se = se_layer(in_chs, act_layer=act_layer) if se_layer else nn.Identity()
        self.conv_pw = create_conv2d(in_chs, out_chs, 1, padding=pad_type)
        self.bn2 = norm_layer(out_chs, act_layer=act_layer, apply_act=pw_act)
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.aa(self.bn1(self.conv_dw(x)))
        x = self.bn2(self.conv_pw(self.se(x)))
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


class InvertedResidual(nn.Module):
    """pw expand -> BN+act -> dw conv -> BN+act -> (SE) -> pw project -> BN (+ residual)."""

    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, dilation=1, pad_type="", noskip=False,
                 exp_ratio=1.0, act_layer=nn.ReLU, norm_layer=BatchNormAct2d, se_layer=None, drop_path_rate=0.0):
        super().__init__()
        mid_chs = make_divisible(in_chs * exp_ratio)
        self.has_skip = (in_chs == out_chs and stride == 1) and not noskip
        self.conv_pw = create_conv2d(in_chs, mid_chs, 1, padding=pad_type)
        self.bn1 = norm_layer(mid_chs, act_layer=act_layer)
        self.conv_dw = create_conv2d(mid_chs, mid_chs, dw_kernel_size, stride=stride, dilation=dilation,
                                     padding=pad_type, depthwise=True)
        self.bn2 = norm_layer(mid_chs, act_layer=act_layer)
        self.aa = nn.Identity()
        self.se = se_layer(mid_chs, act_layer=act_layer) if se_layer else nn.Identity()
        self.conv_pwl = create_conv2d(mid_chs, out_chs, 1, padding=pad_type)
        self.bn3 = norm_layer(out_chs, act_layer=act_layer, apply_act=False)
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.bn1(self.conv_pw(x))
        x = self.aa(self.bn2(self.conv_dw(x)))
        x = self.bn3(self.conv_pwl(self.se(x)))
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


_BLOCK_RE = re.compile(r"^([a-z]+)(\d*\.?\d*)$")


def _decode_block_str(block_str):
    """``'ir_r2_k3_s2_e6_c24_se0.25'`` -> (repeats, dict of block args)."""
    ops = block_str.split("_")
    block_type, opts = ops[0], {}
    noskip = False
    for op in ops[1:]:
        if op == "noskip":
            noskip = True
            continue
        m = _BLOCK_RE.match(op)
        if not m:
            raise ValueError(f"bad block option {op!r} in {block_str!r}")
        opts[m.group(1)] = m.group(2)
    if block_type not in ("ds", "ir"):
        raise ValueError(f"unsupported block type {block_type!r} in {block_str!r}")
    args = dict(block_type=block_type, dw_kernel_size=int(opts["k"]), stride=int(opts["s"]),
                out_chs=int(opts["c"]), se_ratio=float(opts["se"]) if "se" in opts else None,
                noskip=noskip or opts.get("n") == "", exp_ratio=float(opts.get("e", 1)))
    return int(opts["r"]), args


def decode_arch_def(arch_def, depth_multiplier=1.0, fix_first_last=False):
    """List of stages (lists of block-arg dicts), stage depths scaled by ``depth_multiplier`` (ceil)."""
    stages = []
    for stage_idx, stage_strs in enumerate(arch_def):
        if len(stage_strs) != 1:
            raise NotImplementedError("one block string per stage is supported")
        repeats, args = _decode_block_str(stage_strs[0])
        fixed = fix_first_last and stage_idx in (0, len(arch_def) - 1)
        n = repeats if fixed else int(math.ceil(repeats * depth_multiplier))
        stages.append([dict(args) for _ in range(n)])
    return stages


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

        total = sum(len(s) for s in block_args)
        idx = 0
        in_chs = stem_size
        reduction = 2
        stages = []
        self.feature_info = []
        for stage_idx, stage in enumerate(block_args):
            blocks = []
            for i, ba in enumerate(stage):
                out_chs = round_chs_fn(ba["out_chs"])
                stride = ba["stride"] if i == 0 else 1
                se = None
                if ba["se_ratio"] is not None:
                    se = partial(se_layer, rd_ratio=ba["se_ratio"] / ba["exp_ratio"])
                common = dict(dw_kernel_size=ba["dw_kernel_size"], stride=stride, pad_type=pad_type,
                              noskip=ba["noskip"], act_layer=act_layer, norm_layer=norm_act_layer, se_layer=se,
                              drop_path_rate=drop_path_rate * idx / total)
                if ba["block_type"] == "ds":
                    blocks.append(DepthwiseSeparableConv(in_chs, out_chs, **common))
                else:
                    blocks.append(InvertedResidual(in_chs, out_chs, exp_ratio=ba["exp_ratio"], **common))
                in_chs = out_chs
                idx += 1
            reduction *= stage[0]["stride"]
            stages.append(nn.Sequential(*blocks))
            last_of_reduction = stage_idx == len(block_args) - 1 or block_args[stage_idx + 1][0]["stride"] > 1
            if last_of_reduction:
                self.feature_info.append(dict(num_chs=in_chs, reduction=reduction, module=f"blocks.{stage_idx}"))
        self.blocks = nn.Sequential(*stages)

        self.num_features = self.head_hidden_size = num_features
        self.conv_head = create_conv2d(in_chs, num_features, 1, padding=pad_type)
        self.bn2 = norm_act_layer(num_features, act_layer=act_layer)
        self.global_pool, self.classifier = create_classifier(num_features, num_classes, pool_type=global_pool)
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                bound = 1.0 / math.sqrt(m.weight.shape[0])
                nn.init.uniform_(m.weight, -bound, bound)
                nn.init.zeros_(m.bias)

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


