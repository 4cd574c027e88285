"""PixelShuffle / PixelUnshuffle modules over ``nn.functional.pixel_shuffle`` / ``pixel_unshuffle``."""
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


def _F():
    from .. import functional
    return functional


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return _F().pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return _F().pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
