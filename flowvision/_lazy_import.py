"""``lazy_module(name)``: a stand-in for a module whose import runs on its first attribute access.

For heavy optional dependencies that a module needs on a few code paths only (OpenCV's fast paths in the image
kernels): ``import flowvision.transforms`` then does not pay their import time up front. The first access imports
the module under a lock, so threads that reach it together (a server's preprocessing pool) all see the whole
module; ``importlib.util.LazyLoader`` is not thread-safe before Python 3.12.3 (a second thread could read a module
that was still executing).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types


class _LazyModule(types.ModuleType):
    """Forwards attribute access to the real module, importing it on first use."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lock"] = threading.Lock()
        self.__dict__["_module"] = None

    def _load(self) -> types.ModuleType:
        module = self.__dict__["_module"]
        if module is None:
            with self.__dict__["_lock"]:
                module = self.__dict__["_module"]
                if module is None:
                    module = importlib.import_module(self.__name__)
                    self.__dict__["_module"] = module
        return module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __dir__(self):
        return dir(self._load())


def lazy_module(name: str) -> types.ModuleType:
    """``name`` as a module imported on its first attribute access (the already imported module if there is one);
    raises ``ModuleNotFoundError`` now if it is not installed."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _LazyModule(name)
