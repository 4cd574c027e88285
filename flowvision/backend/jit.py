"""``torch.jit``: TorchScript does not exist in this engine.

``script`` and ``trace`` return their argument unchanged (``trace`` first runs it once on the example, as torch
does), so code that scripts a model for speed keeps working with Python execution; the fast inference path is
``flowvision.compile(model, example)``.  Saving or loading TorchScript archives raises ``NotImplementedError``.
Decorators (``ignore``, ``unused``, ``export``) and queries (``is_scripting``) behave as in eager torch.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "Final", "save", "load", "freeze", "optimize_for_inference", "ScriptModule",
           "ScriptFunction", "fork", "wait", "interface", "Attribute", "enable_onednn_fusion"]

_ALTERNATIVE = ("use flowvision.save / flowvision.load for weights, or flowvision.compile(model, example) for a "
                "captured inference plan")


def script(obj: Any = None, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Return ``obj`` unchanged: it runs as Python (no TorchScript compiler here)."""
    return obj


def trace(func: Callable, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """Run ``func`` once on ``example_inputs`` (errors surface here, as with torch) and return it unchanged."""
    if example_inputs is not None or example_kwarg_inputs is not None:
        from .autograd import no_grad
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        with no_grad():
            func(*args, **(example_kwarg_inputs or {})) if example_inputs is not None else \
                func(**example_kwarg_inputs)
    return func


def trace_module(mod, inputs: dict, **kwargs):
    for method, example in inputs.items():
        trace(getattr(mod, method), example)
    return mod


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    return the_value


class _FinalMeta(type):
    def __getitem__(cls, item):
        return item


class Final(metaclass=_FinalMeta):
    """``Final[int]`` annotations evaluate to the inner type."""


def Attribute(value, type=None):  # noqa: A002,N802 - torch's names
    return value


def fork(func, *args, **kwargs):
    """Run ``func`` now; ``wait`` returns its result (no inter-op parallelism)."""
    return _Done(func(*args, **kwargs))


class _Done:
    def __init__(self, value):
        self.value = value

    def wait(self):
        return self.value


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def enable_onednn_fusion(enabled: bool) -> None:
    """Accepted; the engine fuses in ``flowvision.compile``."""


class ScriptModule:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"TorchScript modules are not supported; {_ALTERNATIVE}")


ScriptFunction = ScriptModule


def save(m, f, _extra_files=None) -> None:
    raise NotImplementedError(f"torch.jit.save writes TorchScript archives, which this engine cannot produce; "
                              f"{_ALTERNATIVE}")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise NotImplementedError(f"torch.jit.load reads TorchScript archives, which hold compiled code this engine "
                              f"cannot run; {_ALTERNATIVE}")
