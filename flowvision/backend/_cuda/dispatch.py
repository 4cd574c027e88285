"""The CUDA device runtime: device transfer, and the device half of ``Function.apply``.

Once the first CUDA tensor exists, ``autograd.graph.cuda_dispatch`` is this module and ``Function.apply`` asks
``on_device(args)``; a call with a device operand runs the op's ``forward_cuda`` kernel (declared on the op
itself) on ``DeviceArray`` s, with ``xp`` (``_cuda/xp.py``) as ``ctx.xp``, and records the same ``Node`` as on
the CPU. The op's one backward runs on device arrays; ``grads_in`` / ``grads_out`` put each gradient on the
device in its tensor's dtype.
"""
import sys

import numpy as np

from .. import _dtype as D
from .._device import device as Device
from ..autograd import graph as G
from ..autograd.grad_mode import is_grad_enabled
from . import autocast as _ac
from .runtime import C, is_device_array

CUDA0 = Device("cuda", 0)
type = "cuda"  # noqa: A001  (the device type this runtime serves: ops declare ``forward_cuda``)


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def wrap(arr, dtype=None):
    """A CUDA Tensor around a DeviceArray (anything else is returned as it is)."""
    if not is_device_array(arr):
        return arr
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
    arr = np.asarray(arr, order="C")
    dev = C().from_host(arr, dtype.name)
    return dev if tuple(dev.shape) == arr.shape else C().reshape(dev, list(arr.shape))  # keep 0-d arrays 0-d


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
    """Have Function.apply look for device operands from now on (no per-call cost until then)."""
    global _ARMED, xp
    if not _ARMED:
        from . import xp as _xp
        xp = _xp
        G.cuda_dispatch = sys.modules[__name__]
        _ARMED = True


xp = None


def grads_in(ctx, grads, out_meta):
    """The output gradients of a device op on the device in each output's dtype (the engine's host zeros for
    an unused output, or a host root gradient, are uploaded)."""
    return tuple(_upload_grad(g, dt, meta[0]) if g is None or not is_device_array(g) else g
                 for g, dt, meta in zip(grads, ctx._out_dtypes, out_meta))


def grads_out(ctx, grads):
    """The input gradients of a device op cast to each input's dtype."""
    res = []
    for g, dt in zip(grads, ctx._in_dtypes):
        if g is not None and dt is not None and g.dtype != dt.name:
            g = C().cast(g, dt.name)
        res.append(g)
    return tuple(res)


def _upload_grad(g, dt, shape):
    """A host gradient (the engine's zeros for an unused output, or the root gradient) on the device."""
    if g is None or not np.asarray(g).any():
        return C().full(list(shape), 0.0, dt.name)
    g = np.asarray(g)
    from .._bf16 import f32_to_bf16
    if dt is D.bfloat16:
        return upload(f32_to_bf16(g.astype(np.float32)), dt)
    return upload(g.astype(dt.np, copy=False), dt)


def on_device(args):
    """Whether a call's operands include a CUDA tensor (top level, or inside a list/tuple argument)."""
    T = _tensor_cls()
    for a in args:
        if isinstance(a, T):
            if a._device.type == "cuda":
                return True
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, T) and b._device.type == "cuda":
                    return True
    return False


def compute_dtype(cls, args, _dtype):
    """The op's compute dtype on the device (autocast may lower or raise it)."""
    return _ac.op_dtype(cls, args, _dtype) if _ac.state.enabled else _dtype


def operand(t, _dtype, cls):
    """A tensor operand as a DeviceArray of the compute dtype (a 0-d CPU tensor is a scalar operand)."""
    if t._device.type != "cuda":
        if t.ndim != 0:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"cuda:0 and cpu! (in {cls.__name__})")
        arr = upload(t._data, t._dtype)
    else:
        arr = t._data
    if _dtype is not None and arr.dtype != _dtype.name:
        arr = C().cast(arr, _dtype.name)
    return arr


def nms(boxes, scores, iou_threshold):
    """Greedy NMS of CUDA tensors (IoU bitmask on the device); returns int64 indices by decreasing score."""
    f32 = (lambda a: a if a.dtype == "float32" else C().cast(a, "float32"))
    keep = C().nms(f32(boxes.detach()._data), f32(scores.detach()._data), float(iou_threshold))
    return wrap(keep, D.int64)


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
