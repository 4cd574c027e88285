"""``save``/``load``: state dicts and nested containers as safetensors files, no pickle.

The tensors go into a safetensors file (written with ``safetensors.numpy``; bfloat16 through the hub's
raw writer). Non-tensor values and the container structure live in a JSON string in the file's
metadata under ``"flowvision"``. A flat ``{str: Tensor}`` dict (a module's ``state_dict``) is stored
under its own key names, so the file is an ordinary safetensors state dict for other tools too.

``load`` also reads safetensors files written by other tools (a flat dict of tensors) and
torch-written checkpoints (``torch.save`` zip or legacy files) through ``flowvision.hub``'s safe
unpickler, which never runs code from the file.
"""
import io
import json
import math
import os
import struct
import tempfile
from collections import Counter, OrderedDict, defaultdict

import numpy as np

from ._tensor import Tensor, Size
from . import _dtype as D
from ._safe_objects import (  # noqa: F401  (torch.serialization's allow-list API)
    add_safe_globals, get_safe_globals, clear_safe_globals, safe_globals, encode_object, decode_object,
    UnsafeObjectError,
)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]
_POLICY = "__load_policy__"  # key in the decode cache carrying load()'s weights_only

_META_KEY = "flowvision"
_FORMAT_VERSION = 1
_PREFIX = "__fv__/"


# ---------------------------------------------------------------------- encoding
class _Encoder:
    def __init__(self, flat_names):
        self.arrays = OrderedDict()      # name -> ndarray (bf16 as uint16 bits, see bf16_names)
        self.bf16_names = set()
        self.by_id = {}                  # id(tensor) -> name (shared tensors stored once)
        self.keep_alive = []
        self.flat_names = flat_names
        self.counter = 0

    def _new_name(self, path):
        if self.flat_names and len(path) == 1 and isinstance(path[0], str) and not path[0].startswith(_PREFIX) \
                and path[0] not in self.arrays:
            return path[0]
        self.counter += 1
        return f"{_PREFIX}{self.counter - 1}"

    def _store(self, obj, arr, path, bf16=False):
        key = id(obj)
        if key in self.by_id:
            return self.by_id[key], True
        name = self._new_name(path)
        self.arrays[name] = np.asarray(arr, order="C")
        if bf16:
            self.bf16_names.add(name)
        self.by_id[key] = name
        self.keep_alive.append(obj)
        return name, False

    def encode(self, obj, path=()):
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if obj.device.type != "cpu":
                obj = obj.cpu()
            name, _ = self._store(obj, obj._data, path, bf16=obj._dtype is D.bfloat16)
            out = {"T": name, "dtype": obj._dtype.name}
            if isinstance(obj, Parameter):
                out["P"] = True
            if obj.requires_grad:
                out["rg"] = True
            return out
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biuf" or obj.dtype.byteorder == ">":
                raise TypeError(f"flowvision.save can't store a numpy array of dtype {obj.dtype}")
            is_bf16 = type(obj).__name__ == "Bf16Array"
            name, _ = self._store(obj, obj.view(np.ndarray) if is_bf16 else obj, path, bf16=is_bf16)
            return {"A": name, **({"bf16": True} if is_bf16 else {})}
        if obj is None or isinstance(obj, (bool, str)):
            return {"v": obj}
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
            return {"v": int(obj)}
        if isinstance(obj, (float, np.floating)):
            f = float(obj)
            if math.isfinite(f):
                return {"v": f}
            return {"f": "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")}
        if isinstance(obj, np.bool_):
            return {"v": bool(obj)}
        if isinstance(obj, bytes):
            return {"b": obj.hex()}
        if isinstance(obj, D.dtype):
            return {"dt": obj.name}
        if isinstance(obj, dict):
            cls = "Counter" if isinstance(obj, Counter) else "OrderedDict" if isinstance(obj, OrderedDict) else \
                "defaultdict" if isinstance(obj, defaultdict) else "dict"
            items = [[self.encode_key(k), self.encode(v, path + (k,))] for k, v in obj.items()]
            out = {"D": items, "cls": cls}
            md = getattr(obj, "_metadata", None)
            if md is not None:
                try:
                    json.dumps(md)
                    out["md"] = md
                except (TypeError, ValueError):
                    pass
            return out
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return {"Tu": [self.encode(v, path + (i,)) for i, v in enumerate(obj)]}
        if isinstance(obj, Size):
            return {"Sz": [int(s) for s in obj]}
        if isinstance(obj, tuple):
            return {"Tu": [self.encode(v, path + (i,)) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return {"L": [self.encode(v, path + (i,)) for i, v in enumerate(obj)]}
        if isinstance(obj, (set, frozenset)):
            return {"S": [self.encode(v, path + (i,)) for i, v in enumerate(sorted(obj, key=repr))]}
        node = encode_object(self, obj, path)
        if node is not None:
            return node
        raise TypeError(f"flowvision.save can't store an object of type {type(obj).__module__}.{type(obj).__qualname__} "
                        f"(at {'/'.join(map(str, path)) or 'the top level'}); it stores tensors, numpy arrays, "
                        "numbers, strings, None, dict/list/tuple containers, argparse.Namespace, devices, modules and "
                        "objects whose attributes are among these (never functions)")

    def encode_key(self, k):
        if isinstance(k, (str, bool)) or k is None:
            return {"v": k}
        if isinstance(k, (int, np.integer)):
            return {"v": int(k)}
        if isinstance(k, float):
            return self.encode(k)
        if isinstance(k, tuple):
            return {"Tu": [self.encode_key(x) for x in k]}
        raise TypeError(f"flowvision.save can't store a dict key of type {type(k).__name__}")


def _decode(node, arrays, cache):
    from .nn.parameter import Parameter
    if "v" in node:
        return node["v"]
    if "T" in node:
        name = node["T"]
        ck = ("T", name, bool(node.get("P")))
        if ck in cache:
            return cache[ck]
        arr = arrays[name]
        dt = D._by_name(node["dtype"])
        if dt is D.bfloat16:
            arr = np.asarray(arr).view(np.uint16)
        t = Tensor._wrap(arr, dt)
        if node.get("P"):
            t = Parameter(t, requires_grad=bool(node.get("rg", False)))
        elif node.get("rg"):
            t.requires_grad_(True)
        cache[ck] = t
        return t
    if "A" in node:
        arr = arrays[node["A"]]
        if node.get("bf16"):
            from ..hub.bf16 import Bf16Array
            arr = Bf16Array(np.asarray(arr).view(np.uint16))
        return arr
    if "f" in node:
        return float(node["f"])
    if "b" in node:
        return bytes.fromhex(node["b"])
    if "dt" in node:
        return D._by_name(node["dt"])
    if "D" in node:
        cls = node.get("cls", "dict")
        items = [(_decode_key(k), _decode(v, arrays, cache)) for k, v in node["D"]]
        if cls == "Counter":
            out = Counter(dict(items))
        elif cls == "OrderedDict":
            out = OrderedDict(items)
        elif cls == "defaultdict":
            out = defaultdict(dict, items)
        else:
            out = dict(items)
        if "md" in node:
            if not isinstance(out, OrderedDict):
                out = OrderedDict(out)
            out._metadata = node["md"]
        return out
    if "Tu" in node:
        return tuple(_decode(v, arrays, cache) for v in node["Tu"])
    if "Sz" in node:
        return Size(node["Sz"])
    if "L" in node:
        return [_decode(v, arrays, cache) for v in node["L"]]
    if "S" in node:
        return set(_decode(v, arrays, cache) for v in node["S"])
    obj = decode_object(node, lambda n: _decode(n, arrays, cache), cache.get(_POLICY, {}))
    if obj is not None:
        return obj
    raise ValueError(f"corrupt flowvision metadata node: {node!r}")


def _decode_key(k):
    if "Tu" in k:
        return tuple(_decode_key(x) for x in k["Tu"])
    if "f" in k:
        return float(k["f"])
    return k["v"]


# ---------------------------------------------------------------------- save
def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format="flowvision"):
    """Save ``obj`` to ``f`` (a path or a writable binary file object).

    ``format="flowvision"`` (default) writes safetensors: tensors, arrays, numbers, strings, None, containers,
    ``argparse.Namespace``, devices, whole modules and plain objects (class path + attributes; see
    ``_safe_objects``), never pickle. ``format="torch"`` writes torch's zip checkpoint layout, which
    ``torch.load(f, weights_only=True)`` reads: tensors, parameters, numbers, strings and containers.
    """
    if format == "torch":
        from ._torch_format import save_torch
        return save_torch(obj, f)
    if format != "flowvision":
        raise ValueError(f"format must be 'flowvision' or 'torch', got {format!r}")
    flat = isinstance(obj, dict) and all(isinstance(k, str) for k in obj) and \
        all(isinstance(v, Tensor) for v in obj.values())
    enc = _Encoder(flat_names=flat)
    structure = enc.encode(obj)
    metadata = {_META_KEY: json.dumps({"version": _FORMAT_VERSION, "root": structure}, separators=(",", ":"))}
    data = _serialize(enc.arrays, enc.bf16_names, metadata)
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        tmp = path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    else:
        f.write(data)


def _serialize(arrays, bf16_names, metadata):
    if not bf16_names:
        from safetensors.numpy import save as st_save
        return st_save(dict(arrays), metadata=metadata)
    # safetensors.numpy has no bfloat16: write the (simple) format directly, tagging those tensors BF16
    codes = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
             np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int16): "I16",
             np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.uint16): "U16",
             np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64", np.dtype(np.bool_): "BOOL"}
    header = OrderedDict()
    header["__metadata__"] = metadata
    blobs, offset = [], 0
    for name, arr in arrays.items():
        a = np.asarray(arr, order="C")
        code = "BF16" if name in bf16_names else codes[a.dtype]
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# ---------------------------------------------------------------------- load
def _read_bytes(f):
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "rb") as fh:
            return fh.read(), os.fspath(f)
    return f.read(), None


def _parse_safetensors(data):
    """(metadata dict or None, {name: ndarray}) of safetensors bytes, or None if it isn't safetensors."""
    if len(data) < 10:
        return None
    (n,) = struct.unpack("<Q", data[:8])
    if n < 2 or 8 + n > len(data) or data[8:9] != b"{":
        return None
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(header, dict):
        return None
    dtypes = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64,
              "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32,
              "U64": np.uint64, "BOOL": np.bool_}
    base = 8 + n
    arrays, bf16 = OrderedDict(), set()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        code = info["dtype"]
        if code not in dtypes:
            raise ValueError(f"unsupported safetensors dtype {code} for tensor {name!r}")
        start, end = info["data_offsets"]
        dt = np.dtype(dtypes[code]).newbyteorder("<")
        arr = np.frombuffer(data, dtype=dt, count=(end - start) // dt.itemsize, offset=base + start)
        arr = arr.reshape(info["shape"]).astype(dt.newbyteorder("="), copy=True)
        arrays[name] = arr
        if code == "BF16":
            bf16.add(name)
    return header.get("__metadata__"), arrays, bf16


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what :func:`save` wrote; also plain safetensors files and torch-written checkpoints.

    ``map_location`` is accepted for torch compatibility (everything loads on the CPU).
    """
    data, path = _read_bytes(f)
    parsed = _parse_safetensors(data)
    if parsed is not None:
        metadata, arrays, bf16 = parsed
        if metadata and _META_KEY in metadata:
            doc = json.loads(metadata[_META_KEY])
            if doc.get("version", 0) > _FORMAT_VERSION:
                raise RuntimeError(f"this file was written by a newer flowvision (format {doc['version']})")
            return _decode(doc["root"], arrays, {_POLICY: {"weights_only": weights_only is not False}})
        out = OrderedDict()
        for name, arr in arrays.items():
            out[name] = Tensor._wrap(arr, D.bfloat16 if name in bf16 else None)
        return out
    # not safetensors: a torch checkpoint, read by the hub's safe unpickler
    try:
        from ..hub.pickle_reader import read_torch_checkpoint
    except ImportError as e:  # pragma: no cover
        raise RuntimeError("this is not a flowvision/safetensors file and flowvision.hub's torch reader is "
                           "unavailable") from e
    if path is None:
        with tempfile.NamedTemporaryFile(suffix=".pth", delete=False) as tmp:
            tmp.write(data)
            path = tmp.name
        try:
            obj = read_torch_checkpoint(path)
        finally:
            os.unlink(path)
    else:
        obj = read_torch_checkpoint(path)
    return _arrays_to_tensors(obj)


def _arrays_to_tensors(obj):
    if isinstance(obj, np.ndarray):
        if type(obj).__name__ == "Bf16Array":
            return Tensor._wrap(obj.view(np.ndarray).view(np.uint16), D.bfloat16)
        if obj.dtype.kind in "biuf" and obj.dtype in (np.dtype(t) for t in (
                np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)):
            return Tensor._wrap(obj)
        return obj
    if isinstance(obj, OrderedDict):
        out = OrderedDict((k, _arrays_to_tensors(v)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata
        return out
    if isinstance(obj, dict):
        return type(obj)((k, _arrays_to_tensors(v)) for k, v in obj.items()) if type(obj) in (dict,) else \
            {k: _arrays_to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_arrays_to_tensors(v) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_arrays_to_tensors(v) for v in obj)
    return obj
