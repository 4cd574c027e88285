"""flowvision.backend.cuda: the optional CUDA side of the engine.

The compiled module ``flowvision.backend._C_cuda`` exists only where the package was
built with a CUDA compiler (CMake ``check_language(CUDA)``; ``-DFLOWVISION_CUDA=OFF``
disables it). It is imported lazily, on the first query, so importing this module never
fails and never touches the driver.
"""
from __future__ import annotations

import importlib
import threading

__all__ = ["is_built", "is_available", "device_count", "get_device_name", "current_device", "get_device_capability",
           "set_device", "synchronize", "Stream", "Event", "current_stream", "stream", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats", "empty_cache",
           "reset_peak_memory_stats", "autocast", "allow_tf32"]

# Conv and matmul on CUDA use TF32 tensor cores (sm_80+) only when this is True. Off by default
# so CUDA results match the CPU engine to fp32 rounding (torch's default for matmul, too).
allow_tf32 = False

_lock = threading.Lock()
_module = None
_import_error: BaseException | None = None
_tried = False


def _load():
    """Returns the _C_cuda module or None (remembering why it could not be imported)."""
    global _module, _import_error, _tried
    if _tried:
        return _module
    with _lock:
        if not _tried:
            try:
                _module = importlib.import_module("flowvision.backend._C_cuda")
            except Exception as e:  # ImportError, or a broken/foreign binary
                _module, _import_error = None, e
            _tried = True
    return _module


def is_built() -> bool:
    """True if flowvision was compiled with CUDA support (the _C_cuda module imports)."""
    return _load() is not None


def device_count() -> int:
    """Number of visible CUDA devices; 0 without CUDA support, driver or device."""
    m = _load()
    if m is None:
        return 0
    try:
        return int(m.device_count())
    except Exception:
        return 0


def is_available() -> bool:
    """True if CUDA support is built and at least one device can be used. Never raises."""
    try:
        return device_count() > 0
    except Exception:
        return False


def _why_unavailable() -> str:
    m = _load()
    if m is None:
        why = f" ({_import_error})" if _import_error is not None else ""
        return "flowvision was built without CUDA support" + why
    try:
        err = m.device_count_error()
    except Exception:
        err = ""
    return "no CUDA device is available" + (f": {err}" if err else "")


def get_device_name(device=None) -> str:
    """Name of CUDA device ``device`` (an int, 'cuda:i' or a flowvision device; default 0)."""
    index = _index(device)
    n = device_count()
    if n == 0:
        raise RuntimeError(f"get_device_name({index}): {_why_unavailable()}")
    if not 0 <= index < n:
        raise RuntimeError(f"get_device_name: invalid device index {index} (device_count() is {n})")
    return _load().get_device_name(index)


def current_device() -> int:
    if not is_available():
        raise RuntimeError(f"current_device(): {_why_unavailable()}")
    return 0


def _require_device(what="CUDA"):
    """Raise the one clear RuntimeError for "this machine can't run CUDA" (never touches the driver
    if flowvision was built without CUDA)."""
    if _load() is None:
        raise RuntimeError(f"{what}: flowvision was built without CUDA (nvcc was not found when the package was "
                           f"built){f' ({_import_error})' if _import_error is not None else ''}")
    if device_count() == 0:
        raise RuntimeError(f"{what}: {_why_unavailable()}")
    return _module


def get_device_capability(device=None):
    """(major, minor) compute capability of a CUDA device."""
    return tuple(_require_device("get_device_capability").get_device_capability(_index(device)))


def set_device(device):
    m = _require_device("set_device")
    if _index(device) != 0:
        raise RuntimeError("flowvision's CUDA backend uses one device (index 0); multi-GPU is not implemented")
    m.set_device(0)


def synchronize(device=None):
    """Wait for all work queued on the device."""
    _require_device("synchronize").synchronize()


# ---------------------------------------------------------------------------------------- memory
def memory_allocated(device=None) -> int:
    """Bytes held by live CUDA tensors (as rounded by the caching allocator)."""
    m = _load()
    return int(m.memory_allocated()) if m is not None else 0


def max_memory_allocated(device=None) -> int:
    m = _load()
    return int(m.max_memory_allocated()) if m is not None else 0


def memory_reserved(device=None) -> int:
    """Bytes obtained from the driver (live tensors plus the allocator's cache)."""
    m = _load()
    return int(m.memory_reserved()) if m is not None else 0


def max_memory_reserved(device=None) -> int:
    m = _load()
    return int(m.max_memory_reserved()) if m is not None else 0


def memory_stats(device=None) -> dict:
    m = _load()
    return dict(m.memory_stats()) if m is not None else {}


def empty_cache():
    """Return the allocator's cached (unused) blocks to the driver."""
    m = _load()
    if m is not None and device_count():
        m.empty_cache()


def reset_peak_memory_stats(device=None):
    m = _load()
    if m is not None:
        m.reset_peak_memory_stats()


# ---------------------------------------------------------------------------------------- streams
class Stream:
    """A CUDA stream. ``with flowvision.backend.cuda.stream(s):`` makes it current for this thread.

    Memory is cached per stream: a tensor allocated on one stream and used on another must be kept
    alive until the other stream is done with it (there is no ``record_stream`` yet)."""

    def __init__(self, device=None, priority=0, *, _handle=None):
        m = _require_device("Stream")
        self._owned = _handle is None
        self.handle = m.stream_create(True) if _handle is None else _handle

    def synchronize(self):
        _module.stream_synchronize(self.handle)

    def query(self):
        return bool(_module.stream_query(self.handle))

    def wait_event(self, event):
        _module.stream_wait_event(self.handle, event.handle)

    def wait_stream(self, other):
        self.wait_event(other.record_event())

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.handle == self.handle

    def __hash__(self):
        return hash(self.handle)

    def __del__(self):
        if getattr(self, "_owned", False) and _module is not None:
            try:
                _module.stream_destroy(self.handle)
            except Exception:
                pass

    def __repr__(self):
        return f"<flowvision.cuda.Stream handle={self.handle:#x}>"


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.handle = _require_device("Event").event_create(bool(enable_timing))

    def record(self, stream=None):
        _module.event_record(self.handle, (stream or current_stream()).handle)

    def synchronize(self):
        _module.event_synchronize(self.handle)

    def query(self):
        return bool(_module.event_query(self.handle))

    def wait(self, stream=None):
        (stream or current_stream()).wait_event(self)

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing enabled)."""
        return float(_module.event_elapsed_ms(self.handle, end_event.handle))

    def __del__(self):
        if _module is not None and getattr(self, "handle", None):
            try:
                _module.event_destroy(self.handle)
            except Exception:
                pass


def current_stream(device=None):
    """The calling thread's current stream (the legacy default stream unless changed)."""
    return Stream(_handle=_require_device("current_stream").current_stream())


class stream:
    """Context manager making ``s`` the current stream of this thread."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        if self.s is None:
            return None
        self.prev = _module.current_stream()
        _module.set_current_stream(self.s.handle)
        return self.s

    def __exit__(self, *exc):
        if self.s is not None:
            _module.set_current_stream(self.prev)
        return False


# ---------------------------------------------------------------------------------------- autocast
def autocast(enabled=True, dtype=None, cache_enabled=True):
    """Mixed precision for CUDA ops, like ``torch.autocast("cuda")``: conv / matmul / linear run in
    ``dtype`` (float16 by default, or bfloat16) with fp32 accumulation; softmax, log_softmax, layer
    norm and group norm run in float32; other ops run in their inputs' dtype."""
    from ._cuda.autocast import autocast as _ac
    return _ac(enabled=enabled, dtype=dtype)


def _index(device) -> int:
    if device is None:
        return 0
    if isinstance(device, bool):
        raise TypeError(f"invalid device {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        kind, _, idx = device.partition(":")
        if kind != "cuda" or (idx and not idx.isdecimal()):
            raise ValueError(f"invalid CUDA device {device!r}")
        return int(idx) if idx else 0
    idx = getattr(device, "index", None)
    if getattr(device, "type", None) == "cuda":
        return 0 if idx is None else int(idx)
    raise ValueError(f"invalid CUDA device {device!r}")


# ---------------------------------------------------------------------------------------- torch.cuda.amp
def _amp_module():
    """``torch.cuda.amp`` (``autocast`` and ``GradScaler`` defaulting to CUDA), importable as a submodule."""
    import sys
    import types
    mod = types.ModuleType(__name__ + ".amp", "torch.cuda.amp: CUDA defaults of flowvision.backend.amp")

    def amp_autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast as _ac
        return _ac("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def grad_scaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                    enabled=True):
        from .amp import GradScaler
        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
    mod.autocast, mod.GradScaler = amp_autocast, grad_scaler
    sys.modules[mod.__name__] = mod
    return mod


amp = _amp_module()
