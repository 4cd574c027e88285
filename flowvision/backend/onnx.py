"""``torch.onnx``: exporting to ONNX is not available in this engine; ``export`` raises a clear error.

The ways to ship a model without PyTorch here are ``flowvision.save(model.state_dict(), path)`` (safetensors,
readable by other tools) and ``flowvision.compile(model, example)`` for a captured, fused inference plan.
``flowvision.save(sd, path, format="torch")`` writes weights that a torch process can load and export itself.
"""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OperatorExportTypes", "TrainingMode"]

_MESSAGE = ("ONNX export is not supported by flowvision's engine. Use flowvision.compile(model, example) for a "
            "fast captured inference plan, or flowvision.save(model.state_dict(), 'w.pt', format='torch') and "
            "export from the same architecture in PyTorch.")


def export(model, args=(), f=None, *a, **kw):
    """Raises ``NotImplementedError`` naming the alternatives (see the module docstring)."""
    raise NotImplementedError(_MESSAGE)


_export = export
dynamo_export = export


def is_in_onnx_export() -> bool:
    return False


class OperatorExportTypes:
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode:
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2
