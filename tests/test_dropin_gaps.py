"""Drop-in gaps against torch / torchvision on the same inputs: feature-extraction node names of torchvision's
ResNet / ViT builders, CPU autocast's float32 ops, channels_last propagation, and linalg.eig gradients."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
from torchvision.models import feature_extraction as tfe  # noqa: E402

import flowvision  # noqa: E402
import flowvision.backend as fb  # noqa: E402
from flowvision.models import feature_extraction as ffe  # noqa: E402


def _tv_pair(name, **kwargs):
    torch.manual_seed(0)
    ref = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
    ours = getattr(flowvision.models, name)(weights=None, **kwargs).eval()
    assert list(ours.state_dict()) == list(ref.state_dict())
    ours.load_state_dict({k: fb.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    return ref, ours


# ---------------------------------------------------------------- feature extraction node names

@pytest.mark.parametrize("name", ["resnet18", "resnet34", "resnet50", "resnet101", "wide_resnet50_2",
                                  "resnext50_32x4d"])
def test_resnet_node_names_equal_torchvision(name):
    ref, ours = _tv_pair(name)
    assert ffe.get_graph_node_names(ours, example_input=fb.zeros(1, 3, 64, 64)) == tfe.get_graph_node_names(ref)


def test_resnet50_layout_outputs_and_extractor_equal_torchvision():
    ref, ours = _tv_pair("resnet50")
    names = tfe.get_graph_node_names(ref)[1]
    assert names[:5] == ["x", "conv1", "bn1", "relu", "maxpool"]
    assert ["layer1.0.relu", "layer1.0.relu_1", "layer1.0.add", "layer1.0.relu_2"] == \
        [n for n in names if n.startswith("layer1.0.") and ("relu" in n or "add" in n)]
    assert names[-3:] == ["avgpool", "flatten", "fc"]
    img = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        want = ref(torch.tensor(img)).numpy()
        feats_t = tfe.create_feature_extractor(ref, {"layer4.2.relu_2": "f", "layer2.1.add": "a"})(torch.tensor(img))
    with fb.no_grad():
        got = ours(fb.tensor(img)).numpy()
        feats_f = ffe.create_feature_extractor(ours, {"layer4.2.relu_2": "f", "layer2.1.add": "a"},
                                               example_input=fb.tensor(img[:1]))(fb.tensor(img))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert list(feats_f) == list(feats_t) == ["a", "f"]
    for k in feats_f:  # float32 summation order: tolerance relative to the feature scale (tens at layer4)
        want_k = feats_t[k].numpy()
        np.testing.assert_allclose(feats_f[k].numpy(), want_k, rtol=1e-4, atol=1e-5 * np.abs(want_k).max(),
                                   err_msg=k)


def test_resnet_torchvision_keywords():
    ref, ours = _tv_pair("resnet50", replace_stride_with_dilation=[False, True, True])
    assert ffe.get_graph_node_names(ours, example_input=fb.zeros(1, 3, 64, 64)) == tfe.get_graph_node_names(ref)
    img = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    with torch.no_grad(), fb.no_grad():
        np.testing.assert_allclose(ours(fb.tensor(img)).numpy(), ref(torch.tensor(img)).numpy(), rtol=1e-4,
                                   atol=1e-4)
    torch.manual_seed(0)
    zero = flowvision.models.resnet18(zero_init_residual=True)
    assert float(zero.layer1[0].bn2.weight.abs().sum()) == 0.0
    with pytest.raises(ValueError, match="channels"):
        ours(fb.zeros(1, 4, 32, 32))


def test_vit_b_16_node_names_and_features_equal_torchvision():
    ref, ours = _tv_pair("vit_b_16", image_size=32)
    img = np.random.default_rng(9).standard_normal((2, 3, 32, 32)).astype(np.float32)
    names = tfe.get_graph_node_names(ref)
    assert ffe.get_graph_node_names(ours, example_input=fb.tensor(img[:1])) == names
    assert names[1][:8] == ["x", "getattr", "getitem", "getitem_1", "getitem_2", "getitem_3", "eq", "_assert"]
    nodes = {"encoder.layers.encoder_layer_0.getitem": "attn0", "encoder.layers.encoder_layer_5.add_1": "block5",
             "floordiv": "n_h", "getitem_5": "cls", "heads.head": "logits", "encoder.encoder_pos_embedding": "pos"}
    with torch.no_grad():
        want = tfe.create_feature_extractor(ref, nodes)(torch.tensor(img))
    with fb.no_grad():
        got = ffe.create_feature_extractor(ours, nodes, example_input=fb.tensor(img[:1]))(fb.tensor(img))
    assert list(got) == list(want)
    for k in got:
        w = want[k].detach().numpy() if hasattr(want[k], "numpy") else np.asarray(want[k])  # floordiv: an int
        g = got[k].detach().numpy() if hasattr(got[k], "numpy") else np.asarray(got[k])
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=k)
    with pytest.raises(AssertionError, match="Wrong image height"):  # torch._assert's error, as torchvision
        ours(fb.zeros(1, 3, 48, 32))


# ---------------------------------------------------------------- linalg gradients

def _grads(arr, loss):
    a, t = fb.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    loss(fb, a).backward()
    loss(torch, t).backward()
    return a.grad.numpy(), t.grad.numpy()


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_eig_gradients_equal_torch(shape):
    arr = np.random.default_rng(0).standard_normal(shape)  # real input, complex conjugate eigenpairs
    w = np.random.default_rng(1).standard_normal(shape)

    def gauge_invariant(L, A):  # |V|^2 does not depend on each eigenvector's phase; L enters through re and im
        vals, vecs = L.linalg.eig(A)
        return (vals.real * vals.imag).sum() + vals.abs().sum() + ((vecs.abs() ** 2) * L.tensor(w)).sum()

    for loss in (gauge_invariant, lambda L, A: L.linalg.eigvals(A).real.sum() + (L.linalg.eigvals(A).imag ** 2).sum()):
        got, want = _grads(arr, loss)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_eig_phase_dependent_loss_rejected_as_in_torch():
    arr = np.array([[0.0, -2.0, 0.3], [1.0, 0.5, 0.0], [0.2, 0.1, 1.0]])  # one complex conjugate pair
    for L in (torch, fb):
        a = L.tensor(arr, requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            L.linalg.eig(a).eigenvectors.real.sum().backward()


def test_eigh_and_svd_gradients_exist():
    arr = np.random.default_rng(2).standard_normal((4, 4))
    got, want = _grads(arr, lambda L, A: L.linalg.eigh(A + A.mT).eigenvalues.sum() * 2
                       + (L.linalg.eigh(A + A.mT).eigenvectors ** 2 * L.arange(4.0)).sum())
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    got, want = _grads(arr, lambda L, A: L.linalg.svd(A).S.sum() + (L.linalg.svd(A, full_matrices=False).U ** 2
                                                                    * L.arange(4.0)).sum())
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- CPU autocast's float32 list

_VEC = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
_SQ = (np.random.default_rng(4).standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
_IMG = np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype(np.float32)
_AUTOCAST_OPS = {  # name -> (input, op); torch's CPU fp32 list, its lower-precision list and ops on neither
    "softmax": (_VEC, lambda L, a: L.softmax(a, -1)), "log_softmax": (_VEC, lambda L, a: L.log_softmax(a, -1)),
    "layer_norm": (_VEC, lambda L, a: L.nn.functional.layer_norm(a, (5,))),
    "group_norm": (_IMG, lambda L, a: L.nn.functional.group_norm(a, 3)), "cumsum": (_VEC, lambda L, a: L.cumsum(a, 0)),
    "prod": (_VEC, lambda L, a: a.prod(1)), "trace": (_SQ, lambda L, a: L.trace(a)),
    "cdist": (_VEC, lambda L, a: L.cdist(a, a)), "sum": (_VEC, lambda L, a: a.sum()),
    "mse_loss": (_VEC, lambda L, a: L.nn.functional.mse_loss(a, L.zeros(4, 5))),
    "cross_entropy": (_VEC, lambda L, a: L.nn.functional.cross_entropy(a, L.tensor([0, 1, 2, 0]))),
    "nll_loss": (_VEC, lambda L, a: L.nn.functional.nll_loss(a, L.tensor([0, 1, 2, 0]))),
    "cosine_embedding_loss": (_VEC, lambda L, a: L.nn.functional.cosine_embedding_loss(a, a + 1, L.ones(4))),
    "kl_div": (_VEC, lambda L, a: L.nn.functional.kl_div(a, L.zeros(4, 5) + 0.2, reduction="batchmean")),
    "pad_reflect": (_IMG, lambda L, a: L.nn.functional.pad(a, (1, 1, 1, 1), mode="reflect")),
    "pad_replicate": (_IMG, lambda L, a: L.nn.functional.pad(a[0], (1, 2), mode="replicate")),
    "pad_circular": (_IMG, lambda L, a: L.nn.functional.pad(a, (1, 1, 1, 1), mode="circular")),
    "grid_sample": (_IMG, lambda L, a: L.nn.functional.grid_sample(a, L.zeros(2, 4, 4, 2) + 0.3, align_corners=False)),
    "fft.rfft": (_VEC, lambda L, a: L.fft.rfft(a)), "fft.fft2": (_VEC, lambda L, a: L.fft.fft2(a)),
    "linalg.inv": (_SQ, lambda L, a: L.linalg.inv(a)), "linalg.solve": (_SQ, lambda L, a: L.linalg.solve(a, a)),
    "linalg.svdvals": (_SQ, lambda L, a: L.linalg.svdvals(a)),
    "linalg.eigvalsh": (_SQ, lambda L, a: L.linalg.eigvalsh(a + a.mT)),
    "linalg.eigvals": (_SQ, lambda L, a: L.linalg.eigvals(a)), "linalg.qr": (_SQ, lambda L, a: L.linalg.qr(a).R),
    "linalg.cholesky": (_SQ, lambda L, a: L.linalg.cholesky(a @ a.mT)),
    "linalg.vecdot": (_VEC, lambda L, a: L.linalg.vecdot(a, a)), "matmul": (_SQ, lambda L, a: a @ a),
}


@pytest.mark.parametrize("name", sorted(_AUTOCAST_OPS))
@pytest.mark.parametrize("bf16_input", [True, False])
def test_cpu_autocast_output_dtypes_equal_torch(name, bf16_input):
    arr, op = _AUTOCAST_OPS[name]
    outs = []
    for L in (torch, fb):
        x = L.tensor(arr).to(L.bfloat16) if bf16_input else L.tensor(arr)
        with L.autocast("cpu", dtype=L.bfloat16):
            outs.append(op(L, x))
    want, got = outs
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if not (want.is_complex() or name in ("linalg.qr", "linalg.eigvals")):  # qr/eig: sign / order conventions
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=3e-2, atol=3e-2)


# ---------------------------------------------------------------- channels_last propagation

_CL_OPS = {
    "conv2d": lambda L, a: L.nn.functional.conv2d(a, L.ones(6, 8, 3, 3) * 0.1, L.arange(6.0), padding=1),
    "conv2d_depthwise": lambda L, a: L.nn.functional.conv2d(a, L.ones(8, 1, 3, 3) * 0.1, stride=2, groups=8),
    "batch_norm_eval": lambda L, a: L.nn.functional.batch_norm(a, L.arange(8.0), L.ones(8) * 2),
    "batch_norm_train": lambda L, a: L.nn.functional.batch_norm(a, None, None, training=True),
    "relu": lambda L, a: L.nn.functional.relu(a), "relu_method": lambda L, a: a.relu(),
    "relu_module_inplace": lambda L, a: L.nn.ReLU(inplace=True)(a.clone()),
    "max_pool2d": lambda L, a: L.nn.functional.max_pool2d(a, 3, 2, 1),
    "max_pool2d_indices": lambda L, a: L.nn.functional.max_pool2d(a, 2, return_indices=True)[0],
    "avg_pool2d": lambda L, a: L.nn.functional.avg_pool2d(a, 2),
    "adaptive_avg_pool2d": lambda L, a: L.nn.functional.adaptive_avg_pool2d(a, 3),
    "add": lambda L, a: a + a, "iadd": lambda L, a: a.clone().__iadd__(a),
}


@pytest.mark.parametrize("name", sorted(_CL_OPS))
def test_channels_last_kept_as_torch(name):
    x = np.random.default_rng(6).standard_normal((2, 8, 10, 10)).astype(np.float32)
    outs = []
    for L in (torch, fb):
        outs.append(_CL_OPS[name](L, L.tensor(x).contiguous(memory_format=L.channels_last)))
    want, got = outs
    assert want.is_contiguous(memory_format=torch.channels_last)
    assert got.is_contiguous(memory_format=fb.channels_last)
    assert got.stride() == want.stride()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_channels_last_resnet18_forward_and_backward_equal_torch():
    ref, ours = _tv_pair("resnet18")
    ref, ours = ref.to(memory_format=torch.channels_last), ours.to(memory_format=fb.channels_last)
    img = np.random.default_rng(7).standard_normal((2, 3, 64, 64)).astype(np.float32)
    xt = torch.tensor(img).contiguous(memory_format=torch.channels_last).requires_grad_()
    xf = fb.tensor(img).contiguous(memory_format=fb.channels_last).requires_grad_()
    feats_t = tfe.create_feature_extractor(ref, ["layer1.1.relu_1", "maxpool"])(xt)
    feats_f = ffe.create_feature_extractor(ours, ["layer1.1.relu_1", "maxpool"], example_input=xf[:1])(xf)
    for k in feats_t:
        assert feats_f[k].is_contiguous(memory_format=fb.channels_last), k
        np.testing.assert_allclose(feats_f[k].detach().numpy(), feats_t[k].detach().numpy(), rtol=1e-4, atol=1e-4)
    ref(xt).sum().backward()
    ours(xf).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(ours.conv1.weight.grad.numpy(), ref.conv1.weight.grad.numpy(), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- import cost

def test_transforms_import_does_not_load_opencv():
    import subprocess
    import sys
    code = ("import sys, importlib.util, flowvision.transforms, flowvision.data; m = sys.modules.get('cv2'); "
            "print(m is None or type(m) is importlib.util._LazyModule)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "True", out.stderr
    # the OpenCV fast paths still run (and load it) on first use
    img = np.random.default_rng(8).integers(0, 256, (3, 16, 16), dtype=np.uint8)
    from flowvision.transforms import functional as F
    got = F.pad(fb.tensor(img), [2, 3], padding_mode="reflect").numpy()
    want = torchvision.transforms.functional.pad(torch.tensor(img), [2, 3], padding_mode="reflect").numpy()
    np.testing.assert_array_equal(got, want)
