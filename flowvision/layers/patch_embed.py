"""Image to patch embedding (timm names: proj, norm)."""
from flowvision.backend import nn

from .helpers import to_2tuple


class PatchEmbed(nn.Module):
    """``(B, C, H, W)`` -> ``(B, N, D)`` (or NCHW with ``flatten=False``, NHWC with ``output_fmt='NHWC'``)."""

    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768, norm_layer=None, flatten=True,
                 bias=True, strict_img_size=True, output_fmt=None):
        super().__init__()
        self.patch_size = to_2tuple(patch_size)
        if img_size is not None:
            self.img_size = to_2tuple(img_size)
            self.grid_size = tuple(s // p for s, p in zip(self.img_size, self.patch_size))
            self.num_patches = self.grid_size[0] * self.grid_size[1]
        else:
            self.img_size = self.grid_size = self.num_patches = None
        if output_fmt not in (None, "NCHW", "NHWC"):
            raise ValueError(f"output_fmt must be None, 'NCHW' or 'NHWC', got {output_fmt!r}")
        self.output_fmt = output_fmt
        self.flatten = flatten and output_fmt is None
        self.strict_img_size = strict_img_size
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size, bias=bias)
        self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"PatchEmbed expects a (B, C, H, W) tensor, got shape {tuple(x.shape)}")
        _, c, h, w = x.shape
        if c != self.proj.in_channels:
            raise ValueError(f"input has {c} channels, the model expects {self.proj.in_channels}")
        if self.img_size is not None and self.strict_img_size and (h, w) != self.img_size:
            raise ValueError(f"input size ({h}x{w}) does not match the model ({self.img_size[0]}x{self.img_size[1]})")
        if h % self.patch_size[0] or w % self.patch_size[1]:
            raise ValueError(f"input size ({h}x{w}) is not divisible by the patch size {self.patch_size}")
        x = self.proj(x)
        if self.flatten:
            x = x.flatten(2).transpose(1, 2)
        elif self.output_fmt == "NHWC":
            x = x.permute(0, 2, 3, 1)
        return self.norm(x)
