"""``lazy_module(name)``: a module object whose import runs on its first attribute access.

For heavy optional dependencies that a module needs on a few code paths only (OpenCV's fast paths in the image
kernels): ``import flowvision.transforms`` then does not pay their import time up front.
"""
from __future__ import annotations

import importlib.util
import sys
import types


def lazy_module(name: str) -> types.ModuleType:
    """``name`` as a lazily executed module (the already imported module if there is one); raises
    ``ModuleNotFoundError`` now if it is not installed."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
