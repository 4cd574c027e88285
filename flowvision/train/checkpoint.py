"""Training checkpoints: written atomically, restored exactly.

A checkpoint holds the model, optimizer, scheduler and EMA state, the RNG states (Python, numpy, the
engine's), the epoch to resume from, the best metric so far and the run's arguments. It is written to a
temporary file in the same directory, flushed to disk and renamed over the target, so a crash (or a NaN
stop) never leaves a half-written ``last.pth``/``best.pth``.
"""
from __future__ import annotations

import os
import random
import tempfile
from typing import Any, Dict, Optional

import numpy as np

import flowvision.backend as fb

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "training_state", "restore_training_state",
           "rng_state", "set_rng_state"]


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read or does not fit the model/optimizer it is restored into."""


def rng_state() -> Dict[str, Any]:
    """The Python, numpy-global and engine RNG states."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "backend": fb.get_rng_state()}


def set_rng_state(state: Dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""
    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    np.random.set_state(state["numpy"])
    fb.set_rng_state(state["backend"])


def save_checkpoint(state: Dict[str, Any], path: str) -> None:
    """Write ``state`` to ``path`` atomically (temporary file, fsync, rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            fb.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(path: str) -> Dict[str, Any]:
    """Read a checkpoint, turning every failure into a :class:`CheckpointError` that names the file."""
    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint {path!r} does not exist")
    try:
        ckpt = fb.load(path)
    except Exception as e:
        raise CheckpointError(f"checkpoint {path!r} is unreadable or corrupt ({type(e).__name__}: {e})") from e
    if not isinstance(ckpt, dict) or "state_dict" not in ckpt:
        raise CheckpointError(f"checkpoint {path!r} has no 'state_dict'; it is not a flowvision train checkpoint")
    return ckpt


def training_state(model, optimizer=None, scheduler=None, model_ema=None, epoch: int = 0,
                   metric: Optional[float] = None, best_metric: Optional[float] = None,
                   args: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Everything needed to continue training after ``epoch`` (``epoch`` = the next epoch to run)."""
    state: Dict[str, Any] = {"epoch": int(epoch), "state_dict": model.state_dict(), "rng": rng_state(),
                             "metric": metric, "best_metric": best_metric, "args": dict(args or {})}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    if scheduler is not None:
        state["scheduler"] = scheduler.state_dict()
    if model_ema is not None:
        state["state_dict_ema"] = model_ema.module.state_dict()
    return state


def restore_training_state(ckpt: Dict[str, Any], model, optimizer=None, scheduler=None, model_ema=None,
                           path: str = "checkpoint") -> int:
    """Load a :func:`training_state` dict into the given objects; returns the epoch to start from."""
    try:
        model.load_state_dict(ckpt["state_dict"])
        if optimizer is not None:
            if "optimizer" not in ckpt:
                raise KeyError("optimizer")
            optimizer.load_state_dict(ckpt["optimizer"])
        if scheduler is not None and "scheduler" in ckpt:
            scheduler.load_state_dict(ckpt["scheduler"])
        if model_ema is not None:
            model_ema.module.load_state_dict(ckpt.get("state_dict_ema", ckpt["state_dict"]))
        if "rng" in ckpt:
            set_rng_state(ckpt["rng"])
    except (KeyError, ValueError, RuntimeError, TypeError) as e:
        raise CheckpointError(f"{path!r} does not fit this model/optimizer ({type(e).__name__}: {e})") from e
    return int(ckpt.get("epoch", 0))
