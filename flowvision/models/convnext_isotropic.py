"""Isotropic ConvNeXt (Liu et al., "A ConvNet for the 2020s", CVPR 2022, Section 3.3 / Table 2): a 16x16/16
patch stem and one stage of identical ConvNeXt blocks (7x7 depthwise conv, LayerNorm, 4x MLP as linear
layers, no LayerScale), then global average pooling, LayerNorm and the classifier.

timm has no isotropic ConvNeXt: parameter names follow the authors' release (``stem``, ``blocks.N.dwconv``,
``blocks.N.pwconv1``, ``norm``, ``head``) so their checkpoints load unchanged. The original flowvision names are
``convnext_iso_small_224`` / ``_base_224`` / ``_large_224``.

Ambiguous details and what is implemented: LayerScale is off (the authors' isotropic models use init value 0,
i.e. no ``gamma`` parameter); the final LayerNorm is applied after pooling.
"""
from typing import List, Optional, Union

import flowvision.backend as flow
from flowvision.backend import nn
from flowvision.layers import DropPath, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import MeanPoolContract, check_input_channels, check_mean_pool, linear_head
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["ConvNeXtIsotropic"]


class Block(nn.Module):
    """7x7 depthwise conv -> LayerNorm -> Linear(4x) -> GELU -> Linear, residual (channels-last MLP)."""

    def __init__(self, dim: int, drop_path: float = 0.0, layer_scale_init_value: float = 0.0):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init_value * flow.ones(dim)) if layer_scale_init_value > 0 else None
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        y = self.pwconv2(self.act(self.pwconv1(self.norm(self.dwconv(x).permute(0, 2, 3, 1)))))
        if self.gamma is not None:
            y = self.gamma * y
        return x + self.drop_path(y.permute(0, 3, 1, 2))


class ConvNeXtIsotropic(MeanPoolContract, nn.Module):
    """Isotropic ConvNeXt classifier.

    Args:
        in_chans, num_classes: as usual (0 classes: no head). depth, dim: blocks and width.
        drop_path_rate: stochastic depth. layer_scale_init_value: LayerScale init (0: none).
        head_init_scale: classifier init scale. global_pool: 'avg' or ''.
    """

    def __init__(self, in_chans: int = 3, num_classes: int = 1000, depth: int = 18, dim: int = 384,
                 drop_path_rate: float = 0.0, layer_scale_init_value: float = 0.0, head_init_scale: float = 1.0,
                 global_pool: str = "avg", drop_rate: float = 0.0, img_size=None):
        super().__init__()
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        self.stem = nn.Conv2d(in_chans, dim, 16, 16)
        dpr = [drop_path_rate * i / max(depth - 1, 1) for i in range(depth)]
        self.blocks = nn.Sequential(*[Block(dim, dpr[i], layer_scale_init_value) for i in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.num_features = self.head_hidden_size = dim
        self.head = linear_head(dim, num_classes)
        self.feature_info = [dict(num_chs=dim, reduction=16, module=f"blocks.{i}") for i in range(depth)]
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
        if num_classes > 0:
            with flow.no_grad():
                self.head.weight.mul_(head_init_scale)
                self.head.bias.mul_(head_init_scale)

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^stem", blocks=[(r"^blocks\.(\d+)", None), (r"^norm", (99999,))])

    def forward_intermediates(self, x, indices: Optional[Union[int, List[int]]] = None, norm: bool = False,
                              stop_early: bool = False, output_fmt: str = "NCHW",
                              intermediates_only: bool = False):
        """(final map, [block outputs in ``indices``]) (timm's semantics; the last block by default)."""
        if output_fmt != "NCHW":
            raise ValueError(f"ConvNeXt-isotropic intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        take, max_index = feature_take_indices(len(self.blocks), indices)
        x = self.stem(x)
        outs = []
        for i in range(max_index + 1 if stop_early else len(self.blocks)):
            x = self.blocks[i](x)
            if i in take:
                outs.append(x)
        return outs if intermediates_only else (x, outs)

    def forward_features(self, x):
        """(B, C, H/16, W/16) map after the last block (pooling and the norm belong to the head)."""
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.blocks, self.stem(x))

    def forward_head(self, x, pre_logits: bool = False):
        if self.global_pool == "avg":
            x = self.norm(x.mean(dim=(2, 3)))
        return x if pre_logits else self.head(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(14, 14), crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="stem", classifier="head", license="mit"), **kwargs}


default_cfgs = generate_default_cfgs({f"convnext_iso_{s}_224": _cfg() for s in ("small", "base", "large")})


def _iso(variant: str, pretrained: bool, kwargs, depth: int, dim: int):
    return build_model_with_cfg(ConvNeXtIsotropic, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(-1,)),
                                **{**dict(depth=depth, dim=dim), **kwargs})


@register_model
def convnext_iso_small_224(pretrained: bool = False, **kwargs) -> ConvNeXtIsotropic:
    """Isotropic ConvNeXt-S: 18 blocks of width 384."""
    return _iso("convnext_iso_small_224", pretrained, kwargs, 18, 384)


@register_model
def convnext_iso_base_224(pretrained: bool = False, **kwargs) -> ConvNeXtIsotropic:
    """Isotropic ConvNeXt-B: 18 blocks of width 768."""
    return _iso("convnext_iso_base_224", pretrained, kwargs, 18, 768)


@register_model
def convnext_iso_large_224(pretrained: bool = False, **kwargs) -> ConvNeXtIsotropic:
    """Isotropic ConvNeXt-L: 36 blocks of width 1024."""
    return _iso("convnext_iso_large_224", pretrained, kwargs, 36, 1024)
