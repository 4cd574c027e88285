"""The base of the v1 transform classes that torchvision makes ``nn.Module`` subclasses."""
from __future__ import annotations

# torchvision's transforms are torch.nn.Module subclasses; ours subclass the engine's Module (importing it costs
# about 0.3 s on top of numpy/PIL, see docs/drop-in.md)
from ..backend.nn.modules.module import Module as _Module


class Transform(_Module):
    """Base of the transform classes that torchvision makes ``nn.Module`` subclasses (so ``nn.Sequential`` of them,
    ``.train()``/``.eval()``, hooks and ``isinstance(t, nn.Module)`` work as in torchvision).

    ``__new__`` runs ``Module.__init__`` before the subclass's ``__init__``, so subclasses need not call
    ``super().__init__()``; calling it again first (torchvision's style) is harmless.
    """

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        _Module.__init__(self)
        return self

    def forward(self, img):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{self.__class__.__name__}()"
