"""Datasets: Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
random_split."""
import bisect
import itertools
import math
import warnings
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..._tensor import Tensor
from ...random import Generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


class Dataset:
    """Map-style dataset: implement ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Iterable-style dataset: implement ``__iter__``. In workers, use ``get_worker_info()`` to shard."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """A dataset whose sample ``i`` is ``tuple(t[i] for t in tensors)``, as ``torch.utils.data.TensorDataset``.

    Args:
        *tensors: tensors with the same size of dim 0.

    Raises:
        ValueError: the first dims differ.

    Examples:
        >>> import flowvision.backend as flow
        >>> from flowvision.backend.utils.data import TensorDataset
        >>> ds = TensorDataset(flow.arange(3), flow.arange(3) * 10)
        >>> len(ds), ds[2]
        (3, (tensor(2), tensor(20)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Stack datasets of the same length, as ``torch.utils.data.StackDataset``: sample ``i`` is the tuple (positional
    datasets) or dict (keyword datasets) of the datasets' samples ``i``.

    Args:
        *args: datasets, giving tuple samples.
        **kwargs: named datasets, giving dict samples.

    Raises:
        ValueError: both or neither of positional and keyword datasets, or different lengths.
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        self._length = None
        self.datasets: Union[Tuple[Dataset, ...], Dict[str, Dataset]]
        if args:
            self._length = len(args[0])  # type: ignore[arg-type]  # map-style: has a length
            if any(self._length != len(d) for d in args):  # type: ignore[arg-type]  # map-style: has a length
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])  # type: ignore[arg-type]  # map-style: has a length
            if any(self._length != len(d) for d in tmp):  # type: ignore[arg-type]  # map-style: has a length
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets, as ``torch.utils.data.ConcatDataset``: indices continue from one
    dataset into the next.

    Args:
        datasets: the datasets (not iterable-style), at least one.

    Raises:
        AssertionError: no dataset, or an iterable-style one (torch raises the same).
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """The chain of iterable-style datasets, iterated one after another, as ``torch.utils.data.ChainDataset``.

    Args:
        datasets: the iterable-style datasets.
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order, as ``torch.utils.data.Subset``.

    Args:
        dataset: the whole dataset.
        indices: positions in ``dataset``.
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[Union[int, float]],
                 generator: Optional[Generator] = None) -> List[Subset]:
    """Split a dataset into non-overlapping random subsets, as ``torch.utils.data.random_split``.

    Args:
        dataset: the map-style dataset to split.
        lengths: the subsets' lengths (summing to ``len(dataset)``), or fractions summing to 1 (rounded down, the
            remainder given out one by one from the first subset).
        generator: the random generator; None means the global one.

    Returns:
        One :class:`Subset` per length.

    Raises:
        ValueError: a fraction outside ``[0, 1]``, or lengths that do not sum to the dataset's length.

    Examples:
        >>> from flowvision.backend.utils.data import random_split
        >>> [len(s) for s in random_split(range(10), [0.7, 0.3])]
        [7, 3]
    """
    from ...random import _rng
    n = len(dataset)  # type: ignore[arg-type]  # map-style: has a length
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(n * frac)))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, size in enumerate(lengths):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _rng(generator).permutation(sum(lengths)).tolist()
    out = []
    for offset, length in zip(itertools.accumulate(lengths), lengths):
        out.append(Subset(dataset, indices[offset - length:offset]))
    return out
