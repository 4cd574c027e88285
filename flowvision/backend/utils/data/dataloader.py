"""DataLoader: batching, sampling and multi-process loading with torch's arguments and semantics.

Worker processes (``num_workers > 0``) each receive batches of indices on their own queue and send
collated batches back on a shared result queue; the main process re-orders them so the output is
exactly what ``num_workers=0`` gives. Every worker is seeded with ``base_seed + worker_id`` (Python's
``random``, flowvision's default generator and numpy's global RNG). An exception in a worker is
re-raised in the main process with the worker's traceback; a worker that dies (for example killed by
a signal) raises a ``RuntimeError`` naming its pid instead of hanging.

Large arrays of a batch (images) travel through shared memory instead of the result pipe: the worker
pickles the batch with protocol 5, writes the out-of-band buffers into one file in a per-iterator
directory under ``/dev/shm`` and sends only the small pickle; the main process maps that file
copy-on-write, unlinks it at once and rebuilds the arrays on the mapping (what torch does with its
shared-memory tensors). Where shared memory is unavailable the whole batch goes through the pipe.
"""
import io
import itertools
import mmap
import multiprocessing as python_mp
import os
import pickle
import queue
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from typing import Any, Callable, Iterable, List, Optional, Union

import numpy as np
from multiprocessing.reduction import ForkingPickler

from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, Sampler
from ...random import Generator

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]

_POLL_S = 0.5            # how often a waiting main process checks its workers are alive
_WORKER_POLL_S = 1.0     # how often an idle worker checks its parent is alive
_SHM_MIN_BYTES = 1 << 16  # smaller buffers stay in the pickle: a file per tiny tensor costs more than it saves
_SHM_ALIGN = 64
_worker_info = None


class WorkerInfo:
    """What :func:`get_worker_info` returns inside a DataLoader worker: ``id``, ``num_workers``, ``seed`` and
    ``dataset`` (the worker's copy), as ``torch.utils.data.WorkerInfo``. Its attributes cannot be changed.

    Args:
        **kwargs: the attributes.
    """

    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info() -> Optional[WorkerInfo]:
    """Inside a DataLoader worker: its ``WorkerInfo``; in the main process: None."""
    return _worker_info


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable across processes."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - exception types whose constructor needs other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    pass


# ---------------------------------------------------------------------- fetchers
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if kind == "iterable" else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


# ---------------------------------------------------------------------- worker process
def _worker_loop(kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, parent_pid, shm_dir=None):
    global _worker_info
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):
        pass
    seed = base_seed + worker_id
    random.seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed % (2 ** 32), base_seed >> 32]).generate_state(4))
    try:
        from ... import random as fv_random, _threads
        fv_random.manual_seed(seed)
        _threads.set_num_threads(1)
    except Exception:  # noqa: BLE001 - never let seeding break a worker
        pass
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

    init_exception = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
    except Exception:  # noqa: BLE001
        init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    iteration_end = False
    current_epoch = None
    while True:
        try:
            r = index_queue.get(timeout=_WORKER_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid or done_event.is_set():
                break
            continue
        if r is None:
            break
        if done_event.is_set():
            continue
        epoch, idx, index = r
        if epoch != current_epoch:
            if current_epoch is not None and kind == "iterable" and init_exception is None:
                # a new epoch of a persistent worker: restart its dataset iterator
                try:
                    fetcher = _make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
                except Exception:  # noqa: BLE001
                    init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            current_epoch = epoch
            iteration_end = False
        if init_exception is not None:
            data = init_exception
            init_exception = None
        elif iteration_end:
            data = _IterableDatasetStopIteration(worker_id)
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if kind == "iterable":
                    data = _IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            except Exception:  # noqa: BLE001
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        data_queue.put((epoch, idx, _pickled(data, worker_id, shm_dir)))
        del data, index, r
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()


def _pickled(data, worker_id, shm_dir=None):
    """Serialise a result in the worker itself: a multiprocessing queue pickles in a background thread, where
    a failure would be printed and the result silently lost (and the main process would wait for it)."""
    if shm_dir is not None and not isinstance(data, ExceptionWrapper):
        try:
            return _pickled_shared(data, shm_dir)
        except Exception:  # noqa: BLE001 - no shared memory (full, missing) or unpicklable: the plain path decides
            pass
    try:
        return _Pickled(_dumps_batch(data))
    except Exception:  # noqa: BLE001 - an unpicklable batch or exception type
        if isinstance(data, ExceptionWrapper):
            data.exc_type = RuntimeError if not isinstance(data.exc_type, type) or \
                not issubclass(data.exc_type, Exception) else _picklable_exc_type(data.exc_type)
            try:
                return _Pickled(_dumps_batch(data))
            except Exception:  # noqa: BLE001
                pass
        err = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} while sending a batch")
        return _Pickled(_dumps_batch(err))


def _picklable_exc_type(exc_type):
    """exc_type if it pickles (a module-level class), else the nearest picklable base class."""
    for t in exc_type.__mro__:
        try:
            ForkingPickler.dumps(t)
            return t
        except Exception:  # noqa: BLE001
            continue
    return RuntimeError


def _batch_dispatch_table() -> dict:
    """ForkingPickler's reducers (connections, sockets, ...) except the shared-memory tensor reducer: a batch is
    sent as values. A tensor moved into a segment owned by the worker would be unlinked when the worker drops it,
    possibly before this process attaches (the worker exits at the end of an epoch)."""
    from ..._tensor import Tensor
    table = ForkingPickler._copyreg_dispatch_table.copy()  # type: ignore[attr-defined]  # private, not in typeshed
    table.update({cls: reduce for cls, reduce in ForkingPickler._extra_reducers.items()  # type: ignore[attr-defined]
                  if not (isinstance(cls, type) and issubclass(cls, Tensor))})
    return table


def _dumps_batch(data) -> bytes:
    """``ForkingPickler.dumps`` with :func:`_batch_dispatch_table`."""
    stream = io.BytesIO()
    pickler = pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _batch_dispatch_table()
    pickler.dump(data)
    return stream.getvalue()


def _pickled_shared(data, shm_dir):
    """Pickle ``data`` with its large buffers out of band, written into one new file in ``shm_dir``."""
    buffers = []

    def out_of_band(buf):  # pickle keeps a buffer in the stream when this returns True
        if buf.raw().nbytes < _SHM_MIN_BYTES:
            return True
        buffers.append(buf)
        return False

    stream = io.BytesIO()
    pickler = pickle.Pickler(stream, protocol=5, buffer_callback=out_of_band)
    # ForkingPickler's reducers (connections, sockets, ...); its constructor cannot take buffer_callback
    pickler.dispatch_table = _batch_dispatch_table()
    pickler.dump(data)
    if not buffers:
        return _Pickled(stream.getvalue())
    sizes = [b.raw().nbytes for b in buffers]
    offsets, total = [], 0
    for n in sizes:
        offsets.append(total)
        total += -(-n // _SHM_ALIGN) * _SHM_ALIGN
    fd, path = tempfile.mkstemp(dir=shm_dir)
    try:
        # reserve the pages now: writing through a mapping into a full tmpfs (Docker's 64 MB /dev/shm) would kill
        # the worker with SIGBUS, whereas a failed reservation raises ENOSPC and the batch takes the pipe
        os.posix_fallocate(fd, 0, total)
        with mmap.mmap(fd, total) as mm:
            for b, off, n in zip(buffers, offsets, sizes):
                mm[off:off + n] = b.raw()
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    return _Pickled(stream.getvalue(), path, tuple(zip(offsets, sizes)))


class _Pickled:
    __slots__ = ("payload", "segment", "spans")

    def __init__(self, payload, segment=None, spans=()):
        self.payload = bytes(payload)
        self.segment = segment
        self.spans = spans

    def load(self):
        if self.segment is None:
            return pickle.loads(self.payload)
        fd = os.open(self.segment, os.O_RDWR)
        try:
            os.unlink(self.segment)  # the mapping outlives the name; the memory goes with the last array
            size = os.fstat(fd).st_size
            # copy-on-write: the arrays are writable without touching the shared pages
            mm = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        view = memoryview(mm)
        return pickle.loads(self.payload, buffers=[view[off:off + n] for off, n in self.spans])


def _make_shm_dir():
    """A private directory on /dev/shm for this iterator's batches, or None where there is no /dev/shm."""
    if not os.path.isdir("/dev/shm") or not hasattr(mmap, "MAP_PRIVATE"):
        return None
    try:
        return tempfile.mkdtemp(prefix="flowvision-loader-", dir="/dev/shm")
    except OSError:
        return None


# ---------------------------------------------------------------------- iterators
class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = loader._get_shared_seed()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._loader_len = None
        try:
            self._loader_len = len(loader)
        except TypeError:
            pass

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __len__(self):
        return len(self._index_sampler)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._kind == "iterable" and self._loader_len is not None and self._num_yielded > self._loader_len):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be {self._loader_len} (when "
                          f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched.",
                          stacklevel=2)
        return data


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _make_fetcher(self._kind, self._dataset, self._auto_collation, self._collate_fn,
                                      self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_mp.get_context("fork") if sys.platform.startswith("linux") else python_mp.get_context()
        elif isinstance(ctx, str):
            ctx = python_mp.get_context(ctx)
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        self._shm_dir = _make_shm_dir()
        parent = os.getpid()
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=_worker_loop, args=(
                self._kind, self._dataset, iq, self._worker_result_queue, self._workers_done_event,
                self._auto_collation, self._collate_fn, self._drop_last, self._base_seed, self._worker_init_fn, i,
                self._num_workers, parent, self._shm_dir))
            w.daemon = True
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._epoch = 0
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        if not first_iter:
            self._epoch += 1
            self._base_seed = self._base_seed  # workers keep their seeds across persistent epochs, like torch
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _check_workers(self):
        failed = []
        for w in self._workers:
            if not w.is_alive():
                failed.append(w)
        if failed:
            parts = []
            for w in failed:
                code = w.exitcode
                if code is not None and code < 0:
                    try:
                        name = signal.Signals(-code).name
                    except ValueError:
                        name = str(-code)
                    parts.append(f"DataLoader worker (pid {w.pid}) is killed by signal: {name}.")
                else:
                    parts.append(f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}.")
            self._shutdown_workers()
            raise RuntimeError(" ".join(parts) + " The worker died while loading data (out of memory, a crash in "
                               "native code, or a signal); see the worker's output for details.")

    def _get_data(self):
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            try:
                epoch, idx, data = self._worker_result_queue.get(timeout=wait)
                return epoch, idx, data.load() if isinstance(data, _Pickled) else data
            except queue.Empty:
                pass
            except (EOFError, ConnectionError, OSError) as e:
                self._check_workers()
                raise RuntimeError(f"DataLoader lost the connection to its workers: {e!r}") from e
            self._check_workers()
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # skip tasks whose worker reported the end of its iterable dataset
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                worker_id = info[0]
                if len(info) == 2 or self._workers_status[worker_id]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            epoch, idx, data = self._get_data()
            if epoch != self._epoch:
                continue  # a late result from an abandoned earlier epoch of persistent workers
            self._tasks_outstanding -= 1
            if self._kind == "iterable" and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except Exception:  # noqa: BLE001
                    pass
            for w in self._workers:
                w.join(timeout=5.0)
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1.0)
                try:
                    w.close()  # releases the process sentinel fd now rather than at garbage collection
                except ValueError:  # still running after terminate: leave it to the OS
                    pass
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        except Exception:  # noqa: BLE001 - best effort during interpreter shutdown
            pass
        if getattr(self, "_shm_dir", None):
            shutil.rmtree(self._shm_dir, ignore_errors=True)  # batches sent but never received

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001
            pass


# ---------------------------------------------------------------------- DataLoader
class DataLoader:
    """Iterate over a dataset in batches, as ``torch.utils.data.DataLoader``: a sampler yields indices (or an
    iterable-style dataset yields samples), they are grouped into batches and merged by ``collate_fn``, in the main
    process or in ``num_workers`` worker processes.

    Args:
        dataset: a map-style or iterable-style dataset.
        batch_size: samples per batch; None disables batching (``collate_fn`` then sees one sample at a time).
        shuffle: reshuffle the indices every epoch (map-style datasets only).
        sampler: the index source, instead of ``shuffle``.
        batch_sampler: a source of index lists, instead of ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers: worker processes; 0 loads in the main process.
        collate_fn: merges a list of samples into a batch; None means :func:`default_collate` (or
            :func:`default_convert` without batching).
        pin_memory: accepted for torch compatibility (no effect on the CPU).
        drop_last: drop a final batch smaller than ``batch_size``.
        timeout: seconds to wait for a batch from the workers (0: no limit).
        worker_init_fn: called with the worker id in each worker after seeding.
        multiprocessing_context: the start method (a name or a context); None means the platform default.
        generator: the random generator of the default samplers and the workers' base seed.
        prefetch_factor: batches loaded ahead per worker (default 2 with workers; must be None without).
        persistent_workers: keep the workers alive between epochs.
        pin_memory_device: accepted for torch compatibility.
        in_order: return batches in sampler order (False: as the workers finish them).

    Raises:
        ValueError: a negative ``num_workers``, ``timeout`` or ``prefetch_factor``, ``prefetch_factor`` or
            ``persistent_workers`` without workers, or mutually exclusive options combined (``sampler`` with
            ``shuffle``, ``batch_sampler`` with the batching options, a sampler or shuffle with an iterable-style
            dataset).

    Examples:
        >>> import flowvision.backend as flow
        >>> from flowvision.backend.utils.data import DataLoader, TensorDataset
        >>> loader = DataLoader(TensorDataset(flow.arange(5)), batch_size=2)
        >>> [batch[0].tolist() for batch in loader]
        [[0, 1], [2, 3], [4]]
    """

    __initialized = False

    def __init__(self, dataset: Dataset, batch_size: Optional[int] = 1, shuffle: Optional[bool] = None,
                 sampler: Optional[Union[Sampler, Iterable[Any]]] = None,
                 batch_sampler: Optional[Union[Sampler, Iterable[List[Any]]]] = None, num_workers: int = 0,
                 collate_fn: Optional[Callable[[List[Any]], Any]] = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Optional[Callable[[int], None]] = None,
                 multiprocessing_context: Optional[Any] = None, generator: Optional[Generator] = None, *,
                 prefetch_factor: Optional[int] = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                 "drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]  # map-style: sized
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._iterator = None

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_shared_seed(self):
        from ...random import _rng
        return int(_rng(self.generator).integers(0, 2 ** 63 - 1))

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil
                length = length // self.batch_size if self.drop_last else ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)
