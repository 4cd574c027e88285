"""timm-style schedulers equal timm's values (noise excluded: different RNG, see module docs)."""
import warnings

import pytest

import flowvision.data.scheduler as fs

torch = pytest.importorskip("torch")
ts = pytest.importorskip("timm.scheduler")


class _Opt:
    def __init__(self, lrs):
        self.param_groups = [dict(lr=lr) for lr in lrs]


def _torch_opt(lrs):
    return torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs])


CASES = [
    ("CosineLRScheduler", dict(t_initial=20)),
    ("CosineLRScheduler", dict(t_initial=10, lr_min=1e-5, warmup_t=3, warmup_lr_init=1e-4, cycle_limit=3,
                               cycle_decay=0.5)),
    ("CosineLRScheduler", dict(t_initial=7, cycle_mul=2.0, cycle_limit=4, warmup_t=2, warmup_prefix=True, k_decay=1.5)),
    ("CosineLRScheduler", dict(t_initial=200, warmup_t=20, t_in_epochs=False)),
    ("PolyLRScheduler", dict(t_initial=15, power=2.0, lr_min=1e-4, warmup_t=2)),
    ("PolyLRScheduler", dict(t_initial=5, cycle_mul=1.5, cycle_limit=3, k_decay=0.7)),
    ("TanhLRScheduler", dict(t_initial=12, warmup_t=3, warmup_lr_init=1e-4)),
    ("TanhLRScheduler", dict(t_initial=6, cycle_limit=2, warmup_t=2, warmup_prefix=True, cycle_decay=0.3)),
    ("StepLRScheduler", dict(decay_t=3, decay_rate=0.5, warmup_t=2, warmup_lr_init=1e-3)),
    ("StepLRScheduler", dict(decay_t=2.4, decay_rate=0.97, warmup_prefix=False, warmup_t=3)),
    ("MultiStepLRScheduler", dict(decay_t=[4, 9, 13], decay_rate=0.1, warmup_t=2)),
]


@pytest.mark.parametrize("name,kw", CASES)
def test_schedules_match_timm(name, kw):
    lrs = [0.1, 0.02]
    a, b = _Opt(lrs), _Opt(lrs)
    ours = getattr(fs, name)(a, **kw)
    ref = getattr(ts, name)(b, **kw)
    assert [g["lr"] for g in a.param_groups] == pytest.approx([g["lr"] for g in b.param_groups], rel=1e-12)
    for t in range(40):
        ours.step(t)
        ref.step(t)
        ours.step_update(t * 10)
        ref.step_update(t * 10)
        assert [g["lr"] for g in a.param_groups] == pytest.approx([g["lr"] for g in b.param_groups], rel=1e-12), t
    if hasattr(ref, "get_cycle_length"):
        assert ours.get_cycle_length() == ref.get_cycle_length()


def test_lr_scale_and_noise_deterministic():
    a = _Opt([0.1])
    a.param_groups[0]["lr_scale"] = 0.5
    s = fs.CosineLRScheduler(a, t_initial=10, noise_range_t=(2, 8), noise_pct=0.3)
    vals = []
    for t in range(10):
        s.step(t)
        vals.append(a.param_groups[0]["lr"])
    b = _Opt([0.1])
    b.param_groups[0]["lr_scale"] = 0.5
    s2 = fs.CosineLRScheduler(b, t_initial=10, noise_range_t=(2, 8), noise_pct=0.3)
    for t in range(10):
        s2.step(t)
        assert b.param_groups[0]["lr"] == vals[t]
    base = fs.CosineLRScheduler(_Opt([0.1]), t_initial=10)._get_lr(4)[0] * 0.5
    assert abs(vals[4] / base - 1) < 0.3 and vals[4] != base


@pytest.mark.parametrize("kw", [dict(), dict(mode="min", patience_t=2, cooldown_t=1, decay_rate=0.5, warmup_t=2,
                                             warmup_lr_init=1e-3, lr_min=0.01)])
def test_plateau_matches_timm(kw):
    metrics = [1.0, 2.0, 2.0, 2.0, 1.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 0.1, 0.1, 0.1, 0.1]
    kw = dict(dict(patience_t=2), **kw)
    a, b = _Opt([0.1]), _torch_opt([0.1])
    ours = fs.PlateauLRScheduler(a, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ts.PlateauLRScheduler(b, **kw)
    for epoch, m in enumerate(metrics):
        ours.step(epoch, m)
        ref.step(epoch, m)
        assert a.param_groups[0]["lr"] == pytest.approx(b.param_groups[0]["lr"], rel=1e-12), epoch
