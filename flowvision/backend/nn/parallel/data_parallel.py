"""``DataParallel``: torch's single-process multi-device wrapper, for code that wraps models unconditionally."""
from __future__ import annotations

from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Run ``module`` as is: the engine has one CPU device (whose kernels already use every core) and at most one
    CUDA device, so there is nothing to scatter to — torch behaves the same way when it finds no GPUs.

    Across processes or machines use :class:`DistributedDataParallel`.

    Args:
        module: the wrapped model (reachable as ``.module``, so state-dict keys gain the ``module.`` prefix).
        device_ids: None, or a single device.
        output_device: accepted for torch compatibility.
        dim: accepted for torch compatibility.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if device_ids is not None and len(list(device_ids)) > 1:
            raise ValueError(f"device_ids={list(device_ids)}: flowvision has one device per kind, so DataParallel "
                             "cannot split a batch over several; use DistributedDataParallel with mpirun")
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
