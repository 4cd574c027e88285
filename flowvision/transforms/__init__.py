"""torchvision-equivalent transforms for PIL images, numpy HWC arrays and flowvision.backend tensors.

``import flowvision.transforms as T`` gives torchvision's v1 API (classes + ``T.functional``);
``flowvision.transforms.v2`` carries boxes, masks and videos. Randomness comes from one seedable
source: ``flowvision.transforms.manual_seed(seed)``.
"""
from . import functional
from ._random import manual_seed
from .autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _t_all

__all__ = list(_t_all) + ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix",
                          "functional", "manual_seed"]


def __getattr__(name):
    if name == "v2":
        import importlib

        mod = importlib.import_module(f"{__name__}.v2")
        globals()["v2"] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
