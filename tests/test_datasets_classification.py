"""Classification datasets against torchvision's classes on the same miniature files (the original formats)."""
import os

import numpy as np
import pytest
from PIL import Image

import flowvision.datasets as fds
from flowvision.datasets.utils import CorruptDatasetError, DatasetNotFoundError
from test_datasets_fixtures import (make_cifar, make_emnist, make_image_folder, make_mnist, make_qmnist,
                                    make_semeion, make_stl10, make_svhn, make_usps, md5, with_md5s, write_idx)

tvd = pytest.importorskip("torchvision.datasets")


def to_np(x):
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy"):
        return x.numpy()
    return np.asarray(x)


def assert_same_item(a, b):
    """Two samples (tuples of PIL images / ints / arrays / tensors / dicts) are equal."""
    if isinstance(a, Image.Image):
        assert isinstance(b, Image.Image), type(b)
        assert a.mode == b.mode and a.size == b.size
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same_item(x, y)
    elif isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            assert_same_item(a[k], b[k])
    elif a is None or isinstance(a, (str, bool)):
        assert a == b
    elif isinstance(a, (int, float, np.integer, np.floating)) and not hasattr(b, "shape"):
        assert type(a) is type(b) or (isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))), \
            (type(a), type(b))
        assert a == b
    else:
        np.testing.assert_array_equal(to_np(a), to_np(b))


def assert_same_dataset(fv, tv):
    assert len(fv) == len(tv) > 0
    for i in range(len(tv)):
        assert_same_item(fv[i], tv[i])
    for attr in ("classes", "class_to_idx"):
        if hasattr(tv, attr):
            assert getattr(fv, attr) == getattr(tv, attr)


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "KMNIST"])
@pytest.mark.parametrize("train", [True, False])
def test_mnist_family(tmp_path, name, train):
    make_mnist(str(tmp_path), name)
    fv, tv = getattr(fds, name)(str(tmp_path), train=train), getattr(tvd, name)(str(tmp_path), train=train)
    assert_same_dataset(fv, tv)
    np.testing.assert_array_equal(fv.data.numpy(), tv.data.numpy())
    np.testing.assert_array_equal(fv.targets.numpy(), tv.targets.numpy())
    assert repr(fv) == repr(tv)


@pytest.mark.parametrize("split", ["byclass", "bymerge", "balanced", "letters", "digits", "mnist"])
def test_emnist(tmp_path, split):
    make_emnist(str(tmp_path), split)
    for train in (True, False):
        assert_same_dataset(fds.EMNIST(str(tmp_path), split, train=train), tvd.EMNIST(str(tmp_path), split, train=train))


@pytest.mark.parametrize("what", ["train", "test", "test10k", "test50k", "nist"])
@pytest.mark.parametrize("compat", [True, False])
def test_qmnist(tmp_path, what, compat):
    make_qmnist(str(tmp_path))
    fv, tv = fds.QMNIST(str(tmp_path), what=what, compat=compat), tvd.QMNIST(str(tmp_path), what=what, compat=compat)
    if what == "test50k":  # the fixture has fewer than 10k test digits: both are empty
        assert len(fv) == len(tv) == 0
        return
    assert_same_dataset(fv, tv)


def test_mnist_bad_files(tmp_path):
    raw = make_mnist(str(tmp_path))
    path = os.path.join(raw, "train-images-idx3-ubyte")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 7)
    with pytest.raises(CorruptDatasetError, match="truncated"):
        fds.MNIST(str(tmp_path), train=True)
    write_idx(path, np.zeros((5, 28, 28), np.int32))
    with pytest.raises(CorruptDatasetError, match="uint8"):
        fds.MNIST(str(tmp_path), train=True)
    with open(path, "wb") as f:
        f.write(b"\x12\x34\x08\x03junk")
    with pytest.raises(CorruptDatasetError, match="not an idx file"):
        fds.MNIST(str(tmp_path), train=True)
    os.remove(os.path.join(raw, "t10k-labels-idx1-ubyte"))
    with pytest.raises(DatasetNotFoundError, match="t10k-labels-idx1-ubyte"):
        fds.MNIST(str(tmp_path), train=False)


@pytest.mark.parametrize("hundred", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_cifar(tmp_path, hundred, train):
    folder = make_cifar(str(tmp_path), hundred=hundred)
    name = "CIFAR100" if hundred else "CIFAR10"
    fv = with_md5s(getattr(fds, name), folder)(str(tmp_path), train=train)
    tv = with_md5s(getattr(tvd, name), folder)(str(tmp_path), train=train)
    assert_same_dataset(fv, tv)
    np.testing.assert_array_equal(fv.data, tv.data)
    assert fv.targets == tv.targets and repr(fv) == repr(tv)


def test_cifar_checks_md5_and_refuses_code(tmp_path):
    folder = make_cifar(str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match="data_batch_1"):
        fds.CIFAR10(str(tmp_path))  # the published md5s do not match the miniature files
    cls = with_md5s(fds.CIFAR10, folder)
    # a batch whose pickle would call os.system: refused before anything runs
    evil = b"\x80\x02cos\nsystem\nU\x05touchq\x85R."
    with open(os.path.join(folder, "test_batch"), "wb") as f:
        f.write(evil)
    cls = type("C", (cls,), {"test_list": [["test_batch", md5(os.path.join(folder, "test_batch"))]]})
    with pytest.raises(CorruptDatasetError, match="os.system"):
        cls(str(tmp_path), train=False)
    with open(os.path.join(folder, "test_batch"), "wb") as f:
        f.write(b"\x80\x02}q\x00(U\x04data")  # truncated
    cls = type("C", (cls,), {"test_list": [["test_batch", md5(os.path.join(folder, "test_batch"))]]})
    with pytest.raises(CorruptDatasetError, match="test_batch"):
        cls(str(tmp_path), train=False)


@pytest.mark.parametrize("split", ["train", "test", "extra"])
def test_svhn(tmp_path, split):
    path = make_svhn(str(tmp_path), split)
    patched = {}
    for mod in (fds.SVHN, tvd.SVHN):
        lst = {k: list(v) for k, v in mod.split_list.items()}
        lst[split][2] = md5(path)
        patched[mod] = type("SVHN", (mod,), {"split_list": lst})
    assert_same_dataset(patched[fds.SVHN](str(tmp_path), split=split), patched[tvd.SVHN](str(tmp_path), split=split))


@pytest.mark.parametrize("split,folds", [("train", None), ("train", 3), ("test", None), ("unlabeled", None),
                                         ("train+unlabeled", 1)])
def test_stl10(tmp_path, split, folds):
    folder = make_stl10(str(tmp_path))
    fv = with_md5s(fds.STL10, folder)(str(tmp_path), split=split, folds=folds)
    tv = with_md5s(tvd.STL10, folder)(str(tmp_path), split=split, folds=folds)
    assert_same_dataset(fv, tv)


def test_stl10_truncated(tmp_path):
    folder = make_stl10(str(tmp_path))
    with open(os.path.join(folder, "test_X.bin"), "ab") as f:
        f.write(b"\x00" * 10)
    with pytest.raises(CorruptDatasetError, match="test_X.bin"):
        with_md5s(fds.STL10, folder)(str(tmp_path), split="test")


@pytest.mark.parametrize("train", [True, False])
def test_usps(tmp_path, train):
    make_usps(str(tmp_path), train=train)
    assert_same_dataset(fds.USPS(str(tmp_path), train=train), tvd.USPS(str(tmp_path), train=train))


def test_semeion(tmp_path):
    path = make_semeion(str(tmp_path))
    fv = type("S", (fds.SEMEION,), {"md5_checksum": md5(path)})(str(tmp_path), download=False)
    tv = type("S", (tvd.SEMEION,), {"md5_checksum": md5(path)})(str(tmp_path), download=False)
    assert_same_dataset(fv, tv)


# ---------------------------------------------------------------------------------------------
# base classes

def test_image_folder_matches_torchvision(tmp_path):
    make_image_folder(str(tmp_path))
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    fv, tv = fds.ImageFolder(str(tmp_path)), tvd.ImageFolder(str(tmp_path))
    assert_same_dataset(fv, tv)
    assert [(os.path.relpath(p, tmp_path), t) for p, t in fv.samples] == \
        [(os.path.relpath(p, tmp_path), t) for p, t in tv.samples]
    assert fv.imgs == fv.samples and fv.targets == tv.targets


def test_dataset_folder_options(tmp_path):
    make_image_folder(str(tmp_path))
    os.makedirs(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="empty"):
        fds.ImageFolder(str(tmp_path))
    fv = fds.ImageFolder(str(tmp_path), allow_empty=True)
    tv = tvd.ImageFolder(str(tmp_path), allow_empty=True)
    assert fv.classes == tv.classes and len(fv) == len(tv)
    only_png = lambda p: p.endswith(".png")  # noqa: E731
    fv = fds.DatasetFolder(str(tmp_path), loader=lambda p: p, is_valid_file=only_png, allow_empty=True)
    tv = tvd.DatasetFolder(str(tmp_path), loader=lambda p: p, is_valid_file=only_png, allow_empty=True)
    assert [fv[i] for i in range(len(fv))] == [tv[i] for i in range(len(tv))]
    with pytest.raises(ValueError, match="extensions and is_valid_file"):
        fds.DatasetFolder(str(tmp_path), loader=lambda p: p)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        fds.ImageFolder(str(tmp_path / "missing"))
    assert fds.folder.find_classes(str(tmp_path)) == tvd.folder.find_classes(str(tmp_path))


def test_image_folder_corrupt_image(tmp_path):
    make_image_folder(str(tmp_path), per_class=2)
    bad = tmp_path / "dog" / "img0.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    ds = fds.ImageFolder(str(tmp_path))
    idx = [p for p, _ in ds.samples].index(str(bad))
    with pytest.raises(CorruptDatasetError, match="img0.jpg"):
        ds[idx]
    ds = fds.ImageFolder(str(tmp_path), skip_corrupt=True)
    with pytest.warns(RuntimeWarning, match="img0.jpg"):
        img, target = ds[idx]
    assert isinstance(img, Image.Image) and target == ds.samples[idx + 1][1]


def _to_str(t):
    return str(t)


def test_vision_dataset_contract(tmp_path):
    from flowvision import transforms as T
    import torchvision.transforms as TT
    make_image_folder(str(tmp_path))
    fv = fds.ImageFolder(str(tmp_path), transform=T.Compose([T.Resize(8), T.ToTensor()]), target_transform=_to_str)
    tv = tvd.ImageFolder(str(tmp_path), transform=TT.Compose([TT.Resize(8), TT.ToTensor()]), target_transform=_to_str)
    assert repr(fv).replace("flowvision", "torchvision") == repr(tv)
    img, target = fv[4]
    timg, ttarget = tv[4]
    assert target == ttarget == "1"
    np.testing.assert_allclose(img.numpy(), timg.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="Only transforms"):
        fds.VisionDataset(str(tmp_path), transforms=lambda a, b: (a, b), transform=lambda a: a)
    both = fds.VisionDataset(str(tmp_path), transforms=lambda a, b: (a.size, b * 10))
    assert both.transforms(Image.new("RGB", (3, 2)), 2) == ((3, 2), 20)


def _describe(img):
    return img.mode, img.size, int(np.asarray(img, dtype=np.int64).sum())


@pytest.mark.parametrize("name", ["MNIST", "QMNIST", "SVHN", "USPS", "SEMEION", "ImageFolder"])
def test_transform_and_target_transform_applied_like_torchvision(tmp_path, name):
    """transform / target_transform are applied to each item, and reassigning them afterwards takes effect."""
    root = str(tmp_path)
    if name in ("MNIST", "QMNIST"):
        (make_mnist if name == "MNIST" else make_qmnist)(root)
        build = {lib: getattr(lib, name) for lib in (fds, tvd)}
    elif name == "SVHN":
        path = make_svhn(root, "train")
        build = {}
        for lib in (fds, tvd):
            lst = {k: list(v) for k, v in lib.SVHN.split_list.items()}
            lst["train"][2] = md5(path)
            build[lib] = type("SVHN", (lib.SVHN,), {"split_list": lst})
    elif name == "USPS":
        make_usps(root, train=True)
        build = {lib: lib.USPS for lib in (fds, tvd)}
    elif name == "SEMEION":
        path = make_semeion(root)
        build = {lib: type("S", (lib.SEMEION,), {"md5_checksum": md5(path)}) for lib in (fds, tvd)}
    else:
        make_image_folder(root)
        build = {lib: lib.ImageFolder for lib in (fds, tvd)}
    fv = build[fds](root, transform=_describe, target_transform=_to_str)
    tv = build[tvd](root, transform=_describe, target_transform=_to_str)
    assert_same_dataset(fv, tv)
    assert isinstance(fv[0][0], tuple) and isinstance(fv[0][1], str)
    for ds in (fv, tv):
        ds.transform, ds.target_transform = None, lambda t: ("late", t)
    assert_same_dataset(fv, tv)
    assert fv[0][1][0] == "late" and hasattr(fv[0][0], "mode")


def test_fakedata():
    ds = fds.FakeData(size=4, image_size=(3, 12, 10), num_classes=3)
    tv = tvd.FakeData(size=4, image_size=(3, 12, 10), num_classes=3)
    for i in range(4):
        a, t = ds[i]
        b, u = tv[i]
        assert a.mode == b.mode == "RGB" and a.size == b.size == (10, 12)
        assert isinstance(t, int) and isinstance(u, int) and 0 <= t < 3
        assert np.array_equal(np.asarray(ds[i][0]), np.asarray(a)) and ds[i][1] == t  # deterministic per index
    assert fds.FakeData(2, (1, 5, 5))[0][0].mode == "L"
    with pytest.raises(IndexError):
        ds[4]
    assert repr(ds) == repr(tv)


def test_image_folder_with_io_loader(tmp_path):
    """``loader=flowvision.io.read_image`` gives torchvision's ``loader=torchvision.io.read_image`` tensors."""
    import flowvision.io
    import torchvision.io
    make_image_folder(str(tmp_path), per_class=2)
    png_jpg = lambda p: p.endswith((".png", ".jpg"))  # noqa: E731 - torchvision.io reads no BMP
    fv = fds.ImageFolder(str(tmp_path), loader=flowvision.io.read_image, is_valid_file=png_jpg)
    tv = tvd.ImageFolder(str(tmp_path), loader=torchvision.io.read_image, is_valid_file=png_jpg)
    assert len(fv) == len(tv)
    for i in range(len(tv)):
        (a, t), (b, u) = fv[i], tv[i]
        assert t == u and tuple(a.shape) == tuple(b.shape)
        if not fv.samples[i][0].endswith(".jpg"):  # JPEG decoders may differ by rounding; lossless must match
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_optional_dependency_errors(tmp_path, monkeypatch):
    """Without scipy / h5py the datasets that need them say what to install."""
    import builtins
    real_import = builtins.__import__

    def no_scipy_h5py(name, *args, **kwargs):
        if name.split(".")[0] in ("scipy", "h5py"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)
    path = make_svhn(str(tmp_path), "test")
    cls = type("S", (fds.SVHN,), {"split_list": dict(fds.SVHN.split_list, test=["u", "test_32x32.mat", md5(path)])})
    monkeypatch.setattr(builtins, "__import__", no_scipy_h5py)
    with pytest.raises(ImportError, match=r"flowvision\[datasets\]"):
        cls(str(tmp_path), split="test")
    with pytest.raises(ImportError, match="h5py"):
        fds.PCAM(str(tmp_path))
