"""MLP-Mixer, ResMLP and gMLP, with timm's module and parameter names.

All three: ``stem`` (PatchEmbed) -> ``blocks`` -> ``norm`` -> mean over tokens -> ``head``. Blocks mix tokens
(an MLP / a linear layer / a spatial gating unit across the token axis) and channels (an MLP).
"""
from functools import partial

import math

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, GatedMlp, Mlp, PatchEmbed, get_act_layer, lecun_normal_, to_2tuple

from ._builder import build_model_with_cfg
from ._contract import checkpoint_seq
from ._features import collect_intermediates, feature_take_indices
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, extend_default_cfgs, generate_default_cfgs)
from ._registry import register_model, register_model_alias

__all__ = ["MlpMixer", "MixerBlock", "ResBlock", "SpatialGatingBlock", "Affine"]


class MixerBlock(nn.Module):
    """Token-mixing MLP over the transposed tokens, then a channel MLP (both pre-norm, residual)."""

    def __init__(self, dim, seq_len, mlp_ratio=(0.5, 4.0), mlp_layer=Mlp, norm_layer=None, act_layer=nn.GELU,
                 drop=0.0, drop_path=0.0):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        tokens_dim, channels_dim = [int(x * dim) for x in to_2tuple(mlp_ratio)]
        self.norm1 = norm_layer(dim)
        self.mlp_tokens = mlp_layer(seq_len, tokens_dim, act_layer=act_layer, drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp_channels = mlp_layer(dim, channels_dim, act_layer=act_layer, drop=drop)

    def forward(self, x):
        x = x + self.drop_path(self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2))
        return x + self.drop_path(self.mlp_channels(self.norm2(x)))


class Affine(nn.Module):
    """ResMLP's norm: a per-channel ``alpha * x + beta``."""

    def __init__(self, dim):
        super().__init__()
        self.alpha = nn.Parameter(flow.ones((1, 1, dim)))
        self.beta = nn.Parameter(flow.zeros((1, 1, dim)))

    def forward(self, x):
        return self.beta + self.alpha * x


class ResBlock(nn.Module):
    """ResMLP: a linear layer across tokens and a channel MLP, each with Affine pre-norm and layer scale."""

    def __init__(self, dim, seq_len, mlp_ratio=4, mlp_layer=Mlp, norm_layer=Affine, act_layer=nn.GELU,
                 init_values=1e-4, drop=0.0, drop_path=0.0):
        super().__init__()
        channel_dim = int(dim * mlp_ratio)
        self.norm1 = norm_layer(dim)
        self.linear_tokens = nn.Linear(seq_len, seq_len)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp_channels = mlp_layer(dim, channel_dim, act_layer=act_layer, drop=drop)
        self.ls1 = nn.Parameter(init_values * flow.ones(dim))
        self.ls2 = nn.Parameter(init_values * flow.ones(dim))

    def forward(self, x):
        x = x + self.drop_path(self.ls1 * self.linear_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2))
        return x + self.drop_path(self.ls2 * self.mlp_channels(self.norm2(x)))


class SpatialGatingUnit(nn.Module):
    """gMLP's gate: split channels in (u, v); v is normalised and mixed across tokens; returns u * v."""

    def __init__(self, dim, seq_len, norm_layer=nn.LayerNorm):
        super().__init__()
        gate_dim = dim // 2
        self.norm = norm_layer(gate_dim)
        self.proj = nn.Linear(seq_len, seq_len)

    def init_weights(self):
        nn.init.normal_(self.proj.weight, std=1e-6)
        nn.init.ones_(self.proj.bias)

    def forward(self, x):
        u, v = x.chunk(2, dim=-1)
        v = self.proj(self.norm(v).transpose(-1, -2))
        return u * v.transpose(-1, -2)


class SpatialGatingBlock(nn.Module):
    def __init__(self, dim, seq_len, mlp_ratio=4, mlp_layer=GatedMlp, norm_layer=None, act_layer=nn.GELU,
                 drop=0.0, drop_path=0.0):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        channel_dim = int(dim * mlp_ratio)
        self.norm = norm_layer(dim)
        sgu = partial(SpatialGatingUnit, seq_len=seq_len)
        self.mlp_channels = mlp_layer(dim, channel_dim, act_layer=act_layer, gate_layer=sgu, drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        return x + self.drop_path(self.mlp_channels(self.norm(x)))


class MlpMixer(nn.Module):
    accepts_img_size = True

    def __init__(self, num_classes=1000, img_size=224, in_chans=3, patch_size=16, num_blocks=8, embed_dim=512,
                 mlp_ratio=(0.5, 4.0), block_layer=MixerBlock, mlp_layer=Mlp, norm_layer=None, act_layer=None,
                 drop_rate=0.0, proj_drop_rate=0.0, drop_path_rate=0.0, nlhb=False, stem_norm=False,
                 global_pool="avg", **block_kwargs):
        super().__init__()
        if global_pool not in ("", "avg"):
            raise ValueError(f"global_pool must be '' or 'avg', got {global_pool!r}")
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        act_layer = get_act_layer(act_layer) or nn.GELU
        self.num_classes = num_classes
        self.global_pool = global_pool
        self.num_features = self.head_hidden_size = self.embed_dim = embed_dim
        self.grad_checkpointing = False
        self.stem = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans, embed_dim=embed_dim,
                               norm_layer=norm_layer if stem_norm else None)
        reduction = self.stem.patch_size[0]
        self.blocks = nn.Sequential(*[
            block_layer(embed_dim, self.stem.num_patches, mlp_ratio, mlp_layer=mlp_layer, norm_layer=norm_layer,
                        act_layer=act_layer, drop=proj_drop_rate, drop_path=drop_path_rate, **block_kwargs)
            for _ in range(num_blocks)])
        self.feature_info = [dict(module=f"blocks.{i}", num_chs=embed_dim, reduction=reduction)
                             for i in range(num_blocks)]
        self.norm = norm_layer(embed_dim)
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()
        self.init_weights(nlhb=nlhb)

    def init_weights(self, nlhb=False):
        head_bias = -math.log(self.num_classes) if nlhb and self.num_classes > 0 else 0.0
        for name, m in self.named_modules():
            if isinstance(m, nn.Linear):
                if name.startswith("head"):
                    nn.init.zeros_(m.weight)
                    nn.init.constant_(m.bias, head_bias)
                else:
                    nn.init.xavier_uniform_(m.weight)
                    if m.bias is not None:
                        nn.init.normal_(m.bias, std=1e-6) if "mlp" in name else nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                lecun_normal_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif m is not self and hasattr(m, "init_weights"):
                m.init_weights()

    def no_weight_decay(self):
        return set()

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, run every block under ``checkpoint``: only its input is kept and its activations are
        recomputed in backward (timm's ``checkpoint_seq(self.blocks, x)``; the same values either way)."""
        self.grad_checkpointing = bool(enable)

    def get_classifier(self):
        return self.head

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = num_classes
        if global_pool is not None:
            if global_pool not in ("", "avg"):
                raise ValueError(f"global_pool must be '' or 'avg', got {global_pool!r}")
            self.global_pool = global_pool
        self.head = nn.Linear(self.embed_dim, num_classes) if num_classes > 0 else nn.Identity()

    def forward_features(self, x):
        x = self.stem(x)
        x = checkpoint_seq(self.blocks, x) if self.grad_checkpointing and self.training else self.blocks(x)
        return self.norm(x)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """Outputs of the blocks named by ``indices`` (None: all, int n: last n, list: those), as timm;
        'NCHW' reshapes the tokens to ``(B, D, H/p, W/p)``, 'NLC' keeps sequences; ``norm`` applies the
        final norm to each."""
        if output_fmt not in ("NCHW", "NLC"):
            raise ValueError(f"output_fmt must be 'NCHW' or 'NLC', got {output_fmt!r}")
        B, _, height, width = x.shape
        blocks = self.blocks
        if self.grad_checkpointing and self.training:  # timm: checkpoint(blk, x) per block here too
            blocks = [partial(checkpoint_seq, (blk,)) for blk in self.blocks]
        x, intermediates = collect_intermediates(blocks, self.stem(x), indices, stop_early,
                                                 self.norm if norm else None)
        if output_fmt == "NCHW":
            ph, pw = self.stem.patch_size
            h, w = height // ph, width // pw
            intermediates = [y.reshape(B, h, w, -1).permute(0, 3, 1, 2).contiguous() for y in intermediates]
        if intermediates_only:
            return intermediates
        return self.norm(x), intermediates

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        """Drop the blocks after the last of ``indices`` (and the final norm / head); returns the indices kept."""
        take_indices, max_index = feature_take_indices(len(self.blocks), indices)
        self.blocks = self.blocks[:max_index + 1]
        if prune_norm:
            self.norm = nn.Identity()
        if prune_head:
            self.reset_classifier(0, "")
        return take_indices

    def forward_head(self, x, pre_logits=False):
        if self.global_pool == "avg":
            x = x.mean(dim=1)
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def checkpoint_filter_fn(state_dict, model):
    """Original FB ResMLP keys (``gamma_1``, ``norm1.alpha`` shapes) -> timm's."""
    if "patch_embed.proj.weight" not in state_dict:
        return state_dict
    out = {}
    for k, v in state_dict.items():
        k = k.replace("patch_embed.", "stem.").replace("attn.", "linear_tokens.").replace("mlp.", "mlp_channels.")
        k = k.replace("gamma_", "ls")
        if k.endswith(".alpha") or k.endswith(".beta"):
            v = v.reshape(1, 1, -1)
        out[k] = v
    return out


def _create_mixer(variant, pretrained=False, **kwargs):
    return build_model_with_cfg(MlpMixer, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                feature_cfg=dict(feature_cls="getter", out_indices=3), **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.875,
                   interpolation="bicubic", fixed_input_size=True, mean=IMAGENET_INCEPTION_MEAN,
                   std=IMAGENET_INCEPTION_STD, first_conv="stem.proj", classifier="head", license="apache-2.0"),
            **kwargs}


def _fbcfg(**kwargs):
    return _cfg(**{**dict(mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD, hf_hub_id="timm/"), **kwargs})


_JX = "https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-vitjx/"
_DEIT = "https://dl.fbaipublicfiles.com/deit/"
default_cfgs = generate_default_cfgs({
    "mixer_s32_224": _cfg(),
    "mixer_s16_224": _cfg(),
    "mixer_b32_224": _cfg(),
    "mixer_b16_224.goog_in21k_ft_in1k": _cfg(hf_hub_id="timm/", url=_JX + "jx_mixer_b16_224-76587d61.pth"),
    "mixer_l32_224": _cfg(),
    "mixer_l16_224.goog_in21k_ft_in1k": _cfg(hf_hub_id="timm/", url=_JX + "jx_mixer_l16_224-92f9adc4.pth"),
    "resmlp_12_224.fb_in1k": _fbcfg(url=_DEIT + "resmlp_12_no_dist.pth"),
    "resmlp_24_224.fb_in1k": _fbcfg(url=_DEIT + "resmlp_24_no_dist.pth"),
    "resmlp_36_224.fb_in1k": _fbcfg(url=_DEIT + "resmlp_36_no_dist.pth"),
    "resmlp_big_24_224.fb_in1k": _fbcfg(url=_DEIT + "resmlpB_24_no_dist.pth"),
    "gmlp_ti16_224": _cfg(),
    "gmlp_s16_224.ra3_in1k": _cfg(hf_hub_id="timm/", url="https://github.com/rwightman/pytorch-image-models/"
                                  "releases/download/v0.1-weights/gmlp_s16_224_raa-10536d42.pth"),
    "gmlp_b16_224": _cfg(),
})

# tags behind the original flowvision names (in21k heads, MIIL, ResMLP distilled / DINO / 22k)
extend_default_cfgs(default_cfgs, {
    "mixer_b16_224.goog_in21k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-vitjx/jx_mixer_b16_224_in21k-617b3de2.pth",
        hf_hub_id="timm/", num_classes=21843),
    "mixer_l16_224.goog_in21k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-vitjx/jx_mixer_l16_224_in21k-846aa33c.pth",
        hf_hub_id="timm/", num_classes=21843),
    "mixer_b16_224.miil_in21k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-tresnet/mixer_b16_224_miil_in21k-2a558a71.pth",
        hf_hub_id="timm/", num_classes=11221, interpolation="bilinear", mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)),
    "mixer_b16_224.miil_in21k_ft_in1k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-tresnet/mixer_b16_224_miil-9229a591.pth",
        hf_hub_id="timm/", interpolation="bilinear", mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)),
    "resmlp_12_224.fb_distilled_in1k": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlp_12_dist.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_24_224.fb_distilled_in1k": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlp_24_dist.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_36_224.fb_distilled_in1k": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlp_36_dist.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_12_224.fb_dino": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlp_12_dino.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_24_224.fb_dino": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlp_24_dino.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_big_24_224.fb_in22k_ft_in1k": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlpB_24_22k.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
    "resmlp_big_24_224.fb_distilled_in1k": _cfg(
        url="https://dl.fbaipublicfiles.com/deit/resmlpB_24_dist.pth", hf_hub_id="timm/", mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225)),
})


def _m(variant, pretrained, kwargs, **args):
    return _create_mixer(variant, pretrained, **{**args, **kwargs})


@register_model
def mixer_s32_224(pretrained=False, **kwargs):
    return _m("mixer_s32_224", pretrained, kwargs, patch_size=32, num_blocks=8, embed_dim=512)


@register_model
def mixer_s16_224(pretrained=False, **kwargs):
    return _m("mixer_s16_224", pretrained, kwargs, patch_size=16, num_blocks=8, embed_dim=512)


@register_model
def mixer_b32_224(pretrained=False, **kwargs):
    return _m("mixer_b32_224", pretrained, kwargs, patch_size=32, num_blocks=12, embed_dim=768)


@register_model
def mixer_b16_224(pretrained=False, **kwargs):
    return _m("mixer_b16_224", pretrained, kwargs, patch_size=16, num_blocks=12, embed_dim=768)


@register_model
def mixer_l32_224(pretrained=False, **kwargs):
    return _m("mixer_l32_224", pretrained, kwargs, patch_size=32, num_blocks=24, embed_dim=1024)


@register_model
def mixer_l16_224(pretrained=False, **kwargs):
    return _m("mixer_l16_224", pretrained, kwargs, patch_size=16, num_blocks=24, embed_dim=1024)


def _resmlp(variant, pretrained, kwargs, patch, blocks, dim, init_values):
    return _m(variant, pretrained, kwargs, patch_size=patch, num_blocks=blocks, embed_dim=dim, mlp_ratio=4,
              block_layer=partial(ResBlock, init_values=init_values), norm_layer=Affine)


@register_model
def resmlp_12_224(pretrained=False, **kwargs):
    return _resmlp("resmlp_12_224", pretrained, kwargs, 16, 12, 384, 0.1)


@register_model
def resmlp_24_224(pretrained=False, **kwargs):
    return _resmlp("resmlp_24_224", pretrained, kwargs, 16, 24, 384, 1e-5)


@register_model
def resmlp_36_224(pretrained=False, **kwargs):
    return _resmlp("resmlp_36_224", pretrained, kwargs, 16, 36, 384, 1e-6)


@register_model
def resmlp_big_24_224(pretrained=False, **kwargs):
    return _resmlp("resmlp_big_24_224", pretrained, kwargs, 8, 24, 768, 1e-6)


def _gmlp(variant, pretrained, kwargs, blocks, dim):
    return _m(variant, pretrained, kwargs, patch_size=16, num_blocks=blocks, embed_dim=dim, mlp_ratio=6,
              block_layer=SpatialGatingBlock, mlp_layer=GatedMlp)


@register_model
def gmlp_ti16_224(pretrained=False, **kwargs):
    return _gmlp("gmlp_ti16_224", pretrained, kwargs, 30, 128)


@register_model
def gmlp_s16_224(pretrained=False, **kwargs):
    return _gmlp("gmlp_s16_224", pretrained, kwargs, 30, 256)


@register_model
def gmlp_b16_224(pretrained=False, **kwargs):
    return _gmlp("gmlp_b16_224", pretrained, kwargs, 30, 512)


# the original flowvision names
for _orig, _target in {
        **{f"mlp_mixer_{_v}_224": f"mixer_{_v}_224" for _v in ("s16", "s32", "b32", "l32")},
        "mlp_mixer_b16_224": "mixer_b16_224.goog_in21k_ft_in1k",
        "mlp_mixer_l16_224": "mixer_l16_224.goog_in21k_ft_in1k",
        "mlp_mixer_b16_224_in21k": "mixer_b16_224.goog_in21k",
        "mlp_mixer_l16_224_in21k": "mixer_l16_224.goog_in21k",
        "mlp_mixer_b16_224_miil": "mixer_b16_224.miil_in21k_ft_in1k",
        "mlp_mixer_b16_224_miil_in21k": "mixer_b16_224.miil_in21k",
        **{f"resmlp_{_d}_distilled_224": f"resmlp_{_d}_224.fb_distilled_in1k" for _d in ("12", "24", "36")},
        **{f"resmlp_{_d}_224_dino": f"resmlp_{_d}_224.fb_dino" for _d in ("12", "24")},
        "resmlp_big_24_224_in22k_to_1k": "resmlp_big_24_224.fb_in22k_ft_in1k",
        "resmlp_big_24_distilled_224": "resmlp_big_24_224.fb_distilled_in1k"}.items():
    register_model_alias(_orig, _target)
