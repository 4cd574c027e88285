"""v2 containers: Compose, RandomApply, RandomChoice, RandomOrder, Identity and Lambda."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .. import _random
from ._transform import Transform


class Compose(Transform):
    """Apply a list of transforms in order, on a whole sample (images, videos, masks, boxes, labels).

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
        ValueError: if it is empty.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        needs_unpack = len(inputs) > 1
        for t in self.transforms:
            outputs = t(*inputs)
            inputs = outputs if needs_unpack else (outputs,)
        return outputs

    def __repr__(self):
        return f"{type(self).__name__}(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class RandomApply(Transform):
    """Apply a list of transforms, in order, with probability ``p``.

    Args:
        transforms (sequence of callables): the transforms.
        p (float): probability of applying the transform. Default ``0.5``.

    Raises:
        TypeError: if ``transforms`` is not a sequence or callable.
        ValueError: if ``p`` is outside ``[0, 1]``.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]] | Callable[..., Any], p: float = 0.5) -> None:
        if not isinstance(transforms, (Sequence, Transform)) and not callable(transforms):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms = list(transforms) if isinstance(transforms, Sequence) else [transforms]
        self.p = p

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        if _random.rand() >= self.p:
            return sample
        for t in self.transforms:
            sample = t(sample)
        return sample


class RandomChoice(Transform):
    """Apply one transform picked at random from a list.

    Args:
        transforms (sequence of callables): the transforms.
        p (sequence of float, optional): relative probability of each transform (normalized to sum to 1).
            Default ``None``: uniform.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
        ValueError: if ``p`` and ``transforms`` have different lengths.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]], p: Sequence[float] | None = None) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        self.transforms = transforms
        total = sum(p)
        self.p = [prob / total for prob in p]

    def forward(self, *inputs):
        idx = int(np.searchsorted(np.cumsum(self.p), _random.rand(), side="right"))
        return self.transforms[min(idx, len(self.transforms) - 1)](*inputs)


class RandomOrder(Transform):
    """Apply a list of transforms in a random order.

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        for i in _random.randperm(len(self.transforms)):
            sample = self.transforms[i](sample)
        return sample


class Identity(Transform):
    """Return the input unchanged.

    """

    def transform(self, inpt, params):
        return inpt


class Lambda(Transform):
    """Apply a user function to every leaf of the sample (or only to leaves of the given types).

    Args:
        lambd (callable): function applied to each selected leaf.
        *types (type): leaf types to apply it to. Default: all (``object``).

    Raises:
        TypeError: if ``lambd`` is not callable.
    """

    def __init__(self, lambd: Callable[[Any], Any], *types: type) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd
        self.types = types or (object,)

    def transform(self, inpt, params):
        return self.lambd(inpt) if isinstance(inpt, self.types) else inpt

    def _needs_transform_list(self, flat_inputs):
        return [True] * len(flat_inputs)
