"""RegionViT (Chen et al., "RegionViT: Regional-to-Local Attention for Vision Transformers", ICLR 2022, arXiv
2106.02689).

Two token sets: regional tokens (one per 28x28-pixel region, from a 28x28/28 patch conv) and local tokens (one per
4x4 patch). Each block first lets the regional tokens attend to each other (regional self-attention), then every
region's regional token attends together with its 7x7 (or 14x14) local tokens (local self-attention with a
learned relative position bias between local tokens), then an MLP. Stages downsample both sets with the same
LayerNorm2d -> GELU -> 3x3/2 depthwise conv; the classifier averages the normalised regional tokens.

timm has no RegionViT: parameter names follow the authors' release (``patch_embed.proj``, ``cls_token.proj``,
``layers.2.block.3.attn.rel_pos``, ``layers.1.block.0.proj``, ``norm``, ``head``) so their checkpoints load
unchanged. Sizes from the paper's Table 1 (Ti/S/M/B) and the authors' configs for the window-14 (``_w14``) and
position-encoding-generator (``_peg``) variants.

Ambiguous paper details and what is implemented: the stem is three 3x3 convs for Ti/S and one 8x8/4 conv for
M/B (the authors' configs; the paper's table lists only "conv"); the relative position index reproduces the
authors' one exactly, including its wrap-around of negative offsets, so their checkpoints give their outputs;
the PEG (a 3x3 depthwise conv) is applied once, after the first transformer block of each stage, to both token
sets, as in the authors' code. Inputs whose stage maps do not split into whole regions are refused with a clear
error (the authors pad and mask; the paper's models are defined at 224).
"""
from functools import partial
from typing import List, Optional, Sequence, Union

import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.backend.utils.checkpoint import checkpoint
from flowvision.layers import DropPath, Mlp, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import MeanPoolContract, check_input_channels, check_mean_pool, linear_head
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["RegionViT"]


class LayerNorm2d(nn.Module):
    """LayerNorm over the channels of a (B, C, H, W) map, weights shaped (1, C, 1, 1) as in the authors' code."""

    def __init__(self, channels: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(flow.ones(1, channels, 1, 1))
        self.bias = nn.Parameter(flow.zeros(1, channels, 1, 1))

    def forward(self, x):
        c = x.shape[1]
        x = F.layer_norm(x.permute(0, 2, 3, 1), (c,), self.weight.reshape(c), self.bias.reshape(c), self.eps)
        return x.permute(0, 3, 1, 2)


def _rel_pos_index(ws: int) -> np.ndarray:
    """(ws*ws, ws*ws) indices into the (2ws-1)^2 table; offsets are shifted by ws//2 and wrap around (the
    authors' indexing, kept so their trained biases land where they were learned)."""
    r = 2 * ws - 1
    y, x = np.divmod(np.arange(ws * ws), ws)
    dy = (y[None, :] - y[:, None] + ws // 2) % r
    dx = (x[None, :] - x[:, None] + ws // 2) % r
    return (dy * r + dx).astype(np.int64)


class AttentionWithRelPos(nn.Module):
    """Multi-head self-attention; with ``patch_attn`` a learned relative bias is added between the local tokens
    (every token but the first, the region's regional token)."""

    def __init__(self, dim: int, num_heads: int, window: int, qkv_bias: bool = True, attn_drop: float = 0.0,
                 proj_drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.rel_pos = nn.Parameter(flow.zeros(num_heads, (2 * window - 1) ** 2))
        trunc_normal_(self.rel_pos, std=0.02)
        # bias layout for (1 + ws^2) tokens: the regional token's row and column get no bias
        idx = _rel_pos_index(window)
        n = window * window + 1
        full = np.full((n, n), (2 * window - 1) ** 2, dtype=np.int64)  # points at an appended zero
        full[1:, 1:] = idx
        self.register_buffer("rel_pos_index", flow.from_numpy(full.reshape(-1)), persistent=False)
        self.window_tokens = n

    def forward(self, x, patch_attn: bool = False, keep=None):
        """``keep``: (B', 1, N, N) bool, False where a padded region's score is replaced by the dtype's minimum
        before the softmax (the authors' masking of padded local tokens)."""
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4).unbind(0)
        bias = None
        if patch_attn:
            if n != self.window_tokens:
                raise ValueError(f"RegionViT: {n - 1} local tokens per region, the model's window has "
                                 f"{self.window_tokens - 1}")
            table = flow.cat([self.rel_pos, flow.zeros(self.num_heads, 1, dtype=self.rel_pos.dtype)], dim=1)
            bias = table[:, self.rel_pos_index].reshape(1, self.num_heads, n, n)
        drop = self.attn_drop.p if self.training else 0.0
        if keep is None:
            x = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=drop)
        else:  # replace, not add: fully masked rows must become uniform as in the authors' masked_fill
            attn = (q @ k.transpose(-2, -1)) * (c // self.num_heads) ** -0.5
            if bias is not None:
                attn = attn + bias
            attn = flow.where(keep, attn, flow.full_like(attn, float(np.finfo(np.float32).min)))
            x = self.attn_drop(attn.softmax(dim=-1)) @ v
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class R2LAttentionPlusFFN(nn.Module):
    """Regional self-attention, then regional-to-local attention per region, then the MLP.

    Input and output: (B * regions, 1 + ws*ws, C), the regional token first in each row.
    """

    def __init__(self, dim: int, window: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = True,
                 drop_path: float = 0.0, attn_drop: float = 0.0, drop: float = 0.0):
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-6)
        self.norm0 = norm(dim)
        self.norm1 = norm(dim)
        self.attn = AttentionWithRelPos(dim, num_heads, window, qkv_bias, attn_drop, drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, out, batch: int, keep=None):
        c = out.shape[-1]
        cls = out[:, 0:1].reshape(batch, -1, c)
        cls = cls + self.drop_path(self.attn(self.norm0(cls)))
        out = flow.cat([cls.reshape(-1, 1, c), out[:, 1:]], dim=1)
        out = out + self.drop_path(self.attn(self.norm1(out), patch_attn=True, keep=keep))
        return out + self.drop_path(self.mlp(self.norm2(out)))


class Projection(nn.Module):
    """The downsampling shared by both token sets (the same module serves as ``proj`` and ``proj_cls``):
    'c' keeps the size (identity when the channels do not change), 'sc' is LayerNorm2d -> GELU -> 3x3/2
    depthwise conv to the new channels."""

    def __init__(self, cin: int, cout: int, mode: str):
        super().__init__()
        if "s" in mode:
            self.proj = nn.Sequential(LayerNorm2d(cin), nn.GELU(), nn.Conv2d(cin, cout, 3, 2, 1, groups=cin))
        elif cin == cout:
            self.proj = nn.Sequential(nn.Identity())
        else:
            self.proj = nn.Sequential(LayerNorm2d(cin), nn.GELU(), nn.Conv2d(cin, cout, 1, 1, 0, groups=cin))
        self.proj_cls = self.proj

    def forward(self, cls, x):
        return self.proj_cls(cls), self.proj(x)


class ConvAttBlock(nn.Module):
    """One stage: the projection (``block.0``) then the R2L transformer blocks (``block.1`` ...)."""

    def __init__(self, cin: int, cout: int, window: int, depth: int, num_heads: int, mlp_ratio: float,
                 qkv_bias: bool, pool: str, drop_path: Sequence[float], attn_drop: float, drop: float, peg: bool):
        super().__init__()
        self.block = nn.ModuleList([Projection(cin, cout, pool)] + [
            R2LAttentionPlusFFN(cout, window, num_heads, mlp_ratio, qkv_bias, drop_path[i], attn_drop, drop)
            for i in range(depth)])
        self.window = window
        self.peg = nn.Conv2d(cout, cout, 3, padding=1, groups=cout, bias=False) if peg else None

    def _flatten(self, cls, x):
        """(regional (B, C, hr, wr), local (B, C, H, W)) -> (B*hr*wr, 1 + ws*ws, C) and the padding mask
        (None when the local map is exactly hr*ws x wr*ws; else it is zero-padded at the bottom/right)."""
        b, c, h, w = x.shape
        hr, wr = cls.shape[2:]
        ws = self.window
        p_b, p_r = hr * ws - h, wr * ws - w
        if p_b < 0 or p_r < 0 or p_b >= ws or p_r >= ws:
            raise ValueError(f"RegionViT: a {h}x{w} local-token map does not fit {hr}x{wr} regions of {ws}x{ws}; "
                             "use the input size the model was defined at (224)")
        keep = None
        if p_b or p_r:
            x = F.pad(x, (0, p_r, 0, p_b))
            keep = flow.from_numpy(_pad_keep(hr, wr, ws, p_r, p_b)).repeat(b, 1, 1).unsqueeze(1)
        local = x.reshape(b, c, hr, ws, wr, ws).permute(0, 2, 4, 3, 5, 1).reshape(b * hr * wr, ws * ws, c)
        return flow.cat([cls.flatten(2).transpose(1, 2).reshape(-1, 1, c), local], dim=1), keep

    def _spatial(self, out, b, hr, wr, h, w):
        ws, c = self.window, out.shape[-1]
        cls = out[:, 0].reshape(b, hr, wr, c).permute(0, 3, 1, 2)
        x = out[:, 1:].reshape(b, hr, wr, ws, ws, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, hr * ws, wr * ws)
        return cls, x[:, :, :h, :w]

    def forward(self, cls, x, grad_checkpointing: bool = False):
        cls, x = self.block[0](cls, x)
        b, hr, wr, h, w = x.shape[0], cls.shape[2], cls.shape[3], x.shape[2], x.shape[3]
        out, keep = self._flatten(cls, x)
        for i in range(1, len(self.block)):
            blk = self.block[i]
            out = checkpoint(blk, out, b, keep) if grad_checkpointing else blk(out, b, keep)
            if self.peg is not None and i == 1:
                cls, x = self._spatial(out, b, hr, wr, h, w)
                out, keep = self._flatten(cls + self.peg(cls), x + self.peg(x))
        return self._spatial(out, b, hr, wr, h, w)


def _pad_keep(hr: int, wr: int, ws: int, p_r: int, p_b: int) -> np.ndarray:
    """(hr*wr, 1 + ws*ws, 1 + ws*ws) bool: which scores of each region survive when its local tokens were padded
    by ``p_r`` columns / ``p_b`` rows. Reproduces the authors' mask: regions in the right column keep pairs of
    unpadded columns; regions in the bottom row keep the unpadded rows; the bottom-right region keeps the union
    of both rules (which lets the unpadded rows see padded columns)."""
    n = ws * ws + 1
    col_ok = np.tile(np.arange(ws) < ws - p_r, ws)
    right = np.zeros((n, n), bool)
    right[0, 0] = True
    right[0, 1:] = right[1:, 0] = col_ok
    right[1:, 1:] = col_ok[:, None] & col_ok[None, :]
    k = ws * (ws - p_b) + 1
    bottom = np.zeros((n, n), bool)
    bottom[:k, :k] = True
    bottom_right = right.copy()
    bottom_right[:k, :k] = True
    keep = np.ones((hr * wr, n, n), bool)
    keep[wr - 1:(hr - 1) * wr:wr] = right
    keep[(hr - 1) * wr:] = bottom
    keep[-1] = bottom_right
    return keep


class PatchEmbed(nn.Module):
    """Local-token stem ('3conv': three 3x3 convs with LayerNorm2d+GELU, '1conv': one 8x8/4 conv) or, as
    ``cls_token``, the regional-token stem ('linear': a patch conv)."""

    def __init__(self, patch_size: int, in_chans: int, embed_dim: int, kind: str):
        super().__init__()
        self.patch_size = patch_size
        if kind == "3conv":
            self.proj = nn.Sequential(
                nn.Conv2d(in_chans, embed_dim // 4, 3, 2, 1), LayerNorm2d(embed_dim // 4), nn.GELU(),
                nn.Conv2d(embed_dim // 4, embed_dim // 2, 3, 2, 1), LayerNorm2d(embed_dim // 2), nn.GELU(),
                nn.Conv2d(embed_dim // 2, embed_dim, 3, 1, 1))
        elif kind == "1conv":
            self.proj = nn.Conv2d(in_chans, embed_dim, 2 * patch_size, patch_size, patch_size - 1)
        else:
            self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, patch_size)

    def forward(self, x):
        return self.proj(x)


class RegionViT(MeanPoolContract, nn.Module):
    """RegionViT image classifier.

    Args:
        patch_size: local-token patch size (4). in_chans, num_classes: as usual (0 classes: no head).
        embed_dim: stem channels followed by the four stages' channels. depth, num_heads: per stage.
        window: local tokens per region side (7, or 14 for the ``_w14`` models).
        patch_conv_type: '3conv' or '1conv' stem. downsampling: per-stage projection modes.
        peg: add the position encoding generator. mlp_ratio, qkv_bias, drop_rate, attn_drop_rate,
        drop_path_rate: as in ViT. global_pool: 'avg' or ''.
    """
    pool_dims = (1,)  # the mean over the regional tokens

    def __init__(self, patch_size: int = 4, in_chans: int = 3, num_classes: int = 1000,
                 embed_dim: Sequence[int] = (96, 96, 192, 384, 768), depth: Sequence[int] = (2, 2, 8, 2),
                 num_heads: Sequence[int] = (3, 6, 12, 24), window: int = 7, patch_conv_type: str = "3conv",
                 downsampling: Sequence[str] = ("c", "sc", "sc", "sc"), peg: bool = False, mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop_rate: float = 0.0, attn_drop_rate: float = 0.0,
                 drop_path_rate: float = 0.0, global_pool: str = "avg", img_size=None):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        self.patch_embed = PatchEmbed(patch_size, in_chans, embed_dim[0], patch_conv_type)
        self.cls_token = PatchEmbed(patch_size * window, in_chans, embed_dim[0], "linear")
        self.pos_drop = nn.Dropout(drop_rate)
        dpr = [drop_path_rate * j / max(sum(depth) - 1, 1) for j in range(sum(depth))]
        self.layers = nn.ModuleList()
        self.feature_info = []
        for i in range(len(depth)):
            start = sum(depth[:i])
            self.layers.append(ConvAttBlock(embed_dim[i], embed_dim[i + 1], window, depth[i], num_heads[i], mlp_ratio,
                                            qkv_bias, downsampling[i], dpr[start:start + depth[i]], attn_drop_rate,
                                            drop_rate, peg))
            self.feature_info.append(dict(num_chs=embed_dim[i + 1], reduction=patch_size * 2 ** i,
                                          module=f"layers.{i}"))
        self.num_features = self.head_hidden_size = embed_dim[-1]
        self.norm = nn.LayerNorm(embed_dim[-1], eps=1e-6)
        self.head = linear_head(embed_dim[-1], num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^(?:patch_embed|cls_token)", blocks=[(r"^layers\.(\d+)\.block\.(\d+)", None),
                                                                (r"^layers\.(\d+)\.peg", None),
                                                                (r"^norm", (99999,))])

    def _run(self, x, last: int, take=()):
        """Stages 0..last; returns (regional tokens (B, C, h, w), [local-token maps of the stages in ``take``])."""
        cls = self.cls_token(x)
        x = self.pos_drop(self.patch_embed(x))
        ckpt = self.grad_checkpointing and self.training
        outs = []
        for i in range(last + 1):
            cls, x = self.layers[i](cls, x, grad_checkpointing=ckpt)
            if i in take:
                outs.append(x)
        return cls, outs

    def forward_intermediates(self, x, indices: Optional[Union[int, List[int]]] = None, norm: bool = False,
                              stop_early: bool = False, output_fmt: str = "NCHW",
                              intermediates_only: bool = False):
        """(final features, [local-token maps, NCHW]) for ``indices`` of the four stages."""
        if output_fmt != "NCHW":
            raise ValueError(f"RegionViT's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        n = len(self.layers)
        take, max_index = feature_take_indices(n, indices)
        last = max_index if stop_early else n - 1
        cls, outs = self._run(x, last, take)
        if intermediates_only:
            return outs
        return (self.norm(cls.flatten(2).transpose(1, 2)) if last == n - 1 else cls), outs

    def forward_features(self, x):
        """(B, regions, C): the last stage's regional tokens after the final LayerNorm."""
        check_input_channels(x, self.in_chans)
        cls, _ = self._run(x, len(self.layers) - 1)
        return self.norm(cls.flatten(2).transpose(1, 2))


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.9,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="patch_embed.proj.0", classifier="head", license="apache-2.0"), **kwargs}


# the paper's Table 1 (Ti/S/M/B) and the authors' configs (w14, peg): stem, channels, heads, depths
_TI = dict(embed_dim=(64, 64, 128, 256, 512), num_heads=(2, 4, 8, 16), depth=(2, 2, 8, 2))
_S = dict(embed_dim=(96, 96, 192, 384, 768), num_heads=(3, 6, 12, 24), depth=(2, 2, 8, 2))
_M = dict(embed_dim=(96, 96, 192, 384, 768), num_heads=(3, 6, 12, 24), depth=(2, 2, 14, 2),
          patch_conv_type="1conv")
_B = dict(embed_dim=(128, 128, 256, 512, 1024), num_heads=(4, 8, 16, 32), depth=(2, 2, 14, 2),
          patch_conv_type="1conv")
_VARIANTS = {
    "regionvit_tiny_224": _TI, "regionvit_small_224": _S, "regionvit_medium_224": _M, "regionvit_base_224": _B,
    "regionvit_small_w14_224": dict(_S, window=14), "regionvit_small_w14_peg_224": dict(_S, window=14, peg=True),
    "regionvit_base_w14_224": dict(_B, window=14), "regionvit_base_w14_peg_224": dict(_B, window=14, peg=True)}

default_cfgs = generate_default_cfgs({
    name: _cfg(first_conv="patch_embed.proj" if arch.get("patch_conv_type") == "1conv" else "patch_embed.proj.0")
    for name, arch in _VARIANTS.items()})


def _regionvit(variant: str, pretrained: bool, kwargs):
    return build_model_with_cfg(RegionViT, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3)),
                                **{**_VARIANTS[variant], **kwargs})


@register_model
def regionvit_tiny_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-Ti: channels 64-128-256-512, depths 2-2-8-2, three-conv stem."""
    return _regionvit("regionvit_tiny_224", pretrained, kwargs)


@register_model
def regionvit_small_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-S: channels 96-192-384-768, depths 2-2-8-2."""
    return _regionvit("regionvit_small_224", pretrained, kwargs)


@register_model
def regionvit_small_w14_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-S with 14x14 local windows."""
    return _regionvit("regionvit_small_w14_224", pretrained, kwargs)


@register_model
def regionvit_small_w14_peg_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-S with 14x14 local windows and the position encoding generator."""
    return _regionvit("regionvit_small_w14_peg_224", pretrained, kwargs)


@register_model
def regionvit_medium_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-M: channels 96-192-384-768, depths 2-2-14-2, one-conv stem."""
    return _regionvit("regionvit_medium_224", pretrained, kwargs)


@register_model
def regionvit_base_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-B: channels 128-256-512-1024, depths 2-2-14-2, one-conv stem."""
    return _regionvit("regionvit_base_224", pretrained, kwargs)


@register_model
def regionvit_base_w14_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-B with 14x14 local windows."""
    return _regionvit("regionvit_base_w14_224", pretrained, kwargs)


@register_model
def regionvit_base_w14_peg_224(pretrained: bool = False, **kwargs) -> RegionViT:
    """RegionViT-B with 14x14 local windows and the position encoding generator."""
    return _regionvit("regionvit_base_w14_peg_224", pretrained, kwargs)
