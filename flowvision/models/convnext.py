"""ConvNeXt (atto ... xlarge), with timm's module and parameter names.

stem (4x4/4 patchify conv + LayerNorm2d) -> 4 stages (downsample = LayerNorm2d + 2x2/2 conv, then blocks) ->
NormMlpClassifierHead (pool -> LayerNorm2d -> fc). Blocks: 7x7 depthwise conv -> LayerNorm -> Mlp(x4) ->
layer scale ``gamma`` -> residual. ``conv_mlp=True`` (atto/femto/pico/nano) keeps NCHW with 1x1 convs.
"""
import re
from functools import partial

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, LayerNorm2d, Mlp, NormMlpClassifierHead, get_act_layer, trunc_normal_

from flowvision.ops import Conv2dNormActivation, Permute, StochasticDepth

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import HeadModuleContract, check_input_channels
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, extend_default_cfgs, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["ConvNeXt", "ConvNeXtBlock", "ConvNeXtStage", "ConvNeXtTV"]


class ConvNeXtBlock(nn.Module):
    def __init__(self, in_chs, out_chs=None, kernel_size=7, mlp_ratio=4, conv_mlp=False, conv_bias=True,
                 ls_init_value=1e-6, act_layer=nn.GELU, norm_layer=None, drop_path=0.0):
        super().__init__()
        out_chs = out_chs or in_chs
        self.use_conv_mlp = conv_mlp
        norm_layer = norm_layer or (partial(LayerNorm2d, eps=1e-6) if conv_mlp else partial(nn.LayerNorm, eps=1e-6))
        self.conv_dw = nn.Conv2d(in_chs, out_chs, kernel_size, padding=kernel_size // 2, groups=in_chs,
                                 bias=conv_bias)
        self.norm = norm_layer(out_chs)
        self.mlp = Mlp(out_chs, int(mlp_ratio * out_chs), act_layer=act_layer, use_conv=conv_mlp)
        self.gamma = nn.Parameter(ls_init_value * flow.ones(out_chs)) if ls_init_value is not None else None
        self.shortcut = nn.Identity()
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        if self.use_conv_mlp:
            x = self.mlp(self.norm(x))
        else:
            x = self.mlp(self.norm(x.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        if self.gamma is not None:
            x = x * self.gamma.reshape(1, -1, 1, 1)
        return self.drop_path(x) + self.shortcut(shortcut)


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, stride=2, depth=2, drop_path_rates=None, ls_init_value=1.0, conv_mlp=False,
                 conv_bias=True, act_layer=nn.GELU, norm_layer=None, norm_layer_cl=None):
        super().__init__()
        self.grad_checkpointing = False
        if in_chs != out_chs or stride > 1:
            self.downsample = nn.Sequential(norm_layer(in_chs),
                                            nn.Conv2d(in_chs, out_chs, kernel_size=stride, stride=stride,
                                                      bias=conv_bias))
            in_chs = out_chs
        else:
            self.downsample = nn.Identity()
        drop_path_rates = drop_path_rates or [0.0] * depth
        self.blocks = nn.Sequential(*[
            ConvNeXtBlock(in_chs, out_chs, mlp_ratio=4, conv_mlp=conv_mlp, conv_bias=conv_bias,
                          ls_init_value=ls_init_value, act_layer=act_layer,
                          norm_layer=norm_layer if conv_mlp else norm_layer_cl, drop_path=drop_path_rates[i])
            for i in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class ConvNeXt(HeadModuleContract, nn.Module):
    def __init__(self, in_chans=3, num_classes=1000, global_pool="avg", output_stride=32, depths=(3, 3, 9, 3),
                 dims=(96, 192, 384, 768), ls_init_value=1e-6, stem_type="patch", patch_size=4,
                 head_init_scale=1.0, head_norm_first=False, head_hidden_size=None, conv_mlp=False,
                 conv_bias=True, act_layer="gelu", norm_eps=1e-6, drop_rate=0.0, drop_path_rate=0.0):
        super().__init__()
        if output_stride != 32:
            raise NotImplementedError("only output_stride=32 is implemented so far")
        if stem_type != "patch" or head_norm_first:
            raise NotImplementedError("only stem_type='patch' and head_norm_first=False are implemented")
        act_layer = get_act_layer(act_layer) or nn.GELU
        norm_layer = partial(LayerNorm2d, eps=norm_eps)
        norm_layer_cl = partial(nn.LayerNorm, eps=norm_eps)
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], kernel_size=patch_size, stride=patch_size,
                                            bias=conv_bias), norm_layer(dims[0]))
        dp_rates = [float(v) for v in np.linspace(0, drop_path_rate, sum(depths))]
        stages, self.feature_info = [], []
        prev_chs, reduction, idx = dims[0], patch_size, 0
        for i in range(4):
            stride = 2 if i > 0 else 1
            reduction *= stride
            stages.append(ConvNeXtStage(prev_chs, dims[i], stride=stride, depth=depths[i],
                                        drop_path_rates=dp_rates[idx:idx + depths[i]], ls_init_value=ls_init_value,
                                        conv_mlp=conv_mlp, conv_bias=conv_bias, act_layer=act_layer,
                                        norm_layer=norm_layer, norm_layer_cl=norm_layer_cl))
            idx += depths[i]
            prev_chs = dims[i]
            self.feature_info.append(dict(num_chs=prev_chs, reduction=reduction, module=f"stages.{i}"))
        self.stages = nn.Sequential(*stages)
        self.num_features = self.head_hidden_size = prev_chs
        self.norm_pre = nn.Identity()
        self.head = NormMlpClassifierHead(prev_chs, num_classes, hidden_size=head_hidden_size, pool_type=global_pool,
                                          drop_rate=drop_rate, norm_layer=norm_layer, act_layer=nn.GELU)
        self.head_hidden_size = self.head.num_features
        self.init_weights(head_init_scale)

    def init_weights(self, head_init_scale=1.0):
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        if isinstance(self.head.fc, nn.Linear) and head_init_scale != 1.0:
            with flow.no_grad():
                self.head.fc.weight.mul_(head_init_scale)
                self.head.fc.bias.mul_(head_init_scale)

    def forward_features(self, x):
        check_input_channels(x, self.stem[0].in_channels)
        return self.norm_pre(self.run_blocks(self.stages, self.stem(x)))


def checkpoint_filter_fn(state_dict, model):
    """Original FB checkpoints (``downsample_layers``/``stages.i.j``/``norm``/``head``) -> timm names."""
    if "head.norm.weight" in state_dict or "norm_pre.weight" in state_dict:
        return state_dict
    state_dict = state_dict.get("model", state_dict)
    out = {}
    for k, v in state_dict.items():
        k = k.replace("downsample_layers.0.", "stem.")
        for i in range(1, 4):
            k = k.replace(f"downsample_layers.{i}.", f"stages.{i}.downsample.")
        parts = k.split(".")
        if len(parts) > 2 and parts[0] == "stages" and parts[2].isdigit():
            k = ".".join(parts[:2] + ["blocks"] + parts[2:])
        k = k.replace("dwconv", "conv_dw").replace("pwconv", "mlp.fc")
        if "grn" in k:
            continue
        k = k.replace("head.", "head.fc.")
        if k.startswith("norm."):
            k = k.replace("norm", "head.norm")
        if v.ndim == 2 and "head" not in k:
            target = model.state_dict()[k]
            v = v.reshape(tuple(target.shape))
        out[k] = v
    return out


def _create_convnext(variant, pretrained=False, **kwargs):
    # features_only: the four stages by default, as timm (there is no stem level)
    return build_model_with_cfg(ConvNeXt, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                feature_cfg=dict(out_indices=(0, 1, 2, 3)), **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stem.0", classifier="head.fc", license="apache-2.0"), **kwargs}


def _tcfg(**kwargs):  # timm-trained: tested at 288
    return _cfg(**{**dict(hf_hub_id="timm/", test_input_size=(3, 288, 288), test_crop_pct=0.95), **kwargs})


def _fbcfg(**kwargs):
    return _cfg(**{**dict(hf_hub_id="timm/", test_input_size=(3, 288, 288), test_crop_pct=1.0), **kwargs})


_OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def _clipcfg(**kwargs):
    return _cfg(**{**dict(hf_hub_id="timm/", input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=1.0,
                          mean=_OPENAI_CLIP_MEAN, std=_OPENAI_CLIP_STD), **kwargs})


_RSB = "https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-rsb-weights/"
_FB = "https://dl.fbaipublicfiles.com/convnext/"
default_cfgs = generate_default_cfgs({
    "convnext_atto.d2_in1k": _tcfg(url=_RSB + "convnext_atto_d2-01bb0f51.pth"),
    "convnext_femto.d1_in1k": _tcfg(url=_RSB + "convnext_femto_d1-d71d5b4c.pth"),
    "convnext_pico.d1_in1k": _tcfg(url=_RSB + "convnext_pico_d1-10ad7f0d.pth"),
    "convnext_nano.in12k_ft_in1k": _tcfg(crop_pct=0.95, test_crop_pct=1.0),
    "convnext_tiny.in12k_ft_in1k": _tcfg(crop_pct=0.95, test_crop_pct=1.0),
    "convnext_small.in12k_ft_in1k": _tcfg(crop_pct=0.95, test_crop_pct=1.0),
    "convnext_base.fb_in22k_ft_in1k": _fbcfg(url=_FB + "convnext_base_22k_1k_224.pth"),
    "convnext_large.fb_in22k_ft_in1k": _fbcfg(url=_FB + "convnext_large_22k_1k_224.pth"),
    "convnext_xlarge.fb_in22k_ft_in1k": _fbcfg(url=_FB + "convnext_xlarge_22k_1k_224_ema.pth"),
    "convnext_tiny.fb_in1k": _fbcfg(url=_FB + "convnext_tiny_1k_224_ema.pth"),
    "convnext_small.fb_in1k": _fbcfg(url=_FB + "convnext_small_1k_224_ema.pth"),
    "convnext_base.fb_in1k": _fbcfg(url=_FB + "convnext_base_1k_224_ema.pth"),
    "convnext_large.fb_in1k": _fbcfg(url=_FB + "convnext_large_1k_224_ema.pth"),
    # LAION-2B CLIP image towers (OpenCLIP); the un-fine-tuned ones end in a 1024-d projection as their "head"
    "convnext_xxlarge.clip_laion2b_soup_ft_in1k": _clipcfg(),
    "convnext_xxlarge.clip_laion2b_soup_ft_in12k": _clipcfg(num_classes=11821),
    "convnext_xxlarge.clip_laion2b_soup": _clipcfg(num_classes=1024),
    "convnext_xxlarge.clip_laion2b_rewind": _clipcfg(num_classes=1024),
})

# tags behind the original flowvision names (ImageNet-22k heads, 22k->1k at 384)
extend_default_cfgs(default_cfgs, {
    "convnext_base.fb_in22k": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_base_22k_224.pth", hf_hub_id="timm/", num_classes=21841,
        fixed_input_size=False),
    "convnext_base.fb_in22k_ft_in1k_384": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_base_22k_1k_384.pth", hf_hub_id="timm/",
        input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0, fixed_input_size=False, crop_mode="squash"),
    "convnext_large.fb_in22k": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_large_22k_224.pth", hf_hub_id="timm/", num_classes=21841,
        fixed_input_size=False),
    "convnext_large.fb_in22k_ft_in1k_384": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_large_22k_1k_384.pth", hf_hub_id="timm/",
        input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0, fixed_input_size=False, crop_mode="squash"),
    "convnext_xlarge.fb_in22k": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_xlarge_22k_224.pth", hf_hub_id="timm/",
        num_classes=21841, fixed_input_size=False),
    "convnext_xlarge.fb_in22k_ft_in1k_384": _cfg(
        url="https://dl.fbaipublicfiles.com/convnext/convnext_xlarge_22k_1k_384_ema.pth", hf_hub_id="timm/",
        input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0, fixed_input_size=False, crop_mode="squash"),
})


def _c(variant, pretrained, kwargs, **args):
    return _create_convnext(variant, pretrained, **{**args, **kwargs})


@register_model
def convnext_atto(pretrained=False, **kwargs):
    return _c("convnext_atto", pretrained, kwargs, depths=(2, 2, 6, 2), dims=(40, 80, 160, 320), conv_mlp=True)


@register_model
def convnext_femto(pretrained=False, **kwargs):
    return _c("convnext_femto", pretrained, kwargs, depths=(2, 2, 6, 2), dims=(48, 96, 192, 384), conv_mlp=True)


@register_model
def convnext_pico(pretrained=False, **kwargs):
    return _c("convnext_pico", pretrained, kwargs, depths=(2, 2, 6, 2), dims=(64, 128, 256, 512), conv_mlp=True)


@register_model
def convnext_nano(pretrained=False, **kwargs):
    return _c("convnext_nano", pretrained, kwargs, depths=(2, 2, 8, 2), dims=(80, 160, 320, 640), conv_mlp=True)


@register_model
def convnext_tiny(pretrained=False, **kwargs):
    return _c("convnext_tiny", pretrained, kwargs, depths=(3, 3, 9, 3), dims=(96, 192, 384, 768))


@register_model
def convnext_small(pretrained=False, **kwargs):
    return _c("convnext_small", pretrained, kwargs, depths=(3, 3, 27, 3), dims=(96, 192, 384, 768))


@register_model
def convnext_base(pretrained=False, **kwargs):
    return _c("convnext_base", pretrained, kwargs, depths=(3, 3, 27, 3), dims=(128, 256, 512, 1024))


@register_model
def convnext_large(pretrained=False, **kwargs):
    return _c("convnext_large", pretrained, kwargs, depths=(3, 3, 27, 3), dims=(192, 384, 768, 1536))


@register_model
def convnext_xlarge(pretrained=False, **kwargs):
    return _c("convnext_xlarge", pretrained, kwargs, depths=(3, 3, 27, 3), dims=(256, 512, 1024, 2048))


@register_model
def convnext_xxlarge(pretrained=False, **kwargs):
    # LayerNorm eps 1e-5: the OpenCLIP towers were trained with torch's default
    return _c("convnext_xxlarge", pretrained, kwargs, depths=(3, 4, 30, 3), dims=(384, 768, 1536, 3072),
              norm_eps=1e-5)


# the original flowvision names
for _s in ("tiny", "small", "base", "large"):
    register_model_alias(f"convnext_{_s}_224", f"convnext_{_s}.fb_in1k")
for _s in ("base", "large", "xlarge"):
    register_model_alias(f"convnext_{_s}_224_22k", f"convnext_{_s}.fb_in22k")
    register_model_alias(f"convnext_{_s}_224_22k_to_1k", f"convnext_{_s}.fb_in22k_ft_in1k")
    register_model_alias(f"convnext_{_s}_384_22k_to_1k", f"convnext_{_s}.fb_in22k_ft_in1k_384")
# the original's ImageNet-1k models fine-tuned at 384: timm has no such tag, so the names give the architecture
for _s in ("base", "large"):
    register_model_alias(f"convnext_{_s}_384", f"convnext_{_s}")


# --- torchvision's ConvNeXt (``features.N``: stem, stages of ``block``/``layer_scale``, downsamples;
# ``classifier.0`` LayerNorm2d, ``classifier.2`` Linear) ------------------------------------------------------

class CNBlockTV(nn.Module):
    """torchvision's block: dw 7x7 -> NHWC LayerNorm -> Linear x4 -> GELU -> Linear -> NCHW, layer scale (C, 1, 1)."""

    def __init__(self, dim, layer_scale, stochastic_depth_prob):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True), Permute([0, 2, 3, 1]),
            nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
            Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(flow.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, x):
        return self.stochastic_depth(self.layer_scale * self.block(x)) + x


class ConvNeXtTV(nn.Module):
    """torchvision's ConvNeXt; ``register_tv_counterpart`` maps its checkpoints to timm's ``ConvNeXt``."""

    def __init__(self, dims, depths, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000):
        super().__init__()
        norm = partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, dims[0], 4, 4, padding=0, norm_layer=norm, activation_layer=None, bias=True)]
        total, idx = sum(depths), 0
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            stage = []
            for _ in range(depth):
                stage.append(CNBlockTV(dim, layer_scale, stochastic_depth_prob * idx / (total - 1.0)))
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


_TV_ARCH = {"convnext_tiny": ((96, 192, 384, 768), (3, 3, 9, 3), 0.1),
            "convnext_small": ((96, 192, 384, 768), (3, 3, 27, 3), 0.4),
            "convnext_base": ((128, 256, 512, 1024), (3, 3, 27, 3), 0.5),
            "convnext_large": ((192, 384, 768, 1536), (3, 3, 27, 3), 0.5)}


def _tv_convnext(name, weights, **kwargs):
    dims, depths, sd = _TV_ARCH[name]
    kwargs.setdefault("stochastic_depth_prob", sd)
    return ConvNeXtTV(dims, depths, **kwargs)


_TV_BLOCK_KEYS = {"block.0.weight": "conv_dw.weight", "block.0.bias": "conv_dw.bias", "block.2.weight": "norm.weight",
                  "block.2.bias": "norm.bias", "block.3.weight": "mlp.fc1.weight", "block.3.bias": "mlp.fc1.bias",
                  "block.5.weight": "mlp.fc2.weight", "block.5.bias": "mlp.fc2.bias", "layer_scale": "gamma"}


def convert_tv_checkpoint(sd, model):
    """torchvision ConvNeXt keys -> timm's (features.0 stem, odd features = stages, even = downsamples)."""
    out = {}
    for k, v in sd.items():
        m = re.match(r"features\.(\d+)\.(.*)", k)
        if m:
            idx, rest = int(m.group(1)), m.group(2)
            if idx == 0:  # stem: conv, LayerNorm2d
                k = "stem." + rest
            elif idx % 2 == 0:  # downsample between stages: LayerNorm2d, conv
                k = f"stages.{idx // 2}.downsample.{rest}"
            else:
                j, rest = rest.split(".", 1)
                rest = _TV_BLOCK_KEYS[rest]
                k = f"stages.{idx // 2}.blocks.{j}.{rest}"
                if rest == "gamma":
                    v = v.reshape(-1)  # (C, 1, 1) -> (C,)
        else:
            k = k.replace("classifier.0.", "head.norm.").replace("classifier.2.", "head.fc.")
        out[k] = v
    return out


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "convnext_tiny": ("ConvNeXt_Tiny_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_tiny-983f1562.pth", 28589128, (32, 32), 224, 236, "bilinear", 82.52, 96.146),
    ]),
    "convnext_small": ("ConvNeXt_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_small-0c510722.pth", 50223688, (32, 32), 224, 230, "bilinear", 83.616, 96.65),
    ]),
    "convnext_base": ("ConvNeXt_Base_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_base-6075fbad.pth", 88591464, (32, 32), 224, 232, "bilinear", 84.062, 96.87),
    ]),
    "convnext_large": ("ConvNeXt_Large_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_large-ea097f82.pth", 197767336, (32, 32), 224, 232, "bilinear", 84.414, 96.976),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_convnext)
register_tv_counterpart({n: n for n in _TV_WEIGHTS}, convert_tv_checkpoint)
