"""torch.autograd look-alike: backward, grad, Function, grad-mode switches."""
import numpy as np

from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled  # noqa: F401
from .graph import run_backward, Node, _edge
from .function import Function, FunctionCtx  # noqa: F401
from . import gradcheck as _gradcheck_mod  # noqa: F401
from .gradcheck import gradcheck  # noqa: F401

__all__ = ["backward", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "gradcheck"]


def _roots(tensors, grad_tensors, name):
    from .._tensor import Tensor
    roots = []
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"{name}: got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn "
                               f"(a {t._dtype.name}{list(t.shape)} tensor computed from inputs none of which "
                               "requires grad)")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs (got a tensor of shape "
                                   f"{list(t.shape)}); pass gradient= with the same shape")
            g = np.ones(tuple(t.shape), t._compute().dtype)
        else:
            g = g._compute() if isinstance(g, Tensor) else np.asarray(g, t._compute().dtype)
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {list(g.shape)} and output[0] "
                                   f"has a shape of {list(t.shape)}.")
        node, nr = _edge(t)
        roots.append((node, nr, g))
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    from .._tensor import Tensor
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported: flowvision's "
                                  "backward formulas run on numpy arrays")
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    if isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    roots = _roots(list(tensors), None if grad_tensors is None else list(grad_tensors), "backward")
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        grads = _grad_impl(roots, inputs, bool(retain_graph), allow_unused=True)
        for t, g in zip(inputs, grads):
            if g is not None:
                if t.grad is None:
                    t.grad = Tensor._wrap(np.array(g._data, copy=True), t._dtype)
                else:
                    t.grad._data = t.grad._data + g._data
        return
    run_backward(roots, bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    from .._tensor import Tensor
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported: flowvision's "
                                  "backward formulas run on numpy arrays")
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    roots = _roots(outputs, grad_outputs, "grad")
    res = _grad_impl(roots, inputs, bool(retain_graph), bool(allow_unused) or materialize_grads)
    if materialize_grads:
        from .._creation import zeros_like
        res = [zeros_like(t) if g is None else g for t, g in zip(inputs, res)]
    return tuple(res)


def _grad_impl(roots, inputs, retain_graph, allow_unused):
    from .._tensor import Tensor
    from .. import _dtype as D
    capture = {}
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
        node, nr = _edge(t)
        capture[(id(node), nr)] = i
    captured = run_backward(roots, retain_graph, capture=capture)
    out = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
            out.append(None)
        else:
            out.append(Tensor._wrap(np.asarray(g).astype(t._compute().dtype, copy=False),
                                    D.float32 if t._dtype is D.bfloat16 else t._dtype))
    return out
