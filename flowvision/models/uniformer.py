"""UniFormer (Li et al., "UniFormer: Unifying Convolution and Self-attention for Visual Recognition", arXiv
2201.09450): four stages; the first two use convolutional relation aggregators (local MHRA: a 5x5 depthwise
conv between two 1x1 convs, BatchNorm pre-norm), the last two global self-attention; every block starts with a
3x3 depthwise conv position encoding (DPE).

timm has no UniFormer: parameter names follow the authors' release (``patch_embed1.proj``, ``blocks3.0.attn.qkv``,
``norm``, ``head``) so their checkpoints load unchanged. Sizes from the paper's ImageNet table (S, S+, B, B with
LayerScale); the original flowvision registered ``uniformer_small``, ``uniformer_small_plus``, ``uniformer_base``
and ``uniformer_base_ls``.

Ambiguous paper details and what is implemented: the paper gives S+ ("S†") only as "overlapped convolutional
stem, depths 3-5-9-3"; its head dimension is 32 as in the authors' released S+ model (they later re-trained a
head-dimension-64 variant, not registered in the original zoo); LayerScale (``_ls``) starts at 1e-6 and applies to
the attention stages only; the final norm is a BatchNorm over the last stage's map.
"""
from typing import Optional, Sequence

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.layers import DropPath, Mlp, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import StagedContract, check_mean_pool, linear_head
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["UniFormer"]


class Attention(nn.Module):
    """Global multi-head self-attention over the tokens of a stage."""

    def __init__(self, dim: int, num_heads: int, qkv_bias: bool = True, attn_drop: float = 0.0,
                 proj_drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class CBlock(nn.Module):
    """Convolution block: DPE, then BatchNorm -> 1x1 -> 5x5 depthwise -> 1x1 (local MHRA), then a conv MLP."""

    def __init__(self, dim: int, mlp_ratio: float = 4.0, drop: float = 0.0, drop_path: float = 0.0):
        super().__init__()
        self.pos_embed = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm1 = nn.BatchNorm2d(dim)
        self.conv1 = nn.Conv2d(dim, dim, 1)
        self.conv2 = nn.Conv2d(dim, dim, 1)
        self.attn = nn.Conv2d(dim, dim, 5, padding=2, groups=dim)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.BatchNorm2d(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop, use_conv=True)

    def forward(self, x):
        x = x + self.pos_embed(x)
        x = x + self.drop_path(self.conv2(self.attn(self.conv1(self.norm1(x)))))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class SABlock(nn.Module):
    """Self-attention block: DPE, then LayerNorm -> global MHSA and LayerNorm -> MLP on the flattened tokens."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = True, drop: float = 0.0,
                 attn_drop: float = 0.0, drop_path: float = 0.0, layer_scale: Optional[float] = None):
        super().__init__()
        self.pos_embed = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)
        self.ls = layer_scale is not None
        if self.ls:
            self.gamma_1 = nn.Parameter(layer_scale * flow.ones(dim))
            self.gamma_2 = nn.Parameter(layer_scale * flow.ones(dim))

    def forward(self, x):
        x = x + self.pos_embed(x)
        b, c, h, w = x.shape
        x = x.flatten(2).transpose(1, 2)
        a, m = self.attn, self.mlp
        if self.ls:
            x = x + self.drop_path(self.gamma_1 * a(self.norm1(x)))
            x = x + self.drop_path(self.gamma_2 * m(self.norm2(x)))
        else:
            x = x + self.drop_path(a(self.norm1(x)))
            x = x + self.drop_path(m(self.norm2(x)))
        return x.transpose(1, 2).reshape(b, c, h, w)


class PatchEmbed(nn.Module):
    """Non-overlapping patch conv + LayerNorm over channels (the paper's default stem and downsamplers)."""

    def __init__(self, patch_size: int, in_chans: int, embed_dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(embed_dim)
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)
        b, c, h, w = x.shape
        return self.norm(x.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, h, w)


class ConvEmbed(nn.Module):
    """Overlapped stem of UniFormer-S+: two 3x3/2 convs (stem, with BN and GELU between) or one 3x3/2 conv + BN."""

    def __init__(self, in_chans: int, embed_dim: int, stem: bool):
        super().__init__()
        if stem:
            mid = embed_dim // 2
            self.proj = nn.Sequential(nn.Conv2d(in_chans, mid, 3, 2, 1), nn.BatchNorm2d(mid), nn.GELU(),
                                      nn.Conv2d(mid, embed_dim, 3, 2, 1), nn.BatchNorm2d(embed_dim))
        else:
            self.proj = nn.Sequential(nn.Conv2d(in_chans, embed_dim, 3, 2, 1), nn.BatchNorm2d(embed_dim))

    def forward(self, x):
        return self.proj(x)


class UniFormer(StagedContract, nn.Module):
    """UniFormer image classifier.

    Args:
        depth: blocks per stage (two convolution stages, two attention stages).
        in_chans, num_classes: input channels and classes (0: no head).
        embed_dim: channels per stage. head_dim: channels per attention head.
        mlp_ratio, qkv_bias: MLP expansion and attention bias.
        drop_rate, attn_drop_rate, drop_path_rate: dropout, attention dropout, stochastic depth.
        conv_stem: overlapped convolutional stem and downsamplers (UniFormer-S+).
        layer_scale: LayerScale init for the attention stages (None: off).
        global_pool: 'avg' or ''.
    """
    num_stages = 4

    def __init__(self, depth: Sequence[int] = (3, 4, 8, 3), in_chans: int = 3, num_classes: int = 1000,
                 embed_dim: Sequence[int] = (64, 128, 320, 512), head_dim: int = 64, mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop_rate: float = 0.0, attn_drop_rate: float = 0.0,
                 drop_path_rate: float = 0.0, conv_stem: bool = False, layer_scale: Optional[float] = None,
                 global_pool: str = "avg", img_size=None):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        self.num_features = self.head_hidden_size = embed_dim[-1]
        for i in range(4):
            cin = in_chans if i == 0 else embed_dim[i - 1]
            embed = ConvEmbed(cin, embed_dim[i], stem=i == 0) if conv_stem else \
                PatchEmbed(4 if i == 0 else 2, cin, embed_dim[i])
            self.add_module(f"patch_embed{i + 1}", embed)
        self.pos_drop = nn.Dropout(drop_rate)
        dpr = [drop_path_rate * j / max(sum(depth) - 1, 1) for j in range(sum(depth))]
        cur = 0
        self.feature_info = []
        for i in range(4):
            if i < 2:
                blocks = [CBlock(embed_dim[i], mlp_ratio, drop_rate, dpr[cur + j]) for j in range(depth[i])]
            else:
                blocks = [SABlock(embed_dim[i], embed_dim[i] // head_dim, mlp_ratio, qkv_bias, drop_rate,
                                  attn_drop_rate, dpr[cur + j], layer_scale) for j in range(depth[i])]
            self.add_module(f"blocks{i + 1}", nn.ModuleList(blocks))
            cur += depth[i]
            self.feature_info.append(dict(num_chs=embed_dim[i], reduction=4 * 2 ** i, module=f"blocks{i + 1}"))
        self.norm = nn.BatchNorm2d(embed_dim[-1])
        self.head = linear_head(embed_dim[-1], num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^patch_embed1", blocks=[(r"^blocks(\d+)\.(\d+)", None),
                                                   (r"^patch_embed(\d+)", None), (r"^norm", (99999,))])

    def _stage(self, i: int, x):
        x = getattr(self, f"patch_embed{i + 1}")(x)
        if i == 0:
            x = self.pos_drop(x)
        return self.run_blocks(getattr(self, f"blocks{i + 1}"), x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.9,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="patch_embed1.proj", classifier="head", license="mit"), **kwargs}


default_cfgs = generate_default_cfgs({
    "uniformer_small": _cfg(), "uniformer_small_plus": _cfg(first_conv="patch_embed1.proj.0"),
    "uniformer_base": _cfg(), "uniformer_base_ls": _cfg()})


def _uniformer(variant: str, pretrained: bool, kwargs, **arch):
    return build_model_with_cfg(UniFormer, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3)), **{**arch, **kwargs})


@register_model
def uniformer_small(pretrained: bool = False, **kwargs) -> UniFormer:
    """UniFormer-S: depths 3-4-8-3, channels 64-128-320-512, head dim 64."""
    return _uniformer("uniformer_small", pretrained, kwargs, depth=(3, 4, 8, 3))


@register_model
def uniformer_small_plus(pretrained: bool = False, **kwargs) -> UniFormer:
    """UniFormer-S+ (the paper's S†): overlapped conv stem, depths 3-5-9-3, head dim 32."""
    return _uniformer("uniformer_small_plus", pretrained, kwargs, depth=(3, 5, 9, 3), conv_stem=True, head_dim=32)


@register_model
def uniformer_base(pretrained: bool = False, **kwargs) -> UniFormer:
    """UniFormer-B: depths 5-8-20-7."""
    return _uniformer("uniformer_base", pretrained, kwargs, depth=(5, 8, 20, 7))


@register_model
def uniformer_base_ls(pretrained: bool = False, **kwargs) -> UniFormer:
    """UniFormer-B with LayerScale (init 1e-6) in the attention stages."""
    return _uniformer("uniformer_base_ls", pretrained, kwargs, depth=(5, 8, 20, 7), layer_scale=1e-6)
