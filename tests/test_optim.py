"""Optimizers, schedulers and gradient clipping against torch (and timm's Lamb): update math, param groups,
state_dict round trips (resume gives identical results), loading torch's optimizer state, bad options."""
import copy
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402
from flowvision.backend import nn, optim  # noqa: E402
from flowvision.backend.optim import lr_scheduler as fls  # noqa: E402
from torch.optim import lr_scheduler as tls  # noqa: E402
from flowvision.backend.serialization import load as fv_load, save as fv_save  # noqa: E402


def _params(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (3,), (2, 2, 2)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [nn.Parameter(fb.tensor(a.copy())) for a in arrays]
    ref = [torch.nn.Parameter(torch.tensor(a.copy())) for a in arrays]
    return ours, ref


def _groups(params, lrs):
    return [{"params": params[:2], "lr": lrs[0]}, {"params": params[2:], "lr": lrs[1]}]


def _set_grads(ours, ref, rng, skip_last=False):
    for i, (p, q) in enumerate(zip(ours, ref)):
        if skip_last and i == len(ours) - 1:
            p.grad, q.grad = None, None
            continue
        g = rng.standard_normal(tuple(p.shape)).astype(np.float32)
        p.grad = fb.tensor(g)
        q.grad = torch.tensor(g)


OPT_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.05, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize("name,kw", OPT_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPT_CASES)])
def test_optimizer_matches_torch(name, kw):
    ours, ref = _params()
    kw_o = {k: v for k, v in kw.items() if k != "lr"}
    o = getattr(optim, name)(_groups(ours, (kw["lr"], kw["lr"] * 0.5)), **kw)
    t = getattr(torch.optim, name)(_groups(ref, (kw["lr"], kw["lr"] * 0.5)), **kw)
    assert kw_o is not None
    rng = np.random.default_rng(1)
    for step in range(15):
        _set_grads(ours, ref, rng, skip_last=(step % 4 == 3))  # a param without grad is skipped
        o.step()
        t.step()
    for p, q in zip(ours, ref):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    # state_dict layout is torch's
    so, st = o.state_dict(), t.state_dict()
    assert list(so["state"]) == list(st["state"])
    for k in st["state"]:
        assert sorted(so["state"][k]) == sorted(st["state"][k])
        for sk, v in st["state"][k].items():
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(np.asarray(so["state"][k][sk]._data, np.float64), v.double().numpy(),
                                           rtol=1e-5, atol=1e-6, err_msg=sk)
    assert [g["params"] for g in so["param_groups"]] == [g["params"] for g in st["param_groups"]]
    for go, gt in zip(so["param_groups"], st["param_groups"]):
        assert set(go) <= set(gt) | {"decoupled_weight_decay"}
        for key in ("lr", "weight_decay"):
            assert go[key] == gt[key]


def test_lamb_matches_timm():
    timm_optim = pytest.importorskip("timm.optim")
    for kw in (dict(lr=0.01), dict(lr=0.01, weight_decay=0.0, always_adapt=True, trust_clip=True),
               dict(lr=0.02, grad_averaging=False, bias_correction=False, max_grad_norm=None)):
        ours, ref = _params()
        o = optim.Lamb(ours, **kw)
        t = timm_optim.Lamb(ref, foreach=False, **kw)
        rng = np.random.default_rng(2)
        for _ in range(12):
            _set_grads(ours, ref, rng)
            for p, q in zip(ours, ref):  # large gradients so the global-norm clip is active
                p.grad._data *= 3
                q.grad.mul_(3)
            o.step()
            t.step()
        for p, q in zip(ours, ref):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("AdamW", dict(lr=0.01, amsgrad=True)),
                                     ("RMSprop", dict(lr=0.01, momentum=0.3, centered=True)),
                                     ("Adagrad", dict(lr=0.1)), ("Lamb", dict(lr=0.01))])
def test_state_dict_round_trip_resumes_identically(name, kw):
    rng = np.random.default_rng(3)
    grads = [[rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3,), (2, 2, 2))] for _ in range(10)]

    def run(params, opt, steps):
        for g in steps:
            for p, a in zip(params, g):
                p.grad = fb.tensor(a)
            opt.step()

    ours, _ = _params()
    o = getattr(optim, name)(_groups(ours, (kw["lr"], kw["lr"] / 3)), **kw)
    run(ours, o, grads[:5])
    ckpt_params = [p.detach().clone() for p in ours]
    ckpt_opt = copy.deepcopy(o.state_dict())
    buf = io.BytesIO()
    fv_save(o.state_dict(), buf)  # and through the safetensors serializer
    run(ours, o, grads[5:])

    for use_file in (False, True):
        resumed = [nn.Parameter(p.clone()) for p in ckpt_params]
        o2 = getattr(optim, name)(_groups(resumed, (1.0, 1.0)), **kw)  # lrs come back from the state dict
        if use_file:
            buf.seek(0)
            o2.load_state_dict(fv_load(buf))
        else:
            o2.load_state_dict(ckpt_opt)
        assert [g["lr"] for g in o2.param_groups] == [g["lr"] for g in o.param_groups]
        run(resumed, o2, grads[5:])
        for p, q in zip(resumed, ours):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_load_torch_optimizer_state_dict_through_numpy():
    ours, ref = _params()
    t = torch.optim.AdamW(_groups(ref, (0.01, 0.005)), lr=0.01)
    rng = np.random.default_rng(4)
    for _ in range(3):
        _set_grads(ours, ref, rng)
        t.step()
    sd = t.state_dict()
    converted = {"state": {k: {sk: (sv.numpy() if isinstance(sv, torch.Tensor) else sv) for sk, sv in v.items()}
                           for k, v in sd["state"].items()},
                 "param_groups": copy.deepcopy(sd["param_groups"])}
    for p, q in zip(ours, ref):
        p._data[...] = q.detach().numpy()
    o = optim.AdamW(_groups(ours, (0.01, 0.005)), lr=0.01)
    o.load_state_dict(converted)
    for _ in range(4):
        _set_grads(ours, ref, rng)
        t.step()
        o.step()
    for p, q in zip(ours, ref):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_constructor_signatures_match_torch():
    import inspect
    checked = 0
    for ours_mod, ref_mod in ((optim, torch.optim), (fls, tls)):
        for name in dir(ours_mod):
            obj = getattr(ours_mod, name)
            if name.startswith("_") or not isinstance(obj, type) or not hasattr(ref_mod, name):
                continue
            a = [(p.name, p.kind, p.default) for p in inspect.signature(obj.__init__).parameters.values()]
            b = [(p.name, p.kind, p.default) for p in
                 inspect.signature(getattr(ref_mod, name).__init__).parameters.values()]
            assert a == b, name
            checked += 1
    assert checked >= 20


def test_bad_options_and_params_rejected():
    p = [nn.Parameter(fb.ones(2))]
    with pytest.raises(TypeError):
        optim.SGD(p, lr=0.1, momentom=0.9)
    with pytest.raises(TypeError):
        optim.AdamW(p, lr=0.1, beta1=0.9)
    with pytest.raises(TypeError):
        optim.Lamb(p, foo=1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid momentum"):
        optim.SGD(p, lr=0.1, momentum=-1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p[0], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": p}, {"params": p}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p[0] * 2], lr=0.1)
    with pytest.raises(TypeError, match="organized in ordered collections"):
        optim.SGD([{"params": set(p)}], lr=0.1)
    o = optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        o.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        o.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 0.1}]})


def test_param_groups_zero_grad_closure_and_hooks():
    a, b = nn.Parameter(fb.ones(2)), nn.Parameter(fb.ones(3))
    o = optim.SGD([a], lr=0.5, momentum=0.9)
    o.add_param_group({"params": b, "lr": 0.1})
    assert o.param_groups[1]["momentum"] == 0.9 and o.param_groups[1]["lr"] == 0.1
    seen = []
    h = o.register_step_post_hook(lambda opt, args, kwargs: seen.append("post"))

    def closure():
        o.zero_grad()
        loss = (a * a).sum() + b.sum()
        loss.backward()
        return loss

    loss = o.step(closure)
    assert float(loss) == pytest.approx(5.0) and seen == ["post"]
    np.testing.assert_allclose(a.detach().numpy(), [0.0, 0.0])
    np.testing.assert_allclose(b.detach().numpy(), [0.9, 0.9, 0.9])
    h.remove()
    o.zero_grad(set_to_none=False)
    assert a.grad is not None and (a.grad.numpy() == 0).all()
    o.zero_grad()
    assert a.grad is None and b.grad is None
    with pytest.raises(ValueError):
        o.add_param_group({"params": [a]})
    assert "Parameter Group 1" in repr(o)


def test_low_precision_params_update_in_float32():
    for dt in (fb.bfloat16, fb.float16):
        p = nn.Parameter(fb.ones(4, dtype=dt))
        p.grad = fb.full((4,), 0.5, dtype=dt)
        o = optim.Adam([p], lr=0.1)
        o.step()
        assert p.dtype == dt
        np.testing.assert_allclose(p.detach().float().numpy(), 0.9, rtol=1e-2)
        assert o.state[p]["exp_avg"].dtype == fb.float32


def test_updates_are_in_place_and_outside_autograd():
    m = nn.Linear(3, 2)
    w = m.weight
    view = w.detach()
    o = optim.SGD(m.parameters(), lr=1.0)
    m(fb.randn(4, 3)).sum().backward()
    before = view.numpy().copy()
    o.step()
    assert m.weight is w and w.grad_fn is None and w.is_leaf
    np.testing.assert_allclose(view.numpy(), before - w.grad.numpy())  # other references see the update


# ------------------------------------------------------------------ schedulers
def _sched_pair(make, opt_name="SGD", opt_kw=None, n_groups=2):
    opt_kw = opt_kw or {"lr": 0.1, "momentum": 0.9}
    ours, ref = _params()
    o = getattr(optim, opt_name)(_groups(ours, (0.1, 0.05)) if n_groups == 2 else ours, **opt_kw)
    t = getattr(torch.optim, opt_name)(_groups(ref, (0.1, 0.05)) if n_groups == 2 else ref, **opt_kw)
    return o, t, make(fls, o), make(tls, t)


SCHED_CASES = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-4),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=20),
    "OneCycleLR-3phase-linear": lambda L, o: L.OneCycleLR(o, max_lr=1.0, epochs=4, steps_per_epoch=5,
                                                          three_phase=True, anneal_strategy="linear"),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.1, total_iters=6),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "LambdaLR": lambda L, o: L.LambdaLR(o, lr_lambda=[lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=8, power=2.0),
    "SequentialLR": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, start_factor=0.01, total_iters=4),
                                                    L.CosineAnnealingLR(o, T_max=10)], milestones=[4]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, factor=0.3, total_iters=3),
                                                         L.ExponentialLR(o, gamma=0.9)]),
}


@pytest.mark.parametrize("case", list(SCHED_CASES))
def test_scheduler_matches_torch(case):
    o, t, so, st = _sched_pair(SCHED_CASES[case])
    assert so.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-12, abs=1e-15)
    for _ in range(19):
        o.step()
        t.step()
        so.step()
        st.step()
        assert so.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-12, abs=1e-15)
        assert [g["lr"] for g in o.param_groups] == pytest.approx([g["lr"] for g in t.param_groups], rel=1e-12)
        assert [g["momentum"] for g in o.param_groups] == pytest.approx([g["momentum"] for g in t.param_groups])


def test_onecycle_cycles_adam_betas():
    o, t, so, st = _sched_pair(lambda L, opt: L.OneCycleLR(opt, max_lr=0.01, total_steps=10), "AdamW",
                               {"lr": 0.001})
    for _ in range(9):
        o.step()
        t.step()
        so.step()
        st.step()
        assert [g["betas"][0] for g in o.param_groups] == pytest.approx([g["betas"][0] for g in t.param_groups])
    with pytest.raises(ValueError, match="Tried to step"):
        for _ in range(3):
            so.step()


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 0.1]
    for kw in (dict(patience=2, factor=0.5), dict(mode="max", patience=1, threshold=0.1, threshold_mode="abs",
                                                  cooldown=2, min_lr=[0.02, 0.01])):
        o, t, so, st = _sched_pair(lambda L, opt: L.ReduceLROnPlateau(opt, **kw))
        for m in metrics:
            so.step(m)
            st.step(m)
            assert so.get_last_lr() == pytest.approx(st.get_last_lr())
        state = so.state_dict()
        o2, _, so2, _ = _sched_pair(lambda L, opt: L.ReduceLROnPlateau(opt, **kw))
        so2.load_state_dict(state)
        assert so2.best == so.best and so2.num_bad_epochs == so.num_bad_epochs


@pytest.mark.parametrize("case", ["CosineAnnealingLR", "OneCycleLR", "SequentialLR", "MultiStepLR",
                                  "CosineAnnealingWarmRestarts", "ChainedScheduler"])
def test_scheduler_state_dict_round_trip(case):
    make = SCHED_CASES[case]
    o, _, s, _ = _sched_pair(make)
    for _ in range(6):
        o.step()
        s.step()
    saved_sched = copy.deepcopy(s.state_dict())
    saved_opt = copy.deepcopy(o.state_dict())
    buf = io.BytesIO()
    fv_save({"sched": s.state_dict(), "opt": o.state_dict()}, buf)
    expected = []
    for _ in range(8):
        o.step()
        s.step()
        expected.append(s.get_last_lr())
    for from_file in (False, True):
        o2, _, s2, _ = _sched_pair(make)
        if from_file:
            buf.seek(0)
            blob = fv_load(buf)
            o2.load_state_dict(blob["opt"])
            s2.load_state_dict(blob["sched"])
        else:
            o2.load_state_dict(saved_opt)
            s2.load_state_dict(saved_sched)
        got = []
        for _ in range(8):
            o2.step()
            s2.step()
            got.append(s2.get_last_lr())
        assert got == expected


def test_scheduler_errors():
    p = [nn.Parameter(fb.ones(1))]
    o = optim.SGD(p, lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        fls.StepLR(o, 2, last_epoch=3)
    with pytest.raises(TypeError):
        fls.StepLR(object(), 2)
    with pytest.raises(ValueError, match="either total_steps OR"):
        fls.OneCycleLR(o, max_lr=1.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        fls.ReduceLROnPlateau(o, factor=2.0)
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        fls.OneCycleLR(optim.Adagrad(p), max_lr=1.0, total_steps=5)
    with pytest.raises(ValueError, match="number of milestone points"):
        fls.SequentialLR(o, [fls.StepLR(o, 2), fls.StepLR(o, 3)], milestones=[])


# ------------------------------------------------------------------ gradient clipping
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_clip_grad_norm_matches_torch(norm_type):
    ours, ref = _params()
    rng = np.random.default_rng(5)
    _set_grads(ours, ref, rng)
    for max_norm in (0.5, 100.0):
        n1 = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
        n2 = torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type=norm_type)
        assert float(n1) == pytest.approx(float(n2), rel=1e-5)
        for p, q in zip(ours, ref):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_nonfinite():
    ours, ref = _params()
    _set_grads(ours, ref, np.random.default_rng(6))
    nn.utils.clip_grad_value_(ours, 0.3)
    torch.nn.utils.clip_grad_value_(ref, 0.3)
    for p, q in zip(ours, ref):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    ours[0].grad._data[0, 0] = np.inf
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    single = nn.Parameter(fb.ones(3))
    single.grad = fb.full((3,), 2.0)
    total = nn.utils.clip_grad_norm_(single, 1.0)
    assert float(total) == pytest.approx(np.sqrt(12))
    np.testing.assert_allclose(single.grad.numpy(), 2.0 / (np.sqrt(12) + 1e-6), rtol=1e-6)
    vec = nn.utils.parameters_to_vector(ours)
    assert tuple(vec.shape) == (12 + 3 + 8,)


def test_training_resume_from_checkpoint_file_is_identical(tmp_path):
    """Model + optimizer + scheduler saved mid-run to a file and restored into fresh objects continue exactly
    like the uninterrupted run."""
    rng = np.random.default_rng(9)
    xs = rng.standard_normal((10, 8, 6)).astype(np.float32)
    ys = rng.integers(0, 3, (10, 8)).astype(np.int64)

    def build():
        fb.manual_seed(0)
        m = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.GELU(), nn.Linear(16, 3))
        o = optim.AdamW([{"params": m[0].parameters()}, {"params": list(m[1].parameters()) + list(m[3].parameters()),
                                                         "weight_decay": 0.0}], lr=0.01)
        s = fls.OneCycleLR(o, max_lr=0.05, total_steps=10)
        return m, o, s

    def train(m, o, s, steps):
        for i in steps:
            o.zero_grad()
            nn.functional.cross_entropy(m(fb.tensor(xs[i])), fb.tensor(ys[i])).backward()
            o.step()
            s.step()

    m, o, s = build()
    train(m, o, s, range(5))
    fv_save({"model": m.state_dict(), "opt": o.state_dict(), "sched": s.state_dict()}, tmp_path / "ck.safetensors")
    train(m, o, s, range(5, 10))

    m2, o2, s2 = build()
    ck = fv_load(tmp_path / "ck.safetensors")
    m2.load_state_dict(ck["model"])
    o2.load_state_dict(ck["opt"])
    s2.load_state_dict(ck["sched"])
    train(m2, o2, s2, range(5, 10))
    for (k, a), b in zip(m.state_dict().items(), m2.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    assert s.get_last_lr() == s2.get_last_lr()
