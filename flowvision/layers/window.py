"""Swin window partition / reverse with the cyclic shift folded in (one C++ pass each, autograd-aware).

``window_partition(x, window_size, shift)``: (B, H, W, C) -> (B*nW, wh*ww, C), the map rolled by ``-shift``
and zero-padded bottom/right to whole windows, as timm's Swin does before attention.
``window_reverse(windows, window_size, shift, h, w, shortcut=None)``: the inverse (padding cropped, rolled
back by ``+shift``), plus ``shortcut`` when given.
"""
from flowvision.backend._ops.window import window_partition, window_reverse

__all__ = ["window_partition", "window_reverse"]
