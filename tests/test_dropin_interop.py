"""torch interop for drop-in scripts: flowvision transforms feeding torch's DataLoader/default_collate,
checkpoints (Namespace, modules, nested state dicts, allow-list, format="torch" read by torch.load), a malicious
checkpoint refused, shared-memory tensors across processes, and the start-up switches scripts set."""
import argparse
import io
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import flowvision.backend as fb
from flowvision.backend import nn


def test_default_collate_batches_flowvision_transform_output():
    torch = pytest.importorskip("torch")
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset, default_collate
    import flowvision.transforms as T
    tf = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))])
    import torchvision.transforms as TT
    ref_tf = TT.Compose([TT.ToTensor(), TT.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))])
    imgs = [Image.fromarray(np.random.default_rng(i).integers(0, 256, (7, 9, 3), dtype=np.uint8)) for i in range(5)]

    class Images(Dataset):
        def __init__(self, t):
            self.t = t

        def __len__(self):
            return len(imgs)

        def __getitem__(self, i):
            return self.t(imgs[i]), {"idx": i, "name": f"img{i}"}

    ours = list(DataLoader(Images(tf), batch_size=2))
    ref = list(DataLoader(Images(ref_tf), batch_size=2))
    for (x, meta), (rx, rmeta) in zip(ours, ref):
        assert isinstance(x, torch.Tensor) and x.dtype == rx.dtype
        np.testing.assert_allclose(x.numpy(), rx.numpy(), rtol=1e-6, atol=1e-6)
        assert meta["idx"].tolist() == rmeta["idx"].tolist() and meta["name"] == rmeta["name"]
    out = default_collate([(fb.ones(2, dtype=fb.int64), 1.5), (fb.zeros(2, dtype=fb.int64), 2.5)])
    assert out[0].dtype == torch.int64 and out[0].tolist() == [[1, 1], [0, 0]]


def _model():
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))


def test_checkpoint_with_namespace_modules_and_nested_state_dicts_round_trips(tmp_path):
    m = _model()
    opt = fb.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(fb.randn(2, 1, 4, 4)).sum().backward()
    opt.step()
    ckpt = {"args": argparse.Namespace(lr=0.1, arch="net", sizes=[1, 2]), "epoch": 3, "best_acc1": fb.tensor(0.75),
            "state_dict": m.state_dict(), "optimizer": opt.state_dict(), "model": m, "device": fb.device("cpu")}
    path = tmp_path / "ck.pth.tar"
    fb.save(ckpt, path)
    back = fb.load(path)
    assert back["args"] == ckpt["args"] and back["epoch"] == 3 and back["device"] == fb.device("cpu")
    assert float(back["best_acc1"]) == 0.75
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(back["state_dict"][k].numpy(), v.numpy())
    x = fb.randn(2, 1, 4, 4)
    m.eval(), back["model"].eval()
    np.testing.assert_array_equal(back["model"](x).detach().numpy(), m(x).detach().numpy())
    opt2 = fb.optim.SGD(m.parameters(), lr=0.5)
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["momentum"] == 0.9


class _UserConfig:
    def __init__(self):
        self.size, self.names = 3, ["a"]


def test_allow_list_for_user_classes(tmp_path):
    path = tmp_path / "cfg.pt"
    fb.save({"cfg": _UserConfig()}, path)
    with pytest.raises(fb.serialization.UnsafeObjectError, match="add_safe_globals"):
        fb.load(path)
    with fb.serialization.safe_globals([_UserConfig]):
        assert fb.load(path)["cfg"].names == ["a"]
    with pytest.raises(fb.serialization.UnsafeObjectError):
        fb.load(path)  # the context manager's allowance ended
    assert fb.load(path, weights_only=False)["cfg"].size == 3
    with pytest.raises(TypeError, match="functions"):
        fb.save({"fn": lambda x: x}, tmp_path / "bad.pt")


def test_crafted_files_are_refused(tmp_path):
    # our format: metadata naming a function (or a class with side effects) instead of an allowed class
    import json
    from flowvision.backend.serialization import _serialize
    for target in ("os:system", "builtins:eval", "subprocess:Popen"):
        doc = {"version": 1, "root": {"O": target, "state": {"D": [], "cls": "dict"}}}
        path = tmp_path / "crafted.pt"
        path.write_bytes(_serialize({}, set(), {"flowvision": json.dumps(doc)}))
        with pytest.raises(fb.serialization.UnsafeObjectError, match="allow-list"):
            fb.load(path)
        if target != "subprocess:Popen":
            with pytest.raises(fb.serialization.UnsafeObjectError, match="not a class"):
                fb.load(path, weights_only=False)

    # a torch-style pickle that would call os.system on unpickling
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps({"x": Evil()}, protocol=2))
        zf.writestr("archive/version", "3\n")
    (tmp_path / "evil.pt").write_bytes(buf.getvalue())
    with pytest.raises(Exception, match="(?i)unsafe|not allowed|allow"):
        fb.load(tmp_path / "evil.pt")
    assert not (tmp_path / "pwned").exists()


def test_format_torch_is_read_by_torch_load(tmp_path):
    torch = pytest.importorskip("torch")
    m = _model()
    m(fb.randn(2, 1, 4, 4))
    sd = m.state_dict()
    obj = {"state_dict": sd, "epoch": 2, "lrs": [0.1, 0.01], "shape": fb.Size([2, 3]), "dtype": fb.float16,
           "half": fb.randn(3).half(), "bf16": fb.randn(3).to(fb.bfloat16), "mask": fb.tensor([True, False]),
           "view": fb.arange(12.0).reshape(3, 4).t(), "param": nn.Parameter(fb.ones(2))}
    path = tmp_path / "w.pt"
    fb.save(obj, path, format="torch")
    ref = torch.load(path, weights_only=True)
    assert list(ref["state_dict"]) == list(sd)
    for k, v in sd.items():
        assert tuple(ref["state_dict"][k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(ref["state_dict"][k].numpy(), v.numpy())
    assert ref["epoch"] == 2 and ref["lrs"] == [0.1, 0.01] and tuple(ref["shape"]) == (2, 3)
    assert ref["dtype"] is torch.float16 and ref["half"].dtype == torch.float16
    assert ref["bf16"].dtype == torch.bfloat16
    np.testing.assert_array_equal(ref["bf16"].float().numpy(), obj["bf16"].float().numpy())
    np.testing.assert_array_equal(ref["view"].numpy(), obj["view"].numpy())
    assert isinstance(ref["param"], torch.nn.Parameter)
    tm = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(), torch.nn.Flatten(),
                             torch.nn.Linear(8, 3))
    tm.load_state_dict(ref["state_dict"])
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    m.eval(), tm.eval()
    np.testing.assert_allclose(tm(torch.tensor(x)).detach().numpy(), m(fb.tensor(x)).detach().numpy(), atol=1e-5)
    torch.load(path, weights_only=True, mmap=True)  # records are aligned for mmap
    back = fb.load(path)  # and flowvision reads its own torch-format file
    np.testing.assert_array_equal(back["state_dict"]["4.weight"].numpy(), sd["4.weight"].numpy())
    with pytest.raises(TypeError, match="state_dict"):
        fb.save({"model": m}, tmp_path / "m.pt", format="torch")
    with pytest.raises(ValueError, match="format"):
        fb.save(sd, tmp_path / "x.pt", format="onnx")


def test_hogwild_children_update_the_parents_model(tmp_path):
    script = tmp_path / "hog.py"
    script.write_text(textwrap.dedent("""
        import flowvision.backend as torch
        import flowvision.backend.multiprocessing as mp
        import flowvision.backend.nn as nn

        def train(rank, model, q):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                model(torch.ones(1, 3)).sum().backward()
                opt.step()
            q.put(rank)

        if __name__ == "__main__":
            mp.set_start_method("spawn", force=True)
            m = nn.Linear(3, 2)
            m.share_memory()
            assert all(p.is_shared() for p in m.parameters())
            before = m.weight.detach().clone()
            q = mp.Queue()
            ps = [mp.Process(target=train, args=(r, m, q)) for r in range(2)]
            [p.start() for p in ps]
            [p.join() for p in ps]
            assert sorted(q.get() for _ in ps) == [0, 1]
            # each child took 3 SGD steps of -0.1 * dL/dW = -0.1 on every weight
            print(float((before - m.weight).mean()))
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "FLOWVISION_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr
    assert abs(float(r.stdout.strip().splitlines()[-1]) - 0.6) < 1e-5


def _fill(rank, t):
    t[rank] = rank + 1.0


def test_spawn_and_queue_share_tensors():
    import flowvision.backend.multiprocessing as mp
    t = fb.zeros(3)
    mp.spawn(_fill, args=(t,), nprocs=3)
    assert t.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(mp.ProcessRaisedException, match="ZeroDivisionError"):
        mp.spawn(_boom, nprocs=1)


def _boom(rank):
    return 1 / 0


def test_startup_switches():
    import flowvision.backend.backends.cudnn as cudnn
    cudnn.benchmark, cudnn.deterministic = True, True
    assert not fb.backends.mps.is_available() and not fb.backends.cudnn.is_available()
    fb.use_deterministic_algorithms(True)
    assert fb.are_deterministic_algorithms_enabled()
    fb.use_deterministic_algorithms(False)
    fb.set_float32_matmul_precision("high")
    assert fb.get_float32_matmul_precision() == "high"
    fb.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="matmul precision"):
        fb.set_float32_matmul_precision("low")
    assert fb.accelerator.is_available() == fb.cuda.is_available()
    if not fb.cuda.is_available():
        assert fb.accelerator.current_accelerator() is None and fb.accelerator.device_count() == 0
    with pytest.raises(NotImplementedError, match="flowvision.compile"):
        fb.onnx.export(_model(), fb.randn(1, 1, 4, 4), "m.onnx")
    m = _model()
    assert fb.jit.script(m) is m and fb.jit.trace(m, fb.randn(1, 1, 4, 4)) is m
    with pytest.raises(NotImplementedError, match="flowvision.save"):
        fb.jit.save(m, "m.pt")
    assert type(fb.hub.load("pytorch/vision", "resnet18", weights=None)).__name__ == "ResNet"
    with pytest.raises(NotImplementedError, match="local hubconf"):
        fb.hub.load("someone/repo", "model")
