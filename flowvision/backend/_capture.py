"""``flowvision.backend.compile`` (this module: _capture): the captured inference path.

``compile(model, example_input)`` runs the model once with autograd recording forced on (the example input
requires grad, so every primitive op goes through ``Function.apply`` instead of the no-grad fast paths) and a
recorder hooked into ``Function.apply`` (``autograd.graph._RECORDER``) writes down each call: the op class,
its arguments and its outputs. Tensors produced by recorded ops from the input are *activations* (numbered
value slots); every other tensor an op reads (parameters, buffers, tensors computed from them alone) is a
*constant*, read at capture time.

The passes never test op classes: they read the traits each op declares (``capture_role``, ``elementwise``,
``activation``; see _ops/traits.py), and convolutions take the algorithm of the selector eager uses
(_ops/kernel_select.py). The recorded graph is then optimised -- dead-code elimination, BatchNorm (eval) folded into the preceding
convolution, bias / per-channel scale / residual add / activation fused into the packed-GEMM and conv kernels'
epilogues, activations kept NHWC between convolutions (``_C.conv2d_nhwc``) -- and lowered to a flat list of
pre-bound steps over value slots, each slot dropped right after its last use, conv outputs written into an arena
of buffers planned by liveness. Ops without a specialised lowering run their own numpy ``forward`` (the same
code eager runs). float32 plans run in C++ by default (``executor="native"``: _capture_native lowers the steps to a
``_C.ExecPlan``; ops with no native form stay Python closures called from it); ``executor="python"`` (and float64
plans) run the steps from a Python loop. Design notes and measurements: docs/architecture.md, "Captured inference
path".

The plan is validated before use: it must equal eager (rtol 1e-4) on the example input and on a second
random input of the same shape. If it does not (an op that bypasses ``Function.apply``, data-dependent
control flow) the module falls back to eager with a warning naming the first diverging op. Plans are cached
per input (shape, dtype); a new shape or dtype captures and validates again. Constants are keyed on the
parameters' and buffers' ``_version`` counters: an in-place update, optimizer step or ``load_state_dict``
re-plans on the next call. Writes that bypass the tensor API (``w.numpy()[:] = ...``) are not seen: call
``compiled.reset()`` (or compile again) after those.
"""
import threading
import warnings
import weakref
from typing import TYPE_CHECKING

import numpy as np

from . import _C, _dtype as D, _kernels
from ._tensor import Tensor
from ._ops import kernel_select as _select, traits as _traits
from .autograd import graph as _graph
from .autograd.graph import Context, _compute_array, _as_array, _compute_np
from .autograd.grad_mode import enable_grad, no_grad

if TYPE_CHECKING:  # annotations only: importing nn here would be circular
    from .nn.modules.module import Module

__all__ = ["compile", "CompiledModule", "CaptureError"]


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
        self.out_struct = None  # "tensor" | "tuple" | "list"
        self.values = None  # slot -> array, when recorded with keep_values (diagnosis)
        self.nhwc = set()  # slots stored NHWC (after the layout pass)
        self.const_src = {}  # id(constant array) -> the tensor (or view base) it was read from

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
    if isinstance(out, Tensor):
        return [out], "tensor"
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, Tensor) for o in out):
        return list(out), type(out).__name__
    raise CaptureError(f"the model returned {type(out).__name__}; the captured path handles a Tensor or a "
                       "tuple/list of Tensors")


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
        with enable_grad():
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


# ------------------------------------------------------------------ passes
def _uses(g):
    uses = {}
    for op in g.ops:
        for s in op.inputs():
            uses.setdefault(s, []).append(op)
    return uses


def _output_slots(g):
    return {o[1] for o in g.outputs if o[0] == "v"}


def eliminate_dead_code(g):
    live = _output_slots(g)
    kept = []
    for op in reversed(g.ops):
        if any(o in live for o in op.outs):
            kept.append(op)
            live.update(op.inputs())
    g.ops = kept[::-1]
    return g


def _role(op):
    """The capture role a recorded op declares (_ops/traits.py), None for fused / lowered ops."""
    return _traits.role(op.cls) if op.kind == "fn" else None


def activation(op):
    """The activation ``(kind, lo, hi)`` a recorded op declares for its recorded arguments, or None (also when a
    parameter is an activation, not a constant)."""
    if op.kind != "fn" or not op.args or any(a[0] == "v" for a in op.args[1:]):
        return None
    return _traits.activation(op.cls, [a[1] for a in op.args[1:]], op.kwargs)


def _act_epilogue(op):
    """The kernel epilogue name (and clamp bounds) of a recorded activation op, or None."""
    act = activation(op)
    return act if act is not None and act[0] != "none" and act[0] in _C.Epilogue.__members__ else None


def _to_fused(g, op):
    """A recorded Conv2d (constant weight) or Matmul (activation @ constant 2-D matrix) as a fusable op."""
    a = op.args
    role = _role(op)
    if role == "conv2d" and a[0][0] == "v" and a[1][0] == "c" and a[2][0] == "c":
        x_dt = g.meta[a[0][1]][1]
        w = np.asarray(a[1][1])
        if x_dt not in (np.float32, np.float64) or w.dtype != x_dt or len(g.meta[a[0][1]][0]) != 4:
            return None
        b = None if a[2][1] is None else np.asarray(a[2][1], x_dt)
        return _Op("conv", None, None, None, list(op.outs), dict(
            x=a[0][1], w=w, b=b, stride=tuple(a[3][1]), padding=tuple(a[4][1]), dilation=tuple(a[5][1]),
            groups=int(a[6][1]), ep="none", lo=0.0, hi=0.0, res=None, w_folded=False), op.index)
    if role == "matmul" and a[0][0] == "v" and a[1][0] == "c" and a[0][2] is None:
        x_shape, x_dt = g.meta[a[0][1]]
        w = np.asarray(a[1][1])
        if w.ndim != 2 or len(x_shape) < 2 or x_dt not in (np.float32, np.float64) or w.dtype != x_dt:
            return None
        return _Op("linear", None, None, None, list(op.outs), dict(
            x=a[0][1], w=w, b=None, ep="none", lo=0.0, hi=0.0, res=None, w_folded=False), op.index)
    return None


def _conv_takes_epilogue(g, op, ep):
    """Whether the lowering of fused op ``op`` can apply epilogue ``ep`` / a residual inside its kernel."""
    if op.kind == "linear" or _conv_algo(g, op) != "im2col":
        return True
    return ep in ("residual", "relu", "relu6", "clamp")  # NCHW conv2d_forward: applied in place, no new buffer


def _conv_algo(g, op):
    """The shared selector's algorithm for fused conv ``op`` in a plan (activations may stay NHWC)."""
    a = op.attrs
    return _select.conv_algorithm(g.meta[a["x"]][0], a["w"].shape, a["padding"], a["groups"], a["w"].dtype,
                                  nhwc_activations=True)


def _nhwc_kernels():
    return _select.nhwc_kernels()


def _per_channel(c, n_out, fused_kind, out_ndim):
    """``c`` as an (n_out,) vector when it broadcasts along the output channels only, else None."""
    c = np.asarray(c)
    if c.ndim == 0:
        return np.full(n_out, c, dtype=c.dtype)
    if fused_kind == "conv":
        ok = c.ndim <= out_ndim and c.shape[-3:] in ((n_out, 1, 1),) and all(s == 1 for s in c.shape[:-3])
    else:
        ok = c.shape[-1] == n_out and all(s == 1 for s in c.shape[:-1]) and c.ndim <= out_ndim
    return c.reshape(n_out) if ok else None


def _n_out(op):
    return op.attrs["w"].shape[0] if op.kind == "conv" else op.attrs["w"].shape[1]


def _scale_out_channels(op, scale):
    a = op.attrs
    a["w_folded"] = True  # a new array (never the model's): eager's packed copy can't be shared
    scale = scale.astype(np.float64)
    if op.kind == "conv":
        a["w"] = (a["w"].astype(np.float64) * scale[:, None, None, None]).astype(a["w"].dtype)
    else:
        a["w"] = (a["w"].astype(np.float64) * scale[None, :]).astype(a["w"].dtype)
    if a["b"] is not None:
        a["b"] = (a["b"].astype(np.float64) * scale).astype(a["w"].dtype)


def _add_bias(op, shift):
    a = op.attrs
    b = np.zeros(_n_out(op)) if a["b"] is None else a["b"].astype(np.float64)
    a["b"] = (b + shift.astype(np.float64)).astype(a["w"].dtype)


def _try_absorb(g, p, c, v):
    """Fold consumer ``c`` (the only reader of ``p``'s output slot ``v``) into fused op ``p``; True if done."""
    a = p.attrs
    out_shape, out_dt = g.meta[v]
    if c.kind != "fn" or len(c.outs) != 1 or g.meta[c.outs[0]][1] != out_dt:
        return False
    clean = a["ep"] == "none" and a["res"] is None
    n_out = _n_out(p)
    role = _role(c)
    if role == "batch_norm_eval" and p.kind == "conv" and clean and c.args[0] == ("v", v, None):
        rm, rv, w, b, eps = (x[1] for x in c.args[1:6])
        if any(x is not None and np.asarray(x).shape != (n_out,) for x in (rm, rv, w, b)):
            return False
        inv = 1.0 / np.sqrt(np.asarray(rv, np.float64) + eps)
        scale = inv * (1.0 if w is None else np.asarray(w, np.float64))
        shift = (0.0 if b is None else np.asarray(b, np.float64)) - np.asarray(rm, np.float64) * scale
        _scale_out_channels(p, scale)
        _add_bias(p, shift)
        return True
    if role in ("add", "mul") and len(c.args) == 2 and c.kwargs.get("alpha", 1) == 1:
        mine = [i for i, x in enumerate(c.args) if x[0] == "v" and x[1] == v]
        if len(mine) != 1 or c.args[mine[0]][2] is not None:
            return False
        other = c.args[1 - mine[0]]
        if other[0] == "c" and clean:
            vec = _per_channel(other[1], n_out, p.kind, len(out_shape))
            if vec is None or (role == "add" and g.meta[c.outs[0]][0] != out_shape):
                return False
            if role == "add":
                _add_bias(p, vec)
            else:
                _scale_out_channels(p, vec)
            return True
        if (other[0] == "v" and role == "add" and clean and other[2] is None and g.meta[other[1]] == g.meta[v]
                and _conv_takes_epilogue(g, p, "residual")):
            a["res"] = other[1]
            return True
        return False
    ep = _act_epilogue(c)
    if ep is not None and a["ep"] == "none" and c.args[0] == ("v", v, None) and _conv_takes_epilogue(g, p, ep[0]):
        a["ep"], a["lo"], a["hi"] = ep
        return True
    return False


def _fold_through_permute(g, p, perm, uses, outputs):
    """Linear -> permute(0, 3, 1, 2) -> multiply / add by a per-channel constant (ConvNeXt's channels-last MLP
    then layer scale ``gamma``): fold the constant into the Linear's weight / bias. The caller then drops the
    multiply / add op (the permute produces its output slot)."""
    if (p.kind != "linear" or _role(perm) != "permute" or tuple(perm.args[1][1]) != (0, 3, 1, 2)
            or p.attrs["ep"] != "none" or p.attrs["res"] is not None):
        return False
    u = perm.outs[0]
    readers = uses.get(u, [])
    if u in outputs or len(readers) != 1:
        return False
    c = readers[0]
    if _role(c) not in ("add", "mul") or len(c.args) != 2 or c.kwargs.get("alpha", 1) != 1:
        return False
    mine = [i for i, x in enumerate(c.args) if x == ("v", u, None)]
    if len(mine) != 1 or c.args[1 - mine[0]][0] != "c" or g.meta[c.outs[0]] != g.meta[u]:
        return False
    vec = _per_channel(c.args[1 - mine[0]][1], _n_out(p), "conv", 4)  # per channel of the NCHW (permuted) value
    if vec is None:
        return False
    if _role(c) == "add":
        _add_bias(p, vec)
    else:
        _scale_out_channels(p, vec)
    return True


def fuse(g):
    """Recorded Conv2d / Matmul-by-constant become fused ops that swallow their single-reader successors."""
    ops = [(_to_fused(g, op) or op) for op in g.ops]
    outputs = _output_slots(g)
    uses = {}
    for op in ops:
        for s in op.inputs():
            uses.setdefault(s, []).append(op)
    pos = {id(op): i for i, op in enumerate(ops)}
    for i in range(len(ops)):
        p = ops[i]
        if p is None or p.kind == "fn":
            continue
        while True:
            v = p.outs[0]
            readers = uses.get(v, [])
            if v in outputs or len(readers) != 1:
                break
            if _fold_through_permute(g, p, readers[0], uses, outputs):
                c = uses[readers[0].outs[0]][0]
                ops[pos[id(c)]] = None
                readers[0].outs = list(c.outs)
                continue
            if not _try_absorb(g, p, readers[0], v):
                break
            c = readers[0]
            j = pos[id(c)]
            ops[pos[id(p)]] = None
            ops[j] = p  # the fused op runs where its last consumer ran: every input is ready there
            pos[id(p)] = j
            p.outs = list(c.outs)
            if p.attrs["res"] is not None:
                uses[p.attrs["res"]] = [p if u is c else u for u in uses[p.attrs["res"]]]
    g.ops = [op for op in ops if op is not None]
    return g



# ------------------------------------------------------------------ layout: NHWC between convolutions
_NCHW_TO_NHWC = (0, 2, 3, 1)
_NHWC_TO_NCHW = (0, 3, 1, 2)
_PHYS_POS = (0, 3, 1, 2)  # NCHW logical dim -> its position in the NHWC array


def _transposer(perm, kernel):
    fast = getattr(_C, kernel, None)

    def run(x):
        if fast is not None and x.dtype == np.float32:
            return fast(np.ascontiguousarray(x))
        return np.ascontiguousarray(x.transpose(perm))
    return run


def _const_nhwc(c):
    """A constant operand of a 4-D elementwise op, re-laid out for NHWC operands (broadcasting preserved)."""
    if not isinstance(c, np.ndarray) or c.ndim == 0:
        return c
    return np.ascontiguousarray(c.reshape((1,) * (4 - c.ndim) + c.shape).transpose(_NCHW_TO_NHWC))


def _call(label, ins, outs, make, index=-1, params=None):
    """A lowered op with no recorded class: ``make()`` builds its Python step; ``params`` are what the native
    executor needs to run it (flowvision/backend/_capture_native.py)."""
    return _Op("call", None, None, None, list(outs), dict(label=label, ins=list(ins), make=make, params=params or {}),
               index)


def to_nhwc(g):
    """Keep activations NHWC (conv2d_nhwc's layout) from a convolution through elementwise ops, BN, activations,
    pooling and channel concatenation; convert to NCHW only where another op reads them (flatten, reshape,
    permute, unknown ops) and back where a convolution reads an NCHW value. Slot meta stays the logical NCHW
    shape; ``g.nhwc`` holds the slots stored NHWC."""
    if not _nhwc_kernels():
        return g
    nhwc = set()
    to_n, to_p = {}, {}
    ops = []
    readers = _uses(g)
    outputs = _output_slots(g)

    def float32_4d(s):
        shp, dt = g.meta[s]
        return len(shp) == 4 and dt == np.float32

    def as_nhwc(s):
        if s in nhwc:
            return s
        if s not in to_n:
            t = len(g.meta)
            g.meta.append(g.meta[s])
            nhwc.add(t)
            ops.append(_call("to_nhwc", [s], [t], lambda: _transposer(_NCHW_TO_NHWC, "nchw_to_nhwc")))
            to_n[s] = t
        return to_n[s]

    def as_plain(s):
        if s not in nhwc:
            return s
        if s not in to_p:
            t = len(g.meta)
            g.meta.append(g.meta[s])
            ops.append(_call("to_nchw", [s], [t], lambda: _transposer(_NHWC_TO_NCHW, "nhwc_to_nchw")))
            to_p[s] = t
        return to_p[s]

    def plain_args(op):
        return [("v", as_plain(a[1]), a[2]) if a[0] == "v" else a for a in op.args]

    for op in g.ops:
        if op.kind == "conv":
            a = op.attrs
            if _conv_algo(g, op) == "nhwc_direct" and float32_4d(a["x"]):
                a = dict(a, x=as_nhwc(a["x"]), res=None if a["res"] is None else as_nhwc(a["res"]), nhwc=True)
                nhwc.add(op.outs[0])
            else:
                a = dict(a, x=as_plain(a["x"]), res=None if a["res"] is None else as_plain(a["res"]))
            ops.append(_Op("conv", None, None, None, op.outs, a, op.index))
            continue
        if op.kind == "linear":
            a = op.attrs
            a = dict(a, x=as_plain(a["x"]), res=None if a["res"] is None else as_plain(a["res"]))
            ops.append(_Op("linear", None, None, None, op.outs, a, op.index))
            continue
        acts = [a[1] for a in op.args if a[0] == "v"]
        x = op.args[0][1] if op.args and op.args[0][0] == "v" else None
        cls, role = op.cls, _role(op)
        any_nhwc = any(s in nhwc for s in acts)
        if _traits.is_elementwise(cls) and any_nhwc and all(float32_4d(s) for s in acts) and len(op.outs) == 1 \
                and len(g.meta[op.outs[0]][0]) == 4 and all(
                    not isinstance(a[1], np.ndarray) or a[1].ndim <= 4 for a in op.args if a[0] == "c"):
            args = [("v", as_nhwc(a[1]), a[2]) if a[0] == "v" else ("c", _const_nhwc(a[1])) for a in op.args]
            ops.append(_Op("fn", cls, args, op.kwargs, op.outs, index=op.index))
            nhwc.add(op.outs[0])
            continue
        if x is not None and x in nhwc and len(acts) == 1:
            y = op.outs[0]
            if role == "permute" and tuple(op.args[1][1]) == _NCHW_TO_NHWC:
                # the NHWC array *is* the permuted tensor: no data movement
                ops.append(_call("nhwc_as_permuted", [x], [y], lambda: lambda v: v, op.index))
                continue
            if role == "max_pool2d" and not any(r for r in readers.get(op.outs[1], [])) and op.outs[1] not in outputs:
                k, st, p, d, ceil = (a[1] for a in op.args[1:6])
                ops.append(_call("max_pool2d_nhwc", [x], [y], lambda k=k, st=st, p=p, d=d, ceil=ceil: (
                    lambda v: _C.max_pool2d_nhwc(v, k, st, p, d, ceil)), op.index,
                    dict(kernel=k, stride=st, padding=p, dilation=d, ceil_mode=ceil)))
                nhwc.add(y)
                continue
            if role == "avg_pool2d" and not op.args[6][1]:
                k, st, p, ceil, cip = (a[1] for a in op.args[1:6])
                ops.append(_call("avg_pool2d_nhwc", [x], [y], lambda k=k, st=st, p=p, ceil=ceil, cip=cip: (
                    lambda v: _C.avg_pool2d_nhwc(v, k, st, p, ceil, cip)), op.index,
                    dict(kernel=k, stride=st, padding=p, ceil_mode=ceil, count_include_pad=cip)))
                nhwc.add(y)
                continue
            if role == "adaptive_avg_pool2d":
                o = tuple(op.args[1][1])
                ops.append(_call("adaptive_avg_pool2d_nhwc", [x], [y], lambda o=o: (
                    lambda v: _C.adaptive_avg_pool2d_nhwc(v, o)), op.index, dict(output_size=o)))
                nhwc.add(y)
                continue
            if role == "mean" and op.args[0][2] is None and op.args[1][1] is not None:
                dims, keep = tuple(d % 4 for d in op.args[1][1]), op.args[2][1]
                pdims = tuple(sorted(_PHYS_POS[d] for d in dims))
                rest = [_PHYS_POS[d] for d in range(4) if d not in dims]
                if pdims == (1, 2) and hasattr(_C, "adaptive_avg_pool2d_nhwc"):  # global average pool (SE, heads)
                    n, c = g.meta[x][0][:2]
                    shape = (n, 1, 1, c) if keep else (n, c)
                    ops.append(_call("global_avg_pool_nhwc", [x], [y], lambda shape=shape: (
                        lambda v: _C.adaptive_avg_pool2d_nhwc(v, (1, 1)).reshape(shape)), op.index,
                        dict(output_size=(1, 1), out_shape=shape)))
                    if keep:
                        nhwc.add(y)
                    continue
                if keep or rest == sorted(rest):
                    args = [("v", x, None), ("c", pdims), ("c", keep)]
                    ops.append(_Op("fn", cls, args, op.kwargs, op.outs, index=op.index))
                    if keep:
                        nhwc.add(y)
                    continue
            if role == "batch_norm_eval":
                rm, rv, w, b, eps = (a[1] for a in op.args[1:6])
                inv = 1.0 / np.sqrt(np.asarray(rv, np.float64) + eps)
                scale = inv * (1.0 if w is None else np.asarray(w, np.float64))
                shift = (0.0 if b is None else np.asarray(b, np.float64)) - np.asarray(rm, np.float64) * scale
                scale, shift = scale.astype(np.float32), shift.astype(np.float32)

                def make(scale=scale, shift=shift):
                    def run(v):
                        y = np.multiply(v, scale)
                        y += shift
                        return y
                    return run
                ops.append(_call("batch_norm_nhwc", [x], [y], make, op.index))
                nhwc.add(y)
                continue
        if role == "cat" and any_nhwc and op.kwargs.get("dim") in (1, -3) and all(float32_4d(s) for s in acts) \
                and all(a[0] == "v" and a[2] is None for a in op.args):
            args = [("v", as_nhwc(a[1]), None) for a in op.args]
            ops.append(_Op("fn", cls, args, dict(op.kwargs, dim=3), op.outs, index=op.index))
            nhwc.add(op.outs[0])
            continue
        if role == "permute" and x is not None and tuple(op.args[1][1]) == _NHWC_TO_NCHW and len(g.meta[x][0]) == 4 \
                and g.meta[x][1] == np.float32:
            # an NHWC tensor made NCHW by a permute (ConvNeXt's channels-last blocks): keep the data as it is
            y = op.outs[0]
            ops.append(_call("permuted_as_nhwc", [x], [y], lambda: np.ascontiguousarray, op.index))
            nhwc.add(y)
            continue
        ops.append(_Op("fn", cls, plain_args(op), op.kwargs, op.outs, index=op.index))
    g.outputs = [("v", as_plain(o[1])) if o[0] == "v" else o for o in g.outputs]
    g.ops = _fuse_channels_last_residual(g, ops, nhwc)
    g.ops = _fuse_channel_gate(g, g.ops, nhwc)
    g.nhwc = nhwc
    return g


def _readers_and_producers(ops):
    """value slot -> the ops reading it (in order), and value slot -> the op producing it."""
    readers, producer = {}, {}
    for op in ops:
        for s in op.inputs():
            readers.setdefault(s, []).append(op)
        for s in op.outs:
            producer[s] = op
    return readers, producer


def _fuse_channels_last_residual(g, ops, nhwc):
    """Linear (channels-last) -> permute back to NCHW (zero-copy: ``permuted_as_nhwc``) -> add an NHWC shortcut
    (ConvNeXt blocks): the shortcut's NHWC array has the Linear output's (N, H, W, C) layout, so the add becomes
    the GEMM's residual epilogue."""
    outputs = _output_slots(g)
    readers, producer = _readers_and_producers(ops)
    where = {id(op): i for i, op in enumerate(ops)}
    for perm in list(ops):
        if perm is None or perm.kind != "call" or perm.attrs["label"] != "permuted_as_nhwc":
            continue
        a, b = perm.attrs["ins"][0], perm.outs[0]
        lin = producer.get(a)
        if (lin is None or lin.kind != "linear" or lin.attrs["ep"] != "none" or lin.attrs["res"] is not None
                or a in outputs or b in outputs or len(readers.get(a, [])) != 1 or len(readers.get(b, [])) != 1):
            continue
        add = readers[b][0]
        if _role(add) != "add" or len(add.args) != 2 or add.kwargs.get("alpha", 1) != 1:
            continue
        other = [x for x in add.args if x != ("v", b, None)]
        if len(other) != 1 or other[0][0] != "v" or other[0][2] is not None or other[0][1] not in nhwc \
                or g.meta[other[0][1]] != g.meta[b] or g.meta[add.outs[0]] != g.meta[b]:
            continue
        lin.attrs = dict(lin.attrs, res=other[0][1])
        perm.outs = list(add.outs)
        j = where[id(add)]
        ops[where[id(lin)]] = None
        ops[where[id(perm)]] = None
        ops[j:j + 1] = [lin, perm]
        where = {id(op): i for i, op in enumerate(ops) if op is not None}
    return [op for op in ops if op is not None]

# readers of a value that leave it untouched and keep no view of it (their outputs are new arrays)
_FRESH_READER_CALLS = ("global_avg_pool_nhwc", "adaptive_avg_pool2d_nhwc", "max_pool2d_nhwc", "avg_pool2d_nhwc")


def _gate_kind(op):
    """"sigmoid" / "hardsigmoid" when ``op`` is that recorded activation of one activation input, else None."""
    if op.kind != "fn" or len(op.args) != 1 or op.args[0][0] != "v" or op.args[0][2] is not None:
        return None
    act = activation(op)
    return act[0] if act is not None and act[0] in ("sigmoid", "hardsigmoid") else None


def _fuse_channel_gate(g, ops, nhwc):
    """Squeeze-excitation: ``x * act(gate)`` with x NHWC (N, C, H, W) and the gate (N, C, 1, 1), act a sigmoid /
    hard sigmoid read only by the multiply (or no activation: kind "none") -> one ``channel_gate`` step
    (``_C.channel_gate_nhwc``). It writes into x's memory when x is an NHWC convolution's output that nothing
    reads after the multiply and no other reader keeps a view of (the SE block's own pool reads it first)."""
    if not hasattr(_C, "channel_gate_nhwc"):
        return ops
    outputs = _output_slots(g)
    readers, producer = _readers_and_producers(ops)
    where = {id(op): i for i, op in enumerate(ops)}

    def f32(s, shape):
        return tuple(g.meta[s][0]) == tuple(shape) and g.meta[s][1] == np.float32

    for mul in list(ops):
        if (_role(mul) != "mul" or len(mul.args) != 2 or mul.kwargs
                or any(a[0] != "v" or a[2] is not None for a in mul.args)):
            continue
        y = mul.outs[0]
        shape = g.meta[y][0]
        if len(shape) != 4 or y not in nhwc:
            continue
        n, c = shape[:2]
        found = None
        for k in (1, 0):  # the gate is usually the second operand
            x, gate = mul.args[k ^ 1][1], mul.args[k][1]
            if x == gate or x not in nhwc or not f32(x, shape) or not f32(gate, (n, c, 1, 1)) or gate in outputs:
                continue
            act = producer.get(gate)
            kind = _gate_kind(act) if act is not None else None
            if kind is not None and len(readers.get(gate, [])) == 1:
                found = (x, act.args[0][1], kind, act)
                break
            if found is None:
                found = (x, gate, "none", None)
        if found is None:
            continue
        x, gate, kind, act = found
        if not f32(gate, (n, c, 1, 1)) or gate == x:
            continue
        i = where[id(mul)]
        xp = producer.get(x)
        in_place = (x not in outputs and xp is not None and xp.kind == "conv" and xp.attrs.get("nhwc")
                    and all(r is mul or (where.get(id(r), i) < i and r.kind == "call"
                                         and r.attrs["label"] in _FRESH_READER_CALLS) for r in readers[x]))

        def make(kind=kind, in_place=in_place):
            if in_place:
                return lambda v, gt: _C.channel_gate_nhwc(v, gt, kind, v)
            return lambda v, gt: _C.channel_gate_nhwc(v, gt, kind)
        fused = _call("channel_gate", [x, gate], [y], make, mul.index, dict(gate_kind=kind, in_place=bool(in_place)))
        ops[i] = fused
        if act is not None:
            ops[where[id(act)]] = None
        where[id(fused)] = i
        for s, gone in ((x, mul), (gate, act or mul)):
            readers[s] = [fused if r is gone else r for r in readers[s]]
    return [op for op in ops if op is not None]


# ------------------------------------------------------------------ lowering
def _lower_fn(g, op):
    fwd = op.cls.forward
    template = [x[1] if x[0] == "c" else None for x in op.args]
    act = [(i, x[2]) for i, x in enumerate(op.args) if x[0] == "v"]
    kwargs = op.kwargs
    n_args = len(template)
    single_pos, single_cast = act[0] if len(act) == 1 else (None, None)

    if single_pos is not None and single_cast is None:
        def run(v):
            args = list(template)
            args[single_pos] = v
            ctx = Context()
            ctx.needs_input_grad = (False,) * n_args
            return fwd(ctx, *args, **kwargs)
    else:
        def run(*vals):
            args = list(template)
            for (pos, cast), v in zip(act, vals):
                args[pos] = v if cast is None or v.dtype == cast else v.astype(cast)
            ctx = Context()
            ctx.needs_input_grad = (False,) * n_args
            return fwd(ctx, *args, **kwargs)
    return run


def _inplace_epilogue(ep, lo, hi):
    if ep == "relu":
        return lambda y: np.maximum(y, 0, out=y)
    if ep in ("relu6", "clamp"):
        lo, hi = (0.0, 6.0) if ep == "relu6" else (lo, hi)
        return lambda y: np.clip(y, lo, hi, out=y)
    return None


def conv_nhwc_operands(g, op):
    """(packed weight, float32 bias or None) of an NHWC convolution (shared by both executors)."""
    a = op.attrs
    w, b = a["w"], a["b"]
    src = None if a["w_folded"] else g.const_src.get(id(w))
    if src is not None and src._data is w:  # unmodified weight: share eager's packed copy (one in memory)
        pk = _kernels.packed_conv(src, a["groups"])
    else:
        pk = _C.pack_conv(np.ascontiguousarray(w, np.float32), a["groups"])
    return pk, None if b is None else np.ascontiguousarray(b, np.float32)


def linear_operands(g, op):
    """The packed (K, N) weight of a fused linear op (shared by both executors)."""
    w = op.attrs["w"]
    src = None if op.attrs["w_folded"] else g.const_src.get(id(w))
    if (src is not None and src.ndim == 2 and tuple(src.shape) == w.shape[::-1] and src._data.dtype == w.dtype
            and np.shares_memory(src._data, w) and w.strides == src._data.strides[::-1]):
        return _kernels.packed_weight(src, "linear")  # w is t(weight): share eager's packed copy
    return _C.pack_b(np.ascontiguousarray(w), False)


def _lower_conv(g, op, out=None):
    a = op.attrs
    w, b, ep, lo, hi = a["w"], a["b"], a["ep"], a["lo"], a["hi"]
    if a.get("nhwc"):
        pk, b32 = conv_nhwc_operands(g, op)
        stride, padding, dilation = list(a["stride"]), list(a["padding"]), list(a["dilation"])

        def run(x, res=None):
            return _C.conv2d_nhwc(x, pk, b32, stride, padding, dilation, ep, res, lo, hi, out)
        return run
    out_shape = g.meta[op.outs[0]][0]  # float64 (or no NHWC kernels): NCHW
    n, o, oh, ow = out_shape
    if _conv_algo(g, op) == "gemm_1x1":
        sh, sw = a["stride"]
        strided = (sh, sw) != (1, 1)
        c = w.shape[1]
        w2 = np.ascontiguousarray(w.reshape(o, c))
        if oh * ow == 1:  # one output pixel (squeeze-excitation convs): a Linear over the images
            pk = _C.pack_b(w2, True)

            def run(x, res=None):
                if strided:
                    x = x[:, :, ::sh, ::sw]
                r2 = None if res is None else res.reshape(n, o)
                return _C.gemm_packed(np.ascontiguousarray(x).reshape(n, c), pk, b, ep, r2, lo, hi).reshape(out_shape)
            return run
        pa = _C.pack_a(w2)

        def run(x, res=None):
            if strided:
                x = x[:, :, ::sh, ::sw]
            x3 = np.ascontiguousarray(x).reshape(n, c, oh * ow)
            r3 = None if res is None else np.ascontiguousarray(res).reshape(n, o, oh * ow)
            return _C.gemm_packed_a(pa, x3, b, ep, r3, lo, hi).reshape(out_shape)
        return run
    stride, padding, dilation, groups = a["stride"], a["padding"], a["dilation"], a["groups"]
    w = np.ascontiguousarray(w)
    post = _inplace_epilogue(ep, lo, hi)
    if ep != "none" and post is None:
        raise RuntimeError(f"internal: epilogue {ep} cannot follow the NCHW convolution (fuse() should not allow it)")

    def run(x, res=None):
        y = _C.conv2d_forward(np.ascontiguousarray(x), w, b, stride, padding, dilation, groups)
        if res is not None:
            np.add(y, res, out=y)
        if post is not None:
            post(y)
        return y
    return run


def _lower_linear(g, op):
    a = op.attrs
    k = a["w"].shape[0]
    pk = linear_operands(g, op)
    b, ep, lo, hi = a["b"], a["ep"], a["lo"], a["hi"]
    out_shape = g.meta[op.outs[0]][0]
    n = pk.N

    def run(x, res=None):
        r2 = None if res is None else np.ascontiguousarray(res).reshape(-1, n)
        return _C.gemm_packed(np.ascontiguousarray(x).reshape(-1, k), pk, b, ep, r2, lo, hi).reshape(out_shape)
    return run


def plan_buffers(g, last, outputs, sizes, fresh):
    """The one liveness planner of both executors: output buffers for the ops in ``sizes`` (id(op) -> floats),
    shared by ops whose outputs are never live at the same time, so a steady-state run allocates (and page-faults)
    nothing for them. A buffer stays reserved until the last read of every value that may alias it: outputs of
    ops not in ``fresh`` (id(op)s of ops that always return new memory) may be views of their inputs (reshape,
    permute, ...) and join their inputs' alias class. Values the plan returns never live in a buffer (the next
    call would overwrite them). Returns ({output slot: buffer index}, [buffer sizes in floats])."""
    parent = {}

    def find(s):
        while parent.get(s, s) != s:
            s = parent[s]
        return s

    for op in g.ops:
        if id(op) in fresh:
            continue
        for o in op.outs:
            for s in op.inputs():
                ro, rs = find(o), find(s)
                if ro != rs:
                    parent[ro] = rs
    end, produced = {}, {}
    for i, op in enumerate(g.ops):
        for o in op.outs:
            produced[o] = i
    for s in produced:
        r = find(s)
        end[r] = max(end.get(r, -1), last.get(s, produced[s]), produced[s])
    tainted = {find(s) for s in outputs}
    free, busy, assigned, buf_sizes = [], [], {}, []
    for i, op in enumerate(g.ops):
        for e in [b for b in busy if b[0] < i]:  # buffers whose alias class is dead before step i
            busy.remove(e)
            free.append(e[1])
        n = sizes.get(id(op))
        if n is None:
            continue
        y = op.outs[0]
        if find(y) in tainted:
            continue
        # best fit: the smallest free buffer that holds n floats, else the largest free one grown to n
        fits = [b for b in free if buf_sizes[b] >= n]
        if fits or free:
            b = min(fits, key=lambda b: buf_sizes[b]) if fits else max(free, key=lambda b: buf_sizes[b])
            free.remove(b)
            buf_sizes[b] = max(buf_sizes[b], n)
        else:
            b = len(buf_sizes)
            buf_sizes.append(n)
        assigned[y] = b
        busy.append((end[find(y)], b))
    return assigned, buf_sizes


def plan_arena(g, last, outputs):
    """The Python executor's arena: preallocated outputs for the NHWC convolutions (the kernel writes into
    ``out=``); convolutions, GEMMs and elementwise ops always return fresh arrays (see plan_buffers)."""
    fresh = {id(op) for op in g.ops if op.kind in ("conv", "linear") or (op.kind == "fn" and _traits.is_elementwise(op.cls))
             or (op.kind == "call" and op.attrs["label"] == "channel_gate" and not op.attrs["params"]["in_place"])}
    sizes = {id(op): int(np.prod(g.meta[op.outs[0]][0])) for op in g.ops if op.kind == "conv" and op.attrs.get("nhwc")}
    assigned, buf_sizes = plan_buffers(g, last, outputs, sizes, fresh)
    flat = [np.empty(n, np.float32) for n in buf_sizes]
    buffers = {}
    for y, b in assigned.items():
        n, c, h, w = g.meta[y][0]
        buffers[y] = flat[b][:n * h * w * c].reshape(n, h, w, c)
    return buffers


def last_reads(g):
    """slot -> index of the last op reading it; per op, the slots to drop after it (read for the last time, or
    produced and never read)."""
    outputs = _output_slots(g)
    last = {}
    for i, op in enumerate(g.ops):
        for s in op.inputs():
            last[s] = i
    drop_after = [[] for _ in g.ops]
    for s, i in last.items():
        if s not in outputs:
            drop_after[i].append(s)
    for i, op in enumerate(g.ops):
        drop_after[i] += [s for s in op.outs if s not in last and s not in outputs]
    return last, drop_after


def lower_python_step(g, op, out=None):
    """The Python closure running ``op`` (called with its input arrays, in ``op.inputs()`` order)."""
    if op.kind == "fn":
        return _lower_fn(g, op)
    if op.kind == "call":
        return op.attrs["make"]()
    if op.kind == "conv":
        return _lower_conv(g, op, out)
    return _lower_linear(g, op)


def _lower(g):
    """The Python executor's flat step list: (callable, input slots, output slots, slots to drop after, op)."""
    outputs = _output_slots(g)
    last, drop_after = last_reads(g)
    arena = plan_arena(g, last, outputs)
    steps = []
    for i, op in enumerate(g.ops):
        fn = lower_python_step(g, op, arena.get(op.outs[0]))
        steps.append((fn, tuple(op.inputs()), tuple(op.outs), tuple(drop_after[i]), op))
    _drop_weights(g)
    return steps


def _drop_weights(g):
    for op in g.ops:
        if op.kind in ("conv", "linear"):  # the kernels hold packed copies: drop the (folded) arrays
            op.attrs = dict(op.attrs, w=None, b=None)


EXECUTORS = ("native", "python")


class _Plan:
    """A lowered graph for one input (shape, dtype): runs with no autograd, no Tensor wrapping per op.

    executor "native": float32 plans run in C++ (``_C.ExecPlan``, built by _capture_native), Python only for steps
    with no native form; "python" (and float64 plans, or when the native build fails: ``native_error`` says why):
    the steps are Python closures run by ``run``'s loop."""

    def __init__(self, g, optimise=True, executor="native"):
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
        if optimise:
            eliminate_dead_code(g)
            fuse(g)
            eliminate_dead_code(g)
            to_nhwc(g)
        else:
            eliminate_dead_code(g)
        self.graph = g
        self.n_slots = len(g.meta)
        self.outputs = g.outputs
        self.out_dtypes = [g.meta[o[1]][1] if o[0] == "v" else o[1].dtype for o in g.outputs]
        self.native = self.native_error = None
        self.steps = None
        if executor == "native":
            from . import _capture_native
            try:
                self.native, self.native_steps, self.arena_floats = _capture_native.build(g)
            except _capture_native.NotNative as e:
                self.native_error = str(e)
            except Exception as e:  # noqa: BLE001 -- any build error: the Python executor still runs the plan
                self.native_error = f"native build failed: {type(e).__name__}: {e}"
        if self.native is not None:
            _drop_weights(g)
        else:
            self.steps = _lower(g)
            self._run_steps = [(s[0], s[1], s[2], s[3]) for s in self.steps]

    @property
    def executor(self):
        return "native" if self.native is not None else "python"

    def run(self, x, keep_values=False):
        if self.native is not None:
            if keep_values:
                raise ValueError("keep_values needs the Python executor (executor='python')")
            with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
                got = iter(self.native.run(x))
            return [next(got) if o[0] == "v" else o[1] for o in self.outputs]
        slots = [None] * self.n_slots
        slots[0] = x
        kept = {} if keep_values else None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            for fn, ins, outs, drop in self._run_steps:
                if len(ins) == 1:
                    r = fn(slots[ins[0]])
                else:
                    r = fn(*[slots[s] for s in ins])
                if len(outs) == 1:
                    slots[outs[0]] = r if isinstance(r, np.ndarray) else np.asarray(r)
                else:
                    for s, v in zip(outs, r):
                        slots[s] = v if isinstance(v, np.ndarray) else np.asarray(v)
                if keep_values:
                    for s in outs:
                        kept[s] = slots[s]
                for s in drop:
                    slots[s] = None
        res = [slots[o[1]] if o[0] == "v" else o[1] for o in self.outputs]
        return (res, kept) if keep_values else res

    def describe(self):
        if self.native is not None:
            return "executor: native (C++)\n" + "\n".join(
                f"{'native' if native else 'PYTHON':<7s}{label:<28s} in={list(ins)} out={list(outs)} "
                f"{self.graph.meta[outs[0]][0]}{'' if buf < 0 else f' arena#{buf}'}"
                for (label, native, buf), (ins, outs) in self.native_steps)
        lines = ["executor: python" + (f" ({self.native_error})" if self.native_error else "")]
        for fn, ins, outs, drop, op in self.steps:
            shp = [self.graph.meta[s][0] for s in outs]
            lines.append(f"{op.name():<28s} in={list(ins)} out={list(outs)} {shp[0] if len(shp) == 1 else shp}")
        return "\n".join(lines)


# ------------------------------------------------------------------ validation
def _close(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not np.issubdtype(a.dtype, np.floating):
        return np.array_equal(a, b)
    scale = float(np.max(np.abs(b[np.isfinite(b)]))) if np.isfinite(b).any() else 1.0
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * 0.1 * max(scale, 1e-6), equal_nan=True))


def _diagnose(model, x2, dtype, g_ref, rtol):
    """Name the first op where the captured graph stops matching what eager does on input ``x2``."""
    try:
        g2, _ = _capture(model, x2, dtype, keep_values=True)
    except CaptureError as e:
        return f"the second input could not be captured ({e})"
    for op1, op2 in zip(g_ref.ops, g2.ops):
        if op1.cls is not op2.cls or [x[0] for x in op1.args] != [x[0] for x in op2.args]:
            return (f"op #{op1.index} {op1.cls.__name__}: on a second input the model ran {op2.cls.__name__} instead "
                    "(data-dependent control flow)")
    if len(g_ref.ops) != len(g2.ops):
        return f"the op sequence has a different length on a second input ({len(g_ref.ops)} vs {len(g2.ops)})"
    plan = _Plan(_copy_graph(g_ref), optimise=False, executor="python")
    _, kept = plan.run(np.array(x2, copy=True), keep_values=True)
    for op in g_ref.ops:
        for s in op.outs:
            if s in kept and not _close(kept[s], g2.values[s], rtol):
                return (f"op #{op.index} {op.cls.__name__} (output {list(g_ref.meta[s][0])}): its inputs depend on a "
                        "value the capture could not see (an op outside Function.apply, or state read as a constant)")
    return "the outputs differ although every recorded op matches (the output is not produced by recorded ops)"


def _copy_graph(g):
    h = _Graph()
    h.ops = [_Op(op.kind, op.cls, op.args, op.kwargs, list(op.outs), dict(op.attrs), op.index) for op in g.ops]
    h.meta, h.outputs, h.out_struct, h.const_src = list(g.meta), list(g.outputs), g.out_struct, g.const_src
    return h


# ------------------------------------------------------------------ the module
def _state_versions(model):
    ts = list(model.parameters()) + [b for b in model.buffers() if b is not None]
    return ts, tuple(t._version[0] for t in ts)


class CompiledModule:
    """The callable ``compile()`` returns: ``compiled(x)`` equals ``model(x)`` (eval mode, no gradient).

    ``plans`` maps (shape, dtype) to the plan in use (``None``: eager fallback for that input); ``explain(x)``
    prints the steps of the plan for ``x``'s shape; ``fallback_reason`` holds the last fallback's message.
    """

    def __init__(self, model, optimise=True, validate=True, rtol=1e-4, executor="native"):
        if executor not in EXECUTORS:
            raise ValueError(f"compile(): executor must be one of {EXECUTORS}, got {executor!r}")
        self.executor = executor
        self.model = model
        self.optimise = optimise
        self.validate = validate
        self.rtol = rtol
        self.plans = {}
        self.fallback_reason = None
        self._lock = threading.Lock()
        self._state, self._versions = _state_versions(model)

    def reset(self):
        """Forget every plan (after writing weights outside the tensor API)."""
        self.plans.clear()
        self._state, self._versions = _state_versions(self.model)

    def _check_versions(self):
        if tuple(t._version[0] for t in self._state) != self._versions:
            self.reset()

    def _plan_for(self, x):
        key = (tuple(x.shape), x._dtype)
        if key in self.plans:
            return self.plans[key]
        plan = self._build(x)
        self.plans[key] = plan
        return plan

    def _build(self, x):
        if self.model.training or any(m.training for m in self.model.modules()):
            raise RuntimeError("flowvision.backend.compile() captures inference: call model.eval() first")
        dtype = x._dtype
        x1 = np.array(_compute_array(x), copy=True)
        try:
            g, ref1 = _capture(self.model, x1, dtype)
        except CaptureError as e:
            return self._fallback(f"capture failed: {e}")
        # the passes rewrite their copy; g stays as recorded
        plan = _Plan(_copy_graph(g), optimise=self.optimise, executor=self.executor)
        if not self.validate:
            return plan
        rng = np.random.default_rng(0)
        x2 = (rng.standard_normal(x1.shape) * (float(x1.std()) or 1.0) + float(x1.mean())).astype(x1.dtype)
        with no_grad():
            ref2 = self._eager_arrays(x2, dtype)
        if self._matches(plan, x1, ref1) and self._matches(plan, x2, ref2):
            return plan
        if plan.native is not None:  # the native executor's own fault? the Python executor runs the same plan
            py_plan = _Plan(_copy_graph(g), optimise=self.optimise, executor="python")
            if self._matches(py_plan, x1, ref1) and self._matches(py_plan, x2, ref2):
                py_plan.native_error = "the native plan differed from eager (or failed); the Python executor did not"
                warnings.warn("flowvision.compile: the native plan executor differs from eager; using the Python "
                              "executor for this input", RuntimeWarning, stacklevel=3)
                return py_plan
        if self.optimise:  # is it the passes? the unoptimised replay is the recorded ops themselves
            plain = _Plan(_copy_graph(g), optimise=False, executor=self.executor)
            if self._matches(plain, x1, ref1) and self._matches(plain, x2, ref2):
                warnings.warn("flowvision.compile: the optimised plan differs from eager; running the recorded ops "
                              "without fusion", RuntimeWarning, stacklevel=3)
                return plain
        return self._fallback(_diagnose(self.model, x2, dtype, g, self.rtol))

    def _fallback(self, why):
        self.fallback_reason = why
        warnings.warn(f"flowvision.compile: falling back to eager for this input: {why}", RuntimeWarning,
                      stacklevel=4)
        return None

    def _eager_arrays(self, x_arr, dtype):
        # the reference run takes eager's unpacked kernels: its packed-weight caches would otherwise keep a
        # second packed copy of every weight alive next to the plan's (folded) ones
        with _select.reference_kernels():
            out = self.model(Tensor._wrap(np.array(x_arr, copy=True), dtype))
        outs, _ = _flatten_output(out)
        return [np.array(_compute_array(o)) for o in outs]

    def _matches(self, plan, x_arr, ref):
        try:
            got = plan.run(np.array(x_arr, copy=True))
        except Exception:  # noqa: BLE001 -- a native executor error: the caller retries with the Python executor
            if plan.native is None:
                raise
            return False
        return len(got) == len(ref) and all(_close(a, b, self.rtol) for a, b in zip(got, ref))

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"compiled module expects a Tensor input, got {type(x).__name__}")
        self._check_versions()
        plan = self._plan_for(x)
        if plan is None:
            with no_grad():
                return self.model(x)
        with self._lock:  # a plan's arena buffers are shared between calls: one call at a time
            outs = plan.run(_compute_array(x))
        wrapped = [Tensor._wrap(o, D.from_numpy_dtype(o.dtype)) for o in outs]
        st = plan.graph.out_struct
        if st == "tensor":
            return wrapped[0]
        return tuple(wrapped) if st == "tuple" else wrapped

    forward = __call__

    def explain(self, x):
        plan = self._plan_for(x)
        return "eager fallback: " + str(self.fallback_reason) if plan is None else plan.describe()


def compile(model: "Module", example_input: Tensor, *, optimise: bool = True, validate: bool = True,  # noqa: A001
            rtol: float = 1e-4, executor: str = "native") -> "CompiledModule":
    """Capture ``model`` (in eval mode) on ``example_input`` and return a :class:`CompiledModule`.

    Args:
        model: a ``flowvision.backend.nn.Module`` in eval mode (``model.eval()``).
        example_input: an input of the shape and dtype the model will be called with; a new batch size re-plans
            on first use.
        optimise: run the graph passes (batch-norm folding, epilogue fusion).
        validate: check the plan against eager execution on the example and a random input (``rtol``) and fall
            back to eager, with a warning, when they differ (``fallback_reason`` then says why).
        rtol: relative tolerance of that check.
        executor: ``"native"`` runs float32 plans in C++ (Python only for ops with no native step), ``"python"``
            runs every step from a Python loop (float64 plans always do).

    Returns:
        A callable module with the same outputs as ``model``.

    Raises:
        TypeError: ``example_input`` is not a Tensor, or ``model`` is not a Module.
        RuntimeError: ``model`` (or a submodule) is in training mode.

    Example:
        >>> import flowvision
        >>> from flowvision import backend as flow
        >>> nn = flow.nn
        >>> model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).eval()
        >>> x = flow.randn(1, 3, 16, 16)
        >>> fast = flowvision.compile(model, x)
        >>> bool(((fast(x) - model(x)).abs().max() < 1e-4).item())
        True
    """
    if not isinstance(example_input, Tensor):
        raise TypeError(f"compile(): example_input must be a Tensor, got {type(example_input).__name__}")
    if not callable(getattr(model, "modules", None)):
        raise TypeError(f"compile(): expected a flowvision.backend.nn.Module, got {type(model).__name__}")
    if model.training or any(m.training for m in model.modules()):
        raise RuntimeError("flowvision.backend.compile() captures inference: call model.eval() first")
    cm = CompiledModule(model, optimise=optimise, validate=validate, rtol=rtol, executor=executor)
    cm._plan_for(example_input)
    return cm
