"""flowvision.backend.compile: the captured inference path equals eager (and timm) within rtol 1e-4.

Every model family is captured on a small input, the plan must be used (no silent eager fallback) and its
output must match eager on a fresh input. Plus: re-planning on a new shape, re-planning after a weight
update, the eager fallback (with a warning naming the first diverging op) for a model with data-dependent
control flow or a value computed outside the tracked ops, and the training-mode error. The native plan
executor (the default for float32, csrc/core/executor.cpp) must equal the Python executor bit for bit, run
Python steps for ops it has no native form for, keep returned arrays intact across calls, serve concurrent
callers and reject bad inputs with a clear error.
"""
import collections
import threading
import warnings

import numpy as np
import pytest

import flowvision
import flowvision.models as M
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.autograd import graph as _graph

RTOL = 1e-4


def _close(out, ref, what):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != {ref.shape}"
    scale = max(float(np.abs(ref).max()), 1e-6)
    err = float(np.abs(out - ref).max())
    assert err <= RTOL * scale, f"{what}: max abs diff {err:.3g} > {RTOL} x {scale:.3g}"


def _randomize(model, seed=0):
    """Non-trivial BN statistics, affine params and heads (zero-init heads/last-BNs would hide errors)."""
    rng = np.random.default_rng(seed)
    with flow.no_grad():
        for name, t in model.state_dict().items():
            if not t.is_floating_point():
                continue
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "running_var":
                t.copy_(flow.from_numpy((0.5 + rng.random(t.shape)).astype(np.float32)))
            elif leaf == "running_mean":
                t.copy_(flow.from_numpy((0.1 * rng.standard_normal(t.shape)).astype(np.float32)))
            elif leaf in ("weight", "gamma") and t.ndim == 1:
                t.copy_(flow.from_numpy((0.5 + 0.5 * rng.random(t.shape)).astype(np.float32)))
            elif leaf in ("bias", "beta") and t.ndim == 1:
                t.copy_(flow.from_numpy((0.05 * rng.standard_normal(t.shape)).astype(np.float32)))
            elif leaf == "weight" and t.ndim == 2 and not np.abs(t.numpy()).any():  # zero-init classifier
                t.copy_(flow.from_numpy((0.02 * rng.standard_normal(t.shape)).astype(np.float32)))


def _input(shape, seed=0):
    return flow.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _plan(cm, x):
    return cm.plans[(tuple(x.shape), x._dtype)]


def _step_names(plan):
    return [op.name() for op in plan.graph.ops]


# (name, input size, create_model kwargs): one small case per family
CASES = [
    ("resnet18", 64, {}),
    ("resnet50", 64, {}),
    ("resnext50_32x4d", 32, {}),  # grouped 3x3 convs
    ("regnetx_002", 64, {}),  # grouped, residual + ReLU epilogue
    ("efficientnet_b0", 64, {}),  # depthwise, SiLU, squeeze-excitation on one pixel
    ("mobilenetv3_large_100", 64, {}),  # hardswish / hardsigmoid SE
    ("convnext_atto", 64, {}),  # layer norm (NCHW), layer scale folded into the 1x1 conv
    ("convnext_atto", 32, dict(conv_mlp=False, num_classes=7)),  # channels-last LayerNorm + Linear MLP
    ("densenet121", 32, {}),  # BN -> ReLU -> conv (pre-activation: BN not foldable), concatenations
    ("vit_tiny_patch16_224", 64, dict(img_size=64)),
    ("swin_tiny_patch4_window7_224", 64, dict(img_size=64)),  # windows, shifts, relative position bias
    ("mixer_s32_224", 64, dict(img_size=64)),
]


@pytest.mark.parametrize("name,size,kwargs", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_captured_equals_eager(name, size, kwargs):
    model = M.create_model(name, pretrained=False, **kwargs).eval()
    _randomize(model)
    example = _input((2, 3, size, size), seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning is a failure here
        cm = flow.compile(model, example)
    plan = _plan(cm, example)
    assert plan is not None, cm.fallback_reason
    names = _step_names(plan)
    assert "BatchNormEval" not in names or name.startswith("densenet"), names  # BN after a conv is folded
    if kwargs.get("conv_mlp") is False:  # channels-last blocks: gamma folded into fc2, shortcut as its residual
        assert names.count("linear+residual") == 12 and "Mul" not in names and "Add" not in names, names
    if name == "resnet50":  # bottleneck = conv+relu, conv+relu, conv+residual+relu: BN folded, add and ReLU fused
        assert names.count("conv+residual+relu") == 16, names
        assert not any(n in names for n in ("BatchNormEval", "Relu", "Add")), names
    assert plan.executor == "native", plan.native_error
    if name in ("efficientnet_b0", "mobilenetv3_large_100"):  # each SE block: one gate step, in place, native
        gates = [op.attrs["params"] for op in plan.graph.ops if op.kind == "call" and op.attrs["label"] == "channel_gate"]
        kind = "sigmoid" if name == "efficientnet_b0" else "hardsigmoid"
        assert gates == [dict(gate_kind=kind, in_place=True)] * (16 if kind == "sigmoid" else 8), gates
        assert not {"Mul", "Sigmoid", "Hardsigmoid"} & set(names), names
        assert "PYTHON" not in cm.explain(example)
    x = _input((2, 3, size, size), seed=2)
    with flow.no_grad():
        ref = model(x).numpy()
    out = cm(x)
    assert not out.requires_grad
    _close(out.numpy(), ref, f"{name} captured vs eager")
    assert _graph._RECORDER is None
    # the same plan on the Python executor: the native steps call the same kernels / move data exactly
    py = flow.compile(model, example, validate=False, executor="python")
    assert _plan(py, example).executor == "python"
    np.testing.assert_array_equal(out.numpy(), py(x).numpy(), err_msg=f"{name}: native != python executor")


@pytest.mark.parametrize("name,size,kwargs", [("resnet18", 64, {}), ("vit_tiny_patch16_224", 64, dict(img_size=64))])
def test_captured_equals_timm(name, size, kwargs):
    torch = pytest.importorskip("torch")
    pytest.importorskip("timm")
    from test_models_parity import _pair
    ref, ours = _pair(name, **kwargs)
    x = np.random.default_rng(3).standard_normal((2, 3, size, size)).astype(np.float32)
    cm = flow.compile(ours, flow.from_numpy(x))
    assert _plan(cm, flow.from_numpy(x)) is not None, cm.fallback_reason
    with torch.no_grad():
        t = ref(torch.from_numpy(x)).numpy()
    _close(cm(flow.from_numpy(x)).numpy(), t, f"{name} captured vs timm")


def test_replans_on_new_shape_and_dtype_key():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    cm = flowvision.compile(model, _input((1, 3, 64, 64)))
    x = _input((3, 3, 80, 96), seed=5)
    with flow.no_grad():
        ref = model(x).numpy()
    _close(cm(x).numpy(), ref, "new shape")
    assert set(cm.plans) == {((1, 3, 64, 64), flow.float32), ((3, 3, 80, 96), flow.float32)}
    assert all(p is not None for p in cm.plans.values())


def test_replans_after_weight_update():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    x = _input((1, 3, 64, 64))
    cm = flow.compile(model, x)
    before = cm(x).numpy()
    with flow.no_grad():
        model.fc.weight.mul_(2.0)
        model.layer1[0].bn1.running_mean.add_(0.5)  # a folded BN statistic
    with flow.no_grad():
        ref = model(x).numpy()
    assert not np.allclose(ref, before)
    _close(cm(x).numpy(), ref, "after the weight update")


class _Branchy(nn.Module):
    """Data-dependent control flow: the branch taken depends on the input's values."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if float(x.min()) >= 0:
            return nn.functional.relu(y)
        return y * 2.0


class _Escapes(nn.Module):
    """A value computed outside the tracked ops (through numpy): the capture sees it as a constant."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        z = flow.from_numpy(np.tanh(y.detach().numpy()))
        return y + z


def test_data_dependent_branch_falls_back_with_warning():
    model = _Branchy().eval()
    example = flow.from_numpy(np.abs(np.random.default_rng(0).standard_normal((1, 3, 8, 8))).astype(np.float32))
    with pytest.warns(RuntimeWarning, match=r"falling back to eager.*op #\d+ Relu.*Mul.*data-dependent"):
        cm = flow.compile(model, example)
    assert _plan(cm, example) is None
    neg = _input((1, 3, 8, 8), seed=4)
    with flow.no_grad():
        for x in (example, neg):
            np.testing.assert_array_equal(cm(x).numpy(), model(x).numpy())



class _DictOut(nn.Module):
    def __init__(self, mapping=dict, extra=None):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.mapping, self.extra = mapping, extra

    def forward(self, x):
        y = self.conv(x)
        out = self.mapping([("feat", y.relu()), ("pool", y.mean((2, 3)))])
        if self.extra is not None:
            out["extra"] = self.extra
        return out


@pytest.mark.parametrize("mapping", [dict, collections.OrderedDict])
def test_dict_outputs_are_captured_with_their_keys(mapping):
    model = _DictOut(mapping).eval()
    x = _input((2, 3, 8, 8))
    cm = flow.compile(model, x)
    assert cm.fallback_reason is None and _plan(cm, x) is not None
    got = cm(x)
    with flow.no_grad():
        want = model(x)
    assert type(got) is mapping and list(got) == ["feat", "pool"]
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-5, atol=1e-6)


def test_dict_output_with_a_non_tensor_value_falls_back_with_warning():
    model = _DictOut(dict, extra=3).eval()
    x = _input((1, 3, 8, 8))
    with pytest.warns(RuntimeWarning, match=r"falling back to eager.*returned dict.*dict of Tensors"):
        cm = flow.compile(model, x)
    assert _plan(cm, x) is None
    assert cm(x)["extra"] == 3

def test_untracked_value_falls_back_with_warning():
    model = _Escapes().eval()
    x = _input((1, 3, 8, 8))
    with pytest.warns(RuntimeWarning, match=r"falling back to eager.*op #\d+ Add"):
        cm = flow.compile(model, x)
    with flow.no_grad():
        np.testing.assert_array_equal(cm(x).numpy(), model(x).numpy())


def test_training_mode_and_bad_input_errors():
    model = M.create_model("resnet18", pretrained=False)
    with pytest.raises(RuntimeError, match="eval"):
        flow.compile(model, _input((1, 3, 32, 32)))
    model.eval()
    with pytest.raises(TypeError, match="Tensor"):
        flow.compile(model, np.zeros((1, 3, 32, 32), np.float32))
    cm = flow.compile(model, _input((1, 3, 32, 32)))
    model.layer1.train()  # switched back to training after compiling: calls run the model eagerly, unplanned
    x = _input((2, 3, 40, 40))
    np.testing.assert_array_equal(cm(x).detach().numpy(), model(x).detach().numpy())
    assert list(cm.plans) == [((1, 3, 32, 32), flow.float32)]


def test_repeated_calls_reuse_the_arena_safely():
    """Conv outputs live in preallocated buffers reused across calls: results handed out must not change."""
    model = M.create_model("mobilenetv3_large_100", pretrained=False).eval()
    _randomize(model)
    x1, x2 = _input((1, 3, 64, 64), seed=1), _input((1, 3, 64, 64), seed=2)
    cm = flow.compile(model, x1, executor="python")
    plan = _plan(cm, x1)
    n_conv = sum(1 for s in plan.steps if s[4].kind == "conv")
    memory = {id(a if a.base is None else a.base) for a in _arena_buffers(plan)}
    assert len(memory) < n_conv  # buffers are shared between convolutions
    _check_outputs_survive(cm, model, x1, x2)
    native = flow.compile(model, x1)
    plan = _plan(native, x1)
    bufs = {b for _, native_step, b in plan.native.steps() if b >= 0}
    assert 0 < len(bufs) < n_conv  # native compute steps share buffers too
    _check_outputs_survive(native, model, x1, x2)


def _check_outputs_survive(cm, model, x1, x2):
    y1 = cm(x1).numpy().copy()
    first = cm(x1)
    y2 = cm(x2).numpy()
    np.testing.assert_array_equal(first.numpy(), y1)
    with flow.no_grad():
        _close(y2, model(x2).numpy(), "second input")
    np.testing.assert_array_equal(cm(x1).numpy(), y1)


def _arena_buffers(plan):
    bufs = []
    for fn, *_ in plan.steps:
        for cell in fn.__closure__ or ():
            v = cell.cell_contents
            if isinstance(v, np.ndarray) and v.ndim == 4:
                bufs.append(v)
    return bufs


def test_float64_model_keeps_nchw_kernels():
    """float64 convs have no NHWC kernel: NCHW conv2d_forward / packed 1x1 GEMM with in-place residual + ReLU."""
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    _randomize(model)
    model = model.double()
    x = flow.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 32, 32)))
    cm = flow.compile(model, x)
    plan = _plan(cm, x)
    assert plan is not None, cm.fallback_reason
    names = _step_names(plan)
    assert names.count("conv+residual+relu") == 8 and "to_nhwc" not in names, names
    with flow.no_grad():
        ref = model(x).numpy()
    out = cm(x).numpy()
    assert out.dtype == np.float64
    _close(out, ref, "float64 resnet18")


class _NoNativeStep(nn.Module):
    """ELU and exp have no native step: the native plan calls their Python closures in between."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = nn.functional.elu(self.conv(x), 0.5)
        y = y.mean((2, 3))
        return self.fc(y).exp(), y * 2.0


def test_native_plan_runs_python_steps_for_unknown_ops():
    model = _NoNativeStep().eval()
    x, x2 = _input((2, 3, 12, 12)), _input((2, 3, 12, 12), seed=7)
    cm = flow.compile(model, x)
    plan = _plan(cm, x)
    assert plan.executor == "native", plan.native_error
    text = cm.explain(x)
    assert "PYTHON Elu" in text and "PYTHON Exp" in text and "native conv" in text, text
    out = cm(x2)
    assert isinstance(out, tuple) and len(out) == 2
    py = flow.compile(model, x, executor="python")
    with flow.no_grad():
        ref = model(x2)
    for o, p, r in zip(out, py(x2), ref):
        np.testing.assert_array_equal(o.numpy(), p.numpy())
        _close(o.numpy(), r.numpy(), "model with Python steps")


def test_native_plan_concurrent_callers():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    xs = [_input((1, 3, 32, 32), seed=s) for s in range(2)]
    cm = flow.compile(model, xs[0])
    want = [cm(x).numpy().copy() for x in xs]
    errors = []

    def worker(k):
        try:
            for _ in range(8):
                np.testing.assert_array_equal(cm(xs[k]).numpy(), want[k])
        except Exception as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_native_plan_bad_inputs_and_options():
    model = M.create_model("resnet18", pretrained=False, num_classes=10).eval()
    x = _input((1, 3, 32, 32))
    cm = flow.compile(model, x)
    native = _plan(cm, x).native
    with pytest.raises(ValueError, match=r"expected an input of shape \(1, 3, 32, 32\), got \(1, 3, 32, 31\)"):
        native.run(np.zeros((1, 3, 32, 31), np.float32))
    with pytest.raises(ValueError, match="expected a float32 input, got float64"):
        native.run(np.zeros((1, 3, 32, 32)))
    with pytest.raises(ValueError, match="numpy array"):
        native.run([1.0, 2.0])
    xa = x.numpy()
    outs, secs = native.run(xa, profile=True)  # per-step wall times, same result
    assert len(secs) == len(native.steps()) and min(secs) >= 0
    np.testing.assert_array_equal(outs[0], native.run(xa)[0])
    assert native.run(xa, dry_run=True)[0].shape == outs[0].shape  # kernels skipped: only the shape is meaningful
    with pytest.raises(ValueError, match="executor must be one of"):
        flow.compile(model, x, executor="jit")
    # a new shape re-plans (native again); float64 runs on the Python executor
    x2 = _input((2, 3, 40, 40), seed=3)
    with flow.no_grad():
        _close(cm(x2).numpy(), model(x2).numpy(), "re-planned shape")
    assert _plan(cm, x2).executor == "native"
    xd = flow.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 32, 32)))
    md = M.create_model("resnet18", pretrained=False, num_classes=10).eval().double()
    pd = _plan(flow.compile(md, xd), xd)
    assert pd.executor == "python" and "float32" in pd.native_error


class _ConvSigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x).sigmoid()


def test_native_plan_that_differs_from_eager_falls_back_to_python_executor(monkeypatch):
    from flowvision.backend import _capture_native
    monkeypatch.setitem(_capture_native._POINTWISE, "sigmoid", _capture_native._POINTWISE["relu"])  # a broken step
    model = _ConvSigmoid().eval()
    x = _input((1, 3, 8, 8))
    with pytest.warns(RuntimeWarning, match="native plan executor differs from eager; using the Python executor"):
        cm = flow.compile(model, x)
    plan = _plan(cm, x)
    assert plan.executor == "python" and "native plan differed" in plan.native_error
    with flow.no_grad():
        _close(cm(x).numpy(), model(x).numpy(), "Python executor after the native one failed validation")


class _Glue(nn.Module):
    """The glue steps of transformer plans on odd layouts: rolls over 2 dims, strided slices, a reshape that must
    copy, broadcast mul / add with constants and activations, softmax, LayerNorm, a matmul with a transposed
    operand, cat along an inner dim with a constant piece, means over leading / middle axes."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.LayerNorm(8)
        self.scale = nn.Parameter(flow.from_numpy(np.linspace(0.5, 1.5, 8).astype(np.float32)))
        self.token = nn.Parameter(flow.from_numpy(np.full((1, 1, 8), 0.25, np.float32)))

    def forward(self, x):
        n = x.shape[0]
        z = self.conv(x).permute(0, 2, 3, 1)          # NHWC as the permuted tensor (no copy)
        z = z.roll((2, -3), (1, 2))[:, 1:, ::2]       # roll two dims, then a strided slice
        z = z.reshape(n, -1, 8)                      # not viewable: a copy
        z = self.norm(z * self.scale + z.sigmoid())  # constant and activation broadcasts, unary, LayerNorm
        a = (z.transpose(1, 2) @ z).softmax(-1)      # matmul on a transposed view, softmax
        t = flow.cat([self.token.expand(n, 1, 8), z], dim=1)
        # cat with a constant piece; a row broadcast; means off the last axis (numpy's summation order)
        return t, a + a[:, :1], z.mean(1), (z * 3.0).mean((0, 1), keepdim=True)


@pytest.mark.parametrize("isa", flowvision.backend._C.supported_isas())
def test_native_glue_steps_match_python_executor_on_every_isa(isa):
    _C = flowvision.backend._C
    native_isa = _C.cpu_isa()
    _C._set_isa_for_testing(isa)
    try:
        model = _Glue().eval()
        x, x2 = _input((2, 3, 10, 13)), _input((2, 3, 10, 13), seed=9)
        cm = flow.compile(model, x)
        plan = _plan(cm, x)
        assert plan.executor == "native", plan.native_error
        assert "PYTHON" not in cm.explain(x), cm.explain(x)
        py = flow.compile(model, x, executor="python")
        with flow.no_grad():
            ref = model(x2)
        for o, p, r in zip(cm(x2), py(x2), ref):
            np.testing.assert_array_equal(o.numpy(), p.numpy())
            _close(o.numpy(), r.numpy(), f"glue model on {isa}")
    finally:
        _C._set_isa_for_testing(native_isa)


class _Sdpa(nn.Module):
    def forward(self, x):  # x (B, L, 3 * C) -> q, k, v of (B, L, C) (3-dim) or (B, 2, L, C / 2) (4-dim)
        q, k, v = x.chunk(3, dim=-1)
        heads = [t.reshape(t.shape[0], t.shape[1], 2, -1).transpose(1, 2) for t in (q, k, v)]
        return nn.functional.scaled_dot_product_attention(q, k, v), nn.functional.scaled_dot_product_attention(*heads)


def test_native_attention_step_matches_the_python_step_layout():
    """The native sdpa step allocates its output like _ops/attention.py does (same strides, same values)."""
    model = _Sdpa().eval()
    x = _input((2, 5, 24))
    cm, py = flow.compile(model, x), flow.compile(model, x, executor="python")
    assert "native ScaledDotProductAttention" in cm.explain(x)
    for o, p in zip(cm(x), py(x)):
        np.testing.assert_array_equal(o.numpy(), p.numpy())
        assert o.numpy().strides == p.numpy().strides


class _Gates(nn.Module):
    """Squeeze-excitation gates in every form the channel_gate pass handles: sigmoid (in place into the conv
    output, which only the SE pool read before), hard sigmoid with the gate as the first operand and x read
    again afterwards (not in place), a plain gate (kind "none": the gate has other readers), a sigmoid read twice
    (not fused into the gate: "none" on its output)."""

    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 8, 3, padding=1)
        self.fc1, self.fc2 = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1)
        self.conv1 = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        F = nn.functional
        a = self.conv0(x)
        g = self.fc2(F.relu(self.fc1(a.mean((2, 3), keepdim=True))))
        b = a * F.sigmoid(g)
        c = self.conv1(b)
        e = F.hardsigmoid(g) * c + c
        s = F.sigmoid(g)
        return (e * g) * s + s


def test_channel_gate_steps_equal_eager_and_python_executor():
    model = _Gates().eval()
    _randomize(model)
    x, x2 = _input((2, 3, 6, 7)), _input((2, 3, 6, 7), seed=4)
    cm, py = flow.compile(model, x), flow.compile(model, x, executor="python")
    plan = _plan(cm, x)
    assert plan.executor == "native" and "PYTHON" not in cm.explain(x), cm.explain(x)
    gates = [(op.attrs["params"]["gate_kind"], op.attrs["params"]["in_place"])
             for op in plan.graph.ops if op.kind == "call" and op.attrs["label"] == "channel_gate"]
    assert gates == [("sigmoid", True), ("hardsigmoid", False), ("none", False), ("none", False)], gates
    assert "Mul" not in _step_names(plan) and "Hardsigmoid" not in _step_names(plan), _step_names(plan)
    with flow.no_grad():
        ref = model(x2).numpy()
    for _ in range(2):  # in place into an arena buffer: the second call must not see the first one's writes
        out = cm(x2).numpy()
        _close(out, ref, "channel gates captured vs eager")
        np.testing.assert_array_equal(out, py(x2).numpy())


class _GateOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 1)

    def forward(self, x):  # the gated map is what the plan returns (as the NHWC array, permuted for free)
        a = self.conv(x)
        return (a * nn.functional.hardsigmoid(self.fc(a.mean((2, 3), keepdim=True)))).permute(0, 2, 3, 1)


def test_channel_gate_in_place_output_survives_the_next_call():
    model = _GateOut().eval()
    _randomize(model)
    x, x2 = _input((2, 3, 5, 6)), _input((2, 3, 5, 6), seed=3)
    cm, py = flow.compile(model, x), flow.compile(model, x, executor="python")
    assert [op.attrs["params"] for op in _plan(cm, x).graph.ops if op.kind == "call"
            and op.attrs["label"] == "channel_gate"] == [dict(gate_kind="hardsigmoid", in_place=True)]
    with flow.no_grad():
        ref = model(x2).numpy()
    first = cm(x2).numpy()
    kept = first.copy()
    second = cm(x).numpy()  # a returned value never lives in the arena: the first result must be intact
    np.testing.assert_array_equal(first, kept)
    assert not np.shares_memory(first, second)
    _close(first, ref, "gated output captured vs eager")
    np.testing.assert_array_equal(first, py(x2).numpy())
