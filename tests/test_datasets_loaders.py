"""CIFAR10 and ImageFolder through flowvision's DataLoader (2 workers) and torch's, with the usual transforms."""
import os

import numpy as np
import pytest

import flowvision.datasets as fds
from flowvision import transforms as T
from flowvision.backend.utils.data import DataLoader
from test_datasets_fixtures import make_cifar, make_image_folder, with_md5s

torch = pytest.importorskip("torch")
tvd = pytest.importorskip("torchvision.datasets")
import torchvision.transforms as TT  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@pytest.fixture
def cifar_pair(tmp_path):
    folder = make_cifar(str(tmp_path), n_train=(3, 2))
    return (lambda tf: with_md5s(fds.CIFAR10, folder)(str(tmp_path), transform=tf),
            lambda tf: with_md5s(tvd.CIFAR10, folder)(str(tmp_path), transform=tf))


@pytest.fixture
def folder_pair(tmp_path):
    make_image_folder(str(tmp_path / "imgs"), per_class=4, size=(48, 40))
    return (lambda tf: fds.ImageFolder(str(tmp_path / "imgs"), transform=tf),
            lambda tf: tvd.ImageFolder(str(tmp_path / "imgs"), transform=tf))


@pytest.mark.parametrize("which", ["cifar", "folder"])
def test_flowvision_loader_two_workers_train_transforms(which, cifar_pair, folder_pair):
    make_fv, _ = cifar_pair if which == "cifar" else folder_pair
    ds = make_fv(T.Compose([T.RandomResizedCrop(24), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)]))
    loader = DataLoader(ds, batch_size=4, num_workers=2, shuffle=False)
    labels, n = [], 0
    for x, y in loader:
        assert tuple(x.shape)[1:] == (3, 24, 24) and x.dtype.name == "float32"
        assert np.isfinite(x.numpy()).all()
        labels += y.numpy().tolist()
        n += x.shape[0]
    assert n == len(ds) and labels == list(ds.targets)


@pytest.mark.parametrize("which", ["cifar", "folder"])
def test_flowvision_loader_matches_torch_pipeline(which, cifar_pair, folder_pair):
    """Deterministic eval transforms: flowvision's loader and transforms give torchvision's batches."""
    make_fv, make_tv = cifar_pair if which == "cifar" else folder_pair
    fv = DataLoader(make_fv(T.Compose([T.Resize(20), T.CenterCrop(16), T.ToTensor(), T.Normalize(MEAN, STD)])),
                    batch_size=3, num_workers=2)
    tv = torch.utils.data.DataLoader(
        make_tv(TT.Compose([TT.Resize(20), TT.CenterCrop(16), TT.ToTensor(), TT.Normalize(MEAN, STD)])),
        batch_size=3, num_workers=2)
    batches = list(zip(fv, tv))
    assert len(batches) == len(tv)
    for (x, y), (tx, ty) in batches:
        np.testing.assert_allclose(x.numpy(), tx.numpy(), atol=1e-5)
        np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("which", ["cifar", "folder"])
def test_torch_loader_over_flowvision_datasets(which, cifar_pair, folder_pair):
    """torch's DataLoader with torchvision's random transforms: same seed, same batches as torchvision's dataset."""
    make_fv, make_tv = cifar_pair if which == "cifar" else folder_pair
    tf = TT.Compose([TT.RandomResizedCrop(24), TT.RandomHorizontalFlip(), TT.ToTensor(), TT.Normalize(MEAN, STD)])
    out = []
    for ds in (make_fv(tf), make_tv(tf)):
        g = torch.Generator().manual_seed(7)
        out.append(list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, generator=g)))
    assert len(out[0]) == len(out[1])
    for (x, y), (tx, ty) in zip(*out):
        torch.testing.assert_close(x, tx, rtol=0, atol=0)
        assert torch.equal(y, ty)


def test_torch_loader_with_flowvision_transforms(cifar_pair):
    """flowvision tensors reach torch through DLPack in a collate_fn."""
    make_fv, _ = cifar_pair
    ds = make_fv(T.Compose([T.RandomResizedCrop(16), T.ToTensor(), T.Normalize(MEAN, STD)]))

    def collate(batch):
        return torch.stack([torch.from_dlpack(x) for x, _ in batch]), torch.tensor([y for _, y in batch])

    seen = 0
    for x, y in torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=collate):
        assert x.shape[1:] == (3, 16, 16) and x.dtype == torch.float32
        seen += len(y)
    assert seen == len(ds)
    # torch's own default_collate batches flowvision tensors too
    seen = 0
    for x, y in torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2):
        assert isinstance(x, torch.Tensor) and x.shape[1:] == (3, 16, 16) and x.dtype == torch.float32
        seen += len(y)
    assert seen == len(ds)


def test_worker_batches_travel_through_shared_memory(cifar_pair):
    """Large batches go through /dev/shm (not the pipe), arrive writable and intact, and leave no files behind."""
    import gc
    import glob
    from flowvision.backend.utils.data import dataloader as dl
    if dl._make_shm_dir() is None:
        pytest.skip("no /dev/shm on this system")
    for d in glob.glob("/dev/shm/flowvision-loader-*"):
        if not os.listdir(d):
            os.rmdir(d)
    before = set(glob.glob("/dev/shm/flowvision-loader-*"))
    make_fv, make_tv = cifar_pair
    tf = T.Compose([T.Resize(96), T.ToTensor()])  # 3x96x96 float32 per image: a batch is well above the threshold
    ref = [(x.numpy().copy(), y.numpy().copy()) for x, y in DataLoader(make_fv(tf), batch_size=4, num_workers=0)]
    seen = []
    it = iter(DataLoader(make_fv(tf), batch_size=4, num_workers=2))
    shm_dir = it._shm_dir
    assert shm_dir is not None and os.path.isdir(shm_dir)
    for x, y in it:
        arr = x.numpy()
        assert arr.flags.writeable
        seen.append((arr.copy(), y.numpy().copy()))
        arr[...] = 0  # copy-on-write: writing must not disturb anything else
    assert len(seen) == len(ref)
    for (a, b), (c, d) in zip(seen, ref):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    del it, x, y, arr
    gc.collect()
    assert not os.path.exists(shm_dir)
    assert set(glob.glob("/dev/shm/flowvision-loader-*")) <= before
    big = dl._pickled((np.ones((64, 1024), np.float32), 3), 0, dl._make_shm_dir())
    assert big.segment is not None and len(big.payload) < 4096
    shm = os.path.dirname(big.segment)
    out = big.load()
    assert out[1] == 3 and out[0].sum() == 64 * 1024 and not os.listdir(shm)
    os.rmdir(shm)


def test_full_shared_memory_falls_back_to_the_pipe(monkeypatch):
    """A /dev/shm without room (ENOSPC on reservation) sends the batch through the pipe, intact."""
    import errno
    from flowvision.backend.utils.data import dataloader as dl
    shm = dl._make_shm_dir()
    if shm is None:
        pytest.skip("no /dev/shm on this system")

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "posix_fallocate", full)
    data = (np.arange(64 * 1024, dtype=np.float32), "x")
    msg = dl._pickled(data, 0, shm)
    assert msg.segment is None and not os.listdir(shm)
    out = msg.load()
    np.testing.assert_array_equal(out[0], data[0])
    os.rmdir(shm)
