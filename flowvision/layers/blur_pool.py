"""Anti-aliased downsampling (Making Convolutional Networks Shift-Invariant Again, arXiv:1904.11486)."""
from math import comb

import numpy as np

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from .padding import get_padding


class BlurPool2d(nn.Module):
    """Depthwise binomial blur (``filt_size`` taps per axis, reflect-padded) then subsample by ``stride``.

    The filter is a non-persistent buffer (as timm), so state_dicts carry no extra key.
    """

    def __init__(self, channels=None, filt_size=3, stride=2, pad_mode="reflect"):
        super().__init__()
        if filt_size < 2:
            raise ValueError(f"BlurPool2d needs filt_size >= 2, got {filt_size}")
        self.channels = channels
        self.filt_size = filt_size
        self.stride = stride
        self.pad_mode = pad_mode
        self.padding = [get_padding(filt_size, stride, dilation=1)] * 4
        coeffs = np.array([comb(filt_size - 1, k) for k in range(filt_size)], np.float32) / 2 ** (filt_size - 1)
        filt = (coeffs[:, None] * coeffs[None, :])[None, None]
        filt = np.repeat(filt, channels or 1, axis=0)
        self.register_buffer("filt", flow.from_numpy(np.ascontiguousarray(filt)), persistent=False)

    def forward(self, x):
        x = F.pad(x, self.padding, mode=self.pad_mode)
        channels = x.shape[1]
        weight = self.filt if self.channels is not None else self.filt.expand(channels, 1, self.filt_size,
                                                                               self.filt_size)
        return F.conv2d(x, weight, stride=self.stride, groups=channels)

    def extra_repr(self):
        return f"channels={self.channels}, filt_size={self.filt_size}, stride={self.stride}"
