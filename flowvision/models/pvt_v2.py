"""PVT v2 (Wang et al., "PVT v2: Improved Baselines with Pyramid Vision Transformer", CVM 2022); timm's names.

A four-stage transformer pyramid: overlapping patch embeddings, spatial-reduction attention (keys/values
from a strided conv, or from a 7x7 average pool in the linear '_li' variant) and MLPs with a depthwise conv.
"""
import math
from functools import partial

from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import DropPath, to_2tuple, to_ntuple, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import MeanPoolContract, check_input_channels, check_mean_pool, linear_head
from ._features import collect_intermediates, prune_stages
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["PyramidVisionTransformerV2"]

_LayerNorm = partial(nn.LayerNorm, eps=1e-6)


class MlpWithDepthwiseConv(nn.Module):
    """fc1 -> [ReLU] -> 3x3 depthwise conv over the token grid -> act -> fc2."""

    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.0,
                 extra_relu=False):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.relu = nn.ReLU() if extra_relu else nn.Identity()
        self.dwconv = nn.Conv2d(hidden_features, hidden_features, 3, 1, 1, bias=True, groups=hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x, feat_size):
        x = self.fc1(x)
        b, n, c = x.shape
        x = self.dwconv(self.relu(x.transpose(1, 2).reshape(b, c, feat_size[0], feat_size[1])))
        x = self.drop(self.act(x.flatten(2).transpose(1, 2)))
        return self.drop(self.fc2(x))


class Attention(nn.Module):
    """Spatial-reduction attention: queries from every token, keys/values from a reduced token grid."""

    def __init__(self, dim, num_heads=8, sr_ratio=1, linear_attn=False, qkv_bias=True, attn_drop=0.0,
                 proj_drop=0.0):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim {dim} is not divisible by num_heads {num_heads}")
        self.dim = dim
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.pool = self.sr = self.norm = self.act = None
        if linear_attn:
            self.pool = nn.AdaptiveAvgPool2d(7)
            self.sr = nn.Conv2d(dim, dim, 1, stride=1)
            self.norm = nn.LayerNorm(dim)
            self.act = nn.GELU()
        elif sr_ratio > 1:
            self.sr = nn.Conv2d(dim, dim, sr_ratio, stride=sr_ratio)
            self.norm = nn.LayerNorm(dim)

    def forward(self, x, feat_size):
        b, n, c = x.shape
        h, w = feat_size
        q = self.q(x).reshape(b, n, self.num_heads, -1).permute(0, 2, 1, 3)
        if self.sr is not None:
            x = x.permute(0, 2, 1).reshape(b, c, h, w)
            if self.pool is not None:
                x = self.pool(x)
            x = self.norm(self.sr(x).reshape(b, c, -1).permute(0, 2, 1))
            if self.act is not None:
                x = self.act(x)
        k, v = self.kv(x).reshape(b, -1, 2, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class Block(nn.Module):
    """Pre-norm block: spatial-reduction attention, depthwise-conv MLP."""

    def __init__(self, dim, num_heads, mlp_ratio=4.0, sr_ratio=1, linear_attn=False, qkv_bias=False,
                 proj_drop=0.0, attn_drop=0.0, drop_path=0.0, act_layer=nn.GELU, norm_layer=_LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, sr_ratio=sr_ratio, linear_attn=linear_attn,
                              qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=proj_drop)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = MlpWithDepthwiseConv(dim, int(dim * mlp_ratio), act_layer=act_layer, drop=proj_drop,
                                        extra_relu=linear_attn)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x, feat_size):
        x = x + self.drop_path1(self.attn(self.norm1(x), feat_size))
        return x + self.drop_path2(self.mlp(self.norm2(x), feat_size))


class OverlapPatchEmbed(nn.Module):
    """Strided conv with kernel > stride (overlapping patches), then LayerNorm; NHWC out."""

    def __init__(self, patch_size=7, stride=4, in_chans=3, embed_dim=768):
        super().__init__()
        patch_size = to_2tuple(patch_size)
        if max(patch_size) <= stride:
            raise ValueError("patch_size must be larger than stride (overlapping patches)")
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=stride,
                              padding=(patch_size[0] // 2, patch_size[1] // 2))
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        return self.norm(self.proj(x).permute(0, 2, 3, 1))


class PyramidVisionTransformerStage(nn.Module):
    """[overlapping downsample] -> blocks on (B, N, C) tokens -> norm; NHWC in, NCHW out."""

    def __init__(self, dim, dim_out, depth, downsample=True, num_heads=8, sr_ratio=1, linear_attn=False,
                 mlp_ratio=4.0, qkv_bias=True, proj_drop=0.0, attn_drop=0.0, drop_path=0.0, norm_layer=_LayerNorm):
        super().__init__()
        self.grad_checkpointing = False
        if downsample:
            self.downsample = OverlapPatchEmbed(patch_size=3, stride=2, in_chans=dim, embed_dim=dim_out)
        else:
            if dim != dim_out:
                raise ValueError("a stage without downsampling keeps its width")
            self.downsample = None
        self.blocks = nn.ModuleList([Block(
            dim_out, num_heads=num_heads, sr_ratio=sr_ratio, linear_attn=linear_attn, mlp_ratio=mlp_ratio,
            qkv_bias=qkv_bias, proj_drop=proj_drop, attn_drop=attn_drop,
            drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path, norm_layer=norm_layer)
            for i in range(depth)])
        self.norm = norm_layer(dim_out)

    def forward(self, x):
        if self.downsample is not None:
            x = self.downsample(x)
        b, h, w, c = x.shape
        x = x.reshape(b, -1, c)
        for blk in self.blocks:
            x = blk(x, (h, w))
        return self.norm(x).reshape(b, h, w, -1).permute(0, 3, 1, 2).contiguous()


class PyramidVisionTransformerV2(MeanPoolContract, nn.Module):
    """PVT v2.

    Args:
        in_chans, num_classes, global_pool: input channels, classes (0: no head), 'avg' or ''.
        depths, embed_dims, num_heads, sr_ratios, mlp_ratios: per stage.
        qkv_bias: biases of q/kv. linear: the linear-complexity ('_li') attention.
        drop_rate, proj_drop_rate, attn_drop_rate, drop_path_rate: dropouts and stochastic depth.
    """

    def __init__(self, in_chans=3, num_classes=1000, global_pool="avg", depths=(3, 4, 6, 3),
                 embed_dims=(64, 128, 256, 512), num_heads=(1, 2, 4, 8), sr_ratios=(8, 4, 2, 1),
                 mlp_ratios=(8.0, 8.0, 4.0, 4.0), qkv_bias=True, linear=False, drop_rate=0.0, proj_drop_rate=0.0,
                 attn_drop_rate=0.0, drop_path_rate=0.0, norm_layer=_LayerNorm):
        super().__init__()
        n = len(depths)
        if len(embed_dims) != n:
            raise ValueError("depths and embed_dims must have one entry per stage")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.depths = depths
        self.grad_checkpointing = False
        mlp_ratios, num_heads, sr_ratios = (to_ntuple(n)(v) for v in (mlp_ratios, num_heads, sr_ratios))
        self.patch_embed = OverlapPatchEmbed(patch_size=7, stride=4, in_chans=in_chans, embed_dim=embed_dims[0])
        total = sum(depths)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        stages, prev, start = [], embed_dims[0], 0
        self.feature_info = []
        for i in range(n):
            stages.append(PyramidVisionTransformerStage(
                prev, embed_dims[i], depths[i], downsample=i > 0, num_heads=num_heads[i], sr_ratio=sr_ratios[i],
                mlp_ratio=mlp_ratios[i], linear_attn=linear, qkv_bias=qkv_bias, proj_drop=proj_drop_rate,
                attn_drop=attn_drop_rate, drop_path=rates[start:start + depths[i]], norm_layer=norm_layer))
            prev = embed_dims[i]
            start += depths[i]
            self.feature_info.append(dict(num_chs=prev, reduction=4 * 2 ** i, module=f"stages.{i}"))
        self.stages = nn.Sequential(*stages)
        self.num_features = self.head_hidden_size = embed_dims[-1]
        self.head_drop = nn.Dropout(drop_rate)
        self.head = linear_head(embed_dims[-1], num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^patch_embed", blocks=r"^stages\.(\d+)")

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final features, [stage outputs]) for ``indices`` of the stages (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"PVT-v2's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        x, intermediates = collect_intermediates(self.stages, self.patch_embed(x), indices, stop_early)
        return intermediates if intermediates_only else (x, intermediates)

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        take, drop_head = prune_stages(self, indices, prune_head)
        if drop_head:
            self.reset_classifier(0, "")
        return take

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.stages, self.patch_embed(x))

    def forward_head(self, x, pre_logits=False):
        if self.global_pool:
            x = x.mean(dim=(-1, -2))
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.9,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="patch_embed.proj", classifier="head", fixed_input_size=False, license="apache-2.0",
                   hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    f"pvt_v2_{v}.in1k": _cfg() for v in ("b0", "b1", "b2", "b3", "b4", "b5", "b2_li")})

_WIDE = (64, 128, 320, 512)
_HEADS = (1, 2, 5, 8)


def _pvt2(variant, pretrained, kwargs, depths, embed_dims=_WIDE, **args):
    return build_model_with_cfg(PyramidVisionTransformerV2, variant, pretrained,
                                feature_cfg=dict(out_indices=(0, 1, 2, 3)),
                                **{**dict(depths=depths, embed_dims=embed_dims, num_heads=_HEADS), **args, **kwargs})


@register_model
def pvt_v2_b0(pretrained=False, **kwargs):
    """PVT-v2-B0."""
    return _pvt2("pvt_v2_b0", pretrained, kwargs, (2, 2, 2, 2), embed_dims=(32, 64, 160, 256))


@register_model
def pvt_v2_b1(pretrained=False, **kwargs):
    """PVT-v2-B1."""
    return _pvt2("pvt_v2_b1", pretrained, kwargs, (2, 2, 2, 2))


@register_model
def pvt_v2_b2(pretrained=False, **kwargs):
    """PVT-v2-B2."""
    return _pvt2("pvt_v2_b2", pretrained, kwargs, (3, 4, 6, 3))


@register_model
def pvt_v2_b3(pretrained=False, **kwargs):
    """PVT-v2-B3."""
    return _pvt2("pvt_v2_b3", pretrained, kwargs, (3, 4, 18, 3))


@register_model
def pvt_v2_b4(pretrained=False, **kwargs):
    """PVT-v2-B4."""
    return _pvt2("pvt_v2_b4", pretrained, kwargs, (3, 8, 27, 3))


@register_model
def pvt_v2_b5(pretrained=False, **kwargs):
    """PVT-v2-B5."""
    return _pvt2("pvt_v2_b5", pretrained, kwargs, (3, 6, 40, 3), mlp_ratios=(4, 4, 4, 4))


@register_model
def pvt_v2_b2_li(pretrained=False, **kwargs):
    """PVT-v2-B2 with linear spatial-reduction attention (7x7 pooled keys/values)."""
    return _pvt2("pvt_v2_b2_li", pretrained, kwargs, (3, 4, 6, 3), linear=True)
