"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` processes and surface the first failure."""
from __future__ import annotations

import multiprocessing
import traceback


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.error_index, self.pid = error_index, pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code without raising a Python exception."""

    def __init__(self, msg, error_index, pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, pid)
        self.exit_code, self.signal_name = exit_code, signal_name


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - every failure goes back to the parent with its traceback
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the processes; raise for the first that failed (the others are terminated). True when all
        finished."""
        for p in self.processes:
            p.join(timeout)
        for i, (p, q) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode is None:
                continue
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not q.empty():
                    raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n"
                                                 + q.get(), i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)``; join them when ``join`` else return the context."""
    ctx = multiprocessing.get_context(start_method)
    procs, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        procs.append(p)
        queues.append(q)
    context = ProcessContext(procs, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch's ``mp.spawn``: ``start_processes`` with the spawn start method."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
