"""Pretrained loading paths: in-memory cfg state_dict with ViT pos-embed resampling, and a hub download
(local HTTP server, sha256 check) feeding ``create_model(..., pretrained=True)``."""
import functools
import hashlib
import http.server
import threading

import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow


def _numpy_sd(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def test_vit_pos_embed_resampled_like_timm():
    torch = pytest.importorskip("torch")
    timm = pytest.importorskip("timm")
    src = timm.create_model("vit_tiny_patch16_224").eval()
    sd = {k: v.numpy().copy() for k, v in src.state_dict().items()}
    ours = M.create_model("vit_tiny_patch16_224", img_size=128, pretrained=True,
                          pretrained_cfg_overlay=dict(state_dict=sd)).eval()
    ref = timm.create_model("vit_tiny_patch16_224", img_size=128).eval()
    from timm.models.vision_transformer import checkpoint_filter_fn
    ref.load_state_dict(checkpoint_filter_fn({k: torch.from_numpy(v) for k, v in sd.items()}, ref))
    np.testing.assert_allclose(ours.pos_embed.detach().numpy(), ref.pos_embed.detach().numpy(), atol=1e-5)
    x = np.random.RandomState(0).randn(1, 3, 128, 128).astype(np.float32)
    with torch.no_grad():
        r = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        o = ours(flow.from_numpy(x)).numpy()
    assert np.abs(r - o).max() <= 1e-4 * np.abs(r).max()


@pytest.fixture()
def http_dir(tmp_path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_pretrained_download_hash_check_and_load(http_dir, tmp_path_factory, monkeypatch):
    from flowvision import hub
    from flowvision.hub import save_safetensors
    serve_dir, base = http_dir
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("FLOWVISION_OFFLINE", raising=False)
    hub.set_dir(str(tmp_path_factory.mktemp("hubcache")))
    try:
        src = M.create_model("resnet26", num_classes=1000)
        save_safetensors(_numpy_sd(src), str(serve_dir / "resnet26.safetensors"))
        digest = hashlib.sha256((serve_dir / "resnet26.safetensors").read_bytes()).hexdigest()
        overlay = dict(hf_hub_id=None, url=f"{base}/resnet26.safetensors", sha256=digest)
        m = M.create_model("resnet26", pretrained=True, pretrained_cfg_overlay=overlay)
        np.testing.assert_array_equal(m.fc.weight.detach().numpy(), src.fc.weight.detach().numpy())
        # a different num_classes drops the head but keeps the trunk
        m10 = M.create_model("resnet26", pretrained=True, num_classes=10, pretrained_cfg_overlay=overlay)
        np.testing.assert_array_equal(m10.conv1.weight.detach().numpy(), src.conv1.weight.detach().numpy())
        assert tuple(m10.fc.weight.shape) == (10, 2048)
        bad = dict(overlay, url=f"{base}/resnet26.safetensors?x", sha256="0" * 64)
        with pytest.raises(Exception, match="(?i)hash|sha256"):
            M.create_model("resnet26", pretrained=True, pretrained_cfg_overlay=bad)
    finally:
        hub.set_dir(None)
