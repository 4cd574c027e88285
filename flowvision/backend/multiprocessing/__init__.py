"""``torch.multiprocessing``: Python's ``multiprocessing`` plus tensors that cross processes by shared memory.

Importing this module registers a reducer for ``Tensor`` and ``nn.Parameter`` with multiprocessing's pickler:
a CPU tensor sent to another process (``Process`` arguments, ``Queue.put``) is moved into shared memory once and
the receiver maps the same pages, so Hogwild-style training (children updating a shared model in place) updates
the parent's parameters.  ``Module.share_memory()`` does the move ahead of time.
"""
from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403
from multiprocessing.reduction import ForkingPickler as _ForkingPickler

from .._tensor import Tensor as _Tensor
from ._shared import reduce_tensor as _reduce_tensor, share_memory_, is_shared  # noqa: F401

__all__ = list(_mp.__all__) + ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                               "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
                               "get_all_sharing_strategies"]


def _register_reducers() -> None:
    from ..nn.parameter import Parameter, Buffer
    for cls in (_Tensor, Parameter, Buffer):
        _ForkingPickler.register(cls, _reduce_tensor)


_register_reducers()

_strategy = "file_system"


def get_all_sharing_strategies() -> set:
    """Named POSIX shared-memory segments are the one strategy here."""
    return {"file_system"}


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accept "file_system" (what this module does) and torch's default "file_descriptor", which here uses
    the same named segments."""
    if new_strategy not in ("file_system", "file_descriptor"):
        raise ValueError(f"unknown sharing strategy {new_strategy!r}")


from ._spawn import spawn, start_processes, ProcessContext, ProcessRaisedException, ProcessExitedException  # noqa: E402,F401
