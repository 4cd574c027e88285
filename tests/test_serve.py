"""``flowvision serve`` over real HTTP on 127.0.0.1: predictions equal in-process runs, dynamic batching, limits,
back-pressure, timeouts and graceful shutdown. Small random-weight models keep it fast on 2 cores."""
import base64
import io
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
from PIL import Image  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from flowvision import backend as flow  # noqa: E402
from flowvision.serve._process import ServerProcess  # noqa: E402

CLS, DET, SEG = "mobilenetv3_small_050", "ssdlite320_mobilenet_v3_large", "lraspp_mobilenet_v3_large"
SIZE = 96  # --input-size: the classifier's and the segmenter's square input


def _save(model, path):
    from safetensors.numpy import save_file
    save_file({k: np.ascontiguousarray(v.numpy()) for k, v in model.state_dict().items()}, path)
    return path


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    from flowvision.models import create_model, get_model
    d = tmp_path_factory.mktemp("serve_ckpt")
    flow.manual_seed(0)
    return {CLS: _save(create_model(CLS), str(d / "cls.safetensors")),
            DET: _save(get_model(DET, weights=None, weights_backbone=None), str(d / "det.safetensors")),
            SEG: _save(get_model(SEG, weights=None, weights_backbone=None), str(d / "seg.safetensors"))}


@pytest.fixture(scope="module")
def server(ckpts):
    args = []
    for name in (CLS, DET, SEG):
        args += ["--model", name, "--checkpoint", ckpts[name]]
    args += ["--input-size", str(SIZE), "--max-batch", "4", "--max-delay-ms", "50", "--max-queue", "32",
             "--max-body-mb", "1", "--max-pixels", "1000000", "--threads", "1", "--log-level", "warning"]
    with ServerProcess(args) as srv:
        yield srv


def _image(seed, w=80, h=60, fmt="PNG"):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 // w, yy * 255 // h, (xx + yy) * 127 // (w + h) + 60 * (seed % 3)], -1)
    arr = np.clip(base + rng.integers(-40, 40, (h, w, 3)), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt)
    return buf.getvalue()


def _post(srv, images, model=None, **params):
    files = [("file", (f"im{i}.png", data, "image/png")) for i, data in enumerate(images)]
    data = dict(params, **({"model": model} if model else {}))
    return httpx.post(srv.url + "/v1/predict", files=files, data={k: str(v) for k, v in data.items()}, timeout=60)


def _metrics(srv):
    text = httpx.get(srv.url + "/metrics", timeout=10).text
    return {s.name + str(sorted(s.labels.items())): s.value for fam in text_string_to_metric_families(text)
            for s in fam.samples}


def _sample(metrics, name, **labels):
    return metrics.get(name + str(sorted(labels.items())), 0.0)


# ------------------------------------------------------------------------ endpoints and parity
def test_healthz_models_page(server):
    assert httpx.get(server.url + "/healthz").json() == {"status": "ok", "models": [CLS, DET, SEG]}
    models = {m["name"]: m for m in httpx.get(server.url + "/v1/models").json()["models"]}
    assert [models[n]["task"] for n in (CLS, DET, SEG)] == ["classification", "detection", "segmentation"]
    assert models[CLS]["input_size"] == [SIZE, SIZE] and models[CLS]["num_classes"] == 1000
    assert models[CLS]["labels"][281].startswith("tabby") and models[SEG]["labels"][15] == "person"
    assert models[CLS]["plan_batch_sizes"] == [1, 2, 4] and models[CLS]["threads"] == 1
    assert models[CLS]["isa"] == flow.cpu_isa()
    page = httpx.get(server.url + "/")
    assert page.status_code == 200 and 'id="file"' in page.text and "http" not in page.text.split("<script>")[1]


def test_classification_matches_in_process(server, ckpts):
    from flowvision.models import create_model
    from flowvision.models._data import create_eval_transform, resolve_data_config, softmax_np
    from flowvision.serve import ModelSpec, Predictor
    images = [_image(1), _image(2, 120, 90, "JPEG")]
    got = _post(server, images, topk=7).json()
    assert got["model"] == CLS and got["task"] == "classification" and got["latency_ms"] > 0
    # eager reference: same checkpoint, the model's own eval transform at the served size
    model = create_model(CLS, checkpoint_path=ckpts[CLS]).eval()
    cfg = dict(resolve_data_config(model), input_size=(3, SIZE, SIZE))
    tf = create_eval_transform(**cfg)
    for data, pred in zip(images, got["predictions"]):
        with flow.no_grad():
            probs = softmax_np(model(tf(Image.open(io.BytesIO(data)).convert("RGB")).unsqueeze(0)).numpy()[0])
        order = np.argsort(-probs, kind="stable")[:7]
        assert [t["index"] for t in pred["topk"]] == order.tolist()
        np.testing.assert_allclose([t["score"] for t in pred["topk"]], probs[order], rtol=1e-4, atol=1e-6)
    # the in-process Predictor gives the same bytes of JSON-ready output
    local = Predictor(ModelSpec(CLS, ckpts[CLS], input_size=SIZE), max_batch=4)
    ims = [Image.open(io.BytesIO(d)).convert("RGB") for d in images]
    assert local.predict(ims, topk=7) == got["predictions"]
    # base64 JSON (one data URL, one plain) answers the same as multipart
    body = {"model": CLS, "topk": 7, "images": ["data:image/png;base64," + base64.b64encode(images[0]).decode(),
                                                base64.b64encode(images[1]).decode()]}
    js = httpx.post(server.url + "/v1/predict", json=body, timeout=60).json()
    assert js["predictions"] == got["predictions"]


def test_detection_matches_in_process(server, ckpts):
    from flowvision.models import get_model
    from flowvision.models._builder import load_checkpoint
    data = _image(3, 100, 70)
    got = _post(server, [data], model=DET).json()
    assert got["task"] == "detection"
    pred = got["predictions"][0]
    model = get_model(DET, weights=None, weights_backbone=None).eval()
    load_checkpoint(model, ckpts[DET])
    x = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), np.float32).transpose(2, 0, 1) / 255
    with flow.no_grad():
        ref = {k: v.numpy() for k, v in model([flow.from_numpy(np.ascontiguousarray(x))])[0].items()}
    assert len(pred["boxes"]) == len(ref["boxes"]) > 0
    np.testing.assert_allclose(pred["scores"], ref["scores"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pred["boxes"], ref["boxes"], atol=2e-3)
    assert pred["labels"] == ref["labels"].tolist()
    assert all(0 <= b[0] <= b[2] <= 100 and 0 <= b[1] <= b[3] <= 70 for b in pred["boxes"])
    assert pred["label_names"][0] == server_labels(server, DET)[pred["labels"][0]]
    thresh = float(np.median(ref["scores"]))
    few = _post(server, [data], model=DET, score_threshold=thresh).json()["predictions"][0]
    assert len(few["boxes"]) == int((ref["scores"] >= thresh).sum())


def server_labels(srv, name):
    return next(m for m in httpx.get(srv.url + "/v1/models").json()["models"] if m["name"] == name)["labels"]


def test_segmentation_matches_in_process(server, ckpts):
    from flowvision.models import get_model
    from flowvision.models._builder import load_checkpoint
    data = _image(4, 90, 64)
    got = _post(server, [data], model=SEG).json()
    pred = got["predictions"][0]
    mask = np.asarray(Image.open(io.BytesIO(base64.b64decode(pred["mask_png"]))))
    assert mask.shape == (64, 90) and pred["size"] == [90, 64]
    model = get_model(SEG, weights=None, weights_backbone=None).eval()
    load_checkpoint(model, ckpts[SEG])
    im = Image.open(io.BytesIO(data)).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)
    x = (np.asarray(im, np.float32) / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    with flow.no_grad():
        out = model(flow.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None], np.float32)))["out"]
    ref = np.asarray(Image.fromarray(out.numpy()[0].argmax(0).astype(np.uint8)).resize((90, 64), Image.NEAREST))
    assert (mask != ref).mean() < 0.002  # compiled vs eager may flip an argmax tie, nothing more
    assert [c["index"] for c in pred["classes"]] == np.unique(mask).tolist()


# ------------------------------------------------------------------------ dynamic batching
def test_concurrent_requests_are_batched_and_equal_single_runs(server):
    images = [_image(10 + i) for i in range(12)]
    alone = [_post(server, [d]).json()["predictions"][0] for d in images]  # one at a time: batches of 1
    before = _metrics(server)
    with ThreadPoolExecutor(len(images)) as pool:
        together = list(pool.map(lambda d: _post(server, [d]), images))
    assert [r.status_code for r in together] == [200] * len(images)
    assert [r.json()["predictions"][0] for r in together] == alone  # identical, not just close
    after = _metrics(server)
    batches = (_sample(after, "flowvision_batch_size_count", model=CLS)
               - _sample(before, "flowvision_batch_size_count", model=CLS))
    imgs = (_sample(after, "flowvision_batch_size_sum", model=CLS)
            - _sample(before, "flowvision_batch_size_sum", model=CLS))
    singles = (_sample(after, "flowvision_batch_size_bucket", model=CLS, le="1.0")
               - _sample(before, "flowvision_batch_size_bucket", model=CLS, le="1.0"))
    assert imgs == len(images) and batches < len(images) and singles < batches  # batches of more than one
    assert _sample(after, "flowvision_requests_total", model=CLS, status="200") >= 2 * len(images)
    assert _sample(after, "flowvision_queue_depth", model=CLS) == 0
    assert _sample(after, "flowvision_request_latency_seconds_count", model=CLS) >= 2 * len(images)


def test_batcher_in_process():
    import asyncio

    from flowvision.serve._batcher import DynamicBatcher, QueueFull, ShuttingDown
    calls = []

    def run(values):
        calls.append(list(values))
        time.sleep(0.05)
        if "boom" in values:
            raise ValueError("bad batch")
        return [v * 2 for v in values]

    async def scenario():
        b = DynamicBatcher(run, max_batch=3, max_delay_s=0.02, max_queue=4)
        b.start()
        assert await asyncio.gather(*[b.submit(i) for i in range(4)]) == [0, 2, 4, 6]
        assert calls == [[0, 1, 2], [3]]  # up to max_batch per call, in arrival order
        futs = [b.enqueue(i) for i in range(4)]
        with pytest.raises(QueueFull):
            b.enqueue(99)
        await asyncio.gather(*futs)
        calls.clear()
        bad = await asyncio.gather(b.submit("boom"), b.submit(5), return_exceptions=True)
        assert isinstance(bad[0], ValueError) and isinstance(bad[1], ValueError)  # the batch failed together
        assert await b.submit(7) == 14  # and the batcher goes on
        with pytest.raises(asyncio.TimeoutError):  # a request that gives up is dropped from its batch
            await asyncio.wait_for(b.submit(9), 0.001)
        pending = [b.enqueue(i) for i in range(3)]
        await b.close()  # drains what is queued before stopping
        assert [f.result() for f in pending] == [0, 2, 4]
        assert all(9 not in c for c in calls)  # the abandoned item never reached the model
        with pytest.raises(ShuttingDown):
            b.enqueue(1)

    asyncio.run(scenario())


# ------------------------------------------------------------------------ bad input: 4xx, the server keeps serving
def _error(resp, status, code):
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert err["code"] == code and len(err["message"]) > 10
    return err["message"]


def test_bad_requests_get_clear_4xx(server):
    url = server.url + "/v1/predict"
    _error(httpx.post(url, content=b'{"images": [', headers={"content-type": "application/json"}), 400, "bad_json")
    _error(httpx.post(url, json=["x"]), 400, "bad_json")
    _error(httpx.post(url, json={"pictures": []}), 400, "bad_request")
    _error(httpx.post(url, json={"images": ["not base64 !"]}), 400, "bad_base64")
    assert "not an image" in _error(_post(server, [b"plain text, not an image"]), 400, "bad_image")
    _error(_post(server, [_image(5)[:200]]), 400, "bad_image")  # a truncated PNG
    _error(_post(server, [b""]), 400, "bad_image")
    _error(httpx.post(url, content=b"abc", headers={"content-type": "text/plain"}), 415, "unsupported_media_type")
    _error(httpx.post(url, json={"images": []}), 400, "no_image")
    assert CLS in _error(_post(server, [_image(6)], model="resnet5000"), 404, "unknown_model")
    _error(_post(server, [_image(6)], topk="many"), 400, "bad_request")
    # bodies over --max-body-mb 1: declared length, and a chunked upload counted as it arrives
    big = os.urandom(1_300_000)
    _error(_post(server, [big]), 413, "body_too_large")
    _error(httpx.post(url, content=iter([big[:700_000], big[700_000:]]),
                      headers={"content-type": "application/json"}), 413, "body_too_large")
    # a decompression bomb: 16 M pixels in a few KiB, refused from the header (limit 1 M pixels)
    bomb = io.BytesIO()
    Image.new("L", (4000, 4000)).save(bomb, format="PNG")
    assert len(bomb.getvalue()) < 50_000
    assert "4000x4000" in _error(_post(server, [bomb.getvalue()]), 413, "image_too_large")
    _error(_post(server, [_image(7)] * 33), 413, "too_many_images")
    assert httpx.get(server.url + "/nope").status_code == 404
    # still serving, and the errors are counted
    assert _post(server, [_image(8)]).status_code == 200
    m = _metrics(server)
    assert _sample(m, "flowvision_errors_total", model=CLS, code="bad_image") >= 3
    assert _sample(m, "flowvision_errors_total", model="?", code="unknown_model") >= 1


# ------------------------------------------------------------------------ back-pressure, timeouts, shutdown
SLOW = ["--model", "resnet18", "--no-pretrained", "--input-size", "160", "--threads", "1", "--log-level", "warning"]


def test_queue_bound_gives_503_and_timeouts_504():
    with ServerProcess(SLOW + ["--max-batch", "1", "--max-delay-ms", "0", "--max-queue", "2"]) as srv:
        data = _image(20)
        resp = _post(srv, [data] * 3)  # more images than the queue holds
        _error(resp, 503, "queue_full")
        assert resp.headers["retry-after"] == "1"
        _error(_post(srv, [data], timeout_s=0.001), 504, "timeout")
        expected = _post(srv, [data]).json()["predictions"]
        with ThreadPoolExecutor(24) as pool:
            burst = list(pool.map(lambda _: _post(srv, [data]), range(24)))
        codes = [r.status_code for r in burst]
        assert set(codes) <= {200, 503} and codes.count(200) >= 1 and codes.count(503) >= 1, codes
        assert all(r.headers["retry-after"] == "1" for r in burst if r.status_code == 503)
        assert all(r.json()["predictions"] == expected for r in burst if r.status_code == 200)
        assert _post(srv, [data]).status_code == 200  # recovered once the burst is over
        assert _sample(_metrics(srv), "flowvision_errors_total", model="resnet18", code="queue_full") >= 2


def test_sigterm_finishes_in_flight_requests_and_exits_0():
    srv = ServerProcess(SLOW + ["--max-batch", "2", "--max-queue", "64"]).start()
    try:
        data = _image(21)
        done = []

        def client(_):
            r = _post(srv, [data])
            done.append(time.monotonic())
            return r.status_code

        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(client, i) for i in range(16)]
            deadline = time.monotonic() + 30
            while _sample(_metrics(srv), "flowvision_images_total", model="resnet18") < 16:
                assert time.monotonic() < deadline, "the requests never reached the server"
                time.sleep(0.01)
            srv.proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            time.sleep(0.2)
            with pytest.raises(httpx.TransportError):  # new connections are refused while it drains
                httpx.post(srv.url + "/v1/predict", files=[("file", ("a.png", data, "image/png"))], timeout=5)
            codes = [f.result(timeout=60) for f in futures]
        assert codes == [200] * 16
        assert max(done) > sent  # some of them were still running when SIGTERM arrived
        assert srv.proc.wait(60) == 0, srv.log()
    finally:
        srv.stop()


def test_cli_refuses_bad_arguments(capsys, tmp_path):
    from flowvision.cli import main
    assert main(["serve", "--model", "resnet5O"]) == 2
    assert "resnet50" in capsys.readouterr().err
    assert main(["serve", "--model", "resnet18", "--checkpoint", str(tmp_path / "none.safetensors")]) == 2
    assert "no such checkpoint" in capsys.readouterr().err
    assert main(["serve", "--max-batch", "0"]) == 2
    assert "--max-batch" in capsys.readouterr().err



def test_two_workers_share_the_port_and_sum_metrics():
    args = ["--model", CLS, "--no-pretrained", "--input-size", "64", "--workers", "2", "--threads", "1",
            "--max-batch", "2", "--log-level", "warning"]
    srv = ServerProcess(args).start()
    try:
        data = _image(30)
        with ThreadPoolExecutor(4) as pool:
            codes = list(pool.map(lambda _: _post(srv, [data]).status_code, range(12)))
        assert codes == [200] * 12
        m = _metrics(srv)  # whichever worker answers, the counts are summed over both
        assert _sample(m, "flowvision_requests_total", model=CLS, status="200") == 12
        assert _sample(m, "flowvision_images_total", model=CLS) == 12
    finally:
        assert srv.stop() == 0, srv.log()
