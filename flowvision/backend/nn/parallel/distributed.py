"""``DistributedDataParallel``: data-parallel training over MPI with bucketed, overlapped gradient all-reduce.

How a step runs (the same scheme as torch's reducer):

* construction broadcasts parameters and buffers from rank 0 and checks every rank holds the same model;
* parameters are packed, in reverse registration order (roughly the order backward produces their
  gradients), into buckets of ``bucket_cap_mb`` (the first one 1 MB so communication starts early);
* each parameter's post-accumulate-grad hook copies its gradient into its bucket; a full bucket is started
  with a non-blocking ``MPI_Iallreduce`` while backward goes on computing the earlier layers' gradients.
  Buckets start in index order on every rank (MPI needs collectives issued in the same order everywhere);
* when the last bucket has started, the hook waits for all of them, divides by the world size and writes the
  averaged gradients back into ``.grad``.

A progress thread completes the outstanding requests while the main thread computes (Open MPI moves a
non-blocking collective forward only inside MPI calls); it needs MPI_THREAD_MULTIPLE and falls back to
polling from the hooks when the library does not provide it.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Iterator, List, Optional

import numpy as np

from ... import _dtype as D
from ..._bf16 import bf16_to_f32, f32_to_bf16
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...distributed import collectives as C
from ...distributed._mpi import DistributedError, mpi_type, wait_all
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1 << 20


class _Bucket:
    __slots__ = ("params", "indices", "offsets", "buffer", "pending", "request", "wire")

    def __init__(self, params, indices, wire):
        self.params, self.indices, self.wire = params, indices, wire
        sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.buffer = np.zeros(int(self.offsets[-1]), wire)
        self.pending = len(params)
        self.request = None


def _grad_wire_dtype(p: Tensor) -> np.dtype:
    # half-precision gradients are reduced in float32 (MPI has no half types)
    return np.dtype(np.float32) if p._dtype in (D.bfloat16, D.float16) else p._data.dtype


def _iter_tensors(obj) -> Iterator[Tensor]:
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(o)


class DistributedDataParallel(Module):
    """Replicate ``module`` on every MPI rank and average gradients across ranks during backward.

    Args:
        module: the model; identical architecture on every rank (checked at construction).
        device_ids: accepted for torch compatibility; only None / CPU is supported.
        output_device: accepted for torch compatibility (ignored on CPU).
        dim: accepted for torch compatibility (inputs are not scattered: each rank feeds its own batch).
        broadcast_buffers: copy rank 0's buffers (BatchNorm statistics, ...) to all ranks before each forward
            (default True; ``forward_sync_buffers`` is torch's newer name for it).
        init_sync: broadcast rank 0's parameters and buffers at construction (default True).
        process_group: the group to reduce over (default: the world).
        bucket_cap_mb: bucket size in MiB (default 25, as torch).
        find_unused_parameters: after forward, find the parameters the output does not depend on and mark
            them ready, so backward does not wait for gradients that never come. Costs a graph walk per step.
        gradient_as_bucket_view: accepted for torch compatibility; gradients are always copied back.
        static_graph: accepted for torch compatibility.
        overlap: True (default) starts each bucket's all-reduce during backward; False starts them all after
            backward (for measuring what overlap buys).

    torch's ``delay_all_reduce_named_params``, ``param_to_hook_all_reduce``, ``mixed_precision``, ``device_mesh``,
    ``bucket_cap_mb_list`` and ``skip_all_reduce_unused_params=True`` are refused with an error;
    ``batched_grad_copy`` is accepted and has no effect.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: Optional[bool] = None, init_sync: bool = True,
                 process_group: Optional[C.ProcessGroup] = None, bucket_cap_mb: Optional[float] = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params: bool = False, bucket_cap_mb_list=None,
                 batched_grad_copy: bool = False, forward_sync_buffers: Optional[bool] = None, *,
                 overlap: bool = True):
        super().__init__()
        unsupported = {"delay_all_reduce_named_params": delay_all_reduce_named_params,
                       "param_to_hook_all_reduce": param_to_hook_all_reduce, "mixed_precision": mixed_precision,
                       "device_mesh": device_mesh, "bucket_cap_mb_list": bucket_cap_mb_list,
                       "skip_all_reduce_unused_params": skip_all_reduce_unused_params or None}
        given = [k for k, v in unsupported.items() if v is not None]
        if given:
            raise ValueError(f"DistributedDataParallel over MPI does not support {', '.join(given)}")
        if broadcast_buffers is None:
            broadcast_buffers = True if forward_sync_buffers is None else forward_sync_buffers
        if not C.is_initialized():
            raise RuntimeError("DistributedDataParallel needs a process group: call "
                               "flowvision.backend.distributed.init_process_group('mpi') first (start the job "
                               "with mpirun -np N)")
        if device_ids not in (None, [], ["cpu"]):
            raise ValueError(f"device_ids={device_ids!r}: DistributedDataParallel runs one CPU replica per process; "
                             "leave device_ids=None")
        if not isinstance(module, Module):
            raise TypeError(f"module must be an nn.Module, got {type(module).__name__}")
        bucket_cap_mb = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        if bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be > 0, got {bucket_cap_mb}")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int(bucket_cap_mb * (1 << 20))
        self.dim, self.device_ids, self.output_device = dim, device_ids, output_device
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.overlap = bool(overlap)
        self.process_group = process_group
        MPI, pg = C._comm_and_mpi(process_group)
        object.__setattr__(self, "_mpi", MPI)
        object.__setattr__(self, "_pg", pg)

        seen, named = set(), []
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                if not p.is_cpu:
                    raise ValueError(f"parameter {name} is on {p.device}: DistributedDataParallel over MPI needs "
                                     "CPU parameters")
                seen.add(id(p))
                named.append((name, p))
        object.__setattr__(self, "_param_names", [n for n, _ in named])
        object.__setattr__(self, "_params", [p for _, p in named])
        self._verify_same_model()
        if init_sync:
            self._sync_module_states()
        self._build_buckets()
        object.__setattr__(self, "_hook_handles",
                           [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params])
        self._reset_iteration(armed=False)
        self.last_reduce_wait_s = 0.0  # diagnostics: seconds the last backward waited for its all-reduces
        threaded = MPI.Query_thread() >= MPI.THREAD_MULTIPLE
        object.__setattr__(self, "_progress", _ProgressThread(MPI) if threaded and self.overlap else None)

    # ------------------------------------------------------------------ construction helpers
    def _verify_same_model(self):
        sig = [(n, tuple(p.shape), p._dtype.name) for n, p in zip(self._param_names, self._params)]
        sig += [(n, tuple(b.shape), b._dtype.name) for n, b in self.module.named_buffers() if b is not None]
        everyone = self._pg.comm.allgather(sig)
        for r, other in enumerate(everyone):
            if other != sig:
                diff = next((f"{a} vs {b}" for a, b in zip(sig, other) if a != b),
                            f"{len(sig)} vs {len(other)} parameters and buffers")
                raise ValueError(f"DistributedDataParallel: rank {self._pg.rank()} and rank {r} hold different "
                                 f"models ({diff}); every rank must build the same architecture")

    def _broadcast_coalesced(self, tensors: List[Tensor]):
        """Broadcast ``tensors`` from rank 0 in one message per dtype (raw bytes, so bfloat16 travels as is)."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        requests, packs = [], []
        for dt, group in by_dtype.items():
            flat = np.concatenate([np.ascontiguousarray(t._data).reshape(-1) for t in group]) if group else None
            requests.append(self._pg.comm.Ibcast([flat.view(np.uint8), self._mpi.BYTE], root=0))
            packs.append((group, flat))
        wait_all(self._mpi, requests, self._pg.timeout, "DistributedDataParallel broadcast")
        if self._pg.rank() == 0:
            return
        for group, flat in packs:
            off = 0
            for t in group:
                n = t._data.size
                t._data[...] = flat[off:off + n].reshape(t._data.shape)
                t._version[0] += 1
                off += n

    def _sync_module_states(self):
        tensors = list(self.module.parameters()) + [b for b in self.module.buffers() if b is not None]
        uniq = list({id(t): t for t in tensors}.values())
        self._broadcast_coalesced(uniq)

    def _build_buckets(self):
        order = list(range(len(self._params)))[::-1]
        buckets, current, cur_bytes, cur_wire = [], [], 0, None
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for i in order:
            p = self._params[i]
            wire = _grad_wire_dtype(p)
            nbytes = p.numel() * wire.itemsize
            if current and (wire != cur_wire or cur_bytes + nbytes > cap):
                buckets.append(_Bucket([self._params[j] for j in current], current, cur_wire))
                current, cur_bytes = [], 0
                cap = self.bucket_bytes_cap
            current.append(i)
            cur_bytes += nbytes
            cur_wire = wire
        if current:
            buckets.append(_Bucket([self._params[j] for j in current], current, cur_wire))
        where = {}
        for b_idx, b in enumerate(buckets):
            for k, i in enumerate(b.indices):
                where[i] = (b_idx, k)
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_index", {id(p): i for i, p in enumerate(self._params)})

    # ------------------------------------------------------------------ per-iteration state
    def _reset_iteration(self, armed: bool):
        st = self.__dict__
        st["_armed"] = armed
        st["_started"] = False  # a gradient hook has fired in this iteration
        st["_finished"] = False
        st["_ready"] = np.zeros(len(self._params), bool)
        st["_next_bucket"] = 0
        st["_used"] = None  # find_unused_parameters: int8 map of locally used parameters
        st["_used_request"] = None
        st["_unused_local"] = []
        for b in self._buckets:
            b.pending = len(b.params)
            b.request = None

    @contextlib.contextmanager
    def no_sync(self):
        """Inside this context backward accumulates gradients locally; the first backward after it reduces the
        accumulated sum (gradient accumulation without a collective per micro-batch)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._armed and self._started and not self._finished:
            missing = [self._param_names[i] for i in np.flatnonzero(~self._ready)]
            raise RuntimeError(
                "DistributedDataParallel: expected to have finished reduction in the prior iteration before "
                "starting a new one. These parameters received no gradient in the last backward: "
                f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}. If some parameters are not "
                "used to compute the loss, construct DistributedDataParallel(..., find_unused_parameters=True); "
                "also make sure the loss depends on every forward output.")
        if self.require_forward_param_sync and self.broadcast_buffers and self._pg.size() > 1:
            bufs = [b for b in self.module.buffers() if b is not None]
            if bufs:
                self._broadcast_coalesced(bufs)
        out = self.module(*inputs, **kwargs)
        armed = is_grad_enabled() and self.require_backward_grad_sync and bool(self._params)
        self._reset_iteration(armed)
        if armed and self.find_unused_parameters:
            self._find_used(out)
        return out

    def _find_used(self, out):
        """Walk the autograd graph from the outputs and record which parameters it reaches."""
        from ...autograd.graph import AccumulateGrad
        used = np.zeros(len(self._params), np.int8)
        stack = [t.grad_fn for t in _iter_tensors(out) if t.grad_fn is not None]
        for t in _iter_tensors(out):  # an output that is itself a parameter
            i = self._index.get(id(t))
            if i is not None:
                used[i] = 1
        seen = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                i = self._index.get(id(node.variable))
                if i is not None:
                    used[i] = 1
                continue
            stack.extend(n for n, _ in node.next_functions if n is not None)
        self.__dict__["_used"] = used
        self.__dict__["_unused_local"] = [int(i) for i in np.flatnonzero(used == 0)]

    # ------------------------------------------------------------------ backward side
    def _grad_ready(self, p: Tensor):
        if not self._armed:
            return
        if self._finished:
            raise RuntimeError("DistributedDataParallel: a parameter received a gradient after this iteration's "
                               "reduction finished (two backward passes through one forward?). Run forward again "
                               "for each backward, or accumulate inside no_sync().")
        if not self._started:
            self.__dict__["_started"] = True
            if self._used is not None:
                # issued first on every rank, so the collective order matches everywhere
                self.__dict__["_used_request"] = self._pg.comm.Iallreduce(
                    self._mpi.IN_PLACE, [self._used, self._mpi.INT8_T], self._mpi.MAX)
                for i in self._unused_local:
                    self._mark_ready(i, None)
        self._mark_ready(self._index[id(p)], p)

    def _mark_ready(self, i: int, p: Optional[Tensor]):
        if self._ready[i]:
            raise RuntimeError(f"DistributedDataParallel: parameter {self._param_names[i]} was marked ready twice "
                               "in one iteration (is it used in a reentrant backward, or shared in a way the "
                               "graph walk missed?)")
        self._ready[i] = True
        b_idx, k = self._where[i]
        b = self._buckets[b_idx]
        dst = b.buffer[b.offsets[k]:b.offsets[k + 1]]
        g = p.grad if p is not None else None
        if g is None:
            dst[...] = 0
        else:
            src = bf16_to_f32(g._data) if g._dtype is D.bfloat16 else g._data
            dst[...] = src.reshape(-1)
        b.pending -= 1
        if b.pending == 0 and self.overlap:
            self._launch_ready_buckets()
        if not self._ready.all():
            if self.overlap and self._progress is None:
                self._poll()
            return
        self._launch_ready_buckets()
        self._finish()

    def _launch_ready_buckets(self):
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            b = self._buckets[self._next_bucket]
            b.request = self._pg.comm.Iallreduce(self._mpi.IN_PLACE, [b.buffer, mpi_type(self._mpi, b.wire)],
                                                 self._mpi.SUM)
            if self._progress is not None:
                self._progress.submit(b.request)
            self.__dict__["_next_bucket"] += 1

    def _poll(self):
        reqs = [b.request for b in self._buckets[:self._next_bucket] if b.request is not None]
        if reqs:
            self._mpi.Request.Testall(reqs)

    def _finish(self):
        reqs = [b.request for b in self._buckets]
        if self._used_request is not None:
            reqs.append(self._used_request)
        t0 = time.perf_counter()
        if self._progress is not None:
            self._progress.drain(self._pg.timeout)
        wait_all(self._mpi, reqs, self._pg.timeout, "DistributedDataParallel gradient all-reduce")
        # what backward could not hide: the step waited this long for the last all-reduces
        self.__dict__["last_reduce_wait_s"] = time.perf_counter() - t0
        self.__dict__["_finished"] = True
        world = self._pg.size()
        globally_used = self._used if self._used is not None else None
        for b in self._buckets:
            np.divide(b.buffer, world, out=b.buffer)
            for k, (i, p) in enumerate(zip(b.indices, b.params)):
                if globally_used is not None and not globally_used[i]:
                    continue  # no rank produced a gradient: leave .grad as it is (torch does the same)
                avg = b.buffer[b.offsets[k]:b.offsets[k + 1]].reshape(p._data.shape)
                if p.grad is None:
                    p.grad = Tensor._wrap(_from_wire(avg, p._dtype), p._dtype)
                else:
                    p.grad._data = _from_wire(avg, p.grad._dtype)
                    p.grad._version[0] += 1

    def __del__(self):
        prog = self.__dict__.get("_progress")
        if prog is not None:
            prog.stop()


def _from_wire(avg: np.ndarray, dtype) -> np.ndarray:
    if dtype is D.bfloat16:
        return f32_to_bf16(avg)
    return np.array(avg, dtype=dtype.np, copy=True)


class _ProgressThread:
    """Completes submitted MPI requests in the background so they advance while backward computes.

    ``MPI_Wait`` inside mpi4py releases the GIL, so the main thread's kernels and numpy run meanwhile.
    """

    def __init__(self, MPI):
        self._MPI = MPI
        self._queue: List = []
        self._cv = threading.Condition()
        self._outstanding = 0
        self._error: Optional[BaseException] = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="flowvision-ddp-progress", daemon=True)
        self._thread.start()

    def submit(self, request):
        with self._cv:
            self._queue.append(request)
            self._outstanding += 1
            self._cv.notify_all()

    def drain(self, timeout: float):
        """Block until every submitted request has completed (or raise after ``timeout`` seconds)."""
        with self._cv:
            ok = self._cv.wait_for(lambda: self._outstanding == 0 or self._error is not None, timeout)
            if self._error is not None:
                raise DistributedError(f"gradient all-reduce failed: {self._error}") from self._error
            if not ok:
                raise DistributedError(f"flowvision.distributed: gradient all-reduce did not complete within "
                                       f"{timeout:g} s: another rank has probably died or is stuck")

    def stop(self):
        with self._cv:
            self._stop = True
            self._cv.notify_all()

    def _run(self):
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._queue or self._stop)
                if self._stop:
                    return
                req = self._queue.pop(0)
            try:
                # polling with short naps: a blocking MPI_Wait spins a core, which on a busy machine is taken
                # from backward itself; drain() holds the deadline for a dead peer
                nap = 0.0
                while not req.Test():
                    if self._stop:
                        return
                    time.sleep(nap)
                    nap = min(2e-4, nap * 2 if nap else 1e-5)
            except BaseException as e:  # surfaced to the main thread by drain()
                with self._cv:
                    self._error = e
                    self._cv.notify_all()
                return
            with self._cv:
                self._outstanding -= 1
                self._cv.notify_all()
