"""MaxViT-T with torchvision's structure and parameter names (``stem.{0,1}``,
``blocks.N.layers.M.layers.{MBconv,window_attention,grid_attention}``, ``classifier.{2,3,5}``).
torchvision-API only.

The model is built for one ``input_size`` (the window/grid partitions are fixed at construction, as in
torchvision); every stage's input must be divisible by ``partition_size``. With torchvision's defaults
(224 px, partition 7) the smallest input is 224; a small model for tests: ``MaxVit(input_size=(64, 64),
partition_size=2, ...)``.
"""
from collections import OrderedDict
from functools import partial

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.ops import Conv2dNormActivation, SqueezeExcitation, StochasticDepth

from ._api import define_tv_builders, overwrite_named_param, tv_weights_enums
from .swin_transformer import relative_position_index

__all__ = ["MaxVit"]


def _conv_out(size, kernel=3, stride=2, padding=1):
    return tuple((s - kernel + 2 * padding) // stride + 1 for s in size)


class MBConv(nn.Module):
    """Pre-norm inverted bottleneck (BN -> 1x1 -> depthwise 3x3 (stride) -> SE -> 1x1) plus a shortcut that
    average-pools and 1x1-projects when the shape changes."""

    def __init__(self, in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                 norm_layer, p_stochastic_dropout=0.0):
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)] + proj
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid = int(out_channels * expansion_ratio)
        sqz = int(out_channels * squeeze_ratio)
        self.stochastic_depth = (StochasticDepth(p_stochastic_dropout, mode="row") if p_stochastic_dropout
                                 else nn.Identity())
        self.layers = nn.Sequential(OrderedDict([
            ("pre_norm", norm_layer(in_channels)),
            ("conv_a", Conv2dNormActivation(in_channels, mid, kernel_size=1, stride=1, padding=0,
                                            activation_layer=activation_layer, norm_layer=norm_layer,
                                            inplace=None)),
            ("conv_b", Conv2dNormActivation(mid, mid, kernel_size=3, stride=stride, padding=1,
                                            activation_layer=activation_layer, norm_layer=norm_layer, groups=mid,
                                            inplace=None)),
            ("squeeze_excitation", SqueezeExcitation(mid, sqz, activation=nn.SiLU)),
            ("conv_c", nn.Conv2d(mid, out_channels, kernel_size=1, bias=True)),
        ]))

    def forward(self, x):
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """Attention inside each group of P tokens (input (B, G, P, D)) with a learned relative position bias.

    The keys are scaled by feat_dim ** -0.5 (not head_dim ** -0.5): torchvision's choice, kept for its weights.
    """

    def __init__(self, feat_dim, head_dim, max_seq_len):
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(max_seq_len ** 0.5)
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim ** -0.5
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            flow.zeros((2 * self.size - 1) * (2 * self.size - 1), self.n_heads))
        self.register_buffer("relative_position_index",
                             flow.from_numpy(relative_position_index(self.size, self.size).reshape(
                                 self.max_seq_len, self.max_seq_len)))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self):
        n = self.max_seq_len
        bias = self.relative_position_bias_table.index_select(0, self.relative_position_index.reshape(-1))
        return bias.reshape(n, n, -1).permute(2, 0, 1).unsqueeze(0)

    def forward(self, x):
        b, g, p, d = x.shape
        qkv = self.to_qkv(x).reshape(b, g, p, 3, self.n_heads, self.head_dim).permute(3, 0, 1, 4, 2, 5)
        q, k, v = qkv[0], qkv[1], qkv[2]
        # one fused SDPA over the (b, g, heads, p, hd) views: softmax(q k^T * scale_factor + bias) v
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=self.get_relative_positional_bias(),
                                             scale=self.scale_factor)
        out = out.permute(0, 1, 3, 2, 4).reshape(b, g, p, d)
        return self.merge(out)


class PartitionAttentionLayer(nn.Module):
    """Block ("window": P x P neighbours) or grid ("grid": a P x P lattice spread over the map) attention,
    then an MLP, both pre-norm residual. Partitioning and its inverse are reshapes/permutes."""

    def __init__(self, in_channels, head_dim, partition_size, partition_type, grid_size, mlp_ratio,
                 activation_layer, norm_layer, attention_dropout, mlp_dropout, p_stochastic_dropout):
        super().__init__()
        if partition_type not in ("grid", "window"):
            raise ValueError("partition_type must be either 'grid' or 'window'")
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        # p: the side of the tiles the map is reshaped into; grid attention then swaps tiles and positions
        self.p = partition_size if partition_type == "window" else self.n_partitions
        self.g = self.n_partitions if partition_type == "window" else partition_size
        self.attn_layer = nn.Sequential(norm_layer(in_channels),
                                        RelativePositionalMultiHeadAttention(in_channels, head_dim,
                                                                             partition_size ** 2),
                                        nn.Dropout(attention_dropout))
        self.mlp_layer = nn.Sequential(nn.LayerNorm(in_channels), nn.Linear(in_channels, in_channels * mlp_ratio),
                                       activation_layer(), nn.Linear(in_channels * mlp_ratio, in_channels),
                                       nn.Dropout(mlp_dropout))
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x):
        b, c, h, w = x.shape
        p = self.p
        if (h, w) != tuple(self.grid_size) or h % p or w % p:
            raise ValueError(f"MaxViT stage built for a {tuple(self.grid_size)} map (partition {p}) got {h}x{w}")
        gh, gw = h // p, w // p
        x = x.reshape(b, c, gh, p, gw, p).permute(0, 2, 4, 3, 5, 1).reshape(b, gh * gw, p * p, c)
        if self.partition_type == "grid":
            x = x.transpose(1, 2)
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        if self.partition_type == "grid":
            x = x.transpose(1, 2)
        return x.reshape(b, gh, gw, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)


class MaxVitLayer(nn.Module):
    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, stride, norm_layer,
                 activation_layer, head_dim, mlp_ratio, mlp_dropout, attention_dropout, p_stochastic_dropout,
                 partition_size, grid_size):
        super().__init__()
        attn = partial(PartitionAttentionLayer, in_channels=out_channels, head_dim=head_dim,
                       partition_size=partition_size, grid_size=grid_size, mlp_ratio=mlp_ratio,
                       activation_layer=activation_layer, norm_layer=nn.LayerNorm,
                       attention_dropout=attention_dropout, mlp_dropout=mlp_dropout,
                       p_stochastic_dropout=p_stochastic_dropout)
        self.layers = nn.Sequential(OrderedDict([
            ("MBconv", MBConv(in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                              norm_layer, p_stochastic_dropout)),
            ("window_attention", attn(partition_type="window")),
            ("grid_attention", attn(partition_type="grid")),
        ]))

    def forward(self, x):
        return self.layers(x)


class MaxVitBlock(nn.Module):
    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, norm_layer, activation_layer,
                 head_dim, mlp_ratio, mlp_dropout, attention_dropout, partition_size, input_grid_size, n_layers,
                 p_stochastic):
        super().__init__()
        if len(p_stochastic) != n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got p_stochastic={p_stochastic}.")
        self.grid_size = _conv_out(input_grid_size)
        self.layers = nn.ModuleList([
            MaxVitLayer(in_channels if i == 0 else out_channels, out_channels, squeeze_ratio, expansion_ratio,
                        2 if i == 0 else 1, norm_layer, activation_layer, head_dim, mlp_ratio, mlp_dropout,
                        attention_dropout, p, partition_size, self.grid_size)
            for i, p in enumerate(p_stochastic)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    def __init__(self, input_size, stem_channels, partition_size, block_channels, block_layers, head_dim,
                 stochastic_depth_prob, norm_layer=None, activation_layer=nn.GELU, squeeze_ratio=0.25,
                 expansion_ratio=4, mlp_ratio=4, mlp_dropout=0.0, attention_dropout=0.0, num_classes=1000):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        input_size = tuple(input_size)
        sizes, size = [], _conv_out(input_size)
        for _ in block_channels:
            size = _conv_out(size)
            sizes.append(size)
        for idx, s in enumerate(sizes):
            if s[0] % partition_size or s[1] % partition_size:
                raise ValueError(f"Input size {s} of block {idx} is not divisible by partition size "
                                 f"{partition_size}. Consider changing the partition size or the input size.\n"
                                 f"Current configuration yields the following block input sizes: {sizes}.")
        self.input_size = input_size
        self.stem = nn.Sequential(
            Conv2dNormActivation(3, stem_channels, 3, stride=2, norm_layer=norm_layer,
                                 activation_layer=activation_layer, bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None, activation_layer=None,
                                 bias=True))
        size = _conv_out(input_size)
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        p_stochastic = np.linspace(0, stochastic_depth_prob, sum(block_layers)).tolist()
        idx = 0
        for in_chs, out_chs, n in zip([stem_channels] + list(block_channels[:-1]), block_channels, block_layers):
            self.blocks.append(MaxVitBlock(in_chs, out_chs, squeeze_ratio, expansion_ratio, norm_layer,
                                           activation_layer, head_dim, mlp_ratio, mlp_dropout, attention_dropout,
                                           partition_size, size, n, p_stochastic[idx:idx + n]))
            size = self.blocks[-1].grid_size
            idx += n
        last = block_channels[-1]
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(last),
                                        nn.Linear(last, last), nn.Tanh(), nn.Linear(last, num_classes, bias=False))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        if x.ndim != 4 or _conv_out(x.shape[-2:]) != _conv_out(self.input_size):
            raise ValueError(f"MaxVit was built for input_size={self.input_size}; got input of shape "
                             f"{tuple(x.shape)}")
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)


def _maxvit_t(name, weights, **kwargs):
    """``input_size`` defaults to (224, 224) and must equal the weights' ``min_size`` when weights are given."""
    if weights is not None:
        overwrite_named_param(kwargs, "input_size", tuple(weights.meta["min_size"]))
    kwargs["input_size"] = tuple(kwargs.get("input_size", (224, 224)))
    return MaxVit(stem_channels=64, block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2], head_dim=32,
                  stochastic_depth_prob=0.2, partition_size=7, **kwargs)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "maxvit_t": ("MaxVit_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "maxvit_t-bc5ab103.pth", 30919624, (224, 224), 224, 224, "bicubic", 83.7, 96.722),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _maxvit_t)
