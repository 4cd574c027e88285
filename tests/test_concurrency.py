"""Concurrent callers: Python threads sharing one compiled plan and one eager model get the serial results.

Eight threads each run, several times over, a compiled ResNet-18, the same model eagerly (under their own
``no_grad``), and a small eager forward+backward with their own tensors. Every result must equal, bit for
bit, what the same call gave when run alone first; every thread must finish within a timeout (a deadlock
fails the test instead of hanging CI). A second test changes the kernel thread count while others compute.
"""
import threading

import numpy as np

import flowvision.models as M
from flowvision import backend as flow

THREADS = 8
ROUNDS = 3
TIMEOUT_S = 240


def _input(shape, seed):
    return flow.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _grad_job(seed):
    """Forward+backward of a small graph with this caller's own leaves; returns (loss, grad of a, grad of w)."""
    rng = np.random.default_rng(100 + seed)
    a = flow.from_numpy(rng.standard_normal((16, 24)).astype(np.float32)).requires_grad_()
    w = flow.from_numpy(rng.standard_normal((24, 8)).astype(np.float32)).requires_grad_()
    loss = ((a @ w).relu() * 0.5 + a.sum(dim=1, keepdim=True).tanh()).sum()
    loss.backward()
    return loss.detach().numpy().copy(), a.grad.numpy().copy(), w.grad.numpy().copy()


def _run_threads(worker, n):
    errors = []

    def guarded(k):
        try:
            worker(k)
        except BaseException as e:  # noqa: BLE001 -- reported by the main thread
            errors.append((k, e))
    threads = [threading.Thread(target=guarded, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT_S)
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"threads still running after {TIMEOUT_S} s (deadlock?): {stuck}"
    assert not errors, errors


def test_threads_share_compiled_plan_and_eager_model():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    xs = [_input((1, 3, 32, 32), seed=k) for k in range(THREADS)]
    cm = flow.compile(model, xs[0])
    # serial references, one caller at a time
    want_compiled = [cm(x).numpy().copy() for x in xs]
    with flow.no_grad():
        want_eager = [model(x).numpy().copy() for x in xs]
    want_grad = [_grad_job(k) for k in range(THREADS)]
    assert flow.is_grad_enabled()

    def worker(k):
        for r in range(ROUNDS):
            # alternate the order so compiled, eager and autograd work overlap across threads
            steps = ("compiled", "eager", "grad") if (k + r) % 2 == 0 else ("grad", "eager", "compiled")
            for step in steps:
                if step == "compiled":
                    np.testing.assert_array_equal(cm(xs[k]).numpy(), want_compiled[k], err_msg=f"compiled {k}")
                elif step == "eager":
                    with flow.no_grad():
                        np.testing.assert_array_equal(model(xs[k]).numpy(), want_eager[k], err_msg=f"eager {k}")
                    assert flow.is_grad_enabled(), "another thread's no_grad leaked into this one"
                else:
                    for got, want, what in zip(_grad_job(k), want_grad[k], ("loss", "a.grad", "w.grad")):
                        np.testing.assert_array_equal(got, want, err_msg=f"{what} {k}")
    _run_threads(worker, THREADS)
    # and the shared objects still give the serial answers afterwards
    np.testing.assert_array_equal(cm(xs[1]).numpy(), want_compiled[1])


def test_thread_count_changes_while_kernels_run():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    x = _input((2, 3, 32, 32), seed=7)
    cm = flow.compile(model, x)
    want = cm(x).numpy().copy()
    before = flow.get_num_threads()
    stop = threading.Event()

    def changer():
        n = 0
        while not stop.is_set():
            flow.set_num_threads(1 + n % 3)
            n += 1

    t = threading.Thread(target=changer, daemon=True)
    t.start()
    try:
        def worker(k):
            for _ in range(4):
                out = cm(x).numpy()
                # kernels may split work differently with another thread count: same values to rounding
                np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max()))
        _run_threads(worker, 4)
    finally:
        stop.set()
        t.join(TIMEOUT_S)
        flow.set_num_threads(before)
    assert not t.is_alive()
