"""flowvision.train: timm's ``train.py`` recipe on the flowvision engine.

``flowvision train`` / ``python -m flowvision.train`` run it from the command line (see docs/training.md);
the pieces are importable for custom loops: the optimizer and scheduler factories, the train/validate loops
and atomic, exactly-resumable checkpoints. Attributes load on first use, so the command line's help does
not start the engine.
"""
import importlib

from ._names import OPTIMIZERS, SCHEDULERS

_LAZY = {
    "create_optimizer_v2": "optim_factory", "param_groups_weight_decay": "optim_factory",
    "create_scheduler_v2": "scheduler_factory",
    "NonFiniteLossError": "engine", "train_one_epoch": "engine", "validate": "engine",
    "CheckpointError": "checkpoint", "load_checkpoint": "checkpoint", "restore_training_state": "checkpoint",
    "save_checkpoint": "checkpoint", "training_state": "checkpoint",
}

__all__ = ["OPTIMIZERS", "SCHEDULERS", *_LAZY, "main"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def main(argv=None) -> int:
    """Run ``flowvision train`` with ``argv`` (see :mod:`flowvision.train.recipe`)."""
    from .recipe import main as _main
    return _main(argv)
