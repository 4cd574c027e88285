"""flowvision.backend.utils: data loading (``utils.data``)."""
from . import data  # noqa: F401


def __getattr__(name):
    if name in ("checkpoint", "tensorboard"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
