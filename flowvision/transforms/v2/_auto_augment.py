"""v2 auto-augment policies (AutoAugment, RandAugment, TrivialAugmentWide, AugMix) on images and videos,
wrapping the v1 implementations.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import autoaugment as AA
from . import functional as F
from ._transform import has_any
from .tv_tensors import BoundingBoxes, Mask
from ._color import _ColorTransform


class _V1ImageWrapper(_ColorTransform):
    _v1_cls: Callable[..., Any]  # the v1 class this transform runs (set by each subclass)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._v1 = self._v1_cls(*args, **kwargs)

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, BoundingBoxes, Mask):
            raise TypeError(f"{type(self).__name__}() supports images only in flowvision (no boxes or masks)")

    def transform(self, inpt, params):
        return F._rewrap(self._v1(F._plain(inpt)), inpt)

    def __getattr__(self, name):
        # the wrapped transform is a child module: Module.__getattr__ finds it in _modules
        v1 = super().__getattr__("_v1")
        return v1 if name == "_v1" else getattr(v1, name)


class AutoAugment(_V1ImageWrapper):
    """AutoAugment on images (arguments and semantics of :class:`flowvision.transforms.AutoAugment`).

    Args:
        *args: positional arguments of the v1 class.
        **kwargs: keyword arguments of the v1 class.

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.AutoAugment


class RandAugment(_V1ImageWrapper):
    """RandAugment on images (arguments and semantics of :class:`flowvision.transforms.RandAugment`).

    Args:
        *args: positional arguments of the v1 class.
        **kwargs: keyword arguments of the v1 class.

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.RandAugment


class TrivialAugmentWide(_V1ImageWrapper):
    """TrivialAugmentWide on images (arguments of :class:`flowvision.transforms.TrivialAugmentWide`).

    Args:
        *args: positional arguments of the v1 class.
        **kwargs: keyword arguments of the v1 class.

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.TrivialAugmentWide


class AugMix(_V1ImageWrapper):
    """AugMix on images (arguments and semantics of :class:`flowvision.transforms.AugMix`).

    Args:
        *args: positional arguments of the v1 class.
        **kwargs: keyword arguments of the v1 class.

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.AugMix
