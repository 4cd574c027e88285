"""``torch.amp``: ``autocast`` and ``GradScaler``.

On CUDA tensors ``autocast`` runs convolutions and matmuls in float16/bfloat16 (``flowvision.backend.cuda``'s
autocast). On the CPU it is accepted and every op keeps float32: the CPU kernels have no reduced-precision GEMM,
so results are at least as accurate as torch's CPU autocast (which would return bfloat16 for linear/conv).
``GradScaler`` follows torch's dynamic loss-scaling algorithm on any device.
"""
from .autocast_mode import autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]
