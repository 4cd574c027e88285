"""The fuzz harnesses of ``tests/fuzz``: seed corpora parse, past findings stay fixed, and each harness runs briefly.

The long coverage-guided runs are local (``tests/fuzz/long_run.sh``); CI replays every committed input and gives
each atheris harness a few seconds (about a minute in all).
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(HERE, "fuzz")
sys.path.insert(0, FUZZ)
import targets  # noqa: E402

def _inputs(kind, name):
    d = os.path.join(FUZZ, kind, name)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_seed_corpus_parses(name):
    """Every seed is a valid input: the target runs to completion (so a fuzzed error path is a real deviation)."""
    seeds = _inputs("corpus", name)
    assert seeds, f"no seed corpus for {name}"
    for seed in seeds:
        with open(os.path.join(FUZZ, "corpus", name, seed), "rb") as f:
            data = f.read()
        assert len(data) <= 16384, f"seed {name}/{seed} is larger than a seed needs to be"
        targets.TARGETS[name](data)


REGRESSIONS = [(t, f) for t in sorted(os.listdir(os.path.join(FUZZ, "regressions"))) for f in _inputs("regressions", t)]


@pytest.mark.parametrize("name,case", REGRESSIONS, ids=[f"{t}/{f}" for t, f in REGRESSIONS])
def test_regression_input_gives_documented_error(name, case):
    """Inputs that once crashed a parser (or made it allocate gigabytes) now give the parser's own error."""
    import resource
    with open(os.path.join(FUZZ, "regressions", name, case), "rb") as f:
        data = f.read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(targets.allowed_errors(name)) as info:
        targets.TARGETS[name](data)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200, f"{name}/{case} made the process grow by {grown_mb:.0f} MB"
    assert str(info.value)


def test_memo_index_bomb_is_refused_before_allocation(tmp_path):
    """A damaged PUT index (10**8) in a legacy checkpoint or a CIFAR pickle is refused, not turned into a 1 GB memo."""
    from flowvision.datasets.utils import CorruptDatasetError
    from flowvision.datasets._readers import read_restricted_pickle
    from flowvision.hub.errors import CheckpointError
    from flowvision.hub.pickle_reader import read_torch_checkpoint
    with open(os.path.join(FUZZ, "regressions", "torch_legacy", "huge-memo-index"), "rb") as f:
        legacy = f.read()
    p = tmp_path / "legacy.pth"
    p.write_bytes(legacy)
    with pytest.raises(CheckpointError, match=r"memo index 174417761"):
        read_torch_checkpoint(str(p))
    q = tmp_path / "data_batch_1"
    q.write_bytes(b"\x80\x02]r\x00\x00\x00\x10." )  # LONG_BINPUT 2**28
    with pytest.raises(CorruptDatasetError, match="memo index 268435456"):
        read_restricted_pickle(str(q))


def test_manifest_source_cannot_cache_outside_the_model_dir(tmp_path):
    """``file``/``revision``/``url`` in a manifest name the cache path: '..' parts are schema errors."""
    from flowvision.hub.manifest import validate_manifest
    sha = "a" * 64
    good = {"kind": "hf_hub", "hub_id": "o/r", "file": "sub/model.safetensors", "revision": "refs/pr/1",
            "sha256": sha, "size": 1, "format": "safetensors", "remap": None}

    def problems(**change):
        return validate_manifest({"schema_version": 1,
                                  "weights": {"m.t": {"license": "x", "sources": [{**good, **change}]}}})

    assert problems() == []
    assert "file must be a relative path" in " ".join(problems(file="../../x"))
    assert "file must be a relative path" in " ".join(problems(file="/etc/x"))
    assert "revision must be" in " ".join(problems(revision=".."))
    url = {"kind": "url", "hash_prefix": None, "sha256": sha, "size": None, "format": "npz", "remap": None}
    assert problems(**url, url="https://h/w-aaaaaaaa.npz") == []
    assert "url must end in a file name" in " ".join(problems(**url, url="https://h/.."))
    assert "url must end in a file name" in " ".join(problems(**url, url="https://h/"))


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_atheris_harness_runs_clean(name, tmp_path):
    """A few seconds of coverage-guided fuzzing per harness (about a minute for all ten): no crash, no leak."""
    pytest.importorskip("atheris")
    # libFuzzer's RSS limit reads the peak RSS, which Linux carries across fork+exec from this (pytest) process:
    # the limit is 2 GB on top of what the parent already holds
    import resource
    rss_limit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024 + 2048
    cmd = [sys.executable, os.path.join(FUZZ, "run.py"), name, "-max_total_time=4", "-seed=1", f"-rss_limit_mb={rss_limit}",
           f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus"), os.path.join(FUZZ, "corpus", name)]
    (tmp_path / "corpus").mkdir()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    tail = (r.stdout + r.stderr)[-4000:]
    assert r.returncode == 0, f"fuzzer found a failure in {name}:\n{tail}"
    assert "DONE" in tail and "cov:" in tail, tail
