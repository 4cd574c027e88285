"""Swin Transformer V2 T / S / B with torchvision's structure and parameter names (``features.N``, ``norm``,
``head``; per block ``attn.{qkv,proj,logit_scale,cpb_mlp}``, ``mlp.{0,3}``). torchvision-API only.

V2 differs from torchvision's Swin v1 (``swin_transformer.SwinTransformerTV``, whose body is reused) by cosine
attention with a learned, clamped logit scale, a continuous position bias (an MLP over log-spaced relative
coordinates, squashed to 16 * sigmoid), post-norm residual blocks and a patch merging that normalises after
the reduction. The key bias third of ``qkv.bias`` is ignored (zeroed at every forward), as in torchvision.
"""
import math

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from ._api import define_tv_builders, tv_weights_enums
from .swin_transformer import PatchMergingTV, ShiftedWindowAttentionTV, SwinBlockTV, SwinTransformerTV

__all__ = ["SwinTransformerV2TV"]


def _log_spaced_coords(window_size):
    """(1, 2Wh-1, 2Ww-1, 2) relative offsets scaled to [-8, 8] and mapped by sign(x) log2(|x| + 1) / 3."""
    wh, ww = window_size
    rh = np.arange(-(wh - 1), wh, dtype=np.float32) / max(wh - 1, 1) * 8
    rw = np.arange(-(ww - 1), ww, dtype=np.float32) / max(ww - 1, 1) * 8
    table = np.stack(np.meshgrid(rh, rw, indexing="ij"), -1)[None]
    return (np.sign(table) * np.log2(np.abs(table) + 1.0) / 3.0).astype(np.float32)


class ShiftedWindowAttentionV2(ShiftedWindowAttentionTV):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias, proj_bias=proj_bias,
                         attention_dropout=attention_dropout, dropout=dropout)
        self.logit_scale = nn.Parameter(flow.log(10 * flow.ones(num_heads, 1, 1)))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            with flow.no_grad():
                self.qkv.bias[dim:2 * dim].zero_()

    def _define_position_bias(self):
        # a persistent buffer, as in torchvision's checkpoints
        self.register_buffer("relative_coords_table", flow.from_numpy(_log_spaced_coords(self.window_size)))

    def get_relative_position_bias(self):
        table = self.cpb_mlp(self.relative_coords_table).reshape(-1, self.num_heads)
        return 16 * flow.sigmoid(self._gather_position_bias(table))

    def _qkv(self, x):
        bias = self.qkv.bias
        if bias is not None:
            dim = bias.shape[0] // 3
            bias = flow.cat([bias[:dim], flow.zeros_like(bias[dim:2 * dim]), bias[2 * dim:]])
        return F.linear(x, self.qkv.weight, bias)

    def _attention_logits(self, q, k):
        attn = F.normalize(q, dim=-1).matmul(F.normalize(k, dim=-1).transpose(-2, -1))
        return attn * flow.clamp(self.logit_scale, max=math.log(100.0)).exp()


class SwinTransformerBlockV2(SwinBlockTV):
    """Post-norm: x + drop_path(norm1(attn(x))), then x + drop_path(norm2(mlp(x)))."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio, dropout, attention_dropout,
                         stochastic_depth_prob, norm_layer, attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class PatchMergingV2(PatchMergingTV):
    """2x2 merge -> Linear(4C, 2C) -> norm(2C) (v1 normalises the 4C input instead)."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        nn.Module.__init__(self)
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(self._merge(x)))


class SwinTransformerV2TV(SwinTransformerTV):
    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, **kwargs):
        kwargs.setdefault("block", SwinTransformerBlockV2)
        kwargs.setdefault("downsample_layer", PatchMergingV2)
        super().__init__(patch_size, embed_dim, depths, num_heads, window_size, **kwargs)


_SWIN_V2 = {"swin_v2_t": (96, (2, 2, 6, 2), (3, 6, 12, 24), 0.2), "swin_v2_s": (96, (2, 2, 18, 2), (3, 6, 12, 24), 0.3),
            "swin_v2_b": (128, (2, 2, 18, 2), (4, 8, 16, 32), 0.5)}


def _swin_v2(name, weights, **kwargs):
    dim, depths, heads, sd = _SWIN_V2[name]
    kwargs.setdefault("stochastic_depth_prob", sd)
    return SwinTransformerV2TV([4, 4], dim, depths, heads, [8, 8], **kwargs)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "swin_v2_t": ("Swin_V2_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_t-b137f0e2.pth", 28351570, (256, 256), 256, 260, "bicubic", 82.072, 96.132),
    ]),
    "swin_v2_s": ("Swin_V2_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_s-637d8ceb.pth", 49737442, (256, 256), 256, 260, "bicubic", 83.712, 96.816),
    ]),
    "swin_v2_b": ("Swin_V2_B_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_b-781e5279.pth", 87930848, (256, 256), 256, 272, "bicubic", 84.112, 96.864),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _swin_v2)
