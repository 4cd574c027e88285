"""Random number generation: a seedable ``Generator`` (PCG64) and the global default one.

flowvision does not reproduce torch's random streams (they are an implementation detail of torch's
Mersenne Twister and its kernels); the same seed gives the same numbers in flowvision.
"""
import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]


class Generator:
    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 1 << 64
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ._creation import tensor
        import pickle
        return tensor(np.frombuffer(pickle.dumps(self._rng.bit_generator.state), dtype=np.uint8).copy())

    def set_state(self, new_state):
        import pickle
        arr = new_state._data if hasattr(new_state, "_data") else np.asarray(new_state)
        self._rng.bit_generator.state = pickle.loads(arr.astype(np.uint8).tobytes())
        return self

    @property
    def numpy(self):
        """The underlying ``numpy.random.Generator`` (used by the data pipeline)."""
        return self._rng


default_generator = Generator()


def _rng(generator=None):
    return (generator or default_generator)._rng


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
