"""The engine on CPUs older than this one: tests/isa_smoke.py under qemu user-mode emulation.

``-cpu Haswell`` (AVX2 + FMA + F16C, no AVX-512) must choose the avx2 kernels and ``-cpu Nehalem`` (SSE4.2 only)
the portable ones, and both must give the same outputs as the native run forced to that ISA
(``FLOWVISION_ISA``): the kernels are the same machine code, so every array computed by flowvision's kernels is
bit-identical. numpy, OpenCV and glibc pick their own SIMD paths from cpuid too, so the few arrays they compute
(the tensor transforms) are compared within a stated ulp bound instead.

qemu is not optional here: without it the test fails with the command that installs it (CI installs it).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.join(HERE, "isa_smoke.py")
# emulated CPU model -> the kernel ISA the dispatch must choose on it
CPUS = {"Haswell": "avx2", "Nehalem": "portable"}
# arrays computed (in part) by numpy/OpenCV, whose own cpuid dispatch may round differently: the largest difference
# allowed, in ulps of the array's largest magnitude (values near zero after Normalize would make per-element ulps
# meaningless)
ULP_TOLERANT = {"transform": 8}
TIMEOUT_S = 600


def _python() -> str:
    """The interpreter to run under qemu. qemu-user needs an ELF binary (a symlink to one is fine, and keeps a
    virtual environment's prefix), not a launcher script."""
    with open(os.path.realpath(sys.executable), "rb") as f:
        if f.read(4) == b"\x7fELF":
            return sys.executable
    return os.path.realpath(sys.executable)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Native runs (one per ISA) and emulated runs (one per CPU), all started at once."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.fail("qemu-x86_64 not found: the emulated-CPU tests need it. Install it with "
                    "`apt-get install -y qemu-user` (Debian/Ubuntu) and rerun.")
    tmp = tmp_path_factory.mktemp("isa")
    env = dict(os.environ, FLOWVISION_NUM_THREADS="2", PYTHONDONTWRITEBYTECODE="1")
    env.pop("FLOWVISION_ISA", None)
    procs = {}
    for cpu, isa in CPUS.items():
        procs[("native", isa)] = subprocess.Popen(
            [_python(), SMOKE, str(tmp / f"native_{isa}.npz")], env=dict(env, FLOWVISION_ISA=isa),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs[("qemu", cpu)] = subprocess.Popen(
            [qemu, "-cpu", cpu, _python(), SMOKE, str(tmp / f"qemu_{cpu}.npz")], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    results = {}
    for key, p in procs.items():
        try:
            log, _ = p.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for q in procs.values():
                q.kill()
            pytest.fail(f"{key} did not finish in {TIMEOUT_S} s")
        log = "\n".join(ln for ln in log.splitlines() if "TCG doesn't support" not in ln)
        name = f"native_{key[1]}" if key[0] == "native" else f"qemu_{key[1]}"
        results[key] = (p.returncode, log, tmp / f"{name}.npz")
    return results


@pytest.mark.parametrize("cpu", list(CPUS))
def test_emulated_cpu_runs_and_picks_its_isa(runs, cpu):
    rc, log, path = runs[("qemu", cpu)]
    assert rc == 0, f"smoke suite under qemu -cpu {cpu} exited with {rc} (-4 = SIGILL):\n{log[-3000:]}"
    got = np.load(path)
    assert str(got["isa"]) == CPUS[cpu], f"-cpu {cpu}: chose {got['isa']} ({got['isa_reason']})"


@pytest.mark.parametrize("cpu", list(CPUS))
def test_emulated_cpu_equals_native(runs, cpu):
    isa = CPUS[cpu]
    rc_n, log_n, path_n = runs[("native", isa)]
    assert rc_n == 0, f"native smoke run with FLOWVISION_ISA={isa} failed:\n{log_n[-3000:]}"
    rc_q, log_q, path_q = runs[("qemu", cpu)]
    assert rc_q == 0, f"qemu -cpu {cpu} failed:\n{log_q[-3000:]}"
    native, emulated = np.load(path_n), np.load(path_q)
    assert str(native["isa"]) == isa
    keys = [k for k in native.files if k not in ("isa", "isa_reason")]
    assert set(keys) <= set(emulated.files)
    assert len(keys) > 60
    mismatches = []
    for k in keys:
        a, b = native[k], emulated[k]
        assert a.shape == b.shape, k
        if k in ULP_TOLERANT:
            ulp = float(np.spacing(np.float32(np.abs(a).max())))
            diff = float(np.abs(a.astype(np.float64) - b).max())
            if diff > ULP_TOLERANT[k] * ulp:
                mismatches.append(f"{k}: max |diff| {diff} = {diff / ulp:.1f} ulp of max|x| > {ULP_TOLERANT[k]}")
        elif not np.array_equal(a, b, equal_nan=True):
            mismatches.append(f"{k}: max |diff| {np.nanmax(np.abs(a - b))}")
    assert not mismatches, f"-cpu {cpu} vs native {isa}:\n" + "\n".join(mismatches)



@pytest.mark.slow
def test_wheel_runs_on_emulated_cpus(tmp_path):
    """A wheel built on this machine, installed into a fresh virtual environment, chooses the right kernels and
    runs the smoke workload under both emulated CPUs (minutes: builds the extension from scratch)."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.fail("qemu-x86_64 not found: install it with `apt-get install -y qemu-user`")
    root = os.path.dirname(HERE)
    src = tmp_path / "src"
    subprocess.run(["git", "-C", root, "worktree", "add", "--detach", str(src)], check=True, capture_output=True)
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(tmp_path / "dist")],
                       check=True, capture_output=True, env=dict(os.environ, FLOWVISION_CUDA="0"), timeout=3600)
    finally:
        subprocess.run(["git", "-C", root, "worktree", "remove", "--force", str(src)], capture_output=True)
    wheel = next((tmp_path / "dist").glob("flowvision-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True, timeout=1800)
    env = dict(os.environ, FLOWVISION_NUM_THREADS="2")
    env.pop("FLOWVISION_ISA", None)
    for cpu, isa in CPUS.items():
        out = tmp_path / f"{cpu}.npz"
        r = subprocess.run([qemu, "-cpu", cpu, py, SMOKE, str(out)], env=env, capture_output=True, text=True,
                           timeout=TIMEOUT_S, cwd=tmp_path)
        assert r.returncode == 0, f"wheel under -cpu {cpu}: rc {r.returncode}\n{r.stderr[-3000:]}"
        got = np.load(out)
        assert str(got["isa"]) == isa
        assert "site-packages" in subprocess.run([py, "-c", "import flowvision; print(flowvision.__file__)"],
                                                 capture_output=True, text=True, cwd=tmp_path).stdout
