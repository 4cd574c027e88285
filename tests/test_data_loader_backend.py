"""utils.data: datasets, samplers, collation (vs torch's) and the DataLoader with real worker processes."""
import collections
import os
import signal
import time

import numpy as np
import pytest

import flowvision.backend as fb
from flowvision.backend.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, DistributedSampler,
                                           IterableDataset, RandomSampler, SequentialSampler, StackDataset, Subset,
                                           SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                                           default_collate, default_convert, get_worker_info, random_split)

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])


class Samples(Dataset):
    def __init__(self, n=23, fail_at=None, exc=ValueError):
        self.n, self.fail_at, self.exc = n, fail_at, exc

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.exc(f"bad sample {i}")
        return {"img": np.full((2, 3), i, np.float32), "label": i, "w": float(i) / 2, "name": f"s{i}",
                "pt": Point(fb.tensor([i, -i]), i % 2 == 0), "pair": (i, np.int32(i))}


def _flat(batch):
    """A comparable, plain-python view of a collated batch."""
    if isinstance(batch, fb.Tensor):
        return ("T", batch.dtype.name, batch.numpy().tolist())
    if isinstance(batch, torch.Tensor):
        return ("T", str(batch.dtype).replace("torch.", ""), batch.numpy().tolist())
    if isinstance(batch, dict):
        return {k: _flat(v) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__,) + tuple(_flat(v) for v in batch)
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_flat(v) for v in batch])
    return batch


def test_workers_yield_exactly_the_single_process_batches():
    def run(workers, **kw):
        g = fb.Generator().manual_seed(1234)
        dl = DataLoader(Samples(), batch_size=4, shuffle=True, generator=g, num_workers=workers, **kw)
        return [_flat(b) for b in dl]

    single = run(0)
    assert len(single) == 6
    assert run(2) == single
    assert run(2, prefetch_factor=1, drop_last=False) == single
    assert run(3, prefetch_factor=4) == single
    # the shuffled order is a permutation and reproducible from the generator
    labels = [v for b in single for v in b["label"][2]]
    assert sorted(labels) == list(range(23)) and labels != list(range(23))


def test_default_collate_matches_torch():
    ds = Samples()
    items = [ds[i] for i in range(4)]
    ours = default_collate(items)
    ref_items = [{**it, "pt": Point(torch.tensor(it["pt"].x.numpy()), it["pt"].y)} for it in items]
    ref = tud.default_collate(ref_items)
    assert _flat(ours) == _flat(ref)
    assert type(ours["pt"]) is Point and isinstance(ours["pair"], list)
    for sample in ([1.5, 2.5], [True, False], [np.float64(1.0), np.float64(2.0)], [b"a", b"b"],
                   [[1, 2], [3, 4]], [np.arange(3), np.arange(3)]):
        assert _flat(default_collate(sample)) == _flat(tud.default_collate(sample))
    assert _flat(default_convert({"a": np.arange(3), "b": [np.float32(1.0)]})) == \
        _flat(tud.default_convert({"a": np.arange(3), "b": [np.float32(1.0)]}))
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([np.zeros(2), np.zeros(3)])


def test_worker_exception_is_reraised_with_worker_traceback():
    dl = DataLoader(Samples(fail_at=9), batch_size=4, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(dl)
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "Original Traceback (most recent call last)" in msg
    assert "raise self.exc(f\"bad sample {i}\")" in msg and "bad sample 9" in msg
    with pytest.raises(KeyError, match="Caught KeyError"):
        list(DataLoader(Samples(fail_at=2, exc=KeyError), batch_size=2, num_workers=2))

    class NeedsArgs(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    class Bad(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise NeedsArgs(1, 2)

    # an exception class that can't be rebuilt from a message (or pickled: it is local) still arrives
    with pytest.raises(Exception, match="Caught NeedsArgs in DataLoader worker process 0"):
        list(DataLoader(Bad(), batch_size=2, num_workers=1))

    class Unpicklable(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return lambda: i  # a batch that can't cross the process boundary

    with pytest.raises(Exception, match="while sending a batch"):
        list(DataLoader(Unpicklable(), batch_size=2, num_workers=1, collate_fn=list))
    # single-process errors propagate unchanged
    with pytest.raises(ValueError, match="bad sample 3"):
        list(DataLoader(Samples(fail_at=3), batch_size=2))


class KillsItsWorker(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        if i == 13 and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_killed_worker_raises_clear_error_not_hang():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: SIGKILL"):
        list(DataLoader(KillsItsWorker(), batch_size=2, num_workers=2))
    assert time.monotonic() - t0 < 30


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(1.5)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.3))


class WorkerProbe(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return np.array([info.id, info.seed, info.num_workers, os.getpid(), np.random.randint(1 << 30),
                         int(fb.randint(0, 1 << 30, (1,)).item())], np.int64)


def test_worker_seeding_info_and_init_fn():
    seen = []

    def init_fn(worker_id):
        info = get_worker_info()
        assert info.id == worker_id and info.num_workers == 2 and isinstance(info.dataset, WorkerProbe)
        seen.append(worker_id)

    def run():
        g = fb.Generator().manual_seed(7)
        dl = DataLoader(WorkerProbe(), batch_size=2, num_workers=2, generator=g, worker_init_fn=init_fn)
        return np.concatenate([b.numpy() for b in dl])

    a, b = run(), run()
    np.testing.assert_array_equal(np.delete(a, 3, axis=1), np.delete(b, 3, axis=1))  # reproducible (pids aside)
    ids, seeds = a[:, 0], a[:, 1]
    assert set(ids.tolist()) == {0, 1}
    base = seeds[ids == 0][0]
    assert (seeds[ids == 1] == base + 1).all()  # base_seed + worker_id
    assert len(set(a[ids == 0, 4]) & set(a[ids == 1, 4])) == 0  # numpy streams differ per worker
    assert get_worker_info() is None
    with pytest.raises(ValueError, match="Caught ValueError"):
        list(DataLoader(WorkerProbe(), batch_size=2, num_workers=1,
                        worker_init_fn=lambda i: (_ for _ in ()).throw(ValueError("init failed"))))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    ours = [b.tolist() for b in DataLoader(Stream(10), batch_size=3, num_workers=2)]
    ref = [b.tolist() for b in tud.DataLoader(_TorchStream(10), batch_size=3, num_workers=2)]
    assert ours == ref == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert [int(b) for b in DataLoader(Stream(4), batch_size=None, num_workers=2)] == [0, 1, 2, 3]
    assert len(DataLoader(Stream(7), batch_size=3)) == 3
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(3), shuffle=True)


class _TorchStream(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = tud.get_worker_info()
        return iter(range(info.id, self.n, info.num_workers)) if info else iter(range(self.n))


def test_persistent_workers_keep_processes_and_data():
    dl = DataLoader(WorkerProbe(), batch_size=2, num_workers=2, persistent_workers=True)
    pids = []
    for epoch in range(3):
        out = np.concatenate([b.numpy() for b in dl])
        assert out.shape == (8, 6)
        pids.append(set(out[:, 3].tolist()))
        if epoch == 1:
            it = iter(dl)
            next(it)  # abandon an epoch midway; the next one must still be complete and ordered
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2
    labels = [b.tolist() for b in DataLoader(Samples(), batch_size=5, num_workers=2, persistent_workers=True)
              for b in [b["label"]]]
    assert sum(labels, []) == list(range(23))
    it_dl = DataLoader(Stream(6), batch_size=3, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert sorted(sum([b.tolist() for b in it_dl], [])) == list(range(6))
    del dl, it_dl


def test_dataloader_argument_checks():
    ds = Samples(5)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=3)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    dl = DataLoader(ds, batch_size=2, pin_memory=True, drop_last=True)
    assert len(dl) == 2 and len(list(dl)) == 2
    with pytest.raises(ValueError, match="should not be set after"):
        dl.batch_size = 3
    dl = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), collate_fn=lambda b: len(b))
    assert list(dl) == [2, 2, 1]
    dl = DataLoader(TensorDataset(fb.arange(6), fb.arange(6) * 2), batch_size=None)
    assert [tuple(int(v) for v in b) for b in dl][:2] == [(0, 0), (1, 2)]


def test_samplers():
    ds = list(range(10))
    g1, g2 = fb.Generator().manual_seed(3), fb.Generator().manual_seed(3)
    a, b = list(RandomSampler(ds, generator=g1)), list(RandomSampler(ds, generator=g2))
    assert a == b and sorted(a) == ds
    r = list(RandomSampler(ds, replacement=True, num_samples=50, generator=g1))
    assert len(r) == 50 and all(0 <= i < 10 for i in r)
    r = list(RandomSampler(ds, num_samples=25, generator=g1))
    assert len(r) == 25 and sorted(r[:10]) == ds
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(ds, num_samples=0)
    assert sorted(SubsetRandomSampler([3, 5, 7], generator=g1)) == [3, 5, 7]
    w = list(WeightedRandomSampler([0.0, 0.0, 1.0, 3.0], 4000, generator=g1))
    counts = np.bincount(w, minlength=4)
    assert counts[0] == counts[1] == 0 and abs(counts[3] / 4000 - 0.75) < 0.03
    nr = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g1))
    assert sorted(nr) == [0, 1, 2, 3]
    for bs, dl in ((3, False), (3, True), (5, False), (10, True), (11, False)):
        ours = BatchSampler(SequentialSampler(ds), bs, dl)
        ref = tud.BatchSampler(tud.SequentialSampler(ds), bs, dl)
        assert list(ours) == list(ref) and len(ours) == len(ref)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(ds, 0, False)


@pytest.mark.parametrize("n,world,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False)])
def test_distributed_sampler(n, world, drop_last):
    ds = list(range(n))
    for rank in range(world):
        ours = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False, drop_last=drop_last)
        ref = tud.DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(ref) and len(ours) == len(ref)
    shards = [list(DistributedSampler(ds, world, r, shuffle=True, seed=5, drop_last=drop_last))
              for r in range(world)]
    flat = sum(shards, [])
    if not drop_last:
        assert set(flat) == set(ds)
    else:
        assert len(set(flat)) == len(flat)
    s = DistributedSampler(ds, world, 0, shuffle=True, seed=5)
    e0 = list(s)
    s.set_epoch(1)
    assert list(s) != e0 or n <= 2
    s.set_epoch(0)
    assert list(s) == e0
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(ds, num_replicas=2, rank=2)


def test_datasets_and_random_split():
    td = TensorDataset(fb.arange(5), fb.arange(5) * 10)
    assert len(td) == 5 and [int(v) for v in td[2]] == [2, 20]
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(fb.arange(5), fb.arange(4))
    cd = ConcatDataset([list(range(3)), list(range(10, 14))])
    assert len(cd) == 7 and cd[3] == 10 and cd[-1] == 13 and (Samples(2) + Samples(3)).__len__() == 5
    sub = Subset(list(range(100)), [5, 7, 9])
    assert len(sub) == 3 and sub[1] == 7
    sd = StackDataset(a=list(range(3)), b=list("xyz"))
    assert sd[1] == {"a": 1, "b": "y"}
    parts = random_split(range(10), [3, 7], generator=fb.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=fb.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    again = random_split(range(10), [0.5, 0.3, 0.2], generator=fb.Generator().manual_seed(0))
    assert [list(p) for p in parts] == [list(p) for p in again]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


class _TensorRows(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return fb.full((3, 4), float(i))


def test_worker_batches_arrive_as_values_with_the_shared_memory_reducer_registered():
    """Hogwild code imports flowvision.backend.multiprocessing, which registers a reducer moving tensors into
    shared memory; a worker's batch must still arrive (the worker would unlink its segment when it drops it)."""
    import flowvision.backend.multiprocessing  # noqa: F401 - registers the reducer
    for _ in range(3):
        got = [b.numpy()[:, 0, 0].tolist() for b in DataLoader(_TensorRows(), batch_size=4, num_workers=2)]
        assert got == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
