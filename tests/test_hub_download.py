"""flowvision.hub downloader against a real HTTP server on 127.0.0.1 (started and stopped here)."""
import hashlib
import http.server
import os
import socketserver
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from flowvision import hub
from flowvision.hub import (DownloadError, HashMismatchError, OfflineError, cached_download, download_url_to_file,
                            load_state_dict_from_url)
from flowvision.hub.hf import find_in_hf_cache, hf_hub_url, hf_local_path, parse_hf_id

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------------- test server

class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.files = {}        # path -> bytes
        self.faults = {}       # path -> list of fault tuples, one consumed per GET
        self.ignore_range = set()
        self.redirects = {}    # path -> target path
        self.throttle = {}     # path -> seconds to sleep per 64 KiB chunk
        self.hits = {}         # path -> list of Range headers (None when absent)
        self.if_range = []     # If-Range headers received

    def record(self, path, rng):
        with self.lock:
            self.hits.setdefault(path, []).append(rng)
            faults = self.faults.get(path)
            return faults.pop(0) if faults else None


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    state = None  # set per server

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        st = self.state
        path = self.path.split("?", 1)[0]
        rng = self.headers.get("Range")
        fault = st.record(path, rng)
        if self.headers.get("If-Range") is not None:
            st.if_range.append(self.headers.get("If-Range"))
        if path in st.redirects:
            self.send_response(302)
            self.send_header("Location", st.redirects[path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault and fault[0] == "status":
            _, code, retry_after = fault
            self.send_response(code)
            if retry_after is not None:
                self.send_header("Retry-After", str(retry_after))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault and fault[0] == "hang":
            time.sleep(fault[1])
        data = st.files.get(path)
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start = 0
        etag = '"%s"' % hashlib.sha256(data).hexdigest()[:16]
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range != etag:
            rng = None  # RFC 9110: the file changed, send all of it
        if rng and path not in st.ignore_range:
            spec = rng.split("=", 1)[1]
            start = int(spec.split("-", 1)[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        limit = len(body)
        if fault and fault[0] == "drop":
            limit = min(limit, fault[1])
        delay = st.throttle.get(path, 0)
        pos = 0
        try:
            while pos < limit:
                n = min(65536, limit - pos)
                self.wfile.write(body[pos:pos + n])
                pos += n
                if delay:
                    time.sleep(delay)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if limit < len(body):
            self.close_connection = True  # the promised Content-Length is never delivered


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture(scope="module")
def server():
    state = _State()
    handler = type("Handler", (_Handler,), {"state": state})
    srv = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        yield state
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


@pytest.fixture
def srv(server, tmp_path, monkeypatch):
    server.reset()
    monkeypatch.setenv("FLOWVISION_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_BACKOFF", "0.01")
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "3")
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_READ_TIMEOUT", "2")
    for var in ("FLOWVISION_OFFLINE", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HF_HOME", "HF_HUB_CACHE",
                "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    hub.set_dir(None)
    yield server
    hub.set_dir(None)


def _payload(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _sha(b):
    return hashlib.sha256(b).hexdigest()


def _serve(srv, name, data):
    srv.files["/" + name] = data
    return f"{srv.base}/{name}"


# ----------------------------------------------------------------------------------- basics

def test_download_progress_off(srv, tmp_path, capsys):
    data = _payload(300_000)
    url = _serve(srv, "a.bin", data)
    dst = tmp_path / "out" / "a.bin"
    assert download_url_to_file(url, str(dst), progress=False) == str(dst)
    assert dst.read_bytes() == data
    assert not os.path.exists(str(dst) + ".partial")
    assert capsys.readouterr().err == ""
    assert srv.hits["/a.bin"] == [None]


def test_progress_bar_shown(srv, tmp_path, capsys):
    url = _serve(srv, "bar.bin", _payload(200_000))
    download_url_to_file(url, str(tmp_path / "bar.bin"), progress=True)
    err = capsys.readouterr().err
    assert "bar.bin" in err and "100%" in err


def test_cache_hit_makes_no_request(srv, tmp_path):
    data = _payload(50_000)
    url = _serve(srv, "c.bin", data)
    dst = str(tmp_path / "c.bin")
    cached_download(url, dst, sha256=_sha(data), progress=False)
    cached_download(url, dst, sha256=_sha(data), progress=False)
    cached_download(url, dst, progress=False)
    assert len(srv.hits["/c.bin"]) == 1


def test_get_set_dir(srv, tmp_path):
    assert hub.get_dir() == os.path.join(str(tmp_path / "home"), "hub")
    hub.set_dir(str(tmp_path / "elsewhere"))
    assert hub.get_dir() == str(tmp_path / "elsewhere")
    hub.set_dir(None)
    assert hub.get_dir().startswith(str(tmp_path / "home"))


# ----------------------------------------------------------------------------------- resume / retry

def test_drop_mid_file_is_resumed_with_range(srv, tmp_path):
    data = _payload(1_000_000, 1)
    url = _serve(srv, "drop.bin", data)
    srv.faults["/drop.bin"] = [("drop", 400_000)]
    dst = str(tmp_path / "drop.bin")
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    first, second = srv.hits["/drop.bin"]
    assert first is None and second.startswith("bytes=")
    assert 300_000 <= int(second[6:-1]) <= 400_000  # resumed near where the connection dropped


def test_resume_from_existing_partial_file(srv, tmp_path):
    data = _payload(500_000, 2)
    url = _serve(srv, "part.bin", data)
    dst = str(tmp_path / "part.bin")
    with open(dst + ".partial", "wb") as f:
        f.write(data[:123_456])
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    assert srv.hits["/part.bin"] == ["bytes=123456-"]
    assert not os.path.exists(dst + ".partial")


def test_resume_sends_if_range_and_a_changed_file_is_fetched_whole(srv, tmp_path, monkeypatch):
    old, new = _payload(300_000, 30), _payload(300_000, 31)
    url = _serve(srv, "changing.bin", old)
    srv.faults["/changing.bin"] = [("drop", 100_000)]
    dst = str(tmp_path / "changing.bin")
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "0")
    with pytest.raises(DownloadError):
        cached_download(url, dst, progress=False)
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "3")
    assert os.path.exists(dst + ".partial") and os.path.exists(dst + ".partial.validator")
    srv.files["/changing.bin"] = new  # the file changes on the server before the resume
    cached_download(url, dst, sha256=_sha(new), progress=False)
    assert open(dst, "rb").read() == new
    assert srv.if_range == ['"%s"' % _sha(old)[:16]]
    assert len(srv.hits["/changing.bin"]) == 2  # the If-Range answer was the whole new file, no extra restart
    assert not os.path.exists(dst + ".partial.validator")


def test_server_ignoring_range_restarts_from_zero(srv, tmp_path):
    data = _payload(300_000, 3)
    url = _serve(srv, "norange.bin", data)
    srv.ignore_range.add("/norange.bin")
    dst = str(tmp_path / "norange.bin")
    with open(dst + ".partial", "wb") as f:
        f.write(b"\xff" * 1000)  # wrong bytes: appending to them would corrupt the file
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    assert srv.hits["/norange.bin"] == ["bytes=1000-"]


def test_complete_partial_answered_416_is_verified(srv, tmp_path):
    data = _payload(10_000, 4)
    url = _serve(srv, "full.bin", data)
    dst = str(tmp_path / "full.bin")
    with open(dst + ".partial", "wb") as f:
        f.write(data)
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    assert srv.hits["/full.bin"] == ["bytes=10000-"]


def test_stale_partial_with_wrong_bytes_is_redownloaded_once(srv, tmp_path):
    data = _payload(100_000, 5)
    url = _serve(srv, "stale.bin", data)
    dst = str(tmp_path / "stale.bin")
    with open(dst + ".partial", "wb") as f:
        f.write(b"\x00" * 5000)
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    assert srv.hits["/stale.bin"] == ["bytes=5000-", None]


def test_retry_after_503_is_honoured(srv, tmp_path):
    data = _payload(20_000, 6)
    url = _serve(srv, "busy.bin", data)
    srv.faults["/busy.bin"] = [("status", 503, 1)]
    t0 = time.monotonic()
    cached_download(url, str(tmp_path / "busy.bin"), sha256=_sha(data), progress=False)
    assert time.monotonic() - t0 >= 0.9  # waited the server's Retry-After, not the 0.01 s backoff
    assert len(srv.hits["/busy.bin"]) == 2


def test_429_then_success(srv, tmp_path):
    data = _payload(20_000, 7)
    url = _serve(srv, "rate.bin", data)
    srv.faults["/rate.bin"] = [("status", 429, 0), ("status", 502, None)]
    cached_download(url, str(tmp_path / "rate.bin"), sha256=_sha(data), progress=False)
    assert len(srv.hits["/rate.bin"]) == 3


def test_404_fails_at_once_naming_url_and_path(srv, tmp_path):
    url = f"{srv.base}/missing.bin"
    dst = str(tmp_path / "missing.bin")
    with pytest.raises(DownloadError) as ei:
        cached_download(url, dst, progress=False)
    assert ei.value.status == 404
    assert url in str(ei.value) and dst in str(ei.value)
    assert len(srv.hits["/missing.bin"]) == 1
    assert not os.path.exists(dst)


def test_persistent_500_fails_after_retries(srv, tmp_path):
    url = _serve(srv, "broken.bin", b"x")
    srv.faults["/broken.bin"] = [("status", 500, None)] * 10
    dst = str(tmp_path / "broken.bin")
    with pytest.raises(DownloadError) as ei:
        cached_download(url, dst, progress=False)
    assert url in str(ei.value) and dst in str(ei.value) and "4 attempt" in str(ei.value)
    assert len(srv.hits["/broken.bin"]) == 4  # 1 + FLOWVISION_DOWNLOAD_RETRIES=3
    assert not os.path.exists(dst)


def test_read_timeout_is_retried(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_READ_TIMEOUT", "0.3")
    data = _payload(10_000, 8)
    url = _serve(srv, "slow.bin", data)
    srv.faults["/slow.bin"] = [("hang", 1.0)]
    cached_download(url, str(tmp_path / "slow.bin"), sha256=_sha(data), progress=False)
    assert len(srv.hits["/slow.bin"]) == 2


def test_timeouts_exhaust_retries_with_clear_error(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_READ_TIMEOUT", "0.2")
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "1")
    url = _serve(srv, "slower.bin", b"abc")
    srv.faults["/slower.bin"] = [("hang", 0.6)] * 2
    dst = str(tmp_path / "slower.bin")
    with pytest.raises(DownloadError) as ei:
        cached_download(url, dst, progress=False)
    msg = str(ei.value)
    assert url in msg and dst in msg and "2 attempt" in msg


def test_connection_refused_is_a_clear_error(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "1")
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}/x.bin"
    with pytest.raises(DownloadError) as ei:
        cached_download(url, str(tmp_path / "x.bin"), progress=False)
    assert url in str(ei.value)


def test_redirect_is_followed(srv, tmp_path):
    data = _payload(30_000, 9)
    _serve(srv, "real.bin", data)
    srv.redirects["/alias.bin"] = "/real.bin"
    dst = str(tmp_path / "alias.bin")
    cached_download(f"{srv.base}/alias.bin", dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data


# ----------------------------------------------------------------------------------- hashes / atomicity

def test_hash_mismatch_rejects_and_leaves_nothing(srv, tmp_path):
    url = _serve(srv, "bad.bin", _payload(40_000, 10))
    dst = str(tmp_path / "bad.bin")
    with pytest.raises(HashMismatchError) as ei:
        cached_download(url, dst, sha256="0" * 64, progress=False)
    assert url in str(ei.value) and dst in str(ei.value)
    assert sorted(os.listdir(tmp_path)) in ([], ["bad.bin.lock"])  # no final file, no partial


def test_hash_prefix_from_torch_style_name(srv, tmp_path):
    data = _payload(25_000, 11)
    good = f"w-{_sha(data)[:8]}.bin"
    bad = "w-deadbeef.bin"
    for name in (good, bad):
        _serve(srv, name, data)
    assert hub.hash_prefix_from_filename(good) == _sha(data)[:8]
    assert hub.hash_prefix_from_filename("resnet50.pth") is None
    p = hub.resolve_url_to_path(f"{srv.base}/{good}", check_hash=True, progress=False)
    assert p == os.path.join(hub.get_dir(), "checkpoints", good)
    with pytest.raises(HashMismatchError):
        hub.resolve_url_to_path(f"{srv.base}/{bad}", check_hash=True, progress=False)
    assert not os.path.exists(os.path.join(hub.get_dir(), "checkpoints", bad))
    # torch semantics of download_url_to_file(hash_prefix=...)
    with pytest.raises(HashMismatchError):
        download_url_to_file(f"{srv.base}/{good}", str(tmp_path / "x.bin"), hash_prefix="ffff", progress=False)


def test_corrupt_cached_file_is_redownloaded(srv, tmp_path):
    data = _payload(60_000, 12)
    url = _serve(srv, "c2.bin", data)
    dst = str(tmp_path / "c2.bin")
    with open(dst, "wb") as f:
        f.write(data[:-1] + b"\x00")  # same size, one byte off
    cached_download(url, dst, sha256=_sha(data), progress=False)
    assert open(dst, "rb").read() == data
    assert len(srv.hits["/c2.bin"]) == 1


def test_failed_download_never_leaves_a_file_at_the_final_path(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "0")
    data = _payload(400_000, 13)
    url = _serve(srv, "atomic.bin", data)
    srv.faults["/atomic.bin"] = [("drop", 100_000)]
    dst = str(tmp_path / "atomic.bin")
    with pytest.raises(DownloadError) as ei:
        cached_download(url, dst, sha256=_sha(data), progress=False)
    assert not os.path.exists(dst)
    kept = os.path.getsize(dst + ".partial")
    assert 0 < kept <= 100_000 and "later resume" in str(ei.value)
    cached_download(url, dst, sha256=_sha(data), progress=False)  # the next call resumes
    assert open(dst, "rb").read() == data
    assert srv.hits["/atomic.bin"][-1] == f"bytes={kept}-"


def test_final_path_only_ever_holds_the_complete_file(srv, tmp_path):
    data = _payload(1_500_000, 14)
    url = _serve(srv, "watch.bin", data)
    srv.throttle["/watch.bin"] = 0.01
    dst = str(tmp_path / "watch.bin")
    seen, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            if os.path.exists(dst):
                seen.append(os.path.getsize(dst))
            time.sleep(0.002)

    t = threading.Thread(target=watch)
    t.start()
    try:
        cached_download(url, dst, sha256=_sha(data), progress=False)
        deadline = time.monotonic() + 2
        while not seen and time.monotonic() < deadline:  # let the watcher see the finished file once
            time.sleep(0.01)
    finally:
        stop.set()
        t.join()
    assert seen and set(seen) == {len(data)}


# ----------------------------------------------------------------------------------- offline

@pytest.mark.parametrize("var", ["FLOWVISION_OFFLINE", "HF_HUB_OFFLINE"])
def test_offline_with_empty_cache_names_url_and_path(srv, monkeypatch, var):
    url = _serve(srv, "off-1234abcd.pth", b"x")
    monkeypatch.setenv(var, "1")
    with pytest.raises(OfflineError) as ei:
        load_state_dict_from_url(url, progress=False)
    msg = str(ei.value)
    expected = os.path.join(hub.get_dir(), "checkpoints", "off-1234abcd.pth")
    assert url in msg and expected in msg and var in msg and "put it at" in msg
    assert ei.value.path == expected and ei.value.url == url
    assert "/off-1234abcd.pth" not in srv.hits


def test_offline_uses_a_verified_cached_file(srv, tmp_path, monkeypatch):
    data = _payload(1000, 15)
    url = _serve(srv, "o.bin", data)
    dst = str(tmp_path / "o.bin")
    cached_download(url, dst, progress=False)
    monkeypatch.setenv("FLOWVISION_OFFLINE", "1")
    assert cached_download(url, dst, sha256=_sha(data), progress=False) == dst
    with open(dst, "ab") as f:
        f.write(b"!")
    with pytest.raises(OfflineError, match="corrupt"):
        cached_download(url, dst, sha256=_sha(data), progress=False)
    assert len(srv.hits["/o.bin"]) == 1


# ----------------------------------------------------------------------------------- Hugging Face

def test_hf_url_building(monkeypatch):
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert parse_hf_id("hf_hub:timm/resnet50.a1_in1k") == ("timm/resnet50.a1_in1k", "main")
    assert parse_hf_id("hf_hub:timm/vit@v1.0") == ("timm/vit", "v1.0")
    assert hf_hub_url("timm/resnet50.a1_in1k") == \
        "https://huggingface.co/timm/resnet50.a1_in1k/resolve/main/model.safetensors"
    monkeypatch.setenv("HF_ENDPOINT", "https://mirror.example/")
    assert hf_hub_url("timm/x", revision="refs/pr/1") == \
        "https://mirror.example/timm/x/resolve/refs%2Fpr%2F1/model.safetensors"
    for bad in ("hf_hub:noslash", "hf_hub:a/b/c", "hf_hub:../x", "hf_hub:a/b@"):
        with pytest.raises(ValueError):
            parse_hf_id(bad)


def _st_bytes(tmp_path, seed=0):
    from safetensors.numpy import save_file
    arrs = {"w": np.random.default_rng(seed).standard_normal((4, 3)).astype(np.float32), "n": np.arange(5)}
    p = tmp_path / f"m{seed}.safetensors"
    save_file(arrs, str(p))
    return p.read_bytes(), arrs


def test_hf_download_through_endpoint(srv, tmp_path, monkeypatch):
    blob, arrs = _st_bytes(tmp_path)
    srv.files["/timm/tiny.test/resolve/main/model.safetensors"] = blob
    monkeypatch.setenv("HF_ENDPOINT", srv.base)
    sd = load_state_dict_from_url("hf_hub:timm/tiny.test", progress=False, sha256=_sha(blob), as_numpy=True)
    assert list(sd) == ["n", "w"] or set(sd) == {"n", "w"}
    np.testing.assert_array_equal(sd["w"], arrs["w"])
    local = hf_local_path("timm/tiny.test")
    assert os.path.isfile(local) and local.startswith(hub.get_dir())
    load_state_dict_from_url("hf_hub:timm/tiny.test", progress=False, as_numpy=True)
    assert len(srv.hits["/timm/tiny.test/resolve/main/model.safetensors"]) == 1


@pytest.mark.parametrize("where", ["HF_HUB_CACHE", "HF_HOME", "default"])
def test_hf_cache_is_reused_without_network(srv, tmp_path, monkeypatch, where):
    blob, arrs = _st_bytes(tmp_path, 1)
    if where == "HF_HUB_CACHE":
        cache = tmp_path / "hfc"
        monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    elif where == "HF_HOME":
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hfh"))
        cache = tmp_path / "hfh" / "hub"
    else:
        cache = tmp_path / "xdg" / "huggingface" / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--timm--cached.model"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "blobs").mkdir()
    (repo / "blobs" / _sha(blob)).write_bytes(blob)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    os.symlink(os.path.join("..", "..", "blobs", _sha(blob)), snap / "model.safetensors")
    monkeypatch.setenv("HF_ENDPOINT", srv.base)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # proves no network is needed
    assert find_in_hf_cache("timm/cached.model") == str(snap / "model.safetensors")
    assert find_in_hf_cache("timm/cached.model", revision=commit) == str(snap / "model.safetensors")
    assert find_in_hf_cache("timm/cached.model", revision="v2") is None
    sd = load_state_dict_from_url("hf_hub:timm/cached.model", sha256=_sha(blob), as_numpy=True)
    np.testing.assert_array_equal(sd["w"], arrs["w"])
    assert srv.hits == {}
    # a cached copy whose hash is wrong is not used
    with pytest.raises(OfflineError):
        load_state_dict_from_url("hf_hub:timm/cached.model", sha256="1" * 64, as_numpy=True)


# ----------------------------------------------------------------------------------- end to end

def test_load_state_dict_from_url_torch_checkpoint(srv, tmp_path):
    torch = pytest.importorskip("torch")
    sd = {"module.conv.weight": torch.randn(4, 3, 3, 3), "module.bn.running_var": torch.rand(4)}
    p = tmp_path / "ck.pth"
    torch.save({"state_dict": sd, "epoch": 7}, str(p))
    data = p.read_bytes()
    name = f"ck-{_sha(data)[:10]}.pth"
    url = _serve(srv, name, data)
    out = load_state_dict_from_url(url, model_dir=str(tmp_path / "md"), check_hash=True, progress=False,
                                   map_location="cpu", as_numpy=True)
    assert list(out) == ["conv.weight", "bn.running_var"]
    np.testing.assert_array_equal(out["conv.weight"], sd["module.conv.weight"].numpy())
    assert os.path.isfile(tmp_path / "md" / name)
    out2 = load_state_dict_from_url(url, model_dir=str(tmp_path / "md"), file_name="renamed.pth", progress=False,
                                    as_numpy=True)
    assert os.path.isfile(tmp_path / "md" / "renamed.pth") and list(out2) == list(out)


def test_load_state_dict_from_url_returns_engine_tensors_when_available(srv, tmp_path):
    blob, arrs = _st_bytes(tmp_path, 2)
    url = _serve(srv, "eng.safetensors", blob)
    out = load_state_dict_from_url(url, progress=False)
    from flowvision.hub.api import _backend
    backend = _backend()
    for k, v in out.items():
        if backend is None:
            assert isinstance(v, np.ndarray)
        else:
            v = v.numpy()
        np.testing.assert_array_equal(np.asarray(v), arrs[k])


# ----------------------------------------------------------------------------------- processes

_CHILD = textwrap.dedent("""
    import sys, time, os
    url, dst, sha, go = sys.argv[1:5]
    from flowvision.hub import cached_download, sha256_file
    while not os.path.exists(go):
        time.sleep(0.005)
    p = cached_download(url, dst, sha256=sha, progress=False)
    print(sha256_file(p))
""")


def test_concurrent_processes_download_once(srv, tmp_path):
    n_procs = 8
    data = _payload(2_000_000, 16)
    url = _serve(srv, "shared.bin", data)
    srv.throttle["/shared.bin"] = 0.02  # ~0.6 s transfer: the others arrive while it runs
    dst = str(tmp_path / "cache" / "shared.bin")
    go = str(tmp_path / "go")
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, url, dst, _sha(data), go], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n_procs)]
    time.sleep(0.3)
    open(go, "w").close()
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == _sha(data)
    assert len(srv.hits["/shared.bin"]) == 1
    assert open(dst, "rb").read() == data


def test_threads_download_once(srv, tmp_path):
    data = _payload(500_000, 17)
    url = _serve(srv, "threads.bin", data)
    srv.throttle["/threads.bin"] = 0.01
    dst = str(tmp_path / "threads.bin")
    errors = []

    def run():
        try:
            cached_download(url, dst, sha256=_sha(data), progress=False)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(srv.hits["/threads.bin"]) == 1


def test_hf_falls_back_to_pytorch_model_bin(srv, tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    p = tmp_path / "pm.bin"
    torch.save({"w": torch.arange(4.0)}, str(p))
    srv.files["/timm/old.repo/resolve/main/pytorch_model.bin"] = p.read_bytes()
    monkeypatch.setenv("HF_ENDPOINT", srv.base)
    sd = load_state_dict_from_url("hf_hub:timm/old.repo", progress=False, as_numpy=True)
    np.testing.assert_array_equal(sd["w"], np.arange(4.0, dtype=np.float32))
    assert len(srv.hits["/timm/old.repo/resolve/main/model.safetensors"]) == 1  # 404, not retried
    # afterwards the cached .bin is used without any request, online or offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    load_state_dict_from_url("hf_hub:timm/old.repo", progress=False, as_numpy=True)
    assert len(srv.hits["/timm/old.repo/resolve/main/model.safetensors"]) == 1
    assert len(srv.hits["/timm/old.repo/resolve/main/pytorch_model.bin"]) == 1
    # a repo with neither file: the error is about model.safetensors
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with pytest.raises(DownloadError, match="model.safetensors") as ei:
        load_state_dict_from_url("hf_hub:timm/none.repo", progress=False)
    assert ei.value.status == 404
