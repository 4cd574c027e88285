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


def test_every_atheris_harness_runs_clean(tmp_path, capsys):
    """Coverage-guided fuzzing of every harness, two at a time: no crash, leak, timeout or out-of-memory input.

    ``FLOWVISION_FUZZ_SECONDS`` sets the time per harness: 4 by default, 60 in CI (``.ci/run``).
    """
    pytest.importorskip("atheris")
    import run_all
    seconds = int(os.environ.get("FLOWVISION_FUZZ_SECONDS", "4"))
    status = run_all.main(["--seconds", str(seconds), "--jobs", "2", "--artifacts", str(tmp_path)])
    out = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + out)  # the per-harness rates and coverage stay in the CI log
    assert status == 0, out
    assert out.count(" runs ") == len(targets.TARGETS), out
