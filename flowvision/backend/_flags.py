"""Process-wide switches torch scripts set at start-up: determinism and float32 matmul precision."""
from __future__ import annotations

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_deterministic_debug_mode", "get_deterministic_debug_mode"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the request for deterministic algorithms.

    Every CPU kernel of this engine is already deterministic for a given thread count, so nothing needs to be
    switched; the flag is kept so ``are_deterministic_algorithms_enabled()`` reports what the script asked.
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """torch's 0/1/2 or "default"/"warn"/"error" spelling of ``use_deterministic_algorithms``."""
    modes = {"default": 0, "warn": 1, "error": 2}
    m = modes.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if m not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of 'default', 'warn', 'error', "
                           f"but got {debug_mode}")
    use_deterministic_algorithms(m != 0, warn_only=m == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Accept torch's "highest" / "high" / "medium".

    The CPU GEMM always computes in float32 ("highest"); the chosen value is recorded and reported back by
    ``get_float32_matmul_precision`` as torch does.
    """
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid float32 matmul precision {precision!r}: expected 'highest', 'high' or 'medium'")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]
