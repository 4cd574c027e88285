"""torch.nn.parallel: ``DistributedDataParallel`` (over MPI) and ``DataParallel``."""
from .data_parallel import DataParallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel"]
