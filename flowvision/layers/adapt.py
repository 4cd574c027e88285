"""Adapt a pretrained first-conv weight to another number of input channels (as timm does)."""
import math

import numpy as np


def adapt_input_conv(in_chans, conv_weight):
    """``conv_weight`` (numpy, O x I x kH x kW) for ``in_chans`` inputs.

    1 channel: sum over the RGB filters; otherwise repeat the RGB filters and scale by ``3 / in_chans``.
    """
    w = np.asarray(conv_weight, dtype=np.float32)
    o, i, kh, kw = w.shape
    if in_chans == i:
        return w
    if in_chans == 1:
        if i > 3:
            if i % 3:
                raise ValueError("weight format not supported by conversion")
            w = w.reshape(o, i // 3, 3, kh, kw).sum(axis=2)
        else:
            w = w.sum(axis=1, keepdims=True)
        return np.ascontiguousarray(w)
    if i != 3:
        raise ValueError("weight format not supported by conversion")
    repeat = int(math.ceil(in_chans / 3))
    w = np.tile(w, (1, repeat, 1, 1))[:, :in_chans]
    return np.ascontiguousarray(w * (3 / float(in_chans)))
