"""Batch inference on Ray Data: a local 2-CPU Ray instance on 127.0.0.1, 64 generated images, the captured model in
actors == single-process ``predict``; the CLI writes its file; a crashed actor is restarted and its batch retried.

Needs the ``ray`` extra: ``pip install "flowvision[ray]"``.
"""
import json
import os
import sys

import numpy as np
import pytest

INSTALL = 'pip install "flowvision[ray]"'
N_IMAGES = 64


@pytest.fixture(scope="module")
def ray_local():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        pytest.fail(f"Ray Data is not installed; these tests need it: {INSTALL}")
    if ray.is_initialized():
        ray.shutdown()
    # the crash test's actor class lives in this module: ship it to the workers by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
             object_store_memory=200 * 2**20, runtime_env={"env_vars": {"FLOWVISION_NUM_THREADS": "1"}})
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    """64 PNGs of varied sizes with structure (stripes, gradients), so the model's top-k are not ties."""
    from PIL import Image
    d = tmp_path_factory.mktemp("ray_images")
    rs = np.random.RandomState(0)
    for i in range(N_IMAGES):
        h, w = rs.randint(48, 112, 2)
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.stack([(xx * rs.randint(1, 7) + i * 11) % 256, (yy * rs.randint(1, 7)) % 256,
                        ((xx + yy) * rs.randint(1, 5) + rs.randint(0, 255)) % 256], -1).astype(np.uint8)
        Image.fromarray(img).save(d / f"img{i:02d}.png")
    return str(d)


def _assert_same_predictions(rows, reference):
    """rows: {path: (indices, probs)} from Ray; reference: classify() output. The captured plan folds BN, so
    probabilities agree to ~1e-5, and a class may only swap with a neighbour whose probability is that close."""
    assert set(rows) == {p for p, _ in reference}
    for path, top in reference:
        idx_ref = np.array([i for _, _, i in top])
        p_ref = np.array([p for _, p, _ in top])
        idx, p = rows[path]
        np.testing.assert_allclose(p, p_ref, atol=1e-4, err_msg=path)
        differ = idx != idx_ref
        if differ.any():  # only inside a near-tie
            gaps = np.abs(np.diff(p_ref))
            assert all(min(gaps[max(k - 1, 0):k + 1]) < 1e-4 for k in np.flatnonzero(differ)), path


def test_map_batches_inference_equals_single_process_predict(ray_local, image_dir, tmp_path):
    from flowvision.distributed.ray import classify_dataset, image_paths, write_results
    from flowvision.models._predict import classify

    paths = image_paths(image_dir)
    assert len(paths) == N_IMAGES
    ds = classify_dataset(paths, topk=5, actors=2, cpus_per_actor=0.75, read_cpus=0.5, batch_size=16)
    out = str(tmp_path / "preds.jsonl")
    summary = write_results(ds.iter_batches(batch_size=None, batch_format="numpy"), out)
    assert summary["images"] == N_IMAGES
    with open(out) as f:
        lines = [json.loads(line) for line in f]
    assert [r["path"] for r in lines] == paths  # sorted, one row per image
    rows = {r["path"]: (np.array(r["top_indices"]), np.array(r["top_probs"])) for r in lines}
    _assert_same_predictions(rows, classify(paths, topk=5))
    assert all(len(r["top_labels"]) == 5 and isinstance(r["top_labels"][0], str) for r in lines)


def test_cli_predict_ray_writes_parquet(ray_local, image_dir, tmp_path):
    import pyarrow.parquet as pq

    from flowvision.cli import main
    from flowvision.models._predict import classify

    out = str(tmp_path / "results.parquet")
    pattern = os.path.join(image_dir, "img0*.png")  # 10 images are enough for the command line
    rc = main(["predict", "--ray", pattern, "--out", out, "--actors", "1", "--cpus-per-actor", "1", "--topk", "3"])
    assert rc == 0
    table = pq.read_table(out).to_pylist()
    assert len(table) == 10 and set(table[0]) == {"path", "top_indices", "top_labels", "top_probs"}
    rows = {r["path"]: (np.array(r["top_indices"]), np.array(r["top_probs"])) for r in table}
    _assert_same_predictions(rows, classify(sorted(rows), topk=3))
    # bad invocations are refused with a message, not a traceback
    assert main(["predict", "--ray", pattern, "--out", str(tmp_path / "x.csv")]) == 2
    assert main(["predict", "--ray", os.path.join(image_dir, "nothing*.png"), "--out", out]) == 2
    assert main(["predict"]) == 2


class CrashOnceClassifier:
    """Kills its own process on the first batch it sees anywhere (a marker file makes it once per test)."""

    def __init__(self, marker, **kwargs):
        from flowvision.distributed.ray import BatchClassifier
        self.inner = BatchClassifier(**kwargs)
        self.marker = marker

    def __call__(self, batch):
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self.inner(batch)
        os.close(fd)
        os._exit(1)  # a hard crash: no Python exception reaches Ray


def test_crashed_actor_is_restarted_and_batch_retried(ray_local, image_dir, tmp_path):
    ray = ray_local
    from flowvision.distributed.ray import image_paths, write_results

    paths = image_paths(image_dir)[:16]
    marker = str(tmp_path / "crashed")
    ds = ray.data.read_images(paths, mode="RGB", include_paths=True, num_cpus=0.5)
    kwargs = dict(marker=marker, topk=3, num_threads=1, compile=False)  # retries are the point here, not capture
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
        ds = ds.map_batches(CrashOnceClassifier, fn_constructor_kwargs=kwargs, batch_size=8,
                            compute=ray.data.ActorPoolStrategy(size=1), num_cpus=1, batch_format="numpy",
                            max_restarts=2, max_task_retries=2)
    summary = write_results(ds.iter_batches(batch_size=None, batch_format="numpy"), str(tmp_path / "r.jsonl"))
    assert os.path.exists(marker)  # the crash happened
    assert summary["images"] == 16  # ... and every image still came back
    assert len(summary["actor_pids"]) == 1  # served by the restarted actor, a new process
    with open(tmp_path / "r.jsonl") as f:
        assert sorted(json.loads(line)["path"] for line in f) == paths
