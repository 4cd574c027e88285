"""flowvision.compile captures every family added to match the original zoo: a plan is built (no eager
fallback), runs on the native executor and equals eager within rtol 1e-4 on a fresh input.

Steps the capture path still runs as Python callbacks are listed per family in ``PYTHON_STEPS`` (ops without a
native step yet: average pooling without padding counts, GroupNorm, nearest interpolation, BatchNorm not after
a conv, ...): the test fails when a family gains one, so a new slow path cannot go unnoticed.
"""
import warnings
from collections import Counter

import pytest

import flowvision.models as M
from flowvision import backend as flow
from test_compile import _close, _input, _plan, _randomize

# (name, input size, create_model kwargs, {op: count of Python steps allowed})
CASES = [
    ("res2net50_48w_2s", 32, {}, {"AvgPool2d": 4}),
    ("resnest14d", 32, {}, {"Sum": 8, "Mean": 4, "_Softmax": 4, "AvgPool2d": 3}),
    ("legacy_seresnet18", 32, {}, {}),
    ("ghostnet_050", 32, {}, {"Mean": 5}),
    ("rexnet_100", 32, {}, {}),
    ("dla46_c", 32, {}, {}),
    ("cait_xxs24_224", 32, dict(img_size=32, depth=2), {}),
    ("poolformer_s12", 32, {}, {"GroupNorm": 24, "AvgPool2d": 12, "Sub": 12}),
    ("caformer_s18", 32, {}, {"Square": 25, "Mean": 1}),
    ("pvt_v2_b0", 64, {}, {"Contiguous": 4, "Mean": 1}),
    ("levit_conv_128s", 64, dict(img_size=64), {"BatchNormEval": 2, "Div": 1}),
    ("hrnet_w18_small", 32, {}, {"_Interpolate": 10}),
    ("mobilevit_xxs", 64, {}, {}),
    ("gernet_s", 32, {}, {}),
    ("van_b0", 32, {}, {"batch_norm_nhwc": 26, "Mean": 1}),  # pre-norm BatchNorms are not after a conv
    ("iresnet50", 32, dict(img_size=32), {"Neg": 25, "Sub": 25, "batch_norm_nhwc": 25, "BatchNormEval": 1}),
    ("pvt_tiny", 64, dict(img_size=64), {}),
    ("uniformer_small", 32, dict(depth=(1, 1, 1, 1)), {"batch_norm_nhwc": 4, "BatchNormEval": 1, "Mean": 1}),
    ("cswin_tiny_224", 64, dict(img_size=64, depth=(1, 1, 1, 1), split_size=(1, 2, 2, 2)), {}),
    ("crossformer_tiny_patch4_group7_224", 64, dict(img_size=64, depths=(1, 2, 1, 1), group_size=(2, 2, 2, 2)), {}),
    ("regionvit_medium_224", 32, dict(depth=(1, 2, 1, 1), window=2, peg=True), {"Pad": 2, "WhereOp": 1}),
    ("fan_tiny_8_p4_hybrid", 32, dict(depth=2, backbone_depths=(1, 1)),
     {"batch_norm_nhwc": 2}),
    ("rexnet_lite_1_0", 32, {}, {}),
    ("convnext_iso_small_224", 32, dict(depth=2), {}),
    ("mobilevitv2_050", 64, {}, {"GroupNorm": 21, "Sum": 9}),
]


def _python_steps(cm, example):
    lines = [ln.split() for ln in cm.explain(example).splitlines() if ln.strip().startswith("PYTHON")]
    return Counter(parts[1] for parts in lines if len(parts) > 1)


@pytest.mark.parametrize("name,size,kwargs,allowed", CASES, ids=[c[0] for c in CASES])
def test_family_captured_equals_eager(name, size, kwargs, allowed):
    model = M.create_model(name, **kwargs).eval()
    _randomize(model)
    example = _input((2, 3, size, size), seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an eager fallback warns: a failure here
        cm = flow.compile(model, example)
    plan = _plan(cm, example)
    assert plan is not None, cm.fallback_reason
    assert plan.executor == "native", plan.native_error
    python = _python_steps(cm, example)
    extra = {op: n for op, n in python.items() if n > allowed.get(op, 0)}
    assert not extra, f"{name}: new Python steps in the captured plan: {extra}"
    x = _input((2, 3, size, size), seed=2)
    with flow.no_grad():
        ref = model(x).numpy()
    _close(cm(x).numpy(), ref, f"{name} captured vs eager")
