"""FAN: Fully Attentional Networks (Zhou et al., "Understanding The Robustness in Vision Transformers", ICML 2022,
arXiv 2204.12451).

A ViT whose MLP is replaced by attentional channel processing: a channel-attention vector (a sigmoid of softmax-
normalised queries against pooled keys, scaled by a learned per-head temperature) re-weights the channels of an
MLP applied to the tokens (the MLP holds a depthwise-conv branch). Token mixing is ordinary multi-head
self-attention; a Fourier positional encoding is added after a four-conv patch stem (ViT variants) or after the
first two stages of a ConvNeXt (hybrid variants); two CaiT class-attention blocks pool the tokens.

timm has no FAN: parameter names follow the authors' release (``patch_embed.proj.0.0``, ``pos_embed.token_projection``,
``blocks.3.mlp.mlp_v.dwconv.conv1``, ``cls_attn_blocks.1.attn.q``, ``patch_embed.backbone.stages.1.blocks.2.conv_dw``)
so their checkpoints load unchanged. Sizes from the paper's model table (FAN-T/S/B/L, ViT and hybrid) and the
authors' factories.

Ambiguous paper details and what is implemented (each as in the authors' code, so their checkpoints give their
outputs): the channel MLP applies no activation between its first linear layer and the depthwise branch; the
class-attention blocks normalise all tokens (``tokens_norm``) and add the normalised patch tokens back to the
residual; the hybrid ``_p4`` models use ConvNeXt stages of depths 3-3 (3-5 for L) with 128/256 channels and a
2x2/2 projection, so the tokens still have stride 16. ``fan_*_in22k_1k`` and ``_384`` are the same architectures
(ImageNet-22k pretraining, 384 input).
"""
import math
from functools import partial
from typing import List, Optional, Sequence, Union

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.layers import ClassAttn, DropPath, LayerNorm2d, trunc_normal_
from flowvision.layers import Mlp as ClassMlp

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none, linear_head
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model
from .convnext import ConvNeXtStage

__all__ = ["FAN"]

_norm = partial(nn.LayerNorm, eps=1e-6)


class PositionalEncodingFourier(nn.Module):
    """Sine/cosine encoding of normalised (y, x) positions (32 frequencies each), projected by a 1x1 conv."""

    def __init__(self, hidden_dim: int = 32, dim: int = 768, temperature: float = 10000.0):
        super().__init__()
        self.token_projection = nn.Conv2d(hidden_dim * 2, dim, 1)
        self.hidden_dim = hidden_dim
        self.temperature = temperature

    def forward(self, b: int, h: int, w: int):
        import numpy as np
        eps, scale = 1e-6, 2 * math.pi
        y = np.arange(1, h + 1, dtype=np.float32)[:, None].repeat(w, 1)
        x = np.arange(1, w + 1, dtype=np.float32)[None, :].repeat(h, 0)
        y = y / (y[-1:, :] + eps) * scale
        x = x / (x[:, -1:] + eps) * scale
        dim_t = np.arange(self.hidden_dim, dtype=np.float32)
        dim_t = (self.temperature ** (2 * (dim_t // 2) / self.hidden_dim)).astype(np.float32)

        def enc(p):
            p = p[:, :, None] / dim_t
            return np.stack([np.sin(p[:, :, 0::2]), np.cos(p[:, :, 1::2])], axis=3).reshape(h, w, -1)

        pos = np.concatenate([enc(y), enc(x)], axis=2).transpose(2, 0, 1)[None].astype(np.float32)
        pos = self.token_projection(flow.from_numpy(pos.copy()).to(self.token_projection.weight.dtype))
        return pos.expand(b, -1, -1, -1)


def _conv3x3_bn(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout))


class ConvPatchEmbed(nn.Module):
    """Four 3x3/2 conv+BN layers with GELU between them (patch 16): (B, 3, H, W) -> (B, C, H/16, W/16)."""

    def __init__(self, in_chans: int, embed_dim: int):
        super().__init__()
        d = embed_dim
        self.proj = nn.Sequential(_conv3x3_bn(in_chans, d // 8, 2), nn.GELU(), _conv3x3_bn(d // 8, d // 4, 2),
                                  nn.GELU(), _conv3x3_bn(d // 4, d // 2, 2), nn.GELU(), _conv3x3_bn(d // 2, d, 2))

    def forward(self, x):
        return self.proj(x)


class ConvNeXtBackbone(nn.Module):
    """The hybrid models' stem: a 4x4/4 conv + LayerNorm2d and two ConvNeXt stages (the second downsamples)."""

    def __init__(self, in_chans: int, depths: Sequence[int], dims: Sequence[int] = (128, 256)):
        super().__init__()
        norm = partial(LayerNorm2d, eps=1e-6)
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], 4, 4), norm(dims[0]))
        self.stages = nn.Sequential(*[
            ConvNeXtStage(dims[max(i - 1, 0)], dims[i], stride=2 if i else 1, depth=depths[i], ls_init_value=1e-6,
                          conv_mlp=True, norm_layer=norm) for i in range(len(depths))])
        self.num_features = dims[len(depths) - 1]

    def forward(self, x):
        return self.stages(self.stem(x))


class HybridEmbed(nn.Module):
    """ConvNeXt feature map (stride 8) -> 2x2/2 conv projection to the embedding (stride 16)."""

    def __init__(self, backbone: ConvNeXtBackbone, embed_dim: int, patch_size: int = 2):
        super().__init__()
        self.backbone = backbone
        self.proj = nn.Conv2d(backbone.num_features, embed_dim, patch_size, patch_size)

    def forward(self, x):
        return self.proj(self.backbone(x))


class DWConv(nn.Module):
    """3x3 depthwise conv -> GELU -> BatchNorm -> 3x3 depthwise conv over the token map."""

    def __init__(self, dim: int):
        super().__init__()
        self.conv1 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.act = nn.GELU()
        self.bn = nn.BatchNorm2d(dim)
        self.conv2 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, h: int, w: int):
        b, n, c = x.shape
        x = self.conv2(self.bn(self.act(self.conv1(x.transpose(1, 2).reshape(b, c, h, w)))))
        return x.reshape(b, c, n).transpose(1, 2)


class Mlp(nn.Module):
    """fc1 -> (+ gamma * depthwise branch) -> fc2 (the channel-processing MLP; ``act`` is unused, as in the
    authors' code)."""

    def __init__(self, dim: int, hidden: int, drop: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = DWConv(hidden)
        self.gamma = nn.Parameter(flow.ones(hidden))
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x, h: int, w: int):
        x = self.fc1(x)
        x = self.drop(self.gamma * self.dwconv(x, h, w)) + x
        return self.drop(self.fc2(x))


class TokenMixing(nn.Module):
    """Multi-head self-attention with separate ``q`` and ``kv`` projections."""

    def __init__(self, dim: int, num_heads: int, qkv_bias: bool = True, attn_drop: float = 0.0,
                 proj_drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.num_heads, c // self.num_heads).transpose(1, 2)
        k, v = self.kv(x).reshape(b, n, 2, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class ChannelProcessing(nn.Module):
    """Attentional channel processing: per head, sigmoid(softmax_N(q)^T . mean_d(softmax_N(k))) * temperature
    re-weights the channels of LayerNorm(Mlp(tokens))."""

    def __init__(self, dim: int, num_heads: int, qkv_bias: bool = True, attn_drop: float = 0.0,
                 mlp_hidden_dim: Optional[int] = None, drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.temperature = nn.Parameter(flow.ones(num_heads, 1, 1))
        self.mlp_v = Mlp(dim, mlp_hidden_dim or dim, drop)
        self.norm_v = _norm(dim)
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)

    def forward(self, x, h: int, w: int):
        b, n, c = x.shape
        nh, d = self.num_heads, c // self.num_heads
        # (B, nh, d, N) layouts: both softmaxes run over the last (token) dim, and the keys' mean over the head
        # channels is a product with a 1/d vector (GEMMs and last-dim softmaxes are native captured steps)
        q = self.q(x).reshape(b, n, nh, d).permute(0, 2, 3, 1).softmax(dim=-1)
        k = x.reshape(b, n, nh, d).permute(0, 2, 3, 1).softmax(dim=-1)
        k_mean = k.transpose(-1, -2) @ flow.full((d, 1), 1.0 / d, dtype=x.dtype)  # (B, nh, N, 1)
        attn = (q @ k_mean).sigmoid() * self.temperature  # (B, nh, d, 1)
        attn = self.attn_drop(attn)
        v = self.norm_v(self.mlp_v(x, h, w)).reshape(b, n, nh, d).permute(0, 2, 3, 1)  # (B, nh, d, N)
        return (attn * v).permute(0, 3, 1, 2).reshape(b, n, c)


class FANBlock(nn.Module):
    """LayerNorm -> token mixing and LayerNorm -> channel processing, each scaled per channel (LayerScale).

    Input and output (B, N, C); the token grid size is set by the model before the call (``grid``)."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = True, drop: float = 0.0,
                 attn_drop: float = 0.0, drop_path: float = 0.0, eta: float = 1.0):
        super().__init__()
        self.norm1 = _norm(dim)
        self.attn = TokenMixing(dim, num_heads, qkv_bias, attn_drop, drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = _norm(dim)
        self.mlp = ChannelProcessing(dim, num_heads, qkv_bias, attn_drop, int(dim * mlp_ratio), drop)
        self.gamma1 = nn.Parameter(eta * flow.ones(dim))
        self.gamma2 = nn.Parameter(eta * flow.ones(dim))
        self.grid = (0, 0)

    def forward(self, x):
        h, w = self.grid
        x = x + self.drop_path(self.gamma1 * self.attn(self.norm1(x)))
        return x + self.drop_path(self.gamma2 * self.mlp(self.norm2(x), h, w))


class ClassAttentionBlock(nn.Module):
    """Class-attention block with ``tokens_norm`` (the authors' FAN setting): all tokens are normalised by
    ``norm2``, and the normalised patch tokens are added back to the residual."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = True, drop: float = 0.0,
                 attn_drop: float = 0.0, eta: float = 1.0):
        super().__init__()
        self.norm1 = _norm(dim)
        self.attn = ClassAttn(dim, num_heads, qkv_bias, attn_drop, drop)
        self.norm2 = _norm(dim)
        self.mlp = ClassMlp(dim, int(dim * mlp_ratio), drop=drop)
        self.gamma1 = nn.Parameter(eta * flow.ones(dim))
        self.gamma2 = nn.Parameter(eta * flow.ones(dim))

    def forward(self, x):
        xn = self.norm1(x)
        x = x + self.gamma1 * flow.cat([self.attn(xn), xn[:, 1:]], dim=1)
        x = self.norm2(x)
        return x + flow.cat([self.gamma2 * self.mlp(x[:, 0:1]), x[:, 1:]], dim=1)


class FAN(ClassifierContract, nn.Module):
    """Fully Attentional Network image classifier (ViT or ConvNeXt-hybrid stem).

    Args:
        in_chans, num_classes: as usual (0 classes: no head). embed_dim, depth, num_heads: the FAN blocks.
        backbone_depths: ConvNeXt stage depths of a hybrid stem (None: the four-conv patch stem).
        mlp_ratio, qkv_bias, drop_rate, attn_drop_rate, drop_path_rate: as in ViT.
        eta: LayerScale init. cls_attn_layers: class-attention blocks. head_init_scale: classifier init scale.
        global_pool: 'token' (the class token) or '' (all tokens from forward_features).
    """

    def __init__(self, in_chans: int = 3, num_classes: int = 1000, embed_dim: int = 384, depth: int = 12,
                 num_heads: int = 8, backbone_depths: Optional[Sequence[int]] = None, mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop_rate: float = 0.0, attn_drop_rate: float = 0.0,
                 drop_path_rate: float = 0.0, eta: float = 1.0, cls_attn_layers: int = 2,
                 head_init_scale: float = 1.0, global_pool: str = "token", img_size=None):
        super().__init__()
        if global_pool not in ("token", ""):
            raise ValueError(f"global_pool must be 'token' or '', got {global_pool!r}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = global_pool
        self.grad_checkpointing = False
        if backbone_depths is None:
            self.patch_embed = ConvPatchEmbed(in_chans, embed_dim)
        else:
            self.patch_embed = HybridEmbed(ConvNeXtBackbone(in_chans, backbone_depths), embed_dim)
        self.pos_embed = PositionalEncodingFourier(dim=embed_dim)
        self.pos_drop = nn.Dropout(drop_rate)
        # the authors' code applies the same drop-path rate to every block
        self.blocks = nn.ModuleList([FANBlock(embed_dim, num_heads, mlp_ratio, qkv_bias, drop_rate, attn_drop_rate,
                                              drop_path_rate, eta) for _ in range(depth)])
        self.cls_token = nn.Parameter(flow.zeros(1, 1, embed_dim))
        self.cls_attn_blocks = nn.ModuleList([ClassAttentionBlock(embed_dim, num_heads, mlp_ratio, qkv_bias, drop_rate,
                                                                  attn_drop_rate, eta)
                                              for _ in range(cls_attn_layers)])
        self.num_features = self.head_hidden_size = embed_dim
        self.norm = _norm(embed_dim)
        self.head = linear_head(embed_dim, num_classes)
        self.feature_info = [dict(num_chs=embed_dim, reduction=16, module=f"blocks.{i}") for i in range(depth)]
        trunc_normal_(self.cls_token, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        if num_classes > 0:
            with flow.no_grad():
                self.head.weight.mul_(head_init_scale)
                self.head.bias.mul_(head_init_scale)

    no_weight_decay_names = {"cls_token"}

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^(?:patch_embed|pos_embed|cls_token)",
                    blocks=[(r"^blocks\.(\d+)", None), (r"^cls_attn_blocks\.(\d+)", (99999,)), (r"^norm", (99999,))])

    def reset_classifier(self, num_classes: int, global_pool: Optional[str] = None) -> None:
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            if global_pool not in ("token", ""):
                raise ValueError(f"global_pool must be 'token' or '', got {global_pool!r}")
            self.global_pool = global_pool
        self.head = linear_head(self.num_features, num_classes)

    def _tokens(self, x):
        x = self.patch_embed(x)
        b, c, h, w = x.shape
        x = (x + self.pos_embed(b, h, w)).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            blk.grid = (h, w)
        return self.pos_drop(x), (h, w)

    def forward_intermediates(self, x, indices: Optional[Union[int, List[int]]] = None, norm: bool = False,
                              stop_early: bool = False, output_fmt: str = "NCHW",
                              intermediates_only: bool = False):
        """(final features, [outputs of the FAN blocks in ``indices``, NCHW]) (timm's ViT semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"FAN's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        take, max_index = feature_take_indices(len(self.blocks), indices)
        x, (h, w) = self._tokens(x)
        outs = []
        last = max_index if stop_early else len(self.blocks) - 1
        for i in range(last + 1):
            x = self.blocks[i](x)
            if i in take:
                outs.append(x.transpose(1, 2).reshape(x.shape[0], -1, h, w))
        if intermediates_only:
            return outs
        return (self._pool_tokens(x) if last == len(self.blocks) - 1 else x), outs

    def _pool_tokens(self, x):
        x = flow.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        for blk in self.cls_attn_blocks:
            x = blk(x)
        return self.norm(x)

    def forward_features(self, x):
        """(B, 1 + N, C): the class token and the patch tokens after the class-attention blocks and norm."""
        check_input_channels(x, self.in_chans)
        x, _ = self._tokens(x)
        return self._pool_tokens(self.run_blocks(self.blocks, x))

    def forward_head(self, x, pre_logits: bool = False):
        if self.global_pool == "token":
            x = x[:, 0]
        return x if pre_logits else self.head(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=1.0,
                   interpolation="bicubic", fixed_input_size=False, mean=IMAGENET_DEFAULT_MEAN,
                   std=IMAGENET_DEFAULT_STD, first_conv="patch_embed.proj.0.0", classifier="head",
                   license="nvidia-source-code"), **kwargs}


_HY = "patch_embed.backbone.stem.0"
_VARIANTS = {  # (embed_dim, depth, heads, hybrid backbone depths, head_init_scale) from the authors' factories
    "fan_tiny_12_p16_224": (192, 12, 4, None, 1.0), "fan_small_12_p16_224": (384, 12, 8, None, 1.0),
    "fan_base_18_p16_224": (448, 18, 8, None, 1.0), "fan_large_24_p16_224": (480, 24, 10, None, 1.0),
    "fan_tiny_8_p4_hybrid": (192, 8, 8, (3, 3), 1.0), "fan_small_12_p4_hybrid": (384, 10, 8, (3, 3), 1.0),
    "fan_base_16_p4_hybrid": (448, 16, 8, (3, 3), 1.0), "fan_large_16_p4_hybrid": (480, 22, 10, (3, 5), 0.001)}
_IN22K = {"fan_base_16_p4_hybrid_in22k_1k": ("fan_base_16_p4_hybrid", 224),
          "fan_base_16_p4_hybrid_in22k_1k_384": ("fan_base_16_p4_hybrid", 384),
          "fan_large_16_p4_hybrid_in22k_1k": ("fan_large_16_p4_hybrid", 224),
          "fan_large_16_p4_hybrid_in22k_1k_384": ("fan_large_16_p4_hybrid", 384)}

default_cfgs = generate_default_cfgs({
    **{name: _cfg(first_conv=_HY if v[3] else "patch_embed.proj.0.0") for name, v in _VARIANTS.items()},
    **{name: _cfg(first_conv=_HY, input_size=(3, size, size)) for name, (_, size) in _IN22K.items()}})


def _fan(variant: str, pretrained: bool, kwargs):
    dim, depth, heads, backbone, head_init = _VARIANTS[_IN22K.get(variant, (variant,))[0]]
    arch = dict(embed_dim=dim, depth=depth, num_heads=heads, backbone_depths=backbone, head_init_scale=head_init)
    return build_model_with_cfg(FAN, variant, pretrained, feature_cfg=dict(feature_cls="getter",
                                                                           out_indices=(-1,)),
                                **{**arch, **kwargs})


@register_model
def fan_tiny_12_p16_224(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-T-ViT: 12 blocks, 192 channels, 4 heads."""
    return _fan("fan_tiny_12_p16_224", pretrained, kwargs)


@register_model
def fan_small_12_p16_224(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-S-ViT: 12 blocks, 384 channels, 8 heads."""
    return _fan("fan_small_12_p16_224", pretrained, kwargs)


@register_model
def fan_base_18_p16_224(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-B-ViT: 18 blocks, 448 channels, 8 heads."""
    return _fan("fan_base_18_p16_224", pretrained, kwargs)


@register_model
def fan_large_24_p16_224(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-L-ViT: 24 blocks, 480 channels, 10 heads."""
    return _fan("fan_large_24_p16_224", pretrained, kwargs)


@register_model
def fan_tiny_8_p4_hybrid(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-T-Hybrid: ConvNeXt stages 3-3, then 8 FAN blocks of 192 channels."""
    return _fan("fan_tiny_8_p4_hybrid", pretrained, kwargs)


@register_model
def fan_small_12_p4_hybrid(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-S-Hybrid: ConvNeXt stages 3-3, then 10 FAN blocks of 384 channels."""
    return _fan("fan_small_12_p4_hybrid", pretrained, kwargs)


@register_model
def fan_base_16_p4_hybrid(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-B-Hybrid: ConvNeXt stages 3-3, then 16 FAN blocks of 448 channels."""
    return _fan("fan_base_16_p4_hybrid", pretrained, kwargs)


@register_model
def fan_large_16_p4_hybrid(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-L-Hybrid: ConvNeXt stages 3-5, then 22 FAN blocks of 480 channels."""
    return _fan("fan_large_16_p4_hybrid", pretrained, kwargs)


@register_model
def fan_base_16_p4_hybrid_in22k_1k(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-B-Hybrid, ImageNet-22k pretrained and 1k fine-tuned."""
    return _fan("fan_base_16_p4_hybrid_in22k_1k", pretrained, kwargs)


@register_model
def fan_base_16_p4_hybrid_in22k_1k_384(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-B-Hybrid at 384x384, ImageNet-22k pretrained and 1k fine-tuned."""
    return _fan("fan_base_16_p4_hybrid_in22k_1k_384", pretrained, kwargs)


@register_model
def fan_large_16_p4_hybrid_in22k_1k(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-L-Hybrid, ImageNet-22k pretrained and 1k fine-tuned."""
    return _fan("fan_large_16_p4_hybrid_in22k_1k", pretrained, kwargs)


@register_model
def fan_large_16_p4_hybrid_in22k_1k_384(pretrained: bool = False, **kwargs) -> FAN:
    """FAN-L-Hybrid at 384x384, ImageNet-22k pretrained and 1k fine-tuned."""
    return _fan("fan_large_16_p4_hybrid_in22k_1k_384", pretrained, kwargs)
