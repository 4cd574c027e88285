"""The Tensor: a numpy array plus dtype, device and autograd state.

Op methods (``add``, ``sum``, ``view``...) are attached from the op modules in ``_methods.py``;
this file holds the object itself and what is not an op (conversion, printing, grad plumbing).
"""
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtype as D
from ._bf16 import bf16_to_f32
from ._device import device as Device, CPU
from .autograd import graph as G

_CUDA0 = Device("cuda", 0)


class Size(tuple):
    """torch.Size: a tuple with ``numel()``."""

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"flowvision.Size([{', '.join(str(s) for s in self)}])"

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r


class Tensor:
    __slots__ = ("_data", "_dtype", "_device", "requires_grad_flag", "grad", "_grad_fn", "_output_nr",
                 "_version", "_base", "_view_fn", "_view_version", "_accum", "_retains_grad", "_hooks_leaf",
                 "__weakref__",
                 "__dict__")

    __array_priority__ = 1000  # numpy defers to our reflected operators

    if TYPE_CHECKING:  # attached by _methods.py at import; declared here for type checkers only
        def __getattr__(self, name: str) -> Any: ...
        def __add__(self, other: Any) -> "Tensor": ...
        def __radd__(self, other: Any) -> "Tensor": ...
        def __iadd__(self, other: Any) -> "Tensor": ...
        def __sub__(self, other: Any) -> "Tensor": ...
        def __rsub__(self, other: Any) -> "Tensor": ...
        def __isub__(self, other: Any) -> "Tensor": ...
        def __mul__(self, other: Any) -> "Tensor": ...
        def __rmul__(self, other: Any) -> "Tensor": ...
        def __imul__(self, other: Any) -> "Tensor": ...
        def __truediv__(self, other: Any) -> "Tensor": ...
        def __rtruediv__(self, other: Any) -> "Tensor": ...
        def __itruediv__(self, other: Any) -> "Tensor": ...
        def __floordiv__(self, other: Any) -> "Tensor": ...
        def __rfloordiv__(self, other: Any) -> "Tensor": ...
        def __ifloordiv__(self, other: Any) -> "Tensor": ...
        def __mod__(self, other: Any) -> "Tensor": ...
        def __rmod__(self, other: Any) -> "Tensor": ...
        def __imod__(self, other: Any) -> "Tensor": ...
        def __pow__(self, other: Any) -> "Tensor": ...
        def __rpow__(self, other: Any) -> "Tensor": ...
        def __ipow__(self, other: Any) -> "Tensor": ...
        def __matmul__(self, other: Any) -> "Tensor": ...
        def __rmatmul__(self, other: Any) -> "Tensor": ...
        def __imatmul__(self, other: Any) -> "Tensor": ...
        def __and__(self, other: Any) -> "Tensor": ...
        def __rand__(self, other: Any) -> "Tensor": ...
        def __iand__(self, other: Any) -> "Tensor": ...
        def __or__(self, other: Any) -> "Tensor": ...
        def __ror__(self, other: Any) -> "Tensor": ...
        def __ior__(self, other: Any) -> "Tensor": ...
        def __xor__(self, other: Any) -> "Tensor": ...
        def __rxor__(self, other: Any) -> "Tensor": ...
        def __ixor__(self, other: Any) -> "Tensor": ...
        def __eq__(self, other: Any) -> "Tensor": ...  # type: ignore[override]
        def __ne__(self, other: Any) -> "Tensor": ...  # type: ignore[override]
        def __lt__(self, other: Any) -> "Tensor": ...
        def __le__(self, other: Any) -> "Tensor": ...
        def __gt__(self, other: Any) -> "Tensor": ...
        def __ge__(self, other: Any) -> "Tensor": ...
        def __neg__(self) -> "Tensor": ...
        def __pos__(self) -> "Tensor": ...
        def __abs__(self) -> "Tensor": ...
        def __invert__(self) -> "Tensor": ...

    def __init__(self, *args, dtype=None, device=None):
        # torch.Tensor(2, 3) -> uninitialised float; torch.Tensor([1, 2]) -> float copy
        from ._creation import tensor as _tensor_fn
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            t = _tensor_fn(args[0], dtype=dtype or D.get_default_dtype())
            arr = t._data
        else:
            arr = np.empty(tuple(int(a) for a in args), dtype=(dtype or D.get_default_dtype()).np)
        self._init(arr, t._dtype if len(args) == 1 and not isinstance(args[0], (int, np.integer))
                   else (dtype or D.get_default_dtype()))

    def _init(self, arr, dtype):
        self._data = arr
        self._dtype = dtype
        # a _C_cuda.DeviceArray makes a CUDA tensor (flowvision/backend/_cuda)
        self._device = CPU if arr.__class__ is np.ndarray or arr.__class__.__name__ != "DeviceArray" else _CUDA0
        self.requires_grad_flag = False
        self.grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._version = [0]
        self._base = None
        self._view_fn = None
        self._view_version = None  # differentiable views: the version their grad_fn was recorded at
        self._accum = None
        self._retains_grad = False
        self._hooks_leaf = None

    @classmethod
    def _wrap(cls, arr, dtype=None):
        t = object.__new__(cls)
        if dtype is None:
            dtype = D.from_numpy_dtype(arr.dtype)
        t._init(arr, dtype)
        return t

    # ----------------------------------------------------------------- properties
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self.ndim)]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._dtype.itemsize * self.numel()

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return False

    def stride(self, dim=None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self.ndim)]

    def storage_offset(self):
        root = self._storage_base()
        if root is self:
            return 0
        return (self._data.__array_interface__["data"][0] - root._data.__array_interface__["data"][0]) \
            // self._data.itemsize

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        if memory_format is None or self._data.__class__ is not np.ndarray:
            return bool(self._data.flags["C_CONTIGUOUS"])
        from ._memory_format import is_contiguous_as, format_name
        return is_contiguous_as(self._data, format_name(memory_format))

    # ----------------------------------------------------------------- autograd state
    def _sync_view(self):
        """A view whose base was modified in place since its history was recorded gets a fresh grad_fn
        (torch regenerates it the same way), so gradients reach whatever was written into the base."""
        if self._view_version is not None and self._view_version != self._version[0]:
            from ._ops.inplace import refresh_view
            refresh_view(self)

    @property
    def requires_grad(self):
        self._sync_view()
        return self.requires_grad_flag

    @requires_grad.setter
    def requires_grad(self, value):
        value = bool(value)
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients (got {self._dtype})")
        if not value and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        self.requires_grad_flag = value

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        self._sync_view()
        return self._grad_fn

    @property
    def is_leaf(self):
        self._sync_view()
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version_counter(self):
        return self._version[0]

    def _accumulator(self):
        if self._accum is None:
            self._accum = G.AccumulateGrad(self)
            if self._hooks_leaf:
                for h in self._hooks_leaf:
                    self._accum.register_prehook(0, h)
        return self._accum

    def detach(self):
        # shares storage and the version counter, but is a new autograd root (torch: not a differentiable
        # view), so in-place ops on it never rewire the history of ``self`` or its base
        t = Tensor._wrap(self._data, self._dtype)
        t._version = self._version
        t._storage_root = self._storage_base()
        return t

    def _storage_base(self):
        """The tensor whose data starts the shared storage (for storage_offset)."""
        if self._base is not None:
            return self._base._storage_base()
        return self.__dict__.get("_storage_root", self)

    def detach_(self):
        self._grad_fn = None
        self.requires_grad_flag = False
        return self

    @property
    def data(self):
        t = Tensor._wrap(self._data, self._dtype)
        t._version = self._version
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(other).__name__}")
        self._data = other._data
        self._dtype = other._dtype
        self._device = other._device

    def retain_grad(self):
        if self._grad_fn is None:
            return  # leaves keep their grad anyway
        if self._retains_grad:
            return
        self._retains_grad = True
        import weakref
        ref = weakref.ref(self)

        def _retain(grad):
            t = ref()
            if t is not None:
                g = grad._data
                t.grad = Tensor._wrap(np.array(g, copy=True), grad._dtype) if t.grad is None else \
                    Tensor._wrap(t.grad._data + g, grad._dtype)
        self._grad_fn.register_prehook(self._output_nr, _retain)

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn.register_prehook(self._output_nr, hook)
        if self._hooks_leaf is None:
            self._hooks_leaf = []
        self._hooks_leaf.append(hook)
        if self._accum is not None:
            self._accum.register_prehook(0, hook)
        return _LeafHookHandle(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` each time backward has accumulated a gradient into this leaf's ``.grad``.

        Args:
            hook: a callable taking the leaf tensor; its return value is ignored.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = self.__dict__.setdefault("_post_accumulate_hooks", {})
        key = object()
        hooks[key] = hook
        return _DictHookHandle(hooks, key)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward as _backward
        _backward([self], None if gradient is None else [gradient], retain_graph, create_graph, inputs)

    # ----------------------------------------------------------------- conversion
    def numpy(self, force=False):
        if self._device is not CPU:
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._dtype is D.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16: numpy has no bfloat16; use .float().numpy()")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self._compute()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return np.array(arr, copy=True) if copy else arr

    def _compute(self):
        """The data as a numpy array in its compute dtype (bfloat16 -> float32); a CUDA tensor is copied
        to the host."""
        if self._device is not CPU:
            return self.detach().cpu()._compute()
        return bf16_to_f32(self._data) if self._dtype is D.bfloat16 else self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._compute().reshape(()).item()

    def tolist(self):
        return self._compute().tolist()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no' if self._data.size == 0 else 'more than one'} "
                "value is ambiguous")
        return bool(self._compute().reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __hash__(self):
        return id(self)

    def __dlpack__(self, stream=None, **kwargs):
        if self._dtype is D.bfloat16:
            raise TypeError("bfloat16 tensors can't be exported through DLPack by the numpy-backed CPU engine")
        if self.requires_grad:
            raise RuntimeError("Can't export a tensor that requires grad through DLPack; use .detach() first")
        return self._data.__dlpack__(**({"stream": stream} if stream is not None else {}), **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def to(self, *args, **kwargs):
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        mem_format = kwargs.pop("memory_format", None)
        for a in args:
            if isinstance(a, Tensor):
                dtype, dev = a._dtype, a._device
            elif isinstance(a, (D.dtype,)) or (not isinstance(a, (str, Device)) and hasattr(a, "is_floating_point")):
                dtype = a
            elif isinstance(a, (str, Device, int)) and not isinstance(a, bool):
                dev = a
            elif isinstance(a, type) or isinstance(a, np.dtype):
                dtype = a
        out = self
        if dev is not None:
            out = out._to_device(Device(dev) if not isinstance(dev, Device) else dev)
        if dtype is not None:
            dtype = D.as_dtype(dtype)
            if dtype is not out._dtype:
                from ._ops.elementwise import cast
                out = cast(out, dtype)
        if mem_format is not None:
            from ._memory_format import to_memory_format
            out = to_memory_format(out, mem_format)
        if copy and out is self:
            out = self.clone()
        return out

    def _to_device(self, dev):
        if dev.type == self._device.type:
            return self
        from ._cuda import dispatch  # CUDA is set up on the first transfer only
        return dispatch.to_cuda(self, dev) if dev.type == "cuda" else dispatch.to_cpu(self)

    def cpu(self, memory_format=None):
        return self if self._device is CPU else self._to_device(CPU)

    def cuda(self, device=None, non_blocking=False):
        return self._to_device(Device("cuda" if device is None else device))

    def type(self, dtype=None):
        if dtype is None:
            return {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                    "bool": "BoolTensor"}[self._dtype.name].join(["flowvision.", ""])
        return self.to(dtype)

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def half(self):
        return self.to(D.float16)

    def bfloat16(self):
        return self.to(D.bfloat16)

    def long(self):
        return self.to(D.int64)

    def int(self):
        return self.to(D.int32)

    def short(self):
        return self.to(D.int16)

    def char(self):
        return self.to(D.int8)

    def byte(self):
        return self.to(D.uint8)

    def bool(self):
        return self.to(D.bool)

    def __repr__(self):
        from ._print import tensor_repr
        if self._device is not CPU:
            r = tensor_repr(self.detach().cpu())
            return r[:-1] + f", device='{self._device}')" if r.endswith(")") else r
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data, self._dtype.name, self.requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment")
        if self._device is not CPU:
            from ._cuda.arrays import copy as _device_copy
            t = Tensor._wrap(_device_copy(self._data), self._dtype)
        else:
            t = Tensor._wrap(np.array(self._data, copy=True), self._dtype)
        t.requires_grad_flag = self.requires_grad_flag
        if self.grad is not None:
            t.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t


def _rebuild(data, dtype_name, requires_grad):
    t = Tensor._wrap(data, D._by_name(dtype_name))
    t.requires_grad_flag = requires_grad
    return t


class _LeafHookHandle:
    def __init__(self, tensor, hook):
        self._tensor, self._hook = tensor, hook

    def remove(self):
        t = self._tensor
        if t._hooks_leaf and self._hook in t._hooks_leaf:
            t._hooks_leaf.remove(self._hook)
        if t._accum is not None and t._accum.pre_hooks:
            hooks = t._accum.pre_hooks.get(0, [])
            if self._hook in hooks:
                hooks.remove(self._hook)


class _DictHookHandle:
    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        self._hooks.pop(self._key, None)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim

