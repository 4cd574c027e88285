"""GENet / GPU-Efficient Networks (Lin et al., "Neural Architecture Design for GPU-Efficient Networks", 2020)
in timm's ByobNet layout (``gernet_s/m/l``), and the ByobNet blocks MobileViT shares.

The original flowvision names ``genet_small / genet_normal / genet_large`` are aliases of timm's
``gernet_s / gernet_m / gernet_l``.
"""
from flowvision.backend import nn
from flowvision.layers import ClassifierHead, ConvNormAct, DropPath

from ._builder import build_model_with_cfg
from ._contract import HeadModuleContract, check_input_channels
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["ByobBase", "ByobNet", "BasicBlock", "BottleneckBlock"]


def _shortcut(in_chs, out_chs, stride, project):
    """Identity when the shape is kept; otherwise a strided 1x1 ConvNormAct (``project``) or no shortcut."""
    if in_chs == out_chs and stride == 1:
        return nn.Identity()
    return ConvNormAct(in_chs, out_chs, 1, stride=stride, apply_act=False) if project else None


class BasicBlock(nn.Module):
    """kxk conv (+act) -> kxk conv, plus shortcut, then act."""

    def __init__(self, in_chs, out_chs, stride=1, mid_chs=None, act_layer=nn.ReLU, project_shortcut=True,
                 drop_path_rate=0.0):
        super().__init__()
        mid_chs = mid_chs or out_chs
        self.shortcut = _shortcut(in_chs, out_chs, stride, project_shortcut)
        self.conv1_kxk = ConvNormAct(in_chs, mid_chs, 3, stride=stride, act_layer=act_layer)
        self.attn = nn.Identity()
        self.conv2_kxk = ConvNormAct(mid_chs, out_chs, 3, apply_act=False)
        self.attn_last = nn.Identity()
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate > 0 else nn.Identity()
        self.act = act_layer(inplace=True)

    def forward(self, x):
        out = self.drop_path(self.attn_last(self.conv2_kxk(self.attn(self.conv1_kxk(x)))))
        if self.shortcut is not None:
            out = out + self.shortcut(x)
        return self.act(out)


class BottleneckBlock(nn.Module):
    """1x1 (+act) -> grouped kxk (+act) -> 1x1, plus shortcut, then act (Identity for MobileViT's
    inverted residuals)."""

    def __init__(self, in_chs, out_chs, stride=1, mid_chs=None, groups=1, act_layer=nn.ReLU, project_shortcut=True,
                 out_act=True, drop_path_rate=0.0):
        super().__init__()
        mid_chs = mid_chs or out_chs
        self.shortcut = _shortcut(in_chs, out_chs, stride, project_shortcut)
        self.conv1_1x1 = ConvNormAct(in_chs, mid_chs, 1, act_layer=act_layer)
        self.conv2_kxk = ConvNormAct(mid_chs, mid_chs, 3, stride=stride, groups=groups, act_layer=act_layer)
        self.conv2b_kxk = nn.Identity()
        self.attn = nn.Identity()
        self.conv3_1x1 = ConvNormAct(mid_chs, out_chs, 1, apply_act=False)
        self.attn_last = nn.Identity()
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate > 0 else nn.Identity()
        self.act = act_layer(inplace=True) if out_act else nn.Identity()

    def forward(self, x):
        out = self.conv3_1x1(self.attn(self.conv2b_kxk(self.conv2_kxk(self.conv1_1x1(x)))))
        out = self.drop_path(self.attn_last(out))
        if self.shortcut is not None:
            out = out + self.shortcut(x)
        return self.act(out)


class ByobBase(HeadModuleContract, nn.Module):
    """timm's ByobNet layout, shared by GENet and MobileViT: ``stem`` -> ``stages`` -> ``final_conv`` -> ``head``
    (a ClassifierHead); subclasses build those modules and set ``in_chans``."""

    def group_matcher(self, coarse=False):
        return dict(stem=r"^stem", blocks=[(r"^stages\.(\d+)" if coarse else r"^stages\.(\d+)\.(\d+)", None),
                                           (r"^final_conv", (99999,))])

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.final_conv(self.run_blocks(self.stages, self.stem(x)))


class ByobNet(ByobBase):
    """A stem, stages of basic/bottleneck blocks, a final 1x1 conv and a linear head (the GENet subset of
    timm's ByobNet).

    Args:
        stages: per stage (block type 'basic'|'bottle', depth, out channels, stride, bottleneck ratio, group
            size or None for dense convs).
        stem_chs, final_chs: stem and final-conv widths. feature_stages: stage outputs listed in feature_info
            (the final conv always is).
        in_chans, num_classes, global_pool, drop_rate, drop_path_rate: as usual.
    """

    def __init__(self, stages, stem_chs, final_chs, feature_stages=(0, 1, 2), in_chans=3, num_classes=1000,
                 global_pool="avg", drop_rate=0.0, drop_path_rate=0.0):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.grad_checkpointing = False
        self.stem = ConvNormAct(in_chans, stem_chs, 3, stride=2)
        self.feature_info = [dict(num_chs=stem_chs, reduction=2, module="stem")]
        prev, reduction, built = stem_chs, 2, []
        for i, (kind, depth, out, stride, ratio, group_size) in enumerate(stages):
            blocks = []
            for d in range(depth):
                s = stride if d == 0 else 1
                mid = int(out * ratio)
                if kind == "basic":
                    blocks.append(BasicBlock(prev, out, s, mid, drop_path_rate=drop_path_rate))
                else:
                    groups = mid // group_size if group_size else 1
                    blocks.append(BottleneckBlock(prev, out, s, mid, groups, drop_path_rate=drop_path_rate))
                prev = out
            built.append(nn.Sequential(*blocks))
            reduction *= stride
            if i in feature_stages:
                self.feature_info.append(dict(num_chs=out, reduction=reduction, module=f"stages.{i}"))
        self.stages = nn.Sequential(*built)
        self.final_conv = ConvNormAct(prev, final_chs, 1)
        self.feature_info.append(dict(num_chs=final_chs, reduction=reduction, module="final_conv"))
        self.num_features = self.head_hidden_size = final_chs
        self.head = ClassifierHead(final_chs, num_classes, global_pool, drop_rate)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stem.conv", classifier="head.fc", license="apache-2.0", hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    "gernet_s.idstcv_in1k": _cfg(),
    "gernet_m.idstcv_in1k": _cfg(),
    "gernet_l.idstcv_in1k": _cfg(input_size=(3, 256, 256), pool_size=(8, 8)),
})


def _gernet(variant, pretrained, kwargs, stages, stem_chs, final_chs):
    return build_model_with_cfg(ByobNet, variant, pretrained,
                                **{**dict(stages=stages, stem_chs=stem_chs, final_chs=final_chs), **kwargs})


@register_model
def gernet_s(pretrained=False, **kwargs):
    """GENet-small."""
    return _gernet("gernet_s", pretrained, kwargs, [
        ("basic", 1, 48, 2, 1.0, None), ("basic", 3, 48, 2, 1.0, None), ("bottle", 7, 384, 2, 0.25, None),
        ("bottle", 2, 560, 2, 3.0, 1), ("bottle", 1, 256, 1, 3.0, 1)], 13, 1920)


@register_model
def gernet_m(pretrained=False, **kwargs):
    """GENet-normal."""
    return _gernet("gernet_m", pretrained, kwargs, [
        ("basic", 1, 128, 2, 1.0, None), ("basic", 2, 192, 2, 1.0, None), ("bottle", 6, 640, 2, 0.25, None),
        ("bottle", 4, 640, 2, 3.0, 1), ("bottle", 1, 640, 1, 3.0, 1)], 32, 2560)


@register_model
def gernet_l(pretrained=False, **kwargs):
    """GENet-large."""
    return _gernet("gernet_l", pretrained, kwargs, [
        ("basic", 1, 128, 2, 1.0, None), ("basic", 2, 192, 2, 1.0, None), ("bottle", 6, 640, 2, 0.25, None),
        ("bottle", 5, 640, 2, 3.0, 1), ("bottle", 4, 640, 1, 3.0, 1)], 32, 2560)


for _orig, _timm in (("genet_small", "gernet_s"), ("genet_normal", "gernet_m"), ("genet_large", "gernet_l")):
    register_model_alias(_orig, _timm)
