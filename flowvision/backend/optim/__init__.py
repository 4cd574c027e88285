"""flowvision.backend.optim: torch.optim's optimizers and schedulers on the flowvision engine."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .others import RMSprop, Adagrad, Lamb, LAMB  # noqa: F401
from . import lr_scheduler  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Lamb", "LAMB", "lr_scheduler"]
