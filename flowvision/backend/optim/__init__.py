"""flowvision.backend.optim: torch.optim's optimizers and schedulers on the flowvision engine."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .others import RMSprop, Adagrad, Lamb, LAMB  # noqa: F401
from .adaptive import Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from . import lr_scheduler  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Lamb", "LAMB", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "LBFGS", "lr_scheduler", "swa_utils"]


def __getattr__(name):
    if name == "swa_utils":  # loads nn, so only on first use
        import importlib
        return importlib.import_module(f"{__name__}.swa_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
