"""One seedable random source per transform.

Every random flowvision.data transform (AugmentOp, RandAugment, AutoAugment, AugMix, Mixup,
RandomErasing, the crop transforms) draws through a :class:`RandomSource`.  The default source
wraps a private ``numpy.random.Generator``:

* ``seed=None`` -> fresh OS entropy;  ``seed=int`` -> the same augmentation sequence every run.
* **Workers.** A transform copied into DataLoader worker processes (torch or flowvision) would
  otherwise repeat the same sequence in every worker.  The source notices that it runs in a new
  process (pid change) and re-derives its generator from ``(seed, worker seed)`` where the worker
  seed is ``get_worker_info().seed`` of the running loader (``base_seed + worker_id``; the loader
  draws ``base_seed`` from its own seeded RNG every epoch).  So: the same ``seed`` plus the same
  loader seed gives the same sequence in every worker, different workers differ, epochs differ.
  Outside any loader (e.g. ``multiprocessing``) a child process mixes in its pid.

:class:`TimmRandom` is a drop-in source that draws from Python's ``random`` module and the
global ``numpy.random`` state *in the same order and with the same calls as timm 1.0*.  With it,
seeding ``random.seed(s); np.random.seed(s)`` gives timm's exact augmentation for the same seeds;
the parity tests use it to compare whole policies (RandAugment, AutoAugment, AugMix, Mixup,
RandomErasing) with timm, not just single ops.
"""
from __future__ import annotations

import os
import random as _pyrandom
import sys
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

__all__ = ["RandomSource", "TimmRandom", "resolve_rng"]

# what ``rng=`` accepts across flowvision.data: a source, a numpy Generator, an int seed (or a duck-typed source)
RngLike = Union["RandomSource", np.random.Generator, int, None]


def _worker_seed() -> Optional[int]:
    """Seed of the DataLoader worker we run in (torch or flowvision), without importing either."""
    for modname in ("torch.utils.data", "flowvision.backend.utils.data"):
        mod = sys.modules.get(modname)
        fn = getattr(mod, "get_worker_info", None) if mod is not None else None
        if fn is None:
            continue
        try:
            info = fn()
        except Exception:  # pragma: no cover - foreign loader without worker info
            info = None
        if info is not None and getattr(info, "seed", None) is not None:
            return int(info.seed) & 0xFFFFFFFFFFFFFFFF
    return None


class RandomSource:
    """A seedable source of the draws flowvision.data needs (numpy ``Generator`` underneath).

    The method names follow Python's ``random`` module (``random``, ``uniform``, ``gauss``,
    ``randint`` inclusive, ``choice``) plus the numpy draws used by Mixup/AugMix/RandAugment.

    Args:
        seed: an int or ``SeedSequence``; ``None`` draws fresh entropy.
    """

    def __init__(self, seed: Optional[Union[int, np.random.SeedSequence]] = None):
        self.seed = seed
        self._pid = os.getpid()
        self._gen = np.random.default_rng(seed)

    # --- process / worker awareness -------------------------------------------------------
    @property
    def generator(self) -> np.random.Generator:
        if os.getpid() != self._pid:
            self._reseed_for_process()
        return self._gen

    def _reseed_for_process(self):
        self._pid = os.getpid()
        wseed = _worker_seed()
        extra = wseed if wseed is not None else self._pid
        if self.seed is None and wseed is None:
            self._gen = np.random.default_rng()
            return
        base = self.seed.entropy if isinstance(self.seed, np.random.SeedSequence) else self.seed
        entropy = [extra] if base is None else [int(base) & 0xFFFFFFFFFFFFFFFF, extra]
        self._gen = np.random.default_rng(np.random.SeedSequence(entropy))

    def manual_seed(self, seed):
        """Restart the sequence from ``seed`` (like ``torch.Generator.manual_seed``)."""
        self.seed = seed
        self._pid = os.getpid()
        self._gen = np.random.default_rng(seed)
        return self

    def __getstate__(self):
        return {"seed": self.seed, "_pid": self._pid, "_gen": self._gen}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # --- python-random style draws ---------------------------------------------------------
    def random(self) -> float:
        return float(self.generator.random())

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * float(self.generator.random())

    def gauss(self, mu: float, sigma: float) -> float:
        return float(self.generator.normal(mu, sigma))

    def randint(self, a: int, b: int) -> int:
        """Integer in ``[a, b]`` inclusive (like ``random.randint``)."""
        return int(self.generator.integers(a, b + 1))

    def choice(self, seq: Sequence):
        return seq[int(self.generator.integers(0, len(seq)))]

    # --- numpy style draws -----------------------------------------------------------------
    def np_choice(self, n: int, size: int, replace: bool = True, p=None) -> np.ndarray:
        """Indices like ``np.random.choice(n, size, replace, p)``."""
        if replace and p is None:
            return self.generator.integers(0, n, size)  # same distribution, much cheaper
        return self.generator.choice(n, size, replace=replace, p=p)

    def np_rand(self, size=None):
        return self.generator.random(size)

    def np_beta(self, a: float, b: float, size=None):
        return self.generator.beta(a, b, size=size)

    def np_dirichlet(self, alpha):
        return self.generator.dirichlet(alpha)

    def np_randint(self, low, high, size=None):
        """Like ``np.random.randint`` (high exclusive, array bounds allowed)."""
        return self.generator.integers(low, high, size=size)

    def normal(self, shape, dtype=np.float32) -> np.ndarray:
        """Standard normal noise (RandomErasing 'rand'/'pixel' fill)."""
        return self.generator.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)

    def __repr__(self):
        return f"{self.__class__.__name__}(seed={self.seed})"


class TimmRandom(RandomSource):
    """Draws exactly as timm 1.0 does: Python ``random`` + global ``numpy.random`` state.

    ``normal_fn(shape, dtype)`` supplies RandomErasing noise (timm uses torch's RNG there); the
    default uses ``numpy.random.standard_normal``.  Seed with ``random.seed`` / ``np.random.seed``.

    Args:
        normal_fn: ``normal_fn(shape, dtype) -> array`` for the erasing noise.
    """

    def __init__(self, normal_fn: Optional[Callable[..., Any]] = None) -> None:
        self.seed = None
        self._pid = os.getpid()
        self._gen = None  # type: ignore[assignment]  # draws go to the global random/np.random, never a Generator
        self.normal_fn = normal_fn

    @property
    def generator(self):  # not used for draws; kept for API symmetry
        return np.random

    def _reseed_for_process(self):  # global state: nothing to re-derive
        self._pid = os.getpid()

    def manual_seed(self, seed):
        _pyrandom.seed(seed)
        np.random.seed(seed)
        return self

    def random(self):
        return _pyrandom.random()

    def uniform(self, a, b):
        return _pyrandom.uniform(a, b)

    def gauss(self, mu, sigma):
        return _pyrandom.gauss(mu, sigma)

    def randint(self, a, b):
        return _pyrandom.randint(a, b)

    def choice(self, seq):
        return _pyrandom.choice(seq)

    def np_choice(self, n, size, replace=True, p=None):
        return np.random.choice(n, size, replace=replace, p=p)

    def np_rand(self, size=None):
        return np.random.rand() if size is None else np.random.rand(size)

    def np_beta(self, a, b, size=None):
        return np.random.beta(a, b, size=size)

    def np_dirichlet(self, alpha):
        return np.random.dirichlet(alpha)

    def np_randint(self, low, high, size=None):
        return np.random.randint(low, high, size=size)

    def normal(self, shape, dtype=np.float32):
        if self.normal_fn is not None:
            return np.asarray(self.normal_fn(tuple(shape), dtype))
        return np.random.standard_normal(shape).astype(dtype)

    def __getstate__(self):
        return {"seed": None, "_pid": self._pid, "_gen": None, "normal_fn": self.normal_fn}

    def __repr__(self):
        return "TimmRandom()"


def resolve_rng(rng: RngLike = None, seed: Optional[int] = None) -> RandomSource:
    """``rng`` (a RandomSource, a numpy Generator or an int seed) or ``seed`` -> RandomSource.

    Args:
        rng: a source, a numpy Generator, an int seed, or ``None``.
        seed: a seed for a new source when ``rng`` is ``None``.

    Returns:
        The random source.

    Raises:
        ValueError: if both are given.
        TypeError: for another ``rng`` type.
    """
    if rng is not None and seed is not None:
        raise ValueError("pass either rng= or seed=, not both")
    if isinstance(rng, RandomSource):
        return rng
    if isinstance(rng, np.random.Generator):
        src = RandomSource(None)
        src._gen = rng
        return src
    if rng is not None:
        if isinstance(rng, (int, np.integer, np.random.SeedSequence)):
            return RandomSource(rng)
        if all(hasattr(rng, m) for m in ("random", "uniform", "choice")):
            return rng  # duck-typed source implementing the RandomSource methods it is asked for
        raise TypeError(f"rng must be a RandomSource, numpy Generator or int seed, got {type(rng).__name__}")
    return RandomSource(seed)

