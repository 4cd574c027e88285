"""PVT v1 (Wang et al., "Pyramid Vision Transformer: A Versatile Backbone for Dense Prediction without
Convolutions", ICCV 2021), as the original flowvision's ``pvt_tiny/small/medium/large``.

Four stages of non-overlapping patch embedding + learned position embedding + transformer blocks whose keys and
values come from a spatially reduced map (the spatial-reduction attention PVT v2 also uses); a class token joins
the last stage. timm has no PVT v1: parameter names follow the authors' release (``patch_embed1``,
``pos_embed1``, ``block1.0.attn.sr``, ``cls_token``, ``norm``, ``head``).

Sizes from the paper's Table 1/2. Ambiguous in the paper and chosen as the authors' code: LayerNorm eps 1e-6
in the blocks, 1e-5 in the patch embeddings and the reduction norm; qkv bias on; the last stage's position
embedding covers the class token too.
"""
from functools import partial

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, Mlp, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none, linear_head
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model
from .pvt_v2 import Attention

__all__ = ["PyramidVisionTransformer"]


class Block(nn.Module):
    """Pre-norm block: spatial-reduction attention, GELU MLP."""

    def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=True, drop=0.0, attn_drop=0.0, drop_path=0.0,
                 sr_ratio=1, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, sr_ratio=sr_ratio, qkv_bias=qkv_bias, attn_drop=attn_drop,
                              proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, x, feat_size):
        x = x + self.drop_path(self.attn(self.norm1(x), feat_size))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchEmbed(nn.Module):
    """Non-overlapping patch conv + LayerNorm; (B, C, H, W) -> (B, N, D) and the grid size."""

    def __init__(self, patch_size, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x)
        h, w = x.shape[-2:]
        return self.norm(x.flatten(2).transpose(1, 2)), (h, w)


class PyramidVisionTransformer(ClassifierContract, nn.Module):
    """PVT v1.

    Args:
        img_size: input size (the position embeddings fix it). in_chans, num_classes: as usual.
        embed_dims, num_heads, mlp_ratios, depths, sr_ratios: per stage.
        qkv_bias, drop_rate, attn_drop_rate, drop_path_rate: attention bias, dropouts, stochastic depth.
    """
    accepts_img_size = True
    no_weight_decay_names = {"cls_token", "pos_embed1", "pos_embed2", "pos_embed3", "pos_embed4"}

    def __init__(self, img_size=224, in_chans=3, num_classes=1000, embed_dims=(64, 128, 320, 512),
                 num_heads=(1, 2, 5, 8), mlp_ratios=(8, 8, 4, 4), depths=(3, 4, 6, 3), sr_ratios=(8, 4, 2, 1),
                 qkv_bias=True, drop_rate=0.0, attn_drop_rate=0.0, drop_path_rate=0.0, global_pool="token"):
        super().__init__()
        if global_pool not in ("token", ""):
            raise ValueError(f"global_pool must be 'token' or '', got {global_pool!r}")
        img_size = img_size[0] if isinstance(img_size, (tuple, list)) else img_size
        if img_size % 32:
            raise ValueError(f"img_size must be a multiple of 32, got {img_size}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.img_size = img_size
        self.global_pool = global_pool
        self.num_stages = len(depths)
        self.grad_checkpointing = False
        total = sum(depths)
        dpr = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        cur, grid = 0, img_size // 4
        self.feature_info = []
        for i in range(self.num_stages):
            self.add_module(f"patch_embed{i + 1}", PatchEmbed(4 if i == 0 else 2,
                                                              in_chans if i == 0 else embed_dims[i - 1],
                                                              embed_dims[i]))
            n = grid * grid + (1 if i == self.num_stages - 1 else 0)
            setattr(self, f"pos_embed{i + 1}", nn.Parameter(flow.zeros(1, n, embed_dims[i])))
            self.add_module(f"pos_drop{i + 1}", nn.Dropout(p=drop_rate))
            self.add_module(f"block{i + 1}", nn.ModuleList([Block(
                embed_dims[i], num_heads[i], mlp_ratios[i], qkv_bias, drop_rate, attn_drop_rate, dpr[cur + j],
                sr_ratios[i]) for j in range(depths[i])]))
            self.feature_info.append(dict(num_chs=embed_dims[i], reduction=4 * 2 ** i, module=f"block{i + 1}"))
            cur += depths[i]
            grid //= 2
        self.norm = nn.LayerNorm(embed_dims[-1], eps=1e-6)
        self.cls_token = nn.Parameter(flow.zeros(1, 1, embed_dims[-1]))
        self.num_features = self.head_hidden_size = embed_dims[-1]
        self.head = linear_head(embed_dims[-1], num_classes)
        for i in range(self.num_stages):
            trunc_normal_(getattr(self, f"pos_embed{i + 1}"), std=0.02)
        trunc_normal_(self.cls_token, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^cls_token|patch_embed1|pos_embed1", blocks=[(r"^block(\d+)\.(\d+)", None),
                                                                       (r"^(?:patch_embed|pos_embed)(\d+)", None)])

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            if global_pool not in ("token", ""):
                raise ValueError(f"global_pool must be 'token' or '', got {global_pool!r}")
            self.global_pool = global_pool
        self.head = linear_head(self.num_features, num_classes)

    def _stages(self, x, take=(), stop=None):
        check_input_channels(x, self.in_chans)
        if tuple(x.shape[-2:]) != (self.img_size, self.img_size):
            raise ValueError(f"input size ({x.shape[-2]}x{x.shape[-1]}) does not match the model "
                             f"({self.img_size}x{self.img_size}): PVT's position embeddings fix it")
        b = x.shape[0]
        maps = []
        for i in range(self.num_stages if stop is None else stop + 1):
            x, (h, w) = getattr(self, f"patch_embed{i + 1}")(x)
            last = i == self.num_stages - 1
            if last:
                x = flow.cat((self.cls_token.expand(b, -1, -1), x), dim=1)
            x = getattr(self, f"pos_drop{i + 1}")(x + getattr(self, f"pos_embed{i + 1}"))
            x = self.run_blocks([partial(blk, feat_size=(h, w)) for blk in getattr(self, f"block{i + 1}")], x)
            if i in take:
                maps.append((x[:, 1:] if last else x).reshape(b, h, w, -1).permute(0, 3, 1, 2))
            if not last:
                x = x.reshape(b, h, w, -1).permute(0, 3, 1, 2)
        return x, maps

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final tokens, [stage outputs as NCHW maps]) for ``indices`` of the four stages (timm's semantics;
        the last stage's map is its patch tokens, without the class token)."""
        if output_fmt != "NCHW":
            raise ValueError(f"PVT's intermediates are NCHW, got output_fmt={output_fmt!r}")
        take, max_index = feature_take_indices(self.num_stages, indices)
        x, maps = self._stages(x, take, max_index if stop_early else None)
        return maps if intermediates_only else (self.norm(x) if x.ndim == 3 else x, maps)

    def forward_features(self, x):
        return self.norm(self._stages(x)[0])

    def forward_head(self, x, pre_logits=False):
        if self.global_pool == "token":
            x = x[:, 0]
        return x if pre_logits else self.head(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.9,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   fixed_input_size=True, first_conv="patch_embed1.proj", classifier="head", license="apache-2.0"),
            **kwargs}


_DEPTHS = {"pvt_tiny": (2, 2, 2, 2), "pvt_small": (3, 4, 6, 3), "pvt_medium": (3, 4, 18, 3),
           "pvt_large": (3, 8, 27, 3)}
default_cfgs = generate_default_cfgs({n: _cfg() for n in _DEPTHS})


def _pvt(variant, pretrained, kwargs):
    return build_model_with_cfg(PyramidVisionTransformer, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3)),
                                **{"depths": _DEPTHS[variant], **kwargs})


@register_model
def pvt_tiny(pretrained=False, **kwargs):
    """PVT-Tiny."""
    return _pvt("pvt_tiny", pretrained, kwargs)


@register_model
def pvt_small(pretrained=False, **kwargs):
    """PVT-Small."""
    return _pvt("pvt_small", pretrained, kwargs)


@register_model
def pvt_medium(pretrained=False, **kwargs):
    """PVT-Medium."""
    return _pvt("pvt_medium", pretrained, kwargs)


@register_model
def pvt_large(pretrained=False, **kwargs):
    """PVT-Large."""
    return _pvt("pvt_large", pretrained, kwargs)
