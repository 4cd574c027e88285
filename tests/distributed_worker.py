"""The program tests/test_distributed.py starts under ``mpirun -np 2``: one scenario per command-line word.

collectives  every collective x dtype x (contiguous, non-contiguous) against mpi4py's own result and numpy
train OUT    DDP training scenarios; rank 0 saves losses and final weights to OUT/<scenario>.npz
faults       DDP error paths that must raise a clear error on every rank
kill         rank 1 dies in the middle of the job; rank 0 is inside a collective
stuck        rank 1 hangs; rank 0 times out (FLOWVISION_DIST_TIMEOUT) and takes the job down
"""
import os
import sys

import numpy as np

from flowvision import backend as flow
import flowvision.backend.distributed as dist
import flowvision.backend.nn as nn
import flowvision.backend.nn.functional as F

STEPS = 20
BATCH = 8  # per rank; the one-process reference runs 2 x BATCH


def small_cnn(seed: int) -> nn.Module:
    flow.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def small_vit(seed: int) -> nn.Module:
    import flowvision
    flow.manual_seed(seed)
    return flowvision.models.create_model("vit_tiny_patch16_224", img_size=16, patch_size=4, embed_dim=32, depth=2,
                                          num_heads=2, num_classes=10)


class WithUnused(nn.Module):
    """A classifier with a branch the loss never uses (find_unused_parameters)."""

    def __init__(self, seed: int):
        super().__init__()
        flow.manual_seed(seed)
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, 10)
        self.unused = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.body(x))


SCENARIOS = {  # name: (model builder, sync batchnorm, micro-batches per step, find_unused_parameters)
    "cnn_syncbn": (small_cnn, True, 1, False),
    "vit": (small_vit, False, 1, False),
    "vit_no_sync": (small_vit, False, 2, False),
    "cnn_syncbn_no_sync": (small_cnn, True, 2, False),
    "unused": (WithUnused, False, 1, True),
}


def step_data(step: int, n: int):
    rs = np.random.RandomState(1000 + step)
    x = rs.standard_normal((n, 3, 16, 16)).astype(np.float32)
    y = rs.randint(0, 10, n).astype(np.int64)
    return x, y


def train(build, sync_bn: bool, micro: int, find_unused: bool, rank: int, world: int, ddp: bool):
    """Train STEPS steps of SGD (momentum, weight decay); returns (losses, state dict as numpy)."""
    model = build(0 if not ddp else 17 * rank)  # DDP must overwrite the other ranks' init with rank 0's
    if ddp and sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    net = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.01, find_unused_parameters=find_unused) \
        if ddp else model
    opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    losses = []
    for step in range(STEPS):
        x, y = step_data(step, BATCH * world)
        opt.zero_grad()
        total = 0.0
        for k, chunk in enumerate(np.array_split(np.arange(BATCH), micro)):
            # micro-batch k = chunk k of every rank's share; the reference concatenates them in rank order
            idx = chunk + rank * BATCH if ddp else np.concatenate([chunk + r * BATCH for r in range(world)])
            ctx = net.no_sync() if ddp and k < micro - 1 else _null()
            with ctx:
                loss = F.cross_entropy(net(flow.from_numpy(x[idx])), flow.from_numpy(y[idx])) / micro
                loss.backward()
            total += loss.item()
        if ddp:
            t = flow.tensor([total], dtype=flow.float64)
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            total = t.item()
        losses.append(total)
        opt.step()
    state = {k: v.detach().float().numpy().copy() for k, v in model.state_dict().items()}
    return np.array(losses), state


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def run_train(out: str):
    rank, world = dist.get_rank(), dist.get_world_size()
    for name, (build, sync_bn, micro, unused) in SCENARIOS.items():
        losses, state = train(build, sync_bn, micro, unused, rank, world, ddp=True)
        if rank == 0:
            np.savez(os.path.join(out, f"{name}.npz"), __losses__=losses, **state)
        if name == "unused":
            net_unused = state.get("unused.weight")
            print(f"rank {rank}: unused branch untouched: {net_unused is not None}")
    print(f"rank {rank}: train OK", flush=True)


def _expect_error(fn, needle: str):
    try:
        fn()
    except (RuntimeError, ValueError, TypeError) as e:
        assert needle in str(e), f"expected {needle!r} in {e!r}"
        return
    raise AssertionError(f"no error raised; expected one containing {needle!r}")


def run_faults():
    rank = dist.get_rank()
    # a parameter the loss does not use without find_unused_parameters: the next forward says what to do
    net = nn.parallel.DistributedDataParallel(WithUnused(0))
    x = flow.randn(2, 3, 8, 8)
    net(x).sum().backward()
    _expect_error(lambda: net(x), "find_unused_parameters=True")
    # different models on different ranks
    _expect_error(lambda: nn.parallel.DistributedDataParallel(nn.Linear(3 + rank, 2)), "different models")
    # collectives: bad arguments fail before any communication
    _expect_error(lambda: dist.all_gather([flow.zeros(2)], flow.zeros(2)), "one output tensor per rank")
    _expect_error(lambda: dist.all_reduce(flow.zeros(2, dtype=flow.int64), op=dist.ReduceOp.AVG), "floating point")
    _expect_error(lambda: dist.broadcast(flow.zeros(2), src=5), "not a rank")
    _expect_error(lambda: dist.all_reduce(np.zeros(2)), "flowvision Tensor")
    # the existing DistributedSampler shards by the process group's rank and size
    from flowvision.backend.utils.data import DistributedSampler
    sampler = DistributedSampler(list(range(10)), shuffle=False)
    assert (sampler.num_replicas, sampler.rank) == (dist.get_world_size(), rank)
    assert list(sampler) == list(range(rank, 10, dist.get_world_size()))
    dist.barrier()
    print(f"rank {rank}: faults OK", flush=True)


def run_kill():
    rank = dist.get_rank()
    t = flow.ones(4)
    dist.all_reduce(t)
    print(f"rank {rank}: first all_reduce done", flush=True)
    if rank == 1:
        os.kill(os.getpid(), 9)
    dist.all_reduce(t)  # never completes on rank 0: its peer is gone
    print(f"rank {rank}: UNEXPECTED second all_reduce returned", flush=True)


def run_stuck():
    """Rank 1 stops answering (alive, but never enters the collective): rank 0 must give up at its deadline."""
    import time
    rank = dist.get_rank()
    t = flow.ones(4)
    dist.all_reduce(t)
    if rank == 1:
        time.sleep(120)
    dist.all_reduce(t)
    print(f"rank {rank}: UNEXPECTED second all_reduce returned", flush=True)


def main():
    os.environ.setdefault("FLOWVISION_NUM_THREADS", "1")
    dist.init_process_group("mpi")
    what = sys.argv[1]
    if what == "collectives":
        from distributed_collectives import run_collectives
        run_collectives()
    elif what == "train":
        run_train(sys.argv[2])
    elif what == "faults":
        run_faults()
    elif what == "kill":
        run_kill()
    elif what == "stuck":
        run_stuck()
    else:
        raise SystemExit(f"unknown scenario {what}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
