"""download=True of more datasets against a local HTTP server serving miniature archives in the original layout."""
import gzip
import lzma
import os
import shutil
import tarfile
import zipfile

import flowvision.datasets as fds
from test_datasets_classification import assert_same_dataset
from test_datasets_download import server  # noqa: F401 - the fixture
from test_datasets_fixtures import (make_emnist, make_qmnist, make_stl10, make_svhn, make_usps, make_semeion,
                                    make_voc, md5, with_md5s)
from test_datasets_fixtures_lists import make_caltech101, make_flowers102, make_food101


def _serve_tar(server, src_dir, arcname, name, mode="w:gz"):
    path = server.dir / name
    with tarfile.open(path, mode) as tar:
        tar.add(src_dir, arcname=arcname)
    return path


def test_emnist_zip_of_gz(server, tmp_path, monkeypatch):
    raw = make_emnist(str(tmp_path / "build"), "letters")
    with zipfile.ZipFile(server.dir / "gzip.zip", "w") as zf:
        for name in sorted(os.listdir(raw)):
            zf.writestr(f"gzip/{name}.gz", gzip.compress(open(os.path.join(raw, name), "rb").read()))
    monkeypatch.setattr(fds.EMNIST, "url", server.url + "gzip.zip")
    monkeypatch.setattr(fds.EMNIST, "md5", md5(server.dir / "gzip.zip"))
    got = fds.EMNIST(str(tmp_path / "root"), "letters", download=True)
    assert_same_dataset(got, fds.EMNIST(str(tmp_path / "build"), "letters"))
    assert not os.path.exists(tmp_path / "root" / "EMNIST" / "raw" / "gzip")
    fds.EMNIST(str(tmp_path / "root"), "letters", train=False, download=True)
    assert server.hits == {"/gzip.zip": 1}


def test_qmnist_nist_xz(server, tmp_path, monkeypatch):
    raw = make_qmnist(str(tmp_path / "build"))
    files = []
    for name in ("xnist-images-idx3-ubyte", "xnist-labels-idx2-int"):
        (server.dir / (name + ".xz")).write_bytes(lzma.compress(open(os.path.join(raw, name), "rb").read()))
        files.append((server.url + name + ".xz", md5(server.dir / (name + ".xz"))))
    monkeypatch.setattr(fds.QMNIST, "resources", dict(fds.QMNIST.resources, nist=files))
    got = fds.QMNIST(str(tmp_path / "root"), what="nist", download=True)
    assert_same_dataset(got, fds.QMNIST(str(tmp_path / "build"), what="nist"))


def test_svhn_usps_semeion_plain_files(server, tmp_path, monkeypatch):
    svhn = make_svhn(str(server.dir), "test")
    monkeypatch.setattr(fds.SVHN, "split_list", dict(fds.SVHN.split_list,
                                                     test=[server.url + "test_32x32.mat", "test_32x32.mat", md5(svhn)]))
    assert len(fds.SVHN(str(tmp_path / "svhn"), split="test", download=True)) == 5
    usps = make_usps(str(server.dir), train=False)
    monkeypatch.setattr(fds.USPS, "split_list", dict(fds.USPS.split_list,
                                                     test=[server.url + "usps.t.bz2", "usps.t.bz2", md5(usps)]))
    assert len(fds.USPS(str(tmp_path / "usps"), train=False, download=True)) == 4
    sem = make_semeion(str(server.dir))
    monkeypatch.setattr(fds.SEMEION, "url", server.url + "semeion.data")
    monkeypatch.setattr(fds.SEMEION, "md5_checksum", md5(sem))
    assert len(fds.SEMEION(str(tmp_path / "sem"))) == 5
    assert sorted(server.hits) == ["/semeion.data", "/test_32x32.mat", "/usps.t.bz2"]


def test_stl10_tar(server, tmp_path):
    folder = make_stl10(str(tmp_path / "build"))
    archive = _serve_tar(server, folder, "stl10_binary", "stl10_binary.tar.gz")
    cls = type("STL10", (with_md5s(fds.STL10, folder),), {"url": server.url + "stl10_binary.tar.gz",
                                                          "tgz_md5": md5(archive)})
    assert_same_dataset(cls(str(tmp_path / "root"), split="test", download=True),
                        cls(str(tmp_path / "build"), split="test"))


def test_food101_and_flowers102(server, tmp_path, monkeypatch):
    make_food101(str(tmp_path / "food"))
    archive = _serve_tar(server, str(tmp_path / "food" / "food-101"), "food-101", "food-101.tar.gz")
    monkeypatch.setattr(fds.Food101, "_URL", server.url + "food-101.tar.gz")
    monkeypatch.setattr(fds.Food101, "_MD5", md5(archive))
    assert_same_dataset(fds.Food101(str(tmp_path / "root"), download=True), fds.Food101(str(tmp_path / "food")))

    md5s = make_flowers102(str(tmp_path / "fl"))
    base = tmp_path / "fl" / "flowers-102"
    archive = _serve_tar(server, str(base / "jpg"), "jpg", "102flowers.tgz")
    for name in ("imagelabels.mat", "setid.mat"):
        shutil.copy(base / name, server.dir / name)
    monkeypatch.setattr(fds.Flowers102, "_download_url_prefix", server.url)
    monkeypatch.setattr(fds.Flowers102, "_file_dict", {"image": ("102flowers.tgz", md5(archive)),
                                                       "label": ("imagelabels.mat", md5s["label"]),
                                                       "setid": ("setid.mat", md5s["setid"])})
    assert_same_dataset(fds.Flowers102(str(tmp_path / "root"), split="test", download=True),
                        fds.Flowers102(str(tmp_path / "fl"), split="test"))


def test_voc_tar(server, tmp_path, monkeypatch):
    import flowvision.datasets.voc as fvoc
    make_voc(str(tmp_path / "build"))
    archive = _serve_tar(server, str(tmp_path / "build" / "VOCdevkit"), "VOCdevkit", "VOCtrainval_11-May-2012.tar",
                         mode="w")
    monkeypatch.setitem(fvoc.DATASET_YEAR_DICT, "2012", dict(fvoc.DATASET_YEAR_DICT["2012"],
                                                             url=server.url + "VOCtrainval_11-May-2012.tar",
                                                             md5=md5(archive)))
    assert_same_dataset(fds.VOCDetection(str(tmp_path / "root"), download=True),
                        fds.VOCDetection(str(tmp_path / "build")))


def test_caltech101_zip_of_tars(server, tmp_path, monkeypatch):
    make_caltech101(str(tmp_path / "build"))
    base = tmp_path / "build" / "caltech101"
    inner = {}
    for name, arc in (("101_ObjectCategories", "101_ObjectCategories.tar.gz"), ("Annotations", "Annotations.tar")):
        path = tmp_path / arc
        with tarfile.open(path, "w:gz" if arc.endswith("gz") else "w") as tar:
            tar.add(base / name, arcname=name)
        inner[arc] = path
    zpath = server.dir / "caltech-101.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for arc, path in inner.items():
            zf.write(path, f"caltech-101/{arc}")
    url = server.url + "caltech-101.zip"
    original = fds.caltech.download_and_extract_archive

    def patched(u, download_root, filename=None, md5=None, **kw):  # the published URL/md5 -> the local server's
        return original(url, download_root, filename=filename, md5=md5_of_zip, **kw)
    md5_of_zip = md5(zpath)
    monkeypatch.setattr(fds.caltech, "download_and_extract_archive", patched)
    got = fds.Caltech101(str(tmp_path / "root"), target_type=["category", "annotation"], download=True)
    assert_same_dataset(got, fds.Caltech101(str(tmp_path / "build"), target_type=["category", "annotation"]))
    assert sorted(os.listdir(tmp_path / "root" / "caltech101")) == ["101_ObjectCategories", "Annotations"]
