"""Module full backward hooks: ``hook(module, grad_input, grad_output)`` once the gradients with respect to the
module's tensor inputs are known (torch's ``register_full_backward_hook`` contract).

The module's tensor inputs and outputs pass through identity autograd functions: the output one records
``grad_output`` (and runs backward pre-hooks, which may replace it); the input one receives ``grad_input``,
runs the hooks, and hands on what they return.  When no input requires grad the hooks run at the output with
``grad_input`` all None, as torch does.
"""
from __future__ import annotations

from ...autograd import Function
from ..._tensor import Tensor


class _State:
    def __init__(self, module, n_inputs):
        self.module, self.n_inputs = module, n_inputs
        self.grad_output = None


class _OutputIdentity(Function):
    @staticmethod
    def forward(ctx, state, call_hooks_here, *outputs):
        ctx.state, ctx.call_hooks_here = state, call_hooks_here
        return tuple(o.view_as(o) for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        st = ctx.state
        for hook in list(st.module._backward_pre_hooks.values()):
            res = hook(st.module, grads)
            if res is not None:
                grads = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        st.grad_output = grads
        if ctx.call_hooks_here:
            for hook in list(st.module._backward_hooks.values()):
                hook(st.module, (None,) * st.n_inputs, grads)
        return (None, None) + tuple(grads)


class _InputIdentity(Function):
    @staticmethod
    def forward(ctx, state, *inputs):
        ctx.state = state
        return tuple(i.view_as(i) for i in inputs)

    @staticmethod
    def backward(ctx, *grads):
        st = ctx.state
        for hook in list(st.module._backward_hooks.values()):
            res = hook(st.module, grads, st.grad_output)
            if res is not None:
                res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                if len(res) != len(grads):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(res)}, "
                                       f"but expected {len(grads)}")
                grads = res
        return (None,) + tuple(grads)


def call_with_backward_hooks(module, forward, args, kwargs):
    """Run ``forward(*args, **kwargs)`` with the module's backward (pre-)hooks wired around it."""
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    state = _State(module, len(tensor_pos) if tensor_pos else 1)
    if tensor_pos:
        wrapped = _InputIdentity.apply(state, *[args[i] for i in tensor_pos])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        args = list(args)
        for i, w in zip(tensor_pos, wrapped):
            args[i] = w
        args = tuple(args)
    result = forward(*args, **kwargs)
    outs = result if isinstance(result, tuple) else (result,)
    out_pos = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not out_pos:
        return result
    new = _OutputIdentity.apply(state, not tensor_pos, *[outs[i] for i in out_pos])
    new = new if isinstance(new, tuple) else (new,)
    outs = list(outs)
    for i, o in zip(out_pos, new):
        outs[i] = o
    return tuple(outs) if isinstance(result, tuple) else outs[0]
