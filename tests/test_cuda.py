"""CUDA backend tests.

Three layers:
- always run (no GPU needed): the module builds/imports where nvcc exists, ``import flowvision`` never
  loads it, clear errors for ``.cuda()`` without a device, device parsing, and every kernel entry point
  and op code the Python dispatch names exists in ``_C_cuda``;
- ``backend="emulated"`` (no GPU needed): the whole Python side of the CUDA backend (device tensors,
  dispatch table, op twins, autograd, autocast) against the CPU engine, with ``_C_cuda`` replaced by a
  host emulation of its API (tests/cuda_emulator.py);
- ``backend="gpu"`` (marker ``cuda``, skipped cleanly without a device): the same parity tests on the
  real kernels, plus zoo models, the allocator leak check, TF32/fp16/bf16 tolerances and streams.

Tolerances: fp32 without TF32 rtol 1e-4 (atol 1e-5; conv/matmul sums use atol 1e-4); TF32 rtol/atol
5e-3 (10-bit mantissa products); float16 2e-2 and bfloat16 6e-2 relative to the output scale
(storage rounding of inputs and outputs, fp32 accumulation inside).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import flowvision.backend as fb
from flowvision.backend import cuda
from flowvision.backend.autograd import graph as G
from flowvision.backend.nn import functional as F

ROOT = Path(__file__).resolve().parents[1]
CUDA_PY = sorted((ROOT / "flowvision" / "backend" / "_cuda").glob("*.py"))
HAVE_GPU = cuda.is_available()


# ====================================================================================== no GPU needed
def test_import_flowvision_never_loads_cuda():
    code = ("import sys, flowvision, flowvision.backend as fb; fb.ones(2).sum();"
            "print('flowvision.backend._C_cuda' in sys.modules, 'flowvision.backend._cuda.dispatch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def _gpu_present():
    """What the build's FLOWVISION_CUDA=AUTO looks for (CMakeLists.txt)."""
    if os.path.exists("/dev/nvidia0"):
        return True
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return r.returncode == 0 and "GPU" in r.stdout


def test_module_builds_and_imports_where_nvcc_exists():
    if shutil.which("nvcc") is None and not cuda.is_built():
        pytest.skip("no nvcc on this machine: _C_cuda is not built here by design")
    if not cuda.is_built() and not _gpu_present():
        pytest.skip("no GPU here: _C_cuda is built only with FLOWVISION_CUDA=1 (install-time default AUTO)")
    assert cuda.is_built(), f"nvcc exists but _C_cuda does not import: {cuda._import_error}"
    m = cuda._load()
    assert m.runtime_version() >= 12000
    assert isinstance(m.device_count(), int)
    assert isinstance(cuda.is_available(), bool)


@pytest.mark.skipif(HAVE_GPU, reason="checks the errors of a machine without a usable GPU")
def test_cuda_errors_without_device():
    x = fb.ones(2, 3)
    expected = "no CUDA device is available" if cuda.is_built() else "flowvision was built without CUDA"
    for make in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to(fb.device("cuda:0")),
                 lambda: fb.zeros(2, device="cuda"), lambda: fb.tensor([1.0], device="cuda"),
                 lambda: fb.nn.Linear(2, 2).cuda(), lambda: cuda.synchronize(), lambda: cuda.Stream(),
                 lambda: cuda.get_device_name(0)):
        with pytest.raises(RuntimeError, match=expected):
            make()
    assert G.cuda_dispatch is None  # the CPU path was never rerouted
    assert cuda.device_count() == 0 and cuda.memory_allocated() == 0
    assert x.cpu() is x and not x.is_cuda


def test_cuda_error_when_built_without_cuda(monkeypatch):
    # what a machine without nvcc at build time sees (no _C_cuda module at all)
    monkeypatch.setattr(cuda, "_module", None)
    monkeypatch.setattr(cuda, "_tried", True)
    monkeypatch.setattr(cuda, "_import_error", ImportError("No module named 'flowvision.backend._C_cuda'"))
    assert not cuda.is_built() and not cuda.is_available() and cuda.device_count() == 0
    assert cuda.memory_allocated() == 0 and cuda.memory_stats() == {}
    for make in (lambda: fb.ones(2).cuda(), lambda: fb.zeros(2, device="cuda"), lambda: cuda.synchronize()):
        with pytest.raises(RuntimeError, match="flowvision was built without CUDA"):
            make()


@pytest.mark.skipif(HAVE_GPU, reason="checks the message of a machine without a GPU")
def test_benchmark_exits_clearly_without_gpu():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cuda.py"), "--models", "resnet50"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "bench_cuda.py needs an NVIDIA GPU" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr


def test_device_parsing():
    d = fb.device("cuda:1")
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    assert fb.device("cuda").index is None and fb.device(0) == fb.device("cuda:0")
    assert fb.device("cuda:0") == "cuda:0" and fb.device("cpu") != fb.device("cuda")
    for bad in ("cuda:x", "gpu", "cuda:-1"):
        with pytest.raises(RuntimeError):
            fb.device(bad)
    assert cuda._index(None) == 0 and cuda._index("cuda:3") == 3 and cuda._index(fb.device("cuda:2")) == 2
    for bad in ("cpu", "cuda:a", True):
        with pytest.raises((ValueError, TypeError)):
            cuda._index(bad)


def _dispatch_names():
    """Every _C_cuda attribute and op code the Python side of the CUDA backend uses."""
    calls, codes = set(), {"UNARY_OPS": set(), "BINARY_OPS": set(), "REDUCE_OPS": set()}
    for p in CUDA_PY:
        src = p.read_text()
        calls |= set(re.findall(r"C\(\)\.(\w+)", src))
        codes["UNARY_OPS"] |= set(re.findall(r"\b(?:uop|ubwd|_unary_twin|_act_twin)\(\s*\"(\w+)\"", src))
        codes["UNARY_OPS"] |= set(re.findall(r"\"\w+\": \"(\w+)\"", src)) & set(re.findall(r"_UNARY = \{([^}]*)\}", src)
                                                                                 [0] if "_UNARY = {" in src else "")
        codes["BINARY_OPS"] |= set(re.findall(r"\bbop\(\s*\"(\w+)\"", src))
        codes["REDUCE_OPS"] |= set(re.findall(r"reduce_dims\(\s*\"(\w+)\"", src))
        codes["REDUCE_OPS"] |= set(re.findall(r"REDUCE_OPS\[\"(\w+)\"\]", src))
    from flowvision.backend._cuda import xp
    codes["UNARY_OPS"] |= set(xp.UNARY.values())
    codes["BINARY_OPS"] |= set(xp._BINARY.values())  # the numpy-named binary ops, called through a variable
    return calls, codes


def test_every_kernel_the_dispatch_names_exists():
    if not cuda.is_built():
        pytest.skip("_C_cuda is not built on this machine")
    m = cuda._load()
    calls, codes = _dispatch_names()
    assert len(calls) > 30
    missing = sorted(c for c in calls if c not in ("BINARY_OPS", "UNARY_OPS", "REDUCE_OPS") and not hasattr(m, c))
    assert not missing, f"_C_cuda lacks {missing}"
    for table, names in codes.items():
        assert names, table
        absent = sorted(names - set(getattr(m, table)))
        assert not absent, f"_C_cuda.{table} lacks {absent}"
    # the emulator used by the no-GPU tests mirrors the same API
    from cuda_emulator import FakeCudaModule
    fake = FakeCudaModule()
    assert not sorted(c for c in calls if not hasattr(fake, c))
    for table in codes:
        assert dict(getattr(m, table)) == getattr(fake, table), table


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """tests/cuda_host_check.cu (kernel code compiled for the host) as a ctypes library."""
    import ctypes
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    csrc = ROOT / "flowvision" / "backend" / "csrc"
    lib = tmp_path_factory.mktemp("cuda_host") / "host_check.so"
    build = subprocess.run([nvcc, "-std=c++17", "-O1", "-arch=sm_75", "-shared", "-Xcompiler", "-fPIC",
                            f"-I{csrc / 'cuda'}", f"-I{csrc}", str(ROOT / "tests" / "cuda_host_check.cu"),
                            str(csrc / "cuda" / "runtime.cpp"), "-o", str(lib)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    L = ctypes.CDLL(str(lib))
    fp, ip = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int64)
    i64, i32, f32, b = ctypes.c_int64, ctypes.c_int, ctypes.c_float, ctypes.c_bool
    L.fv_check_conv_gemm.restype = ctypes.c_int
    L.fv_unary.argtypes = [i32, fp, fp, i64, f32, f32]
    L.fv_unary_grad.argtypes = [i32, fp, fp, fp, i64, f32, f32]
    L.fv_pool.argtypes = [i32, fp, fp, ip] + [i64] * 5 + [i32] * 8 + [b, i32]
    L.fv_interp.argtypes = [i32, b, fp, fp] + [i64] * 5 + [b, f32, f32]
    L.fv_roi_align.argtypes = [b, fp, fp, fp] + [i64] * 7 + [f32, i32, b]
    dp = ctypes.POINTER(ctypes.c_double)
    L.fv_binary.argtypes = [i32, b, dp, dp, dp, i64]
    L.fv_group_norm_bwd.argtypes = [fp] * 10 + [i64] * 4
    L.fv_batch_norm_bwd.argtypes = [fp] * 8 + [i64] * 3 + [b]
    L.fv_softmax_cols.argtypes = [b, fp, fp, fp, i64, i64, i64, b]
    L.fv_reduce_cols.argtypes = [i32, fp, fp, ip, i64, i64, i64]
    for fn in (L.fv_unary, L.fv_unary_grad, L.fv_pool, L.fv_interp, L.fv_roi_align, L.fv_binary, L.fv_group_norm_bwd,
               L.fv_batch_norm_bwd, L.fv_softmax_cols, L.fv_reduce_cols):
        fn.restype = None
    return L


def test_conv_gemm_index_math_on_host(host_kernels, capfd):
    """The implicit-GEMM loaders of conv fwd / data grad / weight grad (with the kernel's split-K partition)
    and of the batched GEMM, run on the host against direct loops."""
    failures = host_kernels.fv_check_conv_gemm()
    out = capfd.readouterr().out
    assert failures == 0 and out.strip().endswith("ALL OK"), out


def _torch_unary(name, p0, p1):
    import torch
    import torch.nn.functional as TF
    return {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
            "rsqrt": lambda x: torch.rsqrt(x + p0), "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
            "sigmoid": torch.sigmoid, "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
            "reciprocal": torch.reciprocal, "square": torch.square, "log1p": torch.log1p, "expm1": torch.expm1,
            "sign": torch.sign, "relu": torch.relu, "relu6": TF.relu6, "leaky_relu": lambda x: TF.leaky_relu(x, p0),
            "elu": lambda x: TF.elu(x, p0), "gelu": TF.gelu, "gelu_tanh": lambda x: TF.gelu(x, approximate="tanh"),
            "silu": TF.silu, "hardswish": TF.hardswish, "hardsigmoid": TF.hardsigmoid, "mish": TF.mish,
            "softplus": lambda x: TF.softplus(x, p0, p1), "clamp": lambda x: torch.clamp(x, p0, p1),
            "pow_scalar": lambda x: torch.pow(x, p0), "add_scalar": lambda x: x + p0, "mul_scalar": lambda x: x * p0,
            "hardtanh": lambda x: TF.hardtanh(x, p0, p1), "selu": TF.selu, "logsigmoid": TF.logsigmoid,
            "log2": torch.log2, "trunc": torch.trunc}[name]


_UNARY_PARAMS = {"rsqrt": (1e-5, 0), "leaky_relu": (0.2, 0), "elu": (0.7, 0), "softplus": (1.5, 4.0),
                 "clamp": (-0.4, 0.3), "pow_scalar": (1.7, 0), "add_scalar": (0.5, 0), "mul_scalar": (-1.5, 0),
                 "hardtanh": (-0.5, 0.7)}
_POSITIVE = {"log", "sqrt", "rsqrt", "log1p", "log2", "reciprocal", "pow_scalar"}


def test_unary_kernel_math_matches_torch(host_kernels):
    """Every unary/activation op of the elementwise kernels (forward and d/dx) against torch."""
    import ctypes
    import torch
    from cuda_emulator import FakeCudaModule
    names = list(cuda._load().UNARY_OPS) if cuda.is_built() else list(FakeCudaModule().UNARY_OPS)
    codes = dict(cuda._load().UNARY_OPS) if cuda.is_built() else FakeCudaModule().UNARY_OPS
    f = ctypes.POINTER(ctypes.c_float)
    for name in names:
        p0, p1 = _UNARY_PARAMS.get(name, (0.0, 0.0))
        x = np.random.default_rng(3).uniform(0.05, 4.0, 4001) if name in _POSITIVE else \
            np.random.default_rng(3).uniform(-8.0, 8.0, 4001)
        x = x.astype(np.float32)
        y, dx = np.empty_like(x), np.empty_like(x)
        host_kernels.fv_unary(codes[name], x.ctypes.data_as(f), y.ctypes.data_as(f), x.size, p0, p1)
        host_kernels.fv_unary_grad(codes[name], x.ctypes.data_as(f), y.ctypes.data_as(f), dx.ctypes.data_as(f),
                                   x.size, p0, p1)
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        yt = _torch_unary(name, p0, p1)(xt)
        (gt,) = torch.autograd.grad(yt.sum(), xt)
        np.testing.assert_allclose(y, yt.detach().numpy(), rtol=2e-6, atol=2e-6, err_msg=name)
        np.testing.assert_allclose(dx, gt.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"{name} gradient")


def _fp(a):
    import ctypes
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def _ip(a):
    import ctypes
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))


POOL_CASES = [  # kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor_override
    ((3, 3), (2, 2), (1, 1), (1, 1), False, True, 0), ((2, 3), (2, 1), (0, 1), (2, 1), True, False, 0),
    ((3, 2), (3, 2), (1, 1), (1, 1), True, False, 0), ((2, 2), (1, 1), (1, 0), (1, 1), False, True, 3)]


@pytest.mark.parametrize("case", POOL_CASES)
def test_pool_kernel_bodies_match_torch(host_kernels, case):
    import torch
    import torch.nn.functional as TF
    k, s, p, d, ceil, cip, div = case
    x = np.random.default_rng(5).standard_normal((2, 3, 9, 8)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    yt, it = TF.max_pool2d(xt, k, s, p, d, ceil_mode=ceil, return_indices=True)
    g = np.random.default_rng(6).standard_normal(tuple(yt.shape)).astype(np.float32)
    (gx,) = torch.autograd.grad(yt, xt, torch.from_numpy(g))
    planes, (oh, ow) = 6, yt.shape[2:]
    geo = (6, 9, 8, oh, ow, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], cip, div)
    y, idx = np.zeros((2, 3, oh, ow), np.float32), np.zeros((2, 3, oh, ow), np.int64)
    host_kernels.fv_pool(0, _fp(x), _fp(y), _ip(idx), *geo)
    np.testing.assert_array_equal(y, yt.detach().numpy())
    np.testing.assert_array_equal(idx, it.numpy())
    dx = np.zeros_like(x)
    host_kernels.fv_pool(1, _fp(g), _fp(dx), _ip(idx), *geo)
    np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-6, atol=1e-6)
    # average pooling (no dilation)
    ya = TF.avg_pool2d(xt, k, s, p, ceil_mode=ceil, count_include_pad=cip, divisor_override=div or None)
    oh, ow = ya.shape[2:]
    geo = (6, 9, 8, oh, ow, k[0], k[1], s[0], s[1], p[0], p[1], 1, 1, cip, div)
    ga = np.random.default_rng(7).standard_normal(tuple(ya.shape)).astype(np.float32)
    (gxa,) = torch.autograd.grad(ya, xt, torch.from_numpy(ga))
    y, dx = np.zeros((2, 3, oh, ow), np.float32), np.zeros_like(x)
    host_kernels.fv_pool(2, _fp(x), _fp(y), _ip(idx), *geo)
    host_kernels.fv_pool(3, _fp(ga), _fp(dx), _ip(idx), *geo)
    np.testing.assert_allclose(y, ya.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, gxa.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("out", [(3, 2), (4, 5), (9, 8), (1, 1), (5, 3)])
def test_adaptive_pool_kernel_bodies_match_torch(host_kernels, out):
    import torch
    import torch.nn.functional as TF
    x = np.random.default_rng(8).standard_normal((2, 3, 9, 8)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    geo = (6, 9, 8, out[0], out[1], 1, 1, 1, 1, 0, 0, 1, 1, True, 0)
    ya = TF.adaptive_avg_pool2d(xt, out)
    g = np.random.default_rng(9).standard_normal(tuple(ya.shape)).astype(np.float32)
    (gx,) = torch.autograd.grad(ya, xt, torch.from_numpy(g))
    y, dx, idx = np.zeros((2, 3) + out, np.float32), np.zeros_like(x), np.zeros((2, 3) + out, np.int64)
    host_kernels.fv_pool(4, _fp(x), _fp(y), _ip(idx), *geo)
    host_kernels.fv_pool(5, _fp(g), _fp(dx), _ip(idx), *geo)
    np.testing.assert_allclose(y, ya.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-5, atol=1e-6)
    ym, im = TF.adaptive_max_pool2d(torch.from_numpy(x), out, return_indices=True)
    host_kernels.fv_pool(6, _fp(x), _fp(y), _ip(idx), *geo)
    np.testing.assert_array_equal(y, ym.numpy())
    np.testing.assert_array_equal(idx, im.numpy())


@pytest.mark.parametrize("mode,size,ac", [("nearest", (13, 7), False), ("nearest-exact", (5, 16), False),
                                          ("bilinear", (12, 11), False), ("bilinear", (5, 14), True),
                                          ("bilinear", (4, 3), False), ("nearest", (20, 3), False)])
def test_interpolate_kernel_bodies_match_torch(host_kernels, mode, size, ac):
    import torch
    import torch.nn.functional as TF
    from flowvision.backend._cuda.xp import interp_scales as _interp_scales
    x = np.random.default_rng(10).standard_normal((2, 3, 9, 8)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    yt = TF.interpolate(xt, size=size, mode=mode, **({"align_corners": ac} if mode == "bilinear" else {}))
    g = np.random.default_rng(11).standard_normal(tuple(yt.shape)).astype(np.float32)
    (gx,) = torch.autograd.grad(yt, xt, torch.from_numpy(g))
    sh, sw = _interp_scales((9, 8), size, ac, None)
    m = {"nearest": 0, "nearest-exact": 1, "bilinear": 2}[mode]
    import ctypes
    y, dx = np.zeros((2, 3) + size, np.float32), np.zeros_like(x)
    args = (6, 9, 8, size[0], size[1], ac, sh, sw)
    host_kernels.fv_interp(m, False, _fp(x), _fp(y), *args)
    host_kernels.fv_interp(m, True, _fp(g), _fp(dx), *args)
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sampling,aligned", [(2, True), (-1, False), (0, True), (3, False)])
def test_roi_align_kernel_bodies_match_torchvision(host_kernels, sampling, aligned):
    import ctypes
    import torch
    from torchvision.ops import roi_align
    x = np.random.default_rng(12).standard_normal((2, 3, 10, 9)).astype(np.float32)
    rois = np.array([[0, 1.0, 1.0, 6.5, 5.0], [1, 0.0, 2.0, 8.0, 9.5], [0, 3.2, 0.5, 4.1, 6.0], [1, -2, -1, 3, 2],
                     [0, 5.0, 5.0, 4.0, 3.0]], np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    yt = roi_align(xt, torch.from_numpy(rois), (3, 2), 0.9, sampling, aligned)
    g = np.random.default_rng(13).standard_normal(tuple(yt.shape)).astype(np.float32)
    (gx,) = torch.autograd.grad(yt, xt, torch.from_numpy(g))
    y, dx = np.zeros(tuple(yt.shape), np.float32), np.zeros_like(x)
    args = (2, 3, 10, 9, 5, 3, 2, 0.9, sampling, aligned)
    host_kernels.fv_roi_align(False, _fp(x), _fp(rois), _fp(y), *args)
    host_kernels.fv_roi_align(True, _fp(g), _fp(rois), _fp(dx), *args)
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-5, atol=1e-5)


def test_binary_kernel_semantics_match_torch(host_kernels):
    """remainder / floor_divide signs, pow, NaN-propagating maximum/minimum, comparisons: float and int64."""
    import ctypes
    import torch
    from cuda_emulator import FakeCudaModule
    codes = dict(cuda._load().BINARY_OPS) if cuda.is_built() else FakeCudaModule().BINARY_OPS
    dp = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(14)
    fa = np.concatenate([rng.uniform(-9, 9, 500), [np.nan, 2.0, -0.0]]).astype(np.float32)
    fb_ = np.concatenate([rng.uniform(-9, 9, 500), [1.0, np.nan, 3.0]]).astype(np.float32)
    ia, ib = rng.integers(-20, 20, 400), rng.integers(-7, 7, 400)
    ib[ib == 0] = 3
    torch_ops = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
                 "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
                 "gt": torch.gt, "ge": torch.ge, "remainder": torch.remainder, "atan2": torch.atan2,
                 "floor_divide": torch.floor_divide, "pow": torch.pow}
    for name, fn in torch_ops.items():
        for is_int, (a, b) in ((False, (fa, fb_)), (True, (ia, ib))):
            if is_int and name in ("div", "atan2"):
                continue
            if is_int and name == "pow":
                b = np.abs(b) % 4
            if not is_int and name == "pow":
                a = np.abs(a)
            ad, bd, y = a.astype(np.float64), b.astype(np.float64), np.empty(a.size, np.float64)
            host_kernels.fv_binary(codes[name], is_int, ad.ctypes.data_as(dp), bd.ctypes.data_as(dp),
                                   y.ctypes.data_as(dp), a.size)
            ref = fn(torch.from_numpy(a), torch.from_numpy(b)).double().numpy()
            np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-5, equal_nan=True, err_msg=f"{name} int={is_int}")


def test_norm_backward_formulas_match_torch(host_kernels):
    """Group norm dx/dw/db and batch norm dx (training and eval) from the kernels' per-channel sums."""
    import torch
    import torch.nn.functional as TF
    rng = np.random.default_rng(15)
    n, c, hw, groups = 3, 6, 20, 3
    x = (rng.standard_normal((n, c, hw)) * 2 + 0.5).astype(np.float32)
    g = rng.standard_normal((n, c, hw)).astype(np.float32)
    w = rng.standard_normal(c).astype(np.float32)
    xt, wt = torch.from_numpy(x).requires_grad_(True), torch.from_numpy(w).requires_grad_(True)
    bt = torch.zeros(c, requires_grad=True)
    gx, gw, gb = torch.autograd.grad(TF.group_norm(xt, groups, wt, bt, 1e-5), (xt, wt, bt), torch.from_numpy(g))
    xg = x.reshape(n, groups, -1).astype(np.float64)
    mean = xg.mean(2).astype(np.float32).reshape(-1)
    rstd = (1 / np.sqrt(xg.var(2) + 1e-5)).astype(np.float32).reshape(-1)
    sum_g, sum_gx = g.sum(2).astype(np.float32), (g * x).sum(2).astype(np.float32)
    dx, dw, db = np.empty_like(x), np.empty_like(w), np.empty_like(w)
    host_kernels.fv_group_norm_bwd(*(_fp(a) for a in (g, x, w, mean, rstd, sum_g, sum_gx, dx, dw, db)), n, c, hw,
                                   groups)
    np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(dw, gw.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db, gb.numpy(), rtol=1e-4, atol=1e-4)
    for training in (True, False):
        rm, rv = rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
        xt = torch.from_numpy(x).requires_grad_(True)
        y = TF.batch_norm(xt, None if training else torch.from_numpy(rm), None if training else torch.from_numpy(rv),
                          torch.from_numpy(w), None, training=training, eps=1e-5)
        (gx,) = torch.autograd.grad(y, xt, torch.from_numpy(g))
        xc = x.transpose(1, 0, 2).reshape(c, -1).astype(np.float64)
        mean = (xc.mean(1) if training else rm).astype(np.float32)
        invstd = (1 / np.sqrt((xc.var(1) if training else rv) + 1e-5)).astype(np.float32)
        gc = g.transpose(1, 0, 2).reshape(c, -1).astype(np.float64)
        sum_dy = gc.sum(1).astype(np.float32)
        sum_dy_xmu = (gc * (xc - mean[:, None])).sum(1).astype(np.float32)
        dx = np.empty_like(x)
        host_kernels.fv_batch_norm_bwd(*(_fp(a) for a in (g, x, mean, invstd, w, sum_dy, sum_dy_xmu, dx)), n, c, hw,
                                       training)
        np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-4, atol=2e-5, err_msg=f"training={training}")


def test_column_softmax_and_reduce_bodies_match_torch(host_kernels):
    """softmax/log_softmax (fwd, bwd) and sum/mean/max/min/argmax/argmin/prod/sumsq over a non-last dim."""
    import torch
    from cuda_emulator import FakeCudaModule
    codes = dict(cuda._load().REDUCE_OPS) if cuda.is_built() else FakeCudaModule().REDUCE_OPS
    rng = np.random.default_rng(16)
    x = rng.standard_normal((3, 7, 5)).astype(np.float32)
    x[1, 2, 3] = x[1, 4, 3]  # a tie: the first index wins
    g = rng.standard_normal((3, 7, 5)).astype(np.float32)
    for log in (False, True):
        xt = torch.from_numpy(x).requires_grad_(True)
        yt = torch.log_softmax(xt, 1) if log else torch.softmax(xt, 1)
        (gx,) = torch.autograd.grad(yt, xt, torch.from_numpy(g))
        y, dx = np.empty_like(x), np.empty_like(x)
        host_kernels.fv_softmax_cols(False, _fp(x), _fp(x), _fp(y), 3, 7, 5, log)
        host_kernels.fv_softmax_cols(True, _fp(g), _fp(y), _fp(dx), 3, 7, 5, log)
        np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dx, gx.numpy(), rtol=1e-4, atol=1e-5)
    t = torch.from_numpy(x)
    ref = {"sum": t.sum(1), "mean": t.mean(1), "max": t.amax(1), "min": t.amin(1), "prod": t.prod(1),
           "sumsq": (t * t).sum(1)}
    for op in ("sum", "mean", "max", "min", "prod", "sumsq", "argmax", "argmin"):
        y, idx = np.empty((3, 5), np.float32), np.zeros((3, 5), np.int64)
        host_kernels.fv_reduce_cols(codes[op], _fp(x), _fp(y), _ip(idx), 3, 7, 5)
        if op in ("argmax", "argmin"):
            vals, ind = (t.max if op == "argmax" else t.min)(1)
            np.testing.assert_array_equal(idx, ind.numpy(), err_msg=op)
            np.testing.assert_array_equal(y, vals.numpy(), err_msg=op)
        else:
            np.testing.assert_allclose(y, ref[op].numpy(), rtol=1e-5, atol=1e-6, err_msg=op)


def test_host_side_shape_logic_of_the_module():
    """Broadcast strides and conv output sizes computed by _C_cuda's host code (no device needed)."""
    if not cuda.is_built():
        pytest.skip("_C_cuda is not built on this machine")
    m = cuda._load()
    for shapes in [((4, 3, 5), (3, 1)), ((2, 1, 6), (1, 7, 1)), ((5,), ()), ((2, 3), (2, 3)), ((1, 4), (3, 1), (4,))]:
        out, strides = m._broadcast([list(s) for s in shapes])
        assert tuple(out) == np.broadcast_shapes(*shapes)
        for s, st in zip(shapes, strides):
            # element strides of a dense array of shape s, zeroed on broadcast dims
            ref = np.broadcast_to(np.empty(s, np.int8) if s else np.empty((), np.int8), tuple(out)).strides
            assert list(st) == list(ref), (shapes, s)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        m._broadcast([[3, 2], [4]])
    for xs, ws, st, pd, dl, g in [((1, 3, 224, 224), (64, 3, 7, 7), [2, 2], [3, 3], [1, 1], 1),
                                  ((2, 6, 11, 10), (6, 2, 3, 2), [2, 1], [1, 2], [2, 1], 3)]:
        ref = F.conv2d(fb.zeros(*xs), fb.zeros(*ws), None, st, pd, dl, g).shape[2:]
        assert tuple(m._conv_output_size(list(xs), list(ws), st, pd, dl, g)) == tuple(ref)
    with pytest.raises(ValueError, match="input channels"):
        m._conv_output_size([1, 4, 8, 8], [8, 3, 3, 3], [1, 1], [0, 0], [1, 1], 1)


def test_bad_dtype_and_index_errors_are_clear():
    from flowvision.backend._cuda import dispatch
    with pytest.raises(RuntimeError, match="one device"):
        dispatch.dev_index(fb.device("cuda:1"))


# ====================================================================================== CPU <-> CUDA parity
@pytest.fixture(params=["emulated", pytest.param("gpu", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not HAVE_GPU, reason="no CUDA device: " + (cuda._why_unavailable() if not HAVE_GPU else ""))])])
def backend(request, monkeypatch):
    from flowvision.backend._cuda import dispatch, runtime
    if request.param == "emulated":
        from cuda_emulator import FakeCudaModule
        monkeypatch.setattr(cuda, "_module", FakeCudaModule())
        monkeypatch.setattr(cuda, "_tried", True)
        monkeypatch.setattr(runtime, "_C", None)
    monkeypatch.setattr(cuda, "allow_tf32", False)
    yield request.param
    if request.param == "emulated":  # disarm: later tests see the real module again
        G.cuda_dispatch = None
        dispatch._ARMED = False
        runtime._C = None


RNG = np.random.default_rng(0)


def _arr(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _leaves(arrays, device):
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype == np.float32:
            t = fb.tensor(a)
            if device == "cuda":
                t = t.cuda()
            out.append(t.requires_grad_(True))
        elif isinstance(a, np.ndarray):
            t = fb.tensor(a)
            out.append(t.cuda() if device == "cuda" else t)
        else:
            out.append(a)
    return out


def check(fn, *arrays, rtol=1e-4, atol=1e-5, grad=True):
    """fn on CPU tensors vs fn on CUDA tensors: outputs and the gradients of sum(out * r) for every float input."""
    cpu = _leaves(arrays, "cpu")
    dev = _leaves(arrays, "cuda")
    y_cpu, y_dev = fn(*cpu), fn(*dev)
    ys_cpu = y_cpu if isinstance(y_cpu, (tuple, list)) else (y_cpu,)
    ys_dev = y_dev if isinstance(y_dev, (tuple, list)) else (y_dev,)
    assert len(ys_cpu) == len(ys_dev)
    for a, b in zip(ys_cpu, ys_dev):
        assert b.is_cuda and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
        np.testing.assert_allclose(b.detach().cpu().float().numpy(), a.detach().float().numpy(), rtol=rtol, atol=atol)
    if not grad:
        return
    loss_c, loss_d = 0, 0
    for a, b in zip(ys_cpu, ys_dev):
        if a.dtype.is_floating_point and a.requires_grad:
            r = fb.tensor(_arr(*a.shape)) if a.ndim else fb.tensor(1.5)
            loss_c = loss_c + (a * r).sum()
            loss_d = loss_d + (b * r.cuda()).sum()
    loss_c.backward()
    loss_d.backward()
    for a, b in zip(cpu, dev):
        if isinstance(a, fb.Tensor) and a.requires_grad:
            assert (a.grad is None) == (b.grad is None)
            if a.grad is None:  # not differentiable w.r.t. this input (e.g. roi boxes)
                continue
            assert b.grad.is_cuda
            np.testing.assert_allclose(b.grad.cpu().numpy(), a.grad.numpy(), rtol=rtol, atol=max(atol, 1e-5))


BINARY = [
    ("add_broadcast", lambda a, b: a + b, (4, 3, 5), (3, 1)),
    ("sub_alpha", lambda a, b: fb.sub(a, b, alpha=2.5), (4, 5), (5,)),
    ("mul", lambda a, b: a * b, (2, 3, 4), (2, 3, 4)),
    ("div", lambda a, b: a / (b.abs() + 0.5), (3, 4), (4,)),
    ("maximum", lambda a, b: fb.maximum(a, b), (3, 4), (3, 4)),
    ("matmul_2d", lambda a, b: a @ b, (7, 5), (5, 3)),
    ("matmul_batched", lambda a, b: a @ b, (2, 3, 7, 5), (2, 3, 5, 4)),
    ("matmul_broadcast", lambda a, b: a @ b, (2, 6, 5), (5, 4)),
    ("matmul_batch_bcast", lambda a, b: a @ b, (2, 1, 6, 5), (3, 5, 4)),
    ("matvec", lambda a, b: a @ b, (6, 5), (5,)),
]


@pytest.mark.parametrize("name,fn,sa,sb", BINARY, ids=[b[0] for b in BINARY])
def test_binary_parity(backend, name, fn, sa, sb):
    check(fn, _arr(*sa), _arr(*sb), atol=1e-4 if "matmul" in name or "matvec" in name else 1e-5)


UNARY = {
    "scalar_ops": lambda x: (x * 2.0 + 1.0) / 3.0 - 0.5,
    "rsub_rdiv": lambda x: 1.0 - x + 2.0 / (x.abs() + 1.0),
    "pow": lambda x: (x.abs() + 0.1) ** 1.7,
    "square": lambda x: x ** 2,
    "neg_exp": lambda x: fb.exp(-x),
    "log": lambda x: fb.log(x.abs() + 0.5),
    "sqrt_rsqrt": lambda x: fb.sqrt(x.abs() + 0.5) + fb.rsqrt(x.abs() + 0.5),
    "tanh_sigmoid": lambda x: fb.tanh(x) * fb.sigmoid(x),
    "erf": lambda x: fb.erf(x),
    "abs": lambda x: fb.abs(x),
    "relu": F.relu, "relu6": lambda x: F.relu6(x * 8), "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "hardswish": lambda x: F.hardswish(x * 4), "hardsigmoid": lambda x: F.hardsigmoid(x * 4), "mish": F.mish,
    "softplus": lambda x: F.softplus(x * 3, beta=2.0, threshold=4.0), "elu": F.elu,
    "hardtanh": lambda x: F.hardtanh(x * 2, -0.5, 0.7), "clamp": lambda x: fb.clamp(x, -0.3, 0.4),
    "softmax_last": lambda x: F.softmax(x, -1), "softmax_dim1": lambda x: F.softmax(x, 1),
    "log_softmax": lambda x: F.log_softmax(x, -1), "log_softmax_dim0": lambda x: F.log_softmax(x, 0),
    "sum_all": lambda x: x.sum(), "sum_dims": lambda x: x.sum((0, 2)), "mean_keep": lambda x: x.mean(-1, keepdim=True),
    "mean_mid": lambda x: x.mean(1), "max_dim": lambda x: x.max(1), "amax": lambda x: x.amax(),
    "reshape_permute": lambda x: x.reshape(4, 15).t().reshape(3, 5, 4).permute(2, 0, 1),
    "slice": lambda x: x[1:, ::2, -3:], "index_int": lambda x: x[:, 1], "flip": lambda x: fb.flip(x, (0, 2)),
    "expand": lambda x: x[:, :1].expand(4, 6, 5), "cat": lambda x: fb.cat([x, x * 2], 1),
    "roll": lambda x: fb.roll(x, (1, -2), (1, 2)), "pad": lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
    "pad_crop": lambda x: F.pad(x, (-1, 2)), "chunk": lambda x: fb.chunk(x, 3, 1)[1],
    "cast_half_back": lambda x: x.half().float() * 1.0,
    "normalize": lambda x: F.normalize(x, dim=-1), "norm_l1": lambda x: fb.norm(x, 1, dim=(0, 2)),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_and_shape_parity(backend, name):
    check(UNARY[name], _arr(4, 3, 5), rtol=1e-3 if name == "cast_half_back" else 1e-4)


def test_gather_rows_by_index(backend):
    idx = np.array([[2, 0], [1, 2]], np.int64)
    check(lambda t, i: t[i], _arr(3, 4), idx)
    check(lambda t, i: fb.index_select(t, 1, i), _arr(4, 3, 5), np.array([2, 0, 2], np.int64))
    with pytest.raises(IndexError):  # the bounds check reads the device index on the host
        fb.index_select(fb.tensor(_arr(4, 3)).cuda(), 1, fb.tensor(np.array([0, 3])).cuda())


CONVS = [  # (x shape, w shape, stride, padding, dilation, groups, bias)
    ((2, 3, 9, 8), (4, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 4, 9, 9), (6, 4, 3, 3), 2, 0, 1, 1, False),
    ((1, 4, 10, 11), (4, 1, 3, 3), 1, 1, 1, 4, True),    # depthwise
    ((1, 4, 10, 11), (8, 1, 5, 5), 2, 2, 1, 4, False),   # depthwise, multiplier 2
    ((2, 6, 9, 9), (6, 2, 3, 3), 1, 2, 2, 3, True),      # grouped + dilated
    ((2, 8, 5, 5), (16, 8, 1, 1), 1, 0, 1, 1, True),     # 1x1 (GEMM)
    ((1, 3, 17, 15), (70, 3, 7, 7), 2, 3, 1, 1, False),  # stem-like, N tile boundary
]


@pytest.mark.parametrize("xs,ws,s,p,d,g,bias", CONVS)
def test_conv2d_parity(backend, xs, ws, s, p, d, g, bias):
    args = [_arr(*xs), _arr(*ws) * 0.3] + ([_arr(ws[0])] if bias else [])
    check(lambda x, w, *b: F.conv2d(x, w, b[0] if b else None, s, p, d, g), *args, atol=1e-4)


POOLS = {
    "max": lambda x: F.max_pool2d(x, 3, 2, 1),
    "max_ceil_dil": lambda x: F.max_pool2d(x, 2, 2, 0, 2, ceil_mode=True),
    "avg": lambda x: F.avg_pool2d(x, 3, 2, 1),
    "avg_nopad_ceil": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "adaptive_avg": lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    "global_avg": lambda x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max": lambda x: F.adaptive_max_pool2d(x, (3, 4)),
    "nearest": lambda x: F.interpolate(x, size=(13, 7), mode="nearest"),
    "nearest_exact": lambda x: F.interpolate(x, size=(5, 16), mode="nearest-exact"),
    "bilinear": lambda x: F.interpolate(x, size=(12, 11), mode="bilinear", align_corners=False),
    "bilinear_ac": lambda x: F.interpolate(x, size=(5, 14), mode="bilinear", align_corners=True),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pool_interpolate_parity(backend, name):
    check(POOLS[name], _arr(2, 3, 9, 8))


def test_norm_parity(backend):
    x = _arr(3, 6, 5, 4) * 3 + 1
    w, b = _arr(6), _arr(6)
    check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
    rm, rv = fb.tensor(_arr(6)), fb.tensor(_arr(6, lo=0.5, hi=2.0))
    check(lambda x, w, b: F.batch_norm(x, rm if not x.is_cuda else rm.cuda(), rv if not x.is_cuda else rv.cuda(),
                                       w, b, training=False), x, w, b)
    check(lambda x, w, b: F.layer_norm(x, (4,), w[:4], b[:4]), x, w, b)
    check(lambda x: F.layer_norm(x, (5, 4)), x)
    check(lambda x, w, b: F.group_norm(x, 3, w, b), x, w, b)


def test_batch_norm_running_stats_update_on_device(backend):
    m_cpu = fb.nn.BatchNorm2d(4)
    m_dev = fb.nn.BatchNorm2d(4).cuda()
    x = _arr(3, 4, 5, 5) * 2 + 0.5
    for _ in range(2):
        m_cpu(fb.tensor(x))
        m_dev(fb.tensor(x).cuda())
    assert m_dev.running_mean.is_cuda
    np.testing.assert_allclose(m_dev.running_mean.cpu().numpy(), m_cpu.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m_dev.running_var.cpu().numpy(), m_cpu.running_var.numpy(), rtol=1e-5, atol=1e-6)


def test_linear_and_module_transfer(backend):
    lin = fb.nn.Linear(5, 3)
    x = _arr(2, 4, 5)
    ref = lin(fb.tensor(x))
    lin.cuda()
    assert lin.weight.is_cuda and lin.weight.device == fb.device("cuda", 0)
    check(lambda x, w, b: F.linear(x, w, b), x, lin.weight.cpu().detach().numpy(), lin.bias.cpu().detach().numpy(),
          atol=1e-5)
    out = lin(fb.tensor(x).cuda())
    np.testing.assert_allclose(out.cpu().detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    lin.cpu()
    assert not lin.weight.is_cuda


def test_roi_align_and_nms(backend):
    from flowvision.ops import roi_align
    from flowvision.backend._cuda import dispatch as cnn
    rois = np.array([[0, 1.0, 1.0, 6.5, 5.0], [1, 0.0, 2.0, 7.0, 7.0], [0, 3.2, 0.5, 4.1, 6.0]], np.float32)
    check(lambda x, r: roi_align(x, r, (3, 2), 0.9, 2, True), _arr(2, 3, 8, 8), rois)
    check(lambda x, r: roi_align(x, r, 2, 1.0, -1, False), _arr(2, 3, 8, 8), rois)
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 9.5]], np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.95], np.float32)
    from flowvision.ops import nms
    keep = cnn.nms(fb.tensor(boxes).cuda(), fb.tensor(scores).cuda(), 0.5)
    assert keep.is_cuda and keep.cpu().tolist() == nms(fb.tensor(boxes), fb.tensor(scores), 0.5).tolist()
    keep = nms(fb.tensor(boxes).cuda(), fb.tensor(scores).cuda(), 0.5)  # the public op on device tensors
    assert keep.is_cuda and keep.cpu().tolist() == nms(fb.tensor(boxes), fb.tensor(scores), 0.5).tolist()
    with pytest.raises(RuntimeError, match="same device"):
        nms(fb.tensor(boxes).cuda(), fb.tensor(scores), 0.5)


def test_creation_on_device(backend):
    a = fb.tensor(_arr(2, 3)).cuda()
    for t in (fb.zeros_like(a), fb.ones_like(a), fb.full_like(a, 2.0), fb.empty_like(a), fb.rand_like(a),
              fb.randn_like(a), fb.zeros(2, 3, device="cuda"), fb.arange(5, device="cuda:0"),
              fb.tensor([1, 2], device=fb.device("cuda"))):
        assert t.is_cuda and t.device == fb.device("cuda", 0)
    assert fb.zeros_like(a, device="cpu").is_cpu and not fb.zeros_like(a.cpu()).is_cuda
    assert fb.full_like(a, 2.0).cpu().tolist() == [[2.0] * 3] * 2
    assert fb.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]
    w = fb.zeros(3, device="cuda", requires_grad=True)
    assert w.is_leaf and w.requires_grad and w.is_cuda


def test_dropout_on_device(backend):
    x = fb.tensor(np.ones((200, 50), np.float32)).cuda().requires_grad_(True)
    y = F.dropout(x, 0.25, training=True)
    kept = y.detach().cpu().numpy()
    assert y.is_cuda and set(np.unique(kept)) <= {0.0, np.float32(1 / 0.75)} and 0.2 < (kept == 0).mean() < 0.3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept)  # d(x * mask)/dx = mask
    assert F.dropout2d(fb.ones(2, 4, 3, 3).cuda(), 0.5, training=True).is_cuda


def test_drop_path_and_drop_block_masks_on_device(backend):
    """timm's and torchvision's stochastic depth / DropBlock draw their masks on the input's device."""
    from flowvision import layers as L, ops
    x = fb.tensor(np.ones((64, 2, 8, 8), np.float32)).cuda().requires_grad_(True)
    for y in (L.drop_path(x, 0.5, training=True), ops.stochastic_depth(x, 0.5, "row"),
              L.drop_block_2d(x, 0.2, 3), ops.drop_block2d(x, 0.2, 3), L.drop_block_2d(x, 0.2, 3, with_noise=True)):
        assert y.is_cuda
    kept = L.drop_path(x, 0.5, training=True)
    kept.sum().backward()
    mask = kept.detach().cpu().numpy()
    assert set(np.unique(mask)) <= {0.0, 2.0} and (mask == 0).any() and (mask != 0).any()
    np.testing.assert_allclose(x.grad.cpu().numpy(), mask)


def test_mixed_device_error(backend):
    a, b = fb.ones(3).cuda(), fb.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        a + b
    assert (a + fb.tensor(2.0)).cpu().tolist() == [3.0, 3.0, 3.0]  # 0-d CPU tensors are scalars
    with pytest.raises(TypeError, match="cpu"):
        a.numpy()
    assert "device='cuda:0'" in repr(a) and a.device == fb.device("cuda:0") and a.is_cuda


@pytest.mark.parametrize("dtype,tol", [("float16", 2e-2), ("bfloat16", 6e-2)])
def test_half_storage_fp32_accumulate(backend, dtype, tol):
    dt = getattr(fb, dtype)
    x, w = _arr(2, 8, 9, 9), _arr(16, 8, 3, 3) * 0.2
    ref = F.conv2d(fb.tensor(x), fb.tensor(w), None, 1, 1)
    xd, wd = fb.tensor(x).cuda().to(dt), fb.tensor(w).cuda().to(dt)
    y = F.gelu(F.conv2d(xd, wd, None, 1, 1))
    assert y.dtype is dt and y.is_cuda
    got = y.float().cpu().numpy()
    scale = np.abs(ref.numpy()).max()
    np.testing.assert_allclose(got, F.gelu(ref).numpy(), rtol=tol, atol=tol * scale)
    # gradients flow back in the inputs' dtype
    xd.requires_grad_(True)
    F.conv2d(xd, wd, None, 1, 1).float().sum().backward()
    assert xd.grad.dtype is dt and xd.grad.is_cuda


def test_autocast(backend):
    lin = fb.nn.Linear(8, 4).cuda()
    x = fb.tensor(_arr(3, 8)).cuda()
    with cuda.autocast(dtype=fb.bfloat16):
        y = lin(x)
        s = F.softmax(y, -1)
    assert y.dtype is fb.bfloat16 and s.dtype is fb.float32
    ref = F.softmax(lin.cpu()(fb.tensor(x.cpu().numpy())), -1)
    np.testing.assert_allclose(s.detach().cpu().numpy(), ref.detach().numpy(), atol=3e-2)


MODELS = [("resnet18", 64), ("mobilenetv3_small_050", 64), ("efficientnet_b0", 64), ("convnext_atto", 64),
          ("vit_tiny_patch16_224", 224), ("swin_tiny_patch4_window7_224", 224), ("densenet121", 64),
          ("regnety_002", 64), ("tf_efficientnet_b0", 64), ("resnext50_32x4d", 64), ("seresnext50_32x4d", 64),
          ("mixer_b16_224", 224), ("deit_tiny_patch16_224", 224), ("mobilenetv3_rw", 64)]


def _model_pair(name, size, eval_mode=True):
    import flowvision.models as models
    fb.manual_seed(0)
    m = models.create_model(name, pretrained=False, num_classes=10)
    m.eval() if eval_mode else m.train()
    x = _arr(2, 3, size, size)
    return m, x


@pytest.mark.parametrize("name,size", MODELS[:2] + [pytest.param(*m, marks=pytest.mark.slow) for m in MODELS[2:]])
def test_zoo_model_logits(backend, name, size):
    m, x = _model_pair(name, size)
    with fb.no_grad():
        ref = m(fb.tensor(x)).numpy()
        m.cuda()
        out = m(fb.tensor(x).cuda())
    assert out.is_cuda
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))


def test_training_step_gradients(backend):
    m, _ = _model_pair("resnet18", 64, eval_mode=False)
    # a fixed input (not the shared RNG stream), 64x64 so that layer4's training-mode BN sees 2x2 maps: with 1x1 maps
    # and batch 2 the batch variance comes from 2 values and amplifies rounding differences without bound
    x = np.random.default_rng(1).uniform(-1, 1, (2, 3, 64, 64)).astype(np.float32)
    y = fb.tensor(np.array([1, 3]))
    loss = F.cross_entropy(m(fb.tensor(x)), y)
    loss.backward()
    ref = {k: p.grad.numpy().copy() for k, p in m.named_parameters()}
    m.zero_grad()
    m.cuda()
    m.train()
    loss_d = F.cross_entropy(m(fb.tensor(x).cuda()), y.cuda())
    loss_d.backward()
    np.testing.assert_allclose(loss_d.item(), loss.item(), rtol=1e-4)
    for k, p in m.named_parameters():
        assert p.grad.is_cuda, k
        # a whole network in training-mode BN (batch 2): summation-order rounding grows through the layers
        np.testing.assert_allclose(p.grad.cpu().numpy(), ref[k], rtol=1e-3, atol=2e-3 * np.abs(ref[k]).max(),
                                   err_msg=k)


# ====================================================================================== GPU only
gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device: " + (cuda._why_unavailable() if not HAVE_GPU else ""))


@pytest.mark.cuda
@gpu
def test_allocator_stats_stable_over_1000_iterations():
    m, x = _model_pair("resnet18", 32, eval_mode=False)
    m.cuda()
    xd = fb.tensor(x).cuda()
    for _ in range(3):  # warm the cache
        m(xd).sum().backward()
    cuda.synchronize()
    base_alloc, base_reserved = cuda.memory_allocated(), cuda.memory_reserved()
    for i in range(1000):
        m.zero_grad()
        m(xd).sum().backward()
    cuda.synchronize()
    assert cuda.memory_allocated() <= base_alloc * 1.01 + (1 << 20)
    assert cuda.memory_reserved() <= base_reserved * 1.05 + (8 << 20)
    peak = cuda.max_memory_allocated()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() <= peak
    cuda.empty_cache()
    assert cuda.memory_reserved() <= cuda.memory_allocated() + (4 << 20)


@pytest.mark.cuda
@gpu
def test_tf32_path_tolerance():
    x, w = _arr(4, 32, 17, 17), _arr(64, 32, 3, 3) * 0.1
    ref = F.conv2d(fb.tensor(x), fb.tensor(w), None, 1, 1).numpy()
    cuda.allow_tf32 = True
    try:
        got = F.conv2d(fb.tensor(x).cuda(), fb.tensor(w).cuda(), None, 1, 1).cpu().numpy()
        a, b = fb.tensor(_arr(64, 96)).cuda(), fb.tensor(_arr(96, 80)).cuda()
        mm = (a @ b).cpu().numpy()
    finally:
        cuda.allow_tf32 = False
    np.testing.assert_allclose(got, ref, rtol=5e-3, atol=5e-3 * np.abs(ref).max())
    np.testing.assert_allclose(mm, a.cpu().numpy() @ b.cpu().numpy(), rtol=5e-3, atol=5e-3 * 8)


@pytest.mark.cuda
@gpu
def test_streams_events_and_async_copies():
    s = cuda.Stream()
    x = np.arange(1 << 20, dtype=np.float32)
    with cuda.stream(s):
        t = fb.tensor(x).cuda() * 2.0
        e = s.record_event(cuda.Event(enable_timing=True))
    e.synchronize()
    assert s.query() and e.query()
    np.testing.assert_array_equal(t.cpu().numpy(), x * 2)
    cuda.synchronize()
    assert cuda.get_device_name(0) and len(cuda.get_device_capability()) == 2
    assert cuda.memory_allocated() > 0 and cuda.memory_stats()["num_allocs"] > 0


@pytest.mark.cuda
@gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50", "vit_base_patch16_224", "swin_tiny_patch4_window7_224",
                                  "convnext_tiny", "efficientnet_b0", "mobilenetv3_large_100", "regnety_008",
                                  "densenet121", "deit_small_patch16_224", "resnext50_32x4d"])
def test_zoo_model_logits_full_size(name):
    import flowvision.models as models
    fb.manual_seed(0)
    m = models.create_model(name, pretrained=False).eval()
    x = _arr(1, 3, 224, 224)
    with fb.no_grad():
        ref = m(fb.tensor(x)).numpy()
        out = m.cuda()(fb.tensor(x).cuda()).cpu().numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))
