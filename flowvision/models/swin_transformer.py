"""Swin Transformer (v1), with timm's module and parameter names.

Layout as timm: NHWC activations, patch merging at the *start* of stages 1..3 (``layers.i.downsample``),
``forward_features`` returns ``(B, H/32, W/32, C)``; the head pools NHWC.
"""
import re
from functools import partial

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F
from flowvision.layers import DropPath, Mlp, PatchEmbed, to_2tuple, trunc_normal_, window_partition, window_reverse

from flowvision.ops import MLP, Permute, StochasticDepth

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._contract import checkpoint_seq
from ._features import feature_take_indices
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias

__all__ = ["SwinTransformer", "WindowAttention", "SwinTransformerBlock", "PatchMerging", "SwinTransformerStage",
           "SwinTransformerTV"]


def relative_position_index(win_h, win_w):
    """(N, N) int64 index into the ``(2h-1)(2w-1)`` bias table for a ``win_h x win_w`` window."""
    coords = np.stack(np.meshgrid(np.arange(win_h), np.arange(win_w), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    rel[:, :, 0] += win_h - 1
    rel[:, :, 1] += win_w - 1
    rel[:, :, 0] *= 2 * win_w - 1
    return rel.sum(-1).astype(np.int64)


def shift_window_mask(pad_h, pad_w, window_size, shift_size):
    """(num_windows, N, N) additive mask of a shifted-window map padded to ``pad_h x pad_w``: -100 between
    tokens that come from different regions of the rolled map."""
    wh, ww = window_size
    sh, sw = shift_size
    img = np.zeros((pad_h, pad_w), dtype=np.float32)
    cnt = 0
    for hs in (slice(0, -wh), slice(-wh, -sh), slice(-sh, None)):
        for ws in (slice(0, -ww), slice(-ww, -sw), slice(-sw, None)):
            img[hs, ws] = cnt
            cnt += 1
    win = img.reshape(pad_h // wh, wh, pad_w // ww, ww).transpose(0, 2, 1, 3).reshape(-1, wh * ww)
    mask = win[:, None, :] - win[:, :, None]
    return np.where(mask != 0, np.float32(-100.0), np.float32(0.0)).astype(np.float32)


class WindowAttention(nn.Module):
    def __init__(self, dim, num_heads, head_dim=None, window_size=7, qkv_bias=True, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.dim = dim
        self.window_size = to_2tuple(window_size)
        win_h, win_w = self.window_size
        self.window_area = win_h * win_w
        self.num_heads = num_heads
        head_dim = head_dim or dim // num_heads
        attn_dim = head_dim * num_heads
        self.scale = head_dim ** -0.5
        self.relative_position_bias_table = nn.Parameter(flow.zeros((2 * win_h - 1) * (2 * win_w - 1), num_heads))
        self.register_buffer("relative_position_index",
                             flow.from_numpy(relative_position_index(win_h, win_w)), persistent=False)
        self.qkv = nn.Linear(dim, attn_dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(attn_dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        trunc_normal_(self.relative_position_bias_table, std=0.02)
        self._mask_cache = None  # (table, shift mask, their state, additive mask) of the last cacheable call

    def _relative_position_bias(self):
        idx = self.relative_position_index.reshape(-1)
        bias = flow.index_select(self.relative_position_bias_table, 0, idx)
        return bias.reshape(self.window_area, self.window_area, -1).permute(2, 0, 1)

    def _attn_mask(self, shift_mask):
        """Additive mask of the attention logits: relative-position bias (heads, N, N) plus the shifted-window
        mask (nW, 1, N, N) -> (nW, heads, N, N), or (1, heads, N, N) without a shift.

        Cached in eval mode when no gradient flows to the table; rebuilt when the table is written (its
        ``_version``) or replaced, the shift mask changes, or the dtype / device does. Under a flowvision.compile
        capture the table requires grad, so this is computed from constants only and folded into the plan."""
        table = self.relative_position_bias_table
        cacheable = not self.training and not (flow.is_grad_enabled() and table.requires_grad)
        # the tensors themselves are held and compared with `is` (a new table could reuse a freed id())
        state = (table._version[0], table.dtype, table.device,
                 None if shift_mask is None else (shift_mask._version[0], shift_mask.dtype))
        cached = self._mask_cache
        if cacheable and cached is not None and cached[0] is table and cached[1] is shift_mask and cached[2] == state:
            return cached[3]
        mask = self._relative_position_bias().unsqueeze(0)
        if shift_mask is not None:
            mask = mask + shift_mask.to(mask.dtype).unsqueeze(1)
        if cacheable:  # a non-cacheable call (training, capture) leaves the eval cache alone: it is keyed on state
            self._mask_cache = (table, shift_mask, state, mask)
        return mask

    def forward(self, x, mask=None):
        """x: (B*nW, N, C) windows, nW = mask.shape[0] with a shift mask (nW, N, N), else 1 -> (B*nW, N, C)."""
        b_, n, _ = x.shape
        num_win = 1 if mask is None else mask.shape[0]
        if b_ % num_win:
            raise ValueError(f"WindowAttention: {b_} windows are not a multiple of the mask's {num_win}")
        # q, k, v: (B, nW, heads, N, head_dim) views of the qkv output (no copies)
        qkv = self.qkv(x).reshape(b_ // num_win, num_win, n, 3, self.num_heads, -1).permute(3, 0, 1, 4, 2, 5)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=self._attn_mask(mask),
                                           dropout_p=self.attn_drop.p if self.training else 0.0, scale=self.scale)
        x = x.transpose(2, 3).reshape(b_, n, -1)
        return self.proj_drop(self.proj(x))


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim, input_resolution, num_heads=4, head_dim=None, window_size=7, shift_size=0,
                 mlp_ratio=4.0, qkv_bias=True, proj_drop=0.0, attn_drop=0.0, drop_path=0.0, act_layer=nn.GELU,
                 norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.input_resolution = to_2tuple(input_resolution)
        target_window = to_2tuple(window_size)
        target_shift = to_2tuple(shift_size)
        # a window never exceeds the feature map; no shift when one window covers it
        self.window_size = tuple(r if r <= w else w for r, w in zip(self.input_resolution, target_window))
        self.shift_size = tuple(0 if r <= w else s for r, w, s in
                                zip(self.input_resolution, self.window_size, target_shift))
        self.norm1 = norm_layer(dim)
        self.attn = WindowAttention(dim, num_heads=num_heads, head_dim=head_dim, window_size=self.window_size,
                                    qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=proj_drop)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer, drop=proj_drop)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        mask = self._attn_mask()
        self.register_buffer("attn_mask", None if mask is None else flow.from_numpy(mask), persistent=False)

    def _attn_mask(self):
        if not any(self.shift_size):
            return None
        h, w = self.input_resolution
        wh, ww = self.window_size
        return shift_window_mask(-(-h // wh) * wh, -(-w // ww) * ww, self.window_size, self.shift_size)

    def _attn(self, x, shortcut=None):
        """Shifted-window attention of x (B, H, W, C), plus ``shortcut`` when given. The roll, the padding to
        whole windows and the window (un)partition are one copy each (flowvision.layers.window_partition /
        window_reverse), the residual add is folded into the reverse copy."""
        b, h, w, c = x.shape
        windows = window_partition(x, self.window_size, self.shift_size)
        windows = self.attn(windows, mask=self.attn_mask)
        return window_reverse(windows, self.window_size, self.shift_size, h, w, shortcut)

    def forward(self, x):
        b, h, w, c = x.shape
        if self.training and not isinstance(self.drop_path1, nn.Identity):
            x = x + self.drop_path1(self._attn(self.norm1(x)))
        else:  # drop_path is the identity: x + attn(norm1(x)) in the reverse pass
            x = self._attn(self.norm1(x), shortcut=x)
        x = x.reshape(b, -1, c)
        x = x + self.drop_path2(self.mlp(self.norm2(x)))
        return x.reshape(b, h, w, c)


class PatchMerging(nn.Module):
    """2x2 neighbourhood -> LayerNorm(4C) -> Linear(4C, out_dim) (NHWC)."""

    def __init__(self, dim, out_dim=None, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.out_dim = out_dim or 2 * dim
        self.norm = norm_layer(4 * dim)
        self.reduction = nn.Linear(4 * dim, self.out_dim, bias=False)

    def forward(self, x):
        b, h, w, c = x.shape
        if h % 2 or w % 2:
            x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
            h, w = h + h % 2, w + w % 2
        x = x.reshape(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 4, 2, 5).reshape(b, h // 2, w // 2, 4 * c)
        return self.reduction(self.norm(x))


class SwinTransformerStage(nn.Module):
    def __init__(self, dim, out_dim, input_resolution, depth, downsample=True, num_heads=4, head_dim=None,
                 window_size=7, mlp_ratio=4.0, qkv_bias=True, proj_drop=0.0, attn_drop=0.0, drop_path=0.0,
                 norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.output_resolution = tuple(i // 2 for i in input_resolution) if downsample else input_resolution
        self.grad_checkpointing = False
        window_size = to_2tuple(window_size)
        shift_size = tuple(w // 2 for w in window_size)
        self.downsample = PatchMerging(dim, out_dim, norm_layer) if downsample else nn.Identity()
        if not downsample and dim != out_dim:
            raise ValueError("a stage without downsample keeps its width")
        dprs = drop_path if isinstance(drop_path, (list, tuple)) else [drop_path] * depth
        self.blocks = nn.Sequential(*[
            SwinTransformerBlock(dim=out_dim, input_resolution=self.output_resolution, num_heads=num_heads,
                                 head_dim=head_dim, window_size=window_size,
                                 shift_size=0 if i % 2 == 0 else shift_size, mlp_ratio=mlp_ratio,
                                 qkv_bias=qkv_bias, proj_drop=proj_drop, attn_drop=attn_drop, drop_path=dprs[i],
                                 norm_layer=norm_layer)
            for i in range(depth)])

    def forward(self, x):
        x = self.downsample(x)
        return checkpoint_seq(self.blocks, x) if self.grad_checkpointing and self.training else self.blocks(x)


class _NHWCHead(nn.Module):
    """timm's ClassifierHead(input_fmt='NHWC') names: global_pool, drop, fc, flatten."""

    def __init__(self, in_features, num_classes, pool_type="avg", drop_rate=0.0):
        super().__init__()
        if pool_type not in ("", "avg", "max"):
            raise ValueError(f"global_pool must be '', 'avg' or 'max', got {pool_type!r}")
        self.pool_type = pool_type
        self.global_pool = nn.Identity()
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(in_features, num_classes) if num_classes > 0 else nn.Identity()
        self.flatten = nn.Identity()

    def forward(self, x, pre_logits=False):
        if self.pool_type == "avg":
            x = x.mean((1, 2))
        elif self.pool_type == "max":
            x = x.amax((1, 2))
        x = self.drop(x)
        return x if pre_logits else self.fc(x)


class SwinTransformer(nn.Module):
    accepts_img_size = True

    def __init__(self, img_size=224, patch_size=4, in_chans=3, num_classes=1000, global_pool="avg", embed_dim=96,
                 depths=(2, 2, 6, 2), num_heads=(3, 6, 12, 24), head_dim=None, window_size=7, mlp_ratio=4.0,
                 qkv_bias=True, drop_rate=0.0, proj_drop_rate=0.0, attn_drop_rate=0.0, drop_path_rate=0.1,
                 norm_layer=nn.LayerNorm):
        super().__init__()
        self.num_classes = num_classes
        self.global_pool = global_pool
        self.output_fmt = "NHWC"
        self.num_layers = len(depths)
        self.embed_dim = embed_dim
        self.num_features = self.head_hidden_size = int(embed_dim * 2 ** (self.num_layers - 1))
        self.grad_checkpointing = False
        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
                                      embed_dim=embed_dim, norm_layer=norm_layer, flatten=False, output_fmt="NHWC")
        grid = self.patch_embed.grid_size
        self.pos_drop = nn.Dropout(p=0.0)
        dpr = [float(v) for v in np.linspace(0, drop_path_rate, sum(depths))]
        head_dims = head_dim if isinstance(head_dim, (list, tuple)) else [head_dim] * self.num_layers
        windows = window_size if isinstance(window_size, list) else [window_size] * self.num_layers
        layers, in_dim, scale, start = [], embed_dim, 1, 0
        self.feature_info = []
        for i in range(self.num_layers):
            out_dim = int(embed_dim * 2 ** i)
            layers.append(SwinTransformerStage(
                dim=in_dim, out_dim=out_dim, input_resolution=(grid[0] // scale, grid[1] // scale),
                depth=depths[i], downsample=i > 0, num_heads=num_heads[i], head_dim=head_dims[i],
                window_size=windows[i], mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, proj_drop=proj_drop_rate,
                attn_drop=attn_drop_rate, drop_path=dpr[start:start + depths[i]], norm_layer=norm_layer))
            start += depths[i]
            in_dim = out_dim
            if i > 0:
                scale *= 2
            self.feature_info.append(dict(num_chs=out_dim, reduction=patch_size * scale, module=f"layers.{i}"))
        self.layers = nn.Sequential(*layers)
        self.norm = norm_layer(self.num_features)
        self.head = _NHWCHead(self.num_features, num_classes, pool_type=global_pool, drop_rate=drop_rate)
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def no_weight_decay(self):
        return {n for n, _ in self.named_parameters() if "relative_position_bias_table" in n}

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, every stage runs its blocks under ``checkpoint``: only each block's input is kept and
        its activations are recomputed in backward (timm's stages: ``checkpoint_seq(self.blocks, x)``)."""
        self.grad_checkpointing = bool(enable)
        for stage in self.layers:
            stage.grad_checkpointing = self.grad_checkpointing

    def get_classifier(self):
        return self.head.fc

    def reset_classifier(self, num_classes, global_pool=None):
        self.num_classes = num_classes
        if global_pool is not None:
            self.global_pool = global_pool
        self.head = _NHWCHead(self.num_features, num_classes, pool_type=self.global_pool,
                              drop_rate=self.head.drop.p)

    def forward_features(self, x):
        x = self.patch_embed(x)
        x = self.pos_drop(x)
        x = self.layers(x)
        return self.norm(x)

    def forward_intermediates(self, x, indices=None, norm=False, stop_early=False, output_fmt="NCHW",
                              intermediates_only=False):
        """NCHW outputs of the stages named by ``indices`` (None: all, int n: last n, list: those), as timm.

        ``norm`` applies the final norm to the last stage's map only (it is sized for that stage).
        """
        if output_fmt != "NCHW":
            raise ValueError(f"Swin intermediates are NCHW only, got output_fmt={output_fmt!r}")
        take_indices, max_index = feature_take_indices(len(self.layers), indices)
        num_stages = len(self.layers)
        x = self.pos_drop(self.patch_embed(x))
        stages = self.layers[:max_index + 1] if stop_early else self.layers
        intermediates = []
        i = 0
        for i, stage in enumerate(stages):
            x = stage(x)
            if i in take_indices:
                y = self.norm(x) if norm and i == num_stages - 1 else x
                intermediates.append(y.permute(0, 3, 1, 2).contiguous())
        if intermediates_only:
            return intermediates
        if i == num_stages - 1:
            x = self.norm(x)
        return x, intermediates

    def prune_intermediate_layers(self, indices=1, prune_norm=False, prune_head=True):
        """Drop the stages after the last of ``indices`` (the final norm too unless it is still the last
        stage's, and the head); returns the indices kept."""
        take_indices, max_index = feature_take_indices(len(self.layers), indices)
        prune_end = max_index < len(self.layers) - 1
        if prune_norm or prune_end:
            self.norm = nn.Identity()
        self.layers = self.layers[:max_index + 1]
        if prune_end:
            self.num_features = self.head_hidden_size = self.feature_info[max_index]["num_chs"]
        if prune_head or prune_end:
            self.reset_classifier(0, "")
        return take_indices

    def forward_head(self, x, pre_logits=False):
        return self.head(x, pre_logits=pre_logits)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def checkpoint_filter_fn(state_dict, model):
    """timm-format checkpoints pass through (minus non-persistent buffers); original MS checkpoints
    (``layers.N.downsample`` at the end of stage N, ``head.weight``) are converted to timm's layout."""
    import re
    sd = state_dict.get("model", state_dict)
    old_format = "head.fc.weight" not in sd
    out = {}
    for k, v in sd.items():
        if "relative_position_index" in k or "attn_mask" in k:
            continue
        if old_format:
            k = re.sub(r"layers\.(\d+)\.downsample", lambda m: f"layers.{int(m.group(1)) + 1}.downsample", k)
            k = k.replace("head.", "head.fc.")
        out[k] = v
    return out


def _create_swin(variant, pretrained=False, **kwargs):
    # features_only: timm's FeatureListNet over the stages (NHWC maps), all stages by default
    default_indices = tuple(range(len(kwargs.get("depths", (1, 1, 3, 1)))))
    return build_model_with_cfg(SwinTransformer, variant, pretrained, pretrained_filter_fn=checkpoint_filter_fn,
                                feature_cfg=dict(out_indices=default_indices), **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.9,
                   interpolation="bicubic", fixed_input_size=True, mean=IMAGENET_DEFAULT_MEAN,
                   std=IMAGENET_DEFAULT_STD, first_conv="patch_embed.proj", classifier="head.fc", license="mit"),
            **kwargs}


_384 = dict(input_size=(3, 384, 384), pool_size=(12, 12), crop_pct=1.0)
default_cfgs = generate_default_cfgs({
    "swin_tiny_patch4_window7_224.ms_in1k": _cfg(hf_hub_id="timm/"),
    "swin_tiny_patch4_window7_224.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "swin_tiny_patch4_window7_224.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841),
    "swin_small_patch4_window7_224.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "swin_small_patch4_window7_224.ms_in1k": _cfg(hf_hub_id="timm/"),
    "swin_small_patch4_window7_224.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841),
    "swin_base_patch4_window7_224.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "swin_base_patch4_window7_224.ms_in1k": _cfg(hf_hub_id="timm/"),
    "swin_base_patch4_window7_224.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841),
    "swin_base_patch4_window12_384.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "swin_base_patch4_window12_384.ms_in1k": _cfg(hf_hub_id="timm/", **_384),
    "swin_base_patch4_window12_384.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841, **_384),
    "swin_large_patch4_window7_224.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/"),
    "swin_large_patch4_window7_224.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841),
    "swin_large_patch4_window12_384.ms_in22k_ft_in1k": _cfg(hf_hub_id="timm/", **_384),
    "swin_large_patch4_window12_384.ms_in22k": _cfg(hf_hub_id="timm/", num_classes=21841, **_384),
})

_SWIN = {"tiny": (96, (2, 2, 6, 2), (3, 6, 12, 24)), "small": (96, (2, 2, 18, 2), (3, 6, 12, 24)),
         "base": (128, (2, 2, 18, 2), (4, 8, 16, 32)), "large": (192, (2, 2, 18, 2), (6, 12, 24, 48))}


def _swin(size, window, img, pretrained, kwargs):
    dim, depths, heads = _SWIN[size]
    variant = f"swin_{size}_patch4_window{window}_{img}"
    args = dict(patch_size=4, window_size=window, embed_dim=dim, depths=depths, num_heads=heads, img_size=img)
    return _create_swin(variant, pretrained, **{**args, **kwargs})


@register_model
def swin_tiny_patch4_window7_224(pretrained=False, **kwargs):
    return _swin("tiny", 7, 224, pretrained, kwargs)


@register_model
def swin_small_patch4_window7_224(pretrained=False, **kwargs):
    return _swin("small", 7, 224, pretrained, kwargs)


@register_model
def swin_base_patch4_window7_224(pretrained=False, **kwargs):
    return _swin("base", 7, 224, pretrained, kwargs)


@register_model
def swin_base_patch4_window12_384(pretrained=False, **kwargs):
    return _swin("base", 12, 384, pretrained, kwargs)


@register_model
def swin_large_patch4_window7_224(pretrained=False, **kwargs):
    return _swin("large", 7, 224, pretrained, kwargs)


@register_model
def swin_large_patch4_window12_384(pretrained=False, **kwargs):
    return _swin("large", 12, 384, pretrained, kwargs)


for _size in ("tiny", "small", "base", "large"):
    register_model_alias(f"swin_{_size}", f"swin_{_size}_patch4_window7_224")

# the original flowvision names
for _s in ("base", "large"):
    register_model_alias(f"swin_{_s}_patch4_window7_224_in22k_to_1k", f"swin_{_s}_patch4_window7_224.ms_in22k_ft_in1k")
    register_model_alias(f"swin_{_s}_patch4_window12_384_in22k_to_1k",
                         f"swin_{_s}_patch4_window12_384.ms_in22k_ft_in1k")


# --- torchvision's Swin v1 (``features.0`` patch embed, ``features.{1,3,5,7}`` stages, ``features.{2,4,6}``
# patch merging, ``norm``, ``head``; NHWC inside); swin_v2.py builds V2 on these classes -----------------------

class ShiftedWindowAttentionTV(nn.Module):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        self.window_size, self.shift_size = list(window_size), list(shift_size)
        self.num_heads = num_heads
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self._define_position_bias()
        self.register_buffer("relative_position_index",
                             flow.from_numpy(relative_position_index(*window_size).reshape(-1)))

    def _define_position_bias(self):
        n_rel = (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(flow.zeros(n_rel, self.num_heads))
        trunc_normal_(self.relative_position_bias_table, std=0.02)

    def _gather_position_bias(self, table):
        """(num_rel, heads) table -> (1, heads, N, N) bias over the window's token pairs."""
        n = self.window_size[0] * self.window_size[1]
        bias = table.index_select(0, self.relative_position_index)
        return bias.reshape(n, n, -1).permute(2, 0, 1).unsqueeze(0)

    def get_relative_position_bias(self):
        return self._gather_position_bias(self.relative_position_bias_table)

    def _qkv(self, x):
        return self.qkv(x)

    def _attention_logits(self, q, k):
        return (q * q.shape[-1] ** -0.5).matmul(k.transpose(-2, -1))

    def forward(self, x):
        b, h, w, c = x.shape
        ws = self.window_size
        n = ws[0] * ws[1]
        bias = self.get_relative_position_bias()
        pad_r, pad_b = (ws[1] - w % ws[1]) % ws[1], (ws[0] - h % ws[0]) % ws[0]
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        _, ph, pw, _ = x.shape
        shift = [0 if ws[0] >= ph else self.shift_size[0], 0 if ws[1] >= pw else self.shift_size[1]]
        if sum(shift) > 0:
            x = flow.roll(x, shifts=(-shift[0], -shift[1]), dims=(1, 2))
        nw = (ph // ws[0]) * (pw // ws[1])
        x = x.reshape(b, ph // ws[0], ws[0], pw // ws[1], ws[1], c).permute(0, 1, 3, 2, 4, 5).reshape(b * nw, n, c)
        qkv = self._qkv(x).reshape(b * nw, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if type(self)._attention_logits is ShiftedWindowAttentionTV._attention_logits:
            # scaled dot products (v1): one fused SDPA over the (b, nw, heads, n, d) views, the relative-position
            # bias and the shift mask summed into one (nw or 1, heads, n, n) additive mask
            mask = bias
            if sum(shift) > 0:
                mask = bias + flow.from_numpy(shift_window_mask(ph, pw, ws, shift)).to(bias.device).unsqueeze(1)
            hd = c // self.num_heads
            q5, k5, v5 = (t.reshape(b, nw, self.num_heads, n, hd) for t in (q, k, v))
            x = F.scaled_dot_product_attention(q5, k5, v5, attn_mask=mask,
                                               dropout_p=self.attention_dropout if self.training else 0.0)
            x = x.transpose(2, 3).reshape(b * nw, n, c)
        else:  # cosine attention (v2): its own logits
            attn = self._attention_logits(q, k) + bias
            if sum(shift) > 0:
                mask = flow.from_numpy(shift_window_mask(ph, pw, ws, shift)).to(attn.device)
                attn = attn.reshape(b, nw, self.num_heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.reshape(-1, self.num_heads, n, n)
            attn = F.dropout(F.softmax(attn, dim=-1), p=self.attention_dropout, training=self.training)
            x = attn.matmul(v).transpose(1, 2).reshape(b * nw, n, c)
        x = F.dropout(self.proj(x), p=self.dropout, training=self.training)
        x = x.reshape(b, ph // ws[0], pw // ws[1], ws[0], ws[1], c).permute(0, 1, 3, 2, 4, 5).reshape(b, ph, pw, c)
        if sum(shift) > 0:
            x = flow.roll(x, shifts=(shift[0], shift[1]), dims=(1, 2))
        return x[:, :h, :w, :]


class SwinBlockTV(nn.Module):
    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=None):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = (attn_layer or ShiftedWindowAttentionTV)(dim, window_size, shift_size, num_heads,
                                                            attention_dropout=attention_dropout, dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = MLP(dim, [hidden, dim], activation_layer=nn.GELU, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class PatchMergingTV(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    @staticmethod
    def _merge(x):
        """(..., H, W, C) -> (..., H/2, W/2, 4C): the 2x2 neighbours side by side (odd sizes zero-padded)."""
        h, w = x.shape[-3], x.shape[-2]
        x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
        return flow.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]],
                        -1)

    def forward(self, x):
        return self.reduction(self.norm(self._merge(x)))


class SwinTransformerTV(nn.Module):
    """torchvision's Swin v1 (``features.0`` patch embed, ``features.{1,3,5,7}`` stages,
    ``features.{2,4,6}`` patch merging, ``norm``, ``head``); NHWC inside like torchvision."""

    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.1, num_classes=1000, norm_layer=None, block=None,
                 downsample_layer=None):
        super().__init__()
        block, downsample_layer = block or SwinBlockTV, downsample_layer or PatchMergingTV
        norm = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size),
                                Permute([0, 2, 3, 1]), norm(embed_dim))]
        total, idx = sum(depths), 0
        for i, depth in enumerate(depths):
            dim = embed_dim * 2 ** i
            stage = []
            for j in range(depth):
                shift = [0 if j % 2 == 0 else w // 2 for w in window_size]
                stage.append(block(dim, num_heads[i], window_size, shift, mlp_ratio, dropout, attention_dropout,
                                   stochastic_depth_prob * idx / (total - 1), norm))
                idx += 1
            layers.append(nn.Sequential(*stage))
            if i < len(depths) - 1:
                layers.append(downsample_layer(dim, norm))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm(num_features)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


_TV_ARCH = {"swin_t": (96, (2, 2, 6, 2), (3, 6, 12, 24), 0.2), "swin_s": (96, (2, 2, 18, 2), (3, 6, 12, 24), 0.3),
            "swin_b": (128, (2, 2, 18, 2), (4, 8, 16, 32), 0.5)}


def _tv_swin(name, weights, **kwargs):
    dim, depths, heads, sd = _TV_ARCH[name]
    kwargs.setdefault("stochastic_depth_prob", sd)
    return SwinTransformerTV([4, 4], dim, depths, heads, [7, 7], **kwargs)


def convert_tv_checkpoint(sd, model):
    """torchvision Swin keys -> timm's: its patch merging after stage i is timm's downsample of stage i + 1."""
    target = model.state_dict()
    out = {}
    for k, v in sd.items():
        m = re.match(r"features\.(\d+)\.(.*)", k)
        if m:
            idx, rest = int(m.group(1)), m.group(2)
            if idx == 0:  # patch embed: conv, permute, LayerNorm
                k = "patch_embed." + rest.replace("0.", "proj.", 1).replace("2.", "norm.", 1)
            elif idx % 2 == 0:
                k = f"layers.{idx // 2}.downsample.{rest}"
            else:
                j, rest = rest.split(".", 1)
                rest = rest.replace("mlp.0.", "mlp.fc1.").replace("mlp.3.", "mlp.fc2.")
                k = f"layers.{idx // 2}.blocks.{j}.{rest}"
        else:
            k = k.replace("head.", "head.fc.")
        if k in target or not k.endswith("relative_position_index"):  # index buffers are rebuilt by the model
            out[k] = v
    return out


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "swin_t": ("Swin_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_t-704ceda3.pth", 28288354, (224, 224), 224, 232, "bicubic", 81.474, 95.776),
    ]),
    "swin_s": ("Swin_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_s-5e29d889.pth", 49606258, (224, 224), 224, 246, "bicubic", 83.196, 96.36),
    ]),
    "swin_b": ("Swin_B_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_b-68c6b09e.pth", 87768224, (224, 224), 224, 238, "bicubic", 83.582, 96.64),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_swin)
register_tv_counterpart({"swin_t": "swin_tiny_patch4_window7_224", "swin_s": "swin_small_patch4_window7_224",
                         "swin_b": "swin_base_patch4_window7_224"}, convert_tv_checkpoint)
