"""Lowering stage of ``flowvision.backend.compile``: the optimised graph becomes a flat list of pre-bound steps over
value slots (each slot dropped after its last read, conv outputs written into an arena planned by liveness), run from a
Python loop or handed to the native executor (``_capture_native``).
"""
import hashlib

import numpy as np

from . import _C, _kernels
from ._capture_fuse import _conv_algo, _output_slots, eliminate_dead_code, fuse
from ._capture_layout import to_nhwc
from ._ops import traits as _traits
from .autograd.graph import Context


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


def conv_nhwc_operands(g, op):
    """(packed weight, float32 bias or None) of an NHWC convolution (shared by both executors)."""
    a = op.attrs
    w, b = a["w"], a["b"]
    src = None if a["w_folded"] else g.const_src.get(id(w))
    if _conv_algo(g, op) == "winograd":  # the plan's own copy: eager's packed weights have no Winograd transform
        w32 = np.ascontiguousarray(w, np.float32)
        pk = _shared_pack(g, ("winograd", a["groups"]), w32, lambda: _C.pack_conv(w32, a["groups"], winograd=True))
    elif src is not None and src._data is w:  # unmodified weight: share eager's packed copy (one in memory)
        pk = _kernels.packed_conv(src, a["groups"])
    else:
        w32 = np.ascontiguousarray(w, np.float32)
        pk = _shared_pack(g, ("conv", a["groups"]), w32, lambda: _C.pack_conv(w32, a["groups"]))
    return pk, None if b is None else np.ascontiguousarray(b, np.float32)


def linear_operands(g, op):
    """The packed (K, N) weight of a fused linear op (shared by both executors)."""
    w = op.attrs["w"]
    src = None if op.attrs["w_folded"] else g.const_src.get(id(w))
    if (src is not None and src.ndim == 2 and tuple(src.shape) == w.shape[::-1] and src._data.dtype == w.dtype
            and np.shares_memory(src._data, w) and w.strides == src._data.strides[::-1]):
        return _kernels.packed_weight(src, "linear")  # w is t(weight): share eager's packed copy
    wc = np.ascontiguousarray(w)
    return _shared_pack(g, ("linear",), wc, lambda: _C.pack_b(wc, False))


def _shared_pack(g, kind, w, make):
    """``make()``'s packed copy of ``w``, shared by the plans of one compiled module (``g.pack_cache``, keyed by
    the packing and ``w``'s content): plans for other input shapes fold the same weights and reuse the packs."""
    cache = getattr(g, "pack_cache", None)
    if cache is None:
        return make()
    key = kind + (w.shape, w.dtype.str, hashlib.blake2b(w, digest_size=16).digest())
    pk = cache.get(key)
    if pk is None:
        pk = cache[key] = make()
    return pk


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

    def run(x, res=None):  # this kernel has no epilogue: the fused kernels' one, applied in place
        y = _C.conv2d_forward(np.ascontiguousarray(x), w, b, stride, padding, dilation, groups)
        if res is not None:
            np.add(y, res, out=y)
        if ep != "none":
            _C.epilogue_inplace(y, ep, lo, hi)
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
        # convs taking Winograd (compile rebuilds the plan without it when it fails validation)
        self.winograd_convs = sum(1 for op in g.ops if op.kind == "conv" and op.attrs.get("nhwc")
                                  and _conv_algo(g, op) == "winograd")
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
                    for s in outs:  # a copy: a later in-place step (ReLU(inplace=True)) may reuse the array
                        kept[s] = np.array(slots[s], copy=True)
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
