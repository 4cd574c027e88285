"""CrossFormer (Wang et al., "CrossFormer: A Versatile Vision Transformer Hinging on Cross-scale Attention",
ICLR 2022, arXiv 2108.00154).

Cross-scale embedding layers (CEL: several convolutions of different kernel sizes with one stride, their outputs
concatenated along channels) embed the image and merge between stages; blocks alternate short-distance attention
(SDA: attention within adjacent GxG groups) and long-distance attention (LDA: groups of embeddings sampled with a
fixed interval), each with a dynamic position bias (DPB: a small MLP mapping relative offsets to per-head biases).

timm has no CrossFormer: parameter names follow the authors' release (``patch_embed.projs.0``,
``layers.2.blocks.3.attn.pos.pos_proj``, ``layers.0.downsample.reductions.1``, ``norm``, ``head``) so their
checkpoints load unchanged. Sizes from the paper's Table 1 (variants) and the authors' configs (CEL kernels
4-8-16-32 for the image, 2-4 for the merges; group size 7).

Ambiguous paper details and what is implemented: the channel split of a CEL (the paper: "the larger kernel,
the fewer channels") is the authors' one -- halving per kernel, the last two kernels sharing the smallest share;
DPB is the non-residual variant with a hidden size of dim/16; when a stage map is not larger than the group
size (stage 4 at 224), every block uses SDA over the whole map. The input must make every stage map a multiple
of the group size (a clear error otherwise), as in the paper.
"""
from typing import List, Optional, Sequence

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.layers import DropPath, Mlp, trunc_normal_

from ._builder import build_model_with_cfg
from ._contract import StagedContract, check_mean_pool, linear_head
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model

__all__ = ["CrossFormer"]


class DynamicPosBias(nn.Module):
    """(dy, dx) offsets -> per-head bias: Linear(2, d), then three LayerNorm-ReLU-Linear steps."""

    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.pos_dim = dim // 4
        self.pos_proj = nn.Linear(2, self.pos_dim)
        self.pos1 = nn.Sequential(nn.LayerNorm(self.pos_dim), nn.ReLU(), nn.Linear(self.pos_dim, self.pos_dim))
        self.pos2 = nn.Sequential(nn.LayerNorm(self.pos_dim), nn.ReLU(), nn.Linear(self.pos_dim, self.pos_dim))
        self.pos3 = nn.Sequential(nn.LayerNorm(self.pos_dim), nn.ReLU(), nn.Linear(self.pos_dim, num_heads))

    def forward(self, offsets):
        return self.pos3(self.pos2(self.pos1(self.pos_proj(offsets))))


class Attention(nn.Module):
    """Multi-head self-attention inside one group of ``group_size**2`` embeddings, with the DPB bias."""

    def __init__(self, dim: int, group_size: int, num_heads: int, qkv_bias: bool = True, attn_drop: float = 0.0,
                 proj_drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.group_size = g = group_size
        self.pos = DynamicPosBias(dim // 4, num_heads)
        # both buffers are in the authors' checkpoints (persistent), so they are here too
        rng = flow.arange(1 - g, g)
        grid = flow.stack(flow.meshgrid(rng, rng, indexing="ij"))  # 2, 2G-1, 2G-1
        self.register_buffer("biases", grid.flatten(1).transpose(0, 1).float())
        coords = flow.stack(flow.meshgrid(flow.arange(g), flow.arange(g), indexing="ij")).flatten(1)  # 2, G*G
        rel = (coords[:, :, None] - coords[:, None, :]) + (g - 1)  # 2, G*G, G*G, each in [0, 2G-2]
        self.register_buffer("relative_position_index", rel[0] * (2 * g - 1) + rel[1])
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4).unbind(0)
        bias = self.pos(self.biases)[self.relative_position_index.reshape(-1)]
        bias = bias.reshape(n, n, self.num_heads).permute(2, 0, 1).unsqueeze(0)
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                           dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class CrossFormerBlock(nn.Module):
    """LayerNorm -> SDA or LDA -> residual, LayerNorm -> MLP -> residual; (B, H, W, C) in and out."""

    def __init__(self, dim: int, num_heads: int, group_size: int, lsda_flag: int, mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop: float = 0.0, attn_drop: float = 0.0, drop_path: float = 0.0):
        super().__init__()
        self.group_size = group_size
        self.lsda_flag = lsda_flag
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, group_size, num_heads, qkv_bias, attn_drop, drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, x):
        b, h, w, c = x.shape
        g = self.group_size
        if h % g or w % g:
            raise ValueError(f"CrossFormer: a {h}x{w} map does not split into {g}x{g} groups; use an input size "
                             f"whose stage maps are multiples of {g} (e.g. 224)")
        y = self.norm1(x)
        if self.lsda_flag == 0:  # SDA: adjacent GxG embeddings
            y = y.reshape(b, h // g, g, w // g, g, c).permute(0, 1, 3, 2, 4, 5)
        else:  # LDA: embeddings (h // g) apart
            y = y.reshape(b, g, h // g, g, w // g, c).permute(0, 2, 4, 1, 3, 5)
        y = self.attn(y.reshape(-1, g * g, c)).reshape(b, h // g, w // g, g, g, c)
        y = y.permute(0, 1, 3, 2, 4, 5) if self.lsda_flag == 0 else y.permute(0, 3, 1, 4, 2, 5)
        x = x + self.drop_path(y.reshape(b, h, w, c))
        return x + self.drop_path(self.mlp(self.norm2(x)))


def _cel_dims(dim_out: int, n: int) -> List[int]:
    """Channels per kernel of a cross-scale embedding: halving, the last two kernels sharing the smallest."""
    return [dim_out // 2 ** (i + 1) if i < n - 1 else dim_out // 2 ** i for i in range(n)]


class PatchEmbed(nn.Module):
    """The image CEL: convs with kernels ``patch_size`` and stride ``patch_size[0]``, concatenated, then
    LayerNorm; (B, C, H, W) -> (B, H/4, W/4, embed_dim)."""

    def __init__(self, patch_size: Sequence[int], in_chans: int, embed_dim: int):
        super().__init__()
        s = patch_size[0]
        self.projs = nn.ModuleList([nn.Conv2d(in_chans, d, ps, stride=s, padding=(ps - s) // 2)
                                    for ps, d in zip(patch_size, _cel_dims(embed_dim, len(patch_size)))])
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        return self.norm(flow.cat([p(x) for p in self.projs], dim=1).permute(0, 2, 3, 1))


class PatchMerging(nn.Module):
    """A merge CEL: LayerNorm, then stride-2 convs with kernels ``patch_size``, concatenated to 2x channels."""

    def __init__(self, dim: int, patch_size: Sequence[int]):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.reductions = nn.ModuleList([nn.Conv2d(dim, d, ps, stride=2, padding=(ps - 2) // 2)
                                         for ps, d in zip(patch_size, _cel_dims(2 * dim, len(patch_size)))])

    def forward(self, x):
        b, h, w, c = x.shape
        if h % 2 or w % 2:
            raise ValueError(f"CrossFormer: cannot merge an odd {h}x{w} map")
        x = self.norm(x).permute(0, 3, 1, 2)
        return flow.cat([r(x) for r in self.reductions], dim=1).permute(0, 2, 3, 1)


class Stage(nn.Module):
    """Blocks alternating SDA and LDA, then the merge to the next stage (none after the last)."""

    def __init__(self, dim: int, depth: int, num_heads: int, group_size: int, merge_size: Optional[Sequence[int]],
                 drop_path: Sequence[float], **block_kw):
        super().__init__()
        self.blocks = nn.ModuleList([CrossFormerBlock(dim, num_heads, group_size, i % 2, drop_path=drop_path[i],
                                                      **block_kw) for i in range(depth)])
        self.downsample = PatchMerging(dim, merge_size) if merge_size else None


class CrossFormer(StagedContract, nn.Module):
    """CrossFormer image classifier.

    Args:
        img_size: the input size the group sizes are decided at (224 in the paper).
        patch_size: kernel sizes of the image CEL. in_chans, num_classes: as usual (0 classes: no head).
        embed_dim: stage-1 channels (doubled at every merge). depths, num_heads, group_size: per stage.
        merge_size: kernel sizes of the three merge CELs.
        mlp_ratio, qkv_bias, drop_rate, attn_drop_rate, drop_path_rate: as in ViT.
        global_pool: 'avg' or ''.
    """
    tokens_last, pool_dims = True, (1, 2)  # stages output (B, H, W, C) embeddings

    def __init__(self, img_size: int = 224, patch_size: Sequence[int] = (4, 8, 16, 32), in_chans: int = 3,
                 num_classes: int = 1000, embed_dim: int = 96, depths: Sequence[int] = (2, 2, 6, 2),
                 num_heads: Sequence[int] = (3, 6, 12, 24), group_size: Sequence[int] = (7, 7, 7, 7),
                 merge_size: Sequence[Sequence[int]] = ((2, 4), (2, 4), (2, 4)), mlp_ratio: float = 4.0,
                 qkv_bias: bool = True, drop_rate: float = 0.0, attn_drop_rate: float = 0.0,
                 drop_path_rate: float = 0.0, global_pool: str = "avg"):
        super().__init__()
        img_size = img_size[0] if isinstance(img_size, (tuple, list)) else img_size
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.global_pool = check_mean_pool(global_pool)
        self.grad_checkpointing = False
        self.patch_embed = PatchEmbed(patch_size, in_chans, embed_dim)
        self.pos_drop = nn.Dropout(drop_rate)
        dpr = [drop_path_rate * j / max(sum(depths) - 1, 1) for j in range(sum(depths))]
        self.layers = nn.ModuleList()
        self.num_stages = len(depths)
        self.feature_info = []
        for i in range(len(depths)):
            dim, res = embed_dim * 2 ** i, img_size // (patch_size[0] * 2 ** i)
            start = sum(depths[:i])
            stage = Stage(dim, depths[i], num_heads[i], min(group_size[i], res),
                          merge_size[i] if i < len(depths) - 1 else None, dpr[start:start + depths[i]],
                          mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, drop=drop_rate, attn_drop=attn_drop_rate)
            if res <= group_size[i]:  # the whole map is one group: SDA only
                for blk in stage.blocks:
                    blk.lsda_flag = 0
            self.layers.append(stage)
            self.feature_info.append(dict(num_chs=dim, reduction=patch_size[0] * 2 ** i,
                                          module=f"layers.{i}.blocks"))
        self.num_features = self.head_hidden_size = embed_dim * 2 ** (len(depths) - 1)
        self.norm = nn.LayerNorm(self.num_features)
        self.head = linear_head(self.num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def group_matcher(self, coarse: bool = False):
        return dict(stem=r"^patch_embed", blocks=[(r"^layers\.(\d+)\.blocks\.(\d+)", None),
                                                  (r"^layers\.(\d+)\.downsample", (0,)), (r"^norm", (99999,))])

    def _stage(self, i: int, x):
        """Stage ``i``'s blocks, after the image embedding (stage 0) or the previous stage's merge: stage outputs
        are taken before their merge."""
        x = self.pos_drop(self.patch_embed(x)) if i == 0 else self.layers[i - 1].downsample(x)
        return self.run_blocks(self.layers[i].blocks, x)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=None, crop_pct=0.875,
                   interpolation="bicubic", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="patch_embed.projs.0", classifier="head", license="mit"), **kwargs}


default_cfgs = generate_default_cfgs({f"crossformer_{s}_patch4_group7_224": _cfg()
                                      for s in ("tiny", "small", "base", "large")})


def _crossformer(variant: str, pretrained: bool, kwargs, **arch):
    return build_model_with_cfg(CrossFormer, variant, pretrained,
                                feature_cfg=dict(feature_cls="getter", out_indices=(0, 1, 2, 3)), **{**arch, **kwargs})


@register_model
def crossformer_tiny_patch4_group7_224(pretrained: bool = False, **kwargs) -> CrossFormer:
    """CrossFormer-T: C=64, depths 1-1-8-6, heads 2-4-8-16."""
    return _crossformer("crossformer_tiny_patch4_group7_224", pretrained, kwargs, embed_dim=64,
                        depths=(1, 1, 8, 6), num_heads=(2, 4, 8, 16))


@register_model
def crossformer_small_patch4_group7_224(pretrained: bool = False, **kwargs) -> CrossFormer:
    """CrossFormer-S: C=96, depths 2-2-6-2, heads 3-6-12-24."""
    return _crossformer("crossformer_small_patch4_group7_224", pretrained, kwargs, embed_dim=96,
                        depths=(2, 2, 6, 2), num_heads=(3, 6, 12, 24))


@register_model
def crossformer_base_patch4_group7_224(pretrained: bool = False, **kwargs) -> CrossFormer:
    """CrossFormer-B: C=96, depths 2-2-18-2, heads 3-6-12-24."""
    return _crossformer("crossformer_base_patch4_group7_224", pretrained, kwargs, embed_dim=96,
                        depths=(2, 2, 18, 2), num_heads=(3, 6, 12, 24))


@register_model
def crossformer_large_patch4_group7_224(pretrained: bool = False, **kwargs) -> CrossFormer:
    """CrossFormer-L: C=128, depths 2-2-18-2, heads 4-8-16-32."""
    return _crossformer("crossformer_large_patch4_group7_224", pretrained, kwargs, embed_dim=128,
                        depths=(2, 2, 18, 2), num_heads=(4, 8, 16, 32))
