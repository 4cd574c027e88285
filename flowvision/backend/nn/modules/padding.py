"""Padding modules: Zero/Constant/Reflection/Replication/Circular pads (1d, 2d)."""
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d"]


def _F():
    from .. import functional
    return functional


def _ntuple(x, n):
    if isinstance(x, (tuple, list)):
        if len(x) != n:
            raise ValueError(f"padding must be an int or a {n}-tuple, got {x!r}")
        return tuple(x)
    return (x,) * n


class _PadNd(Module):
    _mode = "constant"
    _n = 4

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _ntuple(padding, self._n)
        if self._mode == "constant":
            self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return _F().pad(input, self.padding, "constant", self.value)
        return _F().pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad1d(_PadNd):
    _n = 2

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _EdgePad(_PadNd):
    """Reflect / replicate / circular padding: no fill value."""

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReflectionPad1d(_EdgePad):
    _mode, _n = "reflect", 2


class ReflectionPad2d(_EdgePad):
    _mode = "reflect"


class ReplicationPad1d(_EdgePad):
    _mode, _n = "replicate", 2


class ReplicationPad2d(_EdgePad):
    _mode = "replicate"


class CircularPad1d(_EdgePad):
    _mode, _n = "circular", 2


class CircularPad2d(_EdgePad):
    _mode = "circular"
