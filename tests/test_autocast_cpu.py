"""CPU autocast follows torch's dtype policy (bfloat16 for linear/matmul/conv, float32 for losses, others keep
their inputs' dtype); values agree with torch's CPU bfloat16 within bfloat16 rounding."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402


def _dt(t):
    return str(t.dtype).split(".")[-1]


def _net(L, seed=0):
    L.manual_seed(seed)
    return L.nn.Sequential(L.nn.Conv2d(3, 4, 3, padding=1), L.nn.ReLU(), L.nn.Flatten(), L.nn.Linear(4 * 6 * 6, 5))


def _copy(tm, fm):
    fm.load_state_dict({k: fb.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def test_dtype_policy_matches_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    img = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    ops = {
        "matmul": lambda L, x, y: L.matmul(x, y), "mm": lambda L, x, y: L.mm(x, y), "@": lambda L, x, y: x @ y,
        "bmm": lambda L, x, y: L.bmm(x[None], y[None]), "addmm": lambda L, x, y: L.addmm(L.zeros(3), x, y),
        "linear": lambda L, x, y: L.nn.functional.linear(x, y.t()),
        "relu(mm)": lambda L, x, y: (x @ y).relu(), "mm+fp32": lambda L, x, y: (x @ y) + L.ones(3),
        "exp(fp32)": lambda L, x, y: x.exp(), "sum(mm)": lambda L, x, y: (x @ y).sum(),
        "mse": lambda L, x, y: L.nn.functional.mse_loss(x @ y, L.zeros(4, 3)),
        "ce": lambda L, x, y: L.nn.functional.cross_entropy(x @ y, L.tensor([0, 1, 2, 0])),
        "mm(f64)": lambda L, x, y: x.double() @ y.double(),
    }
    for name, op in ops.items():
        with fb.autocast("cpu"):
            rf = op(fb, fb.tensor(a), fb.tensor(b))
        with torch.autocast("cpu"):
            rt = op(torch, torch.tensor(a), torch.tensor(b))
        assert _dt(rf) == _dt(rt), (name, rf.dtype, rt.dtype)
        np.testing.assert_allclose(rf.float().numpy(), rt.float().numpy(), rtol=2e-2, atol=2e-2, err_msg=name)
    for conv in ("conv2d",):
        with fb.autocast("cpu"):
            rf = fb.nn.functional.conv2d(fb.tensor(img), fb.tensor(w), padding=1)
        with torch.autocast("cpu"):
            rt = torch.nn.functional.conv2d(torch.tensor(img), torch.tensor(w), padding=1)
        assert _dt(rf) == _dt(rt) == "bfloat16"
        np.testing.assert_allclose(rf.float().numpy(), rt.float().numpy(), rtol=3e-2, atol=3e-2)
    # float16 as the CPU autocast dtype, and enabled=False, and nesting
    with fb.autocast("cpu", dtype=fb.float16), torch.autocast("cpu", dtype=torch.float16):
        assert _dt(fb.tensor(a) @ fb.tensor(b)) == _dt(torch.tensor(a) @ torch.tensor(b)) == "float16"
        with fb.autocast("cpu", enabled=False), torch.autocast("cpu", enabled=False):
            assert _dt(fb.tensor(a) @ fb.tensor(b)) == _dt(torch.tensor(a) @ torch.tensor(b)) == "float32"
        assert fb.is_autocast_enabled("cpu") if hasattr(fb, "is_autocast_enabled") else True
    assert _dt(fb.tensor(a) @ fb.tensor(b)) == "float32"  # off again after the block


def test_training_step_under_autocast_matches_torch():
    tm, fm = _net(torch), _net(fb)
    _copy(tm, fm)
    x = np.random.default_rng(1).standard_normal((3, 3, 6, 6)).astype(np.float32)
    y = np.array([0, 3, 1])
    with torch.autocast("cpu"):
        to = tm(torch.tensor(x))
        tl = torch.nn.functional.cross_entropy(to, torch.tensor(y))
    with fb.autocast("cpu"):
        fo = fm(fb.tensor(x))
        fl = fb.nn.functional.cross_entropy(fo, fb.tensor(y))
    assert _dt(fo) == _dt(to) == "bfloat16" and _dt(fl) == _dt(tl) == "float32"
    np.testing.assert_allclose(fo.float().detach().numpy(), to.float().detach().numpy(), rtol=3e-2, atol=3e-2)
    tl.backward()
    fl.backward()
    for (n, p), q in zip(tm.named_parameters(), fm.parameters()):
        assert _dt(q.grad) == _dt(p.grad) == "float32", n
        scale = float(p.grad.abs().max())
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), atol=0.05 * scale + 1e-3, err_msg=n)
