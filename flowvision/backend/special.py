"""``torch.special``: the special functions, with torch's names."""
from __future__ import annotations

from ._special import digamma, gammaln, logit, multigammaln, polygamma, psi, xlogy  # noqa: F401
from ._ops.elementwise import erf, erfc, erfinv, exp2, expm1, log1p, sigmoid as expit  # noqa: F401

__all__ = ["digamma", "gammaln", "polygamma", "psi", "logit", "multigammaln", "xlogy", "erf", "erfc", "erfinv",
           "exp2", "expm1", "log1p", "expit", "softmax", "log_softmax", "logsumexp", "entr", "sinc", "ndtr",
           "log_ndtr", "ndtri", "xlog1py", "round"]


def softmax(input, dim, *, dtype=None):
    from .nn import functional as F
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    from .nn import functional as F
    return F.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    return input.logsumexp(dim, keepdim)


def entr(input):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    return (-xlogy(input, input)).masked_fill(input < 0, float("-inf"))


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0."""
    from ._ops.elementwise import sinc as _sinc
    return _sinc(input)


def ndtr(input):
    """Standard normal CDF."""
    import math
    return 0.5 * (1 + erf(input / math.sqrt(2)))


def log_ndtr(input):
    return ndtr(input).log()


def ndtri(input):
    """Inverse of the standard normal CDF."""
    import math
    return math.sqrt(2) * erfinv(2 * input - 1)


def xlog1py(input, other):
    zero = input == 0
    return (input * other.masked_fill(zero, 0.0).log1p()).masked_fill(zero, 0.0)


def round(input, *, decimals=0):  # noqa: A001
    return input.round(decimals=decimals) if decimals else input.round()
