"""The one seedable source of randomness for flowvision.transforms.

torchvision draws from torch's global RNG; flowvision draws from one numpy ``Generator``.
``manual_seed(s)`` makes every transform reproducible. After a ``fork`` (data-loader workers)
the generator is re-seeded from ``(seed, pid)`` so workers do not repeat each other's draws.
The source is ``flowvision.backend``'s default generator, so ``flowvision.backend.manual_seed``
seeds transforms the way ``torch.manual_seed`` seeds torchvision's.
"""
import os
from typing import Any, Dict

import numpy as np

_state: Dict[str, Any] = {"pid": os.getpid(), "local": None}


def _fb_random():
    try:
        from flowvision.backend import random as fb_random
    except Exception:  # pragma: no cover - engine not built
        return None
    return fb_random


def manual_seed(seed: int) -> None:
    """Seed the transforms RNG; this is ``flowvision.backend.manual_seed`` (one global source, like
    ``torch.manual_seed`` for torchvision transforms)."""
    fbr = _fb_random()
    if fbr is not None:
        fbr.manual_seed(int(seed))
    else:
        _state["local"] = np.random.default_rng(int(seed))
    _state["pid"] = os.getpid()


def generator():
    """The numpy ``Generator`` behind flowvision.backend's default generator.

    In a forked child (data-loader worker) that nobody re-seeded, it is re-seeded once from
    (initial seed, pid) so that workers do not repeat each other's augmentations.
    """
    fbr = _fb_random()
    pid = os.getpid()
    if pid != _state["pid"]:
        _state["pid"] = pid
        if fbr is not None:
            fbr.default_generator.manual_seed(
                int(np.random.SeedSequence([fbr.initial_seed() % (1 << 63), pid]).generate_state(1, np.uint64)[0]))
        elif _state["local"] is not None:
            _state["local"] = np.random.default_rng([pid])
    if fbr is not None:
        return fbr.default_generator.numpy
    if _state["local"] is None:
        _state["local"] = np.random.default_rng()
    return _state["local"]


def rand():
    """One float in [0, 1)."""
    return float(generator().random())


def uniform(low, high):
    return float(low + (high - low) * generator().random())


def randint(low, high):
    """An int in [low, high) (like ``torch.randint(low, high, (1,))``)."""
    if high <= low:
        raise ValueError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return int(generator().integers(low, high))


def randperm(n):
    return [int(i) for i in generator().permutation(n)]


def normal(shape, dtype=np.float32):
    return generator().standard_normal(shape).astype(dtype)


def rand_array(shape, dtype=np.float32):
    return generator().random(shape).astype(dtype)


def dirichlet(alpha):
    return generator().dirichlet(alpha)


def beta(a, b):
    return float(generator().beta(a, b))
