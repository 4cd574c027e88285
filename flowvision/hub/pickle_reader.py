"""Read torch checkpoints (``torch.save`` files) without torch and without running pickle code.

A pickle is a program: ``GLOBAL``/``STACK_GLOBAL`` opcodes import any callable and ``REDUCE``
calls it, which is how ``torch.load`` can be made to run ``os.system``. Here every global goes
through :meth:`_RestrictedUnpickler.find_class`, which answers from a fixed allow-list of
*stand-ins written in this module* (never the real torch objects, which are not imported):

* containers and primitives: ``collections.OrderedDict``, ``builtins.set/frozenset/bytearray/
  complex/slice``, ``_codecs.encode`` (latin-1 only, how protocol 2 stores bytes), ``torch.Size``
  (-> tuple), ``torch.device`` (-> str), ``torch.<dtype>`` (-> a dtype tag);
* torch's tensor records: ``torch._utils._rebuild_tensor``, ``_rebuild_tensor_v2``,
  ``_rebuild_tensor_v3``, ``_rebuild_parameter``, ``_rebuild_parameter_with_state``,
  ``torch._tensor._rebuild_from_type_v2`` (plain Tensor/Parameter only), the typed storage
  classes ``torch.FloatStorage`` ... ``torch.BFloat16Storage`` and ``torch.storage.UntypedStorage``,
  plus persistent ``('storage', ...)`` ids;
* numpy scalars and arrays of non-object dtypes and ``argparse.Namespace`` (as a plain
  attribute bag), which timm training checkpoints contain.

Anything else raises :class:`UnsafeCheckpointError` naming the global, before it could run.
The stand-ins are frozen (attribute writes from ``BUILD`` opcodes are refused), so a pickle
cannot rewire them either.

Two container formats are read: the zip format (torch >= 1.6: ``<prefix>/data.pkl`` plus one
raw little-endian file per storage in ``<prefix>/data/<key>``) and the legacy format (torch <
1.6: a magic-number pickle, a version, system info, the object pickle, the list of storage
keys, then each storage as an int64 element count and its bytes). The older tar format is
refused with a clear error.

Tensors come back as contiguous numpy arrays (bfloat16 as :class:`~flowvision.hub.bf16.Bf16Array`),
rebuilt from (storage, offset, size, stride) with bounds checks. Different tensors that view
one storage come back as separate arrays with the right values (never aliasing each other);
one tensor saved under two names (tied weights) comes back as one array, as with torch.load.
"""
import _compat_pickle
import io
import os
import pickle
import pickletools
import re
import struct
import zipfile
import zlib

import numpy as np
from typing import Any, Union

from .bf16 import Bf16Array
from ._zipcheck import check_zip_layout
from .errors import ZIP_MEMBER_ERRORS, CheckpointError, UnsafeCheckpointError, checkpoint_reader

__all__ = ["read_torch_checkpoint", "is_torch_zip", "is_legacy_torch", "ALLOWED_GLOBALS"]

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")
_DTYPE_CODE = re.compile(r"[A-Za-z][0-9]{0,5}")


# ---------------------------------------------------------------------------------------------
# frozen stand-ins

class _Frozen:
    __slots__ = ()

    def __setattr__(self, name, value):
        raise TypeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name):
        raise TypeError(f"{type(self).__name__} is read-only")


class _Fn(_Frozen):
    """An allowed callable: a frozen wrapper, so BUILD opcodes cannot patch it."""

    __slots__ = ("_fn", "_qualname")

    def __init__(self, qualname, fn):
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_fn", fn)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<allowed {self._qualname}>"


class _DType(_Frozen):
    """A torch element type: name, numpy storage dtype and whether it is bfloat16 bits."""

    __slots__ = ("name", "np", "bf16")

    def __init__(self, name, np_dtype, bf16=False):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "np", np.dtype(np_dtype).newbyteorder("<"))
        object.__setattr__(self, "bf16", bf16)

    def __repr__(self):
        return f"torch.{self.name}"


_DTYPES = {
    "float32": _DType("float32", np.float32), "float64": _DType("float64", np.float64),
    "float16": _DType("float16", np.float16), "bfloat16": _DType("bfloat16", np.uint16, bf16=True),
    "int64": _DType("int64", np.int64), "int32": _DType("int32", np.int32),
    "int16": _DType("int16", np.int16), "int8": _DType("int8", np.int8),
    "uint8": _DType("uint8", np.uint8), "bool": _DType("bool", np.bool_),
    "complex64": _DType("complex64", np.complex64), "complex128": _DType("complex128", np.complex128),
    "uint16": _DType("uint16", np.uint16), "uint32": _DType("uint32", np.uint32),
    "uint64": _DType("uint64", np.uint64),
}
_DTYPE_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}

_STORAGE_CLASSES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
}


class _StorageType(_Frozen):
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", dtype)

    def __repr__(self):
        return f"torch.{self.name}"


class _TensorClass(_Frozen):
    """``torch.Tensor`` / ``torch.nn.parameter.Parameter`` as names only (for _rebuild_from_type_v2)."""

    __slots__ = ("name",)

    def __init__(self, name):
        object.__setattr__(self, "name", name)


def _set(obj, **kw):
    for k, v in kw.items():
        object.__setattr__(obj, k, v)


class _Storage(_Frozen):
    """One storage of a checkpoint: filled with its bytes once they have been read."""

    __slots__ = ("key", "dtype", "numel", "array", "handed_out")

    def __init__(self, key, dtype, numel):
        _set(self, key=key, dtype=dtype, numel=numel, array=None, handed_out=False)


class _StorageView(_Frozen):
    """A legacy (torch < 0.4) view into part of another storage."""

    __slots__ = ("root", "offset", "size", "dtype")

    def __init__(self, root, offset, size):
        _set(self, root=root, offset=offset, size=size, dtype=root.dtype)


class _LazyTensor(_Frozen):
    """A tensor record, materialized into a numpy array once every storage has been read."""

    __slots__ = ("storage", "offset", "size", "stride", "dtype")

    def __init__(self, storage, offset, size, stride, dtype=None):
        _set(self, storage=storage, offset=offset, size=size, stride=stride, dtype=dtype)


class CheckpointNamespace:
    """What an ``argparse.Namespace`` in a checkpoint becomes: a plain attribute bag."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"Namespace({items})"

    def __eq__(self, other):
        return isinstance(other, CheckpointNamespace) and vars(self) == vars(other)


class _FrozenMeta(type):
    def __setattr__(cls, name, value):
        raise TypeError("read-only class")

    def __delattr__(cls, name):
        raise TypeError("read-only class")


class _NamespaceStandIn(CheckpointNamespace, metaclass=_FrozenMeta):
    pass


# ---------------------------------------------------------------------------------------------
# allowed callables

def _as_int_tuple(x, what):
    if isinstance(x, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in x):
        return tuple(x)
    raise CheckpointError(f"malformed tensor record: {what} is {x!r}")


def _rebuild_tensor(storage, storage_offset, size, stride, *rest):
    if not isinstance(storage, (_Storage, _StorageView)):
        raise CheckpointError(f"malformed tensor record: storage is {type(storage).__name__}")
    if not isinstance(storage_offset, int) or isinstance(storage_offset, bool) or storage_offset < 0:
        raise CheckpointError(f"malformed tensor record: storage offset {storage_offset!r}")
    size = _as_int_tuple(size, "size")
    stride = _as_int_tuple(stride, "stride")
    if len(size) != len(stride) or any(v < 0 for v in size) or any(v < 0 for v in stride):
        raise CheckpointError(f"malformed tensor record: size {size} / stride {stride}")
    return _LazyTensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, *rest):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if isinstance(dtype, _DType):
        _set(t, dtype=dtype)
    return t


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None, *rest):
    if not isinstance(data, _LazyTensor):
        raise CheckpointError(f"malformed parameter record: data is {type(data).__name__}")
    return data


def _rebuild_from_type_v2(func, new_type, args, state=None):
    if not isinstance(new_type, _TensorClass):
        raise UnsafeCheckpointError(f"tensor subclass {new_type!r} is not allowed", name=repr(new_type))
    if not isinstance(func, _Fn) or not isinstance(args, tuple):
        raise CheckpointError("malformed _rebuild_from_type_v2 record")
    return func(*args)


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "iso-8859-1"):
        raise CheckpointError(f"unexpected _codecs.encode({type(obj).__name__}, {encoding!r}) in checkpoint")
    return obj.encode("latin-1", errors="strict")


def _bytearray(data=b"", encoding=None, errors="strict"):
    # protocol <= 2 stores a bytearray as bytearray(<latin-1 str>, 'latin-1'); a bare size would let a
    # file allocate (and zero) any amount of memory, so only data forms are accepted
    if isinstance(data, str) and encoding in ("latin1", "latin-1", "iso-8859-1"):
        return bytearray(data, "latin-1")
    if isinstance(data, (bytes, bytearray)) and encoding is None:
        return bytearray(data)
    raise CheckpointError(f"unexpected bytearray({type(data).__name__}, {encoding!r}) in checkpoint")


def _torch_size(values=()):
    return tuple(_as_int_tuple(tuple(values), "torch.Size"))


def _torch_device(kind, index=None):
    if not isinstance(kind, str):
        raise CheckpointError(f"malformed torch.device({kind!r})")
    return kind if index is None else f"{kind}:{index}"


class _NpDType:
    """``numpy.dtype(code, align, copy)`` stand-in; numpy's BUILD state may only set the byte order."""

    __slots__ = ("dtype",)

    def __init__(self, spec, align=False, copy=False):
        # numpy pickles a dtype as its kind letter and item size ('f4', 'b1', 'U5', 'M8'); anything else is refused
        # before numpy parses it (its string parser runs ast.literal_eval, which raises SyntaxError on some inputs)
        if not isinstance(spec, str) or not _DTYPE_CODE.fullmatch(spec):
            raise CheckpointError(f"numpy dtype {spec!r} in checkpoint is not a plain type code")
        try:
            dt = np.dtype(spec)
        except (TypeError, ValueError) as e:
            raise CheckpointError(f"numpy dtype {spec!r} in checkpoint is not a valid type code") from e
        if dt.hasobject or dt.fields is not None or dt.subdtype is not None:
            raise UnsafeCheckpointError(f"numpy dtype {spec!r} is not allowed in checkpoints (object or structured)",
                                        name=f"numpy.dtype[{spec}]")
        self.dtype = dt

    def __setstate__(self, state):
        # numpy writes (version, byteorder, subarray, names, fields, elsize, alignment, flags)
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in ("<", ">", "=", "|"):
            raise CheckpointError(f"malformed numpy dtype state {state!r}")
        if any(x is not None for x in state[2:5]):
            raise UnsafeCheckpointError("structured numpy dtypes are not allowed in checkpoints", name="numpy.dtype")
        if state[1] in ("<", ">"):
            self.dtype = self.dtype.newbyteorder(state[1])


class _NpArray:
    """``numpy.core.multiarray._reconstruct`` stand-in: an array built from its BUILD state."""

    __slots__ = ("array",)

    def __init__(self):
        self.array = None

    def __setstate__(self, state):
        try:
            _version, shape, dtype, is_fortran, raw = state
        except (TypeError, ValueError):
            raise CheckpointError("malformed numpy array state") from None
        if not isinstance(dtype, _NpDType) or not isinstance(raw, (bytes, bytearray)):
            raise UnsafeCheckpointError("numpy array with an object or unknown dtype is not allowed",
                                        name="numpy.ndarray")
        shape = _as_int_tuple(tuple(shape), "numpy shape")
        n = 1
        for s in shape:
            n *= s
        if len(raw) != n * dtype.dtype.itemsize:
            raise CheckpointError("numpy array data does not match its shape")
        arr = np.frombuffer(bytes(raw), dtype=dtype.dtype).reshape(shape, order="F" if is_fortran else "C")
        self.array = np.array(arr, dtype=dtype.dtype.newbyteorder("="), copy=True)


def _np_scalar(dtype, data=None):
    if not isinstance(dtype, _NpDType) or not isinstance(data, (bytes, bytearray)):
        raise CheckpointError("malformed numpy scalar record")
    return np.frombuffer(bytes(data), dtype=dtype.dtype, count=1)[0]


_NDARRAY = _TensorClass("numpy.ndarray")


def _np_reconstruct(subtype, shape, dtype):
    if subtype is not _NDARRAY:
        raise UnsafeCheckpointError(f"numpy array subtype {subtype!r} is not allowed", name=repr(subtype))
    return _NpArray()


def _build_allow_list():
    allowed = {
        ("collections", "OrderedDict"): __import__("collections").OrderedDict,
        ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
        ("builtins", "bytearray"): _Fn("builtins.bytearray", _bytearray), ("builtins", "complex"): complex,
        ("builtins", "slice"): slice,
        ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset,
        ("_codecs", "encode"): _Fn("_codecs.encode", _codecs_encode),
        ("torch", "Size"): _Fn("torch.Size", _torch_size),
        ("torch", "device"): _Fn("torch.device", _torch_device),
        ("torch", "Tensor"): _TensorClass("torch.Tensor"),
        ("torch._tensor", "Tensor"): _TensorClass("torch.Tensor"),
        ("torch.nn.parameter", "Parameter"): _TensorClass("torch.nn.parameter.Parameter"),
        ("torch._utils", "_rebuild_tensor"): _Fn("torch._utils._rebuild_tensor", _rebuild_tensor),
        ("torch._utils", "_rebuild_tensor_v2"): _Fn("torch._utils._rebuild_tensor_v2", _rebuild_tensor),
        ("torch._utils", "_rebuild_tensor_v3"): _Fn("torch._utils._rebuild_tensor_v3", _rebuild_tensor_v3),
        ("torch._utils", "_rebuild_parameter"): _Fn("torch._utils._rebuild_parameter", _rebuild_parameter),
        ("torch._utils", "_rebuild_parameter_with_state"):
            _Fn("torch._utils._rebuild_parameter_with_state", _rebuild_parameter),
        ("torch._tensor", "_rebuild_from_type_v2"):
            _Fn("torch._tensor._rebuild_from_type_v2", _rebuild_from_type_v2),
        ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", _DTYPES["uint8"]),
        ("torch", "UntypedStorage"): _StorageType("UntypedStorage", _DTYPES["uint8"]),
    }
    for cls_name, dt in _STORAGE_CLASSES.items():
        allowed[("torch", cls_name)] = _StorageType(cls_name, _DTYPES[dt])
    for name, dt in _DTYPES.items():
        allowed[("torch", name)] = dt
    for alias, name in _DTYPE_ALIASES.items():
        allowed[("torch", alias)] = _DTYPES[name]
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(mod, "scalar")] = _Fn(f"{mod}.scalar", _np_scalar)
        allowed[(mod, "_reconstruct")] = _Fn(f"{mod}._reconstruct", _np_reconstruct)
    allowed[("numpy", "dtype")] = _Fn("numpy.dtype", _NpDType)
    allowed[("numpy", "ndarray")] = _NDARRAY
    return allowed


ALLOWED_GLOBALS = _build_allow_list()
"""The (module, name) pairs a checkpoint pickle may reference, mapped to their stand-ins."""


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, path, storage_loader):
        super().__init__(file, encoding="utf-8")
        self._path = path
        self._storage_loader = storage_loader

    def find_class(self, module, name):
        if not isinstance(module, str) or not isinstance(name, str):
            raise UnsafeCheckpointError(f"malformed global {module!r}.{name!r}", path=self._path, name=repr(name))
        # protocol 2 (torch's default) writes Python 2 names (__builtin__, commands, ...): map them back
        # like pickle's own find_class, so the allow-list and error messages see the Python 3 names
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) == ("argparse", "Namespace"):
            # a fresh, frozen stand-in class per load: nothing a pickle does to it outlives the load
            return _FrozenMeta("Namespace", (_NamespaceStandIn,), {})
        try:
            return ALLOWED_GLOBALS[(module, name)]
        except (KeyError, TypeError):
            pass
        qual = f"{module}.{name}"
        hint = ""
        if module.startswith("torch"):
            hint = (" (flowvision reads plain tensors and containers only: sparse, quantized and "
                    "custom tensor types and pickled nn.Modules are not supported)")
        raise UnsafeCheckpointError(
            f"refusing to load: the checkpoint's pickle references the global {qual!r}, which is not on the "
            f"allow-list of tensor and container records; nothing from it was executed{hint}",
            path=self._path, name=qual)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid:
            raise CheckpointError(f"malformed persistent id {pid!r}", path=self._path)
        if pid[0] == "module":
            raise UnsafeCheckpointError(
                "refusing to load a pickled nn.Module (the checkpoint stores model code, not a state dict); "
                "nothing from it was executed", path=self._path, name="module")
        if pid[0] != "storage" or len(pid) < 5:
            raise CheckpointError(f"unsupported persistent id {pid[:1]!r}", path=self._path)
        return self._storage_loader(pid)

    # pickle's Python implementation calls this for EXT opcodes; the C one uses find_class as well
    def get_extension(self, code):  # pragma: no cover - defensive
        raise UnsafeCheckpointError(f"pickle extension code {code} is not allowed", path=self._path,
                                    name=f"ext:{code}")


# ---------------------------------------------------------------------------------------------
# materialization

def _materialize_tensor(t, path):
    storage = t.storage
    base_offset = 0
    if isinstance(storage, _StorageView):
        base_offset = storage.offset
        limit = storage.size
        storage = storage.root
    else:
        limit = None
    arr = storage.array
    if arr is None:
        raise CheckpointError(f"storage {storage.key!r} has no data in the file (truncated?)", path=path)
    if limit is None:
        limit = arr.size
    dtype = storage.dtype if t.dtype is None else t.dtype
    if t.dtype is not None and t.dtype.np != storage.dtype.np and storage.dtype.name == "uint8":
        # an untyped (byte) storage reinterpreted with the record's dtype
        usable = (arr.size // dtype.np.itemsize) * dtype.np.itemsize
        arr = arr[:usable].view(dtype.np)
        limit = arr.size if limit == storage.array.size else limit // dtype.np.itemsize
    numel = 1
    for s in t.size:
        numel *= s
    if numel == 0:
        out = np.zeros(t.size, dtype=dtype.np.newbyteorder("="))
    else:
        last = t.offset + sum((sz - 1) * st for sz, st in zip(t.size, t.stride))
        if last >= limit or base_offset + last >= arr.size:
            raise CheckpointError(
                f"tensor of size {t.size} stride {t.stride} at offset {t.offset} reads past the end of storage "
                f"{storage.key!r} ({limit} elements): corrupt or truncated checkpoint", path=path)
        start = base_offset + t.offset
        view = np.lib.stride_tricks.as_strided(
            arr[start:], shape=t.size, strides=tuple(s * arr.itemsize for s in t.stride), writeable=False)
        whole = (start == 0 and numel == arr.size and view.flags.c_contiguous)
        if whole and not storage.handed_out:
            out = arr.reshape(t.size)
            _set(storage, handed_out=True)
        else:
            out = np.array(view, copy=True, order="C")
        if not out.dtype.isnative:  # a big-endian checkpoint
            out = out.astype(out.dtype.newbyteorder("="))
    if dtype.bf16:
        out = Bf16Array(out)
    return out


def _materialize(obj, path, memo):
    oid = id(obj)
    if oid in memo:
        return memo[oid]
    if isinstance(obj, _LazyTensor):
        out = _materialize_tensor(obj, path)
    elif isinstance(obj, dict):
        # keep the mapping type (OrderedDict) and its attributes (state_dict()._metadata)
        out = obj
        for k in list(obj.keys()):
            obj[k] = _materialize(obj[k], path, memo)
    elif isinstance(obj, list):
        out = obj
        for i, v in enumerate(obj):
            obj[i] = _materialize(v, path, memo)
    elif isinstance(obj, tuple):
        out = tuple(_materialize(v, path, memo) for v in obj)
    elif isinstance(obj, CheckpointNamespace):
        out = obj
        for k, v in list(vars(obj).items()):
            vars(obj)[k] = _materialize(v, path, memo)
    elif isinstance(obj, _NpArray):
        if obj.array is None:
            raise CheckpointError("numpy array record without data", path=path)
        out = obj.array
    elif isinstance(obj, _NpDType):
        out = obj.dtype
    else:
        out = obj
    memo[oid] = out
    return out


def _materialize_checked(obj, path):
    try:
        return _materialize(obj, path, {})
    except CheckpointError:
        raise
    except (AttributeError, TypeError, ValueError, IndexError, KeyError, MemoryError, RecursionError) as e:
        raise CheckpointError(f"malformed tensor records ({type(e).__name__}: {e})", path=path) from e


# ---------------------------------------------------------------------------------------------
# formats

def is_torch_zip(path):
    try:
        if not zipfile.is_zipfile(path):
            return False
        with zipfile.ZipFile(path) as zf:
            return any(n == "data.pkl" or n.endswith("/data.pkl") for n in zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def is_legacy_torch(path):
    try:
        with open(path, "rb") as f:
            head = f.read(2)
    except OSError:
        return False
    return head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")


def _prescan(data_file, path):
    """Walk the opcodes once without executing any (pickletools) before the C unpickler runs.

    The scan checks every length field against the bytes that are really there, so a corrupt or
    crafted length (e.g. an 8-byte BYTEARRAY8 size) cannot make the unpickler allocate gigabytes,
    and it refuses opcodes a checkpoint never needs (EXT* registry lookups).
    """
    start = data_file.tell()
    try:
        for n_ops, (op, arg, _pos) in enumerate(pickletools.genops(data_file)):
            if op.name in ("EXT1", "EXT2", "EXT4"):
                raise UnsafeCheckpointError(f"pickle opcode {op.name} (copyreg extension registry) is not allowed",
                                            path=path, name=op.name)
            # picklers number memo slots 0, 1, 2, ... in order; the C unpickler grows its memo table to the
            # index it is given, so one PUT of index 10**9 in a damaged file would allocate gigabytes
            # (the slack keeps hand-written pickles readable: 65536 slots cost half a megabyte)
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and not 0 <= int(arg) <= n_ops + (1 << 16):
                raise CheckpointError(f"corrupt pickle data (memo index {arg} at opcode {n_ops})", path=path)
            if op.name == "STOP":
                break
    except CheckpointError:
        raise
    except (ValueError, EOFError, struct.error, UnicodeDecodeError, OverflowError, MemoryError) as e:
        raise CheckpointError(f"corrupt or truncated pickle data ({type(e).__name__}: {e})", path=path) from e
    data_file.seek(start)


def _unpickle(data_file, path, loader):
    _prescan(data_file, path)
    try:
        return _RestrictedUnpickler(data_file, path, loader).load()
    except CheckpointError:
        raise
    except RecursionError as e:
        raise CheckpointError("pickle nesting too deep", path=path) from e
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, KeyError, IndexError,
            struct.error, MemoryError, OverflowError, UnicodeDecodeError, zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"corrupt or truncated pickle data ({type(e).__name__}: {e})", path=path) from e


def _check_storage_pid(pid, path):
    _, stype, key, location, numel = pid[:5]
    if not isinstance(stype, (_StorageType, _DType)):
        raise CheckpointError(f"malformed storage record: type {stype!r}", path=path)
    dtype = stype.dtype if isinstance(stype, _StorageType) else stype
    key = str(key)
    if not _KEY.match(key) or key in (".", ".."):
        raise CheckpointError(f"malformed storage key {key!r}", path=path)
    if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
        raise CheckpointError(f"malformed storage size {numel!r}", path=path)
    return dtype, key, numel


def _read_zip(path):
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"not a readable zip archive ({e})", path=path) from e
    with zf, open(path, "rb") as raw:
        check_zip_layout(zf, raw, path)
        names = zf.namelist()
        pkl = [n for n in names if n == "data.pkl" or n.endswith("/data.pkl")]
        pkl = [n for n in pkl if n.count("/") <= 1]
        if len(pkl) != 1:
            raise CheckpointError(f"zip archive is not a torch checkpoint (found {len(pkl)} data.pkl records)",
                                  path=path)
        prefix = pkl[0][: -len("data.pkl")]
        if prefix.startswith("/") or ".." in prefix or "\\" in prefix:
            raise CheckpointError(f"refusing archive record {pkl[0]!r}", path=path)
        big_endian = False
        if prefix + "byteorder" in names:
            big_endian = zf.read(prefix + "byteorder").strip() == b"big"
        storages = {}

        def load_storage(pid):
            dtype, key, numel = _check_storage_pid(pid, path)
            if key in storages:
                return storages[key]
            member = f"{prefix}data/{key}"
            try:
                info = zf.getinfo(member)
            except KeyError:
                raise CheckpointError(f"storage record {member!r} is missing (truncated archive?)",
                                      path=path) from None
            nbytes = numel * dtype.np.itemsize
            if dtype.name == "uint8" and isinstance(pid[1], _StorageType) and pid[1].name == "UntypedStorage":
                nbytes = numel
            # deflate expands at most ~1032:1, so a bigger claim is damage (and must not size an allocation)
            limit = info.compress_size if info.compress_type == zipfile.ZIP_STORED else 1032 * info.compress_size
            if nbytes > limit:
                raise CheckpointError(f"storage {member!r} claims {nbytes} bytes but holds at most {limit}",
                                      path=path)
            if info.file_size < nbytes:
                raise CheckpointError(f"storage {member!r} holds {info.file_size} bytes, the record needs {nbytes}",
                                      path=path)
            buf = np.empty(nbytes, dtype=np.uint8)
            try:
                if info.compress_type == zipfile.ZIP_STORED:
                    got = _read_stored(raw, info, buf, path)  # torch stores records uncompressed: read them directly
                else:
                    with zf.open(info) as f:
                        mv = memoryview(buf)
                        got = 0
                        while got < nbytes:
                            n = f.readinto(mv[got:])
                            if not n:
                                break
                            got += n
            except ZIP_MEMBER_ERRORS as e:
                raise CheckpointError(f"cannot read storage {member!r}: {e} (corrupt archive?)", path=path) from e
            if got < nbytes:
                raise CheckpointError(f"storage {member!r} ends after {got} of {nbytes} bytes", path=path)
            arr = buf.view(dtype.np.newbyteorder(">" if big_endian else "<"))
            st = _Storage(key, dtype, arr.size)
            _set(st, array=arr)
            storages[key] = st
            return st

        try:
            data = zf.read(pkl[0])
        except ZIP_MEMBER_ERRORS as e:
            raise CheckpointError(f"cannot read {pkl[0]!r}: {e} (corrupt archive?)", path=path) from e
        obj = _unpickle(io.BytesIO(data), path, load_storage)
        return _materialize_checked(obj, path)


def _read_stored(raw, info, buf, path):
    """Read an uncompressed zip member straight into ``buf`` and check its CRC-32 (much faster than ZipExtFile)."""
    raw.seek(info.header_offset)
    header = raw.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise CheckpointError(f"bad local header for {info.filename!r} (corrupt archive)", path=path)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    raw.seek(info.header_offset + 30 + name_len + extra_len)
    n = info.file_size
    if len(buf) > n:
        raise CheckpointError(f"record {info.filename!r} is shorter than its tensor data", path=path)
    view = memoryview(buf)
    got = raw.readinto(view)
    if got < len(buf):
        return got
    crc = zlib.crc32(view)
    if n > len(buf):  # a record longer than needed: the rest still counts for the CRC
        rest = raw.read(n - len(buf))
        if len(rest) < n - len(buf):
            raise CheckpointError(f"record {info.filename!r} is truncated", path=path)
        crc = zlib.crc32(rest, crc)
    if crc != info.CRC:
        raise CheckpointError(f"CRC-32 mismatch in {info.filename!r}: the file is corrupt", path=path)
    return got


def _read_legacy(path):
    with open(path, "rb") as f:
        storages = {}

        def meta_loader(pid):
            raise CheckpointError("unexpected persistent id in the legacy header", path=path)

        magic = _unpickle(f, path, meta_loader)
        if magic != _LEGACY_MAGIC:
            raise CheckpointError("not a torch checkpoint (pickle without torch's magic number)", path=path)
        version = _unpickle(f, path, meta_loader)
        if version != _LEGACY_PROTOCOL:
            raise CheckpointError(f"unsupported legacy torch protocol version {version!r}", path=path)
        sys_info = _unpickle(f, path, meta_loader)
        little = True
        if isinstance(sys_info, dict):
            little = bool(sys_info.get("little_endian", True))

        def load_storage(pid):
            dtype, key, numel = _check_storage_pid(pid, path)
            root = storages.get(key)
            if root is None:
                root = storages[key] = _Storage(key, dtype, numel)
            view_meta = pid[5] if len(pid) > 5 else None
            if view_meta is not None:
                try:
                    view_key, offset, view_size = view_meta
                except (TypeError, ValueError):
                    raise CheckpointError(f"malformed storage view {view_meta!r}", path=path) from None
                return _StorageView(root, int(offset), int(view_size))
            return root

        obj = _unpickle(f, path, load_storage)
        keys = _unpickle(f, path, meta_loader)
        if not isinstance(keys, list):
            raise CheckpointError("malformed legacy checkpoint: storage key list missing", path=path)
        file_size = os.fstat(f.fileno()).st_size
        for key in keys:
            st = storages.get(str(key))
            if st is None:
                raise CheckpointError(f"storage {key!r} listed but never referenced", path=path)
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"file ends before storage {key!r} (truncated)", path=path)
            count = struct.unpack("<q" if little else ">q", head)[0]
            nbytes = count * st.dtype.np.itemsize
            if count < 0 or f.tell() + nbytes > file_size:
                raise CheckpointError(f"storage {key!r} claims {count} elements past the end of the file (truncated)",
                                      path=path)
            buf = np.empty(nbytes, dtype=np.uint8)
            if f.readinto(memoryview(buf)) != nbytes:
                raise CheckpointError(f"file ends inside storage {key!r} (truncated)", path=path)
            _set(st, array=buf.view(st.dtype.np.newbyteorder("<" if little else ">")), numel=count)
        if f.tell() != file_size:
            # torch.save writes nothing after the last storage; extra bytes mean inserted or shifted
            # data (the format has no checksum, so this is the only hint that the tensors moved)
            raise CheckpointError(f"{file_size - f.tell()} unexpected bytes after the last storage: "
                                  "corrupt checkpoint", path=path)
        return _materialize_checked(obj, path)


@checkpoint_reader
def read_torch_checkpoint(path: Union[str, os.PathLike]) -> Any:
    """The object a ``torch.save`` file holds, with tensors as numpy arrays; no torch, no code run.

    Raises :class:`UnsafeCheckpointError` for a global outside the allow-list and
    :class:`CheckpointError` for anything corrupt, truncated or unsupported.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError("no such file", path=path)
    if zipfile.is_zipfile(path):
        return _read_zip(path)
    with open(path, "rb") as f:
        head = f.read(512)
    if len(head) >= 262 and head[257:262] == b"ustar":
        raise CheckpointError("this is torch's pre-0.4 tar checkpoint format, which flowvision does not read; "
                              "re-save it with a current torch.save", path=path)
    if is_legacy_torch(path):
        return _read_legacy(path)
    raise CheckpointError("not a torch checkpoint (neither a zip archive nor a legacy torch pickle)", path=path)
