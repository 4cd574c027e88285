"""Device transfer and the per-op dispatch table for CUDA tensors.

``TABLE`` maps a CPU ``Function`` class (or, for factory-made classes, its name) to its CUDA twin:
a class with the same ``forward(ctx, *arrays, **params)`` / ``backward(ctx, *grads)`` contract on
``DeviceArray`` s. ``cuda_apply`` mirrors ``Function.apply``: it moves operands to the op's compute
dtype on the device, runs the twin and records the same autograd ``Node``; gradients stay on the
device and are cast back to each input's dtype.
"""
import numpy as np

from .. import _dtype as D
from .._device import device as Device
from ..autograd import graph as G
from ..autograd.grad_mode import is_grad_enabled
from . import autocast as _ac
from .runtime import C, is_device_array

CUDA0 = Device("cuda", 0)
TABLE = {}


def register(*keys):
    """Decorator: the decorated class is the CUDA twin of the given CPU Function classes / names."""
    def deco(twin):
        for k in keys:
            TABLE[k] = twin
        return twin
    return deco


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def wrap(arr, dtype=None):
    """A CUDA Tensor around a DeviceArray."""
    t = object.__new__(_tensor_cls())
    t._init(arr, dtype if dtype is not None else D._by_name(arr.dtype))
    return t


def dev_index(dev):
    if dev.index not in (None, 0):
        raise RuntimeError(f"CUDA device {dev.index} requested: flowvision's CUDA backend uses one device (cuda:0)")
    return 0


def upload(arr, dtype):
    """numpy array (bfloat16 as uint16 bit patterns) -> DeviceArray of ``dtype``."""
    if dtype is D.float64:
        raise TypeError("float64 tensors can't be moved to CUDA: flowvision's CUDA kernels are float32/float16/"
                        "bfloat16 (call .float() first)")
    return C().from_host(np.ascontiguousarray(arr), dtype.name)


def to_cuda(t, dev):
    """``Tensor.to("cuda")``: differentiable copy to the device."""
    dev_index(dev)
    if t._device.type == "cuda":
        return t
    c = C()
    _arm()
    out = wrap(upload(t._data, t._dtype), t._dtype)
    if is_grad_enabled() and t.requires_grad:
        _record(_ToDevice, G.Context(), (t,), (out,))
    return out


def to_cpu(t):
    """``Tensor.cpu()``: differentiable copy to the host (waits for the current stream)."""
    if t._device.type != "cuda":
        return t
    arr = C().to_host(t._data)
    out = _tensor_cls()._wrap(arr, t._dtype)
    if is_grad_enabled() and t.requires_grad:
        _record(_ToHost, G.Context(), (t,), (out,))
    return out


class _ToDevice:
    backward_name = "ToCopyBackward0"

    @staticmethod
    def backward(ctx, g):
        return (C().to_host(g),)


class _ToHost:
    backward_name = "ToCopyBackward0"

    @staticmethod
    def backward(ctx, g):
        arr = g if is_device_array(g) else upload(np.asarray(g), D.from_numpy_dtype(np.asarray(g).dtype))
        return (arr,)


def _record(fn, ctx, inputs, outputs):
    next_functions = tuple(G._edge(a) for a in inputs)
    out_meta = tuple((tuple(r.shape), G._compute_np(r._dtype)) for r in outputs)
    node = G.Node(fn, ctx, next_functions, out_meta, (None,) * len(inputs))
    for i, r in enumerate(outputs):
        r.requires_grad_flag = True
        r._grad_fn = node
        r._output_nr = i
    return node


_ARMED = False


def _arm():
    """Route Function.apply through cuda_apply from now on (a no-op check until then)."""
    global _ARMED
    if not _ARMED:
        from . import ops, nn  # noqa: F401  (fill TABLE)
        G.cuda_dispatch = cuda_apply
        _ARMED = True


class _TwinNode:
    """The autograd node function of a CUDA op: runs the twin's backward, then puts each gradient on
    the device in its input's dtype (host zeros that the engine substitutes for missing output
    gradients are uploaded)."""

    def __init__(self, twin, cpu_cls):
        self.twin = twin
        self.backward_name = getattr(cpu_cls, "backward_name", None) or f"{cpu_cls.__name__}Backward0"
        self.__name__ = cpu_cls.__name__

    def backward(self, ctx, *grads):
        grads = tuple(g if g is None or is_device_array(g) else _upload_grad(g, dt)
                      for g, dt in zip(grads, ctx._out_dtypes))
        out = self.twin.backward(ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        res = []
        for g, dt in zip(out, ctx._in_dtypes):
            if g is not None and dt is not None and g.dtype != dt.name:
                g = C().cast(g, dt.name)
            res.append(g)
        return tuple(res)


def _upload_grad(g, dt):
    """A host gradient (the engine's zeros for an unused output, or the root gradient) on the device."""
    g = np.asarray(g)
    if not g.any():
        return C().full(list(g.shape), 0.0, dt.name)
    from .._bf16 import f32_to_bf16
    if dt is D.bfloat16:
        return upload(f32_to_bf16(g.astype(np.float32)), dt)
    return upload(g.astype(dt.np, copy=False), dt)


_NODE_FNS = {}


def _cuda_operand(args):
    T = _tensor_cls()
    for a in args:
        if isinstance(a, T) and a._device.type == "cuda":
            return True
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, T) and b._device.type == "cuda":
                    return True
    return False


def cuda_apply(cls, args, _dtype, kwargs):
    """``Function.apply`` for calls with a CUDA operand; NotImplemented otherwise (CPU path runs)."""
    if not _cuda_operand(args):
        return NotImplemented
    T = _tensor_cls()
    # an op declared outside the engine (flowvision.ops) carries its CUDA kernel as ``cuda_kernel``
    twin = TABLE.get(cls) or TABLE.get(cls.__name__) or getattr(cls, "cuda_kernel", None)
    if twin is None:
        raise NotImplementedError(f"{cls.__name__} is not implemented for CUDA tensors yet; move the tensor to the "
                                  "CPU with .cpu() for this op")
    if _ac.state.enabled:
        _dtype = _ac.op_dtype(cls, args, _dtype)
    arrays, in_dtypes = [], []
    n_ops = getattr(cls, "scalar_operands", 0)
    for i, a in enumerate(args):
        if isinstance(a, T):
            if a._device.type != "cuda":
                if a.ndim != 0:
                    raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                                       f"devices, cuda:0 and cpu! (in {cls.__name__})")
                a = wrap(upload(a._data, a._dtype), a._dtype)  # a 0-d CPU tensor is a scalar operand
            arr = a._data
            if _dtype is not None and arr.dtype != _dtype.name:  # as Function.apply: every tensor operand
                arr = C().cast(arr, _dtype.name)
            arrays.append(arr)
            in_dtypes.append(a._dtype if a._dtype.is_floating_point else None)
        else:
            if i < n_ops and a is not None and _dtype is not None and isinstance(a, (bool, int, float, np.generic)):
                a = float(a) if _dtype.is_floating_point else int(a)
            arrays.append(a)
            in_dtypes.append(None)
    tensor_args = [a for a in args if isinstance(a, T)]
    requires_grad = is_grad_enabled() and any(t.requires_grad for t in tensor_args)
    ctx = G.Context()
    ctx.needs_input_grad = tuple(isinstance(a, T) and a.requires_grad for a in args)
    ctx.result_dtype = _dtype
    out = twin.forward(ctx, *arrays, **kwargs)
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    results = [wrap(o) if is_device_array(o) else o for o in outs]
    if requires_grad:
        ctx._in_dtypes = tuple(in_dtypes)
        ctx._out_dtypes = tuple(r._dtype for r in results)
        fn = _NODE_FNS.get(twin)
        if fn is None:
            fn = _NODE_FNS[twin] = _TwinNode(twin, cls)
        next_functions = tuple(G._edge(a) if isinstance(a, T) else (None, 0) for a in args)
        out_meta = tuple((tuple(r.shape), G._compute_np(r._dtype)) for r in results)
        node = G.Node(fn, ctx, next_functions, out_meta, (None,) * len(args))
        for i, r in enumerate(results):
            if r._dtype.is_floating_point:
                r.requires_grad_flag = True
                r._grad_fn = node
                r._output_nr = i
    return results[0] if single else tuple(results)


def accumulate(var, grad):
    """AccumulateGrad for a CUDA leaf: ``var.grad += grad`` on the device."""
    if not is_device_array(grad):
        grad = upload(np.asarray(grad), var._dtype)
    if grad.dtype != var._dtype.name:
        grad = C().cast(grad, var._dtype.name)
    if var.grad is None:
        g = C().empty(list(grad.shape), grad.dtype)
        C().copy_(g, grad)
        var.grad = wrap(g, var._dtype)
    else:
        var.grad._data = C().binary(C().BINARY_OPS["add"], var.grad._data, grad)


def commit_inplace(t, result, needs_graph):
    """In-place update of CUDA tensor ``t`` with ``result``: ``t`` takes over a new DeviceArray (cast and
    broadcast to t's dtype/shape) and result's autograd history. Device tensors are never views of each
    other (view ops materialise), so there is no base to update; arrays that shared t's old storage
    (e.g. ``t.view(...)`` taken earlier) keep the old values."""
    T = _tensor_cls()
    if not isinstance(result, T):
        result = wrap(C().full(list(t.shape), float(result), t._dtype.name), t._dtype)
    if result._device.type != "cuda":
        result = to_cuda(result, CUDA0)
    if result._dtype is not t._dtype:
        from .._ops.elementwise import cast
        result = cast(result, t._dtype)
    if tuple(result.shape) != tuple(t.shape):
        from .._ops.shape import expand
        result = expand(result, tuple(t.shape))
    t._data = result._data
    t._version[0] += 1
    if not needs_graph:
        return t
    t._grad_fn, t._output_nr = result._grad_fn, result._output_nr
    if t._grad_fn is None and result.requires_grad:  # result is a leaf: route through an identity
        from .._ops.shape import Clone
        c = Clone.apply(result)
        t._grad_fn, t._output_nr = c._grad_fn, 0
    t.requires_grad_flag = True
    return t
