"""Index lookups: ``embedding`` and ``one_hot``."""
from typing import Optional

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


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of an embedding table, ``weight[input]``, as ``torch.nn.functional.embedding``.

    Args:
        input: integer indices of any shape, each in ``[0, num_embeddings)``.
        weight: ``(num_embeddings, embedding_dim)``.
        padding_idx: the row at this index gets no gradient (a negative index counts from the end).
        max_norm: rows looked up whose ``norm_type``-norm exceeds it are renormalised to it, in place in ``weight``.
        norm_type: the ``p`` of the norm for ``max_norm``.
        scale_grad_by_freq: accepted for torch compatibility (unused).
        sparse: accepted for torch compatibility (the gradient is dense).

    Returns:
        ``(*input.shape, embedding_dim)``.

    Raises:
        RuntimeError: ``input`` is not an integer tensor.
        IndexError: an index is out of range.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.embedding(flow.tensor([[0, 2]]), flow.arange(6.0).reshape(3, 2))
        tensor([[[0., 1.],
                 [4., 5.]]])
    """
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


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encode int64 class indices, as ``torch.nn.functional.one_hot``.

    Args:
        tensor: int64 indices of any shape.
        num_classes: number of classes; -1 means ``max(tensor) + 1``.

    Returns:
        An int64 tensor ``(*tensor.shape, num_classes)`` with a 1 at each index.

    Raises:
        RuntimeError: ``tensor`` is not int64, or an index is negative or not below ``num_classes``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.one_hot(flow.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
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
