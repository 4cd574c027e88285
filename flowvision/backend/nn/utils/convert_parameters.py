"""parameters_to_vector / vector_to_parameters."""
import numpy as np

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    from ..._ops.shape import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    flat = vec._data
    for p in parameters:
        n = p.numel()
        p._data = np.array(flat[pointer:pointer + n].reshape(tuple(p.shape)), dtype=p._data.dtype)
        p._version[0] += 1
        pointer += n
