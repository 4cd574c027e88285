"""The native plan executor's lowering: a captured, optimised float32 graph (flowvision/backend/
_capture.py) becomes the step list of a ``_C.ExecPlan`` (csrc/core/executor.cpp), which runs the whole plan in C++
with the GIL released.

Every op whose computation has a C++ form becomes a native step that calls the same kernel the Python step calls
(conv2d_nhwc, the packed GEMM, the NHWC pools and transposes, pointwise / GELU / SiLU, LayerNorm, softmax, batched
GEMM) or does exact data movement (views as stride changes; copies, cat, roll and broadcast add / mul in
cpu/exec_kernels.cpp), so a native plan computes what the Python executor computes, bit for bit. Anything else is
a Python step: the executor re-acquires the GIL and calls the op's Python closure on numpy wrappers of its inputs.
Which step an op becomes is read from the traits it declares (``capture_role``, ``activation``: _ops/traits.py);
the step and kernel codes come from the C++ enums bound in ``_C`` (``Pointwise``, ``UnaryStep``, ``PoolKind``,
``BinaryOp``).

Memory: outputs of native compute steps go to buffers planned by liveness (``_capture.plan_buffers``, the planner
the Python executor uses for its convolution outputs), allocated once per plan; values the plan returns get per-call
storage owned by the returned numpy arrays.
"""
import numbers

import numpy as np

from . import _C
from . import _capture as CP
from ._ops import kernel_select as _kernel_select, traits as _traits

__all__ = ["build", "NotNative"]


class NotNative(Exception):
    """The plan cannot use the native executor at all (the message says why); the Python executor runs it."""


# activation name -> kernel code of a native unary step, read from the C++ enums
_POINTWISE = {name: int(v) for name, v in _C.Pointwise.__members__.items()}
_UNARY_STEP = {name: int(v) for name, v in _C.UnaryStep.__members__.items()}
# step kinds whose output is a new contiguous array (arena-planned); the view kinds alias their input
_COMPUTE = {"conv", "linear", "transpose", "pool", "binary", "unary", "layer_norm", "softmax", "matmul", "cat", "roll",
            "window", "mean"}
# compute steps whose new output may not be C-contiguous: attention's (.., H, Lq, Dv) view of (.., Lq, H, Dv) memory
_COMPUTE_STRIDED = {"sdpa"}


def _phys_shape(g, s):
    """The shape of slot ``s``'s array: NHWC slots keep their logical NCHW shape in ``g.meta``."""
    shp = tuple(g.meta[s][0])
    if s in g.nhwc:
        n, c, h, w = shp
        return (n, h, w, c)
    return shp


def _fake(shape, strides):
    """An array with this layout over one float (never read): numpy computes view strides for us."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape, [st * 4 for st in strides])


def _elem_strides(a):
    return tuple(st // 4 for st in a.strides)


def _contig(shape):
    st, k = [], 1
    for d in reversed(shape):
        st.append(k)
        k *= d
    return tuple(reversed(st))


def _is_int(i):
    return isinstance(i, (numbers.Integral, np.integer)) and not isinstance(i, (bool, np.bool_))


def _pair(v):
    return [int(v), int(v)] if _is_int(v) else [int(t) for t in v]


def _slice_spec(index, shape):
    """Basic indexing ``x[index]`` as (output dims [(input dim, start, step, length) or (-1, 0, 0, 1) for a new
    axis], fixed [(input dim, index)]); None for anything else (advanced indexing)."""
    idx = list(index)
    if not all(i is None or i is Ellipsis or isinstance(i, slice) or _is_int(i) for i in idx):
        return None
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    ell = [k for k, i in enumerate(idx) if i is Ellipsis]
    if len(ell) > 1 or n_real > len(shape):
        return None
    fill = [slice(None)] * (len(shape) - n_real)
    idx = idx[:ell[0]] + fill + idx[ell[0] + 1:] if ell else idx + fill
    dims, fixed, d = [], [], 0
    for i in idx:
        if i is None:
            dims.append((-1, 0, 0, 1))
            continue
        if isinstance(i, slice):
            start, stop, step = i.indices(shape[d])
            dims.append((d, start, step, len(range(start, stop, step))))
        else:
            j = int(i)
            j = j + shape[d] if j < 0 else j
            if not 0 <= j < shape[d]:
                return None
            fixed.append((d, j))
        d += 1
    return dims, fixed


class _Lowering:
    def __init__(self, g):
        self.g = g
        self.layout = {0: _contig(_phys_shape(g, 0))}  # slot -> element strides when known at build time

    def f32(self, s):
        return self.g.meta[s][1] == np.float32

    def spec(self, op):
        """(kind, params) of the native step for ``op``, or None (a Python step)."""
        g = self.g
        if not all(self.f32(s) for s in op.inputs() + list(op.outs)) or len(op.outs) != 1:
            return None
        y = op.outs[0]
        a = op.attrs
        if op.kind == "conv":
            if not a.get("nhwc"):
                return None
            pk, b32 = CP.conv_nhwc_operands(g, op)
            return "conv", dict(packed=pk, bias=b32, in_shape=list(_phys_shape(g, a["x"])), stride=list(a["stride"]),
                                padding=list(a["padding"]), dilation=list(a["dilation"]), ep=a["ep"],
                                lo=float(a["lo"]), hi=float(a["hi"]))
        if op.kind == "linear":
            if a["w"].dtype != np.float32:
                return None
            b = None if a["b"] is None else np.ascontiguousarray(a["b"], np.float32)
            return "linear", dict(packed=CP.linear_operands(g, op), bias=b, out_shape=list(_phys_shape(g, y)),
                                  ep=a["ep"], lo=float(a["lo"]), hi=float(a["hi"]))
        if op.kind == "call":
            return self.call_spec(op)
        if any(x[0] == "v" and x[2] is not None for x in op.args):
            return None  # an activation cast to another dtype first
        return self.fn_spec(op)

    def call_spec(self, op):
        g, label, prm = self.g, op.attrs["label"], op.attrs.get("params", {})
        x, y = op.attrs["ins"][0], op.outs[0]
        xs = list(_phys_shape(g, x))
        if label in ("to_nhwc", "to_nchw"):
            return ("transpose", dict(to_nhwc=label == "to_nhwc")) if len(xs) == 4 else None
        if label == "nhwc_as_permuted":
            return "reshape", dict(mode=0, out_shape=list(_phys_shape(g, y)))
        if label == "permuted_as_nhwc":
            return "reshape", dict(mode=3, out_shape=list(_phys_shape(g, y)))
        if label in ("max_pool2d_nhwc", "avg_pool2d_nhwc"):
            k, st = list(prm["kernel"]), list(prm["stride"] or [])
            pool = _C.PoolKind.max if label.startswith("max") else _C.PoolKind.avg
            return "pool", dict(pool=int(pool), in_shape=xs, kernel=k, stride=st,
                                padding=list(prm["padding"]), dilation=list(prm.get("dilation", (1, 1))),
                                ceil_mode=bool(prm["ceil_mode"]), count_include_pad=bool(prm.get("count_include_pad", True)),
                                out_shape=list(_phys_shape(g, y)))
        if label == "channel_gate":
            gate = op.attrs["ins"][1]
            if len(xs) != 4 or int(np.prod(_phys_shape(g, gate))) != xs[0] * xs[3]:
                return None
            return "channel_gate", dict(gate_kind=prm["gate_kind"], in_place=bool(prm["in_place"]))
        if label in ("adaptive_avg_pool2d_nhwc", "global_avg_pool_nhwc"):
            o = prm["output_size"]
            o = (o, o) if isinstance(o, int) else tuple(o)
            if len(o) != 2 or not all(_is_int(v) for v in o):
                return None
            return "pool", dict(pool=int(_C.PoolKind.adaptive_avg), in_shape=xs, output_size=list(o),
                                out_shape=list(prm.get("out_shape", _phys_shape(g, y))))
        return None

    def fn_spec(self, op):
        g, args, y = self.g, op.args, op.outs[0]
        role = _traits.role(op.cls)
        ys = list(_phys_shape(g, y))
        acts = [x[1] for x in args if x[0] == "v"]
        if role == "view":
            x = args[0][1]
            lay = self.layout.get(x)
            if lay is not None:
                try:
                    np.reshape(_fake(_phys_shape(g, x), lay), ys, copy=False)
                except ValueError:
                    return "reshape", dict(mode=2, out_shape=ys)  # needs a copy: a compute step
            return "reshape", dict(mode=1, out_shape=ys)
        if role == "permute":
            return "permute", dict(perm=[int(d) for d in args[1][1]])
        if role == "slice":
            sp = _slice_spec(args[1][1], _phys_shape(g, args[0][1]))
            if sp is None or [d[3] for d in sp[0]] != ys:
                return None
            return "slice", dict(dims=[list(d) for d in sp[0]], fixed=[list(f) for f in sp[1]])
        if role == "cat":
            pieces, consts, k = [], [], 0
            for x in args:
                if x[0] == "v":
                    pieces.append(k)
                    k += 1
                elif isinstance(x[1], np.ndarray) and x[1].dtype == np.float32 and x[1].ndim == len(ys):
                    consts.append(np.ascontiguousarray(x[1]))
                    pieces.append(-len(consts))
                else:
                    return None
            return "cat", dict(dim=int(op.kwargs["dim"]) % len(ys), out_shape=ys, pieces=pieces, consts=consts)
        if role == "roll":
            shifts, dims = args[1][1], args[2][1]
            shifts = (shifts,) if _is_int(shifts) else tuple(shifts)
            dims = (dims,) if _is_int(dims) else tuple(dims)
            if len(shifts) != len(dims):
                return None
            total = {}
            for sh, d in zip(shifts, dims):  # numpy adds the shifts of a repeated dim
                d = int(d) % len(ys)
                total[d] = total.get(d, 0) + int(sh)
            return "roll", dict(shifts=list(total.values()), dims=list(total.keys()))
        if role in ("add", "mul") and len(args) == 2 and op.kwargs.get("alpha", 1) == 1 and acts:
            const_pos = -1
            c = None
            for k, x in enumerate(args):
                if x[0] == "c":
                    c = x[1]
                    if not isinstance(c, np.ndarray) or c.dtype != np.float32 or c.ndim > len(ys):
                        return None
                    const_pos, c = k, np.ascontiguousarray(c)
            op_kind = _C.BinaryOp.add if role == "add" else _C.BinaryOp.mul
            return "binary", dict(op=int(op_kind), const_pos=const_pos, const=c, out_shape=ys)
        unary = self.unary_kind(op)
        if unary is not None:
            return "unary", dict(unary=unary[0], lo=unary[1], hi=unary[2])
        if role == "layer_norm":
            w, b, nshape, eps = (x[1] for x in args[1:5])
            if any(x[0] == "v" for x in args[1:]):
                return None
            n = int(np.prod(nshape)) if nshape else 1
            if tuple(ys[len(ys) - len(nshape):]) != tuple(nshape):
                return None
            w = None if w is None else np.ascontiguousarray(np.asarray(w).reshape(-1), np.float32)
            b = None if b is None else np.ascontiguousarray(np.asarray(b).reshape(-1), np.float32)
            return "layer_norm", dict(n=n, eps=float(eps), weight=w, bias=b)
        if role == "softmax":
            dim, log = args[1][1], args[2][1]
            if len(ys) == 0 or int(dim) % len(ys) != len(ys) - 1:
                return None  # the Python step moves the axis first
            return "softmax", dict(log=bool(log))
        if role == "mean" and args[1][1] and len(args) == 3:
            x = args[0][1]
            xs = _phys_shape(g, x)
            dims = sorted({int(d) % len(xs) for d in args[1][1]})
            # numpy sums a C-contiguous array off its last axis element by element (see MeanStep); on the last
            # axis it sums pairwise, and a non-contiguous input is walked in its own memory order: Python step
            if dims[-1] == len(xs) - 1 or self.layout.get(x) != _contig(xs) or 0 in xs:
                return None
            return "mean", dict(reduced=[d in dims for d in range(len(xs))], out_shape=ys)
        native = self.attention_or_window(op, role, ys)
        if native is not None:
            return native
        if role == "matmul" and len(acts) == 2 and len(args) == 2:
            if min(len(_phys_shape(g, s)) for s in acts) < 2:
                return None
            return "matmul", {}
        return None

    def attention_or_window(self, op, role, ys):
        """The fused attention (_ops/attention.py) and Swin window (_ops/window.py) ops."""
        g, args = self.g, op.args
        if role == "sdpa" and hasattr(_C, "sdpa"):
            from ._ops import attention as A
            if len(args) < 3 or any(x[0] != "v" for x in args[:3]) or (len(args) > 3 and args[3][0] == "v"):
                return None
            extra = [x[1] for x in args[4:]]
            mask = args[3][1] if len(args) > 3 else None
            scale = extra[0] if extra else op.kwargs.get("scale")
            causal = extra[1] if len(extra) > 1 else op.kwargs.get("is_causal", False)
            qs = _phys_shape(g, args[0][1])
            if not all(2 <= len(_phys_shape(g, x[1])) <= 6 for x in args[:3]):
                return None
            scale = 1.0 / np.sqrt(qs[-1]) if scale is None else float(scale)
            m = None if mask is None else np.ascontiguousarray(A.float_mask(np.asarray(mask)))
            if m is not None and (m.ndim < 2 or m.ndim > 6 or causal):
                return None
            return "sdpa", dict(scale=float(scale), causal=bool(causal), mask=m)
        if role == "window_partition":
            x = args[0][1]
            xs = _phys_shape(g, x)
            if len(xs) != 4 or any(a[0] == "v" for a in args[1:]):
                return None
            ws, sh = args[1][1], args[2][1]
            return "window", dict(reverse=False, map_shape=list(xs), window_size=_pair(ws), shift=_pair(sh),
                                  out_shape=ys)
        if role == "window_reverse":
            if len(args) != 5 or any(a[0] == "v" for a in args[2:]) or len(ys) != 4:
                return None
            ws, sh = args[2][1], args[3][1]
            return "window", dict(reverse=True, map_shape=ys, window_size=_pair(ws), shift=_pair(sh), out_shape=ys)
        return None

    def unary_kind(self, op):
        """(kernel kind, lo, hi) of a native unary step for an op declaring an activation the C++ kernels run
        (a ``_C.Pointwise`` or ``_C.UnaryStep`` kind), or None."""
        if len(op.inputs()) != 1 or op.args[0][0] != "v":
            return None
        act = CP.activation(op)
        if act is None:
            return None
        kind, lo, hi = act
        if kind == "relu6":
            kind, lo, hi = "clamp", 0.0, 6.0
        code = _POINTWISE.get(kind, _UNARY_STEP.get(kind))
        return None if code is None else (code, float(lo), float(hi))

    def track_layout(self, op, kind, params):
        """The output's strides when the build can know them (a compute step: contiguous; a view of a known
        layout: numpy's view of a fake array), else nothing (a Python step's result: unknown)."""
        g, y = self.g, op.outs[0] if op.outs else None
        if kind is None or y is None:
            return
        ys = _phys_shape(g, y)
        if kind in _COMPUTE or (kind == "reshape" and params["mode"] == 2) or kind == "channel_gate":
            self.layout[y] = _contig(ys)  # a channel_gate in place writes into its convolution's output
            return
        if kind == "sdpa":
            if len(ys) > 3:  # memory (batch[:-1], Lq, batch[-1], Dv) (>= 2 batch dims, as _ops/attention.py)
                mem = _contig(tuple(ys[:-3]) + (ys[-2], ys[-3], ys[-1]))
                self.layout[y] = tuple(mem[:-3]) + (mem[-2], mem[-3], mem[-1])
            else:
                self.layout[y] = _contig(ys)
            return
        lay = self.layout.get(op.inputs()[0])
        if lay is None:
            return
        x = _fake(_phys_shape(g, op.inputs()[0]), lay)
        try:
            if kind == "reshape":
                mode = params["mode"]
                v = x if mode == 0 else (np.ascontiguousarray(x) if mode == 3 else np.reshape(x, ys, copy=False))
                if mode == 3 and not x.flags.c_contiguous:
                    return  # copied per call: contiguous, but unknown to the planner (it is an alias class)
            elif kind == "permute":
                v = np.transpose(x, params["perm"])
            elif kind == "slice":
                v = x[op.args[1][1] + (Ellipsis,)] if not any(i is Ellipsis for i in op.args[1][1]) \
                    else x[op.args[1][1]]
            else:
                return
        except (ValueError, IndexError, TypeError):
            return
        if tuple(v.shape) == tuple(ys):
            self.layout[y] = _elem_strides(v)


def _pw_dw_pairs(g, specs, last, outputs):
    """{i: i + 1} for each native 1x1 expansion (ungrouped, unit stride, unpadded, no residual) at op i whose output
    is read only by the depthwise conv at op i + 1 (no residual): the pairs one conv_pw_dw step runs."""
    pairs = {}
    for i in range(len(g.ops) - 1):
        (k1, p1), (k2, p2) = specs[i], specs[i + 1]
        if k1 != "conv" or k2 != "conv":
            continue
        pw, dw, a, b = p1["packed"], p2["packed"], g.ops[i], g.ops[i + 1]
        mid = a.outs[0]
        if (pw.KH == 1 and pw.KW == 1 and pw.groups == 1 and list(p1["stride"]) == [1, 1]
                and list(p1["padding"]) == [0, 0] and len(a.inputs()) == 1
                and dw.groups == dw.C == dw.O == pw.O and b.inputs() == [mid]
                and last.get(mid) == i + 1 and mid not in outputs):
            pairs[i] = i + 1
    return pairs


def _pw_dw_params(pw, dw):
    """The conv_pw_dw step's params from the two conv steps' (the depthwise conv's, plus the expansion's as pw_*)."""
    return dict(dw, pw_packed=pw["packed"], pw_bias=pw["bias"], pw_ep=pw["ep"], pw_lo=pw["lo"], pw_hi=pw["hi"],
                in_shape=pw["in_shape"])


def build(g):
    """The ``_C.ExecPlan`` of a captured graph, per step ((label, native, buffer), (ins, outs)), and the arena's
    buffer sizes (floats)."""
    if not hasattr(_C, "ExecPlan"):
        raise NotNative("this build of flowvision's C++ extension has no ExecPlan")
    if g.meta[0][1] != np.float32:
        raise NotNative(f"the native executor runs float32 plans (this one is {np.dtype(g.meta[0][1]).name})")
    low = _Lowering(g)
    outputs = CP._output_slots(g)
    last, drop_after = CP.last_reads(g)
    specs = []
    for op in g.ops:
        sp = low.spec(op)
        kind, params = sp if sp is not None else (None, None)
        low.track_layout(op, kind, params)
        specs.append((kind, params))
    fused = _pw_dw_pairs(g, specs, last, outputs) if _kernel_select.fuse_pw_dw() else {}
    for i, j in fused.items():  # the fused step reads the expansion's input: keep its buffer until then
        for s in g.ops[i].inputs():
            last[s] = max(last[s], j)
    fresh, sizes = set(), {}
    for i, (op, (kind, params)) in enumerate(zip(g.ops, specs)):
        if i in fused:  # the expansion of a conv_pw_dw step: its output never exists
            fresh.add(id(op))
        elif kind in _COMPUTE or kind in _COMPUTE_STRIDED or (kind == "reshape" and params["mode"] == 2) or (
                kind == "channel_gate" and not params["in_place"]):
            fresh.add(id(op))
            sizes[id(op)] = int(np.prod(_phys_shape(g, op.outs[0])))
        elif kind is None and (op.kind in ("conv", "linear") or (op.kind == "fn" and _traits.is_elementwise(op.cls))):
            fresh.add(id(op))  # a Python step returning a new array
    assigned, buf_sizes = CP.plan_buffers(g, last, outputs, sizes, fresh)
    out_slots = [o[1] for o in g.outputs if o[0] == "v"]
    plan = _C.ExecPlan(len(g.meta), list(_phys_shape(g, 0)), out_slots, buf_sizes)
    io = []
    expansion = {j: i for i, j in fused.items()}
    for i, (op, (kind, params)) in enumerate(zip(g.ops, specs)):
        if i in fused:
            continue
        label, ins, drop = op.name(), list(op.inputs()), list(drop_after[i])
        if i in expansion:
            pw_op = g.ops[expansion[i]]
            label, ins = f"{pw_op.name()}+{label}", list(pw_op.inputs())
            drop = [s for s in drop_after[expansion[i]] + drop if s != pw_op.outs[0]]
            kind, params = "conv_pw_dw", _pw_dw_params(specs[expansion[i]][1], params)
        spec = dict(label=label, ins=ins, outs=list(op.outs), drop=drop,
                    buf=assigned.get(op.outs[0], -1) if op.outs else -1)
        if kind is None:
            spec["fn"] = CP.lower_python_step(g, op)
            plan.add_step("python", spec)
        else:
            spec.update(params)
            plan.add_step(kind, spec)
        io.append((tuple(ins), tuple(op.outs)))
    return plan, list(zip(plan.steps(), io)), buf_sizes
