"""v2 ``Transform`` base: flatten any (nested) tuple/list/dict sample, draw one set of parameters,
apply the per-type kernel to every transformable leaf, rebuild the sample."""
from typing import Tuple, Union

import numpy as np
from PIL import Image as _PILImage

from ...backend.nn.modules.module import Module as _Module
from .. import _functional_tensor as F_t
from . import tv_tensors
from .tv_tensors import BoundingBoxes, Mask, TVTensor, Video


# ----------------------------------------------------------------------------- pytrees
def tree_flatten(obj):
    leaves = []

    def rec(o):
        if isinstance(o, tuple) and not hasattr(o, "_fields"):
            return ("tuple", [rec(x) for x in o])
        if isinstance(o, tuple):  # namedtuple
            return ("namedtuple", type(o), [rec(x) for x in o])
        if isinstance(o, list):
            return ("list", [rec(x) for x in o])
        if isinstance(o, dict):
            return ("dict", type(o), list(o.keys()), [rec(v) for v in o.values()])
        leaves.append(o)
        return ("leaf",)

    spec = rec(obj)
    return leaves, spec


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def rec(s):
        kind = s[0]
        if kind == "leaf":
            return next(it)
        if kind == "tuple":
            return tuple(rec(x) for x in s[1])
        if kind == "namedtuple":
            return s[1](*[rec(x) for x in s[2]])
        if kind == "list":
            return [rec(x) for x in s[1]]
        cls, keys, vals = s[1], s[2], s[3]
        out = {k: rec(v) for k, v in zip(keys, vals)}
        return out if cls is dict else cls(out)

    return rec(spec)


# ----------------------------------------------------------------------------- type helpers
def is_pure_tensor(x):
    return F_t.is_tensor(x) and not isinstance(x, TVTensor)


def _is_image_like(x):
    """Plain inputs that the pure-tensor heuristic applies to: tensors and numpy arrays."""
    return is_pure_tensor(x) or isinstance(x, np.ndarray)


def has_any(flat_inputs, *types):
    for x in flat_inputs:
        for t in types:
            if (isinstance(t, type) and isinstance(x, t)) or (not isinstance(t, type) and t(x)):
                return True
    return False


def has_all(flat_inputs, *types):
    return all(has_any(flat_inputs, t) for t in types)


def get_size(x):
    from . import functional as F

    return F.get_size(x)


def query_size(flat_inputs):
    sizes = {tuple(get_size(x)) for x in flat_inputs
             if _is_image_like(x) or isinstance(x, (TVTensor, _PILImage.Image))}
    if not sizes:
        raise TypeError("No image, video, mask or bounding box was found in the sample")
    if len(sizes) > 1:
        raise ValueError(f"Found multiple HxW dimensions in the sample: {sorted(sizes)}")
    return sizes.pop()


def query_chw(flat_inputs):
    from . import functional as F

    chws = {tuple(F.get_dimensions(x)) for x in flat_inputs
            if _is_image_like(x) or isinstance(x, (tv_tensors.Image, Video, _PILImage.Image))}
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError(f"Found multiple CxHxW dimensions in the sample: {sorted(chws)}")
    return chws.pop()


def get_bounding_boxes(flat_inputs):
    for x in flat_inputs:
        if isinstance(x, BoundingBoxes):
            return x
    raise ValueError("No bounding boxes were found in the sample")


class Transform(_Module):
    """Base of the v2 transforms. Subclasses implement ``make_params(flat_inputs)`` (one draw per call)
    and ``transform(inpt, params)`` (applied to every transformable leaf).

    An ``nn.Module`` as in torchvision; ``__new__`` runs ``Module.__init__`` so subclasses need not call
    ``super().__init__()``."""

    # what the transform touches; the rest passes through
    _transformed_types: Tuple[Union[type, str], ...] = (tv_tensors.Image, Video, Mask, BoundingBoxes, _PILImage.Image, np.ndarray, "tensor")

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        _Module.__init__(self)
        return self

    def __init__(self) -> None:
        super().__init__()

    def _is_transformed_type(self, x):
        for t in self._transformed_types:
            if t == "tensor":
                if F_t.is_tensor(x):
                    return True
            elif isinstance(x, t):
                return True
        return False

    def _needs_transform_list(self, flat_inputs):
        transform_pure = not has_any(flat_inputs, tv_tensors.Image, Video, _PILImage.Image)
        needs = []
        for x in flat_inputs:
            need = self._is_transformed_type(x)
            if need and _is_image_like(x):
                if transform_pure:
                    transform_pure = False
                else:
                    need = False
            needs.append(need)
        return needs

    def check_inputs(self, flat_inputs):
        pass

    def make_params(self, flat_inputs):
        return {}

    def transform(self, inpt, params):
        raise NotImplementedError

    def _call_kernel(self, functional, inpt, *args, **kwargs):
        """torchvision's hook for custom transforms: run ``functional`` (it dispatches on type)."""
        return functional(inpt, *args, **kwargs)

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = tree_flatten(sample)
        self.check_inputs(flat)
        needs = self._needs_transform_list(flat)
        params = self.make_params([x for x, n in zip(flat, needs) if n])
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return tree_unflatten(out, spec)

    def extra_repr(self):
        return ""

    def __repr__(self):
        return f"{type(self).__name__}({self.extra_repr()})"


class _RandomApplyTransform(Transform):
    def __init__(self, p: float = 0.5) -> None:
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def forward(self, *inputs):
        from .. import _random

        sample = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = tree_flatten(sample)
        self.check_inputs(flat)
        if _random.rand() >= self.p:
            return sample
        needs = self._needs_transform_list(flat)
        params = self.make_params([x for x, n in zip(flat, needs) if n])
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return tree_unflatten(out, spec)
