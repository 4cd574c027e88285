"""create_loader, fast_collate, PrefetchLoader, AugMixDataset, RepeatAugSampler."""
import numpy as np
import pytest
from PIL import Image

import flowvision.data as fd


class _Folder:
    def __init__(self, n=12, size=(40, 36)):
        r = np.random.default_rng(0)
        self.imgs = [Image.fromarray(r.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(n)]
        self.transform = None

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, i):
        img = self.imgs[i]
        if self.transform is not None:
            img = self.transform(img)
        return img, i % 5


def _np(x):
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def test_fast_collate_and_tuple_deinterleave():
    b = [(np.full((3, 4, 4), i, np.uint8), i) for i in range(3)]
    x, y = fd.fast_collate(b)
    assert x.shape == (3, 3, 4, 4) and list(y) == [0, 1, 2] and y.dtype == np.int64
    b = [((np.full((1, 2, 2), i, np.uint8), np.full((1, 2, 2), 10 + i, np.uint8)), i) for i in range(3)]
    x, y = fd.fast_collate(b)
    assert [int(v) for v in x[:, 0, 0, 0]] == [0, 1, 2, 10, 11, 12] and list(y) == [0, 1, 2, 0, 1, 2]


def test_create_loader_prefetcher_train():
    pytest.importorskip("flowvision.backend.utils.data")
    loader = fd.create_loader(_Folder(), (3, 32, 32), batch_size=4, is_training=True, auto_augment="rand-m9-mstd0.5-inc1",
                              re_prob=0.5, num_workers=0, seed=0)
    batches = list(loader)
    assert len(batches) == 3
    x, y = batches[0]
    assert tuple(x.shape) == (4, 3, 32, 32) and _np(x).dtype == np.float32 and tuple(y.shape) == (4,)
    assert abs(float(_np(x).mean())) < 1.5


def test_create_loader_eval_and_mixup_collate():
    pytest.importorskip("flowvision.backend.utils.data")
    ev = fd.create_loader(_Folder(), 32, batch_size=5, is_training=False, num_workers=0, use_prefetcher=False)
    x, y = next(iter(ev))
    assert tuple(x.shape) == (5, 3, 32, 32)
    mix = fd.FastCollateMixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=5, seed=0)
    tr = fd.create_loader(_Folder(), 32, batch_size=4, is_training=True, num_workers=0, collate_fn=mix, seed=0)
    x, t = next(iter(tr))
    assert tuple(x.shape) == (4, 3, 32, 32) and tuple(t.shape) == (4, 5)
    tr.mixup_enabled = False
    assert mix.mixup_enabled is False


def test_augmix_dataset_splits():
    pytest.importorskip("flowvision.backend.utils.data")
    loader = fd.create_loader(_Folder(), 32, batch_size=4, is_training=True, auto_augment="augmix-m3-w2",
                              num_aug_splits=3, num_workers=0, seed=0)
    x, y = next(iter(loader))
    assert tuple(x.shape) == (12, 3, 32, 32) and list(_np(y)[:4]) == list(_np(y)[4:8])
    with pytest.raises(ValueError, match="3 transforms"):
        ds = _Folder()
        ds.transform = lambda im: im
        fd.AugMixDataset(ds)


def test_repeat_aug_sampler_matches_timm_arithmetic():
    timm_ds = pytest.importorskip("timm.data.distributed_sampler")
    data = list(range(1000))
    for reps in (3, 2.5):
        for world in (1, 2, 4):
            ours = [list(fd.RepeatAugSampler(data, num_replicas=world, rank=r, num_repeats=reps, shuffle=False))
                    for r in range(world)]
            ref = [list(timm_ds.RepeatAugSampler(data, num_replicas=world, rank=r, num_repeats=reps, shuffle=False))
                   for r in range(world)]
            assert ours == ref
    s = fd.RepeatAugSampler(data, num_replicas=2, rank=0, seed=1)
    a = list(s)
    s.set_epoch(1)
    assert a != list(s) and len(a) == len(s)


def test_create_loader_with_workers():
    pytest.importorskip("flowvision.backend.utils.data")
    loader = fd.create_loader(_Folder(n=8), 32, batch_size=4, is_training=True, auto_augment="rand-m9-mstd0.5-inc1",
                              re_prob=0.25, num_workers=2, seed=0, persistent_workers=False, timeout=120)
    shapes = [tuple(x.shape) for x, _ in loader]
    assert shapes == [(4, 3, 32, 32)] * 2
