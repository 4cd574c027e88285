"""flowvision.backend.distributed: torch.distributed's API over MPI (mpi4py + an MPI library from PyPI).

    # mpirun -np 2 python train.py
    import flowvision.backend.distributed as dist
    dist.init_process_group("mpi")
    t = flow.ones(4) * dist.get_rank()
    dist.all_reduce(t)               # every rank now holds 0 + 1 + ... + (N-1)

Install: ``pip install "flowvision[mpi]"``. No transport is implemented here: every byte moves through MPI.
"""
from .collectives import (  # noqa: F401
    ReduceOp, ProcessGroup, Work, DistributedError, init_process_group, destroy_process_group, is_available,
    is_mpi_available, is_initialized, get_rank, get_world_size, get_backend, new_group, barrier, broadcast,
    all_reduce, all_gather, all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor,
)
from .collectives import __all__  # noqa: F401
