"""get_graph_node_names / create_feature_extractor give torchvision's fx node names (modules and op nodes such as
``features.1.0.mul``) and the same outputs, on models whose module structure is torchvision's."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
from torchvision.models import feature_extraction as tfe  # noqa: E402

import flowvision  # noqa: E402
import flowvision.backend as fb  # noqa: E402
from flowvision.models import feature_extraction as ffe  # noqa: E402


def _pair(name):
    torch.manual_seed(0)
    ref = getattr(torchvision.models, name)(weights=None).eval()
    ours = getattr(flowvision.models, name)(weights=None).eval()
    ours.load_state_dict({k: fb.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    return ref, ours


@pytest.mark.parametrize("name", ["convnext_tiny", "efficientnet_b0", "mobilenet_v3_small"])
def test_node_names_equal_torchvision(name):
    ref, ours = _pair(name)
    x = fb.zeros(1, 3, 64, 64)
    before = {k: v.detach().numpy().copy() for k, v in ours.state_dict().items()}
    assert ffe.get_graph_node_names(ours, example_input=x) == tfe.get_graph_node_names(ref)
    after = ours.state_dict()
    assert all(np.array_equal(before[k], after[k].detach().numpy()) for k in before)  # naming ran train mode: no side effect
    assert not ours.training


@pytest.mark.parametrize("name,nodes", [
    ("convnext_tiny", ["features.1.0.features_1_0_layer_scale", "features.1.0.mul", "features.1.0.add",
                       "features.2.0.layer_norm", "features.3", "avgpool", "classifier.0.permute_1"]),
    ("efficientnet_b0", {"features.2.1.add": "a", "features.4": "stage4", "flatten": "f", "x": "inp"}),
])
def test_extracted_values_equal_torchvision(name, nodes):
    ref, ours = _pair(name)
    img = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype(np.float32)
    fe = ffe.create_feature_extractor(ours, return_nodes=nodes, example_input=fb.tensor(img[:1]))
    te = tfe.create_feature_extractor(ref, return_nodes=nodes)
    with torch.no_grad():
        b = te(torch.tensor(img))
    with fb.no_grad():
        a = fe(fb.tensor(img))
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_allclose(a[k].detach().numpy(), b[k].detach().numpy(), rtol=1e-4, atol=1e-4, err_msg=k)


def test_errors():
    _, ours = _pair("mobilenet_v3_small")
    with pytest.raises(ValueError, match="is not present in model"):
        ffe.create_feature_extractor(ours, ["features.99"], example_input=fb.zeros(1, 3, 32, 32))
    with pytest.raises(ValueError, match="return_nodes"):
        ffe.create_feature_extractor(ours)
