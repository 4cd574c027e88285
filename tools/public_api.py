"""The public API surface that the documentation site renders and the docstring/type-hint test counts.

One list, used by ``docs/hooks/generate.py`` (API reference pages) and ``tests/test_public_api_docs.py`` (coverage).
A module's public callables are the names in its ``__all__``; modules without ``__all__`` are filtered by the module
that defines each object. ``flowvision.models``' ~340 registered model factories are listed by the generated model
zoo table instead (one ``@register_model`` builder per architecture); the reference covers the registry and builder API.
"""
import importlib
import inspect
from typing import Callable, Dict, List, Optional, Tuple

# (page slug, module, title, filter on the defining module of each public name or None for __all__)
MODULES: List[Tuple[str, str, str, Optional[Callable[[str], bool]]]] = [
    ("models", "flowvision.models", "flowvision.models",
     lambda m: m.startswith("flowvision.models._") and not m.startswith("flowvision.models._efficientnet")),
    ("transforms", "flowvision.transforms", "flowvision.transforms", None),
    ("transforms-functional", "flowvision.transforms.functional", "flowvision.transforms.functional", None),
    ("transforms-v2", "flowvision.transforms.v2", "flowvision.transforms.v2", None),
    ("transforms-v2-functional", "flowvision.transforms.v2.functional", "flowvision.transforms.v2.functional", None),
    ("data", "flowvision.data", "flowvision.data", lambda m: m.startswith("flowvision.data")),
    ("datasets", "flowvision.datasets", "flowvision.datasets", None),
    ("hub", "flowvision.hub", "flowvision.hub", None),
    ("io", "flowvision.io", "flowvision.io", None),
    ("utils", "flowvision.utils", "flowvision.utils", None),
    ("ops", "flowvision.ops", "flowvision.ops", None),
    ("backend", "flowvision.backend", "flowvision.backend (tensor creation)",
     lambda m: m == "flowvision.backend._creation"),
    ("compile", "flowvision", "flowvision.compile", None),
    ("nn-functional", "flowvision.backend.nn.functional", "flowvision.backend.nn.functional", None),
    ("optim", "flowvision.backend.optim", "flowvision.backend.optim", None),
    ("lr-scheduler", "flowvision.backend.optim.lr_scheduler", "flowvision.backend.optim.lr_scheduler", None),
    ("utils-data", "flowvision.backend.utils.data", "flowvision.backend.utils.data", None),
    ("memory", "flowvision.backend.memory", "flowvision.backend.memory", None),
]


def public_callables(module: str, defined_in: Optional[Callable[[str], bool]] = None) -> Dict[str, object]:
    """``{name: object}`` of the public callables (functions and classes) of ``module``, sorted by name.

    Args:
        module: dotted module name.
        defined_in: keep only objects whose ``__module__`` passes this test; without it, ``__all__`` decides.

    Returns:
        The callables, excluding submodules and constants.
    """
    if module == "flowvision":  # the top level's only engine entry point on the reference surface
        import flowvision
        return {"compile": flowvision.compile}
    mod = importlib.import_module(module)
    if defined_in is None:
        names = list(getattr(mod, "__all__"))
    else:
        names = [n for n in dir(mod) if not n.startswith("_")]
    out = {}
    for n in sorted(set(names)):
        obj = getattr(mod, n, None)
        if obj is None or inspect.ismodule(obj) or not callable(obj):
            continue
        if defined_in is not None and not defined_in(getattr(obj, "__module__", "") or ""):
            continue
        out[n] = obj
    return out
