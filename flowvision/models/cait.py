"""CaiT: Class-Attention in Image Transformers (Touvron et al., "Going deeper with Image Transformers", 2021).

Self-attention blocks with talking heads and LayerScale over the patch tokens, then class-attention blocks
that only update the class token. timm's names; the original flowvision names ``cait_S24_224`` ... are
aliases of timm's lower-case ones.
"""
from functools import partial

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import ClassAttn, DropPath, Mlp, PatchEmbed, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, classifier_or_none, linear_head
from ._features import collect_intermediates, feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["Cait", "ClassAttn", "TalkingHeadAttn", "LayerScaleBlock", "LayerScaleBlockClassAttn"]


class TalkingHeadAttn(nn.Module):
    """Multi-head self-attention whose logits and weights are mixed across heads (proj_l before the softmax,
    proj_w after it)."""

    def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_l = nn.Linear(num_heads, num_heads)
        self.proj_w = nn.Linear(num_heads, num_heads)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = self.proj_l((q @ k.transpose(-2, -1)).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        attn = self.proj_w(attn.softmax(dim=-1).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        x = (self.attn_drop(attn) @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(x))


class _LayerScaleBase(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=False, proj_drop=0.0, attn_drop=0.0,
                 drop_path=0.0, act_layer=nn.GELU, norm_layer=nn.LayerNorm, attn_block=None, mlp_block=Mlp,
                 init_values=1e-4):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_block(dim, num_heads=num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop,
                               proj_drop=proj_drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = mlp_block(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer,
                             drop=proj_drop)
        self.gamma_1 = nn.Parameter(init_values * flow.ones(dim))
        self.gamma_2 = nn.Parameter(init_values * flow.ones(dim))


class LayerScaleBlock(_LayerScaleBase):
    """Pre-norm transformer block (talking-heads attention) with per-channel LayerScale."""

    def __init__(self, dim, num_heads, attn_block=TalkingHeadAttn, **kwargs):
        super().__init__(dim, num_heads, attn_block=attn_block, **kwargs)

    def forward(self, x):
        x = x + self.drop_path(self.gamma_1 * self.attn(self.norm1(x)))
        return x + self.drop_path(self.gamma_2 * self.mlp(self.norm2(x)))


class LayerScaleBlockClassAttn(_LayerScaleBase):
    """Class-attention block: only the class token is updated, attending over itself and the patch tokens."""

    def __init__(self, dim, num_heads, attn_block=ClassAttn, **kwargs):
        super().__init__(dim, num_heads, attn_block=attn_block, **kwargs)

    def forward(self, x, x_cls):
        u = flow.cat((x_cls, x), dim=1)
        x_cls = x_cls + self.drop_path(self.gamma_1 * self.attn(self.norm1(u)))
        return x_cls + self.drop_path(self.gamma_2 * self.mlp(self.norm2(x_cls)))


class Cait(ClassifierContract, nn.Module):
    """CaiT.

    Args:
        img_size, patch_size, in_chans: input geometry (the position embedding fixes the input size).
        num_classes, global_pool: classes (0: no head), 'token' (class token), 'avg' (patch tokens) or ''.
        embed_dim, depth, num_heads, mlp_ratio, qkv_bias: the self-attention stage.
        drop_rate, pos_drop_rate, proj_drop_rate, attn_drop_rate, drop_path_rate: dropouts / stochastic depth.
        init_values: LayerScale initial value.
        depth_token_only, mlp_ratio_token_only: the class-attention stage.
    """
    accepts_img_size = True
    no_weight_decay_names = {"pos_embed", "cls_token"}

    def __init__(self, img_size=224, patch_size=16, in_chans=3, num_classes=1000, global_pool="token",
                 embed_dim=768, depth=12, num_heads=12, mlp_ratio=4.0, qkv_bias=True, drop_rate=0.0,
                 pos_drop_rate=0.0, proj_drop_rate=0.0, attn_drop_rate=0.0, drop_path_rate=0.0,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), act_layer=nn.GELU, init_values=1e-4,
                 depth_token_only=2, mlp_ratio_token_only=4.0):
        super().__init__()
        if global_pool not in ("", "token", "avg"):
            raise ValueError(f"global_pool must be '', 'token' or 'avg', got {global_pool!r}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = global_pool
        self.num_features = self.head_hidden_size = self.embed_dim = embed_dim
        self.grad_checkpointing = False
        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
                                      embed_dim=embed_dim)
        self.cls_token = nn.Parameter(flow.zeros(1, 1, embed_dim))
        self.num_prefix_tokens = 1
        self.pos_embed = nn.Parameter(flow.zeros(1, self.patch_embed.num_patches, embed_dim))
        self.pos_drop = nn.Dropout(p=pos_drop_rate)
        common = dict(num_heads=num_heads, qkv_bias=qkv_bias, norm_layer=norm_layer, act_layer=act_layer,
                      init_values=init_values)
        self.blocks = nn.Sequential(*[LayerScaleBlock(
            embed_dim, mlp_ratio=mlp_ratio, proj_drop=proj_drop_rate, attn_drop=attn_drop_rate,
            drop_path=drop_path_rate, **common) for _ in range(depth)])
        r = self.patch_embed.patch_size[0]
        self.feature_info = [dict(num_chs=embed_dim, reduction=r, module=f"blocks.{i}") for i in range(depth)]
        self.blocks_token_only = nn.ModuleList([LayerScaleBlockClassAttn(
            embed_dim, mlp_ratio=mlp_ratio_token_only, **common) for _ in range(depth_token_only)])
        self.norm = norm_layer(embed_dim)
        self.head_drop = nn.Dropout(drop_rate)
        self.head = linear_head(embed_dim, num_classes)
        trunc_normal_(self.pos_embed, std=0.02)
        trunc_normal_(self.cls_token, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse=False):
        n_blocks, n_tok = len(self.blocks), len(self.blocks_token_only or [])

        def _matcher(name):
            if name.startswith(("cls_token", "pos_embed", "patch_embed")):
                return 0
            if name.startswith("blocks."):
                return int(name.split(".")[1]) + 1
            if name.startswith("blocks_token_only."):
                return int(name.split(".")[1]) + n_blocks - n_tok + 1
            if name.startswith("norm."):
                return n_blocks
            return float("inf")
        return _matcher

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            if global_pool not in ("", "token", "avg"):
                raise ValueError(f"global_pool must be '', 'token' or 'avg', got {global_pool!r}")
            if global_pool == "token" and not self.num_prefix_tokens:
                raise ValueError("token pooling needs the class token (pruned from this model)")
            self.global_pool = global_pool
        self.head = linear_head(self.num_features, num_classes)

    def _embed(self, x):
        return self.pos_drop(self.patch_embed(x) + self.pos_embed)

    def forward_cls(self, x):
        """The class token through the class-attention blocks, prepended to the patch tokens."""
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        for blk in self.blocks_token_only:
            cls_tokens = blk(x, cls_tokens)
        return flow.cat((cls_tokens, x), dim=1)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final tokens, [block outputs]) for ``indices`` of the self-attention blocks (timm's semantics)."""
        if output_fmt not in ("NCHW", "NLC"):
            raise ValueError(f"output_fmt must be 'NCHW' or 'NLC', got {output_fmt!r}")
        b, _, height, width = x.shape
        x, intermediates = collect_intermediates(self.blocks, self._embed(x), indices, stop_early,
                                                 self.norm if norm else None)
        if output_fmt == "NCHW":
            ph, pw = self.patch_embed.patch_size
            intermediates = [y.reshape(b, height // ph, width // pw, -1).permute(0, 3, 1, 2).contiguous()
                             for y in intermediates]
        if intermediates_only:
            return intermediates
        if self.blocks_token_only is not None:
            x = self.forward_cls(x)
        return self.norm(x), intermediates

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        """Drop the blocks after the last of ``indices`` (the final norm, class stage and head on request)."""
        take, max_index = feature_take_indices(len(self.blocks), indices)
        self.blocks = self.blocks[:max_index + 1]
        if prune_norm:
            self.norm = nn.Identity()
        if prune_head:
            self.blocks_token_only = None
            self.cls_token = None
            self.num_prefix_tokens = 0
            self.reset_classifier(0, "")
        return take

    def forward_features(self, x):
        x = self.run_blocks(self.blocks, self._embed(x))
        if self.blocks_token_only is not None:
            x = self.forward_cls(x)
        return self.norm(x)

    def forward_head(self, x, pre_logits=False):
        if self.global_pool:
            x = x[:, self.num_prefix_tokens:].mean(dim=1) if self.global_pool == "avg" else x[:, 0]
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)


def _filter(state_dict, model=None):
    state_dict = state_dict.get("model", state_dict)
    return {k.replace("module.", ""): v for k, v in state_dict.items()}


def _cfg(file, **kwargs):
    return {**dict(num_classes=1000, input_size=(3, 384, 384), pool_size=None, crop_pct=1.0,
                   interpolation="bicubic", fixed_input_size=True, mean=IMAGENET_DEFAULT_MEAN,
                   std=IMAGENET_DEFAULT_STD, first_conv="patch_embed.proj", classifier="head",
                   license="apache-2.0", hf_hub_id="timm/", url=f"https://dl.fbaipublicfiles.com/deit/{file}.pth"),
            **kwargs}


_224 = dict(input_size=(3, 224, 224))
default_cfgs = generate_default_cfgs({
    "cait_xxs24_224.fb_dist_in1k": _cfg("XXS24_224", **_224),
    "cait_xxs24_384.fb_dist_in1k": _cfg("XXS24_384"),
    "cait_xxs36_224.fb_dist_in1k": _cfg("XXS36_224", **_224),
    "cait_xxs36_384.fb_dist_in1k": _cfg("XXS36_384"),
    "cait_xs24_384.fb_dist_in1k": _cfg("XS24_384"),
    "cait_s24_224.fb_dist_in1k": _cfg("S24_224", **_224),
    "cait_s24_384.fb_dist_in1k": _cfg("S24_384"),
    "cait_s36_384.fb_dist_in1k": _cfg("S36_384"),
    "cait_m36_384.fb_dist_in1k": _cfg("M36_384"),
    "cait_m48_448.fb_dist_in1k": _cfg("M48_448", input_size=(3, 448, 448)),
})


def _cait(variant, pretrained, kwargs, embed_dim, depth, num_heads, init_values):
    args = dict(patch_size=16, embed_dim=embed_dim, depth=depth, num_heads=num_heads, init_values=init_values)
    out_indices = kwargs.pop("out_indices", 3)
    return build_model_with_cfg(Cait, variant, pretrained, pretrained_filter_fn=_filter,
                                feature_cfg=dict(out_indices=out_indices, feature_cls="getter"),
                                **{**args, **kwargs})


@register_model
def cait_xxs24_224(pretrained=False, **kwargs):
    """CaiT-XXS24, 224x224."""
    return _cait("cait_xxs24_224", pretrained, kwargs, 192, 24, 4, 1e-5)


@register_model
def cait_xxs24_384(pretrained=False, **kwargs):
    """CaiT-XXS24, 384x384."""
    return _cait("cait_xxs24_384", pretrained, kwargs, 192, 24, 4, 1e-5)


@register_model
def cait_xxs36_224(pretrained=False, **kwargs):
    """CaiT-XXS36, 224x224."""
    return _cait("cait_xxs36_224", pretrained, kwargs, 192, 36, 4, 1e-5)


@register_model
def cait_xxs36_384(pretrained=False, **kwargs):
    """CaiT-XXS36, 384x384."""
    return _cait("cait_xxs36_384", pretrained, kwargs, 192, 36, 4, 1e-5)


@register_model
def cait_xs24_384(pretrained=False, **kwargs):
    """CaiT-XS24, 384x384."""
    return _cait("cait_xs24_384", pretrained, kwargs, 288, 24, 6, 1e-5)


@register_model
def cait_s24_224(pretrained=False, **kwargs):
    """CaiT-S24, 224x224."""
    return _cait("cait_s24_224", pretrained, kwargs, 384, 24, 8, 1e-5)


@register_model
def cait_s24_384(pretrained=False, **kwargs):
    """CaiT-S24, 384x384."""
    return _cait("cait_s24_384", pretrained, kwargs, 384, 24, 8, 1e-5)


@register_model
def cait_s36_384(pretrained=False, **kwargs):
    """CaiT-S36, 384x384."""
    return _cait("cait_s36_384", pretrained, kwargs, 384, 36, 8, 1e-6)


@register_model
def cait_m36_384(pretrained=False, **kwargs):
    """CaiT-M36, 384x384."""
    return _cait("cait_m36_384", pretrained, kwargs, 768, 36, 16, 1e-6)


@register_model
def cait_m48_448(pretrained=False, **kwargs):
    """CaiT-M48, 448x448."""
    return _cait("cait_m48_448", pretrained, kwargs, 768, 48, 16, 1e-6)


for _orig in ("cait_XS24_384", "cait_S24_224", "cait_S24_384", "cait_S36_384", "cait_M36_384", "cait_M48_448"):
    register_model_alias(_orig, _orig.lower())
