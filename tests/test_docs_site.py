"""The documentation site: ``mkdocs build --strict`` passes, the zoo table lists every registered model and the API
reference renders every public callable (checked in the built HTML, not in the generated Markdown).

``.ci/run`` builds the site once and passes its directory in ``FLOWVISION_DOCS_SITE``; without it the test builds
the site itself (about 30 s of CPU).
"""
import html
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import public_api  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    given = os.environ.get("FLOWVISION_DOCS_SITE")
    if given:
        assert os.path.isfile(os.path.join(given, "index.html")), f"FLOWVISION_DOCS_SITE={given} holds no built site"
        return given
    pytest.importorskip("mkdocs", reason="the docs extra (pip install '.[docs]') builds the site")
    out = str(tmp_path_factory.mktemp("site"))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", out], cwd=ROOT,
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


def _read(site, page):
    with open(os.path.join(site, page, "index.html"), encoding="utf-8") as f:
        return f.read()


def test_zoo_table_lists_every_registered_model(site):
    import flowvision.models as fm
    page = html.unescape(_read(site, "zoo"))
    rows = re.findall(r"<tr>\s*<td><code>([^<]+)</code></td>", page)
    assert rows == fm.list_models()
    # the columns the page promises, with values for a well-known model
    resnet = re.search(r"<tr>\s*<td><code>resnet50</code></td>(.*?)</tr>", page, re.S).group(1)
    cells = re.findall(r"<td>(.*?)</td>", resnet, re.S)
    assert cells[1] == "25.56" and cells[2] == "8.18"  # params (M), GFLOPs at 224x224
    assert "76.13 (tv_in1k)" in cells[5] and "torchvision" in cells[5]


def test_api_reference_renders_every_public_callable(site):
    missing = []
    total = 0
    for slug, module, _title, defined_in in public_api.MODULES:
        page = _read(site, f"reference/{slug}")
        ids = set(re.findall(r'id="([^"]+)"', page))
        for name, obj in public_api.public_callables(module, defined_in).items():
            total += 1
            canonical = f"{getattr(obj, '__module__', module)}.{getattr(obj, '__qualname__', name)}"
            if canonical not in ids and f"{module}.{name}" not in ids:
                missing.append(f"{module}.{name}")
    assert total > 500
    assert not missing, missing


def test_user_guide_pages_are_in_the_site(site):
    for page in ("getting-started", "guide/models", "guide/transforms", "guide/compile", "guide/cli",
                 "guide/environment", "guide/troubleshooting", "training", "datasets", "distributed", "drop-in",
                 "architecture", "changelog"):
        assert os.path.isfile(os.path.join(site, page, "index.html")), page
    start = html.unescape(re.sub(r"<[^>]+>", "", _read(site, "getting-started")))
    assert "C++17" in start and "CMake" in start and "flowvision predict examples/chelsea.jpg" in start


def test_zoo_stats_cover_the_registry_and_match_flowvision_models():
    """Every registered model has recorded params/GFLOPs (else: python tools/zoo_stats.py), and the recorded
    parameter count equals flowvision's own model for a sample across families."""
    import flowvision.models as fm
    from flowvision.models._availability import zoo_stats
    missing = [n for n in fm.list_models() if zoo_stats(n) is None]
    assert not missing, f"run python tools/zoo_stats.py; no stats for {missing}"
    for name in ("resnet18", "tf_efficientnet_lite0", "mobilenetv3_small_100", "vit_tiny_patch16_224",
                 "convnext_atto", "van_b0"):
        if name not in fm.list_models():
            continue
        ours = sum(int(p.numel()) for p in fm.create_model(name).parameters())
        assert zoo_stats(name)["params"] == ours, name
    assert zoo_stats("resnet50.a1_in1k")["gflops"] == pytest.approx(8.18, abs=0.01)  # 2 x 4.09 GMACs (timm's table)
