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

The plan is validated before use: it must equal eager (rtol 1e-4, and an absolute 1e-5 of the largest output, 4e-5
with Winograd convs) on the example input and on a second random input of the same shape. If it does not (an op
that bypasses ``Function.apply``, data-dependent control flow) the module falls back to eager with a warning naming
the first diverging op. Plans are cached
per input (shape, dtype); a new shape or dtype captures and validates again. Constants are keyed on the
parameters' and buffers' ``_version`` counters: an in-place update, optimizer step or ``load_state_dict``
re-plans on the next call. Writes that bypass the tensor API (``w.numpy()[:] = ...``) are not seen: call
``compiled.reset()`` (or compile again) after those.
"""
import threading
import warnings

import numpy as np

from . import _dtype as D
from ._tensor import Tensor
from ._ops import kernel_select as _select
from .autograd import graph as _graph
from .autograd.graph import _compute_array
from .autograd.grad_mode import is_grad_enabled, no_grad
from .nn.modules.module import Module
# the stages live in private siblings (trace -> fuse -> layout -> lower); the names _capture_native and callers reach
# through this module are re-exported here
from ._capture_trace import CaptureError, _Graph, _Op, _capture, _flatten_output, _unflatten_output
from ._capture_fuse import _output_slots, activation, eliminate_dead_code, fuse  # noqa: F401
from ._capture_layout import to_nhwc  # noqa: F401
from ._capture_lower import (EXECUTORS, _Plan, conv_nhwc_operands, last_reads, linear_operands,  # noqa: F401
                             lower_python_step, plan_arena, plan_buffers)


__all__ = ["compile", "CompiledModule", "CaptureError"]


# ------------------------------------------------------------------ validation
# The absolute part of the validation tolerance, as a fraction of rtol times the output's largest magnitude. A plan
# with Winograd convs gets the larger one: F(4x4, 3x3) in float32 errs by up to ~2e-5 of a conv's largest output
# (tests/test_kernels_winograd.py bounds it at 4e-5), above the direct kernels' ~1e-6 and above 0.1 x rtol. The
# 256-channel 3x3 conv of Faster R-CNN's RPN head on its 200 x 272 level errs by 1.7e-5 and ran direct, 2.2x slower.
_ATOL_FRACTION = 0.1
_ATOL_FRACTION_WINOGRAD = 0.4


def _close(a, b, rtol, atol_fraction=_ATOL_FRACTION):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not np.issubdtype(a.dtype, np.floating):
        return np.array_equal(a, b)
    scale = float(np.max(np.abs(b[np.isfinite(b)]))) if np.isfinite(b).any() else 1.0
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * atol_fraction * max(scale, 1e-6), equal_nan=True))


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
    # each recorded op replayed alone on the inputs eager gave it: an op that differs by itself reads a value the
    # capture did not see; differences that only build up along the chain are float32 rounding
    plan = _Plan(_copy_graph(g_ref), optimise=False, executor="python")
    for fn, ins, outs, _, op in plan.steps:
        got = fn(*[np.array(g2.values[s], copy=True) for s in ins])
        got = [got] if len(outs) == 1 else list(got)
        for s, v in zip(outs, got):
            if not _close(np.asarray(v), g2.values[s], max(rtol, 1e-3)):  # an unseen value: O(1) differences
                return (f"op #{op.index} {op.cls.__name__} (output {list(g_ref.meta[s][0])}): its inputs depend on a "
                        "value the capture could not see (an op outside Function.apply, or state read as a constant)")
    if any(o[0] == "c" for o in g_ref.outputs):
        return "an output is not produced by recorded ops (it was read as a constant)"
    got = plan.run(np.array(x2, copy=True))
    refs = [g2.values[o[1]] for o in g2.outputs]
    worst = max(float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))), 1e-30) for a, b in zip(got, refs))
    return (f"every op matches eager on its own, but the float32 rounding accumulated through the network (up to "
            f"{worst:.2g} of the largest output on a random input) fails the rtol={rtol:g} check; pass a larger "
            "rtol if that error is acceptable")


def _copy_graph(g):
    h = _Graph()
    h.ops = [_Op(op.kind, op.cls, op.args, op.kwargs, list(op.outs), dict(op.attrs), op.index) for op in g.ops]
    h.meta, h.outputs, h.out_struct, h.const_src = list(g.meta), list(g.outputs), g.out_struct, g.const_src
    h.pack_cache = g.pack_cache
    return h


# ------------------------------------------------------------------ the module
def _state_versions(model):
    ts = list(model.parameters()) + [b for b in model.buffers() if b is not None]
    return ts, tuple(t._version[0] for t in ts)


def _in_training(model):
    return model.training or any(m.training for m in model.modules())


_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class CompiledModule(Module):
    """The module ``compile()`` returns: ``compiled(x)`` equals ``model(x)`` (eval mode, no gradient).

    It is an ``nn.Module`` wrapping the model as ``_orig_mod`` (torch's ``OptimizedModule`` layout): it can be
    assigned as a child (``model.backbone = flowvision.compile(model.backbone)``), its ``state_dict`` keys start
    with ``_orig_mod.``, and attributes it does not have are read from the model. Plans are made per input
    (shape, dtype), at most ``max_plans`` of them; the calls the captured path does not take run the model
    eagerly: training mode, an input that requires grad (with grad enabled), anything but one Tensor argument,
    shapes past ``max_plans``, and calls made while an outer ``compile`` is capturing.

    ``plans`` maps (shape, dtype) to the plan in use (``None``: eager fallback for that input); ``explain(x)``
    prints the steps of the plan for ``x``'s shape; ``fallback_reason`` holds the last fallback's message.
    """

    def __init__(self, model, optimise=True, validate=True, rtol=1e-4, executor="native", max_plans=8,
                 fullgraph=False):
        if executor not in EXECUTORS:
            raise ValueError(f"compile(): executor must be one of {EXECUTORS}, got {executor!r}")
        if int(max_plans) < 1:
            raise ValueError(f"compile(): max_plans must be at least 1, got {max_plans!r}")
        super().__init__()
        self._orig_mod = model
        self.training = model.training
        self.executor = executor
        self.optimise = optimise
        self.validate = validate
        self.rtol = rtol
        self.max_plans = int(max_plans)
        self.fullgraph = fullgraph
        self.fallback_reason = None
        self._init_plans()

    def _init_plans(self):
        self.plans = {}
        # packed weights by content, shared by this module's plans: a new input shape adds activations only
        self._packs = {}
        self._warned = set()
        self._lock = threading.Lock()
        self._state, self._versions = _state_versions(self._orig_mod)

    @property
    def model(self) -> "Module":
        """The wrapped model (``_orig_mod``)."""
        return self._modules["_orig_mod"]

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            mods = self.__dict__.get("_modules")
            if mods is None or "_orig_mod" not in mods:
                raise
            return getattr(mods["_orig_mod"], name)

    def __getstate__(self):  # plans hold native executors and a lock: a copy re-plans on first use
        state = super().__getstate__()
        for k in ("plans", "_packs", "_warned", "_lock", "_state", "_versions"):
            state.pop(k, None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._init_plans()

    def _apply(self, fn, recurse=True):  # .to() / .double() / .half() replace the weights' arrays
        out = super()._apply(fn, recurse)
        self.reset()
        return out

    def reset(self):
        """Forget every plan (after writing weights outside the tensor API)."""
        self.plans.clear()
        self._packs.clear()
        self._state, self._versions = _state_versions(self.model)

    def _check_versions(self):
        if tuple(t._version[0] for t in self._state) != self._versions:
            self.reset()

    def _plan_for(self, x):
        key = (tuple(x.shape), x._dtype)
        if key in self.plans:
            return self.plans[key]
        if len(self.plans) >= self.max_plans:
            self._warn_once("max_plans", f"flowvision.compile: {len(self.plans)} input shapes already have plans "
                            f"(max_plans={self.max_plans}); other shapes run eagerly")
            return None
        plan = self._build(x)
        self.plans[key] = plan
        return plan

    def _warn_once(self, key, message):
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=4)

    def _build(self, x):
        if _in_training(self.model):
            raise RuntimeError("flowvision.backend.compile() captures inference: call model.eval() first")
        dtype = x._dtype
        x1 = np.array(_compute_array(x), copy=True)
        try:
            g, ref1 = _capture(self.model, x1, dtype)
        except CaptureError as e:
            return self._fallback(f"capture failed: {e}")
        g.pack_cache = self._packs
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
        if self.fullgraph:
            raise CaptureError(f"flowvision.compile(fullgraph=True): the model cannot be captured: {why}")
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
        frac = _ATOL_FRACTION_WINOGRAD if getattr(plan, "winograd_convs", 0) else _ATOL_FRACTION
        return len(got) == len(ref) and all(_close(a, b, self.rtol, frac) for a, b in zip(got, ref))

    def _eager_reason(self, args, kwargs):
        """Why this call takes the eager model instead of a plan (None: it takes a plan)."""
        if len(args) != 1 or kwargs or not isinstance(args[0], Tensor):
            return "args"
        if _graph._RECORDER is not None:  # an outer compile is capturing: it must see the ops themselves
            return "capturing"
        if _in_training(self.model):
            return "training"
        if args[0].requires_grad and is_grad_enabled():
            return "grad"
        return None

    def forward(self, *args, **kwargs):
        why = self._eager_reason(args, kwargs)
        if why is not None:
            if why == "args":
                self._warn_once("args", "flowvision.compile: the captured path takes one Tensor argument; calls "
                                "with other arguments run eagerly")
            return self.model(*args, **kwargs)
        x = args[0]
        self._check_versions()
        plan = self._plan_for(x)
        if plan is None:
            with no_grad():
                return self.model(x)
        with self._lock:  # a plan's arena buffers are shared between calls: one call at a time
            outs = plan.run(_compute_array(x))
        wrapped = [Tensor._wrap(o, D.from_numpy_dtype(o.dtype)) for o in outs]
        return _unflatten_output(wrapped, plan.graph.out_struct)

    def explain(self, x: Tensor) -> str:
        """The steps of the plan for ``x``'s (shape, dtype), or why that input runs eagerly."""
        plan = self._plan_for(x)
        return "eager fallback: " + str(self.fallback_reason) if plan is None else plan.describe()


def compile(model: "Module", example_input: "Tensor | None" = None, *, optimise: bool = True,  # noqa: A001
            validate: bool = True, rtol: float = 1e-4, executor: str = "native", max_plans: int = 8,
            fullgraph: bool = False, dynamic: "bool | None" = None, mode: "str | None" = None,
            backend: str = "flowvision", options: "dict | None" = None, disable: bool = False) -> "Module":
    """Capture ``model`` (in eval mode) and return a :class:`CompiledModule` that runs it from plans.

    ``flowvision.compile(model)`` is called like ``torch.compile(model)``: the first call with each input
    (shape, dtype) captures, optimises and validates a plan. Giving ``example_input`` captures that input now.

    Args:
        model: a ``flowvision.backend.nn.Module``; calls in training mode run it eagerly.
        example_input: an input to capture now (the model must then be in eval mode); ``None`` captures on first
            use.
        optimise: run the graph passes (batch-norm folding, epilogue fusion).
        validate: check each plan against eager execution on its input and a random one (``rtol``) and fall back
            to eager for that input, with a warning, when they differ (``fallback_reason`` then says why).
        rtol: relative tolerance of that check; the absolute tolerance is ``0.1 * rtol`` of the output's largest
            magnitude, ``0.4 * rtol`` for a plan with Winograd convs (their float32 error is up to ~2e-5 of it).
        executor: ``"native"`` runs float32 plans in C++ (Python only for ops with no native step), ``"python"``
            runs every step from a Python loop (float64 plans always do).
        max_plans: at most this many input (shape, dtype) plans (torch's ``cache_size_limit``); other shapes run
            eagerly. Plans share their packed weights, so each adds only its activation buffers.
        fullgraph: raise :class:`CaptureError` instead of falling back to eager when a plan cannot be made.
        dynamic: accepted for ``torch.compile`` compatibility; plans are always made per input shape.
        mode: ``torch.compile``'s modes are accepted; there is one optimisation level.
        backend: ``"flowvision"`` (or torch's ``"inductor"``) captures; ``"eager"`` returns ``model`` unchanged.
        options: accepted for ``torch.compile`` compatibility; must be empty.
        disable: return ``model`` unchanged (as ``torch.compile(disable=True)`` does).

    Returns:
        A :class:`CompiledModule` (an ``nn.Module``) with the same outputs as ``model``, or ``model`` itself when
        ``disable`` is set or ``backend="eager"``.

    Raises:
        TypeError: ``example_input`` is not a Tensor, or ``model`` is not a Module.
        RuntimeError: an ``example_input`` is given and ``model`` (or a submodule) is in training mode.
        ValueError: an unknown ``executor``, ``mode`` or ``backend``, ``max_plans`` < 1, or ``options`` given.
        CaptureError: ``fullgraph=True`` and the model cannot be captured on ``example_input``.

    Examples:
        >>> import flowvision
        >>> from flowvision import backend as flow
        >>> nn = flow.nn
        >>> model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).eval()
        >>> x = flow.randn(1, 3, 16, 16)
        >>> fast = flowvision.compile(model)
        >>> bool(((fast(x) - model(x)).abs().max() < 1e-4).item())
        True
    """
    if not isinstance(model, Module):
        raise TypeError(f"compile(): expected a flowvision.backend.nn.Module, got {type(model).__name__}")
    if example_input is not None and not isinstance(example_input, Tensor):
        raise TypeError(f"compile(): example_input must be a Tensor, got {type(example_input).__name__}")
    if mode not in _MODES:
        raise ValueError(f"compile(): mode must be one of {_MODES}, got {mode!r}")
    if backend not in ("flowvision", "inductor", "eager"):
        raise ValueError(f"compile(): backend must be 'flowvision' (or 'inductor', its alias) or 'eager', "
                         f"got {backend!r}")
    if options:
        raise ValueError(f"compile(): options are not supported (got {sorted(options)})")
    if disable or backend == "eager":
        return model
    if example_input is not None and _in_training(model):
        raise RuntimeError("flowvision.backend.compile() captures inference: call model.eval() first")
    cm = CompiledModule(model, optimise=optimise, validate=validate, rtol=rtol, executor=executor,
                        max_plans=max_plans, fullgraph=fullgraph)
    if example_input is not None:
        cm._plan_for(example_input)
    return cm
