"""Identity, Linear, Bilinear, LazyLinear-free linear layers."""
import math

from .module import Module
from ..parameter import Parameter
from .. import init
from ... import _creation as C

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


def _F():
    from .. import functional
    return functional


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(C.empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return _F().linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    pass


class Bilinear(Module):
    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(C.empty((out_features, in1_features, in2_features), dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        from ...import _ops  # noqa: F401
        from ..._ops.linalg import einsum
        out = einsum("bi,oij,bj->bo", input1.reshape(-1, self.in1_features), self.weight,
                     input2.reshape(-1, self.in2_features))
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(tuple(input1.shape[:-1]) + (self.out_features,))

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
