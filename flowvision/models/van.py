"""VAN: Visual Attention Network (Guo et al., "Visual Attention Network", CVM 2023; arXiv 2202.09741).

Four stages of blocks whose token mixer is large-kernel attention (LKA: 5x5 depthwise, 7x7 depthwise with
dilation 3, 1x1; the result gates the input), with BatchNorm pre-norms, depthwise-conv MLPs and LayerScale.
timm has no VAN: parameter names follow the authors' release (``patch_embed1.proj``, ``block1.0.attn...``,
``norm1``, ``head``) so their checkpoints load unchanged. Sizes from the paper's Table 2 (B0-B3); the original
flowvision names ``van_tiny/small/base/large`` are B0-B3.

Paper details that are ambiguous and what is implemented: the stage norm after the blocks is a LayerNorm over
channels (eps 1e-6) as in the authors' code (the paper only says "norm"); LayerScale starts at 1e-2; the
classifier averages the last stage's tokens after that norm (no extra head norm).
"""
from functools import partial

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import StagedContract, check_mean_pool, linear_head
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["VAN"]


class DWConv(nn.Module):
    """3x3 depthwise conv (inside the MLP)."""

    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)

    def forward(self, x):
        return self.dwconv(x)


class Mlp(nn.Module):
    """1x1 conv -> 3x3 depthwise conv -> GELU -> 1x1 conv."""

    def __init__(self, in_features, hidden_features, drop=0.0):
        super().__init__()
        self.fc1 = nn.Conv2d(in_features, hidden_features, 1)
        self.dwconv = DWConv(hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Conv2d(hidden_features, in_features, 1)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.dwconv(self.fc1(x))))))


class LKA(nn.Module):
    """Large-kernel attention: a 21x21 receptive field from 5x5 depthwise, 7x7 depthwise (dilation 3) and 1x1
    convs; the result multiplies the input."""

    def __init__(self, dim):
        super().__init__()
        self.conv0 = nn.Conv2d(dim, dim, 5, padding=2, groups=dim)
        self.conv_spatial = nn.Conv2d(dim, dim, 7, stride=1, padding=9, groups=dim, dilation=3)
        self.conv1 = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        return x * self.conv1(self.conv_spatial(self.conv0(x)))


class Attention(nn.Module):
    """1x1 -> GELU -> LKA -> 1x1, with its own residual."""

    def __init__(self, d_model):
        super().__init__()
        self.proj_1 = nn.Conv2d(d_model, d_model, 1)
        self.activation = nn.GELU()
        self.spatial_gating_unit = LKA(d_model)
        self.proj_2 = nn.Conv2d(d_model, d_model, 1)

    def forward(self, x):
        return self.proj_2(self.spatial_gating_unit(self.activation(self.proj_1(x)))) + x


class Block(nn.Module):
    """BatchNorm -> attention and BatchNorm -> MLP residual branches, each scaled per channel (LayerScale)."""

    def __init__(self, dim, mlp_ratio=4.0, drop=0.0, drop_path=0.0, layer_scale_init=1e-2):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(dim)
        self.attn = Attention(dim)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.BatchNorm2d(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)
        self.layer_scale_1 = nn.Parameter(layer_scale_init * flow.ones(dim))
        self.layer_scale_2 = nn.Parameter(layer_scale_init * flow.ones(dim))

    def forward(self, x):
        x = x + self.drop_path(self.layer_scale_1.reshape(-1, 1, 1) * self.attn(self.norm1(x)))
        return x + self.drop_path(self.layer_scale_2.reshape(-1, 1, 1) * self.mlp(self.norm2(x)))


class OverlapPatchEmbed(nn.Module):
    """Strided conv with overlapping windows (7x7/4 first, 3x3/2 after) + BatchNorm."""

    def __init__(self, patch_size=7, stride=4, in_chans=3, embed_dim=768):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=stride, padding=patch_size // 2)
        self.norm = nn.BatchNorm2d(embed_dim)

    def forward(self, x):
        return self.norm(self.proj(x))


class VAN(StagedContract, nn.Module):
    """Visual Attention Network.

    Args:
        img_size: unused by the network (kept for the registry's keyword). in_chans, num_classes: as usual.
        embed_dims, mlp_ratios, depths: per stage. drop_rate, drop_path_rate: dropout and stochastic depth.
        global_pool: 'avg' (mean of the last stage's tokens) or ''.
    """

    def __init__(self, in_chans=3, num_classes=1000, embed_dims=(64, 128, 256, 512), mlp_ratios=(4, 4, 4, 4),
                 depths=(3, 4, 6, 3), drop_rate=0.0, drop_path_rate=0.0, global_pool="avg",
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.depths = depths
        self.num_stages = len(depths)
        self.grad_checkpointing = False
        total = sum(depths)
        dpr = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        cur = 0
        self.feature_info = []
        for i in range(self.num_stages):
            self.add_module(f"patch_embed{i + 1}", OverlapPatchEmbed(
                patch_size=7 if i == 0 else 3, stride=4 if i == 0 else 2,
                in_chans=in_chans if i == 0 else embed_dims[i - 1], embed_dim=embed_dims[i]))
            self.add_module(f"block{i + 1}", nn.ModuleList([
                Block(embed_dims[i], mlp_ratios[i], drop=drop_rate, drop_path=dpr[cur + j])
                for j in range(depths[i])]))
            self.add_module(f"norm{i + 1}", norm_layer(embed_dims[i]))
            cur += depths[i]
            self.feature_info.append(dict(num_chs=embed_dims[i], reduction=4 * 2 ** i, module=f"norm{i + 1}"))
        self.num_features = self.head_hidden_size = embed_dims[-1]
        self.head = linear_head(embed_dims[-1], num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, (2.0 / fan_out) ** 0.5)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^patch_embed1", blocks=[(r"^block(\d+)\.(\d+)", None), (r"^(?:patch_embed|norm)(\d+)",
                                                                                   None)])

    def final_norm(self, x):
        """Nothing: every stage ends in its own norm."""
        return x

    def _stage(self, i, x):
        x = self.run_blocks(getattr(self, f"block{i + 1}"), getattr(self, f"patch_embed{i + 1}")(x))
        b, c, h, w = x.shape
        x = getattr(self, f"norm{i + 1}")(x.flatten(2).transpose(1, 2))
        return x.transpose(1, 2).reshape(b, c, h, w)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="patch_embed1.proj", classifier="head", license="apache-2.0"), **kwargs}


default_cfgs = generate_default_cfgs({f"van_b{i}": _cfg() for i in range(4)})

# (embed dims, depths) per the paper's Table 2; MLP ratios 8, 8, 4, 4 throughout
_VAN = {"van_b0": ((32, 64, 160, 256), (3, 3, 5, 2)), "van_b1": ((64, 128, 320, 512), (2, 2, 4, 2)),
        "van_b2": ((64, 128, 320, 512), (3, 3, 12, 3)), "van_b3": ((64, 128, 320, 512), (3, 5, 27, 3))}


def _van(variant, pretrained, kwargs):
    dims, depths = _VAN[variant]
    return build_model_with_cfg(VAN, variant, pretrained, feature_cfg=dict(feature_cls="getter",
                                                                           out_indices=(0, 1, 2, 3)),
                                **{**dict(embed_dims=dims, depths=depths, mlp_ratios=(8, 8, 4, 4)), **kwargs})


@register_model
def van_b0(pretrained=False, **kwargs):
    """VAN-B0 (the original flowvision's van_tiny)."""
    return _van("van_b0", pretrained, kwargs)


@register_model
def van_b1(pretrained=False, **kwargs):
    """VAN-B1 (van_small)."""
    return _van("van_b1", pretrained, kwargs)


@register_model
def van_b2(pretrained=False, **kwargs):
    """VAN-B2 (van_base)."""
    return _van("van_b2", pretrained, kwargs)


@register_model
def van_b3(pretrained=False, **kwargs):
    """VAN-B3 (van_large)."""
    return _van("van_b3", pretrained, kwargs)


for _orig, _arch in (("van_tiny", "van_b0"), ("van_small", "van_b1"), ("van_base", "van_b2"), ("van_large", "van_b3")):
    register_model_alias(_orig, _arch)
