"""``torch.accelerator``: the current accelerator (CUDA when a device is usable here, otherwise none).

Scripts call ``accelerator.is_available()`` and fall back to ``device("cpu")``; on a machine without a CUDA
device (or a build without the CUDA part) that is what happens.
"""
from __future__ import annotations

from . import cuda as _cuda
from ._device import device as _Device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "synchronize", "device_index"]


def is_available() -> bool:
    """True when a CUDA device can run this engine's kernels."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> _Device | None:
    """``device("cuda")`` when CUDA is usable, else None (torch returns None without an accelerator)."""
    return _Device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    """Number of accelerator devices (0 without one)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def current_device_index() -> int:
    """Index of the current accelerator device; raises when there is none."""
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device) -> None:
    """Make ``device`` (an int, ``"cuda:N"`` or a device) the current accelerator device."""
    _cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    """Wait for the accelerator's queued work (a no-op when there is none)."""
    if _cuda.is_available():
        _cuda.synchronize(device)


class device_index:
    """Context manager that makes ``device`` current inside the block (None: leave it unchanged)."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev)
        return False
