"""Dropout: elementwise, per channel (1-D/2-D/3-D) and alpha dropout."""
import math

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...random import _rng
from .common import _const


def _dropout_mask(shape, p, dtype, like=None):
    keep = _rng().random(shape) >= p
    mask = _const((keep / (1.0 - p)).astype(np.float32 if dtype is D.bfloat16 else dtype.np), dtype)
    return mask if like is None or like._device.type == "cpu" else mask.to(like._device)  # drawn on the host


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Dropout, as ``torch.nn.functional.dropout``: while ``training``, each element is zeroed with probability ``p``
    and the kept ones are scaled by ``1 / (1 - p)`` (the expectation is unchanged).

    Args:
        input: a tensor of any shape.
        p: probability of zeroing an element, in ``[0, 1]``.
        training: apply dropout; when False the input is returned as is.
        inplace: write the result into ``input``.

    Returns:
        A tensor shaped like ``input`` (``input`` itself when not training, ``p == 0`` or ``inplace``).

    Raises:
        ValueError: ``p`` is outside ``[0, 1]``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.dropout(flow.ones(4), 0.5, training=False)
        tensor([1., 1., 1., 1.])
    """
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


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout, as ``torch.nn.functional.dropout2d``: while ``training``, each whole channel of each sample is
    zeroed with probability ``p`` and the kept channels are scaled by ``1 / (1 - p)``.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched (then every channel is one unit).
        p: probability of zeroing a channel, in ``[0, 1]``.
        training: apply dropout; when False the input is returned as is.
        inplace: write the result into ``input``.

    Returns:
        A tensor shaped like ``input`` (``input`` itself when not training, ``p == 0`` or ``inplace``).

    Raises:
        ValueError: ``p`` is outside ``[0, 1]``.
    """
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 4 else 1)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout, as ``torch.nn.functional.dropout1d``, over ``(N, C, L)``, or ``(C, L)`` unbatched (then every
    channel is one unit); ``p``, ``training``, ``inplace``, the result and errors as :func:`dropout2d`."""
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 3 else 1)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout, as ``torch.nn.functional.dropout3d``, over ``(N, C, D, H, W)``, or ``(C, D, H, W)``
    unbatched (then every channel is one unit); ``p``, ``training``, ``inplace``, the result and errors as
    :func:`dropout2d`."""
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 5 else 1)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout for self-normalising (SELU) networks, as ``torch.nn.functional.alpha_dropout``: while ``training``,
    dropped elements are set to SELU's negative saturation value and the result is affinely rescaled so the mean and
    variance of the input are kept.

    Args:
        input: a tensor of any shape.
        p: probability of dropping an element, in ``[0, 1]``.
        training: apply dropout; when False (the default) the input is returned as is.
        inplace: accepted for torch compatibility; the result is a new tensor.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        ValueError: ``p`` is outside ``[0, 1]``.
    """
    _check_p(p)
    if not training or p == 0:
        return input
    alpha = -1.7580993408473766
    keep = _const((_rng().random(tuple(input.shape)) >= p).astype(input._compute().dtype), input._dtype)
    a = (1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p)))
    b = -a * alpha * p
    return (input * keep + alpha * (1 - keep)) * a + b
