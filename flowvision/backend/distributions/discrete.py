"""Bernoulli and Categorical (probabilities or logits, as in torch)."""
from __future__ import annotations

import numpy as np

from .. import _creation as C
from .._tensor import Tensor, Size
from .distribution import Distribution, as_param, rng


def _clamp_probs(p: Tensor) -> Tensor:
    eps = float(np.finfo(p._data.dtype).eps)
    return p.clamp(eps, 1 - eps)


class Bernoulli(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = as_param(probs)
            self._param = self.probs
        else:
            self.logits = as_param(logits)
            self._param = self.logits
        super().__init__(self._param.shape, validate_args=validate_args)
        if probs is not None:
            self._check(bool(((self.probs._data >= 0) & (self.probs._data <= 1)).all()), "probs")

    def __getattr__(self, name):
        # probs <-> logits computed lazily from whichever was given
        if name == "probs":
            return self.__dict__["logits"].sigmoid()
        if name == "logits":
            p = _clamp_probs(self.__dict__["probs"])
            return p.log() - (-p).log1p()
        raise AttributeError(name)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(self.probs.detach()._data, shape)
        return Tensor._wrap((rng().random(shape) < p).astype(self._param._data.dtype), self._param._dtype)

    def log_prob(self, value):
        from ..nn import functional as F
        value = as_param(value, self._param)
        logits = self.logits
        from .._ops.shape import broadcast_tensors
        logits, value = broadcast_tensors(logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        from ..nn import functional as F
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = as_param(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = as_param(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        param = self.__dict__.get("probs", self.__dict__.get("logits"))
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)
        if probs is not None:
            self._check(bool((probs._data >= 0).all()), "probs")

    def __getattr__(self, name):
        if name == "probs":
            from ..nn import functional as F
            return F.softmax(self.__dict__["logits"], -1)
        if name == "logits":
            return _clamp_probs(self.__dict__["probs"]).log()
        raise AttributeError(name)

    @property
    def param_shape(self):
        return Size(tuple(self.batch_shape) + (self._num_events,))

    @property
    def mean(self):
        return C.full(tuple(self.batch_shape), float("nan"))

    @property
    def variance(self):
        return C.full(tuple(self.batch_shape), float("nan"))

    def sample(self, sample_shape=Size()):
        shape = tuple(sample_shape) + tuple(self.batch_shape)
        p = self.probs.detach()._data.astype(np.float64).reshape(-1, self._num_events)
        n = int(np.prod(sample_shape)) if len(tuple(sample_shape)) else 1
        cum = np.cumsum(p, -1)
        cum /= cum[:, -1:]
        u = rng().random((n, p.shape[0], 1))
        idx = (u >= cum[None]).sum(-1)  # inverse CDF per row
        return Tensor._wrap(np.minimum(idx, self._num_events - 1).astype(np.int64).reshape(shape))

    def log_prob(self, value):
        value = value if isinstance(value, Tensor) else C.tensor(value)
        v = value.long()
        from .._ops.shape import broadcast_tensors
        v_, logits = broadcast_tensors(v.unsqueeze(-1), self.logits)
        return logits.gather(-1, v_[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits._data.dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        vals = C.arange(self._num_events).reshape((-1,) + (1,) * len(self.batch_shape))
        return vals.expand(-1, *self.batch_shape) if expand else vals
