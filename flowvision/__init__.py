"""flowvision: a vision model zoo and augmentation library on its own compute engine.

The top level is shaped like torchvision's so that ``import flowvision as torchvision``
works in existing pipelines. Subpackages are imported lazily: ``import flowvision`` stays
cheap, and a user of ``flowvision.data`` alone never pays for the model zoo.
"""
import importlib

__version__ = "0.3.0.dev0"

_SUBMODULES = (
    "backend", "models", "transforms", "datasets", "ops", "utils", "io", "data", "layers", "hub", "tv_tensors",
)

__all__ = list(_SUBMODULES) + ["__version__"]


def __getattr__(name):
    if name == "compile":  # the captured inference path, flowvision.backend.compile
        from .backend import compile
        return compile
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'flowvision' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
