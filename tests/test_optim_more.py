"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS against torch.optim on the same parameters and
gradients: parameters and state after several steps, maximize/weight decay variants, state_dict resume."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402
from flowvision.backend import nn, optim  # noqa: E402


def _params(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3,), (2, 2, 2)]]
    return ([nn.Parameter(fb.tensor(a.copy())) for a in arrays],
            [torch.nn.Parameter(torch.tensor(a.copy())) for a in arrays])


CASES = [
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.05)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=3, weight_decay=0.01)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_optimizer_matches_torch(name, kw):
    ours, ref = _params()
    o, r = getattr(optim, name)(ours, **kw), getattr(torch.optim, name)(ref, **kw)
    rng = np.random.default_rng(1)
    for step in range(8):
        for p, q in zip(ours, ref):
            g = rng.standard_normal(tuple(p.shape)).astype(np.float32)
            p.grad, q.grad = fb.tensor(g), torch.tensor(g)
        o.step()
        r.step()
    for p, q in zip(ours, ref):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-6, atol=2e-7)
    for p, q in zip(ours, ref):
        for k, v in r.state[q].items():
            mine = o.state[p][k]
            np.testing.assert_allclose(np.asarray(mine.numpy() if hasattr(mine, "numpy") else mine, np.float64),
                                       v.detach().numpy().astype(np.float64), rtol=2e-6, atol=2e-7, err_msg=k)


@pytest.mark.parametrize("name", ["Adadelta", "NAdam", "Rprop"])
def test_state_dict_resume(name):
    ours, _ = _params()
    o = getattr(optim, name)(ours, lr=0.01)
    rng = np.random.default_rng(2)
    grads = [[fb.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in ours] for _ in range(4)]
    for g in grads[:2]:
        for p, gi in zip(ours, g):
            p.grad = gi
        o.step()
    sd = o.state_dict()
    clone = [nn.Parameter(p.detach().clone()) for p in ours]
    o2 = getattr(optim, name)(clone, lr=0.01)
    o2.load_state_dict(sd)
    for g in grads[2:]:
        for p, q, gi in zip(ours, clone, g):
            p.grad, q.grad = gi, gi.clone()
        o.step()
        o2.step()
    for p, q in zip(ours, clone):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_bad_arguments():
    ours, _ = _params()
    with pytest.raises(ValueError, match="rho"):
        optim.Adadelta(ours, rho=1.5)
    with pytest.raises(ValueError, match="beta"):
        optim.NAdam(ours, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="eta"):
        optim.Rprop(ours, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="strong_wolfe"):
        optim.LBFGS(ours, line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="closure"):
        optim.LBFGS(ours).step(None)


def _rosenbrock_problem(lib, x0):
    x = lib.nn.Parameter(lib.tensor(x0.copy()))

    def loss_fn():
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    return x, loss_fn


@pytest.mark.parametrize("line_search,maximize", [(None, False), ("strong_wolfe", False), ("strong_wolfe", True)])
def test_lbfgs_matches_torch(line_search, maximize):
    x0 = np.array([-1.5, 2.0], np.float64)
    xs, results = {}, {}
    for lib, name in ((fb, "ours"), (torch, "ref")):
        x, f = _rosenbrock_problem(lib, x0)
        opt = (optim if lib is fb else torch.optim).LBFGS([x], lr=1 if line_search else 0.05, max_iter=10,
                                                          history_size=5, line_search_fn=line_search,
                                                          maximize=maximize)

        def closure():
            opt.zero_grad()
            loss = -f() if maximize else f()
            loss.backward()
            return loss
        losses = [float(opt.step(closure).detach()) for _ in range(4)]
        xs[name], results[name] = x.detach().numpy().copy(), losses
    np.testing.assert_allclose(xs["ours"], xs["ref"], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(results["ours"], results["ref"], rtol=1e-9)


def _lr_trace(lib, make, steps=25, opt_name="SGD", **okw):
    p = (nn.Parameter(fb.zeros(2)) if lib is fb else torch.nn.Parameter(torch.zeros(2)))
    opt = getattr(optim if lib is fb else torch.optim, opt_name)([p], lr=0.1, **okw)
    sched = make(lib, opt)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        g = opt.param_groups[0]
        out.append((g["lr"], g.get("momentum", g.get("betas", (None,))[0])))
    return out


def _sched(lib):
    return (optim if lib is fb else torch.optim).lr_scheduler


SCHED_CASES = {
    "cyclic-triangular": (lambda lib, o: _sched(lib).CyclicLR(o, 0.01, 0.1, step_size_up=4), "SGD", dict(momentum=0.9)),
    "cyclic-triangular2": (lambda lib, o: _sched(lib).CyclicLR(o, [0.01], 0.1, step_size_up=3, step_size_down=5,
                                                                mode="triangular2"), "SGD", dict(momentum=0.9)),
    "cyclic-exp-adam": (lambda lib, o: _sched(lib).CyclicLR(o, 0.001, 0.01, step_size_up=3, mode="exp_range",
                                                             gamma=0.9), "Adam", {}),
    "cyclic-no-momentum": (lambda lib, o: _sched(lib).CyclicLR(o, 0.001, 0.01, step_size_up=2, cycle_momentum=False),
                           "Adadelta", {}),
    "onecycle": (lambda lib, o: _sched(lib).OneCycleLR(o, max_lr=0.5, total_steps=30), "SGD", dict(momentum=0.9)),
    "onecycle-3phase-linear": (lambda lib, o: _sched(lib).OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=10,
                                                                     anneal_strategy="linear", three_phase=True),
                               "Adam", {}),
    "swalr-cos": (lambda lib, o: (optim if lib is fb else torch.optim).swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=5),
                  "SGD", {}),
    "swalr-linear-0": (lambda lib, o: (optim if lib is fb else torch.optim).swa_utils.SWALR(
        o, swa_lr=[0.02], anneal_epochs=0, anneal_strategy="linear"), "SGD", {}),
}


@pytest.mark.parametrize("case", list(SCHED_CASES))
def test_scheduler_matches_torch(case):
    make, opt_name, okw = SCHED_CASES[case]
    ours = _lr_trace(fb, make, opt_name=opt_name, **okw)
    ref = _lr_trace(torch, make, opt_name=opt_name, **okw)
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(ref, dtype=float), rtol=1e-12)


def _avg_models(lib, avg_kw):
    rng = np.random.default_rng(5)
    L = lib.nn
    model = L.Sequential(L.Linear(3, 4), L.BatchNorm1d(4), L.ReLU(), L.Linear(4, 2))
    for p in model.parameters():
        p.data.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    swa = lib.optim.swa_utils
    kw = {k: (getattr(swa, v[0])(*v[1:]) if isinstance(v, tuple) else v) for k, v in avg_kw.items()}
    avg = swa.AveragedModel(model, **kw)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    data = [lib.tensor(rng.standard_normal((8, 3)).astype(np.float32)) for _ in range(4)]
    for x in data:
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(model)
    swa.update_bn([(x,) for x in data], avg)
    return [t.detach().numpy() for t in avg.state_dict().values()], avg(data[0]).detach().numpy()


@pytest.mark.parametrize("avg_kw", [{}, {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9)},
                                    {"avg_fn": ("get_ema_avg_fn", 0.8), "use_buffers": True},
                                    {"multi_avg_fn": ("get_swa_multi_avg_fn",)}],
                         ids=["swa", "ema-multi", "ema-buffers", "swa-multi"])
def test_averaged_model_and_update_bn_match_torch(avg_kw):
    (ours, out), (ref, ref_out) = _avg_models(fb, avg_kw), _avg_models(torch, avg_kw)
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-5)
