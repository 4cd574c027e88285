"""``Parameter``: a Tensor that a Module registers as a learnable parameter."""
import numpy as np

from .._tensor import Tensor
from .. import _dtype as D


class Parameter(Tensor):
    """A leaf Tensor flagged as a module parameter (``requires_grad=True`` by default).

    It shares storage with the tensor it was built from, like torch's ``nn.Parameter(t)``.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            arr, dt = np.empty((0,), dtype=D.get_default_dtype().np), D.get_default_dtype()
        elif isinstance(data, Tensor):
            arr, dt = data._data, data._dtype
        else:
            arr = np.asarray(data)
            dt = D.from_numpy_dtype(arr.dtype)
        self = object.__new__(cls)
        self._init(arr, dt)
        if isinstance(data, Tensor):
            self._version = data._version
        if requires_grad:
            self.requires_grad = True  # validates the dtype
        return self

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._dtype.name, self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor._wrap(np.array(self._data, copy=True), self._dtype), self.requires_grad)
        if self.grad is not None:
            p.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = p
        return p


def _rebuild_parameter(data, dtype_name, requires_grad):
    return Parameter(Tensor._wrap(data, D._by_name(dtype_name)), requires_grad)


class Buffer(Tensor):
    """Marker like ``torch.nn.Buffer``: assigning one to a module attribute registers a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        t = object.__new__(cls)
        src = data if isinstance(data, Tensor) else Tensor._wrap(np.asarray(data if data is not None else []))
        t._init(src._data, src._dtype)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedParameter(Parameter):
    pass


def is_lazy(param):
    return isinstance(param, UninitializedParameter)
