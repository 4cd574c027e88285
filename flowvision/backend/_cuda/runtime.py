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
        _install_array_methods(_C.DeviceArray)
    return _C


def is_device_array(a):
    return _C is not None and a.__class__ is _C.DeviceArray


# flowvision dtype -> _C_cuda dtype name (float64 has no device kernels: see _C_cuda.dtype_from_name)
def dname(dt):
    return dt.name


_HALF = ("float16", "bfloat16")


def _install_array_methods(cls):
    """Operators the generic autograd engine uses on gradient buffers (``a + b``, ``astype``)."""
    if getattr(cls, "_fv_methods", False):
        return

    def add(a, b):
        return _C.binary(_C.BINARY_OPS["add"], a, b)

    def astype(a, dtype, copy=True):
        name = dtype.name if isinstance(dtype, D.dtype) else np.dtype(dtype).name
        if name == a.dtype:
            return a
        return _C.cast(a, name)

    def setitem(a, key, value):
        # only whole-array assignment (``arr[...] = v``), as used on buffers such as num_batches_tracked
        if key is not Ellipsis and key != slice(None):
            raise NotImplementedError("DeviceArray supports only arr[...] = value")
        if isinstance(value, cls):
            _C.copy_(a, value if value.dtype == a.dtype else _C.cast(value, a.dtype))
        else:
            _C.fill_(a, float(np.asarray(value).reshape(-1)[0]) if np.size(value) == 1 else
                     (_ for _ in ()).throw(ValueError("arr[...] = array: upload it first")))

    def _host_reduce(op):
        # numpy-style whole-array reductions returning host scalars (used by CPU-side argument checks such
        # as index bounds); they wait for the device
        def f(a, *args, **kwargs):
            if args or kwargs:
                raise NotImplementedError(f"DeviceArray.{op} takes no axis arguments")
            x = a if a.dtype in ("float32", "int64") else _C.cast(a, "float32" if a.dtype in _HALF else "int64")
            y, _ = _C.reduce(_C.REDUCE_OPS[op], _C.reshape(x, [x.size]), 1, x.size, 1)
            return _C.to_host(y).reshape(())
        return f

    cls.min, cls.max = _host_reduce("min"), _host_reduce("max")
    cls.any = lambda a: bool(cls.max(a) != 0) if a.size else False
    cls.all = lambda a: bool(cls.min(a) != 0) if a.size else True
    def reshape(a, *shape):
        from .arrays import reshape as _reshape
        return _reshape(a, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    cls.reshape = reshape
    cls.__setitem__ = setitem
    cls.__add__ = add
    cls.__radd__ = add
    cls.astype = astype
    cls._fv_methods = True


def storage_dtype(name):
    return D._by_name(name)
