"""MetaFormer family: PoolFormer v1/v2, ConvFormer, CAFormer (timm's ``metaformer`` names).

Yu et al., "MetaFormer Is Actually What You Need for Vision" (CVPR 2022) and "MetaFormer Baselines for Vision"
(TPAMI 2023). Every block is norm -> token mixer -> residual, norm -> MLP -> residual; the families differ
in the token mixer (average pooling, inverted separable conv, self-attention) and the norms/scales. The
original flowvision names ``poolformer_s12 ... poolformer_m48`` are timm's names.
"""
from collections import OrderedDict
from functools import partial

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import DropPath, LayerNorm2d, Mlp, SelectAdaptivePool2d, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none
from ._features import collect_intermediates, prune_stages
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["MetaFormer"]


class GroupNorm1(nn.GroupNorm):
    """GroupNorm with one group: normalises over (C, H, W) with per-channel affine (PoolFormer's norm)."""

    def __init__(self, num_channels, eps=1e-5, bias=True):
        super().__init__(1, num_channels, eps=eps)
        if not bias:
            self.bias = None


def _no_bias(cls, eps=1e-6):
    """``cls`` (a norm over ``num_channels``) with eps 1e-6 and no bias parameter (the v2 baselines' norms)."""
    def make(num_channels):
        norm = cls(num_channels, eps=eps)
        norm.bias = None
        return norm
    return make


GroupNorm1NoBias = _no_bias(GroupNorm1)
LayerNorm2dNoBias = _no_bias(LayerNorm2d)
LayerNormNoBias = _no_bias(nn.LayerNorm)


class Stem(nn.Module):
    """7x7 stride-4 conv (+ norm)."""

    def __init__(self, in_channels, out_channels, norm_layer=None):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=4, padding=2)
        self.norm = norm_layer(out_channels) if norm_layer else nn.Identity()

    def forward(self, x):
        return self.norm(self.conv(x))


class Downsampling(nn.Module):
    """(norm ->) strided conv between stages."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, norm_layer=None):
        super().__init__()
        self.norm = norm_layer(in_channels) if norm_layer else nn.Identity()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv(self.norm(x))


class Scale(nn.Module):
    """Per-channel learnable scale (LayerScale / ResScale), over dim 1 (NCHW) or the last dim."""

    def __init__(self, dim, init_value=1.0, trainable=True, use_nchw=True):
        super().__init__()
        self.shape = (dim, 1, 1) if use_nchw else (dim,)
        self.scale = nn.Parameter(init_value * flow.ones(dim), requires_grad=trainable)

    def forward(self, x):
        return x * self.scale.view(self.shape)


class SquaredReLU(nn.Module):
    """relu(x) ** 2."""

    def __init__(self, inplace=False):
        super().__init__()
        self.relu = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return flow.square(self.relu(x))


class StarReLU(nn.Module):
    """s * relu(x) ** 2 + b with learnable scalars s, b."""

    def __init__(self, scale_value=1.0, bias_value=0.0, scale_learnable=True, bias_learnable=True, inplace=False):
        super().__init__()
        self.relu = nn.ReLU(inplace=inplace)
        self.scale = nn.Parameter(scale_value * flow.ones(1), requires_grad=scale_learnable)
        self.bias = nn.Parameter(bias_value * flow.ones(1), requires_grad=bias_learnable)

    def forward(self, x):
        return self.scale * flow.square(self.relu(x)) + self.bias


class Attention(nn.Module):
    """Multi-head self-attention over (B, N, C) tokens, heads of ``head_dim`` channels, no projection bias."""

    def __init__(self, dim, head_dim=32, num_heads=None, qkv_bias=False, attn_drop=0.0, proj_drop=0.0,
                 proj_bias=False, **kwargs):
        super().__init__()
        self.head_dim = head_dim
        self.num_heads = max(1, num_heads if num_heads else dim // head_dim)
        self.attention_dim = self.num_heads * head_dim
        self.qkv = nn.Linear(dim, self.attention_dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(self.attention_dim, dim, bias=proj_bias)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, self.attention_dim)))


class SepConv(nn.Module):
    """Inverted separable conv token mixer: 1x1 (x2) -> StarReLU -> 7x7 depthwise -> 1x1."""

    def __init__(self, dim, expansion_ratio=2, act1_layer=StarReLU, act2_layer=nn.Identity, bias=False,
                 kernel_size=7, padding=3, **kwargs):
        super().__init__()
        mid = int(expansion_ratio * dim)
        self.pwconv1 = nn.Conv2d(dim, mid, 1, bias=bias)
        self.act1 = act1_layer()
        self.dwconv = nn.Conv2d(mid, mid, kernel_size, padding=padding, groups=mid, bias=bias)
        self.act2 = act2_layer()
        self.pwconv2 = nn.Conv2d(mid, dim, 1, bias=bias)

    def forward(self, x):
        return self.pwconv2(self.act2(self.dwconv(self.act1(self.pwconv1(x)))))


class Pooling(nn.Module):
    """PoolFormer's token mixer: avgpool(x) - x (3x3, stride 1, padding excluded from the average)."""

    def __init__(self, pool_size=3, **kwargs):
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size, stride=1, padding=pool_size // 2, count_include_pad=False)

    def forward(self, x):
        return self.pool(x) - x


class MlpHead(nn.Module):
    """fc1 -> SquaredReLU -> LayerNorm -> dropout -> fc2 (the v2 baselines' classifier)."""

    def __init__(self, dim, num_classes=1000, mlp_ratio=4, act_layer=SquaredReLU,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), drop_rate=0.0, bias=True):
        super().__init__()
        hidden = int(mlp_ratio * dim)
        self.fc1 = nn.Linear(dim, hidden, bias=bias)
        self.act = act_layer()
        self.norm = norm_layer(hidden)
        self.fc2 = nn.Linear(hidden, num_classes, bias=bias)
        self.head_drop = nn.Dropout(drop_rate)

    def forward(self, x):
        return self.fc2(self.head_drop(self.norm(self.act(self.fc1(x)))))


class MetaFormerBlock(nn.Module):
    """res_scale(x) + layer_scale(mixer(norm(x))), then the same with an MLP."""

    def __init__(self, dim, token_mixer=Pooling, mlp_act=StarReLU, mlp_bias=False, norm_layer=LayerNorm2d,
                 proj_drop=0.0, drop_path=0.0, use_nchw=True, layer_scale_init_value=None,
                 res_scale_init_value=None, **kwargs):
        super().__init__()
        ls = partial(Scale, dim=dim, init_value=layer_scale_init_value, use_nchw=use_nchw)
        rs = partial(Scale, dim=dim, init_value=res_scale_init_value, use_nchw=use_nchw)
        self.norm1 = norm_layer(dim)
        self.token_mixer = token_mixer(dim=dim, proj_drop=proj_drop, **kwargs)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.layer_scale1 = ls() if layer_scale_init_value is not None else nn.Identity()
        self.res_scale1 = rs() if res_scale_init_value is not None else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(4 * dim), act_layer=mlp_act, bias=mlp_bias, drop=proj_drop, use_conv=use_nchw)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.layer_scale2 = ls() if layer_scale_init_value is not None else nn.Identity()
        self.res_scale2 = rs() if res_scale_init_value is not None else nn.Identity()

    def forward(self, x):
        x = self.res_scale1(x) + self.layer_scale1(self.drop_path1(self.token_mixer(self.norm1(x))))
        return self.res_scale2(x) + self.layer_scale2(self.drop_path2(self.mlp(self.norm2(x))))


class MetaFormerStage(nn.Module):
    """Downsampling (when the width changes) then blocks; attention stages run on (B, N, C) tokens."""

    def __init__(self, in_chs, out_chs, depth=2, token_mixer=nn.Identity, mlp_act=StarReLU, mlp_bias=False,
                 downsample_norm=LayerNorm2d, norm_layer=LayerNorm2d, proj_drop=0.0, dp_rates=None,
                 layer_scale_init_value=None, res_scale_init_value=None, **kwargs):
        super().__init__()
        dp_rates = dp_rates or [0.0] * depth
        self.grad_checkpointing = False
        self.use_nchw = not (isinstance(token_mixer, type) and issubclass(token_mixer, Attention))
        self.downsample = nn.Identity() if in_chs == out_chs else Downsampling(
            in_chs, out_chs, kernel_size=3, stride=2, padding=1, norm_layer=downsample_norm)
        self.blocks = nn.Sequential(*[MetaFormerBlock(
            dim=out_chs, token_mixer=token_mixer, mlp_act=mlp_act, mlp_bias=mlp_bias, norm_layer=norm_layer,
            proj_drop=proj_drop, drop_path=dp_rates[i], layer_scale_init_value=layer_scale_init_value,
            res_scale_init_value=res_scale_init_value, use_nchw=self.use_nchw, **kwargs) for i in range(depth)])

    def forward(self, x):
        x = self.downsample(x)
        b, c, h, w = x.shape
        if not self.use_nchw:
            x = x.reshape(b, c, -1).transpose(1, 2)
        x = self.blocks(x)
        if not self.use_nchw:
            x = x.transpose(1, 2).reshape(b, c, h, w)
        return x


def _per_stage(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


class MetaFormer(ClassifierContract, nn.Module):
    """MetaFormer.

    Args:
        in_chans, num_classes, global_pool: input channels, classes (0: no head), pooling type.
        depths, dims: blocks and width per stage.
        token_mixers, norm_layers: per stage (or one for all).
        mlp_act, mlp_bias: the MLPs' activation and bias.
        drop_path_rate, proj_drop_rate, drop_rate: stochastic depth, block and head dropout.
        layer_scale_init_values, res_scale_init_values: per stage (None: no scale).
        downsample_norm: norm of the stem and downsampling layers (None: none).
        output_norm: norm after pooling. use_mlp_head: MlpHead instead of a linear classifier.
    """

    def __init__(self, in_chans=3, num_classes=1000, global_pool="avg", depths=(2, 2, 6, 2),
                 dims=(64, 128, 320, 512), token_mixers=Pooling, mlp_act=StarReLU, mlp_bias=False,
                 drop_path_rate=0.0, proj_drop_rate=0.0, drop_rate=0.0, layer_scale_init_values=None,
                 res_scale_init_values=(None, None, 1.0, 1.0), downsample_norm=LayerNorm2dNoBias,
                 norm_layers=LayerNorm2dNoBias, output_norm=LayerNorm2d, use_mlp_head=True, **kwargs):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.num_features = self.head_hidden_size = dims[-1]
        self.drop_rate = drop_rate
        self.use_mlp_head = use_mlp_head
        self.num_stages = n = len(depths)
        self.grad_checkpointing = False
        token_mixers, norm_layers = _per_stage(token_mixers, n), _per_stage(norm_layers, n)
        ls_values, rs_values = _per_stage(layer_scale_init_values, n), _per_stage(res_scale_init_values, n)
        self.stem = Stem(in_chans, dims[0], norm_layer=downsample_norm)
        total = sum(depths)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        stages, prev, start = [], dims[0], 0
        self.feature_info = []
        for i in range(n):
            stages.append(MetaFormerStage(
                prev, dims[i], depth=depths[i], token_mixer=token_mixers[i], mlp_act=mlp_act, mlp_bias=mlp_bias,
                proj_drop=proj_drop_rate, dp_rates=rates[start:start + depths[i]],
                layer_scale_init_value=ls_values[i], res_scale_init_value=rs_values[i],
                downsample_norm=downsample_norm, norm_layer=norm_layers[i], **kwargs))
            start += depths[i]
            prev = dims[i]
            self.feature_info.append(dict(num_chs=dims[i], reduction=2 ** (i + 2), module=f"stages.{i}"))
        self.stages = nn.Sequential(*stages)
        self.head = nn.Sequential(OrderedDict([
            ("global_pool", SelectAdaptivePool2d(pool_type=global_pool)),
            ("norm", output_norm(self.num_features)),
            ("flatten", nn.Flatten(1) if global_pool else nn.Identity()),
            ("drop", nn.Dropout(drop_rate)),
            ("fc", self._final(num_classes))]))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def _final(self, num_classes):
        if num_classes <= 0:
            return nn.Identity()
        return MlpHead(self.num_features, num_classes) if self.use_mlp_head else nn.Linear(self.num_features,
                                                                                           num_classes)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^stem", blocks=[(r"^stages\.(\d+)" if coarse else r"^stages\.(\d+)\.blocks\.(\d+)",
                                             None), (r"^stages\.(\d+)\.downsample", (0,))])

    def get_classifier(self, name_only=False):
        return "head.fc" if name_only else self.head.fc

    def reset_classifier(self, num_classes, global_pool=None, reset_other=False):
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            if global_pool not in ("", "avg", "max", "avgmax"):
                raise ValueError("MetaFormer needs a pooling that keeps the width ('', avg, max, avgmax)")
            self.head.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
            self.head.flatten = nn.Flatten(1) if global_pool else nn.Identity()
        if reset_other:
            self.head.norm = nn.Identity()
        self.head.fc = self._final(num_classes)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final features, [stage outputs]) for ``indices`` of the stages (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"MetaFormer's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        x, intermediates = collect_intermediates(self.stages, self.stem(x), indices, stop_early)
        return intermediates if intermediates_only else (x, intermediates)

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        take, drop_head = prune_stages(self, indices, prune_head)
        if drop_head:
            self.reset_classifier(0, "", reset_other=True)
        return take

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.stages, self.stem(x))

    def forward_head(self, x, pre_logits=False):
        x = self.head.drop(self.head.flatten(self.head.norm(self.head.global_pool(x))))
        return x if pre_logits else self.head.fc(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=1.0,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   classifier="head.fc", first_conv="stem.conv", license="apache-2.0", hf_hub_id="timm/"), **kwargs}


_MLP_HEAD = dict(classifier="head.fc.fc2")
default_cfgs = generate_default_cfgs({
    "poolformer_s12.sail_in1k": _cfg(crop_pct=0.9),
    "poolformer_s24.sail_in1k": _cfg(crop_pct=0.9),
    "poolformer_s36.sail_in1k": _cfg(crop_pct=0.9),
    "poolformer_m36.sail_in1k": _cfg(crop_pct=0.95),
    "poolformer_m48.sail_in1k": _cfg(crop_pct=0.95),
    **{f"poolformerv2_{s}.sail_in1k": _cfg() for s in ("s12", "s24", "s36", "m36", "m48")},
    **{f"{f}_{s}.sail_in1k": _cfg(**_MLP_HEAD) for f in ("convformer", "caformer")
       for s in ("s18", "s36", "m36", "b36")},
})

_V1 = dict(downsample_norm=None, mlp_act=nn.GELU, mlp_bias=True, norm_layers=GroupNorm1,
           res_scale_init_values=None, use_mlp_head=False)
_V2 = dict(norm_layers=GroupNorm1NoBias, use_mlp_head=False)
_CONV = dict(token_mixers=SepConv, norm_layers=LayerNorm2dNoBias)
_CA = dict(token_mixers=[SepConv, SepConv, Attention, Attention],
           norm_layers=[LayerNorm2dNoBias] * 2 + [LayerNormNoBias] * 2)
_S12, _S24, _S36 = ((2, 2, 6, 2), (4, 4, 12, 4), (6, 6, 18, 6))
_M36, _M48 = (6, 6, 18, 6), (8, 8, 24, 8)
_DS, _DM = (64, 128, 320, 512), (96, 192, 384, 768)
_B18, _B36 = (3, 3, 9, 3), (3, 12, 18, 3)


def _mf(variant, pretrained, kwargs, **args):
    return build_model_with_cfg(MetaFormer, variant, pretrained, feature_cfg=dict(out_indices=(0, 1, 2, 3)),
                                **{**args, **kwargs})


@register_model
def poolformer_s12(pretrained=False, **kwargs):
    """PoolFormer-S12."""
    return _mf("poolformer_s12", pretrained, kwargs, depths=_S12, dims=_DS, layer_scale_init_values=1e-5, **_V1)


@register_model
def poolformer_s24(pretrained=False, **kwargs):
    """PoolFormer-S24."""
    return _mf("poolformer_s24", pretrained, kwargs, depths=_S24, dims=_DS, layer_scale_init_values=1e-5, **_V1)


@register_model
def poolformer_s36(pretrained=False, **kwargs):
    """PoolFormer-S36."""
    return _mf("poolformer_s36", pretrained, kwargs, depths=_S36, dims=_DS, layer_scale_init_values=1e-6, **_V1)


@register_model
def poolformer_m36(pretrained=False, **kwargs):
    """PoolFormer-M36."""
    return _mf("poolformer_m36", pretrained, kwargs, depths=_M36, dims=_DM, layer_scale_init_values=1e-6, **_V1)


@register_model
def poolformer_m48(pretrained=False, **kwargs):
    """PoolFormer-M48."""
    return _mf("poolformer_m48", pretrained, kwargs, depths=_M48, dims=_DM, layer_scale_init_values=1e-6, **_V1)


@register_model
def poolformerv2_s12(pretrained=False, **kwargs):
    """PoolFormerV2-S12."""
    return _mf("poolformerv2_s12", pretrained, kwargs, depths=_S12, dims=_DS, **_V2)


@register_model
def poolformerv2_s24(pretrained=False, **kwargs):
    """PoolFormerV2-S24."""
    return _mf("poolformerv2_s24", pretrained, kwargs, depths=_S24, dims=_DS, **_V2)


@register_model
def poolformerv2_s36(pretrained=False, **kwargs):
    """PoolFormerV2-S36."""
    return _mf("poolformerv2_s36", pretrained, kwargs, depths=_S36, dims=_DS, **_V2)


@register_model
def poolformerv2_m36(pretrained=False, **kwargs):
    """PoolFormerV2-M36."""
    return _mf("poolformerv2_m36", pretrained, kwargs, depths=_M36, dims=_DM, **_V2)


@register_model
def poolformerv2_m48(pretrained=False, **kwargs):
    """PoolFormerV2-M48."""
    return _mf("poolformerv2_m48", pretrained, kwargs, depths=_M48, dims=_DM, **_V2)


@register_model
def convformer_s18(pretrained=False, **kwargs):
    """ConvFormer-S18."""
    return _mf("convformer_s18", pretrained, kwargs, depths=_B18, dims=_DS, **_CONV)


@register_model
def convformer_s36(pretrained=False, **kwargs):
    """ConvFormer-S36."""
    return _mf("convformer_s36", pretrained, kwargs, depths=_B36, dims=_DS, **_CONV)


@register_model
def convformer_m36(pretrained=False, **kwargs):
    """ConvFormer-M36."""
    return _mf("convformer_m36", pretrained, kwargs, depths=_B36, dims=(96, 192, 384, 576), **_CONV)


@register_model
def convformer_b36(pretrained=False, **kwargs):
    """ConvFormer-B36."""
    return _mf("convformer_b36", pretrained, kwargs, depths=_B36, dims=(128, 256, 512, 768), **_CONV)


@register_model
def caformer_s18(pretrained=False, **kwargs):
    """CAFormer-S18 (conv stages 1-2, attention stages 3-4)."""
    return _mf("caformer_s18", pretrained, kwargs, depths=_B18, dims=_DS, **_CA)


@register_model
def caformer_s36(pretrained=False, **kwargs):
    """CAFormer-S36."""
    return _mf("caformer_s36", pretrained, kwargs, depths=_B36, dims=_DS, **_CA)


@register_model
def caformer_m36(pretrained=False, **kwargs):
    """CAFormer-M36."""
    return _mf("caformer_m36", pretrained, kwargs, depths=_B36, dims=(96, 192, 384, 576), **_CA)


@register_model
def caformer_b36(pretrained=False, **kwargs):
    """CAFormer-B36."""
    return _mf("caformer_b36", pretrained, kwargs, depths=_B36, dims=(128, 256, 512, 768), **_CA)
