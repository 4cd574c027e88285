"""torchvision surface used by drop-in scripts, against torchvision: feature extraction,
models.detection as an attribute, v2 colour kernels with keyword factors, tv_tensors.set_return_type."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import torchvision.transforms.v2 as tv2  # noqa: E402
from torchvision.models.feature_extraction import create_feature_extractor as tv_cfe  # noqa: E402

import flowvision  # noqa: E402
import flowvision.backend as fb  # noqa: E402
from flowvision.transforms import v2  # noqa: E402


def test_create_feature_extractor_matches_torchvision():
    ref = torchvision.models.resnet18(weights=None).eval()
    ours = flowvision.models.resnet18(weights=None).eval()
    ours.load_state_dict({k: fb.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    nodes = {"layer1": "f1", "layer2.1.conv2": "mid", "layer4": "f4"}
    fe = flowvision.models.feature_extraction.create_feature_extractor(ours, return_nodes=nodes)
    te = tv_cfe(ref, return_nodes=nodes)
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    a, b = fe(fb.tensor(x)), te(torch.tensor(x))
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_allclose(a[k].detach().numpy(), b[k].detach().numpy(), rtol=1e-4, atol=1e-4)
    names = flowvision.models.feature_extraction.get_graph_node_names(ours, example_input=fb.tensor(x))[0]
    assert names[0] == "x" and "layer1.0.add" in names and "layer4.1.conv2" in names
    with pytest.raises(ValueError, match="is not present in model"):
        flowvision.models.feature_extraction.create_feature_extractor(ours, ["layer1.0.nothing"])
    with pytest.raises(ValueError, match="return_nodes"):
        flowvision.models.feature_extraction.create_feature_extractor(ours)


def test_detection_is_an_attribute_of_models():
    assert hasattr(flowvision.models, "detection") and hasattr(flowvision.models.detection, "fasterrcnn_resnet50_fpn")
    assert hasattr(flowvision.models, "segmentation")


@pytest.mark.parametrize("name,kw", [("adjust_sharpness", {"sharpness_factor": 1.7}),
                                     ("adjust_contrast", {"contrast_factor": 0.6}),
                                     ("adjust_saturation", {"saturation_factor": 1.3})])
def test_v2_colour_kernels_take_keyword_factors(name, kw):
    x = np.random.default_rng(1).integers(0, 256, (3, 9, 10), dtype=np.uint8)
    a = getattr(v2.functional, name)(fb.tensor(x), **kw)
    b = getattr(tv2.functional, name)(torch.tensor(x), **kw)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    a = v2.RandomAdjustSharpness(2.0, p=1.0)(fb.tensor(x))
    b = tv2.RandomAdjustSharpness(2.0, p=1.0)(torch.tensor(x))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_set_return_type():
    with flowvision.tv_tensors.set_return_type("Tensor"):
        img = flowvision.tv_tensors.Image(fb.zeros(3, 2, 2))
        assert type(img + 1) is fb.Tensor  # torchvision's default: ops return plain tensors
    with pytest.raises(NotImplementedError, match="wrap"):
        flowvision.tv_tensors.set_return_type("TVTensor")
    with pytest.raises(ValueError):
        flowvision.tv_tensors.set_return_type("ndarray")


def test_draw_keypoints_accepts_keypoints_with_scores():
    kp = np.array([[[2.0, 3.0, 0.9], [10.0, 12.0, 0.5], [15.0, 4.0, 0.1]]], np.float32)
    vis = np.array([[True, True, False]])
    img = np.zeros((3, 20, 20), np.uint8)
    a = flowvision.utils.draw_keypoints(fb.tensor(img), fb.tensor(kp), connectivity=[(0, 1)], colors="red",
                                        radius=1, visibility=fb.tensor(vis))
    b = torchvision.utils.draw_keypoints(torch.tensor(img), torch.tensor(kp), connectivity=[(0, 1)], colors="red",
                                         radius=1, visibility=torch.tensor(vis))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_detection_models_take_a_batch_tensor_and_init_like_torchvision():
    fb.manual_seed(0)
    m = flowvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None,
                                                                          num_classes=3).eval()
    x = fb.rand(2, 3, 64, 64)
    batched, listed = m(x), m([x[0], x[1]])
    assert len(batched) == 2
    for a, b in zip(batched, listed):
        for k in ("boxes", "scores", "labels"):
            np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())
    ours = flowvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    ref = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    for name in ("layer1.0.bn3.weight", "layer4.2.bn3.weight", "bn1.weight"):
        a = dict(ours.backbone.body.named_parameters())[name]
        b = dict(ref.backbone.body.named_parameters())[name]
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_register_kernel_by_alias_name():
    called = []

    class MyMask(flowvision.tv_tensors.Mask):
        pass

    @v2.functional.register_kernel(functional="hflip", tv_tensor_cls=MyMask)
    def kernel(x):
        called.append(1)
        return x

    m = MyMask(fb.zeros(1, 2, 2))
    v2.functional.horizontal_flip(m)
    v2.functional.hflip(m)
    v2.RandomHorizontalFlip(p=1.0)(m)
    assert len(called) == 3
