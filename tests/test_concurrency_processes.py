"""Processes: ``fork()`` after the kernel thread pool ran, and eight processes sharing the weights cache.

A forked child inherits the parent's memory but none of its threads: a kernel pool that the child believes is
running would deadlock it. DataLoader workers are forked on Linux, so this is the common case, not a corner one.
Every wait here has a timeout, so a deadlock fails the test instead of hanging CI.
"""
import hashlib
import http.server
import json
import os
import socketserver
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from flowvision import backend as flow

TIMEOUT_S = 120
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _conv(seed):
    """A conv + matmul big enough that the kernels split the work over the pool's threads."""
    rng = np.random.default_rng(seed)
    x = flow.from_numpy(rng.standard_normal((2, 8, 40, 40)).astype(np.float32))
    w = flow.from_numpy(rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
    y = flow.nn.functional.conv2d(x, w, padding=1)
    return (y.flatten(1) @ flow.ones(16 * 40 * 40, 4)).numpy()


class _ConvItems:
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return flow.from_numpy(_conv(i))


@pytest.fixture
def threads_2():
    before = flow.get_num_threads()
    flow.set_num_threads(2)
    yield
    flow.set_num_threads(before)


def test_dataloader_workers_fork_after_kernels_ran(threads_2):
    """Workers forked from a parent whose pool is running compute the same results as the parent."""
    from flowvision.backend.utils.data import DataLoader
    want = [_conv(i) for i in range(6)]  # starts the pool in this process
    loader = DataLoader(_ConvItems(), batch_size=2, num_workers=2, timeout=TIMEOUT_S)
    for epoch in range(2):
        got = [b.numpy() for b in loader]
        np.testing.assert_allclose(np.concatenate(got), np.stack(want), rtol=1e-5, atol=1e-4,
                                   err_msg=f"epoch {epoch}")
    # and the parent's pool still works after the workers came and went
    np.testing.assert_array_equal(_conv(3), want[3])


def test_os_fork_child_runs_kernels_with_threads(threads_2):
    """A bare os.fork() child sets more threads and runs kernels; it exits 0 within the timeout."""
    want = _conv(7)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            os.close(r)
            flow.set_num_threads(2)
            got = _conv(7)
            flow.set_num_threads(1)
            again = _conv(7)
            code = 0 if np.allclose(got, want, rtol=1e-5, atol=1e-4) and np.allclose(again, want, rtol=1e-5,
                                                                                       atol=1e-4) else 3
            os.write(w, got.tobytes())
        finally:
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + TIMEOUT_S
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail(f"forked child did not finish in {TIMEOUT_S} s (deadlock in the kernel pool?)")
    data = os.read(r, want.nbytes + 1)
    os.close(r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
    np.testing.assert_allclose(np.frombuffer(data, np.float32).reshape(want.shape), want, rtol=1e-5, atol=1e-4)


# ------------------------------------------------------------------------------------------ weights cache

class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def _weights():
    from safetensors.numpy import save
    rng = np.random.default_rng(5)
    arrays = {"fc.weight": rng.standard_normal((64, 512)).astype(np.float32),
              "fc.bias": rng.standard_normal(64).astype(np.float32)}
    return arrays, save(arrays)


_CHILD = textwrap.dedent("""
    import hashlib, os, sys, time
    go = sys.argv[1]
    from flowvision.hub.manifest import load_pretrained
    while not os.path.exists(go):
        time.sleep(0.005)
    sd = load_pretrained("tiny.test", progress=False, as_numpy=True)
    h = hashlib.sha256()
    for k in sorted(sd):
        h.update(k.encode()); h.update(sd[k].tobytes())
    print(h.hexdigest())
""")


def test_eight_processes_share_the_weights_cache(tmp_path):
    """Eight processes resolve the same weights at once: one download, every process gets the same tensors."""
    arrays, payload = _weights()
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            for i in range(0, len(payload), 16384):  # slow enough that the other processes arrive meanwhile
                self.wfile.write(payload[i:i + 16384])
                time.sleep(0.03)

    srv = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        sha = hashlib.sha256(payload).hexdigest()
        manifest = {"schema_version": 1, "weights": {"tiny.test": {"license": "mit", "sources": [
            {"kind": "url", "url": f"http://127.0.0.1:{srv.server_address[1]}/tiny-{sha[:8]}.safetensors",
             "hash_prefix": sha[:8], "sha256": sha, "size": len(payload), "format": "safetensors", "remap": None}]}}}
        (tmp_path / "manifest.json").write_text(json.dumps(manifest))
        env = dict(os.environ, FLOWVISION_WEIGHTS_MANIFEST=str(tmp_path / "manifest.json"),
                   FLOWVISION_HOME=str(tmp_path / "home"), PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for var in ("FLOWVISION_OFFLINE", "HF_HUB_OFFLINE"):
            env.pop(var, None)
        go = tmp_path / "go"
        procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(go)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
        time.sleep(1.0)
        go.touch()
        outs = []
        for p in procs:
            try:
                outs.append(p.communicate(timeout=TIMEOUT_S))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                pytest.fail("a process sharing the cache did not finish (lock deadlock?)")
    finally:
        srv.shutdown()
        srv.server_close()
    h = hashlib.sha256()
    for k in sorted(arrays):
        h.update(k.encode())
        h.update(arrays[k].tobytes())
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.strip() == h.hexdigest(), "a process loaded other tensors than were published"
    assert len(hits) == 1, f"{len(hits)} downloads for 8 processes"
    cached = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "home") for f in fs]
    assert [c for c in cached if c.endswith(".safetensors")], cached
    assert not [c for c in cached if c.endswith(".partial")], cached
