"""Checkpoint readers: safetensors, torch (zip and legacy), numpy ``.npz``; all without torch.

:func:`load_checkpoint` looks at the bytes (not the file name) to pick a reader, unwraps the
usual training-checkpoint wrappers like timm does and strips a DataParallel ``module.``
prefix. Readers return ``dict[str, numpy.ndarray]`` in file order; bfloat16 tensors are
:class:`~flowvision.hub.bf16.Bf16Array` (uint16 bit patterns, see that module).
"""
import contextlib
import json
import os
import struct
import tokenize
import zipfile
from collections import OrderedDict

import numpy as np
from typing import Any, Dict, Mapping, Optional, Union

from ._zipcheck import check_zip_layout
from .bf16 import Bf16Array
from .errors import ZIP_MEMBER_ERRORS, CheckpointError, checkpoint_reader
from .pickle_reader import is_legacy_torch, read_torch_checkpoint

__all__ = [
    "load_checkpoint", "read_safetensors", "read_npz", "read_torch_checkpoint", "detect_format",
    "unwrap_state_dict", "save_safetensors",
]

# safetensors dtype codes -> numpy (BF16 handled separately: numpy has no bfloat16)
_ST_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
    "BOOL": np.bool_,
}
_MAX_ST_HEADER = 100 * 1024 * 1024


def _read_head(path, n=512):
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError as e:
        raise CheckpointError(f"cannot open checkpoint: {e}", path=path) from e


def _safetensors_header(path):
    """The parsed JSON header of a safetensors file and where its data starts, or raises."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise CheckpointError("truncated safetensors file (no header length)", path=path)
        (n,) = struct.unpack("<Q", raw)
        if n < 2 or n > _MAX_ST_HEADER or 8 + n > size:
            raise CheckpointError(f"corrupt or truncated safetensors header (length {n}, file {size} bytes)", path=path)
        text = f.read(n)
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=OrderedDict)
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"corrupt safetensors header: {e}", path=path) from e
    if not isinstance(header, dict):
        raise CheckpointError("corrupt safetensors header (not an object)", path=path)
    data_start = 8 + n
    data_len = size - data_start
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = info["data_offsets"]
            dtype = info["dtype"]
            shape = [int(s) for s in info["shape"]]
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"corrupt safetensors header entry {name!r}", path=path) from e
        if not (0 <= begin <= end <= data_len):
            raise CheckpointError(
                f"tensor {name!r} lies past the end of the file (bytes {begin}-{end} of {data_len}): truncated",
                path=path)
        itemsize = 2 if dtype == "BF16" else np.dtype(_ST_DTYPES[dtype]).itemsize if dtype in _ST_DTYPES else None
        if itemsize is not None and int(np.prod(shape, dtype=np.int64)) * itemsize != end - begin:
            raise CheckpointError(f"tensor {name!r}: shape {shape} does not match its {end - begin} bytes", path=path)
    return header, data_start


@checkpoint_reader
def read_safetensors(path: Union[str, os.PathLike]) -> Dict[str, np.ndarray]:
    """A safetensors file as ``OrderedDict[name, ndarray]`` (header order; BF16 -> Bf16Array)."""
    path = os.fspath(path)
    header, data_start = _safetensors_header(path)
    names = [k for k in header if k != "__metadata__"]
    out = OrderedDict()
    try:
        from safetensors import safe_open
    except ImportError:  # pragma: no cover - safetensors is a dependency
        safe_open = None  # type: ignore[misc, assignment]  # the pure-numpy path below reads every file
    try:
        handle = safe_open(path, framework="np") if safe_open is not None else None
    except Exception as e:  # the library reports corrupt files with its own exception types
        raise CheckpointError(f"corrupt safetensors file: {e}", path=path) from e
    try:
        with open(path, "rb") as f:
            for name in names:
                info = header[name]
                dtype = info["dtype"]
                shape = tuple(int(s) for s in info["shape"])
                if dtype == "BF16" or handle is None or dtype not in _ST_DTYPES:
                    begin, end = info["data_offsets"]
                    np_dtype: np.dtype
                    if dtype == "BF16":
                        np_dtype = np.dtype("<u2")
                    elif dtype in _ST_DTYPES:
                        np_dtype = np.dtype(_ST_DTYPES[dtype]).newbyteorder("<")
                    else:
                        raise CheckpointError(f"tensor {name!r} has unsupported dtype {dtype}", path=path)
                    f.seek(data_start + begin)
                    buf = f.read(end - begin)
                    arr = np.frombuffer(buf, dtype=np_dtype).reshape(shape).astype(np_dtype.newbyteorder("="))
                    out[name] = Bf16Array(arr) if dtype == "BF16" else arr
                else:
                    out[name] = np.asarray(handle.get_tensor(name), order="C")
    except CheckpointError:
        raise
    except Exception as e:
        raise CheckpointError(f"corrupt safetensors file: {e}", path=path) from e
    finally:
        if handle is not None and hasattr(handle, "__exit__"):
            try:
                handle.__exit__(None, None, None)
            except Exception:
                pass
    return out


def save_safetensors(tensors: Mapping[str, Any], path: Union[str, os.PathLike],
                     metadata: Optional[Dict[str, str]] = None) -> None:
    """Write ``dict[str, ndarray]`` (Bf16Array -> BF16) as safetensors, atomically."""
    from safetensors.numpy import save_file

    plain, bf16 = {}, {}
    for k, v in tensors.items():
        if isinstance(v, Bf16Array):
            bf16[k] = v
        else:
            plain[k] = np.asarray(v, order="C")
    tmp = os.fspath(path) + ".tmp"
    if bf16:
        _save_safetensors_raw({**plain, **bf16}, tmp, metadata)
    else:
        save_file(plain, tmp, metadata=metadata)
    os.replace(tmp, path)


def _save_safetensors_raw(tensors, path, metadata):
    inverse = {np.dtype(v): k for k, v in _ST_DTYPES.items()}
    header, blobs, offset = OrderedDict(), [], 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for k, v in tensors.items():
        code = "BF16" if isinstance(v, Bf16Array) else inverse[np.dtype(v.dtype).newbyteorder("=")]
        data = np.asarray(v.view(np.ndarray) if isinstance(v, Bf16Array) else v, order="C")
        data = data.astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
        header[k] = {"dtype": code, "shape": list(v.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def _check_npz_sizes(path):
    """Check the archive's layout and that no member's header declares more data than it holds.

    ``np.load`` allocates the array a header declares before reading it, so a damaged shape field
    would otherwise ask for terabytes (MemoryError) or gigabytes of zeros.
    """
    from numpy.lib import format as npy_format

    readers = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as raw:
        starts = check_zip_layout(zf, raw, path)
        for info in zf.infolist():
            if info.compress_type == zipfile.ZIP_STORED:  # np.savez: read the header in place (cheaper)
                raw.seek(starts[info.filename])
                f = raw
            else:
                f = zf.open(info)
            with contextlib.ExitStack() as stack:
                if f is not raw:
                    stack.enter_context(f)
                version = npy_format.read_magic(f)
                if version not in readers:
                    continue  # np.load reports versions it does not know
                try:
                    shape, _fortran, dtype = readers[version](f)
                except (tokenize.TokenError, SyntaxError) as e:  # numpy tokenizes the header text
                    raise CheckpointError(f"member {info.filename!r} has a damaged header ({e})", path=path) from e
            nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            limit = info.compress_size if info.compress_type == zipfile.ZIP_STORED else 1032 * info.compress_size
            if nbytes > limit:
                raise CheckpointError(f"member {info.filename!r} declares shape {shape} ({nbytes} bytes) but holds "
                                      f"at most {limit} bytes", path=path)


@checkpoint_reader
def read_npz(path: Union[str, os.PathLike]) -> Dict[str, np.ndarray]:
    """A numpy ``.npz`` archive as ``OrderedDict[name, ndarray]`` (object arrays refused)."""
    path = os.fspath(path)
    try:
        _check_npz_sizes(path)
        with np.load(path, allow_pickle=False) as z:
            return OrderedDict((k, z[k]) for k in z.files)
    except CheckpointError:
        raise
    except ZIP_MEMBER_ERRORS + (KeyError,) as e:
        raise CheckpointError(f"corrupt, truncated or unsupported .npz archive ({type(e).__name__}: {e})",
                              path=path) from e


@checkpoint_reader
def detect_format(path: Union[str, os.PathLike]) -> str:
    """``'safetensors'``, ``'torch_zip'``, ``'torch_legacy'``, ``'npz'``; raises CheckpointError otherwise."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError("no such file", path=path)
    head = _read_head(path)
    if len(head) == 0:
        raise CheckpointError("empty file", path=path)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as e:
            raise CheckpointError(f"corrupt or truncated zip archive ({e})", path=path) from e
        if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
            return "torch_zip"
        if names and all(n.endswith(".npy") for n in names):
            return "npz"
        raise CheckpointError("zip archive that is neither a torch checkpoint nor an .npz", path=path)
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "torch_legacy"  # read_torch_checkpoint explains that the tar format is not supported
    if is_legacy_torch(path):
        return "torch_legacy"
    if len(head) >= 9:
        (n,) = struct.unpack("<Q", head[:8])
        if 2 <= n <= _MAX_ST_HEADER and head[8:9] == b"{":
            return "safetensors"
    raise CheckpointError("unknown checkpoint format (not safetensors, a torch checkpoint or an .npz)", path=path)


@checkpoint_reader
def read_any(path):
    """The raw content of a checkpoint file (for torch files: the whole pickled object)."""
    fmt = detect_format(path)
    if fmt == "safetensors":
        return read_safetensors(path)
    if fmt == "npz":
        return read_npz(path)
    return read_torch_checkpoint(path)


def _is_array(v):
    return isinstance(v, np.ndarray)


def unwrap_state_dict(checkpoint: Any, use_ema: bool = True, strip_prefix: Optional[str] = "module.",
                      path: Optional[str] = None) -> Dict[str, Any]:
    """The flat state dict inside a checkpoint, the way timm's ``load_state_dict`` finds it.

    ``state_dict_ema`` / ``model_ema`` (when ``use_ema``), then ``state_dict``, then ``model``;
    a plain dict of arrays is returned as is. Entries that are not arrays (``_metadata``,
    counters kept as Python numbers) are dropped; like timm's ``clean_state_dict``,
    ``strip_prefix`` (DataParallel's ``module.``) is removed from every key that starts with it.
    """
    sd = checkpoint
    if isinstance(checkpoint, dict):
        keys = ("state_dict_ema", "model_ema", "state_dict", "model") if use_ema else ("state_dict", "model")
        for k in keys:
            if isinstance(checkpoint.get(k), dict):
                sd = checkpoint[k]
                break
    if not isinstance(sd, dict):
        raise CheckpointError(f"checkpoint holds a {type(sd).__name__}, not a state dict", path=path)
    out = OrderedDict()
    for k, v in sd.items():
        if not isinstance(k, str) or not _is_array(v):
            continue
        if strip_prefix and k.startswith(strip_prefix):
            k = k[len(strip_prefix):]
        out[k] = v
    if not out and sd:
        raise CheckpointError("checkpoint has no tensors in its state dict", path=path)
    return out


def load_checkpoint(path: Union[str, os.PathLike], use_ema: bool = True,
                    strip_prefix: Optional[str] = "module.") -> Dict[str, np.ndarray]:
    """Read any supported checkpoint file into a flat ``OrderedDict[str, ndarray]``.

    The format is found from the content (zip magic, safetensors header, npz members, torch's
    legacy pickle magic), never from the file name. Corrupt or truncated files raise
    :class:`CheckpointError` naming the path; a torch pickle referencing anything but tensor
    and container records raises :class:`UnsafeCheckpointError` without running it.
    """
    path = os.fspath(path)
    return unwrap_state_dict(read_any(path), use_ema=use_ema, strip_prefix=strip_prefix, path=path)
