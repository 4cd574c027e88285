"""``torch.amp``: ``autocast`` and ``GradScaler``.

On CUDA tensors ``autocast`` runs convolutions and matmuls in float16/bfloat16 (``flowvision.backend.cuda``'s
autocast). On the CPU it follows torch's CPU policy (``_autocast_policy``): linear/matmul/conv/sdpa/prelu run with
bfloat16 (or the given dtype) inputs and return that dtype, the losses run in float32, other ops keep their inputs'
dtype. bfloat16 is emulated: float32 arithmetic on bfloat16-rounded inputs, the result rounded to bfloat16.
``GradScaler`` follows torch's dynamic loss-scaling algorithm on any device.
"""
from .autocast_mode import autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]
