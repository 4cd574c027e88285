"""Python objects inside ``save``/``load`` checkpoints without pickle: ``argparse.Namespace``, ``device``,
whole ``nn.Module``s and plain objects (a dataset, a config) stored as their class path plus their attributes.

Loading resolves a class path only when the class is allowed: flowvision's own ``nn.Module`` classes, classes
registered with :func:`add_safe_globals` / inside :func:`safe_globals`, or any class when the caller passes
``weights_only=False`` (torch's "I trust this file").  An allowed class is instantiated with ``cls.__new__(cls)``
and its saved attributes are set; nothing named in the file is ever called, so a crafted file cannot run code.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import types

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals", "UnsafeObjectError"]

_safe: list = []


class UnsafeObjectError(RuntimeError):
    """A checkpoint names a class that is not on the allow-list."""


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes (or ``(class, "module.qualname")`` pairs) in checkpoints loaded with weights_only."""
    for g in safe_globals:
        if g not in _safe:
            _safe.append(g)


def get_safe_globals() -> list:
    return list(_safe)


def clear_safe_globals() -> None:
    _safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Context manager: the classes are allowed only inside the ``with`` block."""
    before = list(_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe[:] = before


def class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _allowed_path(path: str) -> type | None:
    for g in _safe:
        cls, name = (g if isinstance(g, tuple) else (g, None))
        if isinstance(cls, type) and (class_path(cls) == path or (name and name.replace(":", ".") ==
                                                                    path.replace(":", "."))):
            return cls
    return None


def resolve_class(path: str, weights_only: bool) -> type:
    """The class named ``path`` ("module:qualname") if policy allows it; raises UnsafeObjectError otherwise."""
    cls = _allowed_path(path)
    if cls is not None:
        return cls
    module, _, qualname = path.partition(":")
    own = module == "flowvision" or module.startswith("flowvision.")
    if not (own or not weights_only):
        raise UnsafeObjectError(
            f"Weights only load failed: this checkpoint holds an object of class {path.replace(':', '.')}, which is "
            "not on the allow-list. If you trust the file, allow the class with "
            "flowvision.backend.serialization.add_safe_globals([cls]) or the safe_globals([cls]) context manager, "
            "or load with weights_only=False.")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise UnsafeObjectError(f"can't find class {path.replace(':', '.')} named in the checkpoint: {e}") from None
    if not isinstance(obj, type):
        raise UnsafeObjectError(f"{path.replace(':', '.')} in the checkpoint is not a class")
    if own and weights_only:
        from .nn.modules.module import Module
        if not issubclass(obj, Module):
            raise UnsafeObjectError(f"{path.replace(':', '.')} is not an nn.Module; allow it with add_safe_globals")
    return obj


def encode_object(enc, obj, path):
    """Encoder fallback for objects that are not tensors/containers; None when ``obj`` can't be stored."""
    from ._device import device
    if isinstance(obj, argparse.Namespace):
        return {"NS": enc.encode(dict(vars(obj)), path)}
    if isinstance(obj, device):
        return {"dev": str(obj)}
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
                        functools.partial)):
        return None  # code is never stored: a loader would have to run it
    state = getattr(obj, "__dict__", None)
    if state is None or type(obj).__module__ == "builtins":
        return None
    return {"O": class_path(type(obj)), "state": enc.encode(dict(state), path + (f"<{type(obj).__name__}>",))}


def decode_object(node, decode, policy):
    """Decoder fallback for the nodes :func:`encode_object` writes; None when ``node`` is not one of them."""
    from ._device import device
    if "NS" in node:
        return argparse.Namespace(**decode(node["NS"]))
    if "dev" in node:
        return device(node["dev"])
    if "O" in node:
        cls = resolve_class(node["O"], policy.get("weights_only", True))
        obj = cls.__new__(cls)
        state = decode(node["state"])
        setstate = getattr(cls, "__setstate__", None)
        if setstate is not None:  # lets classes (nn.Module) fill in attributes newer than the file
            setstate(obj, state)
        else:
            obj.__dict__.update(state)
        return obj
    return None
