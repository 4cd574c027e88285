"""``torch.distributions``: the distributions training code samples from and scores with.

Normal, Uniform, Exponential, Bernoulli, Categorical, Gamma, Beta and Dirichlet with torch's constructor
arguments, ``sample``/``rsample``, ``log_prob``, ``entropy``, ``mean``/``variance`` and ``kl_divergence`` for
Normal and Categorical pairs.  Samples come from the engine's default generator (``manual_seed`` reproduces
them).  ``log_prob``/``entropy`` are differentiable in the parameters; ``rsample`` (reparameterised) exists for
Normal, Uniform and Exponential; Gamma/Beta/Dirichlet sample without a gradient (``has_rsample`` is False).
"""
from .distribution import Distribution  # noqa: F401
from .continuous import Normal, Uniform, Exponential, Gamma, Beta, Dirichlet  # noqa: F401
from .discrete import Bernoulli, Categorical  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401

__all__ = ["Distribution", "Normal", "Uniform", "Exponential", "Gamma", "Beta", "Dirichlet", "Bernoulli",
           "Categorical", "kl_divergence", "register_kl"]
