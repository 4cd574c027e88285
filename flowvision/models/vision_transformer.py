"""Vision Transformer (ViT) and DeiT, with timm's module and parameter names.

Token layout: ``[cls, (dist), patches...]``; ``forward_features`` returns ``(B, N, D)`` tokens.
"""
import math
import re
from collections import OrderedDict
from functools import partial

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import DropPath, Mlp, PatchEmbed, get_act_layer, to_2tuple, trunc_normal_

from flowvision.ops import MLP

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import checkpoint_seq
from ._features import feature_take_indices
from ._pretrained import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGENET_INCEPTION_MEAN,
                          IMAGENET_INCEPTION_STD, extend_default_cfgs, generate_default_cfgs)
from ._registry import register_model, register_model_alias

__all__ = ["VisionTransformer", "VisionTransformerDistilled", "Attention", "Block", "LayerScale",
           "resample_abs_pos_embed", "VisionTransformerTV"]


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, qk_norm=False, attn_drop=0.0, proj_drop=0.0,
                 norm_layer=nn.LayerNorm):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim {dim} must be divisible by num_heads {num_heads}")
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        x = x.transpose(1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(x))


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * flow.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=False, qk_norm=False, proj_drop=0.0, attn_drop=0.0,
                 init_values=None, drop_path=0.0, act_layer=nn.GELU, norm_layer=nn.LayerNorm, mlp_layer=Mlp):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_norm=qk_norm, attn_drop=attn_drop,
                              proj_drop=proj_drop, norm_layer=norm_layer)
        self.ls1 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = mlp_layer(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer,
                             drop=proj_drop)
        self.ls2 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


class VisionTransformer(nn.Module):
    """ViT. ``global_pool``: 'token' (class token), 'avg' (mean of patch tokens, with fc_norm), ''."""
    accepts_img_size = True

    def __init__(self, img_size=224, patch_size=16, in_chans=3, num_classes=1000, global_pool="token",
                 embed_dim=768, depth=12, num_heads=12, mlp_ratio=4.0, qkv_bias=True, qk_norm=False,
                 init_values=None, class_token=True, no_embed_class=False, pre_norm=False, final_norm=True,
                 fc_norm=None, drop_rate=0.0, pos_drop_rate=0.0, proj_drop_rate=0.0, attn_drop_rate=0.0,
                 drop_path_rate=0.0, weight_init="", norm_layer=None, act_layer=None):
        super().__init__()
        if global_pool not in ("", "avg", "token"):
            raise ValueError(f"global_pool must be '', 'avg' or 'token', got {global_pool!r}")
        if global_pool == "token" and not class_token:
            raise ValueError("global_pool='token' needs class_token=True")
        use_fc_norm = global_pool == "avg" if fc_norm is None else fc_norm
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        act_layer = get_act_layer(act_layer) or nn.GELU

        self.num_classes = num_classes
        self.global_pool = global_pool
        self.num_features = self.head_hidden_size = self.embed_dim = embed_dim
        self.num_prefix_tokens = 1 if class_token else 0
        self.has_class_token = class_token
        self.no_embed_class = no_embed_class
        self.grad_checkpointing = False

        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
                                      embed_dim=embed_dim, bias=not pre_norm)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(flow.zeros(1, 1, embed_dim)) if class_token else None
        embed_len = num_patches if no_embed_class else num_patches + self.num_prefix_tokens
        self.pos_embed = nn.Parameter(flow.randn(1, embed_len, embed_dim) * 0.02)
        self.pos_drop = nn.Dropout(p=pos_drop_rate)
        self.patch_drop = nn.Identity()
        self.norm_pre = norm_layer(embed_dim) if pre_norm else nn.Identity()
        dpr = [float(v) for v in np.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.Sequential(*[
            Block(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, qk_norm=qk_norm,
                  init_values=init_values, proj_drop=proj_drop_rate, attn_drop=attn_drop_rate, drop_path=dpr[i],
                  norm_layer=norm_layer, act_layer=act_layer)
            for i in range(depth)])
        reduction = self.patch_embed.patch_size[0]
        self.feature_info = [dict(module=f"blocks.{i}", num_chs=embed_dim, reduction=reduction)
                             for i in range(depth)]
        self.norm = norm_layer(embed_dim) if final_norm and not use_fc_norm else nn.Identity()
        self.fc_norm = norm_layer(embed_dim) if final_norm and use_fc_norm else nn.Identity()
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()
        if weight_init != "skip":
            self.init_weights()

    def init_weights(self):
        trunc_normal_(self.pos_embed, std=0.02)
        if self.cls_token is not None:
            nn.init.normal_(self.cls_token, std=1e-6)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def no_weight_decay(self):
        return {"pos_embed", "cls_token", "dist_token"}

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, run every block under ``checkpoint``: only its input is kept and its activations are
        recomputed in backward (timm's ``checkpoint_seq(self.blocks, x)``; the same values either way)."""
        self.grad_checkpointing = bool(enable)

    def get_classifier(self):
        return self.head

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = num_classes
        if global_pool is not None:
            if global_pool not in ("", "avg", "token"):
                raise ValueError(f"global_pool must be '', 'avg' or 'token', got {global_pool!r}")
            self.global_pool = global_pool
        self.head = nn.Linear(self.embed_dim, num_classes) if num_classes > 0 else nn.Identity()

    def _pos_embed(self, x):
        b = x.shape[0]
        if self.no_embed_class:
            x = x + self.pos_embed
            if self.cls_token is not None:
                x = flow.cat([self.cls_token.expand(b, -1, -1), x], dim=1)
        else:
            if self.cls_token is not None:
                x = flow.cat([self.cls_token.expand(b, -1, -1), x], dim=1)
            x = x + self.pos_embed
        return self.pos_drop(x)

    def forward_features(self, x):
        x = self.patch_embed(x)
        x = self._pos_embed(x)
        x = self.norm_pre(self.patch_drop(x))
        x = checkpoint_seq(self.blocks, x) if self.grad_checkpointing and self.training else self.blocks(x)
        return self.norm(x)

    def forward_intermediates(self, x, indices=None, return_prefix_tokens=False, norm=False, stop_early=False,
                              output_fmt="NCHW", intermediates_only=False):
        """Outputs of the blocks named by ``indices`` (None: all, int n: last n, list: those), as timm.

        ``output_fmt='NCHW'`` drops the prefix (class/distillation) tokens and reshapes the patch tokens to
        ``(B, D, H/p, W/p)``; 'NLC' keeps them as sequences. ``norm`` applies the final norm to each one;
        ``return_prefix_tokens`` pairs each map with its prefix tokens. Returns ``(final tokens, list)``, or
        just the list with ``intermediates_only``.
        """
        if output_fmt not in ("NCHW", "NLC"):
            raise ValueError(f"output_fmt must be 'NCHW' or 'NLC', got {output_fmt!r}")
        take_indices, max_index = feature_take_indices(len(self.blocks), indices)
        B, _, height, width = x.shape
        x = self.patch_embed(x)
        x = self.norm_pre(self.patch_drop(self._pos_embed(x)))
        blocks = self.blocks[:max_index + 1] if stop_early else self.blocks
        intermediates = []
        recompute = self.grad_checkpointing and self.training
        for i, blk in enumerate(blocks):
            x = checkpoint_seq((blk,), x, enabled=recompute)
            if i in take_indices:
                intermediates.append(self.norm(x) if norm else x)
        npt = self.num_prefix_tokens
        prefix_tokens = [y[:, :npt] for y in intermediates] if npt else None
        if npt:
            intermediates = [y[:, npt:] for y in intermediates]
        if output_fmt == "NCHW":
            ph, pw = self.patch_embed.patch_size
            h, w = height // ph, width // pw
            intermediates = [y.reshape(B, h, w, -1).permute(0, 3, 1, 2).contiguous() for y in intermediates]
        if return_prefix_tokens and prefix_tokens is not None:
            intermediates = list(zip(intermediates, prefix_tokens))
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
            self.fc_norm = nn.Identity()
            self.reset_classifier(0, "")
        return take_indices

    def pool(self, x):
        if self.global_pool == "avg":
            return x[:, self.num_prefix_tokens:].mean(dim=1)
        if self.global_pool == "token":
            return x[:, 0]
        return x

    def forward_head(self, x, pre_logits=False):
        x = self.fc_norm(self.pool(x))
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


class VisionTransformerDistilled(VisionTransformer):
    """DeiT distilled: a second (distillation) token and head; eval output is the mean of both heads."""

    def __init__(self, *args, **kwargs):
        weight_init = kwargs.pop("weight_init", "")
        super().__init__(*args, weight_init="skip", **kwargs)
        if self.global_pool != "token":
            raise ValueError("distilled models only support global_pool='token'")
        self.num_prefix_tokens = 2
        self.dist_token = nn.Parameter(flow.zeros(1, 1, self.embed_dim))
        self.pos_embed = nn.Parameter(flow.zeros(1, self.patch_embed.num_patches + 2, self.embed_dim))
        self.head_dist = nn.Linear(self.embed_dim, self.num_classes) if self.num_classes > 0 else nn.Identity()
        self.distilled_training = False
        if weight_init != "skip":
            self.init_weights()
            trunc_normal_(self.dist_token, std=0.02)

    def get_classifier(self):
        return self.head, self.head_dist

    def reset_classifier(self, num_classes, global_pool=None):
        super().reset_classifier(num_classes, global_pool)
        self.head_dist = nn.Linear(self.embed_dim, num_classes) if num_classes > 0 else nn.Identity()

    def _pos_embed(self, x):
        b = x.shape[0]
        x = flow.cat([self.cls_token.expand(b, -1, -1), self.dist_token.expand(b, -1, -1), x], dim=1)
        return self.pos_drop(x + self.pos_embed)

    def forward_head(self, x, pre_logits=False):
        x, x_dist = x[:, 0], x[:, 1]
        if pre_logits:
            return (x + x_dist) / 2
        x, x_dist = self.head(x), self.head_dist(x_dist)
        if self.distilled_training and self.training:
            return x, x_dist
        return (x + x_dist) / 2


def resample_abs_pos_embed(posemb, new_size, num_prefix_tokens=1):
    """Resample a ``(1, prefix + H*W, D)`` numpy position embedding to grid ``new_size`` (bicubic)."""
    posemb = np.asarray(posemb, dtype=np.float32)
    prefix, grid = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    old = int(math.sqrt(grid.shape[1]))
    if old * old != grid.shape[1]:
        raise ValueError("position embedding grid is not square")
    new_size = to_2tuple(new_size)
    if (old, old) == tuple(new_size):
        return posemb
    d = grid.shape[-1]
    t = flow.from_numpy(np.ascontiguousarray(grid.reshape(1, old, old, d).transpose(0, 3, 1, 2)))
    t = F.interpolate(t, size=tuple(new_size), mode="bicubic", align_corners=False, antialias=True)
    grid = t.numpy().transpose(0, 2, 3, 1).reshape(1, -1, d)
    return np.concatenate([prefix, grid], axis=1)


def checkpoint_filter_fn(state_dict, model):
    """Resample ``pos_embed`` when the checkpoint grid differs from the model's; drop ``pre_logits``."""
    out = {}
    for k, v in state_dict.items():
        if k.startswith("pre_logits"):
            continue
        if k == "pos_embed" and tuple(v.shape) != tuple(model.pos_embed.shape):
            prefix = 0 if getattr(model, "no_embed_class", False) else model.num_prefix_tokens
            v = resample_abs_pos_embed(v, model.patch_embed.grid_size, num_prefix_tokens=prefix)
        out[k] = v
    return out


def _create_vision_transformer(variant, pretrained=False, distilled=False, **kwargs):
    cls = VisionTransformerDistilled if distilled else VisionTransformer
    # features_only: timm's FeatureGetterNet over forward_intermediates, last 3 blocks by default
    return build_model_with_cfg(cls, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                feature_cfg=dict(feature_cls="getter", out_indices=3), **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.9,
                   interpolation="bicubic", fixed_input_size=True, mean=IMAGENET_INCEPTION_MEAN,
                   std=IMAGENET_INCEPTION_STD, first_conv="patch_embed.proj", classifier="head",
                   license="apache-2.0"), **kwargs}


def _dcfg(**kwargs):  # DeiT: ImageNet mean/std
    return _cfg(**{**dict(mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD), **kwargs})


_384 = dict(input_size=(3, 384, 384), crop_pct=1.0)
_IN21K = dict(num_classes=21843)
default_cfgs = generate_default_cfgs({
    "vit_tiny_patch16_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_tiny_patch16_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_small_patch32_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_small_patch32_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_small_patch16_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_small_patch16_224.augreg_in1k": _cfg(hf_hub_id="timm/"),
    "vit_small_patch16_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_small_patch8_224.dino": _cfg(hf_hub_id="timm/", num_classes=0, mean=IMAGENET_DEFAULT_MEAN,
                                      std=IMAGENET_DEFAULT_STD),
    "vit_base_patch32_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch32_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_base_patch16_224.augreg2_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch16_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch16_224.orig_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch16_224.augreg_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch16_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_base_patch16_384.orig_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_base_patch8_224.augreg2_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_base_patch8_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_large_patch32_224.orig_in21k": _cfg(hf_hub_id="timm/", num_classes=0),
    "vit_large_patch32_384.orig_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "vit_large_patch16_224.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "vit_large_patch16_384.augreg_in21k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "deit_tiny_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/"),
    "deit_small_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/"),
    "deit_base_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/"),
    "deit_base_patch16_384.fb_in1k": _dcfg(hf_hub_id="timm/", **_384),
    "deit_tiny_distilled_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/", classifier=("head", "head_dist")),
    "deit_small_distilled_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/", classifier=("head", "head_dist")),
    "deit_base_distilled_patch16_224.fb_in1k": _dcfg(hf_hub_id="timm/", classifier=("head", "head_dist")),
    "deit_base_distilled_patch16_384.fb_in1k": _dcfg(hf_hub_id="timm/", classifier=("head", "head_dist"),
                                                     **_384),
})

_DEIT3 = "https://dl.fbaipublicfiles.com/deit/deit_3_"
for _arch, _img, _f in (("small_patch16", 224, "small_224"), ("small_patch16", 384, "small_384"),
                        ("medium_patch16", 224, "medium_224"), ("base_patch16", 224, "base_224"),
                        ("base_patch16", 384, "base_384"), ("large_patch16", 224, "large_224"),
                        ("large_patch16", 384, "large_384"), ("huge_patch14", 224, "huge_224")):
    _size = _384 if _img == 384 else {}
    default_cfgs.update(generate_default_cfgs({
        f"deit3_{_arch}_{_img}.fb_in1k": _dcfg(hf_hub_id="timm/", url=f"{_DEIT3}{_f}_1k.pth", **_size),
        f"deit3_{_arch}_{_img}.fb_in22k_ft_in1k": _dcfg(
            hf_hub_id="timm/", crop_pct=1.0, url=f"{_DEIT3}{_f}_21k{'_v1' if _arch.startswith('huge') else ''}.pth",
            **{k: v for k, v in _size.items() if k != "crop_pct"}),
    }))

# tags behind the original flowvision names (in21k heads, SAM, MIIL, ViT-H)
extend_default_cfgs(default_cfgs, {
    "vit_tiny_patch16_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/Ti_16-i21k-300ep-lr_0.001-aug_none-wd_0.03-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_small_patch32_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/S_32-i21k-300ep-lr_0.001-aug_light1-wd_0.03-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_small_patch16_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/S_16-i21k-300ep-lr_0.001-aug_light1-wd_0.03-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_base_patch32_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/B_32-i21k-300ep-lr_0.001-aug_medium1-wd_0.03-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_base_patch16_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/B_16-i21k-300ep-lr_0.001-aug_medium1-wd_0.1-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_base_patch8_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/B_8-i21k-300ep-lr_0.001-aug_medium1-wd_0.1-do_0.0-sd_0.0.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_large_patch16_224.augreg_in21k": _cfg(
        url="https://storage.googleapis.com/vit_models/augreg/L_16-i21k-300ep-lr_0.001-aug_medium1-wd_0.1-do_0.1-sd_0.1.npz",
        hf_hub_id="timm/", num_classes=21843),
    "vit_base_patch16_224.sam_in1k": _cfg(
        url="https://storage.googleapis.com/vit_models/sam/ViT-B_16.npz", hf_hub_id="timm/"),
    "vit_base_patch32_224.sam_in1k": _cfg(
        url="https://storage.googleapis.com/vit_models/sam/ViT-B_32.npz", hf_hub_id="timm/"),
    "vit_huge_patch14_224.orig_in21k": _cfg(
        hf_hub_id="timm/", num_classes=0),
    "vit_base_patch16_224_miil.in21k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-tresnet/vit_base_patch16_224_in21k_miil-887286df.pth",
        hf_hub_id="timm/", num_classes=11221, crop_pct=0.875, interpolation="bilinear", mean=(0.0, 0.0, 0.0),
        std=(1.0, 1.0, 1.0)),
    "vit_base_patch16_224_miil.in21k_ft_in1k": _cfg(
        url="https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-tresnet/vit_base_patch16_224_1k_miil_84_4-2deb18e3.pth",
        hf_hub_id="timm/", crop_pct=0.875, interpolation="bilinear", mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)),
})

_SIZES = {"tiny": (192, 12, 3), "small": (384, 12, 6), "medium": (512, 12, 8), "base": (768, 12, 12),
          "large": (1024, 24, 16), "huge": (1280, 32, 16)}


def _vit(variant, pretrained, kwargs, size, patch, img, distilled=False, **extra):
    dim, depth, heads = _SIZES[size]
    args = dict(patch_size=patch, embed_dim=dim, depth=depth, num_heads=heads, img_size=img, **extra)
    if distilled:
        args["distilled"] = True
    return _create_vision_transformer(variant, pretrained, **{**args, **kwargs})


@register_model
def vit_tiny_patch16_224(pretrained=False, **kwargs):
    return _vit("vit_tiny_patch16_224", pretrained, kwargs, "tiny", 16, 224)


@register_model
def vit_tiny_patch16_384(pretrained=False, **kwargs):
    return _vit("vit_tiny_patch16_384", pretrained, kwargs, "tiny", 16, 384)


@register_model
def vit_small_patch32_224(pretrained=False, **kwargs):
    return _vit("vit_small_patch32_224", pretrained, kwargs, "small", 32, 224)


@register_model
def vit_small_patch32_384(pretrained=False, **kwargs):
    return _vit("vit_small_patch32_384", pretrained, kwargs, "small", 32, 384)


@register_model
def vit_small_patch16_224(pretrained=False, **kwargs):
    return _vit("vit_small_patch16_224", pretrained, kwargs, "small", 16, 224)


@register_model
def vit_small_patch16_384(pretrained=False, **kwargs):
    return _vit("vit_small_patch16_384", pretrained, kwargs, "small", 16, 384)


@register_model
def vit_small_patch8_224(pretrained=False, **kwargs):
    return _vit("vit_small_patch8_224", pretrained, kwargs, "small", 8, 224)


@register_model
def vit_base_patch32_224(pretrained=False, **kwargs):
    return _vit("vit_base_patch32_224", pretrained, kwargs, "base", 32, 224)


@register_model
def vit_base_patch32_384(pretrained=False, **kwargs):
    return _vit("vit_base_patch32_384", pretrained, kwargs, "base", 32, 384)


@register_model
def vit_base_patch16_224(pretrained=False, **kwargs):
    return _vit("vit_base_patch16_224", pretrained, kwargs, "base", 16, 224)


@register_model
def vit_base_patch16_384(pretrained=False, **kwargs):
    return _vit("vit_base_patch16_384", pretrained, kwargs, "base", 16, 384)


@register_model
def vit_base_patch8_224(pretrained=False, **kwargs):
    return _vit("vit_base_patch8_224", pretrained, kwargs, "base", 8, 224)


@register_model
def vit_large_patch32_224(pretrained=False, **kwargs):
    return _vit("vit_large_patch32_224", pretrained, kwargs, "large", 32, 224)


@register_model
def vit_large_patch32_384(pretrained=False, **kwargs):
    return _vit("vit_large_patch32_384", pretrained, kwargs, "large", 32, 384)


@register_model
def vit_base_patch16_224_miil(pretrained=False, **kwargs):
    """ViT-B/16 without qkv bias (Alibaba-MIIL ImageNet-21K-P weights)."""
    return _vit("vit_base_patch16_224_miil", pretrained, kwargs, "base", 16, 224, qkv_bias=False)


@register_model
def vit_huge_patch14_224(pretrained=False, **kwargs):
    """ViT-H/14."""
    return _vit("vit_huge_patch14_224", pretrained, kwargs, "huge", 14, 224)


@register_model
def vit_giant_patch14_224(pretrained=False, **kwargs):
    """ViT-g/14 (Scaling Vision Transformers): width 1408, depth 40, MLP 6144."""
    args = dict(patch_size=14, embed_dim=1408, mlp_ratio=48 / 11, depth=40, num_heads=16)
    return _create_vision_transformer("vit_giant_patch14_224", pretrained, **{**args, **kwargs})


@register_model
def vit_gigantic_patch14_224(pretrained=False, **kwargs):
    """ViT-G/14 (Scaling Vision Transformers): width 1664, depth 48, MLP 8192."""
    args = dict(patch_size=14, embed_dim=1664, mlp_ratio=64 / 13, depth=48, num_heads=16)
    return _create_vision_transformer("vit_gigantic_patch14_224", pretrained, **{**args, **kwargs})


@register_model
def vit_large_patch16_224(pretrained=False, **kwargs):
    return _vit("vit_large_patch16_224", pretrained, kwargs, "large", 16, 224)


@register_model
def vit_large_patch16_384(pretrained=False, **kwargs):
    return _vit("vit_large_patch16_384", pretrained, kwargs, "large", 16, 384)


@register_model
def deit_tiny_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_tiny_patch16_224", pretrained, kwargs, "tiny", 16, 224)


@register_model
def deit_small_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_small_patch16_224", pretrained, kwargs, "small", 16, 224)


@register_model
def deit_base_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_base_patch16_224", pretrained, kwargs, "base", 16, 224)


@register_model
def deit_base_patch16_384(pretrained=False, **kwargs):
    return _vit("deit_base_patch16_384", pretrained, kwargs, "base", 16, 384)


@register_model
def deit_tiny_distilled_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_tiny_distilled_patch16_224", pretrained, kwargs, "tiny", 16, 224, distilled=True)


@register_model
def deit_small_distilled_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_small_distilled_patch16_224", pretrained, kwargs, "small", 16, 224, distilled=True)


@register_model
def deit_base_distilled_patch16_224(pretrained=False, **kwargs):
    return _vit("deit_base_distilled_patch16_224", pretrained, kwargs, "base", 16, 224, distilled=True)


@register_model
def deit_base_distilled_patch16_384(pretrained=False, **kwargs):
    return _vit("deit_base_distilled_patch16_384", pretrained, kwargs, "base", 16, 384, distilled=True)


_DEIT3_ARGS = dict(no_embed_class=True, init_values=1e-6)  # DeiT-III: layer scale, no pos-embed on the cls token


@register_model
def deit3_small_patch16_224(pretrained=False, **kwargs):
    return _vit("deit3_small_patch16_224", pretrained, kwargs, "small", 16, 224, **_DEIT3_ARGS)


@register_model
def deit3_small_patch16_384(pretrained=False, **kwargs):
    return _vit("deit3_small_patch16_384", pretrained, kwargs, "small", 16, 384, **_DEIT3_ARGS)


@register_model
def deit3_medium_patch16_224(pretrained=False, **kwargs):
    return _vit("deit3_medium_patch16_224", pretrained, kwargs, "medium", 16, 224, **_DEIT3_ARGS)


@register_model
def deit3_base_patch16_224(pretrained=False, **kwargs):
    return _vit("deit3_base_patch16_224", pretrained, kwargs, "base", 16, 224, **_DEIT3_ARGS)


@register_model
def deit3_base_patch16_384(pretrained=False, **kwargs):
    return _vit("deit3_base_patch16_384", pretrained, kwargs, "base", 16, 384, **_DEIT3_ARGS)


@register_model
def deit3_large_patch16_224(pretrained=False, **kwargs):
    return _vit("deit3_large_patch16_224", pretrained, kwargs, "large", 16, 224, **_DEIT3_ARGS)


@register_model
def deit3_large_patch16_384(pretrained=False, **kwargs):
    return _vit("deit3_large_patch16_384", pretrained, kwargs, "large", 16, 384, **_DEIT3_ARGS)


@register_model
def deit3_huge_patch14_224(pretrained=False, **kwargs):
    return _vit("deit3_huge_patch14_224", pretrained, kwargs, "huge", 14, 224, **_DEIT3_ARGS)


for _size in ("tiny", "small", "base", "large"):
    register_model_alias(f"vit_{_size}", f"vit_{_size}_patch16_224")
for _size in ("tiny", "small", "base"):
    register_model_alias(f"deit_{_size}", f"deit_{_size}_patch16_224")


# the original flowvision names
for _orig, _target in {
        **{f"vit_{_v}_224_in21k": f"vit_{_v}_224.augreg_in21k" for _v in (
            "tiny_patch16", "small_patch32", "small_patch16", "base_patch32", "base_patch16", "base_patch8",
            "large_patch16")},
        "vit_large_patch32_224_in21k": "vit_large_patch32_224.orig_in21k",
        "vit_huge_patch14_224_in21k": "vit_huge_patch14_224.orig_in21k",
        "vit_base_patch16_224_sam": "vit_base_patch16_224.sam_in1k",
        "vit_base_patch32_224_sam": "vit_base_patch32_224.sam_in1k",
        "vit_base_patch16_224_miil_in21k": "vit_base_patch16_224_miil.in21k",
        **{f"deit_{_s}_patch16_LS_{_r}{_x}": f"deit3_{_s}_patch16_{_r}.{_t}" for _s in ("small", "base", "large")
           for _r in ("224", "384") for _x, _t in (("", "fb_in1k"), ("_in21k", "fb_in22k_ft_in1k"))},
        "deit_huge_patch14_LS_224": "deit3_huge_patch14_224.fb_in1k",
        "deit_huge_patch14_LS_224_in21k": "deit3_huge_patch14_224.fb_in22k_ft_in1k"}.items():
    register_model_alias(_orig, _target)


# --- torchvision's ViT (``conv_proj``, ``class_token``, ``encoder.layers.encoder_layer_N``, ``heads.head``) ---

class EncoderBlockTV(nn.Module):
    """Pre-norm block with torch's fused-projection MultiheadAttention (``self_attention.in_proj_*``)."""

    fx_shape_nodes = True  # forward as torchvision writes it: feature-extraction node names include its shape nodes

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout,
                                                    batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLP(hidden_dim, [mlp_dim, hidden_dim], activation_layer=nn.GELU, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)

    def forward(self, input):  # noqa: A002 - torchvision's code, statement for statement (its fx node names)
        flow._assert(input.dim() == 3, f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x)
        x = x + input
        y = self.ln_2(x)
        y = self.mlp(y)
        return x + y


class EncoderTV(nn.Module):
    fx_shape_nodes = True

    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer):
        super().__init__()
        self.pos_embedding = nn.Parameter(flow.randn(1, seq_length, hidden_dim) * 0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlockTV(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                  norm_layer)) for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):  # noqa: A002
        flow._assert(input.dim() == 3, f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))


class VisionTransformerTV(nn.Module):
    """torchvision's ViT; ``register_tv_counterpart`` maps its checkpoints to timm's ``VisionTransformer``."""

    fx_shape_nodes = True

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None):
        super().__init__()
        if image_size % patch_size:
            raise ValueError("Input shape indivisible by patch size!")
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.num_classes = num_classes
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        self.seq_length = (image_size // patch_size) ** 2 + 1
        self.class_token = nn.Parameter(flow.zeros(1, 1, hidden_dim))
        self.encoder = EncoderTV(self.seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                                 attention_dropout, partial(nn.LayerNorm, eps=1e-6))
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / (3 * patch_size * patch_size)))
        nn.init.zeros_(self.conv_proj.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        if x.ndim != 4:
            raise ValueError(f"expected a (B, C, H, W) tensor, got shape {tuple(x.shape)}")
        n, c, h, w = x.shape
        p = self.patch_size
        flow._assert(h == self.image_size, f"Wrong image height! Expected {self.image_size} but got {h}!")
        flow._assert(w == self.image_size, f"Wrong image width! Expected {self.image_size} but got {w}!")
        n_h = h // p
        n_w = w // p
        x = self.conv_proj(x)
        x = x.reshape(n, self.hidden_dim, n_h * n_w)
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        batch_class_token = self.class_token.expand(n, -1, -1)
        x = flow.cat([batch_class_token, x], dim=1)
        x = self.encoder(x)
        x = x[:, 0]
        return self.heads(x)


# patch, layers, heads, hidden, mlp
_TV_ARCH = {"vit_b_16": (16, 12, 12, 768, 3072), "vit_b_32": (32, 12, 12, 768, 3072),
            "vit_l_16": (16, 24, 16, 1024, 4096), "vit_l_32": (32, 24, 16, 1024, 4096),
            "vit_h_14": (14, 32, 16, 1280, 5120)}


def _tv_vit(name, weights, image_size=None, **kwargs):
    if weights is not None:  # SWAG E2E weights are for 384 / 512 / 518 px
        need = weights.meta["min_size"][0]
        if image_size not in (None, need):
            raise ValueError(f"The parameter 'image_size' expected value {need} but got {image_size} instead.")
        image_size = need
    return VisionTransformerTV(image_size or 224, *_TV_ARCH[name], **kwargs)


_TV_LAYER_KEYS = (("ln_1.", "norm1."), ("ln_2.", "norm2."), ("self_attention.in_proj_weight", "attn.qkv.weight"),
                  ("self_attention.in_proj_bias", "attn.qkv.bias"), ("self_attention.out_proj.", "attn.proj."),
                  ("mlp.0.", "mlp.fc1."), ("mlp.3.", "mlp.fc2."))


def convert_tv_checkpoint(sd, model):
    """torchvision ViT keys -> timm's (``blocks.N.attn.qkv``, ``pos_embed``, ``cls_token``, ``head``)."""
    out = {}
    for k, v in sd.items():
        k = k.replace("conv_proj.", "patch_embed.proj.").replace("class_token", "cls_token")
        k = k.replace("encoder.pos_embedding", "pos_embed").replace("encoder.ln.", "norm.")
        k = k.replace("heads.head.", "head.")
        m = re.match(r"encoder\.layers\.encoder_layer_(\d+)\.(.*)", k)
        if m:
            rest = m.group(2)
            for a, b in _TV_LAYER_KEYS:
                rest = rest.replace(a, b)
            k = f"blocks.{m.group(1)}.{rest}"
        if k.startswith("heads.pre_logits"):
            raise ValueError("torchvision ViT checkpoints with a representation layer have no timm counterpart")
        out[k] = v
    return out


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "vit_b_16": ("ViT_B_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_16-c867db91.pth", 86567656, (224, 224), 224, 256, "bilinear", 81.072, 95.318),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_b_16_swag-9ac1b537.pth", 86859496, (384, 384), 384, 384, "bicubic", 85.304, 97.65),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_b_16_lc_swag-4e70ced5.pth", 86567656, (224, 224), 224, 224, "bicubic", 81.886, 96.18),
    ]),
    "vit_b_32": ("ViT_B_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_32-d86f8d99.pth", 88224232, (224, 224), 224, 256, "bilinear", 75.912, 92.466),
    ]),
    "vit_l_16": ("ViT_L_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_16-852ce7e3.pth", 304326632, (224, 224), 224, 242, "bilinear", 79.662, 94.638),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_l_16_swag-4f3808c9.pth", 305174504, (512, 512), 512, 512, "bicubic", 88.064, 98.512),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_l_16_lc_swag-4d563306.pth", 304326632, (224, 224), 224, 224, "bicubic", 85.146, 97.422),
    ]),
    "vit_l_32": ("ViT_L_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_32-c7638314.pth", 306535400, (224, 224), 224, 256, "bilinear", 76.972, 93.07),
    ]),
    "vit_h_14": ("ViT_H_14_Weights", "IMAGENET1K_SWAG_E2E_V1", [
        ("IMAGENET1K_SWAG_E2E_V1", "vit_h_14_swag-80465313.pth", 633470440, (518, 518), 518, 518, "bicubic", 88.552, 98.694),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_h_14_lc_swag-c1eb923e.pth", 632045800, (224, 224), 224, 224, "bicubic", 85.708, 97.73),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_vit)
register_tv_counterpart({"vit_b_16": "vit_base_patch16_224", "vit_b_32": "vit_base_patch32_224",
                         "vit_l_16": "vit_large_patch16_224", "vit_l_32": "vit_large_patch32_224"},
                        convert_tv_checkpoint)
