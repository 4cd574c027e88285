"""Capture stage of ``flowvision.backend.compile``: run the model once with a recorder hooked into
``Function.apply`` and write each primitive call down as a graph node over numbered value slots.

Tensors produced by recorded ops from the input are activations (slots); every other tensor an op reads (parameters,
buffers, tensors computed from them alone) is a constant of the plan.
"""
import collections
import weakref

import numpy as np

from . import _dtype as D
from ._tensor import Tensor
from .autograd import graph as _graph
from .autograd.graph import _compute_array, _as_array, _compute_np
from ._ops import kernel_select as _select
from .autograd.grad_mode import enable_grad


class CaptureError(RuntimeError):
    """The model could not be captured (the message says which op / why); compile() falls back to eager."""


# ------------------------------------------------------------------ capture
class _Op:
    """One node of the captured graph.

    kind "fn": a recorded primitive, replayed through ``cls.forward``; ``args`` holds, per positional argument,
    ("v", slot, cast_dtype) for an activation or ("c", value) for a constant / Python argument.
    kind "conv" / "linear": a fused convolution / GEMM built by the passes (``attrs`` holds weights, epilogue).
    """

    __slots__ = ("kind", "cls", "args", "kwargs", "outs", "attrs", "index")

    def __init__(self, kind, cls, args, kwargs, outs, attrs=None, index=-1):
        self.kind, self.cls, self.args, self.kwargs, self.outs = kind, cls, args, kwargs, outs
        self.attrs = attrs or {}
        self.index = index  # position in the recorded sequence (for messages)

    def inputs(self):
        if self.kind == "fn":
            return [a[1] for a in self.args if a[0] == "v"]
        if self.kind == "call":
            return list(self.attrs["ins"])
        ins = [self.attrs["x"]]
        if self.attrs.get("res") is not None:
            ins.append(self.attrs["res"])
        return ins

    def name(self):
        if self.kind == "fn":
            return self.cls.__name__
        if self.kind == "call":
            return self.attrs["label"]
        a = self.attrs
        extra = [a["ep"]] if a["ep"] != "none" else []
        if a.get("res") is not None:
            extra.insert(0, "residual")
        return self.kind + ("+" + "+".join(extra) if extra else "")


class _Graph:
    def __init__(self):
        self.ops = []
        self.meta = []  # slot -> (shape, numpy dtype)
        self.outputs = []  # ("v", slot) or ("c", array) per model output
        self.out_struct = None  # "tensor" | "tuple" | "list" | (dict class, keys): see _flatten_output
        self.values = None  # slot -> array, when recorded with keep_values (diagnosis)
        self.nhwc = set()  # slots stored NHWC (after the layout pass)
        self.const_src = {}  # id(constant array) -> the tensor (or view base) it was read from
        self.pack_cache = None  # packed weights shared by one compiled module's plans (see _capture_lower)

    def new_slot(self, arr):
        self.meta.append((tuple(arr.shape), arr.dtype))
        return len(self.meta) - 1


class _Recorder:
    """The hook ``Function.apply`` calls while capturing (see autograd.graph._RECORDER)."""

    def __init__(self, graph, x, keep_values=False):
        self.g = graph
        self.by_id = {}  # id(tensor) -> (slot, version at production)
        self.by_node = {}  # (id(grad_fn), output_nr) -> slot: follows in-place ops, which rebind grad_fn
        # entries leave the maps when their tensor / node dies (weakref callbacks), so a recycled id is never
        # mistaken for an activation and activations are freed as in eager (capture memory ~ one eager pass)
        self.refs = {}
        self.keep_values = keep_values
        self.values = [] if keep_values else None
        self.error = None
        self._register(x)

    def _watch(self, obj, table, key):
        def gone(_ref, table=table, key=key, refs=self.refs):
            table.pop(key, None)
            refs.pop((id(table), key), None)
        self.refs[(id(table), key)] = weakref.ref(obj, gone)

    def _register(self, t):
        slot = self.g.new_slot(t._data)
        self.by_id[id(t)] = (slot, t._version[0])
        self._watch(t, self.by_id, id(t))
        node = t._grad_fn
        if node is not None:
            key = (id(node), t._output_nr)
            self.by_node[key] = slot
            self._watch(node, self.by_node, key)
            node.ctx = None  # nothing will run backward: drop the saved tensors now
        if self.keep_values:
            self.values.append(np.array(t._data, copy=True))
        return slot

    def slot_of(self, t):
        e = self.by_id.get(id(t))
        if e is not None and e[1] == t._version[0]:
            return e[0]
        if t._grad_fn is not None:
            s = self.by_node.get((id(t._grad_fn), t._output_nr))
            if s is not None:
                return s
        return None

    def __call__(self, cls, args, kwargs, dtype, results):
        if self.error is not None:
            return
        slots = [self.slot_of(a) if isinstance(a, Tensor) else None for a in args]
        if all(s is None for s in slots):
            return  # constants only: the outputs are constants too (folded at capture time)
        if any(isinstance(v, Tensor) and self.slot_of(v) is not None for v in kwargs.values()):
            self.error = f"{cls.__name__} takes an activation as a keyword argument"
            return
        if any(r._dtype is D.bfloat16 for r in results) or any(
                isinstance(a, Tensor) and a._dtype is D.bfloat16 for a in args):
            self.error = f"{cls.__name__} computes in bfloat16 (the captured path covers float16/32/64)"
            return
        cd = _compute_np(dtype) if dtype is not None else None
        n_ops = cls.scalar_operands
        rec = []
        for i, (a, s) in enumerate(zip(args, slots)):
            if s is not None:
                have = self.g.meta[s][1]
                rec.append(("v", s, cd if cd is not None and have != cd else None))
            elif isinstance(a, Tensor):
                arr = _as_array(a, cd) if cd is not None else _compute_array(a)
                self.g.const_src[id(arr)] = a._base if a._base is not None else a
                rec.append(("c", arr))
            elif cd is not None and i < n_ops and a is not None:
                rec.append(("c", _as_array(a, cd)))
            else:
                rec.append(("c", a))
        outs = [self._register(r) for r in results]
        self.g.ops.append(_Op("fn", cls, rec, dict(kwargs), outs, index=len(self.g.ops)))


def _flatten_output(out):
    """The model's outputs as a list of Tensors, and how to put them back together (``_unflatten_output``)."""
    if isinstance(out, Tensor):
        return [out], "tensor"
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, Tensor) for o in out):
        return list(out), type(out).__name__
    # a dict of Tensors: segmentation models' {"out": ..., "aux": ...}, a detection backbone's FPN levels
    if type(out) in (dict, collections.OrderedDict) and out and all(isinstance(o, Tensor) for o in out.values()):
        return list(out.values()), (type(out), tuple(out.keys()))
    raise CaptureError(f"the model returned {type(out).__name__}; the captured path handles a Tensor, a "
                       "tuple/list of Tensors or a dict of Tensors")


def _unflatten_output(outs, struct):
    """The inverse of ``_flatten_output``: ``outs`` in the structure the model returned."""
    if struct == "tensor":
        return outs[0]
    if struct in ("tuple", "list"):
        return tuple(outs) if struct == "tuple" else list(outs)
    cls, keys = struct
    return cls(zip(keys, outs))


def _capture(model, x_arr, dtype, keep_values=False):
    """Run ``model`` once on ``x_arr`` with every op recorded; returns (graph, eager outputs as arrays)."""
    g = _Graph()
    xt = Tensor._wrap(np.array(x_arr, copy=True), dtype)
    xt.requires_grad = True
    rec = _Recorder(g, xt, keep_values)
    if _graph._RECORDER is not None:
        raise CaptureError("compile() was called while another capture is running")
    _graph._RECORDER = rec
    try:
        # the reference kernels: the recorded outputs are what the plan is validated against (no Winograd)
        with enable_grad(), _select.reference_kernels():
            out = model(xt)
    finally:
        _graph._RECORDER = None
    if rec.error is not None:
        raise CaptureError(rec.error)
    outs, g.out_struct = _flatten_output(out)
    for o in outs:
        s = rec.slot_of(o)
        g.outputs.append(("v", s) if s is not None else ("c", np.array(_compute_array(o), copy=True)))
    g.values = rec.values
    return g, [np.array(_compute_array(o)) for o in outs]
