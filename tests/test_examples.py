"""The scripts in examples/ run as documented (smoke tests on small inputs)."""
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")


def _run(*args, timeout=600):
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_classify_folder():
    from flowvision.hub import HubError, resolve_weights
    try:
        resolve_weights("tf_efficientnet_lite0.in1k", allow_download=False)
    except HubError:
        pytest.skip("the offline weights package (a flowvision dependency) is not installed")
    out = _run(os.path.join(EX, "classify_folder.py"), EX, "--batch-size", "2")
    assert re.search(r"chelsea\.jpg: (tiger cat|tabby, tabby cat|Egyptian cat) \(", out), out
    assert "coffee.jpg: espresso (" in out


def test_finetune_folder(tmp_path):
    rng = np.random.default_rng(0)
    for cls in ("a", "b"):
        (tmp_path / cls).mkdir()
        for i in range(4):
            Image.fromarray(rng.integers(0, 256, (36, 36, 3), dtype=np.uint8)).save(tmp_path / cls / f"{i}.png")
    out = _run(os.path.join(EX, "finetune_folder.py"), str(tmp_path), "--model", "resnet10t", "--epochs", "2",
               "--batch-size", "4", "--img-size", "32", "--workers", "0")
    losses = [float(v) for v in re.findall(r"epoch \d+: loss ([0-9.naninf]+)", out)]
    assert len(losses) == 2 and all(math.isfinite(v) for v in losses), out


def test_detect_draw(tmp_path):
    src = tmp_path / "in.png"
    Image.open(os.path.join(EX, "coffee.jpg")).resize((160, 120)).save(src)
    out_png = tmp_path / "out.png"
    out = _run(os.path.join(EX, "detect_draw.py"), str(src), str(out_png), "--no-pretrained", "--score-thresh", "0")
    n = int(re.match(r"(\d+) detection", out).group(1))
    drawn = np.asarray(Image.open(out_png))
    assert drawn.shape == (120, 160, 3)
    if n:
        assert (drawn != np.asarray(Image.open(src).convert("RGB"))).any()


def test_mixup_torch_loader():
    pytest.importorskip("torch")
    out = _run(os.path.join(EX, "mixup_torch_loader.py"), "--steps", "2", "--workers", "2")
    assert out.count("soft targets (8, 10)") == 2, out
