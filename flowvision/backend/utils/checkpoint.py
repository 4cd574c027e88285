"""``torch.utils.checkpoint``: recompute a segment's activations in the backward pass instead of storing them.

When some tensor input requires grad, the segment runs under ``no_grad`` in the forward pass (its activations
are freed) and is re-run with the saved RNG state during backward, where the inner graph's backward
accumulates the parameters' gradients, as torch's reentrant checkpoint does.  When no input requires grad
(e.g. the first block fed with images) the segment runs normally, so parameter gradients are still correct
(torch's non-reentrant mode gives the same gradients; here that case keeps its activations).
"""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import Function, backward as _autograd_backward
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from .. import random as _random

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Recompute(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.inputs = args
        outputs = run_function(*args)
        ctx.single = not isinstance(outputs, tuple)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                       for a in ctx.inputs)
        if ctx.rng_state is not None:
            current = _random.get_rng_state()
            _random.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if ctx.rng_state is not None:
                _random.set_rng_state(current)
        outputs = (outputs,) if not isinstance(outputs, tuple) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        with enable_grad():
            _autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its activations (see the module docstring)."""
    if kwargs:
        return checkpoint(lambda *a: function(*a, **kwargs), *args, preserve_rng_state=preserve_rng_state)
    if not is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        return function(*args)
    return _Recompute.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant=None, **kwargs):
    """Split ``functions`` (a Sequential or list) into ``segments`` chunks and checkpoint all but the last."""
    funcs = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    size = len(funcs) // segments if segments <= len(funcs) else 1

    def run(start, end):
        def forward(x):
            for f in funcs[start:end]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, **kwargs)
    return run(end + 1, len(funcs))(input)
