"""Let torch's ``default_collate`` batch flowvision tensors (e.g. a flowvision transform pipeline feeding a
``torch.utils.data.DataLoader``): a collate function for ``Tensor`` is registered in torch's
``default_collate_fn_map`` as soon as torch's collate module is loaded (now, or on first import later).
Torch is never imported by flowvision itself.
"""
from __future__ import annotations

import importlib.abc
import sys

_TARGET = "torch.utils.data._utils.collate"


def _collate_flow(batch, *, collate_fn_map=None):
    """Stack flowvision tensors into one torch tensor (zero-copy per sample through DLPack)."""
    import torch
    from ._tensor import Tensor
    parts = []
    for t in batch:
        if not isinstance(t, Tensor):
            raise TypeError(f"default_collate: batch mixes flowvision tensors with {type(t).__name__}")
        try:
            parts.append(torch.from_dlpack(t.detach().contiguous()))
        except (RuntimeError, TypeError, BufferError):
            parts.append(torch.as_tensor(t.detach().numpy()))
    return torch.stack(parts, 0)


def _register(module) -> None:
    from ._tensor import Tensor
    fn_map = getattr(module, "default_collate_fn_map", None)
    if isinstance(fn_map, dict) and Tensor not in fn_map:
        fn_map[Tensor] = _collate_flow


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the loader of torch's collate module so registration happens right after it executes."""

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)  # find the real spec without recursing into ourselves
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
        spec.loader = _Loader(loader, exec_and_register)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, exec_module):
        self._inner, self._exec = inner, exec_module

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._exec(module)


def install() -> None:
    if _TARGET in sys.modules:
        _register(sys.modules[_TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
