"""CelebA, LFW and Omniglot against torchvision on the same miniature files."""
import numpy as np
import pytest

import flowvision.datasets as fds
from flowvision.datasets.utils import DatasetNotFoundError
from test_datasets_classification import assert_same_dataset
from test_datasets_fixtures_lists import (make_celeba, make_inaturalist, make_lfw, make_omniglot, make_pcam,
                                          make_places365)

tvd = pytest.importorskip("torchvision.datasets")


@pytest.mark.parametrize("split", ["train", "valid", "test", "all"])
@pytest.mark.parametrize("target_type", ["attr", "identity", "bbox", "landmarks", ["attr", "bbox", "identity"], []])
def test_celeba(tmp_path, monkeypatch, split, target_type):
    md5s = make_celeba(str(tmp_path))
    for cls in (fds.CelebA, tvd.CelebA):
        monkeypatch.setattr(cls, "file_list", [(i, md5s.get(f, m), f) for i, m, f in cls.file_list])
    fv = fds.CelebA(str(tmp_path), split=split, target_type=target_type)
    tv = tvd.CelebA(str(tmp_path), split=split, target_type=target_type)
    assert_same_dataset(fv, tv)
    assert fv.filename == tv.filename and fv.attr_names == tv.attr_names
    np.testing.assert_array_equal(fv.attr.numpy(), tv.attr.numpy())
    assert repr(fv) == repr(tv)


def test_celeba_download_names_drive_files(tmp_path, monkeypatch):
    with pytest.raises(DatasetNotFoundError) as e:
        fds.CelebA(str(tmp_path), download=True)
    msg = str(e.value)
    for file_id, checksum, name in fds.CelebA.file_list:
        assert file_id in msg and checksum in msg and name in msg


@pytest.fixture
def lfw(tmp_path, monkeypatch):
    md5s = make_lfw(str(tmp_path))
    import flowvision.datasets.lfw as flfw
    import torchvision.datasets.lfw as tlfw
    for cls in (flfw._LFW, tlfw._LFW):
        monkeypatch.setattr(cls, "checksums", {k: md5s[k] for k in cls.checksums})
        fd = dict(cls.file_dict)
        fd["funneled"] = (fd["funneled"][0], fd["funneled"][1], md5s["lfw-funneled.tgz"])
        monkeypatch.setattr(cls, "file_dict", fd)
    return str(tmp_path)


@pytest.mark.parametrize("split", ["10fold", "train", "test"])
def test_lfw(lfw, split):
    fv, tv = fds.LFWPeople(lfw, split=split), tvd.LFWPeople(lfw, split=split)
    assert_same_dataset(fv, tv)
    assert fv.class_to_idx == tv.class_to_idx and repr(fv) == repr(tv)
    fv, tv = fds.LFWPairs(lfw, split=split), tvd.LFWPairs(lfw, split=split)
    assert_same_dataset(fv, tv)
    assert fv.pair_names == tv.pair_names


@pytest.mark.parametrize("background", [True, False])
def test_omniglot(tmp_path, monkeypatch, background):
    checksum = make_omniglot(str(tmp_path), background)
    name = "images_background" if background else "images_evaluation"
    monkeypatch.setattr(tvd.Omniglot, "zips_md5", dict(tvd.Omniglot.zips_md5, **{name: checksum}))
    fv, tv = fds.Omniglot(str(tmp_path), background=background), tvd.Omniglot(str(tmp_path), background=background)
    assert len(fv) == len(tv) == 12

    def keyed(ds):  # torchvision orders characters as os.listdir does; compare by character name
        return sorted((ds._characters[t], np.asarray(img).tobytes()) for img, t in (ds[i] for i in range(len(ds))))
    assert keyed(fv) == keyed(tv)
    assert sorted(fv._characters) == sorted(tv._characters) and fv._characters == sorted(fv._characters)
    assert fv[0][0].mode == "L"


@pytest.mark.parametrize("split", ["train-standard", "val", "test"])
def test_places365(tmp_path, monkeypatch, split):
    md5s = make_places365(str(tmp_path))
    for cls in (fds.Places365, tvd.Places365):
        monkeypatch.setattr(cls, "_CATEGORIES_META", ("categories_places365.txt", md5s["categories_places365.txt"]))
        monkeypatch.setattr(cls, "_FILE_LIST_META", {k: (n, md5s.get(n, m)) for k, (n, m) in
                                                     cls._FILE_LIST_META.items()})
    fv, tv = fds.Places365(str(tmp_path), split=split), tvd.Places365(str(tmp_path), split=split)
    assert_same_dataset(fv, tv)
    assert fv.imgs == tv.imgs and repr(fv) == repr(tv)


def test_places365_missing_list_names_devkit(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="filelist_places365-standard.tar"):
        fds.Places365(str(tmp_path))


@pytest.mark.parametrize("version,target_type", [("2021_train", "full"), ("2021_valid", ["genus", "kingdom", "full"]),
                                                 ("2017", ["full", "super"]), ("2019", "super")])
def test_inaturalist(tmp_path, version, target_type):
    make_inaturalist(str(tmp_path), version)
    fv = fds.INaturalist(str(tmp_path), version=version, target_type=target_type)
    tv = tvd.INaturalist(str(tmp_path), version=version, target_type=target_type)
    tv.index = sorted(tv.index)  # torchvision lists files in the file system's order
    assert_same_dataset(fv, tv)
    assert fv.all_categories == tv.all_categories and fv.categories_index == tv.categories_index
    assert fv.category_name("full", 1) == tv.category_name("full", 1)


@pytest.mark.parametrize("split", ["train", "test", "val"])
def test_pcam(tmp_path, split):
    pytest.importorskip("h5py")
    make_pcam(str(tmp_path), split)
    assert_same_dataset(fds.PCAM(str(tmp_path), split=split), tvd.PCAM(str(tmp_path), split=split))


def test_pcam_download_lists_drive_files(tmp_path):
    pytest.importorskip("h5py")
    with pytest.raises(DatasetNotFoundError) as e:
        fds.PCAM(str(tmp_path), split="val", download=True)
    for name, file_id, checksum in fds.PCAM._FILES["val"].values():
        assert file_id in str(e.value) and checksum in str(e.value) and name + ".gz" in str(e.value)


def test_flickr(tmp_path):
    from test_datasets_fixtures_lists import make_flickr
    imgs, html, token = make_flickr(str(tmp_path))
    for name, ann in (("Flickr8k", html), ("Flickr30k", token)):
        fv, tv = getattr(fds, name)(imgs, ann_file=ann), getattr(tvd, name)(imgs, ann_file=ann)
        assert fv.ids == tv.ids
        assert_same_dataset(fv, tv)


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_clevr(tmp_path, split):
    from test_datasets_fixtures_lists import make_clevr
    make_clevr(str(tmp_path))
    fv = fds.CLEVRClassification(str(tmp_path), split=split)
    tv = tvd.CLEVRClassification(str(tmp_path), split=split)
    assert_same_dataset(fv, tv)


@pytest.mark.parametrize("split", [None, "train", "test"])
def test_moving_mnist(tmp_path, split):
    from test_datasets_fixtures_lists import make_moving_mnist
    make_moving_mnist(str(tmp_path))
    fv = fds.MovingMNIST(str(tmp_path), split=split, split_ratio=7)
    tv = tvd.MovingMNIST(str(tmp_path), split=split, split_ratio=7)
    assert_same_dataset(fv, tv)
    assert tuple(fv[0].shape) == tuple(tv[0].shape)


def test_sbu(tmp_path, monkeypatch):
    from test_datasets_fixtures_lists import make_sbu
    checksum = make_sbu(str(tmp_path))
    for cls in (fds.SBU, tvd.SBU):
        monkeypatch.setattr(cls, "md5_checksum", checksum)
    fv, tv = fds.SBU(str(tmp_path), download=False), tvd.SBU(str(tmp_path), download=False)
    assert len(fv) == 3 and fv.photos == tv.photos
    assert_same_dataset(fv, tv)


@pytest.mark.parametrize("train", [True, False])
def test_phototour(tmp_path, monkeypatch, train):
    import shutil
    from test_datasets_fixtures_lists import make_phototour
    make_phototour(str(tmp_path / "a"))
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    for cls in (fds.PhotoTour, tvd.PhotoTour):
        monkeypatch.setattr(cls, "lens", dict(cls.lens, liberty=7))
    tv = tvd.PhotoTour(str(tmp_path / "a"), "liberty", train=train)  # writes its liberty.pt cache
    fv = fds.PhotoTour(str(tmp_path / "b"), "liberty", train=train)  # cuts the sheets, writes liberty.npz
    assert (tmp_path / "b" / "liberty.npz").exists()
    assert_same_dataset(fv, tv)
    np.testing.assert_array_equal(fv.data.numpy(), tv.data.numpy())
    np.testing.assert_array_equal(fv.matches.numpy(), tv.matches.numpy())
    assert_same_dataset(fds.PhotoTour(str(tmp_path / "b"), "liberty", train=train), tv)  # from the .npz
    shutil.rmtree(tmp_path / "a" / "liberty")
    assert_same_dataset(fds.PhotoTour(str(tmp_path / "a"), "liberty", train=train), tv)  # torchvision's .pt


def test_lsun(tmp_path, monkeypatch):
    pytest.importorskip("lmdb")
    from test_datasets_fixtures_lists import make_lsun
    import shutil
    make_lsun(str(tmp_path / "a"))
    shutil.copytree(tmp_path / "a", tmp_path / "b")  # lmdb refuses to open one database twice in a process
    monkeypatch.chdir(tmp_path)  # torchvision writes its key cache into the working directory
    classes = ["bedroom_train", "church_outdoor_train"]
    fv, tv = fds.LSUN(str(tmp_path / "a"), classes=classes), tvd.LSUN(str(tmp_path / "b"), classes=classes)
    assert_same_dataset(fv, tv)
    assert repr(fv).replace("/a", "/b") == repr(tv)
    tv_test = tvd.LSUN(str(tmp_path / "b"), classes="test")
    assert_same_dataset(fds.LSUN(str(tmp_path / "a"), classes="test"), tv_test)
    with pytest.raises(ValueError, match="LSUN class"):
        fds.LSUN(str(tmp_path / "a"), classes=["kitchenette_train"])
    with pytest.raises(DatasetNotFoundError, match="bedroom_val_lmdb"):
        fds.LSUN(str(tmp_path / "a"), classes="val")
    import pickle
    state = pickle.loads(pickle.dumps(fv.dbs[0]))  # what a spawn-started DataLoader worker receives
    assert state.env is None and state.keys == fv.dbs[0].keys
