"""CPU tensors in shared memory, and how they cross process boundaries.

``share_memory_`` moves a tensor's storage into a named POSIX shared-memory segment, in place: every reference
to the tensor keeps working and now reads and writes the shared pages.  When multiprocessing pickles a tensor
(``Process`` arguments, queues), the reducer registered by ``flowvision.backend.multiprocessing`` sends the
segment name and the view geometry instead of the values; the receiving process maps the same segment, so
in-place updates there (an optimizer step) are seen by every process.  A tensor that is not yet shared is moved
into shared memory when it is first sent, as torch does.

Each segment ends with a shared modification counter. A shared tensor's ``_version`` keeps its own
per-process count (what autograd checks, as in torch: another process's Hogwild update between forward and
backward is not an error) and adds every bump to the shared counter, so caches that also key on
``_version.shared()`` (packed GEMM weights) notice updates made in other processes.

The process that created a segment unlinks it when the last array over it is freed (or at exit); mapped pages
stay valid in processes that still use them.
"""
from __future__ import annotations

import threading
import weakref
from multiprocessing import shared_memory

import numpy as np

from .._tensor import Tensor
from .. import _dtype as D

# segment name -> (weakref to the root array over the segment, start address, data size in bytes, version array)
_segments: dict[str, tuple] = {}
_lock = threading.Lock()


class SharedVersion:
    """A tensor's version counter (``v[0]``, per process) that also counts into shared memory (``shared()``)."""

    __slots__ = ("_local", "_arr")

    def __init__(self, arr: np.ndarray, local: int = 0):
        self._arr, self._local = arr, local

    def __getitem__(self, i):
        return self._local

    def __setitem__(self, i, value):
        self._arr[0] += max(int(value) - self._local, 1)
        self._local = int(value)

    def shared(self) -> int:
        """Bumps made by every process since the segment was created."""
        return int(self._arr[0])

    def __len__(self):
        return 1

    def __repr__(self):
        return f"SharedVersion({self._local}, shared={self.shared()})"


def _version_offset(nbytes: int) -> int:
    return (nbytes + 7) // 8 * 8


def _addr(arr: np.ndarray) -> int:
    return arr.__array_interface__["data"][0]


def _register(shm: shared_memory.SharedMemory, root: np.ndarray, owner: bool, nbytes: int) -> np.ndarray:
    name = shm.name
    version = np.ndarray((1,), dtype=np.int64, buffer=shm.buf, offset=_version_offset(nbytes))

    def _release(name=name, shm=shm, owner=owner):
        with _lock:
            _segments.pop(name, None)
        if owner:
            try:
                shm.unlink()
            except FileNotFoundError:
                pass

    with _lock:
        _segments[name] = (weakref.ref(root), _addr(root), nbytes, version)
    # the root array holds the mapping alive; the segment goes when the last view over it does
    weakref.finalize(root, _release)
    return version


def _find_segment(arr: np.ndarray):
    """(segment name, byte offset) of the shared segment holding ``arr``'s first element, or None."""
    a = _addr(arr)
    with _lock:
        for name, (ref, start, size, _) in _segments.items():
            if ref() is not None and start <= a < start + max(size, 1):
                return name, a - start
    return None


def is_shared(t: Tensor) -> bool:
    """True when ``t``'s storage lives in a shared-memory segment."""
    if not t.is_cpu:
        return False
    if t.numel() == 0:
        return bool(t.__dict__.get("_shm_empty"))
    return _find_segment(t._data) is not None


def share_memory_(t: Tensor) -> Tensor:
    """Move ``t``'s storage into shared memory in place (a no-op when it is already there); returns ``t``."""
    if not t.is_cpu:
        raise NotImplementedError("share_memory_() supports CPU tensors; CUDA tensors cannot be shared between "
                                  "processes by this engine (move them to the CPU first)")
    if t.numel() == 0:
        t.__dict__["_shm_empty"] = True
        return t
    if _find_segment(t._data) is not None:
        return t
    src = t._data
    shm = shared_memory.SharedMemory(create=True, size=_version_offset(src.nbytes) + 8)
    root = np.ndarray(src.shape, dtype=src.dtype, buffer=shm.buf)
    root[...] = src
    version = _register(shm, root, owner=True, nbytes=src.nbytes)
    version[0] = 0
    t._data = root
    t._version = SharedVersion(version, t._version[0])
    t.__dict__["_shm"] = shm  # keeps the mapping referenced as long as the tensor
    return t


def _attach(name: str, offset: int, shape: tuple, strides: tuple, np_dtype: str, nbytes: int):
    with _lock:
        entry = _segments.get(name)
    root = entry[0]() if entry else None
    version = entry[3] if entry else None
    if root is None:
        shm = shared_memory.SharedMemory(name=name)
        root = np.ndarray((nbytes,), dtype=np.uint8, buffer=shm.buf)
        version = _register(shm, root, owner=False, nbytes=nbytes)
    base = root.view(np.uint8).reshape(-1)
    return np.ndarray(shape, dtype=np_dtype, buffer=base, offset=offset, strides=strides), version


def rebuild_shared(name, offset, shape, strides, np_dtype, dtype_name, requires_grad, kind, nbytes):
    """Inverse of :func:`reduce_tensor` in the receiving process."""
    arr, version = _attach(name, offset, shape, strides, np_dtype, nbytes)
    t = Tensor._wrap(arr, D._by_name(dtype_name))
    if offset == 0 and arr.nbytes == nbytes:  # the whole segment: share its version counter too
        t._version = SharedVersion(version)
    return _wrap_kind(t, requires_grad, kind)


def rebuild_empty(shape, np_dtype, dtype_name, requires_grad, kind):
    arr = np.empty(shape, dtype=np_dtype)
    return _wrap_kind(Tensor._wrap(arr, D._by_name(dtype_name)), requires_grad, kind)


def _wrap_kind(t, requires_grad, kind):
    if kind == "parameter":
        from ..nn.parameter import Parameter
        return Parameter(t, requires_grad)
    t.requires_grad_flag = requires_grad
    return t


def reduce_tensor(t: Tensor):
    """multiprocessing reducer: share the storage (once) and send where it is, not what it holds."""
    from ..nn.parameter import Parameter
    if not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                           "does not support crossing process boundaries. If you just want to transfer the data, "
                           "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    kind = "parameter" if isinstance(t, Parameter) else "tensor"
    if t.numel() == 0:
        return rebuild_empty, (t._data.shape, t._data.dtype.str, t._dtype.name, t.requires_grad, kind)
    if _find_segment(t._data) is None:
        share_memory_(t)
    name, offset = _find_segment(t._data)
    arr = t._data
    nbytes = _segments[name][2]
    return rebuild_shared, (name, offset, arr.shape, arr.strides, arr.dtype.str, t._dtype.name, t.requires_grad, kind,
                            nbytes)
