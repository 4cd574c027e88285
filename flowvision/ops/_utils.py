"""Small helpers shared by flowvision.ops (torchvision.ops._utils equivalents)."""
import numpy as np

import flowvision.backend as flow
from flowvision.backend import Tensor


def _cat(tensors, dim=0):
    """``flow.cat`` without a copy for a single tensor."""
    if len(tensors) == 1:
        return tensors[0]
    return flow.cat(list(tensors), dim)


def convert_boxes_to_roi_format(boxes):
    """list[Tensor[L, 4]] -> Tensor[K, 5] with the image index in column 0."""
    concat_boxes = _cat([b for b in boxes], dim=0)
    ids = _cat([flow.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return flow.cat([ids, concat_boxes], dim=1)


def check_roi_boxes_shape(boxes):
    if isinstance(boxes, (list, tuple)):
        for t in boxes:
            if not isinstance(t, Tensor) or t.ndim != 2 or t.shape[1] != 4:
                raise ValueError("The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]"
                                 f" (got {None if not isinstance(t, Tensor) else list(t.shape)})")
    elif isinstance(boxes, Tensor):
        if boxes.ndim != 2 or boxes.shape[1] != 5:
            raise ValueError(f"The boxes tensor shape is not correct as Tensor[K, 5] (got {list(boxes.shape)})")
    else:
        raise TypeError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]], "
                        f"got {type(boxes).__name__}")


def _upcast(t):
    """Protect multiplications from overflow: small floats -> float32, small ints -> int32 (as torchvision)."""
    if t.is_floating_point():
        return t if t.dtype in (flow.float32, flow.float64) else t.float()
    return t if t.dtype in (flow.int32, flow.int64) else t.int()


def _upcast_non_float(t):
    if t.dtype not in (flow.float32, flow.float64):
        return t.float()
    return t


def _reduce(loss, reduction, empty_safe_mean=True):
    if reduction == "none":
        return loss
    if reduction == "mean":
        if empty_safe_mean and loss.numel() == 0:
            return 0.0 * loss.sum()
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
                     "'none', 'mean', 'sum'")


def _kernel_array(a):
    """float32/float64 C-contiguous array for the compiled kernels."""
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)
    return np.ascontiguousarray(a)


def _pair(v):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        if len(v) != 2:
            raise ValueError(f"output_size must be an int or a pair of ints, got {v}")
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))
