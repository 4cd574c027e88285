"""Process groups and collectives over MPI (mpi4py), with torch.distributed's names and semantics.

Tensors are CPU tensors backed by numpy arrays: a C-contiguous tensor is handed to MPI as its own buffer (no
copy) and reduced in place; a non-contiguous one goes through one contiguous staging copy and is written back.
Reductions of float16/bfloat16 run in float32 (MPI has no standard half types; bfloat16 is stored as uint16,
whose integer sum would be garbage) and are rounded once at the end. Every wait polls with a deadline, so a
dead peer turns into a ``DistributedError`` instead of a hang.
"""
from __future__ import annotations

import datetime
import enum
import os
from typing import Callable, List, Optional, Sequence

import numpy as np

from .. import _dtype as D
from .._bf16 import bf16_to_f32, f32_to_bf16
from .._tensor import Tensor
from ._mpi import DistributedError, import_mpi, install_failure_handlers, mpi_type, wait_all

__all__ = ["ReduceOp", "ProcessGroup", "Work", "DistributedError", "init_process_group", "destroy_process_group",
           "is_available", "is_mpi_available", "is_initialized", "get_rank", "get_world_size", "get_backend",
           "new_group", "barrier", "broadcast", "all_reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor"]

DEFAULT_TIMEOUT_S = 1800.0  # torch's default process-group timeout


class ReduceOp(enum.Enum):
    """Reduction of ``all_reduce`` / ``reduce_scatter``."""
    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


class ProcessGroup:
    """A set of ranks sharing one MPI communicator (its own duplicate, so user MPI traffic never mixes in)."""

    def __init__(self, comm, timeout: float):
        self.comm = comm
        self.timeout = timeout

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', rank={self.rank()}, size={self.size()})"


class Work:
    """The handle of an ``async_op=True`` collective; ``wait()`` completes it and finishes the write-back."""

    def __init__(self, MPI, requests, finish: Optional[Callable[[], None]], timeout: float, what: str):
        self._MPI, self._requests, self._finish = MPI, list(requests), finish
        self._timeout, self._what, self._done = timeout, what, False

    def is_completed(self) -> bool:
        if self._done:
            return True
        if self._MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until the collective is done (at most ``timeout`` seconds, default the group's)."""
        if not self._done:
            wait_all(self._MPI, self._requests, self._timeout if timeout is None else timeout, self._what)
            self._complete()
        return True

    def _complete(self):
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()


_MPI = None
_WORLD: Optional[ProcessGroup] = None


def is_available() -> bool:
    """True: the package is importable; whether MPI is installed is ``is_mpi_available()``."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py and an MPI library can be loaded."""
    try:
        import_mpi()
        return True
    except ImportError:
        return False


def is_initialized() -> bool:
    return _WORLD is not None


def _timeout_seconds(timeout) -> float:
    if timeout is None:
        env = os.environ.get("FLOWVISION_DIST_TIMEOUT")
        return float(env) if env else DEFAULT_TIMEOUT_S
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def init_process_group(backend: str = "mpi", init_method: Optional[str] = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "") -> None:
    """Join the job started by an MPI launcher (``mpirun -np N python train.py``).

    Rank and world size come from MPI. ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` are exported when unset so
    ``DistributedSampler`` and the data loaders shard without being told.

    Args:
        backend: only ``"mpi"``.
        init_method: ignored unless given as ``"env://"`` (MPI already knows its peers).
        timeout: seconds or a ``timedelta`` after which a collective raises ``DistributedError``
            (default: ``FLOWVISION_DIST_TIMEOUT`` or 1800 s).
        world_size: if given, must equal the MPI world size.
        rank: if given, must equal the MPI rank.
    """
    global _MPI, _WORLD
    if backend is None or str(backend).lower() != "mpi":
        raise ValueError(f"backend {backend!r} is not supported: flowvision's collectives run over MPI "
                         "(backend='mpi', processes started by mpirun)")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_method {init_method!r} is not supported: MPI ranks find each other through the "
                         "launcher (start the job with mpirun)")
    if store is not None:
        raise ValueError("store= is not supported with the MPI backend")
    if _WORLD is not None:
        raise RuntimeError("trying to initialize the default process group twice")
    MPI = import_mpi()
    comm = MPI.COMM_WORLD.Dup()
    if world_size not in (-1, None) and world_size != comm.Get_size():
        raise ValueError(f"world_size={world_size} but the MPI launcher started {comm.Get_size()} processes")
    if rank not in (-1, None) and rank != comm.Get_rank():
        raise ValueError(f"rank={rank} but MPI assigned rank {comm.Get_rank()}")
    _MPI = MPI
    _WORLD = ProcessGroup(comm, _timeout_seconds(timeout))
    if comm.Get_size() > 1:
        install_failure_handlers(MPI)
    os.environ.setdefault("RANK", str(comm.Get_rank()))
    os.environ.setdefault("WORLD_SIZE", str(comm.Get_size()))
    local = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or os.environ.get("MPI_LOCALRANKID")
    os.environ.setdefault("LOCAL_RANK", local if local is not None else str(comm.Get_rank()))


def destroy_process_group(group: Optional[ProcessGroup] = None) -> None:
    """Free the group's communicator (the default group when ``group`` is None); MPI itself stays up."""
    global _WORLD
    if group is None or group is _WORLD:
        if _WORLD is not None:
            _WORLD.comm.Free()
        _WORLD = None
    else:
        group.comm.Free()


def _group(group: Optional[ProcessGroup]) -> ProcessGroup:
    if _WORLD is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return _WORLD if group is None else group


def get_rank(group: Optional[ProcessGroup] = None) -> int:
    """This process's rank in ``group`` (0 when no process group is initialised, like a single process)."""
    return 0 if _WORLD is None else _group(group).rank()


def get_world_size(group: Optional[ProcessGroup] = None) -> int:
    """The number of ranks in ``group`` (1 when no process group is initialised)."""
    return 1 if _WORLD is None else _group(group).size()


def get_backend(group: Optional[ProcessGroup] = None) -> str:
    _group(group)
    return "mpi"


def new_group(ranks: Optional[Sequence[int]] = None, timeout=None) -> Optional[ProcessGroup]:
    """A group of ``ranks`` of the world (every rank must call this). Ranks outside get None."""
    world = _group(None)
    if ranks is None:
        ranks = range(world.size())
    ranks = sorted(set(int(r) for r in ranks))
    if any(r < 0 or r >= world.size() for r in ranks):
        raise ValueError(f"ranks {ranks} out of range for a world of {world.size()}")
    sub = world.comm.Create_group(world.comm.Get_group().Incl(ranks))
    if sub == _MPI.COMM_NULL:
        return None
    return ProcessGroup(sub, world.timeout if timeout is None else _timeout_seconds(timeout))


# ----------------------------------------------------------------------------- buffers

def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a flowvision Tensor, got {type(t).__name__}")
    if not t.is_cpu:
        raise ValueError(f"{name} is on {t.device}: the MPI collectives work on CPU tensors (call .cpu())")


def _wire_dtype(t: Tensor) -> np.dtype:
    """The dtype a reduction runs in: half types widen to float32, bool reduces as uint8."""
    if t._dtype in (D.bfloat16, D.float16):
        return np.dtype(np.float32)
    if t._dtype is D.bool:
        return np.dtype(np.uint8)
    return t._data.dtype


def _to_wire(t: Tensor, wire: np.dtype) -> np.ndarray:
    """A C-contiguous array MPI can work in place on: the tensor's own memory when possible."""
    a = t._data
    if t._dtype is D.bfloat16:
        return np.ascontiguousarray(bf16_to_f32(a), dtype=np.float32)
    if a.dtype != wire:
        return np.ascontiguousarray(a, dtype=wire)
    return a if a.flags["C_CONTIGUOUS"] else np.ascontiguousarray(a)


def _write_back(t: Tensor, buf: np.ndarray) -> None:
    """Store ``buf`` into ``t``'s memory (through its view, so bases see the change) and bump its version."""
    if buf is not t._data:
        if t._dtype is D.bfloat16:
            t._data[...] = f32_to_bf16(buf.reshape(t._data.shape))
        else:
            t._data[...] = buf.reshape(t._data.shape).astype(t._data.dtype, copy=False)
    t._version[0] += 1


def _mpi_op(op):
    MPI = _MPI
    if not isinstance(op, ReduceOp):
        try:
            op = ReduceOp(str(op).lower())
        except ValueError:
            raise ValueError(f"unknown reduce op {op!r}; use ReduceOp.SUM/AVG/MAX/MIN/PRODUCT") from None
    return op, {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.MAX: MPI.MAX, ReduceOp.MIN: MPI.MIN,
                ReduceOp.PRODUCT: MPI.PROD}[op]


def _check_avg(op, t):
    if op is ReduceOp.AVG and not t._dtype.is_floating_point:
        raise TypeError(f"ReduceOp.AVG needs a floating point tensor (got {t._dtype}); use SUM and divide")


def _finish_or_wait(MPI, reqs, finish, pg, what, async_op):
    work = Work(MPI, reqs, finish, pg.timeout, what)
    if async_op:
        return work
    work.wait()
    return None


# ----------------------------------------------------------------------------- collectives

def barrier(group: Optional[ProcessGroup] = None, async_op: bool = False) -> Optional[Work]:
    """Wait until every rank of ``group`` has reached this call."""
    pg = _group(group)
    return _finish_or_wait(_MPI, [pg.comm.Ibarrier()], None, pg, "barrier", async_op)


def broadcast(tensor: Tensor, src: int, group: Optional[ProcessGroup] = None,
              async_op: bool = False) -> Optional[Work]:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every other rank (same shape and dtype everywhere)."""
    _check_tensor(tensor)
    pg = _group(group)
    if not 0 <= src < pg.size():
        raise ValueError(f"src={src} is not a rank of a group of {pg.size()}")
    a = tensor._data
    buf = a if a.flags["C_CONTIGUOUS"] else np.ascontiguousarray(a)
    req = pg.comm.Ibcast([buf.reshape(-1).view(np.uint8), _MPI.BYTE], root=src)
    def finish():  # raw storage went over the wire (bfloat16 included): copy it back as is
        if buf is not a:
            a[...] = buf
        tensor._version[0] += 1
    return _finish_or_wait(_MPI, [req], finish, pg, "broadcast", async_op)


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: Optional[ProcessGroup] = None,
               async_op: bool = False) -> Optional[Work]:
    """Reduce ``tensor`` over every rank with ``op`` (SUM, AVG, MAX, MIN, PRODUCT); the result replaces it."""
    _check_tensor(tensor)
    pg = _group(group)
    op, mop = _mpi_op(op)
    _check_avg(op, tensor)
    wire = _wire_dtype(tensor)
    buf = _to_wire(tensor, wire)
    req = pg.comm.Iallreduce(_MPI.IN_PLACE, [buf, mpi_type(_MPI, wire)], mop)

    def finish():
        if op is ReduceOp.AVG:
            np.divide(buf, pg.size(), out=buf)
        if tensor._dtype is D.bool:
            np.not_equal(buf, 0, out=buf)
        _write_back(tensor, buf)
    return _finish_or_wait(_MPI, [req], finish, pg, "all_reduce", async_op)


def all_gather(tensor_list: List[Tensor], tensor: Tensor, group: Optional[ProcessGroup] = None,
               async_op: bool = False) -> Optional[Work]:
    """Fill ``tensor_list[r]`` with rank r's ``tensor`` (one output per rank, same shape and dtype)."""
    _check_tensor(tensor)
    pg = _group(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather needs one output tensor per rank: got {len(tensor_list)}, world size "
                         f"{pg.size()}")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, f"tensor_list[{i}]")
        if tuple(t.shape) != tuple(tensor.shape) or t._dtype is not tensor._dtype:
            raise ValueError(f"tensor_list[{i}] is {t._dtype}{list(t.shape)}, the input is "
                             f"{tensor._dtype}{list(tensor.shape)}: all must match")
    a = tensor._data
    send = a if a.flags["C_CONTIGUOUS"] else np.ascontiguousarray(a)
    recv = np.empty((pg.size(),) + a.shape, a.dtype)
    req = pg.comm.Iallgather([send.reshape(-1).view(np.uint8), _MPI.BYTE], [recv.reshape(-1).view(np.uint8),
                                                                              _MPI.BYTE])

    def finish():
        for t, part in zip(tensor_list, recv):
            t._data[...] = part
            t._version[0] += 1
    return _finish_or_wait(_MPI, [req], finish, pg, "all_gather", async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Optional[ProcessGroup] = None,
                           async_op: bool = False) -> Optional[Work]:
    """Concatenate every rank's ``input_tensor`` along dim 0 into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _group(group)
    n = pg.size()
    want = (input_tensor.shape[0] * n,) + tuple(input_tensor.shape[1:]) if input_tensor.ndim else (n,)
    if tuple(output_tensor.shape) != want or output_tensor._dtype is not input_tensor._dtype:
        raise ValueError(f"output_tensor must be {input_tensor._dtype}{list(want)}, got "
                         f"{output_tensor._dtype}{list(output_tensor.shape)}")
    a, out = input_tensor._data, output_tensor._data
    send = a if a.flags["C_CONTIGUOUS"] else np.ascontiguousarray(a)
    recv = out if out.flags["C_CONTIGUOUS"] else np.empty(out.shape, out.dtype)
    req = pg.comm.Iallgather([send.reshape(-1).view(np.uint8), _MPI.BYTE], [recv.reshape(-1).view(np.uint8),
                                                                              _MPI.BYTE])

    def finish():
        if recv is not out:
            out[...] = recv
        output_tensor._version[0] += 1
    return _finish_or_wait(_MPI, [req], finish, pg, "all_gather_into_tensor", async_op)


def reduce_scatter(output: Tensor, input_list: List[Tensor], op=ReduceOp.SUM,
                   group: Optional[ProcessGroup] = None, async_op: bool = False) -> Optional[Work]:
    """``output`` on rank r = the reduction over ranks of their ``input_list[r]``."""
    _check_tensor(output, "output")
    pg = _group(group)
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter needs one input tensor per rank: got {len(input_list)}, world size "
                         f"{pg.size()}")
    for i, t in enumerate(input_list):
        _check_tensor(t, f"input_list[{i}]")
        if tuple(t.shape) != tuple(output.shape) or t._dtype is not output._dtype:
            raise ValueError(f"input_list[{i}] is {t._dtype}{list(t.shape)}, the output is "
                             f"{output._dtype}{list(output.shape)}: all must match")
    op, mop = _mpi_op(op)
    _check_avg(op, output)
    wire = _wire_dtype(output)
    send = np.stack([_to_wire(t, wire) for t in input_list])
    recv = np.empty(output._data.shape, wire)
    req = pg.comm.Ireduce_scatter_block([send, mpi_type(_MPI, wire)], [recv, mpi_type(_MPI, wire)], mop)

    def finish():
        if op is ReduceOp.AVG:
            np.divide(recv, pg.size(), out=recv)
        if output._dtype is D.bool:
            np.not_equal(recv, 0, out=recv)
        _write_back(output, recv)
    return _finish_or_wait(_MPI, [req], finish, pg, "reduce_scatter", async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group: Optional[ProcessGroup] = None,
                          async_op: bool = False) -> Optional[Work]:
    """Reduce ``input`` (dim 0 = world size x output's dim 0) over ranks; rank r keeps the r-th block."""
    _check_tensor(input, "input")
    _check_tensor(output, "output")
    pg = _group(group)
    n = pg.size()
    if input.ndim == 0 or input.shape[0] != n * (output.shape[0] if output.ndim else 1) or \
            tuple(input.shape[1:]) != tuple(output.shape[1:] if output.ndim else ()):
        raise ValueError(f"input ({list(input.shape)}) must be output ({list(output.shape)}) stacked world size "
                         f"({n}) times along dim 0")
    blocks = input._data.reshape((n,) + tuple(output.shape))
    parts = [Tensor._wrap(blocks[r], input._dtype) for r in range(n)]
    return reduce_scatter(output, parts, op, group, async_op)


def _comm_and_mpi(group: Optional[ProcessGroup] = None):
    """(MPI module, ProcessGroup) for engine-internal users such as DistributedDataParallel."""
    return _MPI, _group(group)
