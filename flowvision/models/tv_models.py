"""torchvision-named builders (``resnet50(weights=...)``, ``vit_b_16``, ``mobilenet_v3_large`` ...).

Where torchvision's module structure equals timm's (ResNet/ResNeXt/Wide-ResNet, DenseNet) the builder returns
the flowvision (timm-named) model, whose parameter names are torchvision's. Where it differs (VGG, MobileNetV2/V3,
ViT) the builder returns a module with torchvision's exact structure and parameter names, so torchvision
checkpoints load with ``strict=True``. The ``*_Weights`` enums of all 80 torchvision classification builders are
generated here from ``_tv_weights.TV_WEIGHTS``; the families without a timm counterpart (AlexNet, GoogLeNet,
Inception v3, MNASNet, ShuffleNetV2, SqueezeNet, EfficientNetV2, Swin V2, MaxViT) live in their own files and
take their enum from ``WEIGHTS`` and their prologue from ``tv_prologue``.
"""
import math
from collections import OrderedDict
from functools import partial

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.layers import make_divisible

from ._api import classification_weights, load_weights, make_weights_enum, register_builder, resolve_weights
from ._tv_weights import TV_URL, TV_WEIGHTS

__all__ = ["VGGTV", "MobileNetV2TV", "MobileNetV3TV", "VisionTransformerTV", "ConvNeXtTV", "EfficientNetTV",
           "SwinTransformerTV", "RegNetTV",
           "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small", "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14", "swin_t",
           "swin_s", "swin_b"]


def _make_enums():
    enums = {}
    for builder, (enum_name, default, members) in TV_WEIGHTS.items():
        ws = {m[0]: classification_weights(TV_URL + m[1], m[2], min_size=tuple(m[3]), crop_size=m[4],
                                           resize_size=m[5], interpolation=m[6],
                                           _metrics={"ImageNet-1K": {"acc@1": m[7], "acc@5": m[8]}},
                                           **(m[9] if len(m) > 9 else {}))
              for m in members}
        enums[builder] = make_weights_enum(enum_name, __name__, default, ws)
    return enums


WEIGHTS = _make_enums()
for _e in WEIGHTS.values():
    globals()[_e.__name__] = _e
    __all__.append(_e.__name__)


def _prologue(name, weights, kwargs):
    return resolve_weights(WEIGHTS[name], weights, kwargs, name)


tv_prologue = _prologue  # for the torchvision-only family files (alexnet.py, googlenet.py, ...)


# --- ResNet / ResNeXt / Wide-ResNet / DenseNet: flowvision's models already have torchvision's names ---------

_RESNET_ARGS = {
    "resnet18": dict(block="basic", layers=(2, 2, 2, 2)), "resnet34": dict(block="basic", layers=(3, 4, 6, 3)),
    "resnet50": dict(layers=(3, 4, 6, 3)), "resnet101": dict(layers=(3, 4, 23, 3)),
    "resnet152": dict(layers=(3, 8, 36, 3)),
    "resnext50_32x4d": dict(layers=(3, 4, 6, 3), cardinality=32, base_width=4),
    "resnext101_32x8d": dict(layers=(3, 4, 23, 3), cardinality=32, base_width=8),
    "resnext101_64x4d": dict(layers=(3, 4, 23, 3), cardinality=64, base_width=4),
    "wide_resnet50_2": dict(layers=(3, 4, 6, 3), base_width=128),
    "wide_resnet101_2": dict(layers=(3, 4, 23, 3), base_width=128),
}


def _tv_resnet(name, weights=None, progress=True, **kwargs):
    from .resnet import BasicBlock, Bottleneck, ResNet
    weights = _prologue(name, weights, kwargs)
    args = dict(_RESNET_ARGS[name])
    args["block"] = BasicBlock if args.pop("block", None) == "basic" else Bottleneck
    if "groups" in kwargs:
        args["cardinality"] = kwargs.pop("groups")
    if "width_per_group" in kwargs:
        args["base_width"] = kwargs.pop("width_per_group")
    if kwargs.pop("replace_stride_with_dilation", None):
        raise NotImplementedError("replace_stride_with_dilation is not implemented")
    args["zero_init_last"] = kwargs.pop("zero_init_residual", False)
    model = ResNet(**args, **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


def _tv_densenet(name, weights=None, progress=True, **kwargs):
    from .densenet import DenseNet, checkpoint_filter_fn
    weights = _prologue(name, weights, kwargs)
    cfg = {"densenet121": (32, (6, 12, 24, 16)), "densenet161": (48, (6, 12, 36, 24)),
           "densenet169": (32, (6, 12, 32, 32)), "densenet201": (32, (6, 12, 48, 32))}[name]
    growth, blocks = kwargs.pop("growth_rate", cfg[0]), kwargs.pop("block_config", cfg[1])
    if kwargs.pop("num_init_features", 2 * growth) != 2 * growth:
        raise NotImplementedError("num_init_features must be 2 * growth_rate")
    kwargs.pop("memory_efficient", None)
    model = DenseNet(growth_rate=growth, block_config=blocks, proj_drop_rate=kwargs.pop("drop_rate", 0.0),
                     **kwargs)
    if weights is not None:
        load_weights(model, weights, progress, filter_fn=lambda sd: checkpoint_filter_fn(sd, model))
    return model


for _name in _RESNET_ARGS:
    register_builder(_name, WEIGHTS[_name])(partial(_tv_resnet, _name))
for _name in ("densenet121", "densenet161", "densenet169", "densenet201"):
    register_builder(_name, WEIGHTS[_name])(partial(_tv_densenet, _name))


# --- VGG -------------------------------------------------------------------------------------------------

class VGGTV(nn.Module):
    """torchvision's VGG: ``features`` -> AdaptiveAvgPool2d(7) -> ``classifier`` (Linear/ReLU/Dropout x3)."""

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
        return self.classifier(flow.flatten(x, 1))


def _tv_vgg(name, weights=None, progress=True, **kwargs):
    from .vgg import CFGS
    weights = _prologue(name, weights, kwargs)
    layers, prev = [], 3
    for v in CFGS[name.split("_")[0]]:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(prev, v, kernel_size=3, padding=1))
            if name.endswith("_bn"):
                layers.append(nn.BatchNorm2d(v))
            layers.append(nn.ReLU(inplace=True))
            prev = v
    if weights is not None:
        kwargs["init_weights"] = False
    model = VGGTV(nn.Sequential(*layers), **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


for _name in ("vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"):
    register_builder(_name, WEIGHTS[_name])(partial(_tv_vgg, _name))


# --- MobileNetV2 / V3 --------------------------------------------------------------------------------------

def _conv_norm_act(in_chs, out_chs, kernel_size=3, stride=1, groups=1, norm_layer=nn.BatchNorm2d,
                   act_layer=nn.ReLU, padding=None, bias=False):
    """torchvision's Conv2dNormActivation as a Sequential (0 conv, 1 norm, 2 act)."""
    padding = (kernel_size - 1) // 2 if padding is None else padding
    layers = [nn.Conv2d(in_chs, out_chs, kernel_size, stride, padding, groups=groups, bias=bias),
              norm_layer(out_chs)]
    if act_layer is not None:
        layers.append(act_layer(inplace=True))
    return nn.Sequential(*layers)


class _InvertedResidualV2(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2d):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(_conv_norm_act(inp, hidden, 1, norm_layer=norm_layer, act_layer=nn.ReLU6))
        layers += [_conv_norm_act(hidden, hidden, 3, stride, groups=hidden, norm_layer=norm_layer,
                                  act_layer=nn.ReLU6),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2TV(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0, round_nearest=8, dropout=0.2):
        super().__init__()
        setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                   [6, 320, 1, 1]]
        inp = make_divisible(32 * width_mult, round_nearest)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features = [_conv_norm_act(3, inp, stride=2, act_layer=nn.ReLU6)]
        for t, c, n, s in setting:
            out = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(_InvertedResidualV2(inp, out, s if i == 0 else 1, t))
                inp = out
        features.append(_conv_norm_act(inp, self.last_channel, 1, act_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))
        _mobilenet_init(self)

    def forward(self, x):
        x = self.features(x).mean((2, 3))
        return self.classifier(x)


def _mobilenet_init(model):
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


class _SqueezeExcitation(nn.Module):
    """torchvision's SE: avgpool -> fc1 (1x1) -> act -> fc2 (1x1) -> gate (hard-sigmoid / sigmoid) -> scale."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Hardsigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, x):
        s = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return s * x


class _InvertedResidualV3(nn.Module):
    def __init__(self, inp, kernel, exp, out, use_se, act, stride, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and inp == out
        act_layer = nn.Hardswish if act == "HS" else nn.ReLU
        layers = []
        if exp != inp:
            layers.append(_conv_norm_act(inp, exp, 1, norm_layer=norm_layer, act_layer=act_layer))
        layers.append(_conv_norm_act(exp, exp, kernel, stride, groups=exp, norm_layer=norm_layer,
                                     act_layer=act_layer))
        if use_se:
            layers.append(_SqueezeExcitation(exp, make_divisible(exp // 4, 8)))
        layers.append(_conv_norm_act(exp, out, 1, norm_layer=norm_layer, act_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = out

    def forward(self, x):
        y = self.block(x)
        return y + x if self.use_res_connect else y


_V3_LARGE = [(16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2), (24, 3, 72, 24, False, "RE", 1),
             (24, 5, 72, 40, True, "RE", 2), (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
             (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
             (80, 3, 184, 80, False, "HS", 1), (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
             (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1),
             (160, 5, 960, 160, True, "HS", 1)]
_V3_SMALL = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
             (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
             (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
             (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1)]


class MobileNetV3TV(nn.Module):
    """torchvision's MobileNetV3 (``features.N.block.M.*``, ``classifier.0/3``); BN eps 1e-3."""

    def __init__(self, setting, last_channel, num_classes=1000, dropout=0.2):
        super().__init__()
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = setting[0][0]
        layers = [_conv_norm_act(3, first, 3, 2, norm_layer=norm_layer, act_layer=nn.Hardswish)]
        for inp, k, exp, out, se, act, stride in setting:
            layers.append(_InvertedResidualV3(inp, k, exp, out, se, act, stride, norm_layer))
        last_in = setting[-1][3]
        layers.append(_conv_norm_act(last_in, 6 * last_in, 1, norm_layer=norm_layer, act_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(6 * last_in, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        _mobilenet_init(self)

    def forward(self, x):
        x = flow.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


@register_builder(weights=WEIGHTS["mobilenet_v2"])
def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    """torchvision's MobileNetV2 (``weights``: MobileNet_V2_Weights, its name, "DEFAULT" or None)."""
    weights = _prologue("mobilenet_v2", weights, kwargs)
    model = MobileNetV2TV(**kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


@register_builder(weights=WEIGHTS["mobilenet_v3_large"])
def mobilenet_v3_large(*, weights=None, progress=True, **kwargs):
    """torchvision's MobileNetV3-Large (``weights``: MobileNet_V3_Large_Weights, its name, "DEFAULT" or None)."""
    weights = _prologue("mobilenet_v3_large", weights, kwargs)
    model = MobileNetV3TV(_V3_LARGE, 1280, **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


@register_builder(weights=WEIGHTS["mobilenet_v3_small"])
def mobilenet_v3_small(*, weights=None, progress=True, **kwargs):
    """torchvision's MobileNetV3-Small (``weights``: MobileNet_V3_Small_Weights, its name, "DEFAULT" or None)."""
    weights = _prologue("mobilenet_v3_small", weights, kwargs)
    model = MobileNetV3TV(_V3_SMALL, 1024, **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


# --- ViT -------------------------------------------------------------------------------------------------

class _MLPBlock(nn.Sequential):
    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(mlp_dim, in_dim),
                         nn.Dropout(dropout))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)


class _EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout,
                                                    batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = _MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, inp):
        x = self.ln_1(inp)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + inp
        return x + self.mlp(self.ln_2(x))


class _Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer):
        super().__init__()
        self.pos_embedding = nn.Parameter(flow.randn(1, seq_length, hidden_dim) * 0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", _EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                 norm_layer)) for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, x):
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformerTV(nn.Module):
    """torchvision's ViT (``conv_proj``, ``class_token``, ``encoder.layers.encoder_layer_N``, ``heads.head``)."""

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None):
        super().__init__()
        if image_size % patch_size:
            raise ValueError("Input shape indivisible by patch size!")
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.num_classes = num_classes
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1
        self.class_token = nn.Parameter(flow.zeros(1, 1, hidden_dim))
        self.encoder = _Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                partial(nn.LayerNorm, eps=1e-6))
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        fan_in = 3 * patch_size * patch_size
        from flowvision.layers import trunc_normal_
        trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        if h != self.image_size or w != self.image_size:
            raise ValueError(f"Wrong image height/width! Expected {self.image_size} but got {h}x{w}")
        x = self.conv_proj(x)
        return x.reshape(n, self.hidden_dim, -1).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        x = flow.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


def _tv_vit(name, patch, layers, heads, hidden, mlp, weights, progress, kwargs):
    weights = _prologue(name, weights, kwargs)
    image_size = kwargs.pop("image_size", None)
    if weights is not None:  # SWAG E2E weights are for 384 / 512 / 518 px
        need = weights.meta["min_size"][0]
        if image_size not in (None, need):
            raise ValueError(f"The parameter 'image_size' expected value {need} but got {image_size} instead.")
        image_size = need
    image_size = image_size or 224
    model = VisionTransformerTV(image_size, patch, layers, heads, hidden, mlp, **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


@register_builder(weights=WEIGHTS["vit_b_16"])
def vit_b_16(*, weights=None, progress=True, **kwargs):
    """torchvision's ViT-B/16 (``weights``: ViT_B_16_Weights, its name, "DEFAULT" or None)."""
    return _tv_vit("vit_b_16", 16, 12, 12, 768, 3072, weights, progress, kwargs)


@register_builder(weights=WEIGHTS["vit_b_32"])
def vit_b_32(*, weights=None, progress=True, **kwargs):
    """torchvision's ViT-B/32 (``weights``: ViT_B_32_Weights, its name, "DEFAULT" or None)."""
    return _tv_vit("vit_b_32", 32, 12, 12, 768, 3072, weights, progress, kwargs)


@register_builder(weights=WEIGHTS["vit_l_16"])
def vit_l_16(*, weights=None, progress=True, **kwargs):
    """torchvision's ViT-L/16 (``weights``: ViT_L_16_Weights, its name, "DEFAULT" or None)."""
    return _tv_vit("vit_l_16", 16, 24, 16, 1024, 4096, weights, progress, kwargs)


@register_builder(weights=WEIGHTS["vit_l_32"])
def vit_l_32(*, weights=None, progress=True, **kwargs):
    """torchvision's ViT-L/32 (``weights``: ViT_L_32_Weights, its name, "DEFAULT" or None)."""
    return _tv_vit("vit_l_32", 32, 24, 16, 1024, 4096, weights, progress, kwargs)


@register_builder(weights=WEIGHTS["vit_h_14"])
def vit_h_14(*, weights=None, progress=True, **kwargs):
    """torchvision's ViT-H/14 (``weights``: ViT_H_14_Weights, its name, "DEFAULT" (SWAG E2E, 518 px) or None)."""
    return _tv_vit("vit_h_14", 14, 32, 16, 1280, 5120, weights, progress, kwargs)


# --- ConvNeXt --------------------------------------------------------------------------------------------

class _Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return x.permute(*self.dims)


class _CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, stochastic_depth_prob):
        super().__init__()
        from flowvision.layers import DropPath
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True), _Permute([0, 2, 3, 1]),
            nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
            _Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(flow.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = DropPath(stochastic_depth_prob)

    def forward(self, x):
        return self.stochastic_depth(self.layer_scale * self.block(x)) + x


class ConvNeXtTV(nn.Module):
    """torchvision's ConvNeXt (``features.N``: stem, stages of ``block``/``layer_scale``, downsamples;
    ``classifier.0`` LayerNorm2d, ``classifier.2`` Linear)."""

    def __init__(self, dims, depths, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000):
        super().__init__()
        from flowvision.layers import LayerNorm2d, trunc_normal_
        norm = partial(LayerNorm2d, eps=1e-6)
        layers = [_conv_norm_act(3, dims[0], 4, 4, norm_layer=norm, act_layer=None, padding=0, bias=True)]
        total, idx = sum(depths), 0
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            stage = []
            for _ in range(depth):
                stage.append(_CNBlock(dim, layer_scale, stochastic_depth_prob * idx / (total - 1.0)))
                idx += 1
            layers.append(nn.Sequential(*stage))
            if i + 1 < len(dims):
                layers.append(nn.Sequential(norm(dim), nn.Conv2d(dim, dims[i + 1], kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(norm(dims[-1]), nn.Flatten(1), nn.Linear(dims[-1], num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


_CONVNEXT = {"convnext_tiny": ((96, 192, 384, 768), (3, 3, 9, 3), 0.1),
             "convnext_small": ((96, 192, 384, 768), (3, 3, 27, 3), 0.4),
             "convnext_base": ((128, 256, 512, 1024), (3, 3, 27, 3), 0.5),
             "convnext_large": ((192, 384, 768, 1536), (3, 3, 27, 3), 0.5)}


def _tv_convnext(name, weights=None, progress=True, **kwargs):
    weights = _prologue(name, weights, kwargs)
    dims, depths, sd = _CONVNEXT[name]
    kwargs.setdefault("stochastic_depth_prob", sd)
    model = ConvNeXtTV(dims, depths, **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


for _name in _CONVNEXT:
    register_builder(_name, WEIGHTS[_name])(partial(_tv_convnext, _name))


# --- EfficientNet B0-B7 ------------------------------------------------------------------------------------

class _MBConv(nn.Module):
    def __init__(self, expand_ratio, kernel, stride, inp, out, sd_prob, norm_layer):
        super().__init__()
        from flowvision.layers import DropPath
        self.use_res_connect = stride == 1 and inp == out
        expanded = make_divisible(inp * expand_ratio, 8)
        layers = []
        if expanded != inp:
            layers.append(_conv_norm_act(inp, expanded, 1, norm_layer=norm_layer, act_layer=nn.SiLU))
        layers.append(_conv_norm_act(expanded, expanded, kernel, stride, groups=expanded, norm_layer=norm_layer,
                                     act_layer=nn.SiLU))
        layers.append(_SqueezeExcitation(expanded, max(1, inp // 4), activation=partial(nn.SiLU, inplace=True),
                                         scale_activation=nn.Sigmoid))
        layers.append(_conv_norm_act(expanded, out, 1, norm_layer=norm_layer, act_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = DropPath(sd_prob)
        self.out_channels = out

    def forward(self, x):
        y = self.block(x)
        return self.stochastic_depth(y) + x if self.use_res_connect else y


_EFFNET_SETTING = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
                   (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]


class EfficientNetTV(nn.Module):
    """torchvision's EfficientNet (``features.N.M.block.*``, ``classifier.1``)."""

    def __init__(self, width_mult, depth_mult, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        setting = [(e, k, s, make_divisible(i * width_mult, 8), make_divisible(o * width_mult, 8),
                    int(math.ceil(n * depth_mult))) for e, k, s, i, o, n in _EFFNET_SETTING]
        layers = [_conv_norm_act(3, setting[0][3], 3, 2, norm_layer=norm_layer, act_layer=nn.SiLU)]
        total, idx = sum(c[5] for c in setting), 0
        for e, k, s, i, o, n in setting:
            stage = []
            for j in range(n):
                stage.append(_MBConv(e, k, s if j == 0 else 1, i if j == 0 else o, o,
                                     stochastic_depth_prob * idx / total, norm_layer))
                idx += 1
            layers.append(nn.Sequential(*stage))
        last_in = setting[-1][4]
        layers.append(_conv_norm_act(last_in, 4 * last_in, 1, norm_layer=norm_layer, act_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(4 * last_in, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                r = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -r, r)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(flow.flatten(self.avgpool(self.features(x)), 1))


_EFFNET = {"efficientnet_b0": (1.0, 1.0, 0.2), "efficientnet_b1": (1.0, 1.1, 0.2), "efficientnet_b2": (1.1, 1.2, 0.3),
           "efficientnet_b3": (1.2, 1.4, 0.3), "efficientnet_b4": (1.4, 1.8, 0.4), "efficientnet_b5": (1.6, 2.2, 0.4),
           "efficientnet_b6": (1.8, 2.6, 0.5), "efficientnet_b7": (2.0, 3.1, 0.5)}


def _tv_efficientnet(name, weights=None, progress=True, **kwargs):
    weights = _prologue(name, weights, kwargs)
    width, depth, dropout = _EFFNET[name]
    if name in ("efficientnet_b5", "efficientnet_b6", "efficientnet_b7"):  # ported TF weights: BN eps 1e-3
        kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=0.001, momentum=0.01))
    model = EfficientNetTV(width, depth, kwargs.pop("dropout", dropout), **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


for _name in _EFFNET:
    register_builder(_name, WEIGHTS[_name])(partial(_tv_efficientnet, _name))


# --- Swin Transformer (v1) ---------------------------------------------------------------------------------

def _relative_position_index(window_size):
    wh, ww = window_size
    coords = np.stack(np.meshgrid(np.arange(wh), np.arange(ww), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    rel[:, :, 0] += wh - 1
    rel[:, :, 1] += ww - 1
    rel[:, :, 0] *= 2 * ww - 1
    return rel.sum(-1).reshape(-1).astype(np.int64)


def _shift_mask(pad_h, pad_w, window_size, shift_size):
    """(num_windows, N, N) additive mask: -100 between tokens from different regions of the shifted map."""
    img = np.zeros((pad_h, pad_w), dtype=np.float32)
    count = 0
    for h in ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None)):
        for w in ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None)):
            img[h[0]:h[1], w[0]:w[1]] = count
            count += 1
    win = img.reshape(pad_h // window_size[0], window_size[0], pad_w // window_size[1], window_size[1])
    win = win.transpose(0, 2, 1, 3).reshape(-1, window_size[0] * window_size[1])
    diff = win[:, None, :] - win[:, :, None]
    return np.where(diff != 0, -100.0, 0.0).astype(np.float32)


class _ShiftedWindowAttention(nn.Module):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        self.window_size, self.shift_size = list(window_size), list(shift_size)
        self.num_heads = num_heads
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self._define_position_bias()
        self.register_buffer("relative_position_index", flow.from_numpy(_relative_position_index(window_size)))

    def _define_position_bias(self):
        from flowvision.layers import trunc_normal_
        n_rel = (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(flow.zeros(n_rel, self.num_heads))
        trunc_normal_(self.relative_position_bias_table, std=0.02)

    def _gather_position_bias(self, table):
        """(num_rel, heads) table -> (1, heads, N, N) bias over the window's token pairs."""
        n = self.window_size[0] * self.window_size[1]
        bias = table.index_select(0, self.relative_position_index)
        return bias.reshape(n, n, -1).permute(2, 0, 1).unsqueeze(0)

    def get_relative_position_bias(self):
        return self._gather_position_bias(self.relative_position_bias_table)

    def _qkv(self, x):
        return self.qkv(x)

    def _attention_logits(self, q, k):
        return (q * q.shape[-1] ** -0.5).matmul(k.transpose(-2, -1))

    def forward(self, x):
        from flowvision.backend.nn import functional as F
        b, h, w, c = x.shape
        ws = self.window_size
        n = ws[0] * ws[1]
        bias = self.get_relative_position_bias()
        pad_r, pad_b = (ws[1] - w % ws[1]) % ws[1], (ws[0] - h % ws[0]) % ws[0]
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        _, ph, pw, _ = x.shape
        shift = [0 if ws[0] >= ph else self.shift_size[0], 0 if ws[1] >= pw else self.shift_size[1]]
        if sum(shift) > 0:
            x = flow.roll(x, shifts=(-shift[0], -shift[1]), dims=(1, 2))
        nw = (ph // ws[0]) * (pw // ws[1])
        x = x.reshape(b, ph // ws[0], ws[0], pw // ws[1], ws[1], c).permute(0, 1, 3, 2, 4, 5).reshape(b * nw, n, c)
        qkv = self._qkv(x).reshape(b * nw, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if type(self)._attention_logits is _ShiftedWindowAttention._attention_logits:
            # scaled dot products (v1): one fused SDPA over the (b, nw, heads, n, d) views, the relative-position
            # bias and the shift mask summed into one (nw or 1, heads, n, n) additive mask
            mask = bias
            if sum(shift) > 0:
                mask = bias + flow.from_numpy(_shift_mask(ph, pw, ws, shift)).to(bias.device).unsqueeze(1)
            hd = c // self.num_heads
            q5, k5, v5 = (t.reshape(b, nw, self.num_heads, n, hd) for t in (q, k, v))
            x = F.scaled_dot_product_attention(q5, k5, v5, attn_mask=mask,
                                               dropout_p=self.attention_dropout if self.training else 0.0)
            x = x.transpose(2, 3).reshape(b * nw, n, c)
        else:  # cosine attention (v2): its own logits
            attn = self._attention_logits(q, k) + bias
            if sum(shift) > 0:
                mask = flow.from_numpy(_shift_mask(ph, pw, ws, shift)).to(attn.device)
                attn = attn.reshape(b, nw, self.num_heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.reshape(-1, self.num_heads, n, n)
            attn = F.dropout(F.softmax(attn, dim=-1), p=self.attention_dropout, training=self.training)
            x = attn.matmul(v).transpose(1, 2).reshape(b * nw, n, c)
        x = F.dropout(self.proj(x), p=self.dropout, training=self.training)
        x = x.reshape(b, ph // ws[0], pw // ws[1], ws[0], ws[1], c).permute(0, 1, 3, 2, 4, 5).reshape(b, ph, pw, c)
        if sum(shift) > 0:
            x = flow.roll(x, shifts=(shift[0], shift[1]), dims=(1, 2))
        return x[:, :h, :w, :]


class _SwinBlock(nn.Module):
    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=None):
        super().__init__()
        from flowvision.layers import DropPath
        self.norm1 = norm_layer(dim)
        self.attn = (attn_layer or _ShiftedWindowAttention)(dim, window_size, shift_size, num_heads,
                                                            attention_dropout=attention_dropout, dropout=dropout)
        self.stochastic_depth = DropPath(stochastic_depth_prob)
        self.norm2 = norm_layer(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim),
                                 nn.Dropout(dropout))
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class _PatchMerging(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    @staticmethod
    def _merge(x):
        """(..., H, W, C) -> (..., H/2, W/2, 4C): the 2x2 neighbours side by side (odd sizes zero-padded)."""
        from flowvision.backend.nn import functional as F
        h, w = x.shape[-3], x.shape[-2]
        x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
        return flow.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]],
                        -1)

    def forward(self, x):
        return self.reduction(self.norm(self._merge(x)))


class SwinTransformerTV(nn.Module):
    """torchvision's Swin v1 (``features.0`` patch embed, ``features.{1,3,5,7}`` stages,
    ``features.{2,4,6}`` patch merging, ``norm``, ``head``); NHWC inside like torchvision."""

    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.1, num_classes=1000, norm_layer=None, block=None,
                 downsample_layer=None):
        super().__init__()
        from flowvision.layers import trunc_normal_
        block, downsample_layer = block or _SwinBlock, downsample_layer or _PatchMerging
        norm = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size),
                                _Permute([0, 2, 3, 1]), norm(embed_dim))]
        total, idx = sum(depths), 0
        for i, depth in enumerate(depths):
            dim = embed_dim * 2 ** i
            stage = []
            for j in range(depth):
                shift = [0 if j % 2 == 0 else w // 2 for w in window_size]
                stage.append(block(dim, num_heads[i], window_size, shift, mlp_ratio, dropout, attention_dropout,
                                   stochastic_depth_prob * idx / (total - 1), norm))
                idx += 1
            layers.append(nn.Sequential(*stage))
            if i < len(depths) - 1:
                layers.append(downsample_layer(dim, norm))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm(num_features)
        self.permute = _Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


_SWIN = {"swin_t": (96, (2, 2, 6, 2), (3, 6, 12, 24), 0.2), "swin_s": (96, (2, 2, 18, 2), (3, 6, 12, 24), 0.3),
         "swin_b": (128, (2, 2, 18, 2), (4, 8, 16, 32), 0.5)}


def _tv_swin(name, weights, progress, kwargs):
    weights = _prologue(name, weights, kwargs)
    dim, depths, heads, sd = _SWIN[name]
    kwargs.setdefault("stochastic_depth_prob", sd)
    model = SwinTransformerTV([4, 4], dim, depths, heads, [7, 7], **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


@register_builder(weights=WEIGHTS["swin_t"])
def swin_t(*, weights=None, progress=True, **kwargs):
    """torchvision's Swin-T (``weights``: Swin_T_Weights, its name, "DEFAULT" or None)."""
    return _tv_swin("swin_t", weights, progress, kwargs)


@register_builder(weights=WEIGHTS["swin_s"])
def swin_s(*, weights=None, progress=True, **kwargs):
    """torchvision's Swin-S (``weights``: Swin_S_Weights, its name, "DEFAULT" or None)."""
    return _tv_swin("swin_s", weights, progress, kwargs)


@register_builder(weights=WEIGHTS["swin_b"])
def swin_b(*, weights=None, progress=True, **kwargs):
    """torchvision's Swin-B (``weights``: Swin_B_Weights, its name, "DEFAULT" or None)."""
    return _tv_swin("swin_b", weights, progress, kwargs)


# --- RegNet ------------------------------------------------------------------------------------------------

class _ResBottleneckBlock(nn.Module):
    def __init__(self, width_in, width_out, stride, group_width, se_ratio, norm_layer):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = _conv_norm_act(width_in, width_out, 1, stride, norm_layer=norm_layer, act_layer=None)
        w_b = width_out
        f = OrderedDict()
        f["a"] = _conv_norm_act(width_in, w_b, 1, norm_layer=norm_layer)
        f["b"] = _conv_norm_act(w_b, w_b, 3, stride, groups=w_b // group_width, norm_layer=norm_layer)
        if se_ratio:
            f["se"] = _SqueezeExcitation(w_b, int(round(se_ratio * width_in)), activation=nn.ReLU,
                                         scale_activation=nn.Sigmoid)
        f["c"] = _conv_norm_act(w_b, width_out, 1, norm_layer=norm_layer, act_layer=None)
        self.f = nn.Sequential(f)
        self.activation = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.f(x)
        return self.activation((self.proj(x) if self.proj is not None else x) + y)


class RegNetTV(nn.Module):
    """torchvision's RegNet (``stem.0/1``, ``trunk_output.blockS.blockS-i.{proj,f.a,f.b,f.se,f.c}``, ``fc``)."""

    def __init__(self, depth, w_0, w_a, w_m, group_width, se_ratio=None, num_classes=1000, stem_width=32):
        super().__init__()
        from .regnet import _adjust_widths_groups, generate_regnet
        widths, num_stages, groups = generate_regnet(w_a, w_0, w_m, depth, group_width)
        stage_widths, stage_depths = np.unique(widths, return_counts=True)
        stage_widths, groups = _adjust_widths_groups(list(stage_widths), [1.0] * num_stages, groups, 0.9)
        norm = partial(nn.BatchNorm2d, eps=1e-5, momentum=0.1)
        self.stem = _conv_norm_act(3, stem_width, 3, 2, norm_layer=norm)
        stages, prev = OrderedDict(), stem_width
        for i, (w, d, g) in enumerate(zip(stage_widths, stage_depths, groups)):
            blocks = OrderedDict()
            for j in range(int(d)):
                blocks[f"block{i + 1}-{j}"] = _ResBottleneckBlock(prev if j == 0 else w, w, 2 if j == 0 else 1, g,
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


_REGNET = {
    "regnet_y_400mf": (16, 48, 27.89, 2.09, 8, 0.25), "regnet_y_800mf": (14, 56, 38.84, 2.4, 16, 0.25),
    "regnet_y_1_6gf": (27, 48, 20.71, 2.65, 24, 0.25), "regnet_y_3_2gf": (21, 80, 42.63, 2.66, 24, 0.25),
    "regnet_y_8gf": (17, 192, 76.82, 2.19, 56, 0.25), "regnet_y_16gf": (18, 200, 106.23, 2.48, 112, 0.25),
    "regnet_y_32gf": (20, 232, 115.89, 2.53, 232, 0.25),
    "regnet_y_128gf": (27, 456, 160.83, 2.52, 264, 0.25),
    "regnet_x_400mf": (22, 24, 24.48, 2.54, 16, None), "regnet_x_800mf": (16, 56, 35.73, 2.28, 16, None),
    "regnet_x_1_6gf": (18, 80, 34.01, 2.25, 24, None), "regnet_x_3_2gf": (25, 88, 26.31, 2.25, 48, None),
    "regnet_x_8gf": (23, 80, 49.56, 2.88, 120, None), "regnet_x_16gf": (22, 216, 55.59, 2.1, 128, None),
    "regnet_x_32gf": (23, 320, 69.86, 2.0, 168, None),
}


def _tv_regnet(name, weights=None, progress=True, **kwargs):
    weights = _prologue(name, weights, kwargs)
    model = RegNetTV(*_REGNET[name], **kwargs)
    return load_weights(model, weights, progress) if weights is not None else model


def _regnet_builder(name):
    def builder(*, weights=None, progress=True, **kwargs):
        return _tv_regnet(name, weights, progress, **kwargs)
    builder.__name__ = builder.__qualname__ = name
    builder.__module__ = __name__
    builder.__doc__ = (f"torchvision's {name} (``weights``: {WEIGHTS[name].__name__}, its name, \"DEFAULT\" "
                       f"or None).")
    return register_builder(name, WEIGHTS[name])(builder)


for _name in _REGNET:
    globals()[_name] = _regnet_builder(_name)
    __all__.append(_name)
