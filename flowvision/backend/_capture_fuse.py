"""Graph passes of ``flowvision.backend.compile``: dead-code elimination and the fusion of convolution / linear with
their bias, per-channel scale (BatchNorm), residual add and activation into one node.

The passes never test op classes: they read the traits each op declares (``_ops/traits.py``).
"""
import numpy as np

from . import _C
from ._capture_trace import _Op
from ._ops import kernel_select as _select, traits as _traits


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


def _conv_algo(g, op):
    """The shared selector's algorithm for fused conv ``op`` in a plan (activations may stay NHWC)."""
    a = op.attrs
    return _select.conv_algorithm(g.meta[a["x"]][0], a["w"].shape, a["padding"], a["groups"], a["w"].dtype,
                                  nhwc_activations=True, stride=a["stride"], dilation=a["dilation"])


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
        if other[0] == "v" and role == "add" and clean and other[2] is None and g.meta[other[1]] == g.meta[v]:
            a["res"] = other[1]
            return True
        return False
    ep = _act_epilogue(c)
    if ep is not None and a["ep"] == "none" and c.args[0] == ("v", v, None):
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
