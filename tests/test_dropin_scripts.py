"""Drop-in scripts: torch/torchvision training scripts (tests/scripts/, each mirroring a pytorch/examples
script's API surface) run on flowvision with only their import lines rewritten, on tiny generated data.

``DROPIN_EXAMPLES=/path/to/pytorch-examples`` additionally runs the real examples the same way
(those tests skip only when that checkout is absent: nothing is fetched here).
"""
import os
from pathlib import Path

import pytest

from tests.dropin.fixtures import write_image_folder, write_mnist_raw
from tests.dropin.rewrite import rewrite_source, run

SCRIPTS = Path(__file__).parent / "scripts"
# script -> where it expects MNIST (relative to the script's directory) or None
OWN = {"mnist.py": "../data", "vae.py": "../data", "dcgan.py": None, "siamese.py": "../data",
       "forward_forward.py": "./data", "super_resolution.py": None, "fast_neural_style.py": None,
       "imagenet.py": None, "hogwild.py": "../data"}


def _workdir(tmp_path, mnist):
    (tmp_path / "code").mkdir()
    if mnist:
        write_mnist_raw(str((tmp_path / "code" / mnist).resolve()))
    return tmp_path


def _check(r):
    assert r.returncode == 0, f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-5000:]}"
    assert "RESULT ok" in r.stdout, r.stdout[-3000:]


@pytest.mark.parametrize("script", list(OWN))
def test_script_runs_on_flowvision(script, tmp_path):
    r = run(SCRIPTS, script, [], "flowvision", timeout=300, workdir=_workdir(tmp_path, OWN[script]))
    _check(r)


def test_imagenet_script_resumes_and_evaluates(tmp_path):
    work = _workdir(tmp_path, None)
    _check(run(SCRIPTS, "imagenet.py", [], "flowvision", timeout=300, workdir=work))
    r = run(SCRIPTS, "imagenet.py", ["--resume", "checkpoint.pth.tar", "--evaluate"], "flowvision", timeout=300,
            workdir=work)
    _check(r)
    assert "loaded checkpoint" in r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("script", list(OWN))
def test_script_is_valid_torch_code(script, tmp_path):
    pytest.importorskip("torchvision")
    r = run(SCRIPTS, script, [], "torch", timeout=600, workdir=_workdir(tmp_path, OWN[script]))
    _check(r)


def test_rewrite_changes_only_import_lines():
    src = ("import torch\nimport torch.nn as nn\nimport torch.nn.parallel\nfrom torch import nn, optim\n"
           "import torchvision.transforms as T\nfrom torchvision.utils import save_image\n"
           "from __future__ import annotations\nimport os, torch\nx = torch.zeros(1)  # import torch\n"
           "    from torch.utils.data import DataLoader\n")
    out = rewrite_source(src).splitlines()
    assert out == ["import flowvision.backend as torch", "import flowvision.backend.nn as nn",
                   "import flowvision.backend.nn.parallel, flowvision.backend as torch",
                   "from flowvision.backend import nn, optim", "import flowvision.transforms as T",
                   "from flowvision.utils import save_image", "from __future__ import annotations",
                   "import os, flowvision.backend as torch", "x = torch.zeros(1)  # import torch",
                   "    from flowvision.backend.utils.data import DataLoader"]


# ------------------------------------------------------------------ the real pytorch/examples, when present
EXAMPLES = os.environ.get("DROPIN_EXAMPLES")
REAL = {
    "mnist": ("main.py", ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "64"], "../data", []),
    "vae": ("main.py", ["--epochs", "1", "--batch-size", "32"], "../data", []),
    "siamese_network": ("main.py", ["--epochs", "1", "--batch-size", "16", "--test-batch-size", "32", "--dry-run"],
                        "../data", []),
    "mnist_forward_forward": ("main.py", ["--epochs", "2", "--train_size", "64", "--test_size", "32"], "./data", []),
    "mnist_hogwild": ("main.py", ["--epochs", "1", "--num-processes", "2", "--batch-size", "32",
                                  "--test-batch-size", "64"], "../data", []),
    "dcgan": ("main.py", ["--dataset", "fake", "--niter", "1", "--batchSize", "4", "--imageSize", "64", "--ngf", "8",
                          "--ndf", "8", "--nz", "16", "--dry-run", "--outf", "out"], None, []),
    "super_resolution": ("main.py", ["--upscale_factor", "2", "--batchSize", "4", "--testBatchSize", "2",
                                     "--nEpochs", "1", "--threads", "0"], None,
                         [("dataset/BSDS300/images", ("train", "test"))]),
    "imagenet": ("main.py", ["imnet", "-a", "resnet18", "--epochs", "1", "-b", "4", "-j", "0", "-p", "1"], None,
                 [("imnet/train", ("a", "b")), ("imnet/val", ("a", "b"))]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REAL))
def test_real_example_runs_on_flowvision(name, tmp_path):
    if not EXAMPLES or not (Path(EXAMPLES) / name).is_dir():
        pytest.skip("set DROPIN_EXAMPLES to a pytorch/examples checkout to run the real scripts")
    script, args, mnist, folders = REAL[name]
    work = _workdir(tmp_path, mnist)
    for rel, classes in folders:
        write_image_folder(str(work / "code" / rel), classes)
    r = run(Path(EXAMPLES) / name, script, args, "flowvision", timeout=600, workdir=work)
    assert r.returncode == 0, f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-5000:]}"


@pytest.mark.slow
def test_real_fast_neural_style_eval_on_a_torch_checkpoint(tmp_path):
    """Training needs VGG16's ImageNet weights (a download); the eval path runs on a checkpoint torch wrote."""
    src = Path(EXAMPLES or "") / "fast_neural_style" / "neural_style"
    if not EXAMPLES or not src.is_dir():
        pytest.skip("set DROPIN_EXAMPLES to a pytorch/examples checkout to run the real scripts")
    torch = pytest.importorskip("torch")
    import importlib.util
    import numpy as np
    from PIL import Image
    spec = importlib.util.spec_from_file_location("transformer_net", src / "transformer_net.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    ref = mod.TransformerNet().eval()
    work = _workdir(tmp_path, None)
    torch.save(ref.state_dict(), work / "code" / "tn.pth")
    img = np.random.default_rng(0).integers(0, 256, (24, 28, 3), dtype=np.uint8)
    Image.fromarray(img).save(work / "code" / "c.png")
    r = run(src, "neural_style.py", ["eval", "--content-image", "c.png", "--model", "tn.pth", "--output-image",
                                     "o.png"], "flowvision", timeout=300, workdir=work)
    assert r.returncode == 0, r.stderr[-3000:]
    with torch.no_grad():
        x = torch.tensor(img.transpose(2, 0, 1)[None].astype(np.float32))
        expect = ref(x)[0].clamp(0, 255).numpy().transpose(1, 2, 0).astype("uint8")
    got = np.asarray(Image.open(work / "code" / "o.png"))
    assert got.shape == expect.shape and np.abs(got.astype(int) - expect.astype(int)).max() <= 1
