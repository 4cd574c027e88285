"""``kl_divergence(p, q)`` with a registry of closed forms (Normal||Normal, Categorical||Categorical, ...)."""
from __future__ import annotations

_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for these distribution types."""
    def deco(fn):
        _KL[(type_p, type_q)] = fn
        return fn
    return deco


def kl_divergence(p, q):
    for (tp, tq), fn in _KL.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p = {type(p).__name__}, q = {type(q).__name__}")


def _register():
    from .continuous import Normal, Uniform, Exponential, Beta, Gamma
    from .discrete import Bernoulli, Categorical

    @register_kl(Normal, Normal)
    def _normal(p, q):
        var_ratio = (p.scale / q.scale).pow(2)
        t1 = ((p.loc - q.loc) / q.scale).pow(2)
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())

    @register_kl(Categorical, Categorical)
    def _categorical(p, q):
        t = p.probs * (p.logits - q.logits)
        t = t.masked_fill(q.probs == 0, float("inf"))
        t = t.masked_fill(p.probs == 0, 0.0)
        return t.sum(-1)

    @register_kl(Bernoulli, Bernoulli)
    def _bernoulli(p, q):
        from ..nn import functional as F
        t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
        t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
        return t1 + t2

    @register_kl(Exponential, Exponential)
    def _exponential(p, q):
        rate_ratio = q.rate / p.rate
        return rate_ratio - 1 - rate_ratio.log()

    @register_kl(Uniform, Uniform)
    def _uniform(p, q):
        res = ((q.high - q.low) / (p.high - p.low)).log()
        return res.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))

    @register_kl(Gamma, Gamma)
    def _gamma(p, q):
        from .._special import digamma, lgamma
        t1 = q.concentration * (p.rate / q.rate).log()
        t2 = lgamma(q.concentration) - lgamma(p.concentration)
        t3 = (p.concentration - q.concentration) * digamma(p.concentration)
        t4 = (q.rate - p.rate) * (p.concentration / p.rate)
        return t1 + t2 + t3 + t4

    @register_kl(Beta, Beta)
    def _beta(p, q):
        from .._special import digamma, lgamma
        s1, s0 = p.concentration1, p.concentration0
        t1, t0 = q.concentration1, q.concentration0
        sum_p, sum_q = s1 + s0, t1 + t0
        a = lgamma(t1) + lgamma(t0) + lgamma(sum_p)
        b = lgamma(s1) + lgamma(s0) + lgamma(sum_q)
        c = (s1 - t1) * digamma(s1)
        d = (s0 - t0) * digamma(s0)
        e = (sum_q - sum_p) * digamma(sum_p)
        return a + c + d + e - b


_register()
