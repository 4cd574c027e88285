"""The one seedable source of randomness for flowvision.transforms.

torchvision draws from torch's global RNG; flowvision draws from one numpy ``Generator``.
``manual_seed(s)`` makes every transform reproducible. After a ``fork`` (data-loader workers)
the generator is re-seeded from ``(seed, pid)`` so workers do not repeat each other's draws.
"""
import os

import numpy as np

_state = {"gen": None, "pid": None, "seed": None}


def manual_seed(seed):
    """Seed the transforms RNG (like ``torch.manual_seed`` for torchvision transforms)."""
    _state["seed"] = int(seed)
    _state["gen"] = np.random.default_rng(int(seed))
    _state["pid"] = os.getpid()


def initial_seed():
    return _state["seed"]


def generator():
    pid = os.getpid()
    gen = _state["gen"]
    if gen is None or _state["pid"] != pid:
        if gen is None or _state["seed"] is None:
            gen = np.random.default_rng()
        else:
            gen = np.random.default_rng([_state["seed"], pid])
        _state["gen"] = gen
        _state["pid"] = pid
    return gen


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
