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
from typing import TYPE_CHECKING

import numpy as np

from . import _dtype as D
from ._tensor import Tensor
from ._ops import kernel_select as _select
from .autograd.graph import _compute_array
from .autograd.grad_mode import no_grad
# the stages live in private siblings (trace -> fuse -> layout -> lower); the names _capture_native and callers reach
# through this module are re-exported here
from ._capture_trace import CaptureError, _Graph, _Op, _capture, _flatten_output, _unflatten_output
from ._capture_fuse import _output_slots, activation, eliminate_dead_code, fuse  # noqa: F401
from ._capture_layout import to_nhwc  # noqa: F401
from ._capture_lower import (EXECUTORS, _Plan, conv_nhwc_operands, last_reads, linear_operands,  # noqa: F401
                             lower_python_step, plan_arena, plan_buffers)

if TYPE_CHECKING:  # annotations only: importing nn here would be circular
    from .nn.modules.module import Module

__all__ = ["compile", "CompiledModule", "CaptureError"]


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
        # Winograd's float32 error (up to ~1e-5 of a conv's largest output), not a fault, can put a deep or
        # ill-conditioned net outside the tolerance: the same plan with direct convs, and every fallback below, too
        with _select.direct_plans():
            if plan.winograd_convs:
                plan = _Plan(_copy_graph(g), optimise=self.optimise, executor=self.executor)
                if self._matches(plan, x1, ref1) and self._matches(plan, x2, ref2):
                    return plan
            if plan.native is not None:  # the native executor's own fault? the Python executor runs the same plan
                py_plan = _Plan(_copy_graph(g), optimise=self.optimise, executor="python")
                if self._matches(py_plan, x1, ref1) and self._matches(py_plan, x2, ref2):
                    py_plan.native_error = ("the native plan differed from eager (or failed); the Python executor "
                                            "did not")
                    warnings.warn("flowvision.compile: the native plan executor differs from eager; using the "
                                  "Python executor for this input", RuntimeWarning, stacklevel=3)
                    return py_plan
            if self.optimise:  # is it the passes? the unoptimised replay is the recorded ops themselves
                plain = _Plan(_copy_graph(g), optimise=False, executor=self.executor)
                if self._matches(plain, x1, ref1) and self._matches(plain, x2, ref2):
                    warnings.warn("flowvision.compile: the optimised plan differs from eager; running the recorded "
                                  "ops without fusion", RuntimeWarning, stacklevel=3)
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
        return _unflatten_output(wrapped, plan.graph.out_struct)

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

    Examples:
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
