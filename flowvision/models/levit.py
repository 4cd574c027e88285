"""LeViT (Graham et al., "LeViT: a Vision Transformer in ConvNet's Clothing for Faster Inference", ICCV 2021).

A conv stem (stride 16), then attention stages whose linear layers carry BatchNorm, attention with a learned
per-head bias indexed by relative position, and attention-based downsampling. The ``levit_conv_*`` variants
run the same network on NCHW maps with 1x1 convs (identical weights up to shape). timm's names; the
original flowvision names ``levit_128s ... levit_384`` are timm's.
"""
from collections import OrderedDict
from functools import partial

import numpy as np

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, get_act_layer, to_2tuple, to_ntuple, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, check_mean_pool, classifier_or_none
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["Levit", "LevitDistilled"]


class ConvNorm(nn.Module):
    """Bias-free conv + BatchNorm2d."""

    def __init__(self, in_chs, out_chs, kernel_size=1, stride=1, padding=0, dilation=1, groups=1, bn_weight_init=1):
        super().__init__()
        self.linear = nn.Conv2d(in_chs, out_chs, kernel_size, stride, padding, dilation, groups, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        nn.init.constant_(self.bn.weight, bn_weight_init)

    def forward(self, x):
        return self.bn(self.linear(x))


class LinearNorm(nn.Module):
    """Bias-free linear + BatchNorm1d over all tokens."""

    def __init__(self, in_features, out_features, bn_weight_init=1):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bn = nn.BatchNorm1d(out_features)
        nn.init.constant_(self.bn.weight, bn_weight_init)

    def forward(self, x):
        x = self.linear(x)
        return self.bn(x.flatten(0, 1)).reshape(x.shape)


class NormLinear(nn.Module):
    """BatchNorm1d -> dropout -> linear (the classifier heads)."""

    def __init__(self, in_features, out_features, bias=True, std=0.02, drop=0.0):
        super().__init__()
        self.bn = nn.BatchNorm1d(in_features)
        self.drop = nn.Dropout(drop)
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        trunc_normal_(self.linear.weight, std=std)
        if self.linear.bias is not None:
            nn.init.zeros_(self.linear.bias)

    def forward(self, x):
        return self.linear(self.drop(self.bn(x)))


class _Stem(nn.Sequential):
    """3x3 stride-2 ConvNorms with activations between: 3 (stride 8) or 4 (stride 16)."""

    def __init__(self, in_chs, out_chs, act_layer, n):
        super().__init__()
        self.stride = 2 ** n
        chs = [in_chs] + [out_chs // 2 ** (n - 1 - i) for i in range(n)]
        for i in range(n):
            if i:
                self.add_module(f"act{i}", act_layer())
            self.add_module(f"conv{i + 1}", ConvNorm(chs[i], chs[i + 1], 3, stride=2, padding=1))


def Stem8(in_chs, out_chs, act_layer):  # noqa: N802 (timm's class name)
    return _Stem(in_chs, out_chs, act_layer, 3)


def Stem16(in_chs, out_chs, act_layer):  # noqa: N802
    return _Stem(in_chs, out_chs, act_layer, 4)


class Downsample(nn.Module):
    """Token subsampling on the (resolution) grid: every ``stride``-th token (or a 3x3 average pool)."""

    def __init__(self, stride, resolution, use_pool=False):
        super().__init__()
        self.stride = stride
        self.resolution = to_2tuple(resolution)
        self.pool = nn.AvgPool2d(3, stride=stride, padding=1, count_include_pad=False) if use_pool else None

    def forward(self, x):
        b, _, c = x.shape
        x = x.reshape(b, self.resolution[0], self.resolution[1], c)
        if self.pool is not None:
            x = self.pool(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        else:
            x = x[:, ::self.stride, ::self.stride]
        return x.reshape(b, -1, c)


def _rel_pos_idxs(resolution, stride=1):
    """Index into a (heads, H*W) bias table for every (query, key) pair: |dy| * W + |dx| (queries every
    ``stride``-th position)."""
    h, w = resolution
    k = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij")).reshape(2, -1)
    q = np.stack(np.meshgrid(np.arange(0, h, stride), np.arange(0, w, stride), indexing="ij")).reshape(2, -1)
    rel = np.abs(q[:, :, None] - k[:, None, :])
    return flow.from_numpy((rel[0] * w + rel[1]).astype(np.int64))


class _BiasedAttention(nn.Module):
    """Shared by Attention and AttentionDownsample: the learned relative-position bias per head."""

    def _init_bias(self, num_heads, resolution, stride=1):
        self.attention_biases = nn.Parameter(flow.zeros(num_heads, resolution[0] * resolution[1]))
        self.register_buffer("attention_bias_idxs", _rel_pos_idxs(resolution, stride), persistent=False)

    def attention_bias(self):
        return self.attention_biases[:, self.attention_bias_idxs]

    def _attend(self, q, k, v):
        """softmax(q k * scale + bias) v for token (B, heads, N, d) inputs; k is (B, heads, d, N)."""
        return ((q @ k) * self.scale + self.attention_bias()).softmax(dim=-1) @ v


class Attention(_BiasedAttention):
    """LeViT attention: qkv from one LinearNorm/ConvNorm, value width ``attn_ratio * key_dim``."""

    def __init__(self, dim, key_dim, num_heads=8, attn_ratio=4.0, resolution=14, use_conv=False,
                 act_layer=nn.SiLU):
        super().__init__()
        ln_layer = ConvNorm if use_conv else LinearNorm
        resolution = to_2tuple(resolution)
        self.use_conv = use_conv
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.key_attn_dim = key_dim * num_heads
        self.val_dim = int(attn_ratio * key_dim)
        self.val_attn_dim = self.val_dim * num_heads
        self.resolution = resolution
        self.qkv = ln_layer(dim, self.val_attn_dim + self.key_attn_dim * 2)
        self.proj = nn.Sequential(OrderedDict([("act", act_layer()),
                                               ("ln", ln_layer(self.val_attn_dim, dim, bn_weight_init=0))]))
        self._init_bias(num_heads, resolution)

    def forward(self, x):
        split = [self.key_dim, self.key_dim, self.val_dim]
        if self.use_conv:
            b, _, h, w = x.shape
            q, k, v = self.qkv(x).reshape(b, self.num_heads, -1, h * w).split(split, dim=2)
            x = self._attend(q.transpose(-2, -1), k, v.transpose(-2, -1)).transpose(-2, -1).reshape(b, -1, h, w)
        else:
            b, n, _ = x.shape
            q, k, v = self.qkv(x).reshape(b, n, self.num_heads, -1).split(split, dim=3)
            x = self._attend(q.permute(0, 2, 1, 3), k.permute(0, 2, 3, 1), v.permute(0, 2, 1, 3))
            x = x.transpose(1, 2).reshape(b, n, self.val_attn_dim)
        return self.proj(x)


class AttentionDownsample(_BiasedAttention):
    """Attention whose queries come from a subsampled grid: halves the resolution, changes the width."""

    def __init__(self, in_dim, out_dim, key_dim, num_heads=8, attn_ratio=2.0, stride=2, resolution=14,
                 use_conv=False, use_pool=False, act_layer=nn.SiLU):
        super().__init__()
        resolution = to_2tuple(resolution)
        self.stride = stride
        self.resolution = resolution
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.key_attn_dim = key_dim * num_heads
        self.val_dim = int(attn_ratio * key_dim)
        self.val_attn_dim = self.val_dim * num_heads
        self.scale = key_dim ** -0.5
        self.use_conv = use_conv
        if use_conv:
            ln_layer = ConvNorm
            sub_layer = partial(nn.AvgPool2d, kernel_size=3 if use_pool else 1, padding=1 if use_pool else 0,
                                count_include_pad=False)
        else:
            ln_layer = LinearNorm
            sub_layer = partial(Downsample, resolution=resolution, use_pool=use_pool)
        self.kv = ln_layer(in_dim, self.val_attn_dim + self.key_attn_dim)
        self.q = nn.Sequential(OrderedDict([("down", sub_layer(stride=stride)),
                                            ("ln", ln_layer(in_dim, self.key_attn_dim))]))
        self.proj = nn.Sequential(OrderedDict([("act", act_layer()), ("ln", ln_layer(self.val_attn_dim, out_dim))]))
        self._init_bias(num_heads, resolution, stride)

    def forward(self, x):
        if self.use_conv:
            b, _, h, w = x.shape
            hh, ww = (h - 1) // self.stride + 1, (w - 1) // self.stride + 1
            k, v = self.kv(x).reshape(b, self.num_heads, -1, h * w).split([self.key_dim, self.val_dim], dim=2)
            q = self.q(x).reshape(b, self.num_heads, self.key_dim, -1)
            x = self._attend(q.transpose(-2, -1), k, v.transpose(-2, -1)).transpose(-2, -1)
            x = x.reshape(b, self.val_attn_dim, hh, ww)
        else:
            b, n, _ = x.shape
            k, v = self.kv(x).reshape(b, n, self.num_heads, -1).split([self.key_dim, self.val_dim], dim=3)
            q = self.q(x).reshape(b, -1, self.num_heads, self.key_dim).permute(0, 2, 1, 3)
            x = self._attend(q, k.permute(0, 2, 3, 1), v.permute(0, 2, 1, 3))
            x = x.transpose(1, 2).reshape(b, -1, self.val_attn_dim)
        return self.proj(x)


class LevitMlp(nn.Module):
    """LinearNorm -> act -> LinearNorm (ConvNorms in conv mode)."""

    def __init__(self, in_features, hidden_features=None, out_features=None, use_conv=False, act_layer=nn.SiLU,
                 drop=0.0):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        ln_layer = ConvNorm if use_conv else LinearNorm
        self.ln1 = ln_layer(in_features, hidden_features)
        self.act = act_layer()
        self.drop = nn.Dropout(drop)
        self.ln2 = ln_layer(hidden_features, out_features, bn_weight_init=0)

    def forward(self, x):
        return self.ln2(self.drop(self.act(self.ln1(x))))


class LevitDownsample(nn.Module):
    """Attention downsampling followed by a residual MLP."""

    def __init__(self, in_dim, out_dim, key_dim, num_heads=8, attn_ratio=4.0, mlp_ratio=2.0, act_layer=nn.SiLU,
                 attn_act_layer=None, resolution=14, use_conv=False, use_pool=False, drop_path=0.0):
        super().__init__()
        self.attn_downsample = AttentionDownsample(in_dim, out_dim, key_dim, num_heads=num_heads,
                                                   attn_ratio=attn_ratio, act_layer=attn_act_layer or act_layer,
                                                   resolution=resolution, use_conv=use_conv, use_pool=use_pool)
        self.mlp = LevitMlp(out_dim, int(out_dim * mlp_ratio), use_conv=use_conv, act_layer=act_layer)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        x = self.attn_downsample(x)
        return x + self.drop_path(self.mlp(x))


class LevitBlock(nn.Module):
    """Residual attention + residual MLP (no LayerNorm: the BatchNorms inside the linears normalise)."""

    def __init__(self, dim, key_dim, num_heads=8, attn_ratio=4.0, mlp_ratio=2.0, resolution=14, use_conv=False,
                 act_layer=nn.SiLU, attn_act_layer=None, drop_path=0.0):
        super().__init__()
        self.attn = Attention(dim, key_dim, num_heads=num_heads, attn_ratio=attn_ratio, resolution=resolution,
                              use_conv=use_conv, act_layer=attn_act_layer or act_layer)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.mlp = LevitMlp(dim, int(dim * mlp_ratio), use_conv=use_conv, act_layer=act_layer)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.attn(x))
        return x + self.drop_path2(self.mlp(x))


class LevitStage(nn.Module):
    """[LevitDownsample] then ``depth`` LevitBlocks at the (halved) resolution."""

    def __init__(self, in_dim, out_dim, key_dim, depth=4, num_heads=8, attn_ratio=4.0, mlp_ratio=4.0,
                 act_layer=nn.SiLU, attn_act_layer=None, resolution=14, downsample="", use_conv=False,
                 drop_path=0.0):
        super().__init__()
        resolution = to_2tuple(resolution)
        if downsample:
            self.downsample = LevitDownsample(in_dim, out_dim, key_dim=key_dim, num_heads=in_dim // key_dim,
                                              attn_ratio=4.0, mlp_ratio=2.0, act_layer=act_layer,
                                              attn_act_layer=attn_act_layer, resolution=resolution,
                                              use_conv=use_conv, drop_path=drop_path)
            resolution = [(r - 1) // 2 + 1 for r in resolution]
        else:
            if in_dim != out_dim:
                raise ValueError("a stage without downsampling keeps its width")
            self.downsample = nn.Identity()
        self.blocks = nn.Sequential(*[LevitBlock(
            out_dim, key_dim, num_heads=num_heads, attn_ratio=attn_ratio, mlp_ratio=mlp_ratio, act_layer=act_layer,
            attn_act_layer=attn_act_layer, resolution=resolution, use_conv=use_conv, drop_path=drop_path)
            for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class Levit(ClassifierContract, nn.Module):
    """LeViT.

    Args:
        img_size: input size (the attention biases fix the resolution). in_chans, num_classes: as usual.
        embed_dim, key_dim, depth, num_heads, attn_ratio, mlp_ratio: per stage (key_dim shared).
        stem_type: 's16' or 's8'. down_op: 'subsample' (attention downsampling between stages).
        act_layer, attn_act_layer: activations (hard_swish by default).
        use_conv: run on NCHW maps with 1x1 convs instead of tokens with linears.
        global_pool: 'avg' or ''. drop_rate, drop_path_rate: head dropout and stochastic depth.
    """
    accepts_img_size = True

    def __init__(self, img_size=224, in_chans=3, num_classes=1000, embed_dim=(192,), key_dim=64, depth=(12,),
                 num_heads=(3,), attn_ratio=2.0, mlp_ratio=2.0, stem_type="s16", down_op="subsample",
                 act_layer="hard_swish", attn_act_layer=None, use_conv=False, global_pool="avg", drop_rate=0.0,
                 drop_path_rate=0.0):
        super().__init__()
        act_layer = get_act_layer(act_layer)
        attn_act_layer = get_act_layer(attn_act_layer or act_layer)
        if stem_type not in ("s16", "s8"):
            raise ValueError(f"stem_type must be 's16' or 's8', got {stem_type!r}")
        n = len(embed_dim)
        if len(depth) != n:
            raise ValueError("embed_dim and depth must have one entry per stage")
        self.use_conv = use_conv
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.num_features = self.head_hidden_size = embed_dim[-1]
        self.embed_dim = embed_dim
        self.drop_rate = drop_rate
        self.grad_checkpointing = False
        num_heads, attn_ratio, mlp_ratio = (to_ntuple(n)(v) for v in (num_heads, attn_ratio, mlp_ratio))
        self.stem = (Stem16 if stem_type == "s16" else Stem8)(in_chans, embed_dim[0], act_layer=act_layer)
        stride = self.stem.stride
        self.img_size = to_2tuple(img_size)
        resolution = tuple(i // stride for i in self.img_size)
        in_dim = embed_dim[0]
        stages = []
        self.feature_info = []
        for i in range(n):
            stage_stride = 2 if i > 0 else 1
            stages.append(LevitStage(in_dim, embed_dim[i], key_dim, depth=depth[i], num_heads=num_heads[i],
                                     attn_ratio=attn_ratio[i], mlp_ratio=mlp_ratio[i], act_layer=act_layer,
                                     attn_act_layer=attn_act_layer, resolution=resolution, use_conv=use_conv,
                                     downsample=down_op if stage_stride == 2 else "", drop_path=drop_path_rate))
            stride *= stage_stride
            resolution = tuple((r - 1) // stage_stride + 1 for r in resolution)
            self.feature_info.append(dict(num_chs=embed_dim[i], reduction=stride, module=f"stages.{i}"))
            in_dim = embed_dim[i]
        self.stages = nn.Sequential(*stages)
        self.head = self._head(num_classes)

    @property
    def no_weight_decay_names(self):
        return {k for k in self.state_dict() if "attention_biases" in k}

    def _head(self, num_classes):
        return NormLinear(self.num_features, num_classes, drop=self.drop_rate) if num_classes > 0 else nn.Identity()

    def group_matcher(self, coarse=False):
        return dict(stem=r"^stem", blocks=r"^stages\.(\d+)" if coarse else [
            (r"^stages\.(\d+)\.downsample", (0,)), (r"^stages\.(\d+)\.blocks\.(\d+)", None)])

    def _set_pool(self, global_pool):
        if global_pool is not None:
            self.global_pool = check_mean_pool(global_pool)

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        self._set_pool(global_pool)
        self.head = self._head(num_classes)

    def _stem(self, x):
        check_input_channels(x, self.in_chans)
        if tuple(x.shape[-2:]) != self.img_size:
            raise ValueError(f"input size ({x.shape[-2]}x{x.shape[-1]}) does not match the model "
                             f"({self.img_size[0]}x{self.img_size[1]}): LeViT's attention biases fix it")
        x = self.stem(x)
        return x if self.use_conv else x.flatten(2).transpose(1, 2)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final features, [stage outputs as NCHW maps]) for ``indices`` of the stages (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"LeViT's intermediates are NCHW, got output_fmt={output_fmt!r}")
        take, max_index = feature_take_indices(len(self.stages), indices)
        b = x.shape[0]
        x = self._stem(x)
        h, w = self.img_size[0] // self.stem.stride, self.img_size[1] // self.stem.stride
        intermediates = []
        for i, stage in enumerate(self.stages[:max_index + 1] if stop_early else self.stages):
            x = stage(x)
            if i in take:
                intermediates.append(x if self.use_conv else x.reshape(b, h, w, -1).permute(0, 3, 1, 2))
            h, w = (h + 1) // 2, (w + 1) // 2
        return intermediates if intermediates_only else (x, intermediates)

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        take, max_index = feature_take_indices(len(self.stages), indices)
        self.stages = self.stages[:max_index + 1]
        if max_index < len(self.feature_info) - 1:
            self.num_features = self.head_hidden_size = self.feature_info[max_index]["num_chs"]
        if prune_head or max_index < len(self.feature_info) - 1:
            self.reset_classifier(0, "")
        return take

    def forward_features(self, x):
        return self.run_blocks(self.stages, self._stem(x))

    def _pool(self, x):
        if self.global_pool == "avg":
            return x.mean(dim=(-2, -1)) if self.use_conv else x.mean(dim=1)
        return x

    def forward_head(self, x, pre_logits=False):
        x = self._pool(x)
        return x if pre_logits else self.head(x)


class LevitDistilled(Levit):
    """LeViT with a distillation head; inference averages the two heads (training with
    ``set_distilled_training(True)`` returns both)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_dist = self._head(self.num_classes)
        self.distilled_training = False

    def get_classifier(self, name_only=False):
        return ("head", "head_dist") if name_only else (self.head, self.head_dist)

    def reset_classifier(self, num_classes, global_pool=None):
        super().reset_classifier(num_classes, global_pool)
        self.head_dist = self._head(num_classes)

    def set_distilled_training(self, enable=True):
        self.distilled_training = enable

    def forward_head(self, x, pre_logits=False):
        x = self._pool(x)
        if pre_logits:
            return x
        x, x_dist = self.head(x), self.head_dist(x)
        if self.distilled_training and self.training:
            return x, x_dist
        return (x + x_dist) / 2


def _filter(state_dict, model=None):
    state_dict = state_dict.get("model", state_dict)
    return {k: v for k, v in state_dict.items() if "attention_bias_idxs" not in k}


_SILU = dict(act_layer="silu")
model_cfgs = dict(
    levit_128s=dict(embed_dim=(128, 256, 384), key_dim=16, num_heads=(4, 6, 8), depth=(2, 3, 4)),
    levit_128=dict(embed_dim=(128, 256, 384), key_dim=16, num_heads=(4, 8, 12), depth=(4, 4, 4)),
    levit_192=dict(embed_dim=(192, 288, 384), key_dim=32, num_heads=(3, 5, 6), depth=(4, 4, 4)),
    levit_256=dict(embed_dim=(256, 384, 512), key_dim=32, num_heads=(4, 6, 8), depth=(4, 4, 4)),
    levit_384=dict(embed_dim=(384, 512, 768), key_dim=32, num_heads=(6, 9, 12), depth=(4, 4, 4)),
    levit_384_s8=dict(embed_dim=(384, 512, 768), key_dim=32, num_heads=(6, 9, 12), depth=(4, 4, 4), stem_type="s8",
                      **_SILU),
    levit_512_s8=dict(embed_dim=(512, 640, 896), key_dim=64, num_heads=(8, 10, 14), depth=(4, 4, 4),
                      stem_type="s8", **_SILU),
    levit_512=dict(embed_dim=(512, 768, 1024), key_dim=64, num_heads=(8, 12, 16), depth=(4, 4, 4), **_SILU),
    levit_256d=dict(embed_dim=(256, 384, 512), key_dim=32, num_heads=(4, 6, 8), depth=(4, 8, 6), **_SILU),
    levit_512d=dict(embed_dim=(512, 640, 768), key_dim=64, num_heads=(8, 10, 12), depth=(4, 8, 6), **_SILU),
)
_DISTILLED = ("levit_128s", "levit_128", "levit_192", "levit_256", "levit_384", "levit_384_s8")


def _create(variant, pretrained=False, **kwargs):
    base = variant.replace("_conv", "")
    out_indices = kwargs.pop("out_indices", (0, 1, 2))
    cls = LevitDistilled if base in _DISTILLED else Levit
    # token mode: features through forward_intermediates (maps rebuilt from tokens), as timm
    feature_cls = "list" if "_conv" in variant else "getter"
    return build_model_with_cfg(cls, variant, pretrained, pretrained_filter_fn=_filter,
                                feature_cfg=dict(out_indices=out_indices, feature_cls=feature_cls),
                                **{**model_cfgs[base], "use_conv": "_conv" in variant, **kwargs})


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.9,
                   interpolation="bicubic", fixed_input_size=True, mean=IMAGENET_DEFAULT_MEAN,
                   std=IMAGENET_DEFAULT_STD, first_conv="stem.conv1.linear",
                   classifier=("head.linear", "head_dist.linear"), license="apache-2.0"), **kwargs}


default_cfgs = generate_default_cfgs({
    **{f"levit_{s}.fb_dist_in1k": _cfg(hf_hub_id="timm/") for s in ("128s", "128", "192", "256", "384")},
    **{f"levit_conv_{s}.fb_dist_in1k": _cfg(hf_hub_id="timm/", pool_size=(4, 4))
       for s in ("128s", "128", "192", "256", "384")},
    **{f"levit{c}_{s}.untrained": _cfg(classifier="head.linear") for c in ("", "_conv")
       for s in ("384_s8", "512_s8", "512", "256d", "512d")},
})


def _register(variant):
    def factory(pretrained=False, **kwargs):
        return _create(variant, pretrained=pretrained, **kwargs)
    factory.__name__ = factory.__qualname__ = variant
    factory.__module__ = __name__
    factory.__doc__ = f"LeViT {variant[len('levit_'):].replace('conv_', '')}" + \
        (" (conv mode: NCHW maps, 1x1 convs)." if "_conv" in variant else ".")
    globals()[variant] = register_model(factory)


for _v in model_cfgs:
    _register(_v)
    _register(_v.replace("levit_", "levit_conv_"))
