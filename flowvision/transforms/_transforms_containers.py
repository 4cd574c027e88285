"""v1 containers: Compose (with its fused to-tensor + normalize step), Lambda and the random
containers RandomApply / RandomOrder / RandomChoice.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from . import _random
from . import functional as F
from ._transform_base import Transform
from ._transforms_conversion import ConvertImageDtype, Normalize, ToTensor


def _is_uint8_image(x):
    if F._is_pil_image(x):
        return x.mode in ("L", "RGB", "RGBA", "LA", "CMYK")
    return isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim in (2, 3)


def _is_uint8_chw_tensor(x):
    from . import _functional_tensor as F_t

    return F_t.is_tensor(x) and len(tuple(x.shape)) == 3 and F_t.np_dtype(x.dtype) == np.uint8


def _is_float32(dtype):
    from . import _functional_tensor as F_t

    try:
        return F_t.np_dtype(dtype) == np.float32
    except TypeError:
        return False


class Compose:
    """Apply a list of transforms in order.

    ``ToTensor`` (uint8 PIL / ndarray) or ``ConvertImageDtype(float32)`` (uint8 tensor) directly followed by
    ``Normalize`` is fused into one pass (same numbers up to float rounding, one float buffer instead of three).

    Args:
        transforms (sequence of callables): the transforms, each called with the previous one's output.
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = transforms

    def __call__(self, img):
        ts = self.transforms
        i, n = 0, len(ts)
        while i < n:
            t = ts[i]
            if i + 1 < n and type(ts[i + 1]) is Normalize and not ts[i + 1].inplace:
                norm = ts[i + 1]
                if type(t) is ToTensor and _is_uint8_image(img):
                    img = F._to_tensor_normalize(img, norm.mean, norm.std)
                    i += 2
                    continue
                if type(t) is ConvertImageDtype and _is_uint8_chw_tensor(img) and _is_float32(t.dtype):
                    img = F._uint8_tensor_normalize(img, norm.mean, norm.std)
                    i += 2
                    continue
            img = t(img)
            i += 1
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class Lambda:
    """Apply a user function as a transform.

    Args:
        lambd (callable): function called with the image; its result is returned.

    Raises:
        TypeError: if ``lambd`` is not callable.
    """

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomTransforms:
    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError()

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class RandomApply(Transform):
    """Apply a list of transforms, in order, with probability ``p``.

    Args:
        transforms (sequence of callables): the transforms.
        p (float): probability of applying them. Default ``0.5``.
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]], p: float = 0.5) -> None:
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < _random.rand():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{body}\n)"


class RandomOrder(RandomTransforms):
    """Apply a list of transforms in a random order.

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
    """

    def __call__(self, img):
        for i in _random.randperm(len(self.transforms)):
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one transform picked at random from a list.

    Args:
        transforms (sequence of callables): the transforms.
        p (sequence of float, optional): relative probability of each transform (normalized to sum to 1).
            Default ``None``: uniform.

    Raises:
        TypeError: if ``transforms`` or ``p`` is not a sequence.
        ValueError: if ``p`` and ``transforms`` have different lengths.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]], p: Sequence[float] | None = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        if p is not None and len(p) != len(transforms):
            raise ValueError("Length of p doesn't match the number of transforms")
        self.p = p

    def __call__(self, *args):
        p = self.p
        if p is None:
            idx = _random.randint(0, len(self.transforms))
        else:
            w = np.asarray(p, np.float64)
            idx = int(np.searchsorted(np.cumsum(w / w.sum()), _random.rand(), side="right"))
            idx = min(idx, len(self.transforms) - 1)
        return self.transforms[idx](*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"
