"""IResNet: the improved ResNet of face recognition (Deng et al., "ArcFace: Additive Angular Margin Loss for
Deep Face Recognition", CVPR 2019; InsightFace's ``iresnet`` backbones).

112x112 faces -> a 512-d embedding: pre-activation style blocks (BN -> 3x3 -> BN -> PReLU -> strided 3x3 -> BN,
no activation after the sum), a stride-1 stem, then BN -> flatten -> FC -> BN1d (the "embedding head").
timm has no IResNet: parameter names follow InsightFace's release so its checkpoints load unchanged.

The original flowvision names: ``iresnet50`` (3-4-14-3 blocks) and ``iresnet101``, which is InsightFace's
r100 (3-13-30-3 blocks, the layer counts the original used); ``iresnet100`` is registered under
InsightFace's name. The original flowvision used ReLU where InsightFace uses PReLU: PReLU (InsightFace's
published architecture) is implemented.
"""
import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none
from ._pretrained import generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["IResNet", "IBasicBlock"]


class PReLU(nn.Module):
    """Per-channel PReLU (parameter ``weight``, as nn.PReLU) written as relu(x) - a * relu(-x): the same values,
    from ops the capture path records (the engine's PReLU is not capturable yet)."""

    def __init__(self, num_parameters, init=0.25):
        super().__init__()
        self.weight = nn.Parameter(flow.full((num_parameters,), init))

    def forward(self, x):
        return F.relu(x) - self.weight.reshape(1, -1, 1, 1) * F.relu(-x)


def _conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, bias=False)


class IBasicBlock(nn.Module):
    """BN -> 3x3 -> BN -> PReLU -> 3x3 (stride) -> BN, plus the (projected) input."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(inplanes, eps=1e-5)
        self.conv1 = _conv3x3(inplanes, planes)
        self.bn2 = nn.BatchNorm2d(planes, eps=1e-5)
        self.prelu = PReLU(planes)
        self.conv2 = _conv3x3(planes, planes, stride)
        self.bn3 = nn.BatchNorm2d(planes, eps=1e-5)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        return out + (x if self.downsample is None else self.downsample(x))


class IResNet(ClassifierContract, nn.Module):
    """IResNet face-embedding network.

    Args:
        layers: blocks per stage (all four stages stride 2).
        num_classes: embedding size (512 in InsightFace; 0: the flattened 512x7x7 map).
        dropout: before the embedding FC. in_chans: input channels. img_size: 112 (the FC fixes it).
    """
    head_attr = "fc"
    accepts_img_size = True

    def __init__(self, layers, num_classes=512, dropout=0.0, in_chans=3, img_size=112):
        super().__init__()
        img_size = img_size[0] if isinstance(img_size, (tuple, list)) else img_size
        if img_size % 16:
            raise ValueError(f"img_size must be a multiple of 16, got {img_size}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.img_size = img_size
        self.grad_checkpointing = False
        self.inplanes = 64
        self.conv1 = nn.Conv2d(in_chans, 64, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64, eps=1e-5)
        self.prelu = PReLU(64)
        self.feature_info = [dict(num_chs=64, reduction=1, module="prelu")]
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
            self.add_module(f"layer{i + 1}", self._make_layer(planes, n))
            self.feature_info.append(dict(num_chs=planes, reduction=2 ** (i + 1), module=f"layer{i + 1}"))
        self.bn2 = nn.BatchNorm2d(512, eps=1e-5)
        self.dropout = nn.Dropout(p=dropout)
        self.num_features = 512
        self.head_hidden_size = 512 * (img_size // 16) ** 2
        self._set_head(num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, 0.0, 0.1)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _set_head(self, num_classes):
        if num_classes > 0:
            self.fc = nn.Linear(self.head_hidden_size, num_classes)
            self.features = nn.BatchNorm1d(num_classes, eps=1e-5)
            nn.init.ones_(self.features.weight)
            self.features.weight.requires_grad = False  # InsightFace keeps the embedding BN's scale at 1
        else:
            self.fc = self.features = nn.Identity()

    def _make_layer(self, planes, blocks):
        downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride=2, bias=False),
                                   nn.BatchNorm2d(planes, eps=1e-5))
        layers = [IBasicBlock(self.inplanes, planes, 2, downsample)]
        self.inplanes = planes
        layers += [IBasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^conv1|bn1|prelu", blocks=r"^layer(\d+)" if coarse else r"^layer(\d+)\.(\d+)")

    def reset_classifier(self, num_classes, global_pool=None):
        if global_pool:
            raise ValueError("IResNet has no pooling: its embedding FC reads the whole map")
        self.num_classes = classifier_or_none(num_classes)
        self._set_head(num_classes)

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        if tuple(x.shape[-2:]) != (self.img_size, self.img_size):
            raise ValueError(f"input size ({x.shape[-2]}x{x.shape[-1]}) does not match the model "
                             f"({self.img_size}x{self.img_size}); create it with img_size=")
        x = self.prelu(self.bn1(self.conv1(x)))
        x = self.run_blocks((self.layer1, self.layer2, self.layer3, self.layer4), x)
        return self.bn2(x)

    def forward_head(self, x, pre_logits=False):
        x = self.dropout(x.flatten(1))
        return x if pre_logits else self.features(self.fc(x))


def _cfg(**kwargs):
    return {**dict(num_classes=512, input_size=(3, 112, 112), pool_size=None, crop_pct=1.0,
                   interpolation="bilinear", mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), fixed_input_size=True,
                   first_conv="conv1", classifier="fc", license="mit"), **kwargs}


default_cfgs = generate_default_cfgs({"iresnet50": _cfg(), "iresnet100": _cfg()})


@register_model
def iresnet50(pretrained=False, **kwargs):
    """IResNet-50 (3-4-14-3 blocks), 512-d face embedding."""
    return build_model_with_cfg(IResNet, "iresnet50", pretrained, **{"layers": (3, 4, 14, 3), **kwargs})


@register_model
def iresnet100(pretrained=False, **kwargs):
    """IResNet-100 (3-13-30-3 blocks), 512-d face embedding."""
    return build_model_with_cfg(IResNet, "iresnet100", pretrained, **{"layers": (3, 13, 30, 3), **kwargs})


register_model_alias("iresnet101", "iresnet100")
