"""The autograd tape: graph nodes, the op base class and the backward engine.

Every op is ONE ``Function`` subclass (its declaration): ``forward`` (the CPU kernel), optional per-device kernel
overrides ``forward_<device>`` (e.g. ``forward_cuda``), ONE ``backward`` written against the array namespace
``ctx.xp`` (numpy plus the ``_C`` kernels on the host, ``_cuda.xp`` on a device), and capture traits
(``_ops/traits.py``). ``Function.apply`` resolves the device of the call once, picks the kernel, unwraps and casts
the operands, records one kind of ``Node`` when a gradient is needed and wraps the outputs. ``run_backward`` walks
the recorded nodes in dependency order.
"""
import itertools

import numpy as np

from .grad_mode import is_grad_enabled
from .. import _C, _dtype as D
from .._bf16 import bf16_to_f32, f32_to_bf16
from .._xp import HOST

_seq = itertools.count()

# The CUDA device runtime (the module flowvision.backend._cuda.dispatch), set once the first CUDA tensor
# exists: from then on Function.apply looks for device operands. None in CPU-only runs (no per-call cost).
cuda_dispatch = None


def _is_device_array(g):
    return cuda_dispatch is not None and type(g).__name__ == "DeviceArray"

# flowvision.backend.compile's capture hook: while it holds a recorder, every Function.apply reports
# (op class, args, kwargs, _dtype, output tensors) to it; None otherwise (one global test per op in eager)
_RECORDER = None


def _quiet():
    # inf/nan arithmetic follows IEEE like torch's kernels, without numpy's RuntimeWarnings
    return np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")


class Context:
    """The ``ctx`` handed to an op's forward and backward; ops keep whatever they need on it.

    ``xp`` is the array namespace of the call's device; ``_device`` is the device runtime (None on the CPU)."""

    xp = HOST
    _device = None

    def save_for_backward(self, *arrays):
        self.saved = arrays

    @property
    def saved_tensors(self):  # torch's name; arrays for internal ops
        return self.saved


class Node:
    """One recorded op. ``next_functions`` mirrors torch: a (node, output_nr) pair per input."""

    __slots__ = ("fn", "ctx", "next_functions", "out_meta", "in_dtypes", "pre_hooks", "released",
                 "saved_versions", "seq", "__weakref__")

    def __init__(self, fn, ctx, next_functions, out_meta, in_dtypes):
        self.fn = fn
        self.ctx = ctx
        self.next_functions = next_functions
        self.out_meta = out_meta
        self.in_dtypes = in_dtypes
        self.pre_hooks = None
        self.released = False
        self.saved_versions = ()
        self.seq = next(_seq)

    def name(self):
        return getattr(self.fn, "backward_name", None) or f"{self.fn.__name__}Backward0"

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def register_prehook(self, output_nr, hook):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        self.pre_hooks.setdefault(output_nr, []).append(hook)
        return _RemovableHandle(self.pre_hooks[output_nr], hook)

    def apply_backward(self, grads, retain_graph):
        if self.released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors "
                "after they have already been freed). Saved intermediate values of the graph are freed "
                f"when you call .backward() or autograd.grad() (failed in {self.name()}). Specify "
                "retain_graph=True if you need to backward through the graph a second time.")
        for counter, version, shape, dtype in self.saved_versions:
            if counter[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: [{dtype}{list(shape)}] is at version {counter[0]}; expected "
                    f"version {version} instead (saved by {self.name()}).")
        ctx = self.ctx
        device = getattr(ctx, "_device", None)
        if device is not None:  # gradients of a device op: on the device, in each output's dtype
            grads = device.grads_in(ctx, grads, self.out_meta)
        else:
            grads = [g if g is not None else _zero_grad(shape, dtype)
                     for g, (shape, dtype) in zip(grads, self.out_meta)]
        with _quiet():
            out = self.fn.backward(ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        if device is not None:
            out = device.grads_out(ctx, out)
        if not retain_graph and _holds_saved(self.ctx):
            # like torch, only nodes that saved tensors are freed; the rest may be backpropagated again
            self.ctx = None
            self.released = True
        return out


def _zero_grad(shape, dtype):
    """The gradient of an output nothing used: zeros. An integer output (max-pool / argmax indices) gets a read-only
    broadcast zero that allocates nothing: its gradient is never read, and a full-size int64 array at the peak of a
    backward pass is pure memory."""
    if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
        return np.broadcast_to(np.zeros((), dtype), shape)
    return np.zeros(shape, dtype)


def _holds_saved(ctx):
    saved = getattr(ctx, "saved", None)
    if saved is None:
        saved = getattr(ctx, "saved_tensors", None)  # custom autograd.Function contexts
    return bool(saved) and any(s is not None for s in saved)


class AccumulateGrad(Node):
    """Sink node of a leaf tensor: adds the incoming gradient into ``tensor.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(AccumulateGrad, None, (), ((tuple(variable.shape), _compute_np(variable._dtype)),), ())
        self.variable = variable

    def name(self):
        return "AccumulateGrad"

    def accumulate(self, grad):
        from .._tensor import Tensor
        var = self.variable
        if _is_device_array(grad):
            from .._cuda.dispatch import accumulate
            return accumulate(var, grad)
        grad = _to_storage(grad, var._dtype)
        if var.grad is None:
            var.grad = Tensor._wrap(np.array(grad, copy=True), var._dtype)
        else:
            existing = var.grad
            existing._data = existing._data + grad if var._dtype is not D.bfloat16 else f32_to_bf16(
                bf16_to_f32(existing._data) + bf16_to_f32(grad))


class _RemovableHandle:
    def __init__(self, container, item):
        self._container, self._item = container, item

    def remove(self):
        try:
            self._container.remove(self._item)
        except ValueError:
            pass


def _compute_np(dt):
    return np.dtype(np.float32) if dt is D.bfloat16 else dt.np


def _to_storage(arr, dt):
    if dt is D.bfloat16:
        return f32_to_bf16(np.asarray(arr, np.float32))
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def _compute_array(t):
    return bf16_to_f32(t._data) if t._dtype is D.bfloat16 else t._data


def _as_array(x, np_dtype):
    """Cast a tensor or Python scalar to a numpy array of the compute dtype (wrapping like torch)."""
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        a = _compute_array(x)
        return a if a.dtype == np_dtype else a.astype(np_dtype)
    if isinstance(x, (bool, int, float, complex, np.generic)):
        if np.issubdtype(np_dtype, np.integer) and isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return np.array(x, dtype=np.int64).astype(np_dtype)  # wraps like a C cast, as torch does
        return np.array(x, dtype=np_dtype)
    return x


class Function:
    """Base class of every op: ``forward(ctx, *arrays, **params)`` / ``backward(ctx, *grads)``.

    ``backward`` returns one gradient (or None) per positional argument of ``forward``.
    Class attributes: ``is_view`` for ops whose output aliases input 0's storage.
    """

    is_view = False
    scalar_operands = 0  # leading positional args that are operands (Python scalars get cast like tensors)
    # an op that is a composition of other ops where no kernel of its own applies: a staticmethod taking apply's
    # arguments (tensors) and returning the result of the other ops (on the CPU; devices run forward_<device>)
    decomposition = None

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, _dtype=None, **kwargs):
        if cuda_dispatch is not None and cuda_dispatch.on_device(args):
            return _apply_on_device(cls, cuda_dispatch, args, _dtype, kwargs)
        if cls.decomposition is not None:
            return cls.decomposition(*args, **kwargs)
        from .._tensor import Tensor
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        if _dtype is not None:
            cd = _compute_np(_dtype)
            n_ops = cls.scalar_operands
            arrays = [_as_array(a, cd) if (isinstance(a, Tensor) or (i < n_ops and a is not None)) else a
                      for i, a in enumerate(args)]
        else:
            arrays = [_compute_array(a) if isinstance(a, Tensor) else a for a in args]
        requires_grad = is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        ctx = Context()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with _quiet():
            out = cls.forward(ctx, *arrays, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out

        out_bf16 = _dtype is D.bfloat16 if _dtype is not None else _all_float_inputs_bf16(tensor_args)
        results = []
        for o in outs:
            o = np.asarray(o) if not isinstance(o, np.ndarray) else o
            if out_bf16 and o.dtype == np.float32:
                results.append(Tensor._wrap(f32_to_bf16(o), D.bfloat16))
            else:
                results.append(Tensor._wrap(o, D.from_numpy_dtype(o.dtype)))

        if cls.is_view:
            _mark_view(results[0], args[0], cls, args[1:], kwargs)

        if requires_grad:
            next_functions = tuple(_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
            in_dtypes = tuple(arr.dtype if isinstance(a, Tensor) else None for a, arr in zip(args, arrays))
            out_meta = tuple((r.shape, _compute_np(r._dtype)) for r in results)
            node = Node(cls, ctx, next_functions, out_meta, in_dtypes)
            saved = getattr(ctx, "saved", None)
            if saved:
                node.saved_versions = _saved_versions(saved, args, arrays, results, outs)
            for i, r in enumerate(results):
                if r._dtype.is_floating_point or r._dtype.is_complex:
                    r.requires_grad = True
                    r._grad_fn = node
                    r._output_nr = i
        if _RECORDER is not None:
            _RECORDER(cls, args, kwargs, _dtype, results)
        return results[0] if single else tuple(results)


def _apply_on_device(cls, device, args, _dtype, kwargs):
    """``Function.apply`` for a call with an operand on ``device`` (a device runtime): the op's
    ``forward_<device>`` kernel on device arrays, the same ``Node`` as on the CPU."""
    from .._tensor import Tensor
    kernel = getattr(cls, "forward_" + device.type, None)
    if kernel is None:
        raise NotImplementedError(f"{cls.__name__} is not implemented for {device.type.upper()} tensors yet; move "
                                  "the tensor to the CPU with .cpu() for this op")
    _dtype = device.compute_dtype(cls, args, _dtype)
    arrays, in_dtypes = [], []
    n_ops = cls.scalar_operands
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            arrays.append(device.operand(a, _dtype, cls))
            in_dtypes.append(a._dtype if a._dtype.is_floating_point else None)
        else:
            if i < n_ops and a is not None and _dtype is not None and isinstance(a, (bool, int, float, np.generic)):
                a = float(a) if _dtype.is_floating_point else int(a)
            arrays.append(a)
            in_dtypes.append(None)
    requires_grad = is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx = Context()
    ctx.xp = device.xp
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx.result_dtype = _dtype
    with _quiet():
        out = kernel(ctx, *arrays, **kwargs)
    single = not isinstance(out, tuple)
    results = [device.wrap(o) for o in ((out,) if single else out)]
    if requires_grad:
        ctx._device = device
        ctx._in_dtypes = tuple(in_dtypes)
        ctx._out_dtypes = tuple(r._dtype for r in results)
        next_functions = tuple(_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
        out_meta = tuple((tuple(r.shape), _compute_np(r._dtype)) for r in results)
        node = Node(cls, ctx, next_functions, out_meta, (None,) * len(args))
        for i, r in enumerate(results):
            if r._dtype.is_floating_point:
                r.requires_grad_flag = True
                r._grad_fn = node
                r._output_nr = i
    return results[0] if single else tuple(results)


def _all_float_inputs_bf16(tensor_args):
    seen_bf16 = False
    for t in tensor_args:
        if t._dtype is D.bfloat16:
            seen_bf16 = True
        elif t._dtype.is_floating_point:
            return False
    return seen_bf16


def _saved_versions(saved, args, arrays, results, outs):
    from .._tensor import Tensor
    recs = []
    ids = {id(s) for s in saved if isinstance(s, np.ndarray)}
    for a, arr in zip(args, arrays):
        if isinstance(a, Tensor) and id(arr) in ids:
            recs.append((a._version, a._version[0], a.shape, a._dtype.name))
    for r, o in zip(results, outs):
        if id(o) in ids:
            recs.append((r._version, r._version[0], r.shape, r._dtype.name))
    return tuple(recs)


def _mark_view(out, src, cls, rest_args, kwargs):
    """Record that ``out`` aliases ``src``'s storage and how to re-derive it from the root base."""
    base = src._base if src._base is not None else src
    out_arr, src_arr = out._data, src._data
    if out_arr.size and not np.may_share_memory(out_arr, src_arr):
        return  # numpy had to copy (e.g. reshape of a non-contiguous array): not a view
    parent_fn = src._view_fn

    def view_fn(base_array, _parent=parent_fn):
        a = _parent(base_array) if _parent is not None else base_array
        return cls.forward(Context(), a, *rest_args, **kwargs)

    out._base = base
    out._view_fn = view_fn
    out._version = src._version
    out._view_version = src._version[0]


def _edge(t):
    t._sync_view()
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t.requires_grad:
        return (t._accumulator(), 0)
    return (None, 0)


_ACC_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class ScatteredGrad:
    """zeros(shape) with ``g`` at the basic index ``index``: the gradient of a view, kept lazy until it is summed or
    used. Summing slices of one tensor then writes each into one buffer, where dense slice gradients would cost a
    full-size zero array per slice plus a full-size add per sum (the q, k, v of a fused attention projection)."""
    __slots__ = ("shape", "index", "g")

    def __init__(self, shape, index, g):
        self.shape, self.index, self.g = shape, index, g

    @property
    def dtype(self):
        return self.g.dtype

    def dense(self):
        out = np.zeros(self.shape, self.g.dtype)
        out[self.index] = self.g
        return out

    def add_into(self, out):
        """``out += self``, in place; returns ``out``."""
        out[self.index] += self.g
        return out


def _accumulate(acc, g, owned):
    """``acc + g`` for two gradients reaching one output. Large float arrays are summed by the threaded kernel, into
    ``acc`` itself when it is a sum the engine made (its id in ``owned``): a residual stream or the three slices of a
    fused qkv projection then cost one buffer, not one per contribution."""
    if type(g) is ScatteredGrad or type(acc) is ScatteredGrad:
        return _accumulate_scattered(acc, g, owned)
    if (type(acc) is np.ndarray and type(g) is np.ndarray and acc.dtype in _ACC_DTYPES and g.dtype == acc.dtype
            and acc.shape == g.shape and acc.size >= 1 << 14 and acc.flags.c_contiguous and g.flags.c_contiguous):
        in_place = id(acc) in owned and acc.flags.writeable
        out = _C.binary(acc, g, "add", 1, acc.size, 0, out=acc if in_place else None)
    else:
        out = acc + g
    if type(out) is np.ndarray:
        owned.add(id(out))
    return out


def _accumulate_scattered(acc, g, owned):
    """``acc + g`` where at least one is a ``ScatteredGrad``: the slice is added into a sum the engine owns, or into a
    new buffer (a copy of the dense one, or zeros)."""
    if type(acc) is not ScatteredGrad and id(acc) in owned and acc.flags.writeable and g.dtype == acc.dtype:
        return g.add_into(acc)
    if type(acc) is ScatteredGrad:
        acc, g = g, acc
    out = acc.dense() if type(acc) is ScatteredGrad else np.array(acc, dtype=np.result_type(acc, g.g))
    owned.add(id(out))
    return g.add_into(out)


def run_backward(roots, retain_graph, capture=None):
    """Propagate gradients from ``roots`` [(node, output_nr, grad_array)].

    ``capture`` maps (node, output_nr) to a slot index: the engine stores the gradient arriving there
    into the returned list instead of accumulating into leaves (``autograd.grad``).
    """
    from .._tensor import Tensor
    deps = {}
    stack = [n for n, _, _ in roots]
    seen = set(id(n) for n in stack)
    nodes = list(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[id(nxt)] = deps.get(id(nxt), 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                nodes.append(nxt)
                stack.append(nxt)

    buffers = {}
    for node, nr, g in roots:
        buf = buffers.setdefault(id(node), [None] * len(node.out_meta))
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    owned = set()  # ids of gradient sums the engine allocated and still holds in `buffers`: added into in place
    captured = [None] * (len(capture) if capture else 0)
    ready = [n for n, _, _ in roots if deps.get(id(n), 0) == 0]
    ready_ids = set()
    ready = [n for n in ready if not (id(n) in ready_ids or ready_ids.add(id(n)))]
    import heapq
    heap = [(-n.seq, id(n), n) for n in ready]
    heapq.heapify(heap)
    while heap:
        _, _, node = heapq.heappop(heap)
        grads = buffers.pop(id(node), None) or [None] * len(node.out_meta)
        grads = [g.dense() if type(g) is ScatteredGrad else g for g in grads]
        if owned:
            for g in grads:  # handed on: from here its id may be reused by an array the engine does not own
                owned.discard(id(g))
        if node.pre_hooks:
            for nr, hooks in node.pre_hooks.items():
                for hook in list(hooks):
                    if grads[nr] is None:
                        continue
                    res = hook(Tensor._wrap(grads[nr], D.from_numpy_dtype(grads[nr].dtype)))
                    if res is not None:
                        grads[nr] = res._data if isinstance(res, Tensor) else np.asarray(res)
        if capture:
            for nr, g in enumerate(grads):
                slot = capture.get((id(node), nr))
                if slot is not None:
                    captured[slot] = g if captured[slot] is None else captured[slot] + g
        if isinstance(node, AccumulateGrad):
            if not capture and grads[0] is not None:
                node.accumulate(grads[0])
                post = node.variable.__dict__.get("_post_accumulate_hooks")
                if post:  # e.g. DistributedDataParallel starts a gradient bucket's all-reduce here
                    for hook in list(post.values()):
                        hook(node.variable)
            continue
        if all(g is None for g in grads):
            in_grads = (None,) * len(node.next_functions)
        else:
            in_grads = node.apply_backward(grads, retain_graph)
        for (nxt, nr), g, in_dt in zip(node.next_functions, in_grads, node.in_dtypes):
            if nxt is None:
                continue
            if g is not None:
                if not (type(g) is ScatteredGrad or _is_device_array(g)):
                    g = np.asarray(g)
                if in_dt is not None and g.dtype != in_dt:
                    if type(g) is ScatteredGrad:
                        g = g.dense()
                    if g.dtype.kind == "c" and in_dt.kind != "c":
                        g = g.real  # a real input of a complex op gets the real part (torch's rule)
                    g = g.astype(in_dt)
                buf = buffers.setdefault(id(nxt), [None] * len(nxt.out_meta))
                buf[nr] = g if buf[nr] is None else _accumulate(buf[nr], g, owned)
            deps[id(nxt)] -= 1
            if deps[id(nxt)] == 0:
                heapq.heappush(heap, (-nxt.seq, id(nxt), nxt))
    return captured
