"""Argument helpers shared by the v2 transform classes: fill (per input type), size, sequence and interpolation
checks.
"""
from __future__ import annotations

from .._transforms_geometry import _check_sequence_input, _setup_size  # noqa: F401  (shared with v1)
from ._functional_dispatch import _check_interpolation

_FILL_ERR = "Got inappropriate fill arg"


def _convert_fill(fill):
    if fill is None:
        return None
    if isinstance(fill, (int, float)):
        return fill
    if isinstance(fill, (list, tuple)):
        return [float(v) for v in fill]
    raise TypeError(_FILL_ERR)


def _setup_fill_arg(fill):
    if isinstance(fill, dict):
        return {k: _convert_fill(v) for k, v in fill.items()}
    return {"others": _convert_fill(fill)}


def _get_fill(fill_dict, inpt_type):
    for cls in inpt_type.__mro__:
        if cls in fill_dict:
            return fill_dict[cls]
    return fill_dict.get("others")


def _interp(interpolation):
    return _check_interpolation(interpolation)
