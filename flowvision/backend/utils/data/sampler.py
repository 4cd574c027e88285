"""Samplers: Sequential, Random (with generator), SubsetRandom, WeightedRandom, Batch, Distributed."""
import math
import os
from typing import Iterable, Optional, Sequence, Sized, Union

import numpy as np

from ..._tensor import Tensor
from ...random import Generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "DistributedSampler"]


def _new_seed(generator):
    """A fresh 63-bit seed drawn from ``generator`` (the default generator when None), like torch."""
    from ...random import _rng
    return int(_rng(generator).integers(0, 2 ** 63 - 1))


class Sampler:
    """Base class of samplers, as ``torch.utils.data.Sampler``: an iterable of dataset indices (or of index lists, for
    batch samplers); subclasses implement ``__iter__`` and usually ``__len__``.

    Args:
        data_source: accepted for torch compatibility (unused by the base class).
    """

    def __init__(self, data_source: Optional[Sized] = None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``0, ..., len(data_source) - 1`` in order, as ``torch.utils.data.SequentialSampler``.

    Args:
        data_source: the dataset (only its length is used).
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a permutation, or ``num_samples`` draws with ``replacement``.

    Args:
        data_source: the dataset.
        replacement: draw with replacement.
        num_samples: how many indices (default: the dataset's length).
        generator: a ``flowvision.backend.Generator`` for reproducible order.
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Optional[Generator] = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ...random import Generator
        n = len(self.data_source)
        if self.generator is None:
            gen = Generator().manual_seed(_new_seed(None))
        else:
            gen = self.generator
        rng = gen.numpy
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from rng.integers(0, n, 32).tolist()
            yield from rng.integers(0, n, self.num_samples % 32).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rng.permutation(n).tolist()
            yield from rng.permutation(n).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new permutation every epoch), as
    ``torch.utils.data.SubsetRandomSampler``.

    Args:
        indices: the indices to sample.
        generator: the random generator; None means the global one.
    """

    def __init__(self, indices: Sequence[int], generator: Optional[Generator] = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ...random import _rng
        for i in _rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Args:
        weights: one non-negative weight per index.
        num_samples: how many indices.
        replacement: draw with replacement.
        generator: a random generator.
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Optional[Generator] = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights._compute() if isinstance(weights, Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and not all "
                               "zero)")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ...random import _rng
        p = self.weights / self.weights.sum()
        yield from _rng(self.generator).choice(len(p), size=self.num_samples, replace=self.replacement,
                                               p=p).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler: the index source.
        batch_size: indices per batch.
        drop_last: drop a final smaller batch.
    """

    def __init__(self, sampler: Union[Sampler, Iterable[int]], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler):
    """The share of one process in distributed data-parallel training, as ``torch.utils.data.DistributedSampler``: the
    indices (shuffled with ``seed + epoch``, see ``set_epoch``) are padded to a multiple of ``num_replicas`` (or
    trimmed with ``drop_last``) and process ``rank`` takes every ``num_replicas``-th one from position ``rank``.

    Without a process group, ``num_replicas`` and ``rank`` default to ``WORLD_SIZE`` and ``RANK`` from the
    environment, else 1 and 0.

    Args:
        dataset: the dataset (only its length is used).
        num_replicas: the number of processes.
        rank: this process's rank, in ``[0, num_replicas)``.
        shuffle: shuffle the indices.
        seed: the shuffle seed, the same on every process.
        drop_last: drop the tail that does not divide evenly instead of padding with repeated indices.

    Raises:
        ValueError: a rank outside ``[0, num_replicas)``.
    """

    def __init__(self, dataset: Sized, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = int(os.environ.get("WORLD_SIZE", 1))
        if rank is None:
            rank = int(os.environ.get("RANK", 0))
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            from ...random import Generator
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = g.numpy.permutation(len(self.dataset)).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"expected {self.total_size} indices, got {len(indices)}")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"expected {self.num_samples} indices, got {len(indices)}")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
