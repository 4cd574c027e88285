"""Index lookups: ``embedding`` and ``one_hot``."""
import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...autograd.graph import Function
from ...autograd.grad_mode import no_grad


class _Embedding(Function):
    @staticmethod
    def forward(ctx, w, idx, padding_idx):
        ctx.args = (w.shape, idx, padding_idx)
        return w[idx]

    @staticmethod
    def backward(ctx, g):
        shape, idx, padding_idx = ctx.args
        gw = np.zeros(shape, g.dtype)
        np.add.at(gw, idx.reshape(-1), g.reshape(-1, shape[1]))
        if padding_idx is not None:
            gw[padding_idx] = 0
        return gw, None, None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if not isinstance(input, Tensor) or input._dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                           f"Int; but got {getattr(input, 'dtype', type(input).__name__)} instead")
    idx = input._data.astype(np.int64, copy=False)
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"embedding(): index out of range: indices must be in [0, {n}), got min {idx.min()} max "
                         f"{idx.max()}")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            wr = weight._data[rows].astype(np.float64)
            norms = np.linalg.norm(wr, ord=norm_type, axis=1, keepdims=True)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] = (wr * scale).astype(weight._data.dtype)
    return _Embedding.apply(weight, idx, padding_idx)


def one_hot(tensor, num_classes=-1):
    if not isinstance(tensor, Tensor) or tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._data
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}) and non-negative")
    out = np.zeros(idx.shape + (num_classes,), np.int64)
    np.put_along_axis(out, idx[..., None], 1, axis=-1)
    return Tensor._wrap(out)
