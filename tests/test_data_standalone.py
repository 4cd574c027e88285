"""flowvision.data used on its own: import hygiene, torch DataLoader, flowvision DataLoader, seeding."""
import subprocess
import sys

import numpy as np
import pytest

import flowvision.data as fd


def test_import_pulls_no_models_transforms_or_torch():
    code = ("import sys, flowvision.data as d; d.Mixup(); d.rand_augment_transform('rand-m9-mstd0.5-inc1'); "
            "d.RandomErasing(); bad = [m for m in sys.modules if m.startswith(('flowvision.models', "
            "'flowvision.transforms', 'torch', 'timm', 'flowvision.layers'))]; print(bad); assert not bad, bad")
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(fd.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


class _AugDataset:
    """uint8 HWC images -> RandAugment -> float CHW normalised -> RandomErasing (all in the worker)."""

    def __init__(self, n=16, as_torch=True, same=False):
        r = np.random.default_rng(0)
        self.imgs = r.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        if same:  # identical images: any difference between samples comes from the augmentation streams
            self.imgs[:] = self.imgs[0]
        self.ra = fd.rand_augment_transform("rand-m9-mstd0.5-inc1", seed=1)
        self.re = fd.RandomErasing(probability=0.5, mode="pixel", seed=2)
        self.as_torch = as_torch

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, i):
        img = self.imgs[i]
        if self.as_torch:
            import torch
            img = torch.from_numpy(img.copy())
        out = self.ra(img)  # torch uint8 HWC in -> torch uint8 HWC out
        arr = np.asarray(out.numpy() if hasattr(out, "numpy") else out, np.float32).transpose(2, 0, 1) / 255.0
        arr = np.ascontiguousarray((arr - 0.5) / 0.25, np.float32)
        if self.as_torch:
            import torch
            arr = torch.from_numpy(arr)
        self.re(arr)
        return arr, i % 10


def _torch_epoch(seed, workers=2, same=False, mix=True):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader
    torch.manual_seed(seed)
    use_mix = mix
    mix = fd.Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=10, seed=seed)
    dl = DataLoader(_AugDataset(same=same), batch_size=5, num_workers=workers, shuffle=False, timeout=120)
    out = []
    for x, y in dl:
        if not use_mix:
            out.append((x.numpy().copy(), None))
            continue
        x, t = mix(x, y)  # odd final batch (16 = 5+5+5+1) is fine
        assert isinstance(x, torch.Tensor) and isinstance(t, torch.Tensor) and t.shape == (len(y), 10)
        out.append((x.numpy().copy(), t.numpy().copy()))
    return out


def test_torch_dataloader_workers_seeded_and_distinct():
    a = _torch_epoch(0)
    b = _torch_epoch(0)
    for (xa, ta), (xb, tb) in zip(a, b):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ta, tb)
    c = _torch_epoch(1)
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(a, c))
    # no two workers replay the same augmentation stream: the same image (dataset has distinct
    # images) is never augmented identically in two different batches of a different worker
    s = _torch_epoch(0, same=True, mix=False)
    # identical images: worker 0 made batch 0, worker 1 batch 1; equal streams would give equal batches
    assert not np.array_equal(s[0][0], s[1][0])


def test_worker_reseed_logic_without_torch():
    src = fd.RandomSource(5)
    first = src.random()
    src._pid = -1  # pretend we were forked
    second = src.generator.random()
    src2 = fd.RandomSource(5)
    src2.random()
    assert first == fd.RandomSource(5).random() and second != src2.random()


def test_flowvision_dataloader_numpy():
    try:
        from flowvision.backend.utils.data import DataLoader
    except Exception:
        pytest.skip("flowvision.backend.utils.data not available")
    mix = fd.Mixup(num_classes=10, seed=0)
    ds = _AugDataset(as_torch=False)
    got = 0
    for x, y in DataLoader(ds, batch_size=4, num_workers=0):
        xa = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
        x2, t = mix(x, y)
        assert x2 is x and tuple(t.shape) == (xa.shape[0], 10)
        got += 1
    assert got == 4


def test_fast_collate_in_torch_loader():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    class U8:
        def __len__(self):
            return 9

        def __getitem__(self, i):
            return np.full((3, 8, 8), i * 20, np.uint8), i

    dl = DataLoader(U8(), batch_size=9, collate_fn=fd.FastCollateMixup(num_classes=10, seed=0, mode="pair"))
    x, t = next(iter(dl))
    assert isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.shape == (9, 3, 8, 8) and t.shape == (9, 10)


def test_flowvision_dataloader_workers_seeded():
    try:
        from flowvision.backend.utils.data import DataLoader
        import flowvision.backend as fb
    except Exception:
        pytest.skip("flowvision.backend.utils.data not available")

    def epoch(seed):
        fb.manual_seed(seed)
        dl = DataLoader(_AugDataset(as_torch=False, same=True), batch_size=4, num_workers=2, timeout=120)
        return [np.asarray(x.numpy() if hasattr(x, "numpy") else x).copy() for x, _ in dl]

    a, b = epoch(0), epoch(0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    # worker 0 made batch 0, worker 1 batch 1: without per-worker re-seeding they would be equal
    assert not np.array_equal(a[0], a[1])


_SCRIPT = r'''
import sys
import numpy as np
import torch
from torch.utils.data import DataLoader as TorchLoader
import flowvision.data as fd

class DS:
    def __init__(self, as_torch):
        self.imgs = np.random.default_rng(0).integers(0, 256, (12, 24, 24, 3), dtype=np.uint8)
        self.ra = fd.rand_augment_transform("rand-m9-mstd0.5-inc1", seed=1)
        self.re = fd.RandomErasing(probability=0.5, mode="rand", seed=2)
        self.as_torch = as_torch
    def __len__(self):
        return len(self.imgs)
    def __getitem__(self, i):
        img = torch.from_numpy(self.imgs[i].copy()) if self.as_torch else self.imgs[i]
        out = self.ra(img)
        x = (np.asarray(out, np.float32).transpose(2, 0, 1) / 255 - 0.5) / 0.25
        x = torch.from_numpy(np.ascontiguousarray(x)) if self.as_torch else np.ascontiguousarray(x)
        return self.re(x), i % 4

mix = fd.Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=4, seed=0)
for x, y in TorchLoader(DS(True), batch_size=4, num_workers=2, timeout=120):
    x, t = mix(x, y)
    assert isinstance(x, torch.Tensor) and isinstance(t, torch.Tensor) and tuple(t.shape) == (4, 4)
from flowvision.backend.utils.data import DataLoader as FvLoader
for x, y in FvLoader(DS(False), batch_size=4, num_workers=2, timeout=120):
    x, t = mix(x, y)
    assert tuple(t.shape) == (4, 4)
bad = [m for m in sys.modules if m.startswith(("flowvision.models", "flowvision.layers", "timm"))]
assert not bad, bad
print("ok")
'''


def test_loaders_in_a_clean_process_import_no_model_code():
    pytest.importorskip("torch")
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(fd.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
