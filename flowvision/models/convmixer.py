"""ConvMixer (Trockman & Kolter, "Patches Are All You Need?", 2022): a patch-embedding conv, then blocks of
depthwise conv (residual) + pointwise conv, each followed by activation and BatchNorm; timm's names.

The original flowvision names ``convmixer_768_32_relu`` and ``convmixer_1024_20`` are aliases of timm's
``convmixer_768_32`` and ``convmixer_1024_20_ks9_p14``.
"""
from flowvision.backend import nn
from flowvision.layers import SelectAdaptivePool2d

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none, linear_head
from ._features import collect_intermediates, feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["ConvMixer"]


class Residual(nn.Module):
    """fn(x) + x."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class ConvMixer(ClassifierContract, nn.Module):
    """ConvMixer.

    Args:
        dim, depth: width and number of blocks.
        kernel_size: of the depthwise convs (odd; 'same' padding). patch_size: of the embedding conv.
        in_chans, num_classes, global_pool, drop_rate: input channels, classes (0: no head), pooling, dropout.
        act_layer: activation (GELU; ReLU for convmixer_768_32).
    """

    def __init__(self, dim, depth, kernel_size=9, patch_size=7, in_chans=3, num_classes=1000, global_pool="avg",
                 drop_rate=0.0, act_layer=nn.GELU):
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd for 'same' padding, got {kernel_size}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.num_features = dim
        self.grad_checkpointing = False
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dim, patch_size, stride=patch_size), act_layer(),
                                  nn.BatchNorm2d(dim))
        self.blocks = nn.Sequential(*[nn.Sequential(
            Residual(nn.Sequential(nn.Conv2d(dim, dim, kernel_size, groups=dim, padding=kernel_size // 2),
                                   act_layer(), nn.BatchNorm2d(dim))),
            nn.Conv2d(dim, dim, 1), act_layer(), nn.BatchNorm2d(dim)) for _ in range(depth)])
        self.feature_info = [dict(num_chs=dim, reduction=patch_size, module=f"blocks.{i}") for i in range(depth)]
        self.head_drop = nn.Dropout(drop_rate)
        self._set_head(num_classes, global_pool)

    def _set_head(self, num_classes, global_pool):
        self.global_pool = SelectAdaptivePool2d(pool_type=global_pool, flatten=bool(global_pool))
        self.head_hidden_size = self.num_features * self.global_pool.feat_mult()
        self.head = linear_head(self.head_hidden_size, num_classes)

    def group_matcher(self, coarse=False):
        return dict(stem=r"^stem", blocks=r"^blocks\.(\d+)")

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = classifier_or_none(num_classes)
        self._set_head(num_classes, self.global_pool.pool_type if global_pool is None else global_pool)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """(final features, [block outputs]) for ``indices`` of the blocks (timm's semantics)."""
        if output_fmt != "NCHW":
            raise ValueError(f"ConvMixer's intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        x, intermediates = collect_intermediates(self.blocks, self.stem(x), indices, stop_early)
        return intermediates if intermediates_only else (x, intermediates)

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        take, max_index = feature_take_indices(len(self.blocks), indices)
        self.blocks = self.blocks[:max_index + 1]
        if prune_head:
            self.reset_classifier(0, "")
        return take

    def forward_features(self, x):
        check_input_channels(x, self.in_chans)
        return self.run_blocks(self.blocks, self.stem(x))

    def forward_head(self, x, pre_logits=False):
        x = self.head_drop(self.global_pool(x))
        return x if pre_logits else self.head(x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.96,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD, classifier="head",
                   first_conv="stem.0", license="mit", hf_hub_id="timm/"), **kwargs}


default_cfgs = generate_default_cfgs({
    "convmixer_1536_20.in1k": _cfg(),
    "convmixer_768_32.in1k": _cfg(),
    "convmixer_1024_20_ks9_p14.in1k": _cfg(),
})


def _cm(variant, pretrained, kwargs, **args):
    out_indices = kwargs.pop("out_indices", 3)
    return build_model_with_cfg(ConvMixer, variant, pretrained,
                                feature_cfg=dict(out_indices=out_indices, feature_cls="getter"), **{**args, **kwargs})


@register_model
def convmixer_1536_20(pretrained=False, **kwargs):
    """ConvMixer-1536/20 (kernel 9, patch 7)."""
    return _cm("convmixer_1536_20", pretrained, kwargs, dim=1536, depth=20, kernel_size=9, patch_size=7)


@register_model
def convmixer_768_32(pretrained=False, **kwargs):
    """ConvMixer-768/32 (kernel 7, patch 7, ReLU)."""
    return _cm("convmixer_768_32", pretrained, kwargs, dim=768, depth=32, kernel_size=7, patch_size=7,
               act_layer=nn.ReLU)


@register_model
def convmixer_1024_20_ks9_p14(pretrained=False, **kwargs):
    """ConvMixer-1024/20 (kernel 9, patch 14)."""
    return _cm("convmixer_1024_20_ks9_p14", pretrained, kwargs, dim=1024, depth=20, kernel_size=9, patch_size=14)


register_model_alias("convmixer_768_32_relu", "convmixer_768_32")
register_model_alias("convmixer_1024_20", "convmixer_1024_20_ks9_p14")
