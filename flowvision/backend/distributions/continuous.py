"""Normal, Uniform, Exponential, Gamma, Beta, Dirichlet."""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, Size
from .._special import digamma, lgamma, xlogy
from .distribution import Distribution, as_param, broadcast, rng


def _float_array(shape, values, like: Tensor) -> Tensor:
    return Tensor._wrap(np.ascontiguousarray(values, dtype=like._data.dtype).reshape(shape), like._dtype)


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._check(bool((self.scale._data > 0).all()), "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2)

    @property
    def stddev(self):
        return self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _float_array(shape, rng().standard_normal(shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = as_param(value, self.loc)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        from .._ops.elementwise import erf
        return 0.5 * (1 + erf((as_param(value, self.loc) - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        from .._ops.elementwise import erfinv
        return self.loc + self.scale * erfinv(2 * as_param(value, self.loc) - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        self._check(bool((self.low._data < self.high._data).all()), "low < high")

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = _float_array(shape, rng().random(shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = as_param(value, self.low)
        inside = ((self.low <= value) & (self.high > value)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((as_param(value, self.low) - self.low) / (self.high - self.low)).clamp(0, 1)

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(Distribution):
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)
        self._check(bool((self.rate._data > 0).all()), "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        e = _float_array(shape, rng().standard_exponential(shape), self.rate)
        return e / self.rate

    def log_prob(self, value):
        value = as_param(value, self.rate)
        self._check_value(value._data >= 0)
        return self.rate.log() - self.rate * value

    def entropy(self):
        return 1.0 - self.rate.log()


class Gamma(Distribution):
    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)
        self._check(bool((self.concentration._data > 0).all()), "concentration")
        self._check(bool((self.rate._data > 0).all()), "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        conc = np.broadcast_to(self.concentration._data, shape)
        g = rng().standard_gamma(conc.astype(np.float64))
        g = np.maximum(g, np.finfo(self.rate._data.dtype).tiny)  # torch clamps to the smallest normal
        return _float_array(shape, g, self.rate) / self.rate.detach()

    def log_prob(self, value):
        value = as_param(value, self.rate)
        self._check_value(value._data > 0)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value
                - lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)


class Dirichlet(Distribution):
    def __init__(self, concentration, validate_args=None):
        concentration = as_param(concentration)
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)
        self._check(bool((concentration._data > 0).all()), "concentration")

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        conc = np.broadcast_to(self.concentration._data, shape).astype(np.float64)
        g = rng().standard_gamma(conc)
        g = np.maximum(g, np.finfo(np.float64).tiny)
        x = g / g.sum(-1, keepdims=True)
        eps = np.finfo(self.concentration._data.dtype).tiny
        return _float_array(shape, np.clip(x, eps, 1 - np.finfo(self.concentration._data.dtype).eps),
                            self.concentration)

    def log_prob(self, value):
        value = as_param(value, self.concentration)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)


class Beta(Distribution):
    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast(concentration1, concentration0)
        from .._ops.shape import stack
        self._dirichlet = Dirichlet(stack([self.concentration1, self.concentration0], -1),
                                    validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=Size()):
        return self._dirichlet.sample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        value = as_param(value, self.concentration1)
        self._check_value((value._data >= 0) & (value._data <= 1))
        from .._ops.shape import stack
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()
