"""Package metadata and wheel contents: what ``pip show`` and an installed wheel give a user.

The fast tests read pyproject.toml and apply scikit-build-core's own include/exclude matching (gitignore-style
patterns via ``pathspec``); the wheel test builds the real wheel with ``pip wheel`` once. It reuses the CMake build
directory that ``pip install -e .`` left in ``build/`` (seconds); from a clean tree it compiles the C++ (minutes).
"""
import fcntl
import pathlib
import subprocess
import sys
import zipfile
from email.parser import Parser

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
SKBUILD = PYPROJECT["tool"]["scikit-build"]


def test_license_file_exists_and_matches_the_declared_license():
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0" in text


def test_metadata_fields_are_set():
    assert PROJECT["authors"] and PROJECT["authors"][0]["name"]
    urls = PROJECT["urls"]
    assert {"Homepage", "Documentation", "Repository", "Changelog"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    classifiers = PROJECT["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Programming Language :: Python :: 3") for c in classifiers)
    # PEP 639: a license expression excludes "License ::" classifiers
    assert not any(c.startswith("License ::") for c in classifiers)
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
    assert (ROOT / "flowvision" / "py.typed").is_file()


def test_wheel_exclude_drops_developer_scripts_and_keeps_package_data():
    pathspec = pytest.importorskip("pathspec")  # a dependency of scikit-build-core, which builds the wheel
    spec = pathspec.GitIgnoreSpec.from_lines(SKBUILD["wheel.exclude"] if "wheel.exclude" in SKBUILD
                                             else SKBUILD["wheel"]["exclude"])
    assert spec.match_file("flowvision/weights/generate_manifest.py")
    assert spec.match_file("flowvision/backend/csrc/cpu/gemm.cpp")
    for kept in ("flowvision/weights/manifest.json", "flowvision/py.typed", "flowvision/models/__init__.py",
                 "flowvision/cli.py"):
        assert not spec.match_file(kept), kept
    sdist_spec = pathspec.GitIgnoreSpec.from_lines(SKBUILD["sdist.exclude"] if "sdist.exclude" in SKBUILD
                                                   else SKBUILD["sdist"]["exclude"])
    for kept in ("LICENSE", "CHANGELOG.md", "weights/generate_manifest.py", "pyproject.toml"):
        assert not sdist_spec.match_file(kept), kept


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # one build at a time in the shared build/ directory (the same lock the editable rebuilds take)
    with open("/tmp/fv_build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                               "-q", "-w", str(out)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("flowvision-*.whl")
    return wheel


def test_wheel_contents(built_wheel):
    with zipfile.ZipFile(built_wheel) as z:
        names = z.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(f"{dist_info}/METADATA").decode())
        license_text = z.read(f"{dist_info}/licenses/LICENSE").decode()
    assert "Apache License" in license_text
    assert not [n for n in names if n.endswith("generate_manifest.py")]
    assert not [n for n in names if "/csrc/" in n]
    for needed in ("flowvision/py.typed", "flowvision/weights/manifest.json", "flowvision/cli.py"):
        assert needed in names
    assert [n for n in names if n.startswith("flowvision/backend/_C.") and n.endswith(".so")]
    assert meta["Name"] == "flowvision"
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Author-Email"] and "flowvision maintainers" in meta["Author-Email"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Repository", "Changelog"} <= set(urls)
    assert "Typing :: Typed" in meta.get_all("Classifier")
    assert meta["Requires-Python"] == ">=3.9"
