"""``flowvision.compile``'s result as an ``nn.Module`` (torch's ``OptimizedModule`` layout) and torch.compile's calling
convention: lazy capture, assignment as a child, ``_orig_mod.`` state-dict keys, attribute pass-through, eager
calls in training mode / with input gradients / while an outer capture records, the plan bound, ``fullgraph``,
copies and dtype changes, and packed weights shared between the plans of different input shapes."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import flowvision
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend._capture import CaptureError, CompiledModule
from test_compile import _Branchy  # data-dependent control flow


class _Net(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.head = nn.Linear(16, classes)
        self.num_classes = classes

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class _Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = _Net()
        self.scale = nn.Parameter(flow.ones(1) * 2.0)

    def forward(self, x):
        return self.backbone(x) * self.scale


def _net(seed=0):
    flow.manual_seed(seed)
    m = _Net()
    rng = np.random.default_rng(seed)
    with flow.no_grad():
        for bn in (m.features[1], m.features[4]):
            bn.running_mean.copy_(flow.from_numpy((0.1 * rng.standard_normal(bn.num_features)).astype(np.float32)))
            bn.running_var.copy_(flow.from_numpy((0.5 + rng.random(bn.num_features)).astype(np.float32)))
    return m.eval()


def _x(shape, seed=1, requires_grad=False):
    x = flow.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    return x.requires_grad_() if requires_grad else x


def _eager(model, x):
    with flow.no_grad():
        return model(x).numpy()


def test_lazy_compile_plans_on_first_call_and_is_a_module():
    model = _net()
    cm = flowvision.compile(model)
    assert isinstance(cm, nn.Module) and isinstance(cm, CompiledModule) and not cm.plans
    x = _x((2, 3, 16, 16))
    np.testing.assert_allclose(cm(x).numpy(), _eager(model, x), rtol=1e-5, atol=1e-6)
    assert cm.plans[((2, 3, 16, 16), flow.float32)] is not None, cm.fallback_reason
    assert cm.model is model and cm._orig_mod is model
    assert cm.num_classes == 5 and cm.head is model.head  # attributes pass through to the model
    assert list(cm.children()) == [model]
    assert "_orig_mod" in repr(cm)


def test_state_dict_keys_and_load_state_dict_replan():
    model = _net()
    cm = flowvision.compile(model, _x((1, 3, 16, 16)))
    sd = cm.state_dict()
    assert list(sd) == ["_orig_mod." + k for k in model.state_dict()]
    other = _net(seed=7)
    other_sd = {"_orig_mod." + k: v for k, v in other.state_dict().items()}
    x = _x((1, 3, 16, 16))
    before = cm(x).numpy()
    cm.load_state_dict(other_sd)  # the versions change: the next call plans again with the new weights
    after = cm(x).numpy()
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, _eager(other, x), rtol=1e-5, atol=1e-6)


def test_assigned_as_a_child_module():
    parent = _Parent().eval()
    x = _x((2, 3, 12, 12))
    want = _eager(parent, x)
    parent.backbone = flowvision.compile(parent.backbone)
    assert isinstance(parent.backbone, CompiledModule)
    assert "backbone._orig_mod.head.weight" in parent.state_dict()
    assert len(list(parent.parameters())) == len(list(_Parent().parameters()))
    np.testing.assert_allclose(_eager(parent, x), want, rtol=1e-5, atol=1e-6)
    assert parent.backbone.plans[((2, 3, 12, 12), flow.float32)] is not None


def test_training_mode_runs_the_model_eagerly_with_gradients():
    parent = _Parent().eval()
    parent.backbone = flowvision.compile(parent.backbone, _x((2, 3, 12, 12)))
    parent.train()  # reaches the wrapped model: BN uses batch statistics, gradients flow
    assert parent.backbone.training and parent.backbone.model.training
    x = _x((2, 3, 12, 12))
    out = parent(x)
    ref = _Parent()
    ref.load_state_dict({k.replace("backbone._orig_mod.", "backbone."): v for k, v in parent.state_dict().items()})
    ref.train()
    np.testing.assert_allclose(out.detach().numpy(), ref(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    grad = parent.backbone.model.features[0].weight.grad
    assert grad is not None and float(grad.abs().sum()) > 0
    assert len(parent.backbone.plans) == 1  # no plan was made in training mode


def test_input_requiring_grad_runs_eagerly():
    model = _net()
    cm = flowvision.compile(model, _x((1, 3, 16, 16)))
    x = _x((1, 3, 16, 16), requires_grad=True)
    cm(x).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape and float(x.grad.abs().sum()) > 0
    with flow.no_grad():  # without grad mode the same input takes the plan
        np.testing.assert_allclose(cm(x).numpy(), _eager(model, x), rtol=1e-5, atol=1e-6)


def test_other_call_signatures_run_eagerly_with_one_warning():
    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)

        def forward(self, a, b=None):
            return self.lin(a) if b is None else self.lin(a) + b

    model = TwoInputs().eval()
    cm = flowvision.compile(model)
    a, b = _x((2, 4)), _x((2, 3), seed=2)
    with pytest.warns(RuntimeWarning, match="one Tensor argument"):
        got = cm(a, b=b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm(a, b)  # warned once
    np.testing.assert_allclose(got.detach().numpy(), (model.lin(a) + b).detach().numpy(), rtol=1e-6)


def test_compiled_child_inside_an_outer_capture():
    parent = _Parent().eval()
    x = _x((1, 3, 12, 12))
    want = _eager(parent, x)
    parent.backbone = flowvision.compile(parent.backbone, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the outer capture sees the child's ops: no fallback
        outer = flowvision.compile(parent, x)
    assert outer.plans[((1, 3, 12, 12), flow.float32)] is not None, outer.fallback_reason
    np.testing.assert_allclose(outer(x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_max_plans_bounds_the_plans_and_runs_other_shapes_eagerly():
    model = _net()
    cm = flowvision.compile(model, max_plans=2)
    shapes = [(1, 3, 16, 16), (1, 3, 20, 20), (1, 3, 24, 24), (2, 3, 8, 8)]
    cm(_x(shapes[0]))
    cm(_x(shapes[1]))
    with pytest.warns(RuntimeWarning, match=r"2 input shapes already have plans \(max_plans=2\)"):
        got = cm(_x(shapes[2]))
    np.testing.assert_allclose(got.numpy(), _eager(model, _x(shapes[2])), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cm(_x(shapes[3]))  # warned once
    np.testing.assert_allclose(got.numpy(), _eager(model, _x(shapes[3])), rtol=1e-5, atol=1e-6)
    assert set(cm.plans) == {(s, flow.float32) for s in shapes[:2]}
    with pytest.raises(ValueError, match="max_plans"):
        flowvision.compile(model, max_plans=0)


def test_plans_of_other_shapes_share_the_packed_weights():
    model = _net()
    cm = flowvision.compile(model, _x((1, 3, 16, 16)))
    packs = dict(cm._packs)
    assert len(packs) >= 2  # the two BN-folded convs at least
    cm(_x((3, 3, 20, 28)))
    assert cm._packs.keys() == packs.keys() and all(cm._packs[k] is packs[k] for k in packs)
    with flow.no_grad():
        model.features[0].weight.mul_(0.5)  # changed weights: the plans and their packs start over
    x = _x((1, 3, 16, 16))
    np.testing.assert_allclose(cm(x).numpy(), _eager(model, x), rtol=1e-5, atol=1e-6)
    assert len(cm.plans) == 1 and cm._packs.keys() != packs.keys()


def test_fullgraph_raises_instead_of_falling_back():
    x = flow.from_numpy(np.abs(np.random.default_rng(0).standard_normal((1, 3, 8, 8))).astype(np.float32))
    with pytest.raises(CaptureError, match=r"fullgraph=True.*data-dependent"):
        flowvision.compile(_Branchy().eval(), x, fullgraph=True)
    with pytest.warns(RuntimeWarning, match="falling back to eager"):
        flowvision.compile(_Branchy().eval(), x)


def test_torch_compile_options():
    model = _net()
    assert flowvision.compile(model, disable=True) is model
    assert flowvision.compile(model, backend="eager") is model
    for mode in ("default", "reduce-overhead", "max-autotune"):
        assert isinstance(flowvision.compile(model, mode=mode, dynamic=False, backend="inductor"), CompiledModule)
    with pytest.raises(ValueError, match="mode must be one of"):
        flowvision.compile(model, mode="fastest")
    with pytest.raises(ValueError, match="backend must be"):
        flowvision.compile(model, backend="cudagraphs")
    with pytest.raises(ValueError, match="options are not supported"):
        flowvision.compile(model, options={"trace.enabled": True})
    with pytest.raises(TypeError, match="nn.Module"):
        flowvision.compile(lambda t: t)
    training = _Net()
    with pytest.raises(RuntimeError, match="eval"):
        flowvision.compile(training, _x((1, 3, 8, 8)))
    assert isinstance(flowvision.compile(training), CompiledModule)  # lazy: training calls simply run eagerly


def test_copies_and_dtype_changes_plan_again():
    model = _net()
    x = _x((1, 3, 16, 16))
    cm = flowvision.compile(model, x)
    for dup in (copy.deepcopy(cm), pickle.loads(pickle.dumps(cm))):
        assert isinstance(dup, CompiledModule) and not dup.plans and dup.model is not model
        np.testing.assert_allclose(dup(x).numpy(), _eager(model, x), rtol=1e-5, atol=1e-6)
    cm.double()  # new weight arrays: the float32 plan must not survive
    assert not cm.plans
    xd = flow.from_numpy(np.random.default_rng(3).standard_normal((1, 3, 16, 16)))
    got = cm(xd)
    assert got.dtype == flow.float64
    np.testing.assert_allclose(got.numpy(), _eager(model, xd), rtol=1e-10)


def test_a_plan_failing_only_on_rounding_is_reported_as_such(monkeypatch):
    """Every op replays eager exactly, so the diagnosis must not blame one: not even a BN whose output a later
    ReLU(inplace=True) overwrites (the replay keeps copies)."""
    model = _net()
    model.features[2].inplace = model.features[5].inplace = True
    monkeypatch.setattr(CompiledModule, "_matches", lambda self, plan, x, ref: False)  # as if rtol were too tight
    with pytest.warns(RuntimeWarning, match=r"every op matches eager on its own, but the float32 rounding .* "
                                            r"fails the rtol=1e-06 check; pass a larger rtol"):
        cm = flowvision.compile(model, _x((1, 3, 16, 16)), rtol=1e-6)
    assert cm.plans[((1, 3, 16, 16), flow.float32)] is None
