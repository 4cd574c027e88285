"""PixelShuffle / PixelUnshuffle (reshape + permute, differentiable through the Tensor ops)."""
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "pixel_shuffle", "pixel_unshuffle"]


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    oc = c // (r * r)
    n = len(lead)
    x = input.reshape(*lead, oc, r, r, h, w)
    perm = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    return x.permute(*perm).reshape(*lead, oc, h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r != 0 or w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, got "
                           f"{h}x{w} and {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    perm = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return x.permute(*perm).reshape(*lead, c * r * r, h // r, w // r)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        from .. import functional as F
        fn = getattr(F, "pixel_shuffle", pixel_shuffle)
        return fn(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        from .. import functional as F
        fn = getattr(F, "pixel_unshuffle", pixel_unshuffle)
        return fn(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
