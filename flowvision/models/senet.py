"""SENet-154 and the original (Caffe-layout) SE-ResNet / SE-ResNeXt (Hu et al., "Squeeze-and-Excitation
Networks", CVPR 2018), as timm's ``legacy_*`` models.

These keep the layout of the released Caffe weights (stride in the first 1x1 conv of SE-ResNet bottlenecks,
``layer0`` stem, ``last_linear`` head), which differs from ``seresnet50`` in ``resnet.py``. The original
flowvision names (``senet154``, ``se_resnet50``, ``se_resnext50_32x4d`` ...) are aliases of these.
"""
import math
from collections import OrderedDict

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import create_classifier

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["SENet"]


class SEModule(nn.Module):
    """Squeeze-excitation with 1x1 convs named ``fc1``/``fc2`` (the Caffe weights' layout)."""

    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.relu = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        return x * self.sigmoid(self.fc2(self.relu(self.fc1(x.mean((2, 3), keepdim=True)))))


class _SEBottleneckBase(nn.Module):
    expansion = 4

    def _init_convs(self, inplanes, mid1, mid2, out, stride1, stride2, groups, reduction, downsample):
        self.conv1 = nn.Conv2d(inplanes, mid1, 1, stride=stride1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid1)
        self.conv2 = nn.Conv2d(mid1, mid2, 3, stride=stride2, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(mid2)
        self.conv3 = nn.Conv2d(mid2, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.se_module = SEModule(out, reduction)
        self.downsample = downsample

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(self.se_module(out) + shortcut)


class SEBottleneck(_SEBottleneckBase):
    """SENet-154 bottleneck: 2x then 4x ``planes`` wide, grouped 3x3 carries the stride."""

    def __init__(self, inplanes, planes, groups, reduction, stride=1, downsample=None):
        super().__init__()
        self._init_convs(inplanes, planes * 2, planes * 4, planes * 4, 1, stride, groups, reduction, downsample)


class SEResNetBottleneck(_SEBottleneckBase):
    """SE-ResNet bottleneck, Caffe layout: the stride sits in the first 1x1 conv."""

    def __init__(self, inplanes, planes, groups, reduction, stride=1, downsample=None):
        super().__init__()
        self._init_convs(inplanes, planes, planes, planes * 4, stride, 1, groups, reduction, downsample)


class SEResNeXtBottleneck(_SEBottleneckBase):
    """SE-ResNeXt bottleneck (type C): ``groups`` x ``base_width`` wide grouped 3x3 with the stride."""

    def __init__(self, inplanes, planes, groups, reduction, stride=1, downsample=None, base_width=4):
        super().__init__()
        width = math.floor(planes * (base_width / 64)) * groups
        self._init_convs(inplanes, width, width, planes * 4, 1, stride, groups, reduction, downsample)


class SEResNetBlock(nn.Module):
    """Two 3x3 convs with squeeze-excitation (SE-ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, groups, reduction, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, stride=stride, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.se_module = SEModule(planes, reduction)
        self.downsample = downsample

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.se_module(out) + shortcut)


class SENet(ClassifierContract, nn.Module):
    """SENet / legacy SE-ResNe(X)t.

    Args:
        block: the residual block class.
        layers: blocks per stage.
        groups: groups of the 3x3 convs (64 for SENet-154, 32 for SE-ResNeXt, 1 for SE-ResNet).
        reduction: squeeze-excitation reduction ratio.
        drop_rate: dropout before the classifier.
        in_chans, num_classes, global_pool: input channels, classes (0: no head), pooling type.
        inplanes: channels after the stem; input_3x3: three 3x3 convs as stem instead of one 7x7.
        downsample_kernel_size, downsample_padding: of the projection shortcut in stages 2-4.
    """
    head_attr = "last_linear"
    pool_attr = "global_pool"

    def __init__(self, block, layers, groups, reduction, drop_rate=0.2, in_chans=3, inplanes=64, input_3x3=False,
                 downsample_kernel_size=1, downsample_padding=0, num_classes=1000, global_pool="avg"):
        super().__init__()
        self.inplanes = inplanes
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        if input_3x3:
            stem = [("conv1", nn.Conv2d(in_chans, 64, 3, stride=2, padding=1, bias=False)),
                    ("bn1", nn.BatchNorm2d(64)), ("relu1", nn.ReLU(inplace=True)),
                    ("conv2", nn.Conv2d(64, 64, 3, stride=1, padding=1, bias=False)),
                    ("bn2", nn.BatchNorm2d(64)), ("relu2", nn.ReLU(inplace=True)),
                    ("conv3", nn.Conv2d(64, inplanes, 3, stride=1, padding=1, bias=False)),
                    ("bn3", nn.BatchNorm2d(inplanes)), ("relu3", nn.ReLU(inplace=True))]
        else:
            stem = [("conv1", nn.Conv2d(in_chans, inplanes, 7, stride=2, padding=3, bias=False)),
                    ("bn1", nn.BatchNorm2d(inplanes)), ("relu1", nn.ReLU(inplace=True))]
        self.layer0 = nn.Sequential(OrderedDict(stem))
        self.pool0 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.feature_info = [dict(num_chs=inplanes, reduction=2, module="layer0")]
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if i == 0 else 2
            k, p = (1, 0) if i == 0 else (downsample_kernel_size, downsample_padding)
            self.add_module(f"layer{i + 1}", self._make_layer(block, planes, n, groups, reduction, stride, k, p))
            self.feature_info.append(dict(num_chs=planes * block.expansion, reduction=4 * 2 ** i,
                                          module=f"layer{i + 1}"))
        self.num_features = 512 * block.expansion
        self.global_pool, self.last_linear = create_classifier(self.num_features, num_classes,
                                                               pool_type=global_pool)
        self.head_hidden_size = self.num_features * self.global_pool.feat_mult()
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _make_layer(self, block, planes, blocks, groups, reduction, stride, ds_kernel, ds_padding):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, ds_kernel, stride=stride, padding=ds_padding,
                          bias=False),
                nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, groups, reduction, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, groups, reduction) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^layer0", blocks=r"^layer(\d+)" if coarse else r"^layer(\d+)\.(\d+)")

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        x = self.pool0(self.layer0(x))
        return self.run_blocks((self.layer1, self.layer2, self.layer3, self.layer4), x)

    def forward_head(self, x, pre_logits=False):
        x = self.global_pool(x)
        if self.drop_rate > 0.0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return x if pre_logits else self.last_linear(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="layer0.conv1", classifier="last_linear", license="apache-2.0"), **kwargs}


_REL = "https://github.com/rwightman/pytorch-image-models/releases/download/"
default_cfgs = generate_default_cfgs({
    "legacy_senet154.in1k": _cfg(url=_REL + "v0.1-weights/legacy_senet154-e9eb9fe6.pth"),
    "legacy_seresnet18.in1k": _cfg(url=_REL + "v0.1-weights/seresnet18-4bb0ce65.pth", interpolation="bicubic"),
    "legacy_seresnet34.in1k": _cfg(url=_REL + "v0.1-weights/seresnet34-a4004e63.pth"),
    "legacy_seresnet50.in1k": _cfg(url=_REL + "v0.1-cadene/se_resnet50-ce0d4300.pth"),
    "legacy_seresnet101.in1k": _cfg(url=_REL + "v0.1-cadene/se_resnet101-7e38fcc6.pth"),
    "legacy_seresnet152.in1k": _cfg(url=_REL + "v0.1-cadene/se_resnet152-d17c99b7.pth"),
    "legacy_seresnext26_32x4d.in1k": _cfg(url=_REL + "v0.1-weights/seresnext26_32x4d-65ebdb501.pth",
                                          interpolation="bicubic"),
    "legacy_seresnext50_32x4d.in1k": _cfg(url=_REL + "v0.1-weights/legacy_se_resnext50_32x4d-f3651bad.pth"),
    "legacy_seresnext101_32x4d.in1k": _cfg(url=_REL + "v0.1-weights/legacy_se_resnext101_32x4d-37725eac.pth"),
})


def _se(variant, pretrained, kwargs, **args):
    return build_model_with_cfg(SENet, variant, pretrained, **{**dict(reduction=16), **args, **kwargs})


@register_model
def legacy_seresnet18(pretrained=False, **kwargs):
    """SE-ResNet-18."""
    return _se("legacy_seresnet18", pretrained, kwargs, block=SEResNetBlock, layers=(2, 2, 2, 2), groups=1)


@register_model
def legacy_seresnet34(pretrained=False, **kwargs):
    """SE-ResNet-34."""
    return _se("legacy_seresnet34", pretrained, kwargs, block=SEResNetBlock, layers=(3, 4, 6, 3), groups=1)


@register_model
def legacy_seresnet50(pretrained=False, **kwargs):
    """SE-ResNet-50 (Caffe layout)."""
    return _se("legacy_seresnet50", pretrained, kwargs, block=SEResNetBottleneck, layers=(3, 4, 6, 3), groups=1)


@register_model
def legacy_seresnet101(pretrained=False, **kwargs):
    """SE-ResNet-101 (Caffe layout)."""
    return _se("legacy_seresnet101", pretrained, kwargs, block=SEResNetBottleneck, layers=(3, 4, 23, 3),
               groups=1)


@register_model
def legacy_seresnet152(pretrained=False, **kwargs):
    """SE-ResNet-152 (Caffe layout)."""
    return _se("legacy_seresnet152", pretrained, kwargs, block=SEResNetBottleneck, layers=(3, 8, 36, 3),
               groups=1)


@register_model
def legacy_senet154(pretrained=False, **kwargs):
    """SENet-154: 64-group SE bottlenecks, 3x3 stem, 3x3 projection shortcuts."""
    return _se("legacy_senet154", pretrained, kwargs, block=SEBottleneck, layers=(3, 8, 36, 3), groups=64,
               downsample_kernel_size=3, downsample_padding=1, inplanes=128, input_3x3=True)


@register_model
def legacy_seresnext26_32x4d(pretrained=False, **kwargs):
    """SE-ResNeXt-26 32x4d."""
    return _se("legacy_seresnext26_32x4d", pretrained, kwargs, block=SEResNeXtBottleneck, layers=(2, 2, 2, 2),
               groups=32)


@register_model
def legacy_seresnext50_32x4d(pretrained=False, **kwargs):
    """SE-ResNeXt-50 32x4d."""
    return _se("legacy_seresnext50_32x4d", pretrained, kwargs, block=SEResNeXtBottleneck, layers=(3, 4, 6, 3),
               groups=32)


@register_model
def legacy_seresnext101_32x4d(pretrained=False, **kwargs):
    """SE-ResNeXt-101 32x4d."""
    return _se("legacy_seresnext101_32x4d", pretrained, kwargs, block=SEResNeXtBottleneck, layers=(3, 4, 23, 3),
               groups=32)


for _orig, _timm in (("senet154", "legacy_senet154"), ("se_resnet50", "legacy_seresnet50"),
                     ("se_resnet101", "legacy_seresnet101"), ("se_resnet152", "legacy_seresnet152"),
                     ("se_resnext50_32x4d", "legacy_seresnext50_32x4d"),
                     ("se_resnext101_32x4d", "legacy_seresnext101_32x4d")):
    register_model_alias(_orig, _timm)
