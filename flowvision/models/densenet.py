"""DenseNet 121/161/169/201/264d and blur-pooled 121d, with timm's (= torchvision's) module and parameter names.

``features`` = conv0/norm0/pool0 stem (deep stems: conv0-2/norm0-2; ``aa_layer`` blurs the stem pool), denseblockN (ModuleDict of denselayerM) and transitionN, norm5;
then global pool + ``classifier``. Norms are BatchNormAct2d (BN + ReLU in one module, BN's names).
"""
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.utils.checkpoint import checkpoint
from flowvision.layers import BatchNormAct2d, BlurPool2d, create_classifier

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["DenseNet", "DenseLayer", "DenseBlock", "DenseTransition"]


class DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, norm_layer=BatchNormAct2d, drop_rate=0.0,
                 grad_checkpointing=False):
        super().__init__()
        self.add_module("norm1", norm_layer(num_input_features))
        self.add_module("conv1", nn.Conv2d(num_input_features, bn_size * growth_rate, 1, bias=False))
        self.add_module("norm2", norm_layer(bn_size * growth_rate))
        self.add_module("conv2", nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False))
        self.drop_rate = float(drop_rate)
        self.grad_checkpointing = grad_checkpointing

    def bottleneck(self, *features):
        """norm1 + conv1 over the concatenated earlier features (the wide tensor checkpointing frees)."""
        return self.conv1(self.norm1(flow.cat(features, 1) if len(features) > 1 else features[0]))

    def forward(self, features):
        features = tuple(features) if isinstance(features, (list, tuple)) else (features,)
        if self.grad_checkpointing and self.training:  # timm / torchvision memory_efficient: the bottleneck only
            x = checkpoint(self.bottleneck, *features)
        else:
            x = self.bottleneck(*features)
        x = self.conv2(self.norm2(x))
        if self.drop_rate > 0:
            x = nn.functional.dropout(x, p=self.drop_rate, training=self.training)
        return x


class DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, norm_layer=BatchNormAct2d,
                 drop_rate=0.0, grad_checkpointing=False):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1}", DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                                             bn_size, norm_layer=norm_layer, drop_rate=drop_rate,
                                                             grad_checkpointing=grad_checkpointing))

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return flow.cat(features, 1)


class DenseTransition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features, norm_layer=BatchNormAct2d):
        super().__init__()
        self.add_module("norm", norm_layer(num_input_features))
        self.add_module("conv", nn.Conv2d(num_input_features, num_output_features, 1, bias=False))
        self.add_module("pool", nn.AvgPool2d(kernel_size=2, stride=2))


class DenseNet(nn.Module):
    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_classes=1000, in_chans=3,
                 global_pool="avg", bn_size=4, stem_type="", act_layer="relu", norm_layer="batchnorm",
                 aa_layer=None, drop_rate=0.0, proj_drop_rate=0.0, memory_efficient=False, aa_stem_only=True):
        super().__init__()
        if stem_type not in ("", "deep", "deep_tiered", "deep_tiered_narrow"):
            raise ValueError(f"unknown stem_type {stem_type!r} ('', 'deep', 'deep_tiered', 'deep_tiered_narrow')")
        if aa_layer is not None and not aa_stem_only:
            raise NotImplementedError("anti-aliased transitions (aa_stem_only=False) are not implemented")
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = memory_efficient
        norm = BatchNormAct2d
        num_init = growth_rate * 2
        if aa_layer is None:
            stem_pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        else:  # dense max then blurred subsampling (anti-aliased)
            aa_layer = BlurPool2d if aa_layer in ("blur", "blurpool", True) else aa_layer
            stem_pool = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1),
                                      aa_layer(channels=num_init, stride=2))
        self.features = nn.Sequential()
        deep_stem = "deep" in stem_type
        if deep_stem:  # three 3x3 convs instead of one 7x7
            chs1 = chs2 = growth_rate
            if "tiered" in stem_type:
                chs1 = 3 * (growth_rate // 4)
                chs2 = num_init if "narrow" in stem_type else 6 * (growth_rate // 4)
            for i, (cin, cout, s) in enumerate(((in_chans, chs1, 2), (chs1, chs2, 1), (chs2, num_init, 1))):
                self.features.add_module(f"conv{i}", nn.Conv2d(cin, cout, 3, stride=s, padding=1, bias=False))
                self.features.add_module(f"norm{i}", norm(cout))
        else:
            self.features.add_module("conv0", nn.Conv2d(in_chans, num_init, 7, stride=2, padding=3, bias=False))
            self.features.add_module("norm0", norm(num_init))
        self.features.add_module("pool0", stem_pool)
        self.feature_info = [dict(num_chs=num_init, reduction=2, module=f"features.norm{2 if deep_stem else 0}")]
        stride, nf = 4, num_init
        for i, num_layers in enumerate(block_config):
            self.features.add_module(f"denseblock{i + 1}", DenseBlock(num_layers, nf, bn_size, growth_rate,
                                                                       norm_layer=norm, drop_rate=proj_drop_rate,
                                                                       grad_checkpointing=memory_efficient))
            nf += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.feature_info.append(dict(num_chs=nf, reduction=stride, module=f"features.denseblock{i + 1}"))
                stride *= 2
                self.features.add_module(f"transition{i + 1}", DenseTransition(nf, nf // 2, norm_layer=norm))
                nf //= 2
        self.features.add_module("norm5", norm(nf))
        self.feature_info.append(dict(num_chs=nf, reduction=stride, module="features.norm5"))
        self.num_features = self.head_hidden_size = nf
        self.global_pool, self.classifier = create_classifier(nf, num_classes, pool_type=global_pool)
        self.head_drop = nn.Dropout(drop_rate)
        # timm's registration order: features, global_pool, head_drop, classifier
        self._modules["classifier"] = self._modules.pop("classifier")
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def no_weight_decay(self):
        return set()

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, every dense layer recomputes its concatenation + norm1 + conv1 in backward instead of
        keeping it (timm's and torchvision's ``memory_efficient``; the same values either way)."""
        self.grad_checkpointing = bool(enable)
        for m in self.features.modules():
            if isinstance(m, DenseLayer):
                m.grad_checkpointing = self.grad_checkpointing

    def get_classifier(self):
        return self.classifier

    def reset_classifier(self, num_classes, global_pool="avg"):
        self.num_classes = num_classes
        self.global_pool, self.classifier = create_classifier(self.num_features, num_classes, pool_type=global_pool)

    def forward_features(self, x):
        if x.ndim != 4 or x.shape[1] != self.features.conv0.in_channels:
            raise ValueError(f"expected a (B, {self.features.conv0.in_channels}, H, W) tensor, "
                             f"got {tuple(x.shape)}")
        return self.features(x)

    def forward_head(self, x, pre_logits=False):
        x = self.head_drop(self.global_pool(x))
        return x if pre_logits else self.classifier(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def checkpoint_filter_fn(state_dict, model):
    """Old torchvision keys (``denselayer1.norm.1``) -> ``denselayer1.norm1``."""
    import re
    pat = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")
    out = {}
    for k, v in state_dict.items():
        m = pat.match(k)
        out[m.group(1) + m.group(2) if m else k] = v
    return out


def _create_densenet(variant, growth_rate, block_config, pretrained=False, **kwargs):
    return build_model_with_cfg(DenseNet, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                growth_rate=growth_rate, block_config=block_config, **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="features.conv0", classifier="classifier", license="apache-2.0", hf_hub_id="timm/"),
            **kwargs}


default_cfgs = generate_default_cfgs({
    "densenet121.ra_in1k": _cfg(test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "densenet121.tv_in1k": _cfg(),
    "densenet161.tv_in1k": _cfg(),
    "densenet169.tv_in1k": _cfg(),
    "densenet201.tv_in1k": _cfg(),
    "densenetblur121d.ra_in1k": _cfg(test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "densenet264d": _cfg(hf_hub_id=None),
})


@register_model
def densenet121(pretrained=False, **kwargs):
    return _create_densenet("densenet121", 32, (6, 12, 24, 16), pretrained, **kwargs)


@register_model
def densenet161(pretrained=False, **kwargs):
    return _create_densenet("densenet161", 48, (6, 12, 36, 24), pretrained, **kwargs)


@register_model
def densenet169(pretrained=False, **kwargs):
    return _create_densenet("densenet169", 32, (6, 12, 32, 32), pretrained, **kwargs)


@register_model
def densenet201(pretrained=False, **kwargs):
    return _create_densenet("densenet201", 32, (6, 12, 48, 32), pretrained, **kwargs)


@register_model
def densenetblur121d(pretrained=False, **kwargs):
    """DenseNet-121 with a 3-conv deep stem and a blur-pooled (anti-aliased) stem downsample."""
    return _create_densenet("densenetblur121d", 32, (6, 12, 24, 16), pretrained,
                            **{**dict(stem_type="deep", aa_layer=BlurPool2d), **kwargs})


@register_model
def densenet264d(pretrained=False, **kwargs):
    return _create_densenet("densenet264d", 48, (6, 12, 64, 48), pretrained, **{**dict(stem_type="deep"), **kwargs})


# --- torchvision's builders: its DenseNet has these modules (old checkpoints: checkpoint_filter_fn) --------

_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "densenet121": ("DenseNet121_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet121-a639ec97.pth", 7978856, (29, 29), 224, 256, "bilinear", 74.434, 91.972),
    ]),
    "densenet161": ("DenseNet161_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet161-8d451a50.pth", 28681000, (29, 29), 224, 256, "bilinear", 77.138, 93.56),
    ]),
    "densenet169": ("DenseNet169_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet169-b2777c0a.pth", 14149480, (29, 29), 224, 256, "bilinear", 75.6, 92.806),
    ]),
    "densenet201": ("DenseNet201_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet201-c1103571.pth", 20013928, (29, 29), 224, 256, "bilinear", 76.896, 93.37),
    ]),
}


def _tv_densenet(name, weights, **kwargs):
    """torchvision's keywords (growth_rate, block_config, drop_rate, memory_efficient) on timm's DenseNet."""
    cfg = {"densenet121": (32, (6, 12, 24, 16)), "densenet161": (48, (6, 12, 36, 24)),
           "densenet169": (32, (6, 12, 32, 32)), "densenet201": (32, (6, 12, 48, 32))}[name]
    growth, blocks = kwargs.pop("growth_rate", cfg[0]), kwargs.pop("block_config", cfg[1])
    if kwargs.pop("num_init_features", 2 * growth) != 2 * growth:
        raise NotImplementedError("num_init_features must be 2 * growth_rate")
    return DenseNet(growth_rate=growth, block_config=blocks, proj_drop_rate=kwargs.pop("drop_rate", 0.0), **kwargs)


define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_densenet, checkpoint_filter_fn)
register_tv_counterpart({n: n for n in _TV_WEIGHTS})
