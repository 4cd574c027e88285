"""DLA: Deep Layer Aggregation (Yu et al., CVPR 2018), plus DLA with Res2Net blocks; timm's names.

Stages are trees of residual blocks whose outputs an aggregation node ("root") merges with the tree's input
and the earlier levels' outputs. The original flowvision names are timm's names.
"""
import math

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import SelectAdaptivePool2d

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model
from .res2net import res2_scales

__all__ = ["DLA"]


def _conv_bn(in_chs, out_chs, kernel_size=3, stride=1, dilation=1, groups=1):
    return (nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride, padding=dilation * (kernel_size // 2),
                      dilation=dilation, groups=groups, bias=False), nn.BatchNorm2d(out_chs))


class DlaBasic(nn.Module):
    """Two 3x3 convs; the shortcut may be given by the tree (the projected, downsampled input)."""

    def __init__(self, inplanes, planes, stride=1, dilation=1, **_):
        super().__init__()
        self.conv1, self.bn1 = _conv_bn(inplanes, planes, 3, stride, dilation)
        self.relu = nn.ReLU(inplace=True)
        self.conv2, self.bn2 = _conv_bn(planes, planes, 3, 1, dilation)
        self.stride = stride

    def forward(self, x, shortcut=None, children=None):
        shortcut = x if shortcut is None else shortcut
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + shortcut)


class DlaBottleneck(nn.Module):
    """1x1 -> grouped 3x3 -> 1x1 bottleneck of expansion 2 (DLA and DLA-X)."""
    expansion = 2

    def __init__(self, inplanes, outplanes, stride=1, dilation=1, cardinality=1, base_width=64):
        super().__init__()
        self.stride = stride
        mid = int(math.floor(outplanes * (base_width / 64)) * cardinality) // self.expansion
        self.conv1, self.bn1 = _conv_bn(inplanes, mid, 1)
        self.conv2, self.bn2 = _conv_bn(mid, mid, 3, stride, dilation, groups=cardinality)
        self.conv3, self.bn3 = _conv_bn(mid, outplanes, 1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, shortcut=None, children=None):
        shortcut = x if shortcut is None else shortcut
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn3(self.conv3(self.relu(self.bn2(self.conv2(out)))))
        return self.relu(out + shortcut)


class DlaBottle2neck(nn.Module):
    """Res2Net bottleneck of expansion 2 for DLA."""
    expansion = 2

    def __init__(self, inplanes, outplanes, stride=1, dilation=1, scale=4, cardinality=8, base_width=4):
        super().__init__()
        self.is_first = stride > 1
        self.scale = scale
        mid = int(math.floor(outplanes * (base_width / 64)) * cardinality) // self.expansion
        self.width = mid
        self.conv1, self.bn1 = _conv_bn(inplanes, mid * scale, 1)
        pairs = [_conv_bn(mid, mid, 3, stride, dilation, groups=cardinality) for _ in range(max(1, scale - 1))]
        self.convs = nn.ModuleList([c for c, _ in pairs])
        self.bns = nn.ModuleList([b for _, b in pairs])
        self.pool = nn.AvgPool2d(3, stride=stride, padding=1) if self.is_first else None
        self.conv3, self.bn3 = _conv_bn(mid * scale, outplanes, 1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, shortcut=None, children=None):
        shortcut = x if shortcut is None else shortcut
        out = res2_scales(self, self.relu(self.bn1(self.conv1(x))))
        return self.relu(self.bn3(self.conv3(out)) + shortcut)


class DlaRoot(nn.Module):
    """Aggregation node: 1x1 conv + BN over the concatenated children (+ the first child when ``shortcut``)."""

    def __init__(self, in_channels, out_channels, kernel_size, shortcut):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, stride=1, bias=False, padding=(kernel_size - 1) // 2)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut = shortcut

    def forward(self, x_children):
        x = self.bn(self.conv(flow.cat(x_children, 1)))
        if self.shortcut:
            x = x + x_children[0]
        return self.relu(x)


class DlaTree(nn.Module):
    """A tree of depth ``levels``: two subtrees (or two blocks at depth 1) whose outputs a root aggregates."""

    def __init__(self, levels, block, in_channels, out_channels, stride=1, dilation=1, cardinality=1,
                 base_width=64, level_root=False, root_dim=0, root_kernel_size=1, root_shortcut=False):
        super().__init__()
        if root_dim == 0:
            root_dim = 2 * out_channels
        if level_root:
            root_dim += in_channels
        self.downsample = nn.MaxPool2d(stride, stride=stride) if stride > 1 else nn.Identity()
        self.project = nn.Identity()
        cargs = dict(dilation=dilation, cardinality=cardinality, base_width=base_width)
        if levels == 1:
            self.tree1 = block(in_channels, out_channels, stride, **cargs)
            self.tree2 = block(out_channels, out_channels, 1, **cargs)
            if in_channels != out_channels:
                self.project = nn.Sequential(*_conv_bn(in_channels, out_channels, 1))
            self.root = DlaRoot(root_dim, out_channels, root_kernel_size, root_shortcut)
        else:
            cargs.update(root_kernel_size=root_kernel_size, root_shortcut=root_shortcut)
            self.tree1 = DlaTree(levels - 1, block, in_channels, out_channels, stride, root_dim=0, **cargs)
            self.tree2 = DlaTree(levels - 1, block, out_channels, out_channels, root_dim=root_dim + out_channels,
                                 **cargs)
            self.root = None
        self.level_root = level_root
        self.root_dim = root_dim
        self.levels = levels

    def forward(self, x, shortcut=None, children=None):
        children = [] if children is None else children
        bottom = self.downsample(x)
        shortcut = self.project(bottom)
        if self.level_root:
            children.append(bottom)
        x1 = self.tree1(x, shortcut)
        if self.root is not None:
            return self.root([self.tree2(x1), x1] + children)
        children.append(x1)
        return self.tree2(x1, None, children)


class DLA(ClassifierContract, nn.Module):
    """Deep Layer Aggregation.

    Args:
        levels: tree depth per level (level0/1 are plain conv levels).
        channels: width of each of the six levels.
        num_classes, in_chans, global_pool: classes (0: no classifier), input channels, pooling type.
        cardinality, base_width: grouped-conv settings of the blocks.
        block: DlaBasic, DlaBottleneck or DlaBottle2neck. shortcut_root: residual aggregation nodes.
        drop_rate: dropout before the (1x1 conv) classifier.
    """
    head_attr = "fc"

    def __init__(self, levels, channels, output_stride=32, num_classes=1000, in_chans=3, global_pool="avg",
                 cardinality=1, base_width=64, block=DlaBottle2neck, shortcut_root=False, drop_rate=0.0):
        super().__init__()
        if output_stride != 32:
            raise ValueError("DLA supports only output_stride=32 (no dilation)")
        self.channels = channels
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.cardinality = cardinality
        self.base_width = base_width
        self.grad_checkpointing = False
        self.base_layer = nn.Sequential(nn.Conv2d(in_chans, channels[0], 7, stride=1, padding=3, bias=False),
                                        nn.BatchNorm2d(channels[0]), nn.ReLU(inplace=True))
        self.level0 = self._make_conv_level(channels[0], channels[0], levels[0])
        self.level1 = self._make_conv_level(channels[0], channels[1], levels[1], stride=2)
        cargs = dict(cardinality=cardinality, base_width=base_width, root_shortcut=shortcut_root)
        for i in range(2, 6):
            self.add_module(f"level{i}", DlaTree(levels[i], block, channels[i - 1], channels[i], 2,
                                                 level_root=i > 2, **cargs))
        self.feature_info = [dict(num_chs=channels[i], reduction=2 ** i, module=f"level{i}") for i in range(6)]
        self.num_features = channels[-1]
        self.head_drop = nn.Dropout(drop_rate)
        self._set_head(num_classes, global_pool)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / n))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _set_head(self, num_classes, global_pool):
        self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
        self.head_hidden_size = self.num_features * self.global_pool.feat_mult()
        self.fc = nn.Conv2d(self.head_hidden_size, num_classes, 1, bias=True) if num_classes > 0 else nn.Identity()
        self.flatten = nn.Flatten(1) if global_pool else nn.Identity()

    @staticmethod
    def _make_conv_level(inplanes, planes, convs, stride=1, dilation=1):
        modules = []
        for i in range(convs):
            modules += [*_conv_bn(inplanes, planes, 3, stride if i == 0 else 1, dilation), nn.ReLU(inplace=True)]
            inplanes = planes
        return nn.Sequential(*modules)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^base_layer", blocks=r"^level(\d+)" if coarse else [
            (r"^level(\d+)\.tree(\d+)", None), (r"^level(\d+)\.root", (2,)), (r"^level(\d+)", (1,))])

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        self._set_head(num_classes, self.global_pool.pool_type if global_pool is None else global_pool)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final features, [level outputs]) for ``indices`` of the six levels (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"DLA's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        take, max_index = feature_take_indices(6, indices)
        x = self.base_layer(x)
        intermediates = []
        for i in range(max_index + 1 if stop_early else 6):
            x = getattr(self, f"level{i}")(x)
            if i in take:
                intermediates.append(x)
        return intermediates if intermediates_only else (x, intermediates)

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks([getattr(self, f"level{i}") for i in range(6)], self.base_layer(x))

    def forward_head(self, x, pre_logits=False):
        x = self.head_drop(self.global_pool(x))
        return self.flatten(x) if pre_logits else self.flatten(self.fc(x))


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="base_layer.0", classifier="fc", license="bsd-3-clause", hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    "dla34.in1k": _cfg(), "dla46_c.in1k": _cfg(), "dla46x_c.in1k": _cfg(), "dla60x_c.in1k": _cfg(),
    "dla60.in1k": _cfg(), "dla60x.in1k": _cfg(), "dla102.in1k": _cfg(), "dla102x.in1k": _cfg(),
    "dla102x2.in1k": _cfg(), "dla169.in1k": _cfg(),
    "dla60_res2net.in1k": _cfg(license="unknown"), "dla60_res2next.in1k": _cfg(license="unknown"),
})

_WIDE = (16, 32, 128, 256, 512, 1024)
_NARROW = (16, 32, 64, 64, 128, 256)


def _dla(variant, pretrained, kwargs, **args):
    return build_model_with_cfg(DLA, variant, pretrained, feature_cfg=dict(out_indices=(1, 2, 3, 4, 5)),
                                **{**args, **kwargs})


@register_model
def dla60_res2net(pretrained=False, **kwargs):
    """DLA-60 with Res2Net blocks."""
    return _dla("dla60_res2net", pretrained, kwargs, levels=(1, 1, 1, 2, 3, 1), channels=_WIDE,
                block=DlaBottle2neck, cardinality=1, base_width=28)


@register_model
def dla60_res2next(pretrained=False, **kwargs):
    """DLA-60 with Res2NeXt blocks."""
    return _dla("dla60_res2next", pretrained, kwargs, levels=(1, 1, 1, 2, 3, 1), channels=_WIDE,
                block=DlaBottle2neck, cardinality=8, base_width=4)


@register_model
def dla34(pretrained=False, **kwargs):
    """DLA-34."""
    return _dla("dla34", pretrained, kwargs, levels=(1, 1, 1, 2, 2, 1), channels=(16, 32, 64, 128, 256, 512),
                block=DlaBasic)


@register_model
def dla46_c(pretrained=False, **kwargs):
    """DLA-46-C."""
    return _dla("dla46_c", pretrained, kwargs, levels=(1, 1, 1, 2, 2, 1), channels=_NARROW, block=DlaBottleneck)


@register_model
def dla46x_c(pretrained=False, **kwargs):
    """DLA-X-46-C."""
    return _dla("dla46x_c", pretrained, kwargs, levels=(1, 1, 1, 2, 2, 1), channels=_NARROW, block=DlaBottleneck,
                cardinality=32, base_width=4)


@register_model
def dla60x_c(pretrained=False, **kwargs):
    """DLA-X-60-C."""
    return _dla("dla60x_c", pretrained, kwargs, levels=(1, 1, 1, 2, 3, 1), channels=_NARROW, block=DlaBottleneck,
                cardinality=32, base_width=4)


@register_model
def dla60(pretrained=False, **kwargs):
    """DLA-60."""
    return _dla("dla60", pretrained, kwargs, levels=(1, 1, 1, 2, 3, 1), channels=_WIDE, block=DlaBottleneck)


@register_model
def dla60x(pretrained=False, **kwargs):
    """DLA-X-60."""
    return _dla("dla60x", pretrained, kwargs, levels=(1, 1, 1, 2, 3, 1), channels=_WIDE, block=DlaBottleneck,
                cardinality=32, base_width=4)


@register_model
def dla102(pretrained=False, **kwargs):
    """DLA-102."""
    return _dla("dla102", pretrained, kwargs, levels=(1, 1, 1, 3, 4, 1), channels=_WIDE, block=DlaBottleneck,
                shortcut_root=True)


@register_model
def dla102x(pretrained=False, **kwargs):
    """DLA-X-102."""
    return _dla("dla102x", pretrained, kwargs, levels=(1, 1, 1, 3, 4, 1), channels=_WIDE, block=DlaBottleneck,
                cardinality=32, base_width=4, shortcut_root=True)


@register_model
def dla102x2(pretrained=False, **kwargs):
    """DLA-X-102 64."""
    return _dla("dla102x2", pretrained, kwargs, levels=(1, 1, 1, 3, 4, 1), channels=_WIDE, block=DlaBottleneck,
                cardinality=64, base_width=4, shortcut_root=True)


@register_model
def dla169(pretrained=False, **kwargs):
    """DLA-169."""
    return _dla("dla169", pretrained, kwargs, levels=(1, 1, 2, 3, 5, 1), channels=_WIDE, block=DlaBottleneck,
                shortcut_root=True)
