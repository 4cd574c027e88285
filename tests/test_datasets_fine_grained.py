"""File-list classification datasets against torchvision on the same miniature files."""
import os

import pytest

import flowvision.datasets as fds
from flowvision.datasets.utils import CorruptDatasetError, DatasetNotFoundError
from test_datasets_classification import assert_same_dataset
from test_datasets_fixtures import md5
from test_datasets_fixtures_lists import (make_caltech101, make_caltech256, make_dtd, make_fer2013, make_fgvc,
                                          make_flowers102, make_food101, make_gtsrb, make_imagenette, make_pets,
                                          make_rendered_sst2, make_simple_folders, make_stanford_cars, make_sun397)

tvd = pytest.importorskip("torchvision.datasets")


def both(name, *args, **kwargs):
    return getattr(fds, name)(*args, **kwargs), getattr(tvd, name)(*args, **kwargs)


@pytest.mark.parametrize("split", ["train", "test"])
def test_food101(tmp_path, split):
    make_food101(str(tmp_path))
    assert_same_dataset(*both("Food101", str(tmp_path), split=split))


@pytest.mark.parametrize("split,partition", [("train", 1), ("val", 1), ("test", 1), ("train", 2)])
def test_dtd(tmp_path, split, partition):
    make_dtd(str(tmp_path))
    fv, tv = both("DTD", str(tmp_path), split=split, partition=partition)
    assert_same_dataset(fv, tv)
    assert repr(fv) == repr(tv)


@pytest.mark.parametrize("level", ["variant", "family", "manufacturer"])
@pytest.mark.parametrize("split", ["train", "test", "trainval"])
def test_fgvc_aircraft(tmp_path, split, level):
    make_fgvc(str(tmp_path))
    assert_same_dataset(*both("FGVCAircraft", str(tmp_path), split=split, annotation_level=level))


def test_sun397(tmp_path):
    make_sun397(str(tmp_path))
    fv, tv = both("SUN397", str(tmp_path))
    # torchvision lists the images in the file system's order, flowvision sorted: align before comparing
    order = sorted(range(len(tv)), key=lambda i: str(tv._image_files[i]))
    tv._image_files = [tv._image_files[i] for i in order]
    tv._labels = [tv._labels[i] for i in order]
    assert_same_dataset(fv, tv)


@pytest.mark.parametrize("split", ["train", "test"])
def test_gtsrb(tmp_path, split):
    make_gtsrb(str(tmp_path))
    assert_same_dataset(*both("GTSRB", str(tmp_path), split=split))


@pytest.mark.parametrize("kind", ["split", "fer", "icml"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_fer2013(tmp_path, monkeypatch, kind, split):
    paths = make_fer2013(str(tmp_path), kind)
    for cls in (fds.FER2013, tvd.FER2013):
        res = dict(cls._RESOURCES)
        for p in paths:
            key = {"train.csv": "train", "test.csv": "test", "fer2013.csv": "fer",
                   "icml_face_data.csv": "icml"}[os.path.basename(p)]
            res[key] = (os.path.basename(p), md5(p))
        monkeypatch.setattr(cls, "_RESOURCES", res)
    assert_same_dataset(*both("FER2013", str(tmp_path), split=split))


def test_fer2013_bad_row(tmp_path, monkeypatch):
    path = make_fer2013(str(tmp_path))[0]
    with open(path, "a") as f:
        f.write("3,1 2 3\n")
    monkeypatch.setattr(fds.FER2013, "_RESOURCES", dict(fds.FER2013._RESOURCES, train=("train.csv", md5(path))))
    with pytest.raises(CorruptDatasetError, match="row 5"):
        fds.FER2013(str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match="kaggle"):
        fds.FER2013(str(tmp_path / "nothing"))


@pytest.mark.parametrize("split", ["trainval", "test"])
@pytest.mark.parametrize("target_types", ["category", "binary-category", "segmentation",
                                          ["category", "segmentation"], []])
def test_oxford_iiit_pet(tmp_path, split, target_types):
    make_pets(str(tmp_path))
    assert_same_dataset(*both("OxfordIIITPet", str(tmp_path), split=split, target_types=target_types))


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_rendered_sst2(tmp_path, split):
    make_rendered_sst2(str(tmp_path))
    assert_same_dataset(*both("RenderedSST2", str(tmp_path), split=split))


@pytest.mark.parametrize("split", ["train", "val"])
def test_imagenette(tmp_path, split):
    make_imagenette(str(tmp_path))
    fv, tv = both("Imagenette", str(tmp_path), split=split, size="160px")
    assert_same_dataset(fv, tv)
    assert fv.wnids == tv.wnids


def test_eurosat_and_country211(tmp_path):
    make_simple_folders(str(tmp_path), os.path.join("eurosat", "2750"))
    assert_same_dataset(*both("EuroSAT", str(tmp_path)))
    for split in ("train", "valid", "test"):
        make_simple_folders(str(tmp_path), os.path.join("country211", split), classes=("AD", "FR", "ZW"))
        assert_same_dataset(*both("Country211", str(tmp_path), split=split))


def test_missing_dataset_names_url(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="food-101.tar.gz"):
        fds.Food101(str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match="dtd-r1.0.1.tar.gz"):
        fds.DTD(str(tmp_path))


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_flowers102(tmp_path, monkeypatch, split):
    md5s = make_flowers102(str(tmp_path))
    for cls in (fds.Flowers102, tvd.Flowers102):
        d = dict(cls._file_dict)
        for k, v in md5s.items():
            d[k] = (d[k][0], v)
        monkeypatch.setattr(cls, "_file_dict", d)
    assert_same_dataset(*both("Flowers102", str(tmp_path), split=split))


@pytest.mark.parametrize("split", ["train", "test"])
def test_stanford_cars(tmp_path, split):
    make_stanford_cars(str(tmp_path))
    assert_same_dataset(*both("StanfordCars", str(tmp_path), split=split))


@pytest.mark.parametrize("target_type", ["category", "annotation", ["category", "annotation"]])
def test_caltech101(tmp_path, target_type):
    make_caltech101(str(tmp_path))
    fv, tv = both("Caltech101", str(tmp_path), target_type=target_type)
    assert fv.categories == tv.categories
    assert_same_dataset(fv, tv)


def test_caltech256(tmp_path):
    make_caltech256(str(tmp_path))
    fv, tv = both("Caltech256", str(tmp_path))
    assert fv.categories == tv.categories
    assert_same_dataset(fv, tv)
