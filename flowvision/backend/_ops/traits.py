"""Traits an op declares for the captured inference path (``flowvision.backend.compile``).

The capture passes (``_capture.py``) and the native lowering (``_capture_native.py``) never test op classes; they
read what the op says about itself, so a new op that declares a trait is fused / lowered like the existing ones.
An op class (a ``Function``) may set:

``capture_role``
    the structural role a pass rewrites: ``"conv2d"``, ``"matmul"``, ``"batch_norm_eval"``, ``"add"``, ``"mul"``,
    ``"view"``, ``"permute"``, ``"slice"``, ``"cat"``, ``"roll"``, ``"mean"``, ``"max_pool2d"``, ``"avg_pool2d"``,
    ``"adaptive_avg_pool2d"``, ``"layer_norm"``, ``"softmax"``, ``"sdpa"``, ``"window_partition"``,
    ``"window_reverse"``. Each role fixes the meaning of the recorded positional arguments.
``elementwise``
    True when output element i depends only on input element i of every operand (broadcast constants allowed):
    such an op runs unchanged on channels-last (NHWC) activations.
``activation``
    ``staticmethod(params, kwargs) -> (kind, lo, hi) | None``: the op as one of the kernels' activations, given
    its recorded non-tensor arguments. ``kind`` is a name of ``_C.Epilogue`` (a fused GEMM / conv epilogue),
    ``_C.Pointwise`` or ``_C.UnaryStep`` (a native unary step) or ``"sigmoid"`` / ``"hardsigmoid"`` (a
    squeeze-excitation gate); ``lo`` / ``hi`` are the clamp bounds.
"""
from typing import Callable, Optional, Tuple

Activation = Optional[Tuple[str, float, float]]


def role(cls) -> Optional[str]:
    """The ``capture_role`` an op class declares (None: no pass rewrites it)."""
    return getattr(cls, "capture_role", None)


def is_elementwise(cls) -> bool:
    """Whether the op class declares itself elementwise (layout-transparent)."""
    return bool(getattr(cls, "elementwise", False))


def activation(cls, params, kwargs) -> Activation:
    """The activation ``(kind, lo, hi)`` an op class declares for these recorded arguments, or None."""
    fn: Optional[Callable] = getattr(cls, "activation", None)
    return None if fn is None else fn(tuple(params), dict(kwargs or {}))


def fixed(kind: str) -> Callable:
    """An ``activation`` trait for an op with no parameters: always ``(kind, 0, 0)``."""
    return staticmethod(lambda params, kwargs: (kind, 0.0, 0.0))


def clamp(params, kwargs) -> Activation:
    """The ``activation`` trait of hardtanh(x, lo, hi): ``relu6`` for (0, 6), else ``clamp``."""
    lo, hi = float(params[0]), float(params[1])
    return ("relu6", 0.0, 0.0) if (lo, hi) == (0.0, 6.0) else ("clamp", lo, hi)


def leaky_relu(params, kwargs) -> Activation:
    """The ``activation`` trait of an op recorded as ``(x, slope)``: leaky_relu, and rrelu outside training (one
    constant slope; a tensor of drawn slopes is not an activation the kernels run)."""
    slope = params[0] if params else kwargs.get("negative_slope", 0.01)
    if isinstance(slope, bool) or not isinstance(slope, (int, float)):
        return None
    return "leaky_relu", float(slope), 0.0


def gelu(params, kwargs) -> Activation:
    """The ``activation`` trait of gelu(x, approximate)."""
    approx = params[0] if params else kwargs.get("approximate", "none")
    if approx not in ("none", "tanh"):
        return None
    return ("gelu" if approx == "none" else "gelu_tanh"), 0.0, 0.0
