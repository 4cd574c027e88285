"""Write torch's zip checkpoint layout without torch: ``torch.load(f, weights_only=True)`` reads the file.

Layout (what ``torch.save`` writes): ``<name>/data.pkl`` (pickle protocol 2 whose persistent ids name
storages), ``<name>/data/<key>`` (each storage's raw little-endian bytes, 64-byte aligned), ``<name>/version``,
``<name>/byteorder``. Tensors pickle as ``torch._utils._rebuild_tensor_v2`` / ``_rebuild_parameter`` calls, the
globals torch's weights-only unpickler allows; the pickler here only ever writes those names.
"""
from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from ._tensor import Tensor, Size
from . import _dtype as D

__all__ = ["save_torch"]

_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
            "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}


class _Global:
    """A name in torch's namespace, written as a GLOBAL opcode (torch itself is never imported)."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_DTYPE_NAMES = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16",
                "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
                "bool": "bool"}


class _StorageRef:
    def __init__(self, key: str, storage_type: str, numel: int):
        self.key, self.storage_type, self.numel = key, storage_type, numel


class _TorchPickler(pickle._Pickler):  # the pure-Python pickler: its save_global can be extended
    def __init__(self, file, storages):
        super().__init__(file, protocol=2)
        self.storages = storages  # key -> bytes
        self.by_id = {}

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", obj.storage_type), obj.key, "cpu", obj.numel)
        return None

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _Global):
            return self.save_global(obj)
        if isinstance(obj, Tensor):
            return self.save(self._tensor_reduce(obj))
        if isinstance(obj, D.dtype):
            return self.save_global(_Global("torch", _DTYPE_NAMES[obj.name]))
        if isinstance(obj, Size):
            obj = tuple(int(s) for s in obj)
        elif obj is not OrderedDict and (isinstance(obj, np.ndarray) or (obj is not None and not isinstance(
                obj, (bool, int, float, str, bytes, dict, list, tuple, _StorageRef, _Reduce)))):
            raise TypeError(f"save(format='torch') stores tensors, numbers, strings and dict/list/tuple containers; "
                            f"got {type(obj).__module__}.{type(obj).__qualname__} (save a module's state_dict(), "
                            "or use the default format for other objects)")
        elif isinstance(obj, OrderedDict) and hasattr(obj, "_metadata"):
            obj = OrderedDict(obj)  # torch's weights-only loader would need OrderedDict state for _metadata
        if isinstance(obj, _Reduce):
            return self._save_reduce_call(obj)
        return super().save(obj, save_persistent_id)

    def _save_reduce_call(self, r):
        self.save(r.fn)
        self.save(r.args)
        self.write(pickle.REDUCE)

    def _tensor_reduce(self, t: Tensor):
        from .nn.parameter import Parameter
        if id(t) in self.by_id:
            return self.by_id[id(t)]
        if t.device.type != "cpu":
            t = t.cpu()
        arr = t._data if t._data.flags.c_contiguous else np.ascontiguousarray(t._data)  # keeps 0-dim shapes
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        key = str(len(self.storages))
        self.storages[key] = arr.tobytes()
        stride = tuple(s // arr.itemsize for s in arr.strides) if arr.ndim else ()
        storage = _StorageRef(key, _STORAGE[t._dtype.name], int(arr.size))
        rebuilt = _Reduce(_REBUILD_TENSOR, (storage, 0, tuple(arr.shape), stride, False, OrderedDict()))
        if isinstance(t, Parameter):
            rebuilt = _Reduce(_REBUILD_PARAM, (rebuilt, bool(t.requires_grad), OrderedDict()))
        self.by_id[id(t)] = rebuilt
        return rebuilt


class _Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args


def _aligned_write(zf: zipfile.ZipFile, name: str, data: bytes, align: int = 64) -> None:
    """Store ``data`` uncompressed with its payload at a multiple of ``align`` (torch's reader mmaps records)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header_end = zf.fp.tell() + 30 + len(name.encode("utf-8"))
    pad = (-(header_end + 4)) % align
    # an extra field (id 0x4650 'FP', as torch's writer uses) of ``pad`` bytes moves the payload to the boundary
    info.extra = b"FP" + pad.to_bytes(2, "little") + b"Z" * pad
    zf.writestr(info, data)


def save_torch(obj, f) -> None:
    """Write ``obj`` to ``f`` (path or binary file) in torch's zip format."""
    storages: dict = {}
    buf = io.BytesIO()
    _TorchPickler(buf, storages).dump(obj)
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    else:
        stem = "archive"
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zf:
        _aligned_write(zf, f"{stem}/data.pkl", buf.getvalue())
        _aligned_write(zf, f"{stem}/byteorder", b"little")
        for key, data in storages.items():
            _aligned_write(zf, f"{stem}/data/{key}", data)
        _aligned_write(zf, f"{stem}/version", b"3\n")
        _aligned_write(zf, f"{stem}/.data/serialization_id", b"0" * 40)
    payload = target.getvalue()
    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, os.fspath(f))
    else:
        f.write(payload)
