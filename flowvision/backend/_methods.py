"""Attach the op functions to Tensor as methods, operators and in-place ``_`` variants."""
from ._tensor import Tensor
from ._ops import elementwise as E, shape as S, reduce as R, linalg as L, inplace as I
from . import _creation as C
from ._ops._util import is_scalar

_METHODS = {
    # elementwise
    "add": E.add, "sub": E.sub, "subtract": E.sub, "mul": E.mul, "multiply": E.mul, "div": E.div,
    "divide": E.div, "true_divide": E.div, "floor_divide": E.floor_divide, "remainder": E.remainder,
    "fmod": E.fmod, "pow": E.pow, "float_power": E.float_power, "maximum": E.maximum, "minimum": E.minimum,
    "atan2": E.atan2, "neg": E.neg, "negative": E.neg, "abs": E.abs, "absolute": E.abs, "sign": E.sign,
    "exp": E.exp, "exp2": E.exp2, "expm1": E.expm1, "log": E.log, "log2": E.log2, "log10": E.log10,
    "log1p": E.log1p, "sqrt": E.sqrt, "rsqrt": E.rsqrt, "sin": E.sin, "cos": E.cos, "tan": E.tan,
    "asin": E.asin, "acos": E.acos, "atan": E.atan, "arcsin": E.asin, "arccos": E.acos, "arctan": E.atan,
    "sinh": E.sinh, "cosh": E.cosh, "tanh": E.tanh, "sigmoid": E.sigmoid, "erf": E.erf, "erfc": E.erfc,
    "erfinv": E.erfinv, "reciprocal": E.reciprocal, "square": E.square, "floor": E.floor, "ceil": E.ceil,
    "trunc": E.trunc, "fix": E.trunc, "frac": E.frac, "round": E.round, "clamp": E.clamp, "clip": E.clamp,
    "clamp_min": E.clamp_min, "clamp_max": E.clamp_max, "eq": E.eq, "ne": E.ne, "lt": E.lt, "le": E.le,
    "gt": E.gt, "ge": E.ge, "greater": E.gt, "less": E.lt, "greater_equal": E.ge, "less_equal": E.le,
    "not_equal": E.ne, "logical_and": E.logical_and, "logical_or": E.logical_or,
    "logical_xor": E.logical_xor, "logical_not": E.logical_not, "bitwise_and": E.bitwise_and,
    "bitwise_or": E.bitwise_or, "bitwise_xor": E.bitwise_xor, "bitwise_not": E.bitwise_not,
    "isnan": E.isnan, "isinf": E.isinf, "isfinite": E.isfinite, "isclose": E.isclose, "allclose": E.allclose,
    "equal": E.equal, "masked_fill": E.masked_fill, "lerp": E.lerp, "addcmul": E.addcmul, "addcdiv": E.addcdiv,
    "nonzero": E.nonzero, "argwhere": E.argwhere, "hypot": E.hypot, "logaddexp": E.logaddexp,
    "where": lambda self, cond, other: E.where(cond, self, other),
    # shape
    "view": S.view, "reshape": S.reshape, "view_as": S.view_as, "reshape_as": S.reshape_as,
    "flatten": S.flatten, "unflatten": S.unflatten, "permute": S.permute, "transpose": S.transpose,
    "swapaxes": S.transpose, "swapdims": S.transpose, "t": S.t, "movedim": S.movedim, "moveaxis": S.movedim,
    "squeeze": S.squeeze, "unsqueeze": S.unsqueeze, "expand": S.expand, "expand_as": S.expand_as,
    "broadcast_to": S.broadcast_to, "contiguous": S.contiguous, "clone": S.clone, "narrow": S.narrow,
    "select": S.select, "split": S.split, "tensor_split": S.tensor_split, "chunk": S.chunk, "unbind": S.unbind,
    "flip": S.flip, "fliplr": S.fliplr, "flipud": S.flipud, "roll": S.roll, "repeat": S.repeat, "tile": S.tile,
    "repeat_interleave": S.repeat_interleave, "gather": S.gather, "scatter": S.scatter,
    "scatter_add": S.scatter_add, "index_select": S.index_select, "take": S.take,
    "masked_select": S.masked_select, "index_put": S.index_put, "tril": S.tril, "triu": S.triu,
    "diagonal": S.diagonal, "diag": S.diag, "trace": S.trace,
    # reductions
    "sum": R.sum, "mean": R.mean, "nansum": R.nansum, "nanmean": R.nanmean, "var": R.var, "std": R.std,
    "max": R.max, "min": R.min, "amax": R.amax, "amin": R.amin, "aminmax": R.aminmax, "argmax": R.argmax,
    "argmin": R.argmin, "prod": R.prod, "cumsum": R.cumsum, "cumprod": R.cumprod, "logsumexp": R.logsumexp,
    "norm": R.norm, "dist": R.dist, "sort": R.sort, "argsort": R.argsort, "msort": R.msort, "topk": R.topk,
    "kthvalue": R.kthvalue, "median": R.median, "any": R.any, "all": R.all, "count_nonzero": R.count_nonzero,
    "unique": R.unique, "bincount": R.bincount,
    # linalg
    "matmul": L.matmul, "mm": L.mm, "bmm": L.bmm, "mv": L.mv, "dot": L.dot, "inner": L.dot, "outer": L.outer,
    "ger": L.outer, "addmm": L.addmm, "baddbmm": L.baddbmm, "addbmm": L.addbmm,
    # in-place primitives
    "copy_": I.copy_, "fill_": I.fill_, "zero_": I.zero_, "__setitem__": I.setitem, "__getitem__": S.getitem,
    # random fills
    "uniform_": C.uniform_, "normal_": C.normal_, "bernoulli_": C.bernoulli_, "random_": C.random_,
    "exponential_": C.exponential_,
}

_INPLACE = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "neg", "abs", "sign",
    "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
    "erf", "erfinv", "reciprocal", "square", "floor", "ceil", "trunc", "frac", "round", "clamp", "clip",
    "clamp_min", "clamp_max", "masked_fill", "lerp", "addcmul", "addcdiv", "logical_not", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "scatter", "scatter_add",
    "index_put", "tril", "triu", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "atan2", "hypot",
]


def _bind():
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    for name in _INPLACE:
        setattr(Tensor, name + "_", I.make_inplace(_METHODS[name]))

    def _swap(fn):
        def r(self, other):
            if not (isinstance(other, Tensor) or is_scalar(other)):
                return NotImplemented
            return fn(other, self)
        return r

    def _fwd(fn):
        def f(self, other):
            if not (isinstance(other, Tensor) or is_scalar(other)):
                return NotImplemented
            return fn(self, other)
        return f

    ops = {"add": E.add, "sub": E.sub, "mul": E.mul, "truediv": E.div, "floordiv": E.floor_divide,
           "mod": E.remainder, "pow": E.pow, "matmul": L.matmul, "and": E.bitwise_and, "or": E.bitwise_or,
           "xor": E.bitwise_xor}
    for n, fn in ops.items():
        setattr(Tensor, f"__{n}__", _fwd(fn))
        setattr(Tensor, f"__r{n}__", _swap(fn))
        setattr(Tensor, f"__i{n}__", _fwd(I.make_inplace(fn)))
    for n, fn in {"eq": E.eq, "ne": E.ne, "lt": E.lt, "le": E.le, "gt": E.gt, "ge": E.ge}.items():
        setattr(Tensor, f"__{n}__", _fwd(fn))
    Tensor.__neg__ = E.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = E.abs
    Tensor.__invert__ = E.bitwise_not
    Tensor.T = property(lambda self: S.permute(self, tuple(reversed(range(self.ndim)))))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.H = Tensor.T
    Tensor.mH = Tensor.mT
    # new_* follow the source tensor's dtype and device unless told otherwise (torch's rule)
    def _like(self, dtype, k):
        return dict(dtype=dtype or self._dtype, device=k.get("device") or self.device)
    Tensor.new_tensor = lambda self, data, dtype=None, **k: C.tensor(data, **_like(self, dtype, k))
    Tensor.new_zeros = lambda self, *size, dtype=None, **k: C.zeros(*size, **_like(self, dtype, k))
    Tensor.new_ones = lambda self, *size, dtype=None, **k: C.ones(*size, **_like(self, dtype, k))
    Tensor.new_empty = lambda self, *size, dtype=None, **k: C.empty(*size, **_like(self, dtype, k))
    Tensor.new_full = lambda self, size, fill_value, dtype=None, **k: C.full(size, fill_value, **_like(self, dtype, k))
    Tensor.type_as = lambda self, other: self.to(other._dtype)
    Tensor.bernoulli = lambda self, p=None, generator=None: C.bernoulli(self, p, generator=generator)
    Tensor.multinomial = lambda self, n, replacement=False, generator=None: C.multinomial(self, n, replacement, generator=generator)
    Tensor.__eq__.__doc__ = "elementwise equality (like torch, not identity)"

    def _nn_method(name):  # torch's Tensor.softmax & co.; nn.functional loads on first use
        def method(self, *args, **kwargs):
            from .nn import functional as F
            return getattr(F, name)(self, *args, **kwargs)
        method.__name__ = name
        return method
    for name in ("softmax", "log_softmax", "relu", "relu_"):
        setattr(Tensor, name, _nn_method(name))

    # a range index is a list of positions in torch (x[range(3)] == x[[0, 1, 2]])
    def _ranges(index):
        if type(index) is range:
            return list(index)
        if type(index) is tuple and any(type(i) is range for i in index):
            return tuple(list(i) if type(i) is range else i for i in index)
        return index
    Tensor.__getitem__ = lambda self, index: S.getitem(self, _ranges(index))
    Tensor.__setitem__ = lambda self, index, value: I.setitem(self, _ranges(index), value)

    # host memory is directly usable by every device path here: pinning returns the tensor itself
    Tensor.pin_memory = lambda self, device=None: self
    Tensor.is_pinned = lambda self, device=None: False
    for flag in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_mkldnn", "is_nested"):
        setattr(Tensor, flag, property(lambda self: False))

    def share_memory_(self):
        """Move the storage into shared memory in place (see ``flowvision.backend.multiprocessing``)."""
        from .multiprocessing._shared import share_memory_ as share
        return share(self)

    def is_shared(self):
        from .multiprocessing._shared import is_shared as shared
        return shared(self)
    Tensor.share_memory_ = share_memory_
    Tensor.is_shared = is_shared


_bind()
