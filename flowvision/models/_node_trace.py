"""Node names as torchvision's feature extraction gives them, by recording one real forward pass.

torchvision traces with torch.fx: a call of a leaf module (torch.nn / torchvision.ops classes, not containers) is one
node named by its qualified name; inside other modules every function, tensor method, operator and parameter read
is a node named ``{module path}.{op}``, with ``_1``, ``_2``... for repeats within the same parent (their
``NodePathTracer`` rule).  Here the same names come from a concrete run: forward hooks give the module nesting, and
while the recorder is active the Tensor operators/methods, the ``flowvision.backend`` / ``nn.functional`` functions
and ``Module.__getattr__`` (parameter reads) note the node before running unchanged.  Ops called inside a leaf
module or inside another recorded op are not nodes, as in fx.  Only the path taken by this input is recorded
(fx cannot trace data-dependent control flow at all).  Shape reads (``x.shape``, ``x.dim()``), the arithmetic and
comparisons on the sizes they give, and the unpacking of a leaf module's tuple output are nodes only inside modules
that declare ``fx_shape_nodes = True`` (forwards written as torchvision's, such as its ViT): elsewhere the engine's
own input checks read shapes that torchvision's graphs do not have.

The recorder patches process-wide attributes for the duration of one forward, under a lock: do not run other
models in other threads meanwhile.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict

_LOCK = threading.RLock()

# fx's node names for Python operators (operator.add -> "add", ...); in-place forms trace as the plain operator
_DUNDERS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add", "__sub__": "sub", "__rsub__": "sub", "__isub__": "sub",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul", "__truediv__": "truediv", "__rtruediv__": "truediv",
    "__itruediv__": "truediv", "__floordiv__": "floordiv", "__matmul__": "matmul", "__rmatmul__": "matmul",
    "__pow__": "pow", "__neg__": "neg", "__getitem__": "getitem", "__eq__": "eq", "__lt__": "lt", "__gt__": "gt",
}
_METHODS = ("permute", "reshape", "view", "flatten", "transpose", "mean", "sum", "softmax", "sigmoid", "relu",
            "contiguous", "expand", "unsqueeze", "squeeze", "chunk", "split", "unbind", "add", "mul", "div", "sub",
            "matmul", "exp", "tanh", "clamp", "max", "min", "norm", "roll", "masked_fill", "type_as", "to", "float",
            "repeat", "gelu", "pow", "sqrt", "amax", "argmax", "narrow", "view_as", "flip", "bmm", "abs")
_TORCH_FUNCS = ("flatten", "cat", "stack", "add", "mul", "matmul", "bmm", "relu", "sigmoid", "softmax", "tanh",
                "permute", "reshape", "transpose", "mean", "sum", "roll", "chunk", "split", "unsqueeze", "squeeze",
                "einsum", "exp", "where", "clamp", "max", "min", "norm", "sqrt", "arange", "zeros", "ones", "_assert")
_F_FUNCS = ("relu", "relu6", "gelu", "silu", "hardswish", "hardsigmoid", "sigmoid", "softmax", "log_softmax",
            "layer_norm", "batch_norm", "group_norm", "linear", "conv2d", "dropout", "adaptive_avg_pool2d",
            "adaptive_max_pool2d", "avg_pool2d", "max_pool2d", "interpolate", "pad", "normalize",
            "scaled_dot_product_attention", "embedding", "mish", "leaky_relu", "elu")


class _Size(tuple):
    """``x.shape`` under the recorder: indexing and unpacking it are ``getitem`` nodes giving ``_SizeInt``s."""

    def __getitem__(self, i):
        value = tuple.__getitem__(self, i)
        value = _SizeInt(value) if isinstance(value, int) else value
        _report("getitem", value)
        return value

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class _SizeInt(int):
    """A size under the recorder: ``==``, ``//`` and ``*`` on it are nodes (``eq``, ``floordiv``, ``mul``)."""

    def _node(self, op, value):
        _report(op, value)
        return value

    # the other operand as a plain int: a _SizeInt there would record the operation a second time (reflected)
    def __eq__(self, other):
        return self._node("eq", int(self) == (int(other) if isinstance(other, int) else other))

    def __floordiv__(self, other):
        return self._node("floordiv", _SizeInt(int(self) // (int(other) if isinstance(other, int) else other)))

    def __mul__(self, other):
        return self._node("mul", _SizeInt(int(self) * (int(other) if isinstance(other, int) else other)))

    __rmul__ = __mul__
    __hash__ = int.__hash__


class _Unpacked(tuple):
    """A leaf module's tuple output: unpacking it is one ``getitem`` node per element."""

    def __iter__(self):
        for i in range(len(self)):
            _report("getitem", tuple.__getitem__(self, i))
            yield tuple.__getitem__(self, i)


_ACTIVE = []  # the recorder in progress (the sizes and tuples above report to it)


def _report(op: str, value) -> None:
    if _ACTIVE:
        _ACTIVE[-1].shape_node(op, value)


def _leaf_classes():
    from ..backend import nn
    return nn.Sequential, nn.ModuleList, nn.ModuleDict


def is_leaf(module) -> bool:
    """torchvision's default: torch.nn modules (not containers) and torchvision.ops modules are leaves."""
    mod = type(module).__module__
    if mod.startswith("flowvision.ops"):
        return True  # torchvision registers its ops' modules (Conv2dNormActivation, ...) as leaves
    return mod.startswith("flowvision.backend.nn") and not isinstance(module, _leaf_classes())


def _unique(name: str, taken: list) -> str:
    """torchvision NodePathTracer's suffix rule (strip a trailing _N, then number repeats from the last match)."""
    if re.match(r".+_[0-9]+$", name) is not None:
        name = name.rsplit("_", 1)[0]
    for existing in reversed(taken):
        if re.match(rf"{name}(_[0-9]+)?$", existing) is not None:
            postfix = existing.replace(name, "")
            name += f"_{int(postfix[1:]) + 1}" if len(postfix) else "_1"
            break
    return name


class Recorder:
    """Records node names (and, for ``capture``, their outputs) during one forward of ``model``."""

    def __init__(self, model, capture=None):
        self.model = model
        self.paths = {id(m): n for n, m in model.named_modules()}
        self.stack = []      # (module, is_leaf) of the calls in progress
        self.leaf_depth = 0  # leaf modules in progress: everything below them is hidden, as in fx
        self.op_depth = 0
        self.names = ["x"]
        self.capture = capture  # set of names whose outputs to keep
        self.outputs = {}

    # ---------------------------------------------------------------- naming
    def _scope(self):
        """The qualified name of the innermost traced (non-leaf) module, or None inside a leaf / nested op."""
        if self.op_depth or self.leaf_depth:
            return None
        return self.paths.get(id(self.stack[-1][0]), "") if self.stack else ""

    def _add(self, qual: str, value=None) -> None:
        name = _unique(qual, self.names)
        self.names.append(name)
        if self.capture is not None and name in self.capture:
            self.outputs[name] = value

    def node(self, op: str):
        scope = self._scope()
        if scope is None:
            return None
        return (scope + "." if scope else "") + op

    def shape_nodes_here(self) -> bool:
        """Inside a module whose shape reads are graph nodes (``fx_shape_nodes``), outside leaves and ops."""
        return self._scope() is not None and bool(self.stack) and \
            getattr(self.stack[-1][0], "fx_shape_nodes", False)

    def shape_node(self, op: str, value) -> None:
        if self.shape_nodes_here():
            self._add(self.node(op), value)

    # ---------------------------------------------------------------- patching
    def _wrap(self, fn, op):
        rec = self

        def inner(*args, **kwargs):
            qual = rec.node(op)
            if qual is None:
                return fn(*args, **kwargs)
            rec.op_depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                rec.op_depth -= 1
            rec._add(qual, out)
            return out
        inner.__wrapped__ = fn
        return inner

    def __enter__(self):
        _LOCK.acquire()
        from ..backend import Tensor, nn
        from ..backend.nn import functional as F
        from .. import backend as B
        self._saved = []

        def patch(owner, attr, op):
            orig = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
            if orig is None or not callable(orig):
                return
            self._saved.append((owner, attr, orig))
            setattr(owner, attr, self._wrap(orig, op))
        for d, op in _DUNDERS.items():
            patch(Tensor, d, op)
        for m in _METHODS:
            patch(Tensor, m, m)
        for f in _TORCH_FUNCS:
            if f in B.__dict__:
                patch(B, f, f)
        for f in _F_FUNCS:
            patch(F, f, f)
        rec = self
        shape = Tensor.__dict__["shape"]
        dim = Tensor.__dict__["dim"]

        def shape_hook(t):
            if not rec.shape_nodes_here():
                return shape.fget(t)
            size = _Size(shape.fget(t))
            rec.shape_node("getattr", size)
            return size

        def dim_hook(t):
            if not rec.shape_nodes_here():
                return dim(t)
            ndim = _SizeInt(dim(t))
            rec.shape_node("dim", ndim)
            return ndim
        self._saved += [(Tensor, "shape", shape), (Tensor, "dim", dim)]
        Tensor.shape, Tensor.dim = property(shape_hook), dim_hook
        orig_getattr = nn.Module.__getattr__

        def getattr_hook(mod, name):
            value = orig_getattr(mod, name)
            if isinstance(value, Tensor) and rec.stack and rec.stack[-1][0] is mod:
                scope = rec._scope()
                if scope is not None:
                    target = (scope + "." if scope else "") + name
                    rec._add((scope + "." if scope else "") + target.replace(".", "_"), value)
            return value
        self._saved.append((nn.Module, "__getattr__", orig_getattr))
        nn.Module.__getattr__ = getattr_hook
        _ACTIVE.append(self)
        self._handles = []
        for m in self.model.modules():
            self._handles.append(m.register_forward_pre_hook(self._pre))
            self._handles.append(m.register_forward_hook(self._post))
        return self

    def _pre(self, module, args):
        leaf = is_leaf(module)
        self.stack.append((module, leaf))
        self.leaf_depth += leaf

    def _post(self, module, args, output):
        _, leaf = self.stack.pop()
        self.leaf_depth -= leaf
        if leaf:
            scope = self._scope()
            if scope is not None:
                self._add(self.paths.get(id(module), ""), output)
                if isinstance(output, tuple) and type(output) is tuple and self.shape_nodes_here():
                    return _Unpacked(output)
        return None

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        for owner, attr, orig in reversed(self._saved):
            setattr(owner, attr, orig)
        _ACTIVE.pop()
        _LOCK.release()
        return False


def trace_names(model, example_input, capture=None):
    """(node names, captured outputs) of one forward of ``model`` on ``example_input``."""
    with Recorder(model, capture) as rec:
        out = model(example_input)
    if capture is not None and "x" in capture:
        rec.outputs["x"] = example_input
    return rec.names, OrderedDict(rec.outputs), out
