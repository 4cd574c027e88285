"""Every collective x dtype x layout against mpi4py's own result on the same numpy data (run under mpirun).

bfloat16 travels as its uint16 storage; its reductions are checked against mpi4py reducing the float32 values
followed by one rounding to bfloat16.
"""
import numpy as np

from flowvision import backend as flow
import flowvision.backend.distributed as dist
from flowvision.backend._bf16 import bf16_to_f32, f32_to_bf16

DTYPES = ["float32", "float64", "int64", "bfloat16"]
OPS = {"sum": "SUM", "avg": "SUM", "max": "MAX", "min": "MIN", "product": "PROD"}
SHAPE = (3, 5)


def rank_data(r: int, dtype: str, shape=SHAPE) -> np.ndarray:
    """The storage array rank r contributes (bfloat16 as uint16 bits); every rank can rebuild every rank's."""
    rs = np.random.RandomState(100 + r)
    if dtype == "int64":
        return rs.randint(-1000, 1000, shape).astype(np.int64)
    v = rs.standard_normal(shape)
    if dtype == "bfloat16":
        return f32_to_bf16(v.astype(np.float32))
    return v.astype(dtype)


def as_tensor(storage: np.ndarray, dtype: str, contiguous: bool):
    """A tensor holding ``storage``, either contiguous or as a strided view into a larger buffer."""
    if contiguous:
        return flow.Tensor._wrap(storage.copy(), getattr(flow, dtype))
    big = np.zeros((storage.shape[1], storage.shape[0] * 2), storage.dtype)
    big[:, ::2] = storage.T
    # a strided numpy view (bfloat16 slicing through the op layer would copy)
    t = flow.Tensor._wrap(big[:, ::2].T, getattr(flow, dtype))
    assert not t.is_contiguous() and tuple(t.shape) == storage.shape
    return t


def storage(t) -> np.ndarray:
    return np.ascontiguousarray(t._data)


def mpi_allreduce(comm, MPI, arr, op):
    out = np.empty_like(arr)
    comm.Allreduce(arr, out, op=getattr(MPI, op))
    return out


def check_all_reduce(comm, MPI, rank, world):
    for dtype in DTYPES:
        for name, mop in OPS.items():
            if name == "avg" and dtype == "int64":
                continue
            mine = rank_data(rank, dtype)
            wire = bf16_to_f32(mine) if dtype == "bfloat16" else mine
            want = mpi_allreduce(comm, MPI, wire, mop)
            if name == "avg":
                want = want / world
            want = f32_to_bf16(want.astype(np.float32)) if dtype == "bfloat16" else want.astype(mine.dtype)
            stack = np.stack([rank_data(r, dtype) for r in range(world)])
            if dtype != "bfloat16":  # the numpy answer, independent of MPI
                ref = {"sum": stack.sum(0), "avg": stack.sum(0) / world, "max": stack.max(0),
                       "min": stack.min(0), "product": stack.prod(0)}[name].astype(mine.dtype)
                np.testing.assert_array_equal(want, ref)
            for contiguous in (True, False):
                t = as_tensor(mine, dtype, contiguous)
                v0 = t._version[0]
                dist.all_reduce(t, op=getattr(dist.ReduceOp, name.upper()))
                np.testing.assert_array_equal(storage(t), want, err_msg=f"all_reduce {name} {dtype} "
                                                                       f"contiguous={contiguous}")
                assert t._version[0] > v0
    # bool: MAX is logical or, MIN logical and
    mine = rank_data(rank, "float64") > 0
    for name, fn in (("max", np.logical_or), ("min", np.logical_and)):
        t = flow.from_numpy(mine.copy())
        dist.all_reduce(t, op=name)
        np.testing.assert_array_equal(t.numpy(), fn.reduce([rank_data(r, "float64") > 0 for r in range(world)]))


def check_broadcast(comm, MPI, rank, world):
    for dtype in DTYPES:
        for src in range(world):
            want = rank_data(rank, dtype)
            comm.Bcast(want, root=src)
            for contiguous in (True, False):
                t = as_tensor(rank_data(rank, dtype), dtype, contiguous)
                work = dist.broadcast(t, src=src, async_op=True)
                assert work.wait() and work.is_completed()
                np.testing.assert_array_equal(storage(t), want, err_msg=f"broadcast {dtype} {contiguous}")
                np.testing.assert_array_equal(storage(t), rank_data(src, dtype))


def check_all_gather(comm, MPI, rank, world):
    for dtype in DTYPES:
        mine = rank_data(rank, dtype)
        want = np.empty((world,) + mine.shape, mine.dtype)
        comm.Allgather(mine, want)
        for contiguous in (True, False):
            outs = [as_tensor(np.zeros_like(mine), dtype, contiguous) for _ in range(world)]
            dist.all_gather(outs, as_tensor(mine, dtype, contiguous))
            for r in range(world):
                np.testing.assert_array_equal(storage(outs[r]), want[r], err_msg=f"all_gather {dtype}")
                np.testing.assert_array_equal(storage(outs[r]), rank_data(r, dtype))
        out = flow.Tensor._wrap(np.zeros((world * SHAPE[0], SHAPE[1]), mine.dtype), getattr(flow, dtype))
        dist.all_gather_into_tensor(out, as_tensor(mine, dtype, True))
        np.testing.assert_array_equal(storage(out), want.reshape(out.shape))


def check_reduce_scatter(comm, MPI, rank, world):
    for dtype in DTYPES:
        for name, mop in OPS.items():
            if name == "avg" and dtype == "int64":
                continue
            inputs = [rank_data(rank * world + k + 7, dtype) for k in range(world)]
            wire = np.stack([bf16_to_f32(a) if dtype == "bfloat16" else a for a in inputs])
            want = np.empty(wire.shape[1:], wire.dtype)
            comm.Reduce_scatter_block(wire, want, op=getattr(MPI, mop))
            if name == "avg":
                want = want / world
            want = f32_to_bf16(want.astype(np.float32)) if dtype == "bfloat16" else want.astype(inputs[0].dtype)
            for contiguous in (True, False):
                out = as_tensor(np.zeros_like(inputs[0]), dtype, contiguous)
                dist.reduce_scatter(out, [as_tensor(a, dtype, contiguous) for a in inputs],
                                    op=getattr(dist.ReduceOp, name.upper()))
                np.testing.assert_array_equal(storage(out), want, err_msg=f"reduce_scatter {name} {dtype}")
            if dtype != "bfloat16":
                stack = np.stack([rank_data(r * world + rank + 7, dtype) for r in range(world)])
                ref = {"sum": stack.sum(0), "avg": stack.sum(0) / world, "max": stack.max(0),
                       "min": stack.min(0), "product": stack.prod(0)}[name].astype(inputs[0].dtype)
                np.testing.assert_array_equal(want, ref)
            out = as_tensor(np.zeros_like(inputs[0]), dtype, True)
            cat = flow.Tensor._wrap(np.concatenate(inputs), getattr(flow, dtype))
            dist.reduce_scatter_tensor(out, cat, op=getattr(dist.ReduceOp, name.upper()))
            np.testing.assert_array_equal(storage(out), want)


def run_collectives():
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, world = dist.get_rank(), dist.get_world_size()
    assert (rank, world) == (comm.Get_rank(), comm.Get_size())
    check_all_reduce(comm, MPI, rank, world)
    check_broadcast(comm, MPI, rank, world)
    check_all_gather(comm, MPI, rank, world)
    check_reduce_scatter(comm, MPI, rank, world)
    dist.barrier()
    print(f"rank {rank}: collectives OK", flush=True)
