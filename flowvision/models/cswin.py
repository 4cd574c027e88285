"""CSWin Transformer (Dong et al., "CSWin Transformer: A General Vision Transformer Backbone with Cross-Shaped
Windows", CVPR 2022, arXiv 2107.00652).

Each block splits the heads in two halves: one attends within horizontal stripes, the other within vertical
stripes of width ``split_size`` (together a cross-shaped window); the last stage (stripe width = map size) attends
globally with all heads. Locally-enhanced positional encoding (LePE): a 3x3 depthwise conv over V inside each
stripe is added to the attention output. Convolutional stem (7x7/4) and 3x3/2 conv merges between stages.

timm has no CSWin: parameter names follow the authors' release (``stage1_conv_embed.0``, ``stage3.5.attns.0.get_v``,
``merge2.conv``, ``norm``, ``head``) so their checkpoints load unchanged. Sizes from the paper's Table 1
(architecture variants: channels, heads, depths, stripe widths 1-2-7-7, 1-2-12-12 at 384).

Ambiguous paper details and what is implemented: stripes are computed from the actual input size (the authors'
code fixes the resolution at construction); the input must make every stage's map divisible by its stripe
width (a clear error otherwise). A block switches to the single full-window branch when the stripe width equals
the map size (stage 4), as in the authors' code. The classifier averages the tokens after the final LayerNorm.
"""
from typing import Sequence

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.layers import DropPath, Mlp, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import StagedContract, check_mean_pool, linear_head
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["CSWinTransformer"]


class LePEAttention(nn.Module):
    """Attention inside stripes of one orientation (``idx`` 0: full height x ``split_size`` wide, 1: the
    transpose, -1: the whole map) with the LePE depthwise conv over V."""

    def __init__(self, dim: int, idx: int, split_size: int, num_heads: int, attn_drop: float = 0.0):
        super().__init__()
        self.idx = idx
        self.split_size = split_size
        self.num_heads = num_heads
        self.get_v = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)
        self.attn_drop = nn.Dropout(attn_drop)

    def _window(self, h: int, w: int):
        if self.idx == -1:
            return h, w
        return (h, self.split_size) if self.idx == 0 else (self.split_size, w)

    def forward(self, q, k, v):
        """q, k, v: (B, H, W, C) -> (B, H, W, C)."""
        b, h, w, c = q.shape
        hs, ws = self._window(h, w)
        if h % hs or w % ws:
            raise ValueError(f"CSWin: a {h}x{w} token map does not split into {hs}x{ws} stripes; use an input "
                             "size whose stage maps are multiples of the stripe widths (e.g. 224 or 384)")
        nh, d = self.num_heads, c // self.num_heads

        def windows(t):  # (B, H, W, C) -> (B * nW, Hs * Ws, C)
            return t.reshape(b, h // hs, hs, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, hs * ws, c)

        def heads(t):  # (B', N, C) -> (B', nh, N, d)
            return t.reshape(t.shape[0], hs * ws, nh, d).permute(0, 2, 1, 3)

        vw = windows(v)
        lepe = self.get_v(vw.transpose(1, 2).reshape(-1, c, hs, ws))
        lepe = lepe.reshape(-1, nh, d, hs * ws).permute(0, 1, 3, 2)
        x = F.scaled_dot_product_attention(heads(windows(q)), heads(windows(k)), heads(vw),
                                           dropout_p=self.attn_drop.p if self.training else 0.0) + lepe
        x = x.permute(0, 2, 1, 3).reshape(b, h // hs, w // ws, hs, ws, c)
        return x.permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)


class CSWinBlock(nn.Module):
    """LayerNorm -> cross-shaped window attention (two half-head branches, or one full branch) -> proj, then an
    MLP; (B, H, W, C) in and out."""

    def __init__(self, dim: int, num_heads: int, split_size: int, last_stage: bool, mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop: float = 0.0, attn_drop: float = 0.0, drop_path: float = 0.0):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.norm1 = nn.LayerNorm(dim)
        self.branch_num = 1 if last_stage else 2
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(drop)
        if last_stage:
            self.attns = nn.ModuleList([LePEAttention(dim, -1, split_size, num_heads, attn_drop)])
        else:
            self.attns = nn.ModuleList([LePEAttention(dim // 2, i, split_size, num_heads // 2, attn_drop)
                                        for i in range(2)])
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x):
        c = x.shape[-1]
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        if self.branch_num == 2:
            half = c // 2
            att = flow.cat([self.attns[0](q[..., :half], k[..., :half], v[..., :half]),
                            self.attns[1](q[..., half:], k[..., half:], v[..., half:])], dim=-1)
        else:
            att = self.attns[0](q, k, v)
        x = x + self.drop_path(self.proj_drop(self.proj(att)))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class ToTokens(nn.Module):
    """(B, C, H, W) -> (B, H, W, C) (the position of the authors' Rearrange in ``stage1_conv_embed``)."""

    def forward(self, x):
        return x.permute(0, 2, 3, 1)


class MergeBlock(nn.Module):
    """3x3/2 conv between stages + LayerNorm; (B, H, W, C) in and out."""

    def __init__(self, dim: int, dim_out: int):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim_out, 3, 2, 1)
        self.norm = nn.LayerNorm(dim_out)

    def forward(self, x):
        return self.norm(self.conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1))


class CSWinTransformer(StagedContract, nn.Module):
    """CSWin Transformer image classifier.

    Args:
        in_chans, num_classes: input channels and classes (0: no head).
        embed_dim: stage-1 channels (doubled at every merge). depth, num_heads, split_size: per stage.
        mlp_ratio, qkv_bias: MLP expansion and attention bias.
        drop_rate, attn_drop_rate, drop_path_rate: dropout, attention dropout, stochastic depth.
        img_size: the size the stage-4 full-window rule is decided at (224 or 384 in the paper).
        global_pool: 'avg' or ''.
    """
    num_stages, tokens_last, pool_dims = 4, True, (1, 2)  # stages output (B, H, W, C) tokens

    def __init__(self, img_size: int = 224, in_chans: int = 3, num_classes: int = 1000, embed_dim: int = 96,
                 depth: Sequence[int] = (2, 2, 6, 2), split_size: Sequence[int] = (3, 5, 7, 7),
                 num_heads: Sequence[int] = (4, 8, 16, 32), mlp_ratio: float = 4.0, qkv_bias: bool = True,
                 drop_rate: float = 0.0, attn_drop_rate: float = 0.0, drop_path_rate: float = 0.0,
                 global_pool: str = "avg"):
        super().__init__()
        img_size = img_size[0] if isinstance(img_size, (tuple, list)) else img_size
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        self.stage1_conv_embed = nn.Sequential(nn.Conv2d(in_chans, embed_dim, 7, 4, 2), ToTokens(),
                                               nn.LayerNorm(embed_dim))
        dpr = [drop_path_rate * j / max(sum(depth) - 1, 1) for j in range(sum(depth))]
        dims = [embed_dim * 2 ** i for i in range(4)]
        cur = 0
        self.feature_info = []
        for i in range(4):
            if i > 0:
                self.add_module(f"merge{i}", MergeBlock(dims[i - 1], dims[i]))
            reso = img_size // (4 * 2 ** i)
            last = i == 3 or reso == split_size[i]
            self.add_module(f"stage{i + 1}", nn.ModuleList([
                CSWinBlock(dims[i], num_heads[i], split_size[i], last, mlp_ratio, qkv_bias, drop_rate,
                           attn_drop_rate, dpr[cur + j]) for j in range(depth[i])]))
            cur += depth[i]
            self.feature_info.append(dict(num_chs=dims[i], reduction=4 * 2 ** i, module=f"stage{i + 1}"))
        self.num_features = self.head_hidden_size = dims[-1]
        self.norm = nn.LayerNorm(dims[-1])
        self.head = linear_head(dims[-1], num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^stage1_conv_embed", blocks=[(r"^stage(\d+)\.(\d+)", None), (r"^merge(\d+)", None),
                                                        (r"^norm", (99999,))])

    def _stage(self, i: int, x):
        x = self.stage1_conv_embed(x) if i == 0 else getattr(self, f"merge{i}")(x)
        return self.run_blocks(getattr(self, f"stage{i + 1}"), x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.9,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stage1_conv_embed.0", classifier="head", license="mit"), **kwargs}


default_cfgs = generate_default_cfgs({
    "cswin_tiny_224": _cfg(), "cswin_small_224": _cfg(), "cswin_base_224": _cfg(), "cswin_large_224": _cfg(),
    "cswin_base_384": _cfg(input_size=(3, 384, 384), crop_pct=1.0),
    "cswin_large_384": _cfg(input_size=(3, 384, 384), crop_pct=1.0)})


def _cswin(variant: str, pretrained: bool, kwargs, **arch):
    return build_model_with_cfg(CSWinTransformer, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3)), **{**arch, **kwargs})


# Table 1 of the paper: (channels C, depths, heads); stripe widths 1-2-7-7 at 224, 1-2-12-12 at 384
_S224, _S384 = (1, 2, 7, 7), (1, 2, 12, 12)


@register_model
def cswin_tiny_224(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-T: C=64, depths 1-2-21-1, heads 2-4-8-16."""
    return _cswin("cswin_tiny_224", pretrained, kwargs, embed_dim=64, depth=(1, 2, 21, 1), num_heads=(2, 4, 8, 16),
                  split_size=_S224)


@register_model
def cswin_small_224(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-S: C=64, depths 2-4-32-2, heads 2-4-8-16."""
    return _cswin("cswin_small_224", pretrained, kwargs, embed_dim=64, depth=(2, 4, 32, 2),
                  num_heads=(2, 4, 8, 16), split_size=_S224)


@register_model
def cswin_base_224(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-B: C=96, depths 2-4-32-2, heads 4-8-16-32."""
    return _cswin("cswin_base_224", pretrained, kwargs, embed_dim=96, depth=(2, 4, 32, 2),
                  num_heads=(4, 8, 16, 32), split_size=_S224)


@register_model
def cswin_large_224(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-L: C=144, depths 2-4-32-2, heads 6-12-24-24."""
    return _cswin("cswin_large_224", pretrained, kwargs, embed_dim=144, depth=(2, 4, 32, 2),
                  num_heads=(6, 12, 24, 24), split_size=_S224)


@register_model
def cswin_base_384(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-B at 384x384 (stripe widths 1-2-12-12)."""
    return _cswin("cswin_base_384", pretrained, kwargs, img_size=384, embed_dim=96, depth=(2, 4, 32, 2),
                  num_heads=(4, 8, 16, 32), split_size=_S384)


@register_model
def cswin_large_384(pretrained: bool = False, **kwargs) -> CSWinTransformer:
    """CSWin-L at 384x384 (stripe widths 1-2-12-12)."""
    return _cswin("cswin_large_384", pretrained, kwargs, img_size=384, embed_dim=144, depth=(2, 4, 32, 2),
                  num_heads=(6, 12, 24, 24), split_size=_S384)
