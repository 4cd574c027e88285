"""default_collate / default_convert: stack samples into batches the way torch does."""
import collections.abc
import re
from typing import Any, Sequence

import numpy as np

from ..._tensor import Tensor
from ... import _dtype as D

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data: Any) -> Any:
    """Convert numpy arrays and numpy scalars to tensors, recursively through mappings, namedtuples and sequences,
    without batching, as ``torch.utils.data.default_convert`` (the DataLoader's ``collate_fn`` when
    ``batch_size=None``).

    Args:
        data: a sample.

    Returns:
        The sample with its arrays as tensors (string/object arrays and other objects unchanged).
    """
    data_type = type(data)
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return Tensor._wrap(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return Tensor._wrap(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = data_type(data) if not isinstance(data, collections.defaultdict) else data.copy()
                for k in data:
                    clone[k] = default_convert(data[k])
                return clone
            return data_type({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return data_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return data_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack_tensors(batch):
    first = batch[0]
    shape = tuple(first.shape)
    for t in batch:
        if tuple(t.shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(t.shape)} at another entry")
    dt = first._dtype
    if all(t._dtype is dt for t in batch):
        return Tensor._wrap(np.stack([t._data for t in batch]), dt)
    from ..._ops.shape import stack
    return stack(list(batch))


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch like torch's: numbers and arrays/tensors are stacked into tensors, and
    tuples, lists, dicts and namedtuples are collated field by field.

    Args:
        batch: the samples.

    Returns:
        The batch, with the samples' structure.
    """
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray) and type(elem).__module__ == "numpy":
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        shape = elem.shape
        for b in batch:
            if b.shape != shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                                   f"and {list(b.shape)} at another entry")
        return Tensor._wrap(np.stack(batch))
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        return Tensor._wrap(np.array(batch))
    if isinstance(elem, bool):
        return Tensor._wrap(np.array(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return Tensor._wrap(np.array(batch, dtype=np.float64))
    if isinstance(elem, int):
        return Tensor._wrap(np.array(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = elem.copy() if hasattr(elem, "copy") else elem_type(elem)
                for key in elem:
                    clone[key] = default_collate([d[key] for d in batch])
                return clone
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))
