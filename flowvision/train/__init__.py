"""flowvision.train: timm's ``train.py`` recipe on the flowvision engine.

``flowvision train`` / ``python -m flowvision.train`` run it from the command line (see docs/training.md);
the pieces are importable for custom loops: the optimizer and scheduler factories, the train/validate loops
and atomic, exactly-resumable checkpoints.
"""
from .optim_factory import OPTIMIZERS, create_optimizer_v2, param_groups_weight_decay
from .scheduler_factory import SCHEDULERS, create_scheduler_v2
from .engine import NonFiniteLossError, train_one_epoch, validate
from .checkpoint import (CheckpointError, load_checkpoint, restore_training_state, save_checkpoint,
                         training_state)

__all__ = ["OPTIMIZERS", "create_optimizer_v2", "param_groups_weight_decay", "SCHEDULERS", "create_scheduler_v2",
           "NonFiniteLossError", "train_one_epoch", "validate", "CheckpointError", "load_checkpoint",
           "restore_training_state", "save_checkpoint", "training_state", "main"]


def main(argv=None) -> int:
    """Run ``flowvision train`` with ``argv`` (see :mod:`flowvision.train.recipe`)."""
    from .recipe import main as _main
    return _main(argv)
