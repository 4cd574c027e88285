"""DistributedDataParallel step time: no communication vs all-reduce after backward vs overlapped with backward.

    python benchmarks/bench_distributed.py              # starts mpirun -np 2 itself
    python benchmarks/bench_distributed.py --np 4 --model resnet18 --size 64 --batch 8 --rounds 5

Each rank runs, interleaved round by round so load changes hit every mode alike:
  local    forward + backward, no communication (the model without DDP)
  serial   DDP with overlap=False: every bucket's all-reduce starts after backward
  overlap  DDP (default): each bucket's all-reduce starts as soon as its gradients are ready
and reports median step times. The all-reduce cost exposed by ``serial`` is ``serial - local``; the part of it
``overlap`` hides is ``(serial - overlap) / (serial - local)``.
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys
import time


def launch(argv):
    env = dict(os.environ)
    env.setdefault("FLOWVISION_NUM_THREADS", "1")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    args = parse(argv)
    local = os.path.join(os.path.dirname(sys.executable), "mpirun")
    mpirun = local if os.path.exists(local) else shutil.which("mpirun")
    if mpirun is None:
        raise SystemExit('mpirun not found: pip install "flowvision[mpi]"')
    cmd = [mpirun, "--oversubscribe", "-np", str(args.np), sys.executable, os.path.abspath(__file__), *argv]
    return subprocess.call(cmd, env=env)


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--model", default="resnet18")
    p.add_argument("--size", type=int, default=64, help="input resolution")
    p.add_argument("--batch", type=int, default=8, help="per rank")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=3, help="timed steps per mode per round")
    p.add_argument("--bucket-mb", type=float, default=25.0)
    return p.parse_args(argv)


def worker(argv):
    import numpy as np

    import flowvision
    from flowvision import backend as flow
    import flowvision.backend.distributed as dist
    import flowvision.backend.nn as nn
    import flowvision.backend.nn.functional as F

    args = parse(argv)
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    flow.manual_seed(0)
    model = flowvision.models.create_model(args.model, num_classes=100)
    nparams = sum(p.numel() for p in model.parameters())
    # one replica per mode: a DDP hooks its parameters, so two wrappers must not share them
    models = {k: copy.deepcopy(model) for k in ("local", "serial", "overlap")}
    nets = {"local": models["local"],
            "serial": nn.parallel.DistributedDataParallel(models["serial"], bucket_cap_mb=args.bucket_mb,
                                                          overlap=False),
            "overlap": nn.parallel.DistributedDataParallel(models["overlap"], bucket_cap_mb=args.bucket_mb,
                                                           overlap=True)}
    rs = np.random.RandomState(rank)
    x = flow.from_numpy(rs.standard_normal((args.batch, 3, args.size, args.size)).astype(np.float32))
    y = flow.from_numpy(rs.randint(0, 100, args.batch).astype(np.int64))

    def step(net):
        for p in net.parameters():
            p.grad = None
        F.cross_entropy(net(x), y).backward()

    for net in nets.values():  # warm-up: plans, buffers, first-touch
        step(net)
    # all-reduce of the full gradient alone, for reference
    grads = flow.zeros(nparams)
    times = {k: [] for k in list(nets) + ["allreduce_only", "wait_serial", "wait_overlap"]}
    for _ in range(args.rounds):
        for name, net in nets.items():
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                step(net)
                if name != "local":
                    times[f"wait_{name}"].append(net.last_reduce_wait_s)
            times[name].append((time.perf_counter() - t0) / args.steps)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            dist.all_reduce(grads)
        times["allreduce_only"].append((time.perf_counter() - t0) / args.steps)
    med = {k: float(np.median(v)) for k, v in times.items()}
    # every rank's medians: the slowest rank sets the step time
    from flowvision.backend.distributed.collectives import _comm_and_mpi
    gathered = _comm_and_mpi()[1].comm.gather(med, root=0)
    if rank == 0:
        worst = {k: max(g[k] for g in gathered) for k in med}
        exposed = worst["serial"] - worst["local"]
        hidden = (worst["serial"] - worst["overlap"]) / exposed if exposed > 0 else float("nan")
        print(f"{args.model} {args.size}x{args.size} batch {args.batch}/rank, {world} ranks, {nparams / 1e6:.1f} M "
              f"params ({nparams * 4 / 2**20:.0f} MiB of gradients), buckets {args.bucket_mb:g} MiB, "
              f"FLOWVISION_NUM_THREADS={os.environ.get('FLOWVISION_NUM_THREADS')}, {args.rounds} rounds x "
              f"{args.steps} steps, median of the slowest rank")
        names = {"local": "step, no communication", "serial": "step, DDP overlap=False",
                 "overlap": "step, DDP overlap=True", "allreduce_only": "all-reduce of all gradients alone",
                 "wait_serial": "backward's wait for all-reduce, overlap=False",
                 "wait_overlap": "backward's wait for all-reduce, overlap=True"}
        for k, label in names.items():
            print(f"  {label:48s} {worst[k] * 1e3:8.1f} ms")
        # the rank that finishes backward last waits only for communication, the others also for it: the
        # smallest wait over ranks is the all-reduce tail with the least rank skew in it
        least = {k: min(g[k] for g in gathered) for k in ("wait_serial", "wait_overlap")}
        print(f"  same waits on the rank that finished backward last: overlap=False "
              f"{least['wait_serial'] * 1e3:.1f} ms, overlap=True {least['wait_overlap'] * 1e3:.1f} ms "
              f"({(1 - least['wait_overlap'] / least['wait_serial']) * 100:.0f}% hidden)")
        hidden_wait = 1 - worst["wait_overlap"] / worst["wait_serial"]
        print(f"  hidden behind backward: {hidden_wait * 100:.0f}% of the all-reduce wait (in-step timers); "
              f"{hidden * 100:.0f}% by step times (serial - overlap) / (serial - local); "
              f"DDP step / local step: {worst['overlap'] / worst['local']:.2f}x")
    dist.destroy_process_group()


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ:
        worker(sys.argv[1:])
    else:
        sys.exit(launch(sys.argv[1:]))
