"""torch top-level functions built from the engine's differentiable ops (no op of their own)."""
from __future__ import annotations

from . import _autocast_policy as _amp
from ._tensor import Tensor

__all__ = ["finfo", "iinfo", "cdist", "is_nonzero", "is_storage", "cosine_similarity",
           "pairwise_distance", "channels_last", "contiguous_format", "preserve_format", "channels_last_3d",
           "memory_format", "strided", "layout", "Generator", "lgamma", "digamma", "polygamma", "mvlgamma", "xlogy",
           "logit", "softmax", "log_softmax", "_assert"]


def _assert(condition, message: str) -> None:
    """``torch._assert``: ``assert`` as a function (torchvision's models call it; fx records it as a node)."""
    assert condition, message


class memory_format:
    """torch's memory-format tags; ``contiguous``/``to``/``clone``/``*_like`` lay tensors out with torch's strides
    for them (see ``_memory_format``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"flowvision.{self.name}"


class layout:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"flowvision.{self.name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
strided = layout("strided")


class finfo:
    """Machine limits of a floating dtype (torch.finfo): bits, eps, max, min, tiny/smallest_normal, resolution."""

    def __init__(self, type=None):  # noqa: A002 - torch's argument name
        from . import _dtype as D
        dt = D.as_dtype(type) if type is not None else D.get_default_dtype()
        if not dt.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{dt}'")
        self.dtype = dt.name
        if dt is D.bfloat16:  # 8 exponent bits, 7 mantissa bits
            self.bits, self.eps, self.max, self.tiny, self.resolution = 16, 2.0 ** -7, 3.3895313892515355e38, \
                2.0 ** -126, 0.01
        else:
            import numpy as np
            fi = np.finfo(dt.np)
            self.bits, self.eps, self.max = fi.bits, float(fi.eps), float(fi.max)
            self.tiny, self.resolution = float(fi.tiny), float(fi.resolution)
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (torch.iinfo): bits, min, max."""

    def __init__(self, type):  # noqa: A002
        import numpy as np
        from . import _dtype as D
        dt = D.as_dtype(type)
        if dt.is_floating_point or dt is D.bool:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{dt}'")
        ii = np.iinfo(dt.np)
        self.bits, self.min, self.max, self.dtype = ii.bits, int(ii.min), int(ii.max), dt.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


@_amp.fp32
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
          ) -> Tensor:
    """p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M) -> (..., P, R).

    Computed as the norm of the broadcast difference, differentiable through the engine's ops (the gradient at
    zero distance is 0, as in torch).
    """
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == float("inf"):
        return diff.abs().amax(-1)
    a = diff.abs()
    if p == 1:
        return a.sum(-1)
    s = a.pow(p).sum(-1)
    # the p-th root has an infinite slope at 0: route zero distances through a safe value, output 0 there
    zero = s == 0
    safe = s.masked_fill(zero, 1.0)
    return safe.pow(1.0 / p).masked_fill(zero, 0.0)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``torch.pairwise_distance``: ``||x1 - x2 + eps||_p`` over the last dimension."""
    from .nn import functional as F
    return F.pairwise_distance(x1, x2, p=p, eps=eps, keepdim=keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    from .nn import functional as F
    return F.cosine_similarity(x1, x2, dim=dim, eps=eps)


def is_nonzero(input: Tensor) -> bool:
    """True when the single-element ``input`` is not zero; raises for other sizes (torch's rule)."""
    if input.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if input.numel() == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(input.item() != 0)


def is_storage(obj) -> bool:
    return False


from .random import Generator  # noqa: E402,F401  (torch.Generator at top level)
from ._special import lgamma, digamma, polygamma, mvlgamma, xlogy, logit  # noqa: E402,F401


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    from .nn import functional as F
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    from .nn import functional as F
    return F.log_softmax(input, dim, dtype=dtype)


def _bind_methods():
    for name in ("lgamma", "digamma", "xlogy", "logit"):
        setattr(Tensor, name, globals()[name])
    Tensor.polygamma = lambda self, n: polygamma(n, self)
    Tensor.mvlgamma = lambda self, p: mvlgamma(self, p)


_bind_methods()
