"""Soak and leak tests: long runs keep RSS, open file descriptors and Python allocations flat.

Each test runs a workload many times after a warm-up, samples RSS (``/proc/self/statm``) and the number of open
fds along the way, and fits a line: the slope, times the number of calls, is the growth a leak would show. The
bound is stated per test. ``tracemalloc`` compares Python allocations after the warm-up with those at the end.
CI runs short versions; ``pytest -m slow tests/test_soak.py`` runs the full counts (10,000 compiled calls, 1,000
training steps, 200 DataLoader epochs).
"""
import gc
import os
import time
import tracemalloc

import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2 ** 20


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _settled_fds(timeout=1.0):
    """The open fd count once it stops changing: queue pipes close on feeder threads, which on a loaded machine run
    a moment after the call that let them go (up to +4 in single samples); a leaked fd stays."""
    deadline = time.monotonic() + timeout
    n = _fds()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        m = _fds()
        if m == n:
            return n
        n = m
    return n


def soak(step, calls, warmup, samples=20):
    """Run ``step(i)`` ``calls`` times after ``warmup`` calls; return (RSS slope MB/call, fd counts, py growth B)."""
    for i in range(warmup):
        step(i)
    gc.collect()
    tracemalloc.start(1)
    try:
        py0 = None
        every = max(1, calls // samples)
        xs, rss, fds = [], [], []
        for i in range(calls):
            step(warmup + i)
            if py0 is None:
                # the baseline is taken after one traced call: what a call frees was then allocated under tracing
                # (gradients replaced each step would otherwise count as growth)
                gc.collect()
                py0 = tracemalloc.get_traced_memory()[0]
            if i % every == 0 or i == calls - 1:
                xs.append(i)
                rss.append(_rss_mb())
                fds.append(_settled_fds())
        gc.collect()
        py_growth = tracemalloc.get_traced_memory()[0] - py0
    finally:
        tracemalloc.stop()
    slope = float(np.polyfit(xs, rss, 1)[0]) if len(xs) > 2 else 0.0
    return slope, rss, fds, py_growth


def _report(name, calls, slope, rss, fds, py_growth):
    print(f"\n{name}: {calls} calls, RSS {rss[0]:.1f} -> {rss[-1]:.1f} MB, slope {slope * 1e3:.4f} MB per 1000 calls, "
          f"fds {min(fds)}..{max(fds)}, python allocations +{py_growth / 1024:.1f} KiB")


def _compiled(arch, calls, warmup, **kw):
    model = M.create_model(arch, pretrained=False, num_classes=10, **kw).eval()
    x = flow.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32))
    cm = flow.compile(model, x)
    want = cm(x).numpy().copy()

    def step(i):
        out = cm(x)
        if i % 97 == 0:  # the results stay right, not only the memory flat
            np.testing.assert_array_equal(out.numpy(), want)
    slope, rss, fds, py = soak(step, calls, warmup)
    _report(f"compiled {arch}", calls, slope, rss, fds, py)
    return slope, rss, fds, py


def _assert_flat(calls, slope, fds, py, rss_bound_mb, py_bound_kb=256):
    assert slope * calls < rss_bound_mb, f"RSS grows {slope * calls:.2f} MB over {calls} calls (bound {rss_bound_mb})"
    # queue pipes close on their feeder threads, so single samples jitter by a few; a leak moves the whole
    # distribution: compare the medians of the first and last thirds (one pipe pair per epoch would be +2/sample)
    third = max(1, len(fds) // 3)
    fd_growth = float(np.median(fds[-third:]) - np.median(fds[:third]))
    assert fd_growth < 1.0 and max(fds) - min(fds) <= 6, f"open fds {fds} (growth {fd_growth:+.1f})"
    assert py < py_bound_kb * 1024, f"Python allocations grew by {py / 1024:.0f} KiB"


@pytest.mark.parametrize("arch,kw", [("resnet18", {}), ("vit_tiny_patch16_224", {"img_size": 32, "patch_size": 8})],
                         ids=["resnet18", "vit_tiny"])
def test_compiled_model_calls_do_not_leak(arch, kw):
    calls = 300
    slope, rss, fds, py = _compiled(arch, calls, warmup=30, **kw)
    # a leak of one 32x32 activation (4 KiB) per call would be 1.2 MB here
    _assert_flat(calls, slope, fds, py, rss_bound_mb=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("arch,kw", [("resnet18", {}), ("vit_tiny_patch16_224", {"img_size": 32, "patch_size": 8})],
                         ids=["resnet18", "vit_tiny"])
def test_compiled_model_10000_calls(arch, kw):
    calls = 10_000
    slope, rss, fds, py = _compiled(arch, calls, warmup=200, **kw)
    _assert_flat(calls, slope, fds, py, rss_bound_mb=4.0)


def _small_cnn():
    nn = flow.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.GELU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Dropout(0.1), nn.Linear(32, 10))


def _train(steps, warmup, arch="resnet18"):
    model = M.create_model(arch, pretrained=False, num_classes=10) if arch != "small" else _small_cnn()
    opt = flow.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(1)
    x = flow.from_numpy(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
    y = flow.from_numpy(rng.integers(0, 10, 2).astype(np.int64))
    losses = []

    def step(i):
        opt.zero_grad()
        loss = flow.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i % 10 == 0:
            losses.append(float(loss.item()))
    slope, rss, fds, py = soak(step, steps, warmup)
    _report(f"eager {arch} fwd+bwd+SGD step", steps, slope, rss, fds, py)
    assert all(np.isfinite(losses)) and losses[-1] < losses[0], losses  # it trains (memorises the batch)
    return slope, rss, fds, py


def test_training_steps_do_not_leak():
    steps = 150
    slope, rss, fds, py = _train(steps, warmup=20, arch="small")
    # one leaked 2x16x32x32 activation per step would be 4.7 MB here
    _assert_flat(steps, slope, fds, py, rss_bound_mb=2.0)


@pytest.mark.slow
def test_training_1000_steps():
    steps = 1000
    slope, rss, fds, py = _train(steps, warmup=20)
    _assert_flat(steps, slope, fds, py, rss_bound_mb=8.0)


class _Squares:
    """A map-style dataset whose items run backend kernels in the worker (conv, matmul)."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        x = flow.from_numpy(np.full((1, 1, 6, 6), float(i), np.float32))
        w = flow.ones(1, 1, 3, 3)
        return flow.nn.functional.conv2d(x, w).sum(), i


def _epochs(epochs, warmup):
    from flowvision.backend.utils.data import DataLoader
    loader = DataLoader(_Squares(), batch_size=4, num_workers=2, shuffle=False, timeout=60)
    want = [float(i) * 9 * 16 for i in range(16)]

    def step(_):
        got = [float(v) for b, _idx in loader for v in b.numpy()]
        assert got == want, got
    slope, rss, fds, py = soak(step, epochs, warmup, samples=min(epochs, 20))
    _report("DataLoader epochs (2 workers, new workers each epoch)", epochs, slope, rss, fds, py)
    return slope, rss, fds, py


def test_dataloader_epochs_do_not_leak():
    epochs = 12
    slope, rss, fds, py = _epochs(epochs, warmup=3)
    # a leaked pipe pair or worker per epoch shows in the fd count; 1 MB per epoch in RSS
    _assert_flat(epochs, slope, fds, py, rss_bound_mb=12.0)


@pytest.mark.slow
def test_dataloader_200_epochs():
    epochs = 200
    slope, rss, fds, py = _epochs(epochs, warmup=5)
    _assert_flat(epochs, slope, fds, py, rss_bound_mb=20.0)
