"""Dropout: elementwise, per channel (1-D/2-D/3-D) and alpha dropout."""
import math

import numpy as np

from ... import _dtype as D
from ...random import _rng
from .common import _const


def _dropout_mask(shape, p, dtype, like=None):
    keep = _rng().random(shape) >= p
    mask = _const((keep / (1.0 - p)).astype(np.float32 if dtype is D.bfloat16 else dtype.np), dtype)
    return mask if like is None or like._device.type == "cpu" else mask.to(like._device)  # drawn on the host


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        out = input * _dropout_mask(tuple(input.shape), p, input._dtype, input)
    if inplace:
        from ..._ops.inplace import commit
        return commit(input, out)
    return out


def _channel_dropout(input, p, training, inplace, keep_dims):
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:keep_dims]) + (1,) * (input.ndim - keep_dims)
    out = input * 0.0 if p == 1.0 else input * _dropout_mask(shape, p, input._dtype, input)
    if inplace:
        from ..._ops.inplace import commit
        return commit(input, out)
    return out


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 4 else 1)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 3 else 1)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 5 else 1)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
    alpha = -1.7580993408473766
    keep = _const((_rng().random(tuple(input.shape)) >= p).astype(input._compute().dtype), input._dtype)
    a = (1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p)))
    b = -a * alpha * p
    return (input * keep + alpha * (1 - keep)) * a + b
