"""Layout pass of ``flowvision.backend.compile``: activations kept NHWC between convolutions (``_C.conv2d_nhwc``),
with transposes only where an op needs the NCHW layout, and the channels-last residual / channel-gate fusions.
"""
import numpy as np

from . import _C
from ._capture_fuse import _conv_algo, _nhwc_kernels, _output_slots, _role, _uses, activation
from ._capture_trace import _Op
from ._ops import traits as _traits


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
            if _conv_algo(g, op) in ("nhwc_direct", "winograd") and float32_4d(a["x"]):
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
