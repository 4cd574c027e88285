"""Base class: shapes, argument validation and the ``sample`` = ``rsample`` without grad rule."""
from __future__ import annotations

import numpy as np

from ..import _creation as C
from .._tensor import Tensor, Size
from ..autograd.grad_mode import no_grad


def as_param(value, like: Tensor | None = None) -> Tensor:
    """A float tensor for a distribution parameter given as a tensor or a Python number."""
    if isinstance(value, Tensor):
        return value if value.is_floating_point() else value.float()
    return C.tensor(float(value), dtype=like.dtype if like is not None else None)


def broadcast(*values):
    tensors = [v for v in values if isinstance(v, Tensor)]
    ref = tensors[0] if tensors else None
    ps = [as_param(v, ref) for v in values]
    from .._ops.shape import broadcast_tensors
    return broadcast_tensors(*ps)


def rng():
    from ..random import _rng
    return _rng(None)


class Distribution:
    has_rsample = False
    _validate_default = True

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        self._validate = self._validate_default if validate_args is None else validate_args

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple:
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def _check(self, ok: bool, message: str) -> None:
        if self._validate and not ok:
            raise ValueError(f"Expected parameter {message} of distribution {type(self).__name__} to satisfy the "
                             "constraint, but found invalid values")

    def _check_value(self, ok, name="value") -> None:
        if self._validate and not bool(np.all(ok)):
            raise ValueError(f"Expected {name} argument to be within the support of {type(self).__name__}")

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler (rsample) here; use "
                                  "sample()")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self):
        return f"{type(self).__name__}()"
