"""RegNetX / RegNetY (incl. the ``_tv`` variants with torchvision's channel rounding), timm's names.

Widths come from the RegNet design-space rule (linear widths ``w0 + wa * i`` quantised to powers of ``wm``);
stem (ConvNormAct 3x3/2) -> s1..s4 of bottleneck blocks b1..bN (1x1 -> grouped 3x3 -> [SE] -> 1x1 + shortcut)
-> ClassifierHead. RegNetY = RegNetX + SE (ratio 0.25 of the block input width).
"""
import math
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from flowvision.backend import nn
from flowvision.layers import ClassifierHead, ConvNormAct, DropPath, SEModule, get_act_layer, make_divisible

from flowvision.ops import Conv2dNormActivation, SqueezeExcitation

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import HeadModuleContract, check_input_channels
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["RegNet", "RegNetCfg", "RegStage", "Bottleneck", "RegNetTV"]


@dataclass
class RegNetCfg:
    depth: int = 21
    w0: int = 80
    wa: float = 42.63
    wm: float = 2.66
    group_size: int = 24
    bottle_ratio: float = 1.0
    se_ratio: float = 0.0
    group_min_ratio: float = 0.0
    stem_width: int = 32
    downsample: str = "conv1x1"
    linear_out: bool = False
    num_features: int = 0
    act_layer: str = "relu"


def _quantize_float(f, q):
    return int(round(f / q) * q)


def _adjust_widths_groups(widths, bottle_ratios, groups, min_ratio=0.0):
    """Make bottleneck widths divisible by the group width (torchvision's rounding when ``min_ratio``)."""
    bottleneck = [int(w * b) for w, b in zip(widths, bottle_ratios)]
    groups = [min(g, wb) for g, wb in zip(groups, bottleneck)]
    if min_ratio:
        bottleneck = [make_divisible(wb, g, min_ratio) for wb, g in zip(bottleneck, groups)]
    else:
        bottleneck = [_quantize_float(wb, g) for wb, g in zip(bottleneck, groups)]
    return [int(wb / b) for wb, b in zip(bottleneck, bottle_ratios)], groups


def generate_regnet(width_slope, width_initial, width_mult, depth, group_size, quant=8):
    """Per-block widths of the RegNet design space, the number of stages and the per-stage group sizes."""
    if not (width_slope >= 0 and width_initial > 0 and width_mult > 1 and width_initial % quant == 0):
        raise ValueError("invalid RegNet parameters")
    widths_cont = np.arange(depth) * width_slope + width_initial
    exps = np.round(np.log(widths_cont / width_initial) / np.log(width_mult))
    widths = np.round(np.divide(width_initial * np.power(width_mult, exps), quant)) * quant
    num_stages = len(np.unique(widths))
    return widths.astype(int).tolist(), num_stages, [group_size] * num_stages


class Bottleneck(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, bottle_ratio=1.0, group_size=1, se_ratio=0.25,
                 downsample="conv1x1", linear_out=False, act_layer=nn.ReLU, drop_path_rate=0.0):
        super().__init__()
        bott = int(round(out_chs * bottle_ratio))
        groups = bott // group_size
        self.conv1 = ConvNormAct(in_chs, bott, kernel_size=1, act_layer=act_layer)
        self.conv2 = ConvNormAct(bott, bott, kernel_size=3, stride=stride, groups=groups, act_layer=act_layer)
        if se_ratio:
            self.se = SEModule(bott, rd_channels=int(round(in_chs * se_ratio)), act_layer=act_layer)
        else:
            self.se = nn.Identity()
        self.conv3 = ConvNormAct(bott, out_chs, kernel_size=1, apply_act=False)
        self.act3 = nn.Identity() if linear_out else act_layer()
        if in_chs != out_chs or stride != 1:
            if downsample != "conv1x1":
                raise NotImplementedError("only downsample='conv1x1' is implemented")
            self.downsample = ConvNormAct(in_chs, out_chs, kernel_size=1, stride=stride, apply_act=False)
        else:
            self.downsample = nn.Identity()
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate > 0 else nn.Identity()

    def zero_init_last(self):
        nn.init.zeros_(self.conv3.bn.weight)

    def forward(self, x):
        shortcut = x
        x = self.conv3(self.se(self.conv2(self.conv1(x))))
        x = self.drop_path(x) + self.downsample(shortcut)
        return self.act3(x)


class RegStage(nn.Module):
    def __init__(self, depth, in_chs, out_chs, stride, drop_path_rates=None, **block_kwargs):
        super().__init__()
        self.grad_checkpointing = False
        for i in range(depth):
            dpr = float(drop_path_rates[i]) if drop_path_rates is not None else 0.0
            self.add_module(f"b{i + 1}", Bottleneck(in_chs if i == 0 else out_chs, out_chs,
                                                    stride=stride if i == 0 else 1, drop_path_rate=dpr,
                                                    **block_kwargs))

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x


class RegNet(HeadModuleContract, nn.Module):
    def __init__(self, cfg, in_chans=3, num_classes=1000, output_stride=32, global_pool="avg", drop_rate=0.0,
                 drop_path_rate=0.0, zero_init_last=True, **kwargs):
        super().__init__()
        if output_stride != 32:
            raise NotImplementedError("only output_stride=32 is implemented so far")
        cfg = replace(cfg, **kwargs)
        act_layer = get_act_layer(cfg.act_layer)
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        self.stem = ConvNormAct(in_chans, cfg.stem_width, 3, stride=2, act_layer=act_layer)
        self.feature_info = [dict(num_chs=cfg.stem_width, reduction=2, module="stem")]

        widths, num_stages, stage_gs = generate_regnet(cfg.wa, cfg.w0, cfg.wm, cfg.depth, cfg.group_size)
        if num_stages != 4:
            raise ValueError(f"RegNet cfg gives {num_stages} stages, 4 expected")
        stage_widths, stage_depths = np.unique(widths, return_counts=True)
        stage_br = [cfg.bottle_ratio] * num_stages
        stage_widths, stage_gs = _adjust_widths_groups(stage_widths, stage_br, stage_gs, cfg.group_min_ratio)
        stage_dpr = np.split(np.linspace(0, drop_path_rate, sum(stage_depths)), np.cumsum(stage_depths[:-1]))
        prev, stride = cfg.stem_width, 2
        for i in range(num_stages):
            name = f"s{i + 1}"
            self.add_module(name, RegStage(int(stage_depths[i]), prev, stage_widths[i], 2,
                                           drop_path_rates=stage_dpr[i], bottle_ratio=stage_br[i],
                                           group_size=stage_gs[i], se_ratio=cfg.se_ratio,
                                           downsample=cfg.downsample, linear_out=cfg.linear_out,
                                           act_layer=act_layer))
            prev = stage_widths[i]
            stride *= 2
            self.feature_info.append(dict(num_chs=prev, reduction=stride, module=name))
        if cfg.num_features:
            self.final_conv = ConvNormAct(prev, cfg.num_features, kernel_size=1, act_layer=act_layer)
            self.num_features = cfg.num_features
        else:
            self.final_conv = act_layer() if cfg.linear_out else nn.Identity()
            self.num_features = prev
        self.head_hidden_size = self.num_features
        self.head = ClassifierHead(self.num_features, num_classes, pool_type=global_pool, drop_rate=drop_rate)
        self.init_weights(zero_init_last)

    def init_weights(self, zero_init_last=True):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, (2.0 / fan_out) ** 0.5)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)
            elif zero_init_last and isinstance(m, Bottleneck):
                m.zero_init_last()

    def forward_features(self, x):
        check_input_channels(x, self.stem.conv.in_channels)
        return self.final_conv(self.run_blocks((self.s1, self.s2, self.s3, self.s4), self.stem(x)))


_SE = dict(se_ratio=0.25)
_TV = dict(group_min_ratio=0.9)
model_cfgs = dict(
    regnetx_002=RegNetCfg(w0=24, wa=36.44, wm=2.49, group_size=8, depth=13),
    regnetx_004=RegNetCfg(w0=24, wa=24.48, wm=2.54, group_size=16, depth=22),
    regnetx_004_tv=RegNetCfg(w0=24, wa=24.48, wm=2.54, group_size=16, depth=22, **_TV),
    regnetx_006=RegNetCfg(w0=48, wa=36.97, wm=2.24, group_size=24, depth=16),
    regnetx_008=RegNetCfg(w0=56, wa=35.73, wm=2.28, group_size=16, depth=16),
    regnetx_016=RegNetCfg(w0=80, wa=34.01, wm=2.25, group_size=24, depth=18),
    regnetx_032=RegNetCfg(w0=88, wa=26.31, wm=2.25, group_size=48, depth=25),
    regnetx_040=RegNetCfg(w0=96, wa=38.65, wm=2.43, group_size=40, depth=23),
    regnetx_064=RegNetCfg(w0=184, wa=60.83, wm=2.07, group_size=56, depth=17),
    regnetx_080=RegNetCfg(w0=80, wa=49.56, wm=2.88, group_size=120, depth=23),
    regnetx_120=RegNetCfg(w0=168, wa=73.36, wm=2.37, group_size=112, depth=19),
    regnetx_160=RegNetCfg(w0=216, wa=55.59, wm=2.1, group_size=128, depth=22),
    regnetx_320=RegNetCfg(w0=320, wa=69.86, wm=2.0, group_size=168, depth=23),
    regnety_002=RegNetCfg(w0=24, wa=36.44, wm=2.49, group_size=8, depth=13, **_SE),
    regnety_004=RegNetCfg(w0=48, wa=27.89, wm=2.09, group_size=8, depth=16, **_SE),
    regnety_006=RegNetCfg(w0=48, wa=32.54, wm=2.32, group_size=16, depth=15, **_SE),
    regnety_008=RegNetCfg(w0=56, wa=38.84, wm=2.4, group_size=16, depth=14, **_SE),
    regnety_008_tv=RegNetCfg(w0=56, wa=38.84, wm=2.4, group_size=16, depth=14, **_SE, **_TV),
    regnety_016=RegNetCfg(w0=48, wa=20.71, wm=2.65, group_size=24, depth=27, **_SE),
    regnety_032=RegNetCfg(w0=80, wa=42.63, wm=2.66, group_size=24, depth=21, **_SE),
    regnety_040=RegNetCfg(w0=96, wa=31.41, wm=2.24, group_size=64, depth=22, **_SE),
    regnety_064=RegNetCfg(w0=112, wa=33.22, wm=2.27, group_size=72, depth=25, **_SE),
    regnety_080=RegNetCfg(w0=192, wa=76.82, wm=2.19, group_size=56, depth=17, **_SE),
    regnety_080_tv=RegNetCfg(w0=192, wa=76.82, wm=2.19, group_size=56, depth=17, **_SE, **_TV),
    regnety_120=RegNetCfg(w0=168, wa=73.36, wm=2.37, group_size=112, depth=19, **_SE),
    regnety_160=RegNetCfg(w0=200, wa=106.23, wm=2.48, group_size=112, depth=18, **_SE),
    regnety_320=RegNetCfg(w0=232, wa=115.89, wm=2.53, group_size=232, depth=20, **_SE),
    # the SEER / SWAG scale-ups (same design space)
    regnety_640=RegNetCfg(w0=352, wa=147.48, wm=2.4, group_size=328, depth=20, **_SE),
    regnety_1280=RegNetCfg(w0=456, wa=160.83, wm=2.52, group_size=264, depth=27, **_SE),
    regnety_2560=RegNetCfg(w0=640, wa=230.83, wm=2.53, group_size=373, depth=27, **_SE),
)


def checkpoint_filter_fn(state_dict, model):
    """torchvision RegNet keys (``trunk_output.block1.block1-0.f.a``) -> timm's (``s1.b1.conv1``)."""
    import re
    if "stem.0.weight" not in state_dict:
        return state_dict
    out = {}
    for k, v in state_dict.items():
        k = k.replace("stem.0", "stem.conv").replace("stem.1", "stem.bn")
        k = re.sub(r"trunk_output\.block(\d)\.block(\d+)-(\d+)",
                   lambda m: f"s{m.group(1)}.b{int(m.group(3)) + 1}", k)
        for a, b in (("f.a.0", "conv1.conv"), ("f.a.1", "conv1.bn"), ("f.b.0", "conv2.conv"),
                     ("f.b.1", "conv2.bn"), ("f.c.0", "conv3.conv"), ("f.c.1", "conv3.bn"), ("f.se.fc1", "se.fc1"),
                     ("f.se.fc2", "se.fc2"), ("f.se.", "se."), ("proj.0", "downsample.conv"),
                     ("proj.1", "downsample.bn")):
            k = k.replace(a, b)
        if k.startswith("fc."):
            k = "head." + k
        out[k] = v
    return out


def _create_regnet(variant, pretrained=False, **kwargs):
    return build_model_with_cfg(RegNet, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                cfg=model_cfgs[variant], **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stem.conv", classifier="head.fc", license="apache-2.0", hf_hub_id="timm/"), **kwargs}


def _pycls(**kwargs):
    return _cfg(license="mit", **kwargs)


def _tv2(url):
    return _cfg(crop_pct=0.965, license="bsd-3-clause", url="https://download.pytorch.org/models/" + url)


def _ra(**kwargs):
    return _cfg(crop_pct=0.95, test_input_size=(3, 288, 288), test_crop_pct=1.0, **kwargs)


_HF = "https://github.com/huggingface/pytorch-image-models/releases/download/"
default_cfgs = generate_default_cfgs({
    "regnetx_002.pycls_in1k": _pycls(),
    "regnetx_004.pycls_in1k": _pycls(),
    "regnetx_004_tv.tv2_in1k": _tv2("regnet_x_400mf-62229a5f.pth"),
    "regnetx_006.pycls_in1k": _pycls(),
    "regnetx_008.tv2_in1k": _tv2("regnet_x_800mf-94a99ebd.pth"),
    "regnetx_016.tv2_in1k": _tv2("regnet_x_1_6gf-a12f2b72.pth"),
    "regnetx_032.tv2_in1k": _tv2("regnet_x_3_2gf-7071aa85.pth"),
    "regnetx_040.pycls_in1k": _pycls(),
    "regnetx_064.pycls_in1k": _pycls(),
    "regnetx_080.tv2_in1k": _tv2("regnet_x_8gf-2b70d774.pth"),
    "regnetx_120.pycls_in1k": _pycls(),
    "regnetx_160.tv2_in1k": _tv2("regnet_x_16gf-ba3796d7.pth"),
    "regnetx_320.tv2_in1k": _tv2("regnet_x_32gf-6eb8fdc6.pth"),
    "regnety_002.pycls_in1k": _pycls(),
    "regnety_004.tv2_in1k": _tv2("regnet_y_400mf-e6988f5f.pth"),
    "regnety_006.pycls_in1k": _pycls(),
    "regnety_008.pycls_in1k": _pycls(),
    "regnety_008_tv.tv2_in1k": _tv2("regnet_y_800mf-58fc7688.pth"),
    "regnety_016.tv2_in1k": _tv2("regnet_y_1_6gf-0d7bc02a.pth"),
    "regnety_032.ra_in1k": _ra(url=_HF + "v0.1-weights/regnety_032_ra-7f2439f9.pth"),
    "regnety_040.ra3_in1k": _ra(url=_HF + "v0.1-tpu-weights/regnety_040_ra3-670e1166.pth"),
    "regnety_064.ra3_in1k": _ra(url=_HF + "v0.1-tpu-weights/regnety_064_ra3-aa26dc7d.pth"),
    "regnety_080.ra3_in1k": _ra(url=_HF + "v0.1-tpu-weights/regnety_080_ra3-1fdc4344.pth"),
    "regnety_080_tv.tv2_in1k": _tv2("regnet_y_8gf-dc2b1b54.pth"),
    "regnety_120.sw_in12k_ft_in1k": _ra(),
    "regnety_160.sw_in12k_ft_in1k": _ra(),
    "regnety_320.tv2_in1k": _tv2("regnet_y_32gf-8db6d4b5.pth"),
    "regnety_640.seer_ft_in1k": _cfg(input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0,
                                     license="seer-license"),
    "regnety_640.seer": _cfg(crop_pct=0.965, num_classes=0, license="seer-license"),
    "regnety_1280.swag_ft_in1k": _cfg(input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0,
                                      license="cc-by-nc-4.0"),
    "regnety_1280.swag_lc_in1k": _cfg(crop_pct=0.965, license="cc-by-nc-4.0"),
    "regnety_1280.seer_ft_in1k": _cfg(input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0,
                                      license="seer-license"),
    "regnety_1280.seer": _cfg(crop_pct=0.965, num_classes=0, license="seer-license"),
    "regnety_2560.seer_ft_in1k": _cfg(input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0,
                                      license="seer-license"),
})


@register_model
def regnetx_002(pretrained=False, **kwargs):
    return _create_regnet("regnetx_002", pretrained, **kwargs)


@register_model
def regnetx_004(pretrained=False, **kwargs):
    return _create_regnet("regnetx_004", pretrained, **kwargs)


@register_model
def regnetx_004_tv(pretrained=False, **kwargs):
    return _create_regnet("regnetx_004_tv", pretrained, **kwargs)


@register_model
def regnetx_006(pretrained=False, **kwargs):
    return _create_regnet("regnetx_006", pretrained, **kwargs)


@register_model
def regnetx_008(pretrained=False, **kwargs):
    return _create_regnet("regnetx_008", pretrained, **kwargs)


@register_model
def regnetx_016(pretrained=False, **kwargs):
    return _create_regnet("regnetx_016", pretrained, **kwargs)


@register_model
def regnetx_032(pretrained=False, **kwargs):
    return _create_regnet("regnetx_032", pretrained, **kwargs)


@register_model
def regnetx_040(pretrained=False, **kwargs):
    return _create_regnet("regnetx_040", pretrained, **kwargs)


@register_model
def regnetx_064(pretrained=False, **kwargs):
    return _create_regnet("regnetx_064", pretrained, **kwargs)


@register_model
def regnetx_080(pretrained=False, **kwargs):
    return _create_regnet("regnetx_080", pretrained, **kwargs)


@register_model
def regnetx_120(pretrained=False, **kwargs):
    return _create_regnet("regnetx_120", pretrained, **kwargs)


@register_model
def regnetx_160(pretrained=False, **kwargs):
    return _create_regnet("regnetx_160", pretrained, **kwargs)


@register_model
def regnetx_320(pretrained=False, **kwargs):
    return _create_regnet("regnetx_320", pretrained, **kwargs)


@register_model
def regnety_002(pretrained=False, **kwargs):
    return _create_regnet("regnety_002", pretrained, **kwargs)


@register_model
def regnety_004(pretrained=False, **kwargs):
    return _create_regnet("regnety_004", pretrained, **kwargs)


@register_model
def regnety_006(pretrained=False, **kwargs):
    return _create_regnet("regnety_006", pretrained, **kwargs)


@register_model
def regnety_008(pretrained=False, **kwargs):
    return _create_regnet("regnety_008", pretrained, **kwargs)


@register_model
def regnety_008_tv(pretrained=False, **kwargs):
    return _create_regnet("regnety_008_tv", pretrained, **kwargs)


@register_model
def regnety_016(pretrained=False, **kwargs):
    return _create_regnet("regnety_016", pretrained, **kwargs)


@register_model
def regnety_032(pretrained=False, **kwargs):
    return _create_regnet("regnety_032", pretrained, **kwargs)


@register_model
def regnety_040(pretrained=False, **kwargs):
    return _create_regnet("regnety_040", pretrained, **kwargs)


@register_model
def regnety_064(pretrained=False, **kwargs):
    return _create_regnet("regnety_064", pretrained, **kwargs)


@register_model
def regnety_080(pretrained=False, **kwargs):
    return _create_regnet("regnety_080", pretrained, **kwargs)


@register_model
def regnety_080_tv(pretrained=False, **kwargs):
    return _create_regnet("regnety_080_tv", pretrained, **kwargs)


@register_model
def regnety_120(pretrained=False, **kwargs):
    return _create_regnet("regnety_120", pretrained, **kwargs)


@register_model
def regnety_160(pretrained=False, **kwargs):
    return _create_regnet("regnety_160", pretrained, **kwargs)


@register_model
def regnety_320(pretrained=False, **kwargs):
    return _create_regnet("regnety_320", pretrained, **kwargs)


@register_model
def regnety_640(pretrained=False, **kwargs):
    return _create_regnet("regnety_640", pretrained, **kwargs)


@register_model
def regnety_1280(pretrained=False, **kwargs):
    return _create_regnet("regnety_1280", pretrained, **kwargs)


@register_model
def regnety_2560(pretrained=False, **kwargs):
    return _create_regnet("regnety_2560", pretrained, **kwargs)


# --- torchvision's RegNet (``stem.0/1``, ``trunk_output.blockS.blockS-i.{proj,f.a,f.b,f.se,f.c}``, ``fc``) ----

class ResBottleneckBlockTV(nn.Module):
    def __init__(self, width_in, width_out, stride, group_width, se_ratio, norm_layer):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, 1, stride, norm_layer=norm_layer,
                                             activation_layer=None)
        f = OrderedDict()
        f["a"] = Conv2dNormActivation(width_in, width_out, 1, norm_layer=norm_layer)
        f["b"] = Conv2dNormActivation(width_out, width_out, 3, stride, groups=width_out // group_width,
                                      norm_layer=norm_layer)
        if se_ratio:
            f["se"] = SqueezeExcitation(width_out, int(round(se_ratio * width_in)))
        f["c"] = Conv2dNormActivation(width_out, width_out, 1, norm_layer=norm_layer, activation_layer=None)
        self.f = nn.Sequential(f)
        self.activation = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.f(x)
        return self.activation((self.proj(x) if self.proj is not None else x) + y)


class RegNetTV(nn.Module):
    """torchvision's RegNet; timm's ``regnet*`` (``_tv`` where the rounding differs) load its checkpoints."""

    def __init__(self, depth, w_0, w_a, w_m, group_width, se_ratio=None, num_classes=1000, stem_width=32):
        super().__init__()
        widths, num_stages, groups = generate_regnet(w_a, w_0, w_m, depth, group_width)
        stage_widths, stage_depths = np.unique(widths, return_counts=True)
        stage_widths, groups = _adjust_widths_groups(list(stage_widths), [1.0] * num_stages, groups, 0.9)
        norm = partial(nn.BatchNorm2d, eps=1e-5, momentum=0.1)
        self.stem = Conv2dNormActivation(3, stem_width, 3, 2, norm_layer=norm)
        stages, prev = OrderedDict(), stem_width
        for i, (w, d, g) in enumerate(zip(stage_widths, stage_depths, groups)):
            blocks = OrderedDict()
            for j in range(int(d)):
                blocks[f"block{i + 1}-{j}"] = ResBottleneckBlockTV(prev if j == 0 else w, w, 2 if j == 0 else 1, g,
                                                                   se_ratio, norm)
            stages[f"block{i + 1}"] = nn.Sequential(blocks)
            prev = w
        self.trunk_output = nn.Sequential(stages)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(prev, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


# depth, w_0, w_a, w_m, group width, SE ratio
_TV_ARCH = {
    "regnet_y_400mf": (16, 48, 27.89, 2.09, 8, 0.25), "regnet_y_800mf": (14, 56, 38.84, 2.4, 16, 0.25),
    "regnet_y_1_6gf": (27, 48, 20.71, 2.65, 24, 0.25), "regnet_y_3_2gf": (21, 80, 42.63, 2.66, 24, 0.25),
    "regnet_y_8gf": (17, 192, 76.82, 2.19, 56, 0.25), "regnet_y_16gf": (18, 200, 106.23, 2.48, 112, 0.25),
    "regnet_y_32gf": (20, 232, 115.89, 2.53, 232, 0.25), "regnet_y_128gf": (27, 456, 160.83, 2.52, 264, 0.25),
    "regnet_x_400mf": (22, 24, 24.48, 2.54, 16, None), "regnet_x_800mf": (16, 56, 35.73, 2.28, 16, None),
    "regnet_x_1_6gf": (18, 80, 34.01, 2.25, 24, None), "regnet_x_3_2gf": (25, 88, 26.31, 2.25, 48, None),
    "regnet_x_8gf": (23, 80, 49.56, 2.88, 120, None), "regnet_x_16gf": (22, 216, 55.59, 2.1, 128, None),
    "regnet_x_32gf": (23, 320, 69.86, 2.0, 168, None),
}


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "regnet_y_400mf": ("RegNet_Y_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_400mf-c65dace8.pth", 4344144, (1, 1), 224, 256, "bilinear", 74.046, 91.716),
        ("IMAGENET1K_V2", "regnet_y_400mf-e6988f5f.pth", 4344144, (1, 1), 224, 232, "bilinear", 75.804, 92.742),
    ]),
    "regnet_y_800mf": ("RegNet_Y_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_800mf-1b27b58c.pth", 6432512, (1, 1), 224, 256, "bilinear", 76.42, 93.136),
        ("IMAGENET1K_V2", "regnet_y_800mf-58fc7688.pth", 6432512, (1, 1), 224, 232, "bilinear", 78.828, 94.502),
    ]),
    "regnet_y_1_6gf": ("RegNet_Y_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_1_6gf-b11a554e.pth", 11202430, (1, 1), 224, 256, "bilinear", 77.95, 93.966),
        ("IMAGENET1K_V2", "regnet_y_1_6gf-0d7bc02a.pth", 11202430, (1, 1), 224, 232, "bilinear", 80.876, 95.444),
    ]),
    "regnet_y_3_2gf": ("RegNet_Y_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_3_2gf-b5a9779c.pth", 19436338, (1, 1), 224, 256, "bilinear", 78.948, 94.576),
        ("IMAGENET1K_V2", "regnet_y_3_2gf-9180c971.pth", 19436338, (1, 1), 224, 232, "bilinear", 81.982, 95.972),
    ]),
    "regnet_y_8gf": ("RegNet_Y_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_8gf-d0d0e4a8.pth", 39381472, (1, 1), 224, 256, "bilinear", 80.032, 95.048),
        ("IMAGENET1K_V2", "regnet_y_8gf-dc2b1b54.pth", 39381472, (1, 1), 224, 232, "bilinear", 82.828, 96.33),
    ]),
    "regnet_y_16gf": ("RegNet_Y_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_16gf-9e6ed7dd.pth", 83590140, (1, 1), 224, 256, "bilinear", 80.424, 95.24),
        ("IMAGENET1K_V2", "regnet_y_16gf-3e4a00f9.pth", 83590140, (1, 1), 224, 232, "bilinear", 82.886, 96.328),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_16gf_swag-43afe44d.pth", 83590140, (1, 1), 384, 384, "bicubic", 86.012, 98.054),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_16gf_lc_swag-f3ec0043.pth", 83590140, (1, 1), 224, 224, "bicubic", 83.976, 97.244),
    ]),
    "regnet_y_32gf": ("RegNet_Y_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_32gf-4dee3f7a.pth", 145046770, (1, 1), 224, 256, "bilinear", 80.878, 95.34),
        ("IMAGENET1K_V2", "regnet_y_32gf-8db6d4b5.pth", 145046770, (1, 1), 224, 232, "bilinear", 83.368, 96.498),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_32gf_swag-04fdfa75.pth", 145046770, (1, 1), 384, 384, "bicubic", 86.838, 98.362),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_32gf_lc_swag-e1583746.pth", 145046770, (1, 1), 224, 224, "bicubic", 84.622, 97.48),
    ]),
    "regnet_y_128gf": ("RegNet_Y_128GF_Weights", "IMAGENET1K_SWAG_E2E_V1", [
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_128gf_swag-c8ce3e52.pth", 644812894, (1, 1), 384, 384, "bicubic", 88.228, 98.682),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_128gf_lc_swag-cbe8ce12.pth", 644812894, (1, 1), 224, 224, "bicubic", 86.068, 97.844),
    ]),
    "regnet_x_400mf": ("RegNet_X_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_400mf-adf1edd5.pth", 5495976, (1, 1), 224, 256, "bilinear", 72.834, 90.95),
        ("IMAGENET1K_V2", "regnet_x_400mf-62229a5f.pth", 5495976, (1, 1), 224, 232, "bilinear", 74.864, 92.322),
    ]),
    "regnet_x_800mf": ("RegNet_X_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_800mf-ad17e45c.pth", 7259656, (1, 1), 224, 256, "bilinear", 75.212, 92.348),
        ("IMAGENET1K_V2", "regnet_x_800mf-94a99ebd.pth", 7259656, (1, 1), 224, 232, "bilinear", 77.522, 93.826),
    ]),
    "regnet_x_1_6gf": ("RegNet_X_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_1_6gf-e3633e7f.pth", 9190136, (1, 1), 224, 256, "bilinear", 77.04, 93.44),
        ("IMAGENET1K_V2", "regnet_x_1_6gf-a12f2b72.pth", 9190136, (1, 1), 224, 232, "bilinear", 79.668, 94.922),
    ]),
    "regnet_x_3_2gf": ("RegNet_X_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_3_2gf-f342aeae.pth", 15296552, (1, 1), 224, 256, "bilinear", 78.364, 93.992),
        ("IMAGENET1K_V2", "regnet_x_3_2gf-7071aa85.pth", 15296552, (1, 1), 224, 232, "bilinear", 81.196, 95.43),
    ]),
    "regnet_x_8gf": ("RegNet_X_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_8gf-03ceed89.pth", 39572648, (1, 1), 224, 256, "bilinear", 79.344, 94.686),
        ("IMAGENET1K_V2", "regnet_x_8gf-2b70d774.pth", 39572648, (1, 1), 224, 232, "bilinear", 81.682, 95.678),
    ]),
    "regnet_x_16gf": ("RegNet_X_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_16gf-2007eb11.pth", 54278536, (1, 1), 224, 256, "bilinear", 80.058, 94.944),
        ("IMAGENET1K_V2", "regnet_x_16gf-ba3796d7.pth", 54278536, (1, 1), 224, 232, "bilinear", 82.716, 96.196),
    ]),
    "regnet_x_32gf": ("RegNet_X_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_32gf-9d47f8d0.pth", 107811560, (1, 1), 224, 256, "bilinear", 80.622, 95.248),
        ("IMAGENET1K_V2", "regnet_x_32gf-6eb8fdc6.pth", 107811560, (1, 1), 224, 232, "bilinear", 83.014, 96.288),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS),
                   lambda name, weights, **kwargs: RegNetTV(*_TV_ARCH[name], **kwargs))
# timm's "_tv" RegNets carry torchvision's channel rounding where it differs from the paper's
register_tv_counterpart({
    "regnet_x_400mf": "regnetx_004_tv", "regnet_x_800mf": "regnetx_008", "regnet_x_1_6gf": "regnetx_016",
    "regnet_x_3_2gf": "regnetx_032", "regnet_x_8gf": "regnetx_080", "regnet_x_16gf": "regnetx_160",
    "regnet_x_32gf": "regnetx_320", "regnet_y_400mf": "regnety_004", "regnet_y_800mf": "regnety_008_tv",
    "regnet_y_1_6gf": "regnety_016", "regnet_y_3_2gf": "regnety_032", "regnet_y_8gf": "regnety_080_tv",
    "regnet_y_16gf": "regnety_160", "regnet_y_32gf": "regnety_320", "regnet_y_128gf": "regnety_1280"})
