"""User-defined ops: ``class MyOp(autograd.Function)`` with ``forward(ctx, ...)``/``backward(ctx, ...)``
on Tensors, as in torch."""
from .grad_mode import no_grad, is_grad_enabled
from .graph import Node, _edge, _compute_np


class FunctionCtx:
    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._materialize_grads = True
        self._saved_versions = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors
        self._saved_versions = tuple((t._version, t._version[0], t.shape, t._dtype.name)
                                     for t in tensors if t is not None)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)


class _UserBackward:
    """Adapter: runs the user's Tensor-level backward from the engine's array-level call."""

    def __init__(self, fn_cls):
        self.fn_cls = fn_cls
        self.__name__ = fn_cls.__name__
        self.backward_name = f"{fn_cls.__name__}Backward"

    def backward(self, ctx, *grads):
        from .._tensor import Tensor
        from .. import _dtype as D
        gts = [Tensor._wrap(g, D.from_numpy_dtype(g.dtype)) for g in grads]
        with no_grad():
            res = self.fn_cls.backward(ctx, *gts)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(ctx.needs_input_grad)
        if len(res) < n_in:
            raise RuntimeError(f"function {self.fn_cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {n_in}, got {len(res)})")
        return tuple(r._compute() if isinstance(r, Tensor) else None for r in res[:n_in])


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; call ``.apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        if is_grad_enabled() and any(ctx.needs_input_grad):
            adapter = _UserBackward(cls)
            nf = tuple(_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
            in_dtypes = tuple(_compute_np(a._dtype) if isinstance(a, Tensor) else None for a in args)
            meta = tuple((tuple(o.shape), _compute_np(o._dtype)) for o in outs if isinstance(o, Tensor))
            node = Node(adapter, ctx, nf, meta, in_dtypes)
            node.saved_versions = ctx._saved_versions
            new_outs = []
            for i, o in enumerate(outs):
                if isinstance(o, Tensor):
                    if any(o is a for a in args):  # returned an input as-is: give it its own identity
                        o = o.view_as(o)
                    if id(o) not in ctx._non_differentiable and (o._dtype.is_floating_point or o._dtype.is_complex):
                        o._grad_fn, o._output_nr = node, i
                        o.requires_grad_flag = True
                new_outs.append(o)
            outs = tuple(new_outs)
        return outs[0] if single else outs
