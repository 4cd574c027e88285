"""The loaded ``_C_cuda`` module and DeviceArray helpers shared by the op twins."""
import numpy as np

from .. import _dtype as D
from .. import cuda as _cuda_api

_C = None


def C():
    """The compiled module; raises the same clear error as ``.cuda()`` when CUDA can't be used."""
    global _C
    if _C is None:
        _cuda_api._require_device("CUDA tensors")
        _C = _cuda_api._load()
        from .xp import install_array_methods
        install_array_methods(_C.DeviceArray)
    return _C


def is_device_array(a):
    return _C is not None and a.__class__ is _C.DeviceArray


# flowvision dtype -> _C_cuda dtype name (float64 has no device kernels: see _C_cuda.dtype_from_name)
def dname(dt):
    return dt.name


def storage_dtype(name):
    return D._by_name(name)
