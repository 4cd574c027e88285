"""Elementwise non-linear activations (ReLU family, GELU, SiLU, ELU family, shrinkage, gating)."""
import numpy as np

from ... import _C, _dtype as D
from ... import _autocast_policy as _amp
from ..._kernels import FLOAT_DTYPES
from ..._ops import elementwise as E, shape as S, traits as _traits
from ..._tensor import Tensor
from ...autograd.graph import Function
from ...random import _rng
from .common import _check_float, _const, _kin
from .. import functional as F


def _act(name, fwd, bwd, saves="x", cuda=None, **traits):
    """An elementwise activation op: y = fwd(x, *params), dx = bwd(x or y, g, xp, *params) (``xp``: the array
    namespace); ``cuda``: ``(kernel, params -> kernel params)`` of its device unary kernel (None: CPU only);
    ``traits`` are the capture traits it declares (see _ops/traits.py)."""
    def forward(ctx, x, *params):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            y = fwd(x, *params)
        ctx.save_for_backward(x if saves == "x" else y)
        ctx.params = params
        return y.astype(x.dtype, copy=False)

    def forward_cuda(ctx, x, *params):
        kernel, kernel_params = cuda
        y = ctx.xp.unary(kernel, x, *kernel_params(*params))
        ctx.save_for_backward(x if saves == "x" else y)
        ctx.params = params
        return y

    def backward(ctx, g):
        (v,) = ctx.saved
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return (bwd(v, g, ctx.xp, *ctx.params).astype(g.dtype, copy=False),) + (None,) * len(ctx.params)

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward), "elementwise": True, **traits}
    if cuda is not None:
        body["forward_cuda"] = staticmethod(forward_cuda)
    return type(name, (Function,), body)


def _no_params():
    return ()


def _softplus_np(x, beta, threshold, xp=np):
    bx = x * beta
    return xp.where(bx > threshold, x, xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta)


def _elu_params(alpha, scale=1.0, input_scale=1.0):
    if scale != 1.0 or input_scale != 1.0:
        raise NotImplementedError("elu with scale/input_scale != 1 (selu, celu) is not implemented on CUDA yet")
    return (alpha,)


def _pointwise(kind, x, fallback, lo=0.0, hi=0.0):
    """relu/clamp/hardswish/hardsigmoid forward: the vectorised, threaded C++ kernel for float32/float64 (numpy's
    NaN-aware maximum/clip run at a fraction of memory bandwidth), ``fallback(x)`` for other dtypes."""
    if x.dtype in FLOAT_DTYPES:
        return _C.pointwise(x, kind, lo, hi)
    return fallback(x)


def _relu_backward(y, g, xp):
    """torch's threshold_backward rule (0 where y <= 0; a NaN output passes its gradient), threaded in C++ for
    float32/float64 host arrays."""
    if isinstance(y, np.ndarray) and isinstance(g, np.ndarray):
        if y.dtype in FLOAT_DTYPES and g.dtype == y.dtype:
            return _C.relu_backward(g, y)
        return np.where(y <= 0, np.zeros((), g.dtype), g)
    return g * (y > 0)  # a device array


_Relu = _act("Relu", lambda x: _pointwise("relu", x, lambda a: np.maximum(a, 0)), _relu_backward,
             saves="y", activation=_traits.fixed("relu"), cuda=("relu", _no_params))
# relu_ under autograd on a plain float32/float64 CPU tensor: the kernel writes into the input's storage and the node
# saves that storage, as torch's relu_ saves self. One pass, and the activation is held once: an out-of-place result
# copied back would stay saved beside the overwritten tensor (the next conv saves that tensor too), 600 MB of a
# ResNet-50 step at batch 16.
_ReluInPlace = _act("Relu", lambda x: _C.pointwise(x, "relu", out=x), _relu_backward, saves="y",
                    activation=_traits.fixed("relu"))
_Hardtanh = _act("Hardtanh", lambda x, lo, hi: _pointwise("clamp", x, lambda a: np.clip(a, lo, hi), lo, hi),
                 lambda x, g, xp, lo, hi: g * ((x > lo) & (x < hi)), activation=staticmethod(_traits.clamp),
                 cuda=("hardtanh", lambda lo, hi: (lo, hi)))
_LeakyRelu = _act("LeakyRelu", lambda x, s: np.where(x > 0, x, x * s),
                  lambda x, g, xp, s: xp.where(x > 0, g, g * s), activation=staticmethod(_traits.leaky_relu),
                  cuda=("leaky_relu", lambda s: (s,)))
_Elu = _act("Elu", lambda x, a, sc, isc: np.where(x > 0, x * sc, a * sc * np.expm1(x * isc)),
            lambda x, g, xp, a, sc, isc: xp.where(x > 0, g * sc, g * a * sc * isc * xp.exp(x * isc)),
            cuda=("elu", _elu_params))
_Mish = _act("Mish", lambda x: x * np.tanh(_softplus_np(x, 1.0, 20.0)),
             lambda x, g, xp: g * (xp.tanh(_softplus_np(x, 1.0, 20.0, xp)) + x * xp.sigmoid(x) *
                                   (1 - xp.tanh(_softplus_np(x, 1.0, 20.0, xp)) ** 2)), cuda=("mish", _no_params))
_Hardswish = _act("Hardswish", lambda x: _pointwise("hardswish", x, lambda a: a * np.clip(a + 3, 0, 6) / 6),
                  lambda x, g, xp: g * xp.where(x <= -3, 0, xp.where(x >= 3, 1, (2 * x + 3) / 6)),  # torch's ties
                  activation=_traits.fixed("hardswish"), cuda=("hardswish", _no_params))
_Hardsigmoid = _act("Hardsigmoid", lambda x: _pointwise("hardsigmoid", x, lambda a: np.clip(a + 3, 0, 6) / 6),
                    lambda x, g, xp: g * xp.where((x > -3) & (x < 3), 1.0 / 6, 0),
                    activation=_traits.fixed("hardsigmoid"), cuda=("hardsigmoid", _no_params))
_Softplus = _act("Softplus", _softplus_np,
                 lambda x, g, xp, beta, th: g * xp.where(x * beta > th, 1.0, xp.sigmoid(x * beta)),
                 cuda=("softplus", lambda beta, th: (beta, th)))
_LogSigmoid = _act("LogSigmoid", lambda x: -_softplus_np(-x, 1.0, 20.0), lambda x, g, xp: g * xp.sigmoid(-x),
                   cuda=("logsigmoid", _no_params))
_Softsign = _act("Softsign", lambda x: x / (1 + np.abs(x)), lambda x, g, xp: g / (1 + xp.abs(x)) ** 2)
# torch's rule: value where x <= threshold, else x (NaN is not <= anything: it stays NaN, and its gradient passes)
_Threshold = _act("Threshold", lambda x, th, v: np.where(x <= th, v, x),
                   lambda x, g, xp, th, v: xp.where(x <= th, 0, g))


class _Gelu(Function):
    elementwise = True
    activation = staticmethod(_traits.gelu)

    @staticmethod
    def forward(ctx, x, approximate):
        xk = _kin(x)
        ctx.save_for_backward(xk)
        ctx.approx = approximate
        return _C.gelu_forward(xk, approximate).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approx = approximate
        return ctx.xp.gelu_forward(x, approximate)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return ctx.xp.gelu_backward(_kin(g).astype(x.dtype, copy=False), x, ctx.approx), None


class _Silu(Function):
    elementwise = True
    activation = _traits.fixed("silu")

    @staticmethod
    def forward(ctx, x):
        xk = _kin(x)
        ctx.save_for_backward(xk)
        return _C.silu_forward(xk).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.silu_forward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return (ctx.xp.silu_backward(_kin(g).astype(x.dtype, copy=False), x),)


class _RRelu(Function):
    """Randomized leaky ReLU: x where x > 0, else x * slope (one slope, or one per element while training). One
    forward and one backward over ``ctx.xp`` serve the CPU and CUDA; capture treats it as elementwise."""

    elementwise = True
    activation = staticmethod(_traits.leaky_relu)

    @staticmethod
    def forward(ctx, x, slope):
        xp = ctx.xp
        keep = x > 0
        ctx.save_for_backward(keep, slope)
        return xp.where(keep, x, x * slope).astype(x.dtype)

    forward_cuda = forward

    @staticmethod
    def backward(ctx, g):
        keep, slope = ctx.saved
        return ctx.xp.where(keep, g, g * slope).astype(g.dtype), None


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU, as ``torch.nn.functional.rrelu``: ``x`` where ``x > 0``, else ``a * x``, with ``a`` drawn
    uniformly from ``[lower, upper]`` per element while ``training`` and ``(lower + upper) / 2`` otherwise.

    Args:
        input: a floating-point tensor of any shape.
        lower: lower bound of the slope.
        upper: upper bound of the slope.
        training: draw random slopes.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: ``lower > upper``.
    """
    _check_float(input, "rrelu")
    if not lower <= upper:
        raise ValueError(f"rrelu: lower bound {lower} must not exceed upper bound {upper}")
    if training:
        cd = np.float32 if input._dtype is D.bfloat16 else input._dtype.np
        slope = _const(_rng().uniform(lower, upper, tuple(input.shape)).astype(cd), input._dtype).to(input.device)
    else:
        slope = (lower + upper) / 2.0
    return _maybe_inplace(input, lambda x: _RRelu.apply(x, slope, _dtype=x._dtype), inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place :func:`rrelu`: ``input`` is overwritten and returned.

    Args:
        input: a floating-point tensor of any shape.
        lower: lower bound of the slope.
        upper: upper bound of the slope.
        training: draw random slopes.

    Returns:
        ``input``.
    """
    return F.rrelu(input, lower, upper, training, inplace=True)


def _maybe_inplace(input, fn, inplace, saves_input=True):
    """``fn(input)``, written into ``input`` when ``inplace`` (through the shared in-place mechanism, which
    hands ``fn`` a snapshot when autograd needs the pre-modification values: not when the op saves only its
    output)."""
    if inplace:
        from ..._ops.inplace import make_inplace
        return make_inplace(fn, snapshot=saves_input)(input)
    return fn(input)


def _writes_in_place(input):
    """Whether an op's kernel may write straight into ``input``'s storage under autograd: a float32/float64 CPU tensor
    that owns its C-contiguous, writeable array (not a view: writing through a view needs CopySlices)."""
    d = input._data
    return (input._device.type == "cpu" and input._base is None and type(d) is np.ndarray and d.dtype in FLOAT_DTYPES
            and d.flags.c_contiguous and d.flags.writeable and input._dtype is D.from_numpy_dtype(d.dtype))


def _pointwise_in_storage(input, kind, lo=0.0, hi=0.0):
    """An in-place activation written straight into the storage in one pass (no temporary, no copy back) when no
    autograd history is needed; None when the general in-place path must run."""
    from ...autograd.grad_mode import is_grad_enabled
    d = input._data
    if (input._device.type != "cpu" or (is_grad_enabled() and input.requires_grad) or d.dtype not in FLOAT_DTYPES
            or not (d.flags.c_contiguous and d.flags.writeable)):
        return None
    _C.pointwise(d, kind, lo, hi, out=d)
    input._version[0] += 1
    return input


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Rectified linear unit ``max(x, 0)`` elementwise, as ``torch.nn.functional.relu``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.relu(flow.tensor([-1.0, 0.0, 2.0]))
        tensor([0., 0., 2.])
    """
    _check_float(input, "relu") if input._dtype.is_floating_point else None
    if inplace and _pointwise_in_storage(input, "relu") is not None:
        return input
    if inplace and _writes_in_place(input):
        from ..._ops.inplace import make_inplace
        return make_inplace(lambda t: _ReluInPlace.apply(t), snapshot=False)(input)
    return _maybe_inplace(input, lambda t: _Relu.apply(t), inplace, saves_input=False)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`: ``input`` is overwritten with ``max(input, 0)`` and returned, as
    ``torch.nn.functional.relu_``.

    Args:
        input: a tensor of any shape.

    Returns:
        A tensor shaped like ``input``.
    """
    return F.relu(input, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` elementwise, as ``torch.nn.functional.relu6``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return F.hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]`` elementwise, as ``torch.nn.functional.hardtanh``.

    Args:
        input: a tensor of any shape.
        min_val: lower bound.
        max_val: upper bound.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        ValueError: ``min_val > max_val``.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace and _pointwise_in_storage(input, "clamp", float(min_val), float(max_val)) is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardtanh.apply(t, float(min_val), float(max_val)), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``, as ``torch.nn.functional.leaky_relu``.

    Args:
        input: a tensor of any shape.
        negative_slope: slope of the negative part.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.leaky_relu(flow.tensor([-2.0, 3.0]), 0.1)
        tensor([-0.2000,  3.0000])
    """
    return _maybe_inplace(input, lambda t: _LeakyRelu.apply(t, float(negative_slope)), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Exponential linear unit: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``, as ``torch.nn.functional.elu``.

    Args:
        input: a tensor of any shape.
        alpha: saturation value of the negative part.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return _maybe_inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU: ``scale * elu(x, alpha)`` with ``alpha = 1.6732632423543772``, ``scale = 1.0507009873554805``, as
    ``torch.nn.functional.selu``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return _maybe_inplace(input, lambda t: _Elu.apply(t, 1.6732632423543772, 1.0507009873554805, 1.0), inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Continuously differentiable ELU: ``x`` where ``x > 0``, else ``alpha * (exp(x / alpha) - 1)``, as
    ``torch.nn.functional.celu``.

    Args:
        input: a tensor of any shape.
        alpha: saturation value of the negative part (not 0).
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return _maybe_inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0 / alpha), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the standard normal CDF), as ``torch.nn.functional.gelu``.

    Args:
        input: a tensor of any shape.
        approximate: ``'none'`` (exact, with erf) or ``'tanh'`` (the tanh approximation).

    Returns:
        A tensor shaped like ``input``.

    Raises:
        ValueError: ``approximate`` is neither ``'none'`` nor ``'tanh'``.
        TypeError: the input is not a floating-point tensor.
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    _check_float(input, "gelu")
    return _Gelu.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Sigmoid linear unit (swish) ``x * sigmoid(x)``, as ``torch.nn.functional.silu``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.

    Raises:
        TypeError: the input is not a floating-point tensor.
    """
    _check_float(input, "silu")
    return _maybe_inplace(input, lambda t: _Silu.apply(t), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` elementwise, as ``torch.nn.functional.mish``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return _maybe_inplace(input, lambda t: _Mish.apply(t), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` elementwise, as ``torch.nn.functional.hardswish``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    if inplace and _pointwise_in_storage(input, "hardswish") is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardswish.apply(t), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` elementwise, as ``torch.nn.functional.hardsigmoid``.

    Args:
        input: a tensor of any shape.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    if inplace and _pointwise_in_storage(input, "hardsigmoid") is not None:
        return input
    return _maybe_inplace(input, lambda t: _Hardsigmoid.apply(t), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta`` elementwise, ``x`` itself where ``beta * x > threshold``, as
    ``torch.nn.functional.softplus``.

    Args:
        input: a tensor of any shape.
        beta: sharpness.
        threshold: above it the function is linear (numerical stability).

    Returns:
        A tensor shaped like ``input``.
    """
    return _Softplus.apply(input, float(beta), float(threshold))


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))`` elementwise, computed stably, as ``torch.nn.functional.logsigmoid``; the result is shaped
    like ``input``."""
    return _LogSigmoid.apply(input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` elementwise, as ``torch.nn.functional.softsign``; the result is shaped like ``input``."""
    return _Softsign.apply(input)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` elementwise, as ``torch.nn.functional.tanhshrink``; the result is shaped like ``input``."""
    return input - E.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``, as ``torch.nn.functional.threshold``.

    Args:
        input: a tensor of any shape.
        threshold: the threshold.
        value: replacement for elements at or below it.
        inplace: write the result into ``input`` and return it.

    Returns:
        A tensor shaped like ``input``.
    """
    return _maybe_inplace(input, lambda t: _Threshold.apply(t, float(threshold), float(value)), inplace)


def sigmoid(input: Tensor) -> Tensor:
    """Logistic function ``1 / (1 + exp(-x))`` elementwise, as ``torch.nn.functional.sigmoid``; the result is shaped
    like ``input``."""
    return E.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise, as ``torch.nn.functional.tanh``; the result is shaped like ``input``."""
    return E.tanh(input)


@_amp.lower_precision
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Parametric ReLU, as ``torch.nn.functional.prelu``: ``x`` where ``x > 0``, else ``weight * x``, with one learnable
    slope, or one per channel (dim 1).

    Args:
        input: ``(N, C, *)`` (or any shape with a single slope).
        weight: ``(1,)`` or ``(C,)`` slopes.

    Returns:
        A tensor shaped like ``input``.
    """
    w = weight if weight.numel() == 1 or input.ndim < 2 else S.reshape(weight, (-1,) + (1,) * (input.ndim - 2))
    return E.where(input > 0, input, input * w)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit, as ``torch.nn.functional.glu``: ``input`` is split in halves ``a, b`` along ``dim`` and
    ``a * sigmoid(b)`` returned.

    Args:
        input: a tensor whose size along ``dim`` is even.
        dim: the dim to split.

    Returns:
        The input's shape with ``dim`` halved.
    """
    a, b = S.chunk(input, 2, dim)
    return a * E.sigmoid(b)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Soft shrinkage: ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 in between, as
    ``torch.nn.functional.softshrink``.

    Args:
        input: a tensor of any shape.
        lambd: the threshold (non-negative).

    Returns:
        A tensor shaped like ``input``.

    Raises:
        RuntimeError: ``lambd`` is negative.
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return E.where(input > lambd, input - lambd, E.where(input < -lambd, input + lambd, input * 0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Hard shrinkage: ``x`` where ``|x| > lambd``, else 0, as ``torch.nn.functional.hardshrink``.

    Args:
        input: a tensor of any shape.
        lambd: the threshold.

    Returns:
        A tensor shaped like ``input``.
    """
    return E.where(E.abs(input) > lambd, input, input * 0)
