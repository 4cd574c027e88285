"""Property-based tests (hypothesis) of the model input checks, against timm on the same inputs.

For random input shapes (0-size, 1-pixel, odd aspect ratios, 3-D and 5-D), channel counts and dtypes, a model
either returns logits of shape (B, num_classes) with no NaN, as timm's model does, or raises a ValueError /
TypeError with a message. Never another exception type, and never a result where timm refuses the input.
"""
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")

import flowvision.models as M  # noqa: E402
from flowvision import backend as flow  # noqa: E402

EXAMPLES = int(os.environ.get("FLOWVISION_PROPERTY_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES * 3, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
ARCHS = {"resnet18": {}, "mobilenetv3_small_050": {}, "convnext_atto": {},
         "vit_tiny_patch16_224": {"img_size": 32, "patch_size": 8}}
_models = {}


def _pair(arch):
    if arch not in _models:
        kw = dict(ARCHS[arch], num_classes=5)
        _models[arch] = (M.create_model(arch, pretrained=False, **kw).eval(),
                         timm.create_model(arch, pretrained=False, **kw).eval())
    return _models[arch]


@st.composite
def inputs(draw):
    ndim = draw(st.sampled_from([4, 4, 4, 4, 3, 5]))
    b = draw(st.integers(0, 2))
    c = draw(st.sampled_from([3, 3, 3, 1, 4]))
    hw = draw(st.sampled_from(["fit", "fit", "small", "sliver", "zero"]))
    h, w = {"fit": (32, 32), "small": (draw(st.integers(1, 40)), draw(st.integers(1, 40))),
            "sliver": (1, 97), "zero": (0, 32)}[hw]
    shape = {4: (b, c, h, w), 3: (c, h, w), 5: (b, c, 1, h, w)}[ndim]
    dtype = draw(st.sampled_from(["float32", "float32", "uint8", "int64"]))
    return np.random.default_rng(draw(st.integers(0, 999))).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("arch", sorted(ARCHS))
@SETTINGS
@given(x=inputs())
def test_model_input_checks(arch, x):
    fv_model, tm_model = _pair(arch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torch.no_grad():
                ref, ref_err = tm_model(torch.from_numpy(x)).numpy(), None
        except Exception as e:  # noqa: BLE001
            ref, ref_err = None, e
        try:
            with flow.no_grad():
                out, err = fv_model(flow.from_numpy(x)).numpy(), None
        except Exception as e:  # noqa: BLE001
            out, err = None, e
    where = f"{arch} on {x.dtype} {x.shape}"
    if err is not None:
        assert isinstance(err, (ValueError, TypeError)) and str(err), f"{where}: {type(err).__name__}: {err}"
        return
    assert ref_err is None, f"{where}: timm raises {ref_err!r} but flowvision returns {out.shape}"
    assert out.shape == ref.shape == (x.shape[0], 5), f"{where}: {out.shape} vs timm {ref.shape}"
    assert np.isfinite(out).all(), f"{where}: non-finite logits"
