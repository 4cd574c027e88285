"""Activation modules (thin wrappers over ``nn.functional``), Softmax/LogSoftmax/Softmin."""
from .module import Module
from ..parameter import Parameter
from ... import _creation as C

__all__ = ["Threshold", "ReLU", "ReLU6", "RReLU", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU", "SiLU",
           "Mish", "Sigmoid", "Tanh", "Hardsigmoid", "Hardswish", "Hardtanh", "Softplus", "Softsign",
           "Tanhshrink", "Softshrink", "Hardshrink", "LogSigmoid", "GLU", "Softmax", "LogSoftmax", "Softmin",
           "Softmax2d"]


def _F():
    from .. import functional
    return functional


def _with_inplace(text: str, inplace: bool) -> str:
    """``extra_repr`` text followed by ``inplace=True`` when the module works in place."""
    return text + (", inplace=True" if inplace else "")


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``: ``forward`` calls ``nn.functional.<_function>``."""

    _function: str

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(_F(), self._function)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _AlphaActivation(Module):
    """ELU-style activation with an ``alpha`` and an ``inplace`` flag (``nn.functional.<_function>``)."""

    _function: str

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return getattr(_F(), self._function)(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return _with_inplace(f"alpha={self.alpha}", self.inplace)


class _DimActivation(Module):
    """An activation along one dimension ``dim`` (``nn.functional.<_function>``)."""

    _function: str

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(_F(), self._function)(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return _F().threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return _with_inplace(f"threshold={self.threshold}, value={self.value}", self.inplace)


class ReLU(_InplaceActivation):
    _function = "relu"


class ReLU6(_InplaceActivation):
    _function = "relu6"


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return _F().rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return _with_inplace(f"lower={self.lower}, upper={self.upper}", self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return _F().leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return _with_inplace(f"negative_slope={self.negative_slope}", self.inplace)


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(C.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init as _init
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return _F().prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(_AlphaActivation):
    _function = "elu"


class CELU(_AlphaActivation):
    _function = "celu"


class SELU(_InplaceActivation):
    _function = "selu"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return _F().gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    _function = "silu"


class Mish(_InplaceActivation):
    _function = "mish"


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Hardsigmoid(_InplaceActivation):
    _function = "hardsigmoid"
    extra_repr = Module.extra_repr  # torch prints no options for these


class Hardswish(_InplaceActivation):
    _function = "hardswish"
    extra_repr = Module.extra_repr  # torch prints no options for these


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None or max_value is not None:
            import warnings
            warnings.warn("keyword arguments `min_value` and `max_value` are deprecated and will be removed in "
                          "future releases. Please use `min_val` and `max_val` instead.", FutureWarning,
                          stacklevel=2)
            min_val = min_value if min_value is not None else min_val
            max_val = max_value if max_value is not None else max_val
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise ValueError("max_val must be greater than min_val")

    def forward(self, input):
        return _F().hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _with_inplace(f"min_val={self.min_val}, max_val={self.max_val}", self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return _F().softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    def forward(self, input):
        return _F().softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return _F().tanhshrink(input)


class _Shrink(Module):
    """Soft / hard shrinkage with threshold ``lambd`` (``nn.functional.<_function>``)."""

    _function: str

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return getattr(_F(), self._function)(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    _function = "softshrink"


class Hardshrink(_Shrink):
    _function = "hardshrink"


class LogSigmoid(Module):
    def forward(self, input):
        return _F().logsigmoid(input)


class GLU(_DimActivation):
    _function = "glu"

    def __init__(self, dim: int = -1) -> None:
        super().__init__(dim)


class Softmax(_DimActivation):
    _function = "softmax"


class Softmin(_DimActivation):
    _function = "softmin"


class LogSoftmax(_DimActivation):
    _function = "log_softmax"


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return _F().softmax(input, -3)
