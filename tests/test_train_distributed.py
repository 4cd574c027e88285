"""``flowvision train --distributed`` under ``mpirun --oversubscribe -np 2`` equals one process over the global batch.

Needs the ``mpi`` extra (``pip install "flowvision[mpi]"``) and scikit-learn (the bundled digits).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

import flowvision.backend as fb  # noqa: E402
import flowvision.backend.distributed as dist  # noqa: E402

# no augmentation, no label smoothing, a constant lr small enough that 4 updates do not amplify rounding
RECIPE = ["--dataset", "digits", "--model", "resnet10t", "--epochs", "1", "--warmup-epochs", "0", "--sched", "none",
          "--opt", "sgd", "--lr", "0.01", "--weight-decay", "0", "--smoothing", "0", "--no-aug", "--crop-pct", "1.0",
          "--hflip", "0", "--color-jitter", "0", "--seed", "0", "--no-progress", "--max-batches", "2",
          "--distributed", "--sync-bn", "--experiment", "run"]


def _mpirun() -> str:
    if not dist.is_mpi_available():
        pytest.fail('mpi4py / an MPI library is not installed: pip install "flowvision[mpi]"')
    local = os.path.join(os.path.dirname(sys.executable), "mpirun")
    exe = local if os.path.exists(local) else shutil.which("mpirun")
    if exe is None:
        pytest.fail('mpi4py imports but no mpirun launcher was found: pip install "flowvision[mpi]"')
    return exe


def _train(ranks: int, batch: int, out: str):
    env = dict(os.environ, FLOWVISION_NUM_THREADS="1")
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers/CI run as root; Open MPI refuses without this
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [_mpirun(), "--oversubscribe", "-np", str(ranks), sys.executable, "-m", "flowvision.train", *RECIPE,
           "-b", str(batch), "--output", out]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpirun -np {ranks} flowvision train did not finish within 180 s: {e.stdout!r}")
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    return p.stdout, os.path.join(out, "run")


def test_train_two_ranks_equal_one_process(tmp_path):
    """2 ranks x batch 8 (DDP + SyncBatchNorm, DistributedSampler shards) == 1 process x batch 16 after 2 updates;
    only rank 0 prints and writes its run folder."""
    out2, run2 = _train(2, 8, str(tmp_path / "two"))
    out1, run1 = _train(1, 16, str(tmp_path / "one"))
    assert out2.count("epoch 0:") == 1 and out2.count("done in") == 1, out2
    assert sorted(os.listdir(run2)) == ["args.json", "best.pth", "last.pth", "log.jsonl", "summary.csv"]
    with open(os.path.join(run2, "log.jsonl")) as f:
        rows2 = [json.loads(line) for line in f]
    with open(os.path.join(run1, "log.jsonl")) as f:
        rows1 = [json.loads(line) for line in f]
    assert len(rows2) == 1, rows2
    # the logged training loss is the mean over ranks = the mean over the global batch
    np.testing.assert_allclose(rows2[0]["train_loss"], rows1[0]["train_loss"], rtol=1e-5)
    np.testing.assert_allclose(rows2[0]["val_loss"], rows1[0]["val_loss"], rtol=1e-5)
    got = fb.load(os.path.join(run2, "last.pth"))
    ref = fb.load(os.path.join(run1, "last.pth"))
    assert got["epoch"] == ref["epoch"] == 1
    sd2, sd1 = got["state_dict"], ref["state_dict"]
    assert set(sd2) == set(sd1) and not any(k.startswith("module.") for k in sd2)
    for k in sd1:
        np.testing.assert_allclose(sd2[k].numpy(), sd1[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    # 2 training batches went through every BatchNorm on each rank, and the optimizer stepped (momentum is kept).
    # Two updates, not more: from the third on this recipe amplifies rounding (after 4 updates the AVX2 and the
    # portable kernels already differ by 1.8e-4 in one process), which would test summation order, not DDP.
    assert int(sd2["conv1.1.num_batches_tracked"].numpy()) == 2
    assert got["optimizer"]["state"], "the optimizer never stepped"
