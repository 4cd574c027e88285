"""Captured plans run a 1x1 expansion and the depthwise conv reading it as one ``conv_pw_dw`` step
(cpu/conv_pw_dw.cpp): outputs bit-identical to the two steps run separately (``separate_pw_dw()``), and equal to
eager, for strides, dilations, paddings, odd sizes, channel counts off the vector width, batches and thread counts;
and no fusion where the expanded tensor is needed elsewhere. The step walks each image in bands when there are at
least two images per thread and runs the two convs one after the other otherwise: the cases cover both."""
import contextlib

import numpy as np
import pytest

import flowvision.backend as flow
from flowvision.backend import _C
from flowvision.backend._ops import kernel_select

nn = flow.nn

pytestmark = pytest.mark.skipif(not hasattr(_C, "ExecPlan"), reason="this build has no native plan executor")

_ACTS = {"relu": nn.ReLU, "hardswish": nn.Hardswish, "silu": nn.SiLU, "gelu": nn.GELU, "relu6": nn.ReLU6,
         "none": nn.Identity}


class _Block(nn.Module):
    """expand 1x1 + BN + act -> depthwise KxK + BN + act -> optional projection, residual when shapes allow."""

    def __init__(self, cin, e, k, stride=1, dilation=1, act="relu", dw_act=None, project=True, bias=False):
        super().__init__()
        pad = dilation * (k - 1) // 2
        self.pw = nn.Sequential(nn.Conv2d(cin, e, 1, bias=bias), nn.BatchNorm2d(e), _ACTS[act]())
        self.dw = nn.Sequential(nn.Conv2d(e, e, k, stride, pad, dilation, groups=e, bias=bias), nn.BatchNorm2d(e),
                                _ACTS[dw_act or act]())
        self.project = nn.Sequential(nn.Conv2d(e, cin, 1, bias=False), nn.BatchNorm2d(cin)) if project else None
        self.skip = project and stride == 1

    def forward(self, x):
        y = self.dw(self.pw(x))
        if self.project is None:
            return y
        y = self.project(y)
        return x + y if self.skip else y


def _randomise_bn(model, seed):
    rng = np.random.default_rng(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(flow.from_numpy(rng.standard_normal(n).astype(np.float32) * 0.2))
            m.running_var.copy_(flow.from_numpy(rng.uniform(0.5, 2.0, n).astype(np.float32)))
            m.weight.data.copy_(flow.from_numpy(rng.uniform(0.5, 1.5, n).astype(np.float32)))
            m.bias.data.copy_(flow.from_numpy(rng.standard_normal(n).astype(np.float32) * 0.1))
    return model.eval()


def _plan_of(model, x):
    cm = flow.compile(model, x)
    plan = cm.plans[(tuple(x.shape), x._dtype)]
    assert plan.executor == "native", plan.native_error
    return cm, plan


def _fused_steps(plan):
    return sum(1 for (label, _, _), _ in plan.native_steps if label.count("conv") >= 2 and "+conv" in label)


@contextlib.contextmanager
def _threads(n):
    before = flow.get_num_threads()
    flow.set_num_threads(n)
    try:
        yield
    finally:
        flow.set_num_threads(before)


@pytest.mark.parametrize("cin,e,k,stride,dilation,hw,batch,act", [
    (16, 96, 3, 1, 1, (24, 24), 1, "silu"),
    (24, 144, 3, 2, 1, (23, 17), 2, "relu"),  # odd sizes, stride 2
    (40, 240, 5, 1, 1, (14, 14), 4, "hardswish"),
    (40, 240, 5, 2, 1, (15, 9), 5, "gelu"),
    (12, 20, 3, 1, 2, (13, 11), 4, "relu6"),  # dilated; channels off the vector width
    (8, 36, 5, 2, 1, (5, 5), 3, "none"),  # a map smaller than the kernel span at the edges
    (3, 8, 3, 1, 1, (1, 6), 4, "silu"),  # one row
])
@pytest.mark.parametrize("threads", [1, 2])
def test_fused_step_is_bit_identical_to_two_steps(cin, e, k, stride, dilation, hw, batch, act, threads):
    flow.manual_seed(cin + e + k)
    model = _randomise_bn(_Block(cin, e, k, stride, dilation, act), seed=e)
    x = flow.from_numpy(np.random.default_rng(k).standard_normal((batch, cin) + hw).astype(np.float32))
    with _threads(threads):
        cm, plan = _plan_of(model, x)
        with kernel_select.separate_pw_dw():
            cm_sep, plan_sep = _plan_of(model, x)
        assert _fused_steps(plan) == 1 and _fused_steps(plan_sep) == 0
        assert len(plan.native_steps) == len(plan_sep.native_steps) - 1
        got, sep = cm(x).numpy(), cm_sep(x).numpy()
    np.testing.assert_array_equal(got, sep)
    with flow.no_grad():
        ref = model(x).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_rows_wider_than_the_band_buffer():
    """Rows wider than the band buffer's budget (the band grows to its minimum of four output rows a step; the kept
    rows move every step), with biases."""
    flow.manual_seed(1)
    model = _randomise_bn(_Block(8, 512, 3, 1, 1, "silu", project=False, bias=True), seed=2)
    x = flow.from_numpy(np.random.default_rng(3).standard_normal((4, 8, 9, 130)).astype(np.float32))
    with _threads(2):
        cm, plan = _plan_of(model, x)
        with kernel_select.separate_pw_dw():
            cm_sep, _ = _plan_of(model, x)
        assert _fused_steps(plan) == 1
        np.testing.assert_array_equal(cm(x).numpy(), cm_sep(x).numpy())


class _Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.pw = nn.Conv2d(8, 16, 1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)

    def forward(self, x):
        e = self.pw(x)
        return self.dw(e) + e  # the expansion is needed after the depthwise conv


@pytest.mark.parametrize("case", ["read_elsewhere", "strided_expansion", "grouped_conv"])
def test_not_fused(case):
    flow.manual_seed(5)
    model = {"read_elsewhere": _Branch,
             "strided_expansion": lambda: nn.Sequential(nn.Conv2d(8, 16, 1, stride=2),
                                                        nn.Conv2d(16, 16, 3, padding=1, groups=16)),
             "grouped_conv": lambda: nn.Sequential(nn.Conv2d(8, 16, 1),
                                                   nn.Conv2d(16, 16, 3, padding=1, groups=4))}[case]().eval()
    x = flow.from_numpy(np.random.default_rng(5).standard_normal((1, 8, 12, 12)).astype(np.float32))
    cm, plan = _plan_of(model, x)
    assert _fused_steps(plan) == 0
    with flow.no_grad():
        np.testing.assert_allclose(cm(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)


def test_zoo_mobile_net_fuses_every_expansion():
    import flowvision
    flow.manual_seed(0)
    model = flowvision.models.create_model("mobilenetv3_small_050").eval()
    x = flow.from_numpy(np.random.default_rng(6).standard_normal((2, 3, 64, 64)).astype(np.float32))
    cm, plan = _plan_of(model, x)
    with kernel_select.separate_pw_dw():
        cm_sep, _ = _plan_of(model, x)
    assert _fused_steps(plan) >= 8
    for threads in (1, 2):  # bands (two images, one thread) and the two convs in turn
        with _threads(threads):
            np.testing.assert_array_equal(cm(x).numpy(), cm_sep(x).numpy())


def test_exec_plan_rejects_a_bad_conv_pw_dw_spec():
    rng = np.random.default_rng(7)
    pw = _C.pack_conv(rng.standard_normal((16, 8, 1, 1)).astype(np.float32), 1)
    dw = _C.pack_conv(rng.standard_normal((16, 1, 3, 3)).astype(np.float32), 16)
    not_1x1 = _C.pack_conv(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), 1)
    other_dw = _C.pack_conv(rng.standard_normal((8, 1, 3, 3)).astype(np.float32), 8)
    base = dict(label="s", ins=[0], outs=[1], drop=[], buf=-1, in_shape=[1, 6, 6, 8], stride=[1, 1],
                padding=[1, 1], dilation=[1, 1], ep="none", lo=0.0, hi=0.0, pw_ep="none", pw_lo=0.0, pw_hi=0.0,
                bias=None, pw_bias=None)
    for bad, msg in ((dict(pw_packed=not_1x1, packed=dw), "1x1"), (dict(pw_packed=pw, packed=other_dw), "depthwise"),
                     (dict(pw_packed=pw, packed=dw, in_shape=[1, 6, 6, 4]), "input channels"),
                     (dict(pw_packed=pw, packed=dw, bias=np.zeros(3, np.float32)), "bias size")):
        plan = _C.ExecPlan(2, [1, 6, 6, 8], [1], [])
        with pytest.raises(ValueError, match=msg):
            plan.add_step("conv_pw_dw", {**base, **bad})


@pytest.mark.parametrize("batch,threads", [(1, 2), (3, 1)])  # the two convs in turn / bands
@pytest.mark.parametrize("k,stride,act", [(3, 1, "silu"), (5, 2, "hardswish"), (3, 2, "relu")])
def test_step_equals_the_two_kernels_on_every_isa(isa, batch, threads, k, stride, act):
    """The conv_pw_dw step against conv2d_nhwc run twice, bit for bit, on each kernel ISA this CPU has."""
    rng = np.random.default_rng(k + stride)
    n_in, e, hw, pad = 12, 40, (19, 13), (k - 1) // 2
    x = rng.standard_normal((batch,) + hw + (n_in,)).astype(np.float32)
    pw = _C.pack_conv(rng.standard_normal((e, n_in, 1, 1)).astype(np.float32) * 0.3, 1)
    dw = _C.pack_conv(rng.standard_normal((e, 1, k, k)).astype(np.float32) * 0.3, e)
    b1, b2 = (rng.standard_normal(e).astype(np.float32) for _ in range(2))
    with _threads(threads):
        mid = np.asarray(_C.conv2d_nhwc(x, pw, b1, [1, 1], [0, 0], [1, 1], act, None, 0.0, 0.0, None))
        ref = np.asarray(_C.conv2d_nhwc(mid, dw, b2, [stride] * 2, [pad] * 2, [1, 1], act, None, 0.0, 0.0, None))
        plan = _C.ExecPlan(2, list(x.shape), [1], [])
        plan.add_step("conv_pw_dw", dict(label="s", ins=[0], outs=[1], drop=[], buf=-1, in_shape=list(x.shape),
                                         stride=[stride] * 2, padding=[pad] * 2, dilation=[1, 1], ep=act, lo=0.0,
                                         hi=0.0, pw_ep=act, pw_lo=0.0, pw_hi=0.0, bias=b2, pw_bias=b1,
                                         pw_packed=pw, packed=dw))
        got = np.asarray(plan.run(x)[0])
    np.testing.assert_array_equal(got, ref, err_msg=f"{isa}")
