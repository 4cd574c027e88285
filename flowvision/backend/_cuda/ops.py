"""CUDA twins of the tensor ops in flowvision/backend/_ops (elementwise, shape, reduce, linalg)."""
import numpy as np

from .._ops import elementwise as E, shape as S, reduce as R, linalg as L
from . import arrays as A
from .dispatch import register
from .runtime import C, is_device_array

# ------------------------------------------------------------------------------- casts and binary ops


@register(E.Cast)
class Cast:
    @staticmethod
    def forward(ctx, x):
        return A.copy(x)  # dispatch already cast x to the target dtype

    @staticmethod
    def backward(ctx, g):
        return (g,)


def _shape(a):
    return A.shape_of(a)


def _add_sub_twin(op, sign):
    """a + alpha * b (sign 1) or a - alpha * b (sign -1): the gradient of b is sign * alpha * g."""
    class AddSub:
        @staticmethod
        def forward(ctx, a, b, alpha=1):
            ctx.shapes = (_shape(a), _shape(b))
            ctx.scale = sign * float(alpha)
            return A.bop(op, a, b, alpha)

        @staticmethod
        def backward(ctx, g):
            sa, sb = ctx.shapes
            need = ctx.needs_input_grad
            gb = g if ctx.scale == 1 else A.bop("mul", g, ctx.scale)
            return (A.unbroadcast(g, sa) if need[0] else None), (A.unbroadcast(gb, sb) if need[1] else None)

    AddSub.__name__ = op.capitalize()
    return AddSub


Add = register(E.Add)(_add_sub_twin("add", 1))
Sub = register(E.Sub)(_add_sub_twin("sub", -1))


@register(E.Mul)
class Mul:
    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        ctx.shapes = (_shape(a), _shape(b))
        if is_device_array(a) and a.dtype == "bool" and is_device_array(b):
            return A.bop("logical_and", a, b)
        return A.bop("mul", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        sa, sb = ctx.shapes
        need = ctx.needs_input_grad
        return ((A.unbroadcast(A.bop("mul", g, b), sa) if need[0] else None),
                (A.unbroadcast(A.bop("mul", g, a), sb) if need[1] else None))


@register(E.Div)
class Div:
    @staticmethod
    def forward(ctx, a, b, rounding_mode=None):
        ctx.save_for_backward(a, b)
        ctx.shapes = (_shape(a), _shape(b))
        ctx.mode = rounding_mode
        q = A.bop("div", a, b) if rounding_mode != "floor" else A.bop("floor_divide", a, b)
        if rounding_mode == "trunc":
            q = A.uop("trunc", q)
        return q

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        sa, sb = ctx.shapes
        need = ctx.needs_input_grad
        if ctx.mode is not None:
            return (A.zeros(sa, g.dtype) if need[0] else None), (A.zeros(sb, g.dtype) if need[1] else None)
        ga = A.unbroadcast(A.bop("div", g, b), sa) if need[0] else None
        gb = None
        if need[1]:  # -g * a / b^2
            gb = A.unbroadcast(A.bop("mul", A.bop("div", A.bop("div", g, b), b), a), sb)
            gb = A.uop("neg", gb)
        return ga, gb


@register(E.Pow)
class Pow:
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (_shape(a), _shape(b))
        if is_device_array(a) and not is_device_array(b) and a.dtype in ("float32", "float16", "bfloat16"):
            out = A.uop("pow_scalar", a, float(b))
        else:
            out = A.bop("pow", a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved
        sa, sb = ctx.shapes
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            if not is_device_array(b):
                ga = A.ubwd("pow_scalar", g, a, None, float(b))
            else:  # g * b * a^(b-1)
                ga = A.bop("mul", A.bop("mul", g, b), A.bop("pow", a, A.bop("sub", b, 1.0)))
            ga = A.unbroadcast(ga, sa)
        if need[1]:  # g * out * log(a)
            la = A.uop("log", a) if is_device_array(a) else float(np.log(a))
            gb = A.unbroadcast(A.bop("mul", A.bop("mul", g, out), la), sb)
        return ga, gb


@register(E.Maximum)
class Maximum:
    @staticmethod
    def forward(ctx, a, b, minimum=False):
        ctx.save_for_backward(a, b)
        ctx.minimum = minimum
        ctx.shapes = (_shape(a), _shape(b))
        return A.bop("minimum" if minimum else "maximum", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        sa, sb = ctx.shapes
        dt = g.dtype
        win_a = C().cast(A.bop("lt" if ctx.minimum else "gt", a, b), dt)
        tie = A.bop("mul", C().cast(A.bop("eq", a, b), dt), 0.5)
        wa = A.bop("add", win_a, tie)
        wb = A.bop("sub", 1.0, wa) if True else None
        return A.unbroadcast(A.bop("mul", g, wa), sa), A.unbroadcast(A.bop("mul", g, wb), sb)


@register(E.WhereOp)
class WhereOp:
    @staticmethod
    def forward(ctx, a, b, cond):
        cond = A.ensure(cond, "bool")
        ctx.cond = cond
        ctx.shapes = (_shape(a), _shape(b))
        dt = a.dtype if is_device_array(a) else b.dtype
        return C().where(cond, A.ensure(a, dt), A.ensure(b, dt))

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        z = A.zeros([], g.dtype)
        return (A.unbroadcast(C().where(ctx.cond, g, z), sa), A.unbroadcast(C().where(ctx.cond, z, g), sb))


@register(E.MaskedFill)
class MaskedFill:
    @staticmethod
    def forward(ctx, x, value, mask):
        mask = A.ensure(mask, "bool")
        ctx.mask = mask
        ctx.vshape = _shape(value)
        return C().where(mask, A.ensure(value, x.dtype), x)

    @staticmethod
    def backward(ctx, g):
        z = A.zeros([], g.dtype)
        gx = A.unbroadcast(C().where(ctx.mask, z, g), tuple(g.shape))
        gv = None
        if ctx.needs_input_grad[1]:
            gv = A.reshape(A.reduce_dims("sum", C().where(ctx.mask, g, z), range(len(g.shape)))[0], ctx.vshape)
        return gx, gv


@register(E.Clamp)
class Clamp:
    @staticmethod
    def forward(ctx, x, lo, hi, scalar_bounds=(False, False)):
        if is_device_array(lo) or is_device_array(hi):
            raise NotImplementedError("clamp with tensor bounds is not implemented for CUDA tensors yet")
        ctx.save_for_backward(x)
        ctx.bounds = (-np.inf if lo is None else float(lo), np.inf if hi is None else float(hi))
        return A.uop("clamp", x, *ctx.bounds)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        # Python-scalar bounds pass the gradient strictly inside, like the CPU op (torch's rule)
        return A.ubwd("hardtanh", g, x, None, *ctx.bounds), None, None


def _compare_twin(op):
    class Compare:
        @staticmethod
        def forward(ctx, a, b):
            return A.bop(op, a, b)

        @staticmethod
        def backward(ctx, g):
            return None, None

    Compare.__name__ = op
    return Compare


for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    register(_op)(_compare_twin(_op))


# ------------------------------------------------------------------------------- unary math
_UNARY = {"Neg": "neg", "Abs": "abs", "Exp": "exp", "Log": "log", "Log2": "log2", "Log1p": "log1p", "Expm1": "expm1",
          "Sqrt": "sqrt", "Rsqrt": "rsqrt", "Sin": "sin", "Cos": "cos", "Tanh": "tanh", "Sigmoid": "sigmoid",
          "Erf": "erf", "Reciprocal": "reciprocal", "Square": "square", "Floor": "floor", "Ceil": "ceil",
          "Trunc": "trunc", "Round": "round", "Sign": "sign"}
# gradients written in terms of the output (the CPU ops save y for these)
_SAVES_Y = {"exp", "expm1", "sqrt", "rsqrt", "tanh", "sigmoid", "reciprocal"}


def _unary_twin(op):
    class Unary:
        @staticmethod
        def forward(ctx, x):
            y = A.uop(op, x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved
            return (A.ubwd(op, g, x, y),)

    Unary.__name__ = op
    return Unary


for _name, _op in _UNARY.items():
    register(_name)(_unary_twin(_op))


# ------------------------------------------------------------------------------- shape ops
@register(S.View)
class View:
    @staticmethod
    def forward(ctx, x, shape, strict=True):
        ctx.in_shape = list(x.shape)
        return A.reshape(x, shape)  # device arrays are dense: reshape is always a view

    @staticmethod
    def backward(ctx, g):
        return (C().reshape(g, ctx.in_shape),)


@register(S.Permute)
class Permute:
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = [d % max(len(x.shape), 1) for d in dims]
        return A.permute(x, ctx.dims)

    @staticmethod
    def backward(ctx, g):
        inv = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inv[d] = i
        return (A.permute(g, inv),)


@register(S.Expand)
class Expand:
    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = tuple(x.shape)
        shape = [x.shape[i - (len(shape) - len(x.shape))] if s == -1 else s for i, s in enumerate(shape)]
        return A.expand(x, shape)

    @staticmethod
    def backward(ctx, g):
        return (A.unbroadcast(g, ctx.in_shape),)


@register(S.Contiguous)
class Contiguous:
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return (g,)


@register(S.Clone)
class Clone:
    @staticmethod
    def forward(ctx, x):
        return A.copy(x)

    @staticmethod
    def backward(ctx, g):
        return (g,)


def _basic_index(index):
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) and not isinstance(i, bool)
               for i in index)


@register(S.Slice)
class Slice:
    @staticmethod
    def forward(ctx, x, index):
        if not _basic_index(index):
            raise NotImplementedError("this indexing form is not implemented for CUDA tensors yet")
        full = index if any(i is Ellipsis for i in index) else index + (Ellipsis,)
        ctx.in_shape, ctx.index = list(x.shape), full
        return A.take_view(x, lambda a: a[full])

    @staticmethod
    def backward(ctx, g):
        return (A.put_view(g, ctx.in_shape, lambda a: a[ctx.index], g.dtype),)


@register(S.Flip)
class Flip:
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return A.take_view(x, lambda a: np.flip(a, dims))

    @staticmethod
    def backward(ctx, g):
        return (A.take_view(g, lambda a: np.flip(a, ctx.dims)),)


@register(S.Cat)
class Cat:
    @staticmethod
    def forward(ctx, *xs, dim):
        xs = [x for x in xs if x is not None]
        nd = len(xs[0].shape)
        dim = dim % nd
        dt = xs[0].dtype
        xs = [x if x.dtype == dt else C().cast(x, dt) for x in xs]
        sizes = [x.shape[dim] for x in xs]
        shape = list(xs[0].shape)
        shape[dim] = sum(sizes)
        out = A.zeros(shape, dt)
        start = 0
        for x, n in zip(xs, sizes):
            if n:
                sl = (slice(None),) * dim + (slice(start, start + n),)
                A.put_view(x, shape, lambda a, sl=sl: a[sl], dt, base=out)
            start += n
        ctx.dim, ctx.sizes = dim, sizes
        return out

    @staticmethod
    def backward(ctx, g):
        out, start = [], 0
        for n in ctx.sizes:
            sl = (slice(None),) * ctx.dim + (slice(start, start + n),)
            out.append(A.take_view(g, lambda a, sl=sl: a[sl]))
            start += n
        return tuple(out)


def _roll(x, shifts, dims):
    for s, d in zip(shifts, dims):
        n = x.shape[d]
        s = s % n if n else 0
        if not s:
            continue
        pre = (slice(None),) * d
        tail = A.take_view(x, lambda a: a[pre + (slice(n - s, n),)])
        head = A.take_view(x, lambda a: a[pre + (slice(0, n - s),)])
        x = Cat.forward(type("Ctx", (), {})(), tail, head, dim=d)
    return x


@register(S.Roll)
class Roll:
    @staticmethod
    def forward(ctx, x, shifts, dims):
        shifts = shifts if isinstance(shifts, tuple) else (shifts,)
        dims = dims if isinstance(dims, tuple) else (dims,)
        ctx.args = (shifts, dims)
        return _roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, g):
        shifts, dims = ctx.args
        return (_roll(g, tuple(-s for s in shifts), dims),)


@register(S.Pad)
class Pad:
    @staticmethod
    def forward(ctx, x, pads, value):
        ctx.pads, ctx.in_shape = pads, list(x.shape)
        crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
        inner = A.take_view(x, lambda a: a[crop]) if any(b < 0 or a < 0 for b, a in pads) else x
        shape = [s + max(b, 0) + max(a, 0) for s, (b, a) in zip(inner.shape, pads)]
        out = C().full(shape, float(value or 0), x.dtype)
        place = tuple(slice(max(b, 0), max(b, 0) + s) for s, (b, _) in zip(inner.shape, pads))
        return A.put_view(inner, shape, lambda a: a[place], x.dtype, base=out)

    @staticmethod
    def backward(ctx, g):
        pads = ctx.pads
        sl = tuple(slice(max(b, 0), g.shape[i] - max(a, 0)) for i, (b, a) in enumerate(pads))
        inner = A.take_view(g, lambda a: a[sl])
        if not any(b < 0 or a < 0 for b, a in pads):
            return (inner,)
        crop = tuple(slice(max(-b, 0), ctx.in_shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
        return (A.put_view(inner, ctx.in_shape, lambda a: a[crop], g.dtype),)


def _single_index(index):
    """The integer index array of x[idx] / x[idx, :, ...] (dim 0), else None."""
    if is_device_array(index) or isinstance(index, np.ndarray):
        return index
    if isinstance(index, tuple) and index and (is_device_array(index[0]) or isinstance(index[0], np.ndarray)) and \
            all(isinstance(i, slice) and i == slice(None) for i in index[1:]):
        return index[0]
    return None


def _gather0(x, idx):
    idx = A.ensure(idx, "int64")
    flat = C().reshape(idx, [idx.size])
    y = C().index_select(x, 0, flat)
    return C().reshape(y, list(idx.shape) + list(x.shape[1:])), flat


@register(S.AdvancedIndex)
class AdvancedIndex:
    @staticmethod
    def forward(ctx, x, index):
        idx = _single_index(index)
        if idx is None or (getattr(idx, "dtype", None) in ("bool", np.bool_)):
            raise NotImplementedError("CUDA tensors support integer-array indexing on the first dim only so far")
        y, flat = _gather0(x, idx)
        ctx.in_shape, ctx.flat = list(x.shape), flat
        return y

    @staticmethod
    def backward(ctx, g):
        g32 = g if g.dtype == "float32" else C().cast(g, "float32")
        g2 = C().reshape(g32, [ctx.flat.size] + ctx.in_shape[1:])
        return (C().index_add(ctx.in_shape, 0, ctx.flat, g2),)


@register(S.IndexSelect)
class IndexSelect:
    @staticmethod
    def forward(ctx, x, dim, index):
        idx = A.ensure(index, "int64")
        dim = dim % len(x.shape)
        ctx.args = (list(x.shape), dim, idx)
        return C().index_select(x, dim, C().reshape(idx, [idx.size]))

    @staticmethod
    def backward(ctx, g):
        shape, dim, idx = ctx.args
        g32 = g if g.dtype == "float32" else C().cast(g, "float32")
        return C().index_add(shape, dim, C().reshape(idx, [idx.size]), g32), None, None


# ------------------------------------------------------------------------------- reductions
def _dims(x, dims):
    nd = len(x.shape)
    if dims is None:
        return list(range(nd))
    if isinstance(dims, int):
        dims = (dims,)
    return [d % max(nd, 1) for d in dims]


def _keep(y, shape, dims, keepdim):
    if not keepdim:
        return y
    return C().reshape(y, [1 if i in dims else s for i, s in enumerate(shape)])


def _expand_back(g, shape, dims, keepdim):
    kshape = [1 if i in dims else s for i, s in enumerate(shape)]
    return A.expand(C().reshape(g, kshape), shape)


class _SumLike:
    op = "sum"

    @classmethod
    def forward(cls, ctx, x, dims, keepdim):
        d = _dims(x, dims)
        if x.dtype in ("bool", "uint8", "int8", "int16", "int32"):
            x = C().cast(x, "int64")  # torch sums integers in int64
        ctx.args = (list(x.shape), d, keepdim)
        y, _ = A.reduce_dims(cls.op, x, d)
        return _keep(y, x.shape, d, keepdim)

    @classmethod
    def backward(cls, ctx, g):
        shape, d, keepdim = ctx.args
        gx = _expand_back(g, shape, d, keepdim)
        if cls.op == "mean":
            gx = A.bop("mul", gx, 1.0 / max(A.prod(shape[i] for i in d), 1))
        return gx, None, None


@register(R.Sum)
class Sum(_SumLike):
    op = "sum"


@register(R.Mean)
class Mean(_SumLike):
    op = "mean"


@register(R.ExtremeDim)
class ExtremeDim:
    @staticmethod
    def forward(ctx, x, dim, keepdim, is_max):
        dim = dim % len(x.shape)
        shape = list(x.shape)
        outer, r, inner = A.prod(shape[:dim]), shape[dim], A.prod(shape[dim + 1:])
        vals, idx = C().reduce(C().REDUCE_OPS["argmax" if is_max else "argmin"], x, outer, r, inner)
        kshape = shape[:dim] + shape[dim + 1:]
        vals, idx = C().reshape(vals, kshape), C().reshape(idx, kshape)
        ctx.args = (shape, dim, keepdim, idx)
        return _keep(vals, shape, [dim], keepdim), _keep(idx, shape, [dim], keepdim)

    @staticmethod
    def backward(ctx, g, _gi=None):
        shape, dim, keepdim, idx = ctx.args
        r = shape[dim]
        ar = C().from_host(np.arange(r, dtype=np.int64), "int64")
        ar = C().reshape(ar, [r if i == dim else 1 for i in range(len(shape))])
        kshape = [1 if i == dim else s for i, s in enumerate(shape)]
        mask = A.bop("eq", ar, C().reshape(idx, kshape))  # (.., r, ..): the argmax position
        gk = C().reshape(g, kshape)
        return C().where(mask, gk, A.zeros([], g.dtype)), None, None, None


@register(R.ExtremeAll)
class ExtremeAll:
    @staticmethod
    def forward(ctx, x, dims, keepdim, is_max):
        d = _dims(x, dims)
        y, _ = A.reduce_dims("max" if is_max else "min", x, d)
        ctx.save_for_backward(x)
        ctx.args = (list(x.shape), d, keepdim, y)
        return _keep(y, x.shape, d, keepdim)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        shape, d, keepdim, y = ctx.args
        # torch: the gradient is split evenly between tied extremes
        mask = C().cast(A.bop("eq", x, _expand_back(y, shape, d, False)), g.dtype)
        cnt, _ = A.reduce_dims("sum", mask, d)
        share = A.bop("div", g if keepdim else g, C().reshape(cnt, list(g.shape)) if keepdim else cnt)
        return A.bop("mul", mask, _expand_back(share, shape, d, keepdim)), None, None, None


@register(R.Norm)
class Norm:
    """p = 1 and p = 2 vector norms (F.normalize, cosine attention); other orders raise."""

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        if p not in (1.0, 2.0):
            raise NotImplementedError(f"norm(p={p}) is not implemented for CUDA tensors yet (p=1 and p=2 are)")
        d = _dims(x, dims)
        if p == 2.0:
            y = A.uop("sqrt", A.reduce_dims("sumsq", x, d)[0])
        else:
            y = A.reduce_dims("sum", A.uop("abs", x), d)[0]
        ctx.save_for_backward(x, y)
        ctx.args = (p, list(x.shape), d, keepdim)
        return _keep(y, x.shape, d, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved
        p, shape, d, keepdim = ctx.args
        gg = _expand_back(g, shape, d, keepdim)
        if p == 1.0:
            return A.bop("mul", A.uop("sign", x), gg), None, None, None
        o = _expand_back(y, shape, d, False)
        r = A.bop("div", A.bop("mul", x, gg), o)
        return C().where(A.bop("eq", o, 0.0), A.zeros([], r.dtype), r), None, None, None


# ------------------------------------------------------------------------------- matmul
def _allow_tf32():
    from .. import cuda
    return bool(cuda.allow_tf32)


def _bmm(a, b, trans_a=False, trans_b=False):
    """Batched a @ b with numpy batch broadcasting (the broadcast operand is materialised only when both
    sides carry batch dims that differ)."""
    ba, bb = list(a.shape[:-2]), list(b.shape[:-2])
    if ba != bb and ba and bb:
        batch = list(np.broadcast_shapes(tuple(ba), tuple(bb)))
        if ba != batch:
            a = A.expand(a, batch + list(a.shape[-2:]))
        if bb != batch:
            b = A.expand(b, batch + list(b.shape[-2:]))
    return C().matmul(a, b, None, trans_a, trans_b, 1.0, _allow_tf32())


@register(L.Matmul)
class Matmul:
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        a2 = C().reshape(a, [1, a.shape[0]]) if len(a.shape) == 1 else a
        b2 = C().reshape(b, [b.shape[0], 1]) if len(b.shape) == 1 else b
        if len(b2.shape) == 2 and len(a2.shape) > 2:  # (..., M, K) @ (K, N): one GEMM over all rows
            m = A.prod(a2.shape[:-1])
            out = C().matmul(C().reshape(a2, [m, a2.shape[-1]]), b2, None, False, False, 1.0, _allow_tf32())
            out = C().reshape(out, list(a2.shape[:-1]) + [b2.shape[-1]])
        else:
            out = _bmm(a2, b2)
        shape = list(out.shape)
        if len(a.shape) == 1:
            shape.pop(-2)
        if len(b.shape) == 1:
            shape.pop(-1)
        return C().reshape(out, shape)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        a2 = C().reshape(a, [1, a.shape[0]]) if len(a.shape) == 1 else a
        b2 = C().reshape(b, [b.shape[0], 1]) if len(b.shape) == 1 else b
        batch = list(np.broadcast_shapes(tuple(a2.shape[:-2]), tuple(b2.shape[:-2])))
        g2 = C().reshape(g, batch + [a2.shape[-2], b2.shape[-1]])
        need = ctx.needs_input_grad
        ga = gb = None
        if len(b2.shape) == 2 and len(a2.shape) > 2:
            m = A.prod(a2.shape[:-1])
            gm = C().reshape(g2, [m, b2.shape[-1]])
            if need[0]:
                ga = C().reshape(C().matmul(gm, b2, None, False, True, 1.0, _allow_tf32()), list(a2.shape))
            if need[1]:
                gb = C().matmul(C().reshape(a2, [m, a2.shape[-1]]), gm, None, True, False, 1.0, _allow_tf32())
        else:
            if need[0]:
                ga = A.unbroadcast(_bmm(g2, b2, trans_b=True), tuple(a2.shape))
            if need[1]:
                gb = A.unbroadcast(_bmm(a2, g2, trans_a=True), tuple(b2.shape))
        if ga is not None:
            ga = C().reshape(ga, list(a.shape))
        if gb is not None:
            gb = C().reshape(gb, list(b.shape))
        return ga, gb
