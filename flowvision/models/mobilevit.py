"""MobileViT (Mehta & Rastegari, "MobileViT: Light-weight, General-purpose, and Mobile-friendly Vision
Transformer", ICLR 2022): MobileNetV2 inverted residuals plus blocks that unfold the map into 2x2-patch
sequences for a transformer and fold it back. timm's names (its ByobNet layout: ``stem``, ``stages``,
``final_conv``, ``head``); the original flowvision names ``mobilevit_small / _x_small / _xx_small`` are
aliases of ``mobilevit_s / _xs / _xxs``.

MobileViT v2 (Mehta & Rastegari, "Separable Self-attention for Mobile Vision Transformers", 2022):
``mobilevitv2_050 ... _200``, the transformer replaced by separable (linear) self-attention over 1x1 convs with
GroupNorm(1) norms, no fusion conv and no final conv; widths scale with the multiplier in the name.
"""
import math

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import ClassifierHead, ConvNormAct, DropPath
from flowvision.layers.mlp import ConvMlp

from ._builder import build_model_with_cfg
from ._pretrained import generate_default_cfgs
from ._registry import register_model, register_model_alias
from .byobnet import BottleneckBlock, ByobBase
from .vision_transformer import Block

__all__ = ["MobileVit"]


def _inverted_residual(in_chs, out_chs, stride, expansion, drop_path_rate):
    """MobileNetV2 block as a ByobNet bottleneck: expand + SiLU, depthwise 3x3 + SiLU, linear projection,
    identity shortcut only when the shape is kept."""
    mid = int(in_chs * expansion)
    return BottleneckBlock(in_chs, out_chs, stride, mid, groups=mid, act_layer=nn.SiLU, project_shortcut=False,
                           out_act=False, drop_path_rate=drop_path_rate)


class MobileVitBlock(nn.Module):
    """Local 3x3 conv + 1x1 to the transformer width; unfold into (B * patch_area, patches, C) sequences;
    transformer; fold back; 1x1 projection; 3x3 fusion with the block input."""

    def __init__(self, in_chs, out_chs=None, transformer_dim=None, transformer_depth=2, num_heads=4, mlp_ratio=2.0,
                 patch_size=2, drop_path_rate=0.0):
        super().__init__()
        out_chs = out_chs or in_chs
        self.conv_kxk = ConvNormAct(in_chs, in_chs, 3, act_layer=nn.SiLU)
        self.conv_1x1 = nn.Conv2d(in_chs, transformer_dim, 1, bias=False)
        self.transformer = nn.Sequential(*[Block(
            transformer_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=True, drop_path=drop_path_rate,
            act_layer=nn.SiLU, norm_layer=nn.LayerNorm) for _ in range(transformer_depth)])
        self.norm = nn.LayerNorm(transformer_dim)
        self.conv_proj = ConvNormAct(transformer_dim, out_chs, 1, act_layer=nn.SiLU)
        self.conv_fusion = ConvNormAct(in_chs + out_chs, out_chs, 3, act_layer=nn.SiLU)
        self.patch_size = (patch_size, patch_size)
        self.patch_area = patch_size * patch_size

    def forward(self, x):
        shortcut = x
        x = self.conv_1x1(self.conv_kxk(x))
        ph, pw = self.patch_size
        b, c, h, w = x.shape
        new_h, new_w = math.ceil(h / ph) * ph, math.ceil(w / pw) * pw
        nh, nw = new_h // ph, new_w // pw
        n = nh * nw
        resized = (new_h, new_w) != (h, w)
        if resized:  # as the reference: resample to a multiple of the patch size rather than pad
            x = F.interpolate(x, size=(new_h, new_w), mode="bilinear", align_corners=False)
        # (B, C, H, W) -> (B * patch_area, patches, C): one sequence per position inside the patch
        x = x.reshape(b * c * nh, ph, nw, pw).transpose(1, 2)
        x = x.reshape(b, c, n, self.patch_area).transpose(1, 3).reshape(b * self.patch_area, n, -1)
        x = self.norm(self.transformer(x))
        x = x.reshape(b, self.patch_area, n, -1).transpose(1, 3).reshape(b * c * nh, nw, ph, pw)
        x = x.transpose(1, 2).reshape(b, c, nh * ph, nw * pw)
        if resized:
            x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)
        return self.conv_fusion(flow.cat((shortcut, self.conv_proj(x)), dim=1))


class GroupNorm1(nn.GroupNorm):
    """GroupNorm with one group (normalises each sample over all of C, P, N)."""

    def __init__(self, num_channels, eps=1e-5):
        super().__init__(1, num_channels, eps=eps)


class LinearSelfAttention(nn.Module):
    """Separable self-attention on (B, C, P, N): one context score per patch (softmax over N) weights the keys
    into a context vector that gates ReLU(values); 1x1 convs in and out."""

    def __init__(self, embed_dim, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.embed_dim = embed_dim
        self.qkv_proj = nn.Conv2d(embed_dim, 1 + 2 * embed_dim, 1)
        self.attn_drop = nn.Dropout(attn_drop)
        self.out_proj = nn.Conv2d(embed_dim, embed_dim, 1)
        self.out_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        qkv = self.qkv_proj(x)
        d = self.embed_dim
        query, key, value = qkv[:, :1], qkv[:, 1:1 + d], qkv[:, 1 + d:]
        scores = self.attn_drop(F.softmax(query, dim=-1))
        context = (key * scores).sum(dim=-1, keepdim=True)
        return self.out_drop(self.out_proj(F.relu(value) * context))


class LinearTransformerBlock(nn.Module):
    """GroupNorm1 -> separable attention and GroupNorm1 -> 1x1-conv MLP, both residual."""

    def __init__(self, embed_dim, mlp_ratio=2.0, drop=0.0, attn_drop=0.0, drop_path=0.0):
        super().__init__()
        self.norm1 = GroupNorm1(embed_dim)
        self.attn = LinearSelfAttention(embed_dim, attn_drop=attn_drop, proj_drop=drop)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = GroupNorm1(embed_dim)
        self.mlp = ConvMlp(embed_dim, int(embed_dim * mlp_ratio), act_layer=nn.SiLU, drop=drop)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.attn(self.norm1(x)))
        return x + self.drop_path2(self.mlp(self.norm2(x)))


class MobileVitV2Block(nn.Module):
    """Depthwise 3x3 + 1x1 to half width; unfold into (B, C, patch_area, patches); separable-attention
    transformer; fold back; 1x1 projection (no activation, no fusion with the input)."""

    def __init__(self, in_chs, out_chs=None, transformer_depth=2, bottle_ratio=0.5, mlp_ratio=2.0, patch_size=2,
                 drop_path_rate=0.0):
        super().__init__()
        out_chs = out_chs or in_chs
        dim = int(in_chs * bottle_ratio)
        self.conv_kxk = ConvNormAct(in_chs, in_chs, 3, groups=in_chs, act_layer=nn.SiLU)
        self.conv_1x1 = nn.Conv2d(in_chs, dim, 1, bias=False)
        self.transformer = nn.Sequential(*[LinearTransformerBlock(dim, mlp_ratio, drop_path=drop_path_rate)
                                           for _ in range(transformer_depth)])
        self.norm = GroupNorm1(dim)
        self.conv_proj = ConvNormAct(dim, out_chs, 1, apply_act=False)
        self.patch_size = (patch_size, patch_size)

    def forward(self, x):
        b, c, h, w = x.shape
        ph, pw = self.patch_size
        new_h, new_w = math.ceil(h / ph) * ph, math.ceil(w / pw) * pw
        nh, nw = new_h // ph, new_w // pw
        if (new_h, new_w) != (h, w):  # as the reference: resample to a multiple of the patch size
            x = F.interpolate(x, size=(new_h, new_w), mode="bilinear", align_corners=True)
        x = self.conv_1x1(self.conv_kxk(x))
        c = x.shape[1]
        x = x.reshape(b, c, nh, ph, nw, pw).permute(0, 1, 3, 5, 2, 4).reshape(b, c, ph * pw, nh * nw)
        x = self.norm(self.transformer(x))
        x = x.reshape(b, c, ph, pw, nh, nw).permute(0, 1, 4, 2, 5, 3).reshape(b, c, nh * ph, nw * pw)
        return self.conv_proj(x)


class MobileVit(ByobBase):
    """MobileViT.

    Args:
        widths: output width of the five stages. dims: transformer widths of stages 3-5.
        expansion: inverted-residual expansion. final_chs: width of the final 1x1 conv (0: none).
        stem_chs: stem width. v2: MobileViT v2 blocks (``dims`` unused, two inverted residuals in stage 2).
        in_chans, num_classes, global_pool, drop_rate, drop_path_rate: as usual.
    """

    def __init__(self, widths, dims, expansion, final_chs, in_chans=3, num_classes=1000, global_pool="avg",
                 drop_rate=0.0, drop_path_rate=0.0, stem_chs=16, v2=False):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.grad_checkpointing = False
        self.stem = ConvNormAct(in_chans, stem_chs, 3, stride=2, act_layer=nn.SiLU)
        stages, prev = [], stem_chs
        self.feature_info = []
        for i, out in enumerate(widths):
            stride = 1 if i == 0 else 2
            blocks = [_inverted_residual(prev, out, stride, expansion, drop_path_rate)]
            if i == 1:
                blocks += [_inverted_residual(out, out, 1, expansion, drop_path_rate) for _ in range(1 if v2 else 2)]
            elif i >= 2 and v2:
                blocks.append(MobileVitV2Block(out, out, transformer_depth=(2, 4, 3)[i - 2],
                                               drop_path_rate=drop_path_rate))
            elif i >= 2:
                blocks.append(MobileVitBlock(out, out, dims[i - 2], transformer_depth=(2, 4, 3)[i - 2],
                                             drop_path_rate=drop_path_rate))
            stages.append(nn.Sequential(*blocks))
            prev = out
            if i < len(widths) - 1 or not final_chs:
                self.feature_info.append(dict(num_chs=out, reduction=2 ** (i + 1), module=f"stages.{i}"))
        self.stages = nn.Sequential(*stages)
        if final_chs:
            self.final_conv = ConvNormAct(prev, final_chs, 1, act_layer=nn.SiLU)
            self.feature_info.append(dict(num_chs=final_chs, reduction=32, module="final_conv"))
        else:
            self.final_conv = nn.Identity()
            final_chs = prev
        self.num_features = self.head_hidden_size = final_chs
        self.head = ClassifierHead(final_chs, num_classes, global_pool, drop_rate)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=0.9,
                   interpolation="bicubic", mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0), first_conv="stem.conv",
                   classifier="head.fc", fixed_input_size=False, license="cvnets-license", hf_hub_id="timm/"),
            **kwargs}


_V2_MULTS = {"050": 0.5, "075": 0.75, "100": 1.0, "125": 1.25, "150": 1.5, "175": 1.75, "200": 2.0}
default_cfgs = generate_default_cfgs({
    **{f"mobilevit_{s}.cvnets_in1k": _cfg() for s in ("xxs", "xs", "s")},
    **{f"mobilevitv2_{m}.cvnets_in1k": _cfg(crop_pct=0.888) for m in _V2_MULTS}})


def _mvit(variant, pretrained, kwargs, **args):
    return build_model_with_cfg(MobileVit, variant, pretrained, **{**args, **kwargs})


@register_model
def mobilevit_xxs(pretrained=False, **kwargs):
    """MobileViT-XXS."""
    return _mvit("mobilevit_xxs", pretrained, kwargs, widths=(16, 24, 48, 64, 80), dims=(64, 80, 96), expansion=2.0,
                 final_chs=320)


@register_model
def mobilevit_xs(pretrained=False, **kwargs):
    """MobileViT-XS."""
    return _mvit("mobilevit_xs", pretrained, kwargs, widths=(32, 48, 64, 80, 96), dims=(96, 120, 144), expansion=4.0,
                 final_chs=384)


@register_model
def mobilevit_s(pretrained=False, **kwargs):
    """MobileViT-S."""
    return _mvit("mobilevit_s", pretrained, kwargs, widths=(32, 64, 96, 128, 160), dims=(144, 192, 240),
                 expansion=4.0, final_chs=640)


def _mvit2(variant, pretrained, kwargs):
    mult = _V2_MULTS[variant.rsplit("_", 1)[1]]
    return _mvit(variant, pretrained, kwargs, widths=tuple(int(c * mult) for c in (64, 128, 256, 384, 512)),
                 dims=None, expansion=2.0, final_chs=0, stem_chs=int(32 * mult), v2=True)


@register_model
def mobilevitv2_050(pretrained=False, **kwargs):
    """MobileViT v2, width x0.5."""
    return _mvit2("mobilevitv2_050", pretrained, kwargs)


@register_model
def mobilevitv2_075(pretrained=False, **kwargs):
    """MobileViT v2, width x0.75."""
    return _mvit2("mobilevitv2_075", pretrained, kwargs)


@register_model
def mobilevitv2_100(pretrained=False, **kwargs):
    """MobileViT v2, width x1.0."""
    return _mvit2("mobilevitv2_100", pretrained, kwargs)


@register_model
def mobilevitv2_125(pretrained=False, **kwargs):
    """MobileViT v2, width x1.25."""
    return _mvit2("mobilevitv2_125", pretrained, kwargs)


@register_model
def mobilevitv2_150(pretrained=False, **kwargs):
    """MobileViT v2, width x1.5."""
    return _mvit2("mobilevitv2_150", pretrained, kwargs)


@register_model
def mobilevitv2_175(pretrained=False, **kwargs):
    """MobileViT v2, width x1.75."""
    return _mvit2("mobilevitv2_175", pretrained, kwargs)


@register_model
def mobilevitv2_200(pretrained=False, **kwargs):
    """MobileViT v2, width x2.0."""
    return _mvit2("mobilevitv2_200", pretrained, kwargs)


for _orig, _timm in (("mobilevit_small", "mobilevit_s"), ("mobilevit_x_small", "mobilevit_xs"),
                     ("mobilevit_xx_small", "mobilevit_xxs")):
    register_model_alias(_orig, _timm)
