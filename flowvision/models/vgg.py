"""VGG 11/13/16/19 (+ _bn), with timm's module and parameter names.

``features`` (3x3 convs + ReLU, max-pools) -> ``pre_logits`` (ConvMlp: the two 4096-wide fc layers as a 7x7
conv and a 1x1 conv, so any input size >= 32 works) -> ``head`` (pool + fc). torchvision's checkpoint keys
(``classifier.0/3/6``) are mapped by ``checkpoint_filter_fn``.
"""
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import ClassifierHead

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import HeadModuleContract
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["VGG", "ConvMlp", "VGGTV"]

CFGS = {
    "vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg13": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class ConvMlp(nn.Module):
    """VGG's fc6/fc7 as convs; inputs smaller than the 7x7 kernel are first average-pooled up to 7x7."""

    def __init__(self, in_features=512, out_features=4096, kernel_size=7, mlp_ratio=1.0, drop_rate=0.2,
                 act_layer=nn.ReLU):
        super().__init__()
        self.input_kernel_size = kernel_size
        mid = int(out_features * mlp_ratio)
        self.fc1 = nn.Conv2d(in_features, mid, kernel_size, bias=True)
        self.act1 = act_layer(True)
        self.drop = nn.Dropout(drop_rate)
        self.fc2 = nn.Conv2d(mid, out_features, 1, bias=True)
        self.act2 = act_layer(True)

    def forward(self, x):
        k = self.input_kernel_size
        if x.shape[-2] < k or x.shape[-1] < k:
            x = F.adaptive_avg_pool2d(x, (max(k, x.shape[-2]), max(k, x.shape[-1])))
        x = self.drop(self.act1(self.fc1(x)))
        return self.act2(self.fc2(x))


class GradCheckpointingUnsupported(NotImplementedError, AssertionError):
    """``set_grad_checkpointing(True)`` on a model that cannot checkpoint (an AssertionError too, as timm's)."""


class VGG(HeadModuleContract, nn.Module):
    def __init__(self, cfg, num_classes=1000, in_chans=3, output_stride=32, mlp_ratio=1.0, act_layer=nn.ReLU,
                 norm_layer=None, global_pool="avg", drop_rate=0.0):
        super().__init__()
        if output_stride != 32:
            raise NotImplementedError("VGG supports output_stride=32 only")
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        self.use_norm = norm_layer is not None
        self.feature_info = []
        prev, stride, layers = in_chans, 1, []
        for v in cfg:
            last = len(layers) - 1
            if v == "M":
                self.feature_info.append(dict(num_chs=prev, reduction=stride, module=f"features.{last}"))
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
                stride *= 2
            else:
                layers.append(nn.Conv2d(prev, v, kernel_size=3, padding=1))
                if norm_layer is not None:
                    layers.append(norm_layer(v))
                layers.append(act_layer(inplace=True))
                prev = v
        self.features = nn.Sequential(*layers)
        self.feature_info.append(dict(num_chs=prev, reduction=stride, module=f"features.{len(layers) - 1}"))
        self.num_features = prev
        self.head_hidden_size = 4096
        self.pre_logits = ConvMlp(prev, self.head_hidden_size, 7, mlp_ratio, drop_rate, act_layer)
        self.head = ClassifierHead(self.head_hidden_size, num_classes, pool_type=global_pool, drop_rate=drop_rate)
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """Refused, as timm's VGG: its ``features`` is one flat run of layers with no blocks to checkpoint."""
        if enable:
            raise GradCheckpointingUnsupported("gradient checkpointing not supported")
        self.grad_checkpointing = False

    def forward_features(self, x):
        if x.ndim != 4 or x.shape[1] != self.features[0].in_channels:
            raise ValueError(f"expected a (B, {self.features[0].in_channels}, H, W) tensor, got {tuple(x.shape)}")
        if min(x.shape[-2:]) < 32:
            raise ValueError(f"VGG needs inputs of at least 32x32, got {tuple(x.shape[-2:])}")
        return self.features(x)

    def forward_head(self, x, pre_logits=False):
        x = self.pre_logits(x)
        return self.head(x, pre_logits=pre_logits)


def checkpoint_filter_fn(state_dict, model):
    """torchvision VGG keys (``classifier.0/3/6`` Linear) -> timm's (``pre_logits.fc1/fc2`` convs, ``head.fc``)."""
    out = {}
    for k, v in state_dict.items():
        if k.startswith("classifier.0."):
            k = k.replace("classifier.0", "pre_logits.fc1")
            if k.endswith("weight"):
                v = v.reshape(-1, model.num_features, 7, 7)
        elif k.startswith("classifier.3."):
            k = k.replace("classifier.3", "pre_logits.fc2")
            if k.endswith("weight"):
                v = v.reshape(v.shape[0], v.shape[1], 1, 1)
        elif k.startswith("classifier.6."):
            k = k.replace("classifier.6", "head.fc")
        out[k] = v
    return out


def _create_vgg(variant, pretrained=False, **kwargs):
    cfg = variant.split("_")[0]
    return build_model_with_cfg(VGG, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                feature_cfg=dict(out_indices=(0, 1, 2, 3, 4, 5)), cfg=CFGS[cfg], **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="features.0", classifier="head.fc", license="bsd-3-clause", hf_hub_id="timm/"),
            **kwargs}


default_cfgs = generate_default_cfgs({f"{n}.tv_in1k": _cfg() for n in (
    "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn")})


@register_model
def vgg11(pretrained=False, **kwargs):
    return _create_vgg("vgg11", pretrained, **kwargs)


@register_model
def vgg11_bn(pretrained=False, **kwargs):
    return _create_vgg("vgg11_bn", pretrained, norm_layer=nn.BatchNorm2d, **kwargs)


@register_model
def vgg13(pretrained=False, **kwargs):
    return _create_vgg("vgg13", pretrained, **kwargs)


@register_model
def vgg13_bn(pretrained=False, **kwargs):
    return _create_vgg("vgg13_bn", pretrained, norm_layer=nn.BatchNorm2d, **kwargs)


@register_model
def vgg16(pretrained=False, **kwargs):
    return _create_vgg("vgg16", pretrained, **kwargs)


@register_model
def vgg16_bn(pretrained=False, **kwargs):
    return _create_vgg("vgg16_bn", pretrained, norm_layer=nn.BatchNorm2d, **kwargs)


@register_model
def vgg19(pretrained=False, **kwargs):
    return _create_vgg("vgg19", pretrained, **kwargs)


@register_model
def vgg19_bn(pretrained=False, **kwargs):
    return _create_vgg("vgg19_bn", pretrained, norm_layer=nn.BatchNorm2d, **kwargs)


# --- torchvision's VGG: features -> AdaptiveAvgPool2d(7) -> classifier (Linear/ReLU/Dropout x3) -------------

class VGGTV(nn.Module):
    """torchvision's VGG (``features.N``, ``classifier.0/3/6``); ``checkpoint_filter_fn`` maps its keys to
    timm's ``VGG``."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout), nn.Linear(4096, 4096),
            nn.ReLU(True), nn.Dropout(p=dropout), nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.flatten(1))


def _tv_vgg(name, weights, **kwargs):
    layers, prev = [], 3
    for v in CFGS[name.split("_")[0]]:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(prev, v, kernel_size=3, padding=1)] + (
                [nn.BatchNorm2d(v)] if name.endswith("_bn") else []) + [nn.ReLU(inplace=True)]
            prev = v
    if weights is not None:
        kwargs["init_weights"] = False
    return VGGTV(nn.Sequential(*layers), **kwargs)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "vgg11": ("VGG11_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11-8a719046.pth", 132863336, (32, 32), 224, 256, "bilinear", 69.02, 88.628),
    ]),
    "vgg11_bn": ("VGG11_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11_bn-6002323d.pth", 132868840, (32, 32), 224, 256, "bilinear", 70.37, 89.81),
    ]),
    "vgg13": ("VGG13_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13-19584684.pth", 133047848, (32, 32), 224, 256, "bilinear", 69.928, 89.246),
    ]),
    "vgg13_bn": ("VGG13_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13_bn-abd245e5.pth", 133053736, (32, 32), 224, 256, "bilinear", 71.586, 90.374),
    ]),
    "vgg16": ("VGG16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16-397923af.pth", 138357544, (32, 32), 224, 256, "bilinear", 71.592, 90.382),
    ]),
    "vgg16_bn": ("VGG16_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16_bn-6c64b313.pth", 138365992, (32, 32), 224, 256, "bilinear", 73.36, 91.516),
    ]),
    "vgg19": ("VGG19_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19-dcbb9e9d.pth", 143667240, (32, 32), 224, 256, "bilinear", 72.376, 90.876),
    ]),
    "vgg19_bn": ("VGG19_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19_bn-c79401a0.pth", 143678248, (32, 32), 224, 256, "bilinear", 74.218, 91.842),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_vgg)
register_tv_counterpart({n: n for n in _TV_WEIGHTS})
