"""``autocast`` for CUDA ops: which ops run in reduced precision and which stay in float32
(the split torch.autocast uses for CUDA)."""
import threading

from .. import _dtype as D


class _State(threading.local):
    enabled = False
    dtype = None


state = _State()

# ops whose float32 inputs are cast to the autocast dtype (tensor-core friendly GEMMs)
LOWER = {"Conv2d", "Matmul", "Linear"}
# ops that run in float32 whatever their inputs (reductions that lose accuracy in 16 bits)
FLOAT32 = {"_Softmax", "LayerNorm", "GroupNorm", "Sum", "Mean", "Var", "Norm", "LogSumExp"}


class autocast:
    def __init__(self, enabled=True, dtype=None):
        self.enabled = bool(enabled)
        self.dtype = dtype or D.float16
        if self.dtype not in (D.float16, D.bfloat16):
            raise ValueError(f"autocast dtype must be float16 or bfloat16, got {self.dtype}")

    def __enter__(self):
        self.prev = (state.enabled, state.dtype)
        state.enabled, state.dtype = self.enabled, self.dtype
        return self

    def __exit__(self, *exc):
        state.enabled, state.dtype = self.prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def inner(*a, **k):
            with self.__class__(self.enabled, self.dtype):
                return fn(*a, **k)
        return inner


def op_dtype(cls, args, _dtype):
    """The compute dtype of op ``cls`` under autocast (None: the op's own rule)."""
    from .._tensor import Tensor
    name = cls.__name__
    floats = [a._dtype.is_floating_point for a in args if isinstance(a, Tensor)]
    if not floats or not all(floats):
        return _dtype
    if name in LOWER:
        return state.dtype
    if name in FLOAT32 and (_dtype is None or _dtype.is_floating_point):
        return D.float32
    return _dtype
