"""Elementwise ops: arithmetic, math functions, comparisons, logical ops, where/clamp/masked_fill."""
import numpy as np

from .. import _C, _dtype as D
from .._kernels import FLOAT_DTYPES
from .._tensor import Tensor
from ..autograd.graph import Function
from . import traits as _traits
from .broadcast import scale_backward, threaded_add_mul
from ._util import broadcast_shapes, check_operand, float_result, shape_of, unbroadcast, is_scalar

_SQRT_PI_2 = 2.0 / np.sqrt(np.pi)


# ------------------------------------------------------------------ cast
class Cast(Function):
    backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.array(x, copy=True)

    @staticmethod
    def forward_cuda(ctx, x):
        return ctx.xp.copy(x)  # apply already cast x to the target dtype

    @staticmethod
    def backward(ctx, g):
        return (g,)


def cast(x, dtype):
    return Cast.apply(x, _dtype=dtype)


# ------------------------------------------------------------------ binary arithmetic
def _binary(cls, a, b, op, out_dtype=None, **kw):
    check_operand(a, op)
    check_operand(b, op)
    broadcast_shapes(shape_of(a), shape_of(b))
    rd = D.result_type(a, b)
    if rd is D.bool and op in _NO_BOOL:
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\' (operands {_desc(a)} and {_desc(b)})')
    if out_dtype is not None:
        rd = out_dtype(rd)
    return cls.apply(a, b, _dtype=rd, **kw)


_NO_BOOL = {"pow", "remainder", "fmod", "div_floor", "div_trunc"}
class Add(Function):
    capture_role = "add"
    elementwise = True
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.shapes = (a.shape, b.shape)
        ctx.alpha = alpha
        if alpha == 1:
            y = threaded_add_mul(a, b, "add")
            return a + b if y is None else y
        return a + b * np.asarray(alpha, dtype=b.dtype)

    @staticmethod
    def forward_cuda(ctx, a, b, alpha=1):
        ctx.shapes = (np.shape(a), np.shape(b))
        ctx.alpha = alpha
        return ctx.xp.add(a, b if alpha == 1 else ctx.xp.multiply(b, alpha))

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        gb = g if ctx.alpha == 1 else g * ctx.alpha
        return unbroadcast(g, sa), unbroadcast(gb, sb)


class Sub(Function):
    elementwise = True
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.shapes = (a.shape, b.shape)
        ctx.alpha = alpha
        if a.dtype == np.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        return a - b if alpha == 1 else a - b * np.asarray(alpha, dtype=b.dtype)

    @staticmethod
    def forward_cuda(ctx, a, b, alpha=1):
        ctx.shapes = (np.shape(a), np.shape(b))
        ctx.alpha = alpha
        return ctx.xp.subtract(a, b if alpha == 1 else ctx.xp.multiply(b, alpha))

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return unbroadcast(g, sa), unbroadcast(-g * ctx.alpha, sb)


def _conj_if_complex(*arrays):
    return tuple(np.conj(x) if getattr(getattr(x, "dtype", None), "kind", "") == "c" else x for x in arrays)


class Mul(Function):
    capture_role = "mul"
    elementwise = True
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        ctx.shapes = (a.shape, b.shape)
        if a.dtype == np.bool_:
            return a & b
        y = threaded_add_mul(a, b, "mul")
        return a * b if y is None else y

    @staticmethod
    def forward_cuda(ctx, a, b):
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        ctx.shapes = (np.shape(a), np.shape(b))
        xp = ctx.xp
        return xp.logical_and(a, b) if getattr(a, "dtype", None) == "bool" else xp.multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = _conj_if_complex(*ctx.saved)  # torch's convention for complex inputs: grad * conj(derivative)
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad[:2]
        if sa != sb and g.shape in (sa, sb):  # a per-channel scale (layer scale, SE gate): one threaded pass
            if g.shape == sa:
                fused = scale_backward(g, a, b, sb, need_a, need_b)
            else:
                fused = scale_backward(g, b, a, sa, need_b, need_a)
                fused = fused and fused[::-1]
            if fused is not None:
                return fused
        return (unbroadcast(g * b, sa) if need_a else None,
                unbroadcast(g * a, sb) if need_b else None)


class Div(Function):
    elementwise = True
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b, rounding_mode=None):
        ctx.save_for_backward(a, b)
        ctx.mode = rounding_mode
        if rounding_mode is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.true_divide(a, b)
        if np.issubdtype(a.dtype, np.integer):
            if np.any(b == 0):
                raise ZeroDivisionError("ZeroDivisionError: integer division by zero")
            q = np.floor_divide(a, b)
            if rounding_mode == "trunc":
                q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
            return q.astype(a.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.true_divide(a, b)
            return np.floor(q) if rounding_mode == "floor" else np.trunc(q)

    @staticmethod
    def forward_cuda(ctx, a, b, rounding_mode=None):
        ctx.save_for_backward(a, b)
        ctx.mode = rounding_mode
        xp = ctx.xp
        if rounding_mode == "floor":
            return xp.floor_divide(a, b)
        q = xp.divide(a, b)
        return xp.trunc(q) if rounding_mode == "trunc" else q

    @staticmethod
    def backward(ctx, g):
        a, b = _conj_if_complex(*ctx.saved)
        xp = ctx.xp
        sa, sb = np.shape(a), np.shape(b)
        if ctx.mode is not None:
            return xp.zeros(sa, g.dtype), xp.zeros(sb, g.dtype)
        return (unbroadcast(g / b, sa) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g * a / (b * b), sb) if ctx.needs_input_grad[1] else None)


class Remainder(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b, fmod=False):
        ctx.save_for_backward(a, b)
        ctx.fmod = fmod
        if np.issubdtype(a.dtype, np.integer) and np.any(b == 0):
            raise ZeroDivisionError("ZeroDivisionError: integer modulo by zero")
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b) if fmod else np.remainder(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        q = np.trunc(a / b) if ctx.fmod else np.floor(a / b)
        return unbroadcast(g, a.shape), unbroadcast(-g * q, b.shape)


class Pow(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b):
        if np.issubdtype(a.dtype, np.integer) and np.any(b < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.power(a, b).astype(a.dtype, copy=False)  # numpy gives int8 for bool ** bool
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def forward_cuda(ctx, a, b):
        xp = ctx.xp
        if getattr(a, "dtype", None) in ("float32", "float16", "bfloat16") and np.ndim(b) == 0 and \
                not hasattr(b, "dtype"):
            out = xp.unary("pow_scalar", a, float(b))
        else:
            out = xp.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved
        xp = ctx.xp
        ga = gb = None
        with np.errstate(divide="ignore", invalid="ignore"):
            if ctx.needs_input_grad[0]:
                ga = xp.where(b == 0, 0.0, g * b * xp.power(a, b - 1)).astype(g.dtype)
                ga = unbroadcast(ga, np.shape(a))
            if ctx.needs_input_grad[1]:
                gb = xp.where((a == 0) & (b >= 0), 0.0, g * out * xp.log(a)).astype(g.dtype)
                gb = unbroadcast(gb, np.shape(b))
        return ga, gb


class Maximum(Function):
    elementwise = True
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b, minimum=False):
        ctx.save_for_backward(a, b)
        ctx.minimum = minimum
        return np.minimum(a, b) if minimum else np.maximum(a, b)

    @staticmethod
    def forward_cuda(ctx, a, b, minimum=False):
        ctx.save_for_backward(a, b)
        ctx.minimum = minimum
        return ctx.xp.minimum(a, b) if minimum else ctx.xp.maximum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        win_a = (a < b) if ctx.minimum else (a > b)
        tie = (a == b)
        wa = win_a + 0.5 * tie
        wb = (~win_a & ~tie) + 0.5 * tie
        return (unbroadcast((g * wa).astype(g.dtype), np.shape(a)),
                unbroadcast((g * wb).astype(g.dtype), np.shape(b)))


class Atan2(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.arctan2(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        den = a * a + b * b
        return unbroadcast(g * b / den, a.shape), unbroadcast(-g * a / den, b.shape)


def _true_div_dtype(rd):
    return rd if rd.is_floating_point or rd.is_complex else D.get_default_dtype()


def add(input, other, *, alpha=1, out=None):
    return _finish(_binary(Add, input, other, "add", alpha=alpha), out)


def _no_bool_sub(input, other, op):
    for x in (input, other):
        if (isinstance(x, Tensor) and x._dtype is D.bool) or isinstance(x, (bool, np.bool_)):
            raise RuntimeError(f"Subtraction, the `-` operator, with a bool tensor is not supported ({op} of "
                               f"{_desc(input)} and {_desc(other)}). If you are trying to invert a mask, use the "
                               "`~` or `logical_not()` operator instead.")


def _desc(x):
    return f"{x._dtype.name}{list(x.shape)}" if isinstance(x, Tensor) else f"{type(x).__name__} {x!r}"


def sub(input, other, *, alpha=1, out=None):
    _no_bool_sub(input, other, "sub")
    return _finish(_binary(Sub, input, other, "sub", alpha=alpha), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    _no_bool_sub(other, input, "rsub")
    return _binary(Sub, other, input, "rsub", alpha=alpha)


def mul(input, other, *, out=None):
    return _finish(_binary(Mul, input, other, "mul"), out)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if rounding_mode is None:
        return _finish(_binary(Div, input, other, "div", out_dtype=_true_div_dtype), out)
    return _finish(_binary(Div, input, other, f"div_{rounding_mode}", rounding_mode=rounding_mode), out)


divide = true_divide = div


def floor_divide(input, other):
    return div(input, other, rounding_mode="floor")


def remainder(input, other):
    return _binary(Remainder, input, other, "remainder")


def fmod(input, other):
    return _binary(Remainder, input, other, "fmod", fmod=True)


def pow(input, exponent):  # noqa: A001
    # like torch, a bool tensor may be raised to a Python-scalar power but not to a bool tensor
    return _binary(Pow, input, exponent, "pow" if isinstance(exponent, Tensor) else "pow_scalar")


def float_power(input, exponent):
    return _binary(Pow, input, exponent, "float_power", out_dtype=lambda rd: D.float64)


def maximum(input, other):
    return _binary(Maximum, input, other, "maximum")


def minimum(input, other):
    return _binary(Maximum, input, other, "minimum", minimum=True)


def atan2(input, other):
    return _binary(Atan2, input, other, "atan2", out_dtype=_true_div_dtype)


arctan2 = atan2


def _finish(result, out):
    if out is None:
        return result
    from .inplace import copy_
    copy_(out, result)
    return out


# ------------------------------------------------------------------ unary math
_NOT_HOLOMORPHIC = {"Abs", "Sign", "Sgn"}  # their backward formulas already follow torch's complex convention


def _unary_op(name, fwd, bwd, saves="x", float_only=True, keep_int=False, cuda=None, **traits):
    """Build a Function for y = fwd(x) with dx = bwd(x or y, g, xp) (``xp``: the array namespace);
    ``cuda``: the ``xp`` function name of its device kernel (None: CPU only); ``traits``: its capture traits
    (_ops/traits.py)."""

    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = fwd(x)
        ctx.save_for_backward(x if saves == "x" else y)
        return y

    def forward_cuda(ctx, x):
        y = getattr(ctx.xp, cuda)(x)
        ctx.save_for_backward(x if saves == "x" else y)
        return y

    def backward(ctx, g):
        (v,) = ctx.saved
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if getattr(getattr(v, "dtype", None), "kind", "") == "c" and name not in _NOT_HOLOMORPHIC:
                # torch's convention for complex inputs: g * conj(f'(z)) = conj(conj(g) * f'(z))
                return (np.conj(bwd(v, np.conj(g), ctx.xp)),)
            return (bwd(v, g, ctx.xp),)

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward), **traits}
    if cuda is not None:
        body["forward_cuda"] = staticmethod(forward_cuda)
    cls = type(name, (Function,), body)

    def op(input):
        check_operand(input, name.lower())
        if not isinstance(input, Tensor):
            from .._creation import tensor
            input = tensor(input)
        if keep_int or not float_only:
            dt = input._dtype
        else:
            dt = float_result(input)
        return cls.apply(input, _dtype=dt)

    op.__name__ = name.lower()
    op.Function = cls
    return op


def _cody_erf(x):
    """erf by W. J. Cody's rational approximations (numpy has none); ~1e-15 relative error in float64."""
    x = np.asarray(x)
    dt = x.dtype
    xd = x.astype(np.float64)
    ax = np.abs(xd)
    out = np.empty_like(xd)
    # |x| <= 0.5: erf = x * P(x^2)/Q(x^2)
    a = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
         3.20937758913846947e03, 1.85777706184603153e-1)
    b = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
    c = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
         8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
         2.15311535474403846e-8)
    d = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
         3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
    p = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
         6.58749161529837803e-4, 1.63153871373020978e-2)
    q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
         2.33520497626869185e-3)
    m1 = ax <= 0.46875
    m2 = (ax > 0.46875) & (ax <= 4.0)
    m3 = ax > 4.0
    if m1.any():
        y = ax[m1]
        z = y * y
        xnum = a[4] * z
        xden = z
        for i in range(3):
            xnum = (xnum + a[i]) * z
            xden = (xden + b[i]) * z
        out[m1] = xd[m1] * (xnum + a[3]) / (xden + b[3])
    if m2.any():
        y = ax[m2]
        xnum = c[8] * y
        xden = y
        for i in range(7):
            xnum = (xnum + c[i]) * y
            xden = (xden + d[i]) * y
        r = (xnum + c[7]) / (xden + d[7])
        z = np.trunc(y * 16.0) / 16.0
        r = np.exp(-z * z) * np.exp(-(y - z) * (y + z)) * r
        out[m2] = np.sign(xd[m2]) * (1.0 - r)
    if m3.any():
        y = ax[m3]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            z = 1.0 / (y * y)
            xnum = p[5] * z
            xden = z
            for i in range(4):
                xnum = (xnum + p[i]) * z
                xden = (xden + q[i]) * z
            r = z * (xnum + p[4]) / (xden + q[4])
            r = (1.0 / np.sqrt(np.pi) - r) / y
            zz = np.trunc(y * 16.0) / 16.0
            r = np.exp(-zz * zz) * np.exp(-(y - zz) * (y + zz)) * r
        r = np.where(y > 26.0, 0.0, r)
        out[m3] = np.sign(xd[m3]) * (1.0 - r)
    out[np.isnan(xd)] = np.nan
    return out.astype(dt) if dt != np.float64 else out


def _erfinv(y):
    # Giles' single-precision approximation refined by two Newton steps on erf (vectorised).
    y = np.asarray(y, np.float64)
    w = -np.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    ps = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
    pl = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], wl)
    x = np.where(small, ps, pl) * y
    for _ in range(2):
        err = _cody_erf(x) - y
        x = x - err / (_SQRT_PI_2 * np.exp(-x * x))
    x = np.where(np.abs(y) == 1, np.copysign(np.inf, y), x)
    return np.where(np.abs(y) > 1, np.nan, x)


def _sigmoid(x):
    if x.dtype in FLOAT_DTYPES:  # vectorised, threaded kernel (numpy's masked path is 8x slower)
        return _C.pointwise(x, "sigmoid")
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out


neg = _unary_op("Neg", np.negative, lambda x, g, xp: -g, keep_int=True, elementwise=True, cuda="negative")
abs = _unary_op("Abs", np.abs, lambda x, g, xp: g * xp.sign(x), keep_int=True, elementwise=True, cuda="abs")  # noqa: A001
def _sign(x):
    if x.dtype.kind == "f":  # torch: sign(nan) == 0
        return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype))
    return np.sign(x)


sign = _unary_op("Sign", _sign, lambda x, g, xp: xp.zeros_like(g), keep_int=True, cuda="sign")
exp = _unary_op("Exp", np.exp, lambda y, g, xp: g * y, saves="y", elementwise=True, cuda="exp")
exp2 = _unary_op("Exp2", np.exp2, lambda y, g, xp: g * y * xp.log(2.0).astype(y.dtype), saves="y")
expm1 = _unary_op("Expm1", np.expm1, lambda y, g, xp: g * (y + 1), saves="y", cuda="expm1")
log = _unary_op("Log", np.log, lambda x, g, xp: g / x, cuda="log")
log2 = _unary_op("Log2", np.log2, lambda x, g, xp: g / (x * xp.log(2.0).astype(x.dtype)), cuda="log2")
log10 = _unary_op("Log10", np.log10, lambda x, g, xp: g / (x * xp.log(10.0).astype(x.dtype)))
log1p = _unary_op("Log1p", np.log1p, lambda x, g, xp: g / (x + 1), cuda="log1p")
sqrt = _unary_op("Sqrt", np.sqrt, lambda y, g, xp: g / (2 * y), saves="y", elementwise=True, cuda="sqrt")
rsqrt = _unary_op("Rsqrt", lambda x: 1.0 / np.sqrt(x), lambda y, g, xp: -0.5 * g * y * y * y, saves="y",
                  elementwise=True, cuda="rsqrt")
sin = _unary_op("Sin", np.sin, lambda x, g, xp: g * xp.cos(x), cuda="sin")
cos = _unary_op("Cos", np.cos, lambda x, g, xp: -g * xp.sin(x), cuda="cos")
tan = _unary_op("Tan", np.tan, lambda y, g, xp: g * (1 + y * y), saves="y")
asin = _unary_op("Asin", np.arcsin, lambda x, g, xp: g / xp.sqrt(1 - x * x))
acos = _unary_op("Acos", np.arccos, lambda x, g, xp: -g / xp.sqrt(1 - x * x))
atan = _unary_op("Atan", np.arctan, lambda x, g, xp: g / (1 + x * x))
sinh = _unary_op("Sinh", np.sinh, lambda x, g, xp: g * xp.cosh(x))
cosh = _unary_op("Cosh", np.cosh, lambda x, g, xp: g * xp.sinh(x))
tanh = _unary_op("Tanh", np.tanh, lambda y, g, xp: g * (1 - y * y), saves="y", elementwise=True, cuda="tanh")
sigmoid = _unary_op("Sigmoid", _sigmoid, lambda y, g, xp: g * y * (1 - y), saves="y", elementwise=True,
                    activation=_traits.fixed("sigmoid"), cuda="sigmoid")
erf = _unary_op("Erf", _cody_erf, lambda x, g, xp: g * (_SQRT_PI_2 * xp.exp(-x * x)).astype(x.dtype),
                elementwise=True, cuda="erf")
erfc = _unary_op("Erfc", lambda x: 1 - _cody_erf(x), lambda x, g, xp: -g * (_SQRT_PI_2 * xp.exp(-x * x)).astype(x.dtype))
erfinv = _unary_op("Erfinv", lambda x: _erfinv(x).astype(x.dtype),
                   lambda y, g, xp: g * (xp.sqrt(xp.pi) / 2 * xp.exp(y * y)).astype(y.dtype), saves="y")
reciprocal = _unary_op("Reciprocal", lambda x: 1.0 / x, lambda y, g, xp: -g * y * y, saves="y", elementwise=True,
                       cuda="reciprocal")
square = _unary_op("Square", np.square, lambda x, g, xp: 2 * g * x, keep_int=True, elementwise=True, cuda="square")
floor = _unary_op("Floor", np.floor, lambda x, g, xp: xp.zeros_like(g), keep_int=True, cuda="floor")
ceil = _unary_op("Ceil", np.ceil, lambda x, g, xp: xp.zeros_like(g), keep_int=True, cuda="ceil")
trunc = _unary_op("Trunc", np.trunc, lambda x, g, xp: xp.zeros_like(g), keep_int=True, cuda="trunc")
fix = trunc
frac = _unary_op("Frac", lambda x: x - np.trunc(x), lambda x, g, xp: g)
_round0 = _unary_op("Round", np.round, lambda x, g, xp: xp.zeros_like(g), keep_int=True, cuda="round")
absolute = abs
negative = neg
arcsin, arccos, arctan = asin, acos, atan


def round(input, *, decimals=0):  # noqa: A001
    if decimals == 0:
        return _round0(input)
    scale = 10.0 ** decimals
    return _round0(input * scale) / scale


# ------------------------------------------------------------------ comparisons and logic
def _compare(ufunc, name):
    class Cmp(Function):
        scalar_operands = 2
        @staticmethod
        def forward(ctx, a, b):
            return ufunc(a, b)

        @staticmethod
        def forward_cuda(ctx, a, b):
            return getattr(ctx.xp, ufunc.__name__)(a, b)

    Cmp.__name__ = name

    def op(input, other):
        check_operand(input, name)
        check_operand(other, name)
        broadcast_shapes(shape_of(input), shape_of(other))
        return Cmp.apply(input, other, _dtype=D.result_type(input, other))

    op.__name__ = name
    return op


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(ufunc, name, cast_bool=True):
    class Logic(Function):
        scalar_operands = 2
        @staticmethod
        def forward(ctx, *xs):
            return ufunc(*[x.astype(bool) if cast_bool else x for x in xs])

    Logic.__name__ = name

    def op(*args):
        for a in args:
            check_operand(a, name)
        if not cast_bool:
            rd = D.result_type(*args)
            if rd.is_floating_point:
                raise TypeError(f"{name}: bitwise ops are only supported for integer and bool tensors, got {rd}")
            return Logic.apply(*args, _dtype=rd)
        return Logic.apply(*args)

    op.__name__ = name
    return op


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")
logical_not = _logical(np.logical_not, "logical_not")
bitwise_and = _logical(np.bitwise_and, "bitwise_and", cast_bool=False)
bitwise_or = _logical(np.bitwise_or, "bitwise_or", cast_bool=False)
bitwise_xor = _logical(np.bitwise_xor, "bitwise_xor", cast_bool=False)
bitwise_not = _logical(np.invert, "bitwise_not", cast_bool=False)

def _float_predicate(ufunc, name, default):
    class Pred(Function):
        @staticmethod
        def forward(ctx, x):
            if np.issubdtype(x.dtype, np.floating):
                return ufunc(x)
            return np.full(x.shape, default)

    Pred.__name__ = name

    def op(input):
        return Pred.apply(input)

    op.__name__ = name
    return op


isnan = _float_predicate(np.isnan, "isnan", False)
isinf = _float_predicate(np.isinf, "isinf", False)
isfinite = _float_predicate(np.isfinite, "isfinite", True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    from .._tensor import Tensor as T
    a = np.asarray(input._compute()) if isinstance(input, T) else input
    b = np.asarray(other._compute()) if isinstance(other, T) else other
    return Tensor._wrap(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._compute(), other._compute()))


# ------------------------------------------------------------------ where / clamp / masked_fill
class WhereOp(Function):
    scalar_operands = 2
    backward_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, a, b, cond):
        ctx.cond = cond
        ctx.shapes = (np.shape(a), np.shape(b))
        return np.where(cond, a, b)

    @staticmethod
    def forward_cuda(ctx, a, b, cond):
        xp = ctx.xp
        ctx.cond = cond = xp.astype(xp.asarray(cond), "bool")
        ctx.shapes = (np.shape(a), np.shape(b))
        return xp.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        c, xp = ctx.cond, ctx.xp
        sa, sb = ctx.shapes
        return unbroadcast(xp.where(c, g, 0).astype(g.dtype), sa), unbroadcast(xp.where(c, 0, g).astype(g.dtype), sb)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor) or condition._dtype is not D.bool:
        raise TypeError(f"where expected condition to be a boolean tensor, but got "
                        f"{condition.dtype if isinstance(condition, Tensor) else type(condition).__name__}")
    broadcast_shapes(condition.shape, shape_of(input), shape_of(other))
    return WhereOp.apply(input, other, cond=condition._data, _dtype=D.result_type(input, other))


def nonzero(input, *, as_tuple=False):
    idx = np.nonzero(input._compute())
    if as_tuple:
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in idx)
    return Tensor._wrap(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))


def argwhere(input):
    return nonzero(input)


class Clamp(Function):
    """min(max(x, lo), hi) with torch's gradients: Python-scalar bounds pass the gradient strictly inside
    (lo < x < hi); tensor bounds behave like maximum/minimum, a tie splitting the gradient in half."""
    scalar_operands = 3

    @staticmethod
    def forward(ctx, x, lo, hi, scalar_bounds=(False, False)):
        ctx.save_for_backward(x, lo, hi)
        ctx.scalar_bounds = scalar_bounds
        y = x
        if lo is not None:
            y = np.maximum(y, lo)
        if hi is not None:
            y = np.minimum(y, hi)
        if lo is None and hi is None:
            y = np.array(x, copy=True)
        if np.issubdtype(x.dtype, np.floating):
            y = np.where(np.isnan(x), x, y)
        return y

    @staticmethod
    def forward_cuda(ctx, x, lo, hi, scalar_bounds=(False, False)):
        if hasattr(lo, "dtype") or hasattr(hi, "dtype"):
            raise NotImplementedError("clamp with tensor bounds is not implemented for CUDA tensors yet")
        ctx.save_for_backward(x, lo, hi)
        ctx.scalar_bounds = scalar_bounds
        return ctx.xp.clip(x, lo, hi)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved
        xp = ctx.xp
        lo_scalar, hi_scalar = ctx.scalar_bounds
        tie_lo = 0.0 if lo_scalar else 0.5
        tie_hi = 0.0 if hi_scalar else 0.5
        gx = g
        y1 = x
        d_hi = None
        if lo is not None:
            gx = gx * ((x > lo) + tie_lo * (x == lo))
            y1 = xp.maximum(x, lo)
        if hi is not None:
            d_hi = (y1 < hi) + tie_hi * (y1 == hi)  # d min(y1, hi) / d y1
            gx = gx * d_hi
        glo = ghi = None
        if lo is not None and ctx.needs_input_grad[1]:
            d = (lo > x) + 0.5 * (lo == x)
            if d_hi is not None:
                d = d * d_hi
            glo = unbroadcast(xp.asarray(g * d).astype(g.dtype), np.shape(lo))
        if hi is not None and ctx.needs_input_grad[2]:
            ghi = unbroadcast(xp.asarray(g * ((hi < y1) + 0.5 * (hi == y1))).astype(g.dtype), np.shape(hi))
        return unbroadcast(xp.asarray(gx).astype(g.dtype), x.shape), glo, ghi


def clamp(input, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    ops = [o for o in (input, min, max) if o is not None]
    rd = D.result_type(*ops)
    broadcast_shapes(*[shape_of(o) for o in ops])
    return Clamp.apply(input, min, max, scalar_bounds=(not isinstance(min, Tensor), not isinstance(max, Tensor)),
                       _dtype=rd)


clip = clamp


def clamp_min(input, min):  # noqa: A002
    return clamp(input, min=min)


def clamp_max(input, max):  # noqa: A002
    return clamp(input, max=max)


class MaskedFill(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, x, value, mask):
        ctx.mask = mask
        ctx.vshape = np.shape(value)
        return np.where(mask, value, x)

    @staticmethod
    def forward_cuda(ctx, x, value, mask):
        xp = ctx.xp
        ctx.mask = mask = xp.astype(xp.asarray(mask), "bool")
        ctx.vshape = np.shape(value)
        return xp.where(mask, xp.astype(xp.asarray(value), x.dtype), x)

    @staticmethod
    def backward(ctx, g):
        m, xp = ctx.mask, ctx.xp
        gx = unbroadcast(xp.where(m, 0, g).astype(g.dtype), g.shape if g.ndim else ())
        gv = xp.where(m, g, 0).sum().astype(g.dtype).reshape(ctx.vshape) if ctx.needs_input_grad[1] else None
        return gx, gv


def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask._dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    out_shape = broadcast_shapes(input.shape, mask.shape)
    if tuple(out_shape) != tuple(input.shape):
        raise RuntimeError(f"masked_fill: mask of shape {list(mask.shape)} can't be broadcast to the input "
                           f"shape {list(input.shape)}")
    return MaskedFill.apply(input, value, mask=mask._data, _dtype=input._dtype)


def lerp(input, end, weight):
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


def hypot(input, other):
    return sqrt(input * input + other * other)


def logaddexp(input, other):
    m = maximum(input, other).detach()
    return m + log(exp(input - m) + exp(other - m))


# ------------------------------------------------------------------ sinc: one declaration for every device
class Sinc(Function):
    """sin(pi x) / (pi x), 1 at x = 0. Forward and backward are written once against ``ctx.xp``, so the same
    code is the CPU kernel and the CUDA kernel; capture runs it on channels-last activations (elementwise)."""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        px = x * xp.pi
        zero = x == 0
        y = xp.where(zero, 1.0, xp.sin(px) / xp.where(zero, 1.0, px)).astype(x.dtype)
        ctx.save_for_backward(x, y)
        return y

    forward_cuda = forward

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved
        xp = ctx.xp
        zero = x == 0
        d = xp.where(zero, 0.0, (xp.cos(x * xp.pi) - y) / xp.where(zero, 1.0, x))  # d sinc / dx, 0 at x = 0
        return ((g * d).astype(g.dtype),)


def sinc(input):
    """torch.sinc: the normalized sinc function (integer inputs give the default float dtype)."""
    check_operand(input, "sinc")
    return Sinc.apply(input, _dtype=float_result(input))
