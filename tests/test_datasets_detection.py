"""ImageNet (archives), VOC, COCO and wrap_dataset_for_transforms_v2 against torchvision on the same files."""
import os
import shutil

import numpy as np
import pytest

import flowvision.datasets as fds
from flowvision.datasets.utils import CorruptDatasetError, DatasetNotFoundError
from test_datasets_classification import _describe, assert_same_dataset, assert_same_item, to_np
from test_datasets_fixtures import make_coco, make_imagenet_archives, make_voc
from test_datasets_fixtures_lists import make_cityscapes, make_kitti, make_sbd, make_widerface

tvd = pytest.importorskip("torchvision.datasets")


@pytest.fixture
def imagenet(tmp_path, monkeypatch):
    import flowvision.datasets.imagenet as fim
    import torchvision.datasets.imagenet as tim
    meta = make_imagenet_archives(str(tmp_path / "a"))
    for key, value in meta.items():
        monkeypatch.setitem(fim.ARCHIVE_META, key, value)
        monkeypatch.setitem(tim.ARCHIVE_META, key, value)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.parametrize("split", ["train", "val"])
def test_imagenet_from_archives(imagenet, split):
    a, b = imagenet
    fv, tv = fds.ImageNet(str(a), split=split), tvd.ImageNet(str(b), split=split)
    assert_same_dataset(fv, tv)
    assert fv.wnids == tv.wnids and fv.wnid_to_idx == tv.wnid_to_idx
    assert [os.path.relpath(p, a) for p, _ in fv.samples] == [os.path.relpath(p, b) for p, _ in tv.samples]
    assert sorted(n for n in os.listdir(a) if n.startswith(".")) == []  # no staging folders left
    # a root prepared by torchvision (its meta.bin, written with torch.save) is read without torch
    fv2 = fds.ImageNet(str(b), split=split)
    assert fv2.classes == tv.classes and fv2.samples == tv.samples
    assert repr(fv).replace(str(a), str(b)) == repr(tv)


def test_imagenet_missing_archive_names_it(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="ILSVRC2012_devkit_t12.tar.gz") as e:
        fds.ImageNet(str(tmp_path))
    assert "fa75699e90414af021442c21a62c3abf" in str(e.value)


@pytest.mark.parametrize("image_set", ["train", "val", "trainval"])
def test_voc_detection_and_segmentation(tmp_path, image_set):
    make_voc(str(tmp_path))
    for name in ("VOCDetection", "VOCSegmentation"):
        fv = getattr(fds, name)(str(tmp_path), year="2012", image_set=image_set)
        tv = getattr(tvd, name)(str(tmp_path), year="2012", image_set=image_set)
        assert_same_dataset(fv, tv)
        if name == "VOCSegmentation":
            assert fv[0][1].mode == "P" and fv[0][1].getpalette() == tv[0][1].getpalette()


def test_voc_bad_input(tmp_path):
    base = make_voc(str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match="train.txt"):
        fds.VOCDetection(str(tmp_path), year="2011")
    with open(os.path.join(base, "Annotations", "2008_000001.xml"), "w") as f:
        f.write("<annotation><object>")
    with pytest.raises(CorruptDatasetError, match="2008_000001.xml"):
        fds.VOCDetection(str(tmp_path))[0]
    with pytest.raises(ValueError, match="image_set"):
        fds.VOCDetection(str(tmp_path), image_set="test")


@pytest.mark.parametrize("captions", [False, True])
def test_coco(tmp_path, captions):
    img_dir, ann = make_coco(str(tmp_path), n_images=6, captions=captions)
    name = "CocoCaptions" if captions else "CocoDetection"
    fv, tv = getattr(fds, name)(img_dir, ann), getattr(tvd, name)(img_dir, ann)
    assert fv.ids == tv.ids
    assert_same_dataset(fv, tv)


def test_coco_bad_json(tmp_path):
    img_dir, ann = make_coco(str(tmp_path))
    with open(ann, "w") as f:
        f.write('{"images": [')
    with pytest.raises(CorruptDatasetError, match="instances.json"):
        fds.CocoDetection(img_dir, ann)
    with pytest.raises(DatasetNotFoundError, match="nope.json"):
        fds.CocoDetection(img_dir, str(tmp_path / "nope.json"))


def _assert_same_wrapped(a, b):
    """A sample of the flowvision wrapper equals torchvision's (tv_tensors compared by type name and values)."""
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            _assert_same_wrapped(a[k], b[k])
    elif isinstance(a, (tuple, list)) and not hasattr(a, "shape"):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_wrapped(x, y)
    elif hasattr(a, "shape") and hasattr(b, "shape"):
        assert type(a).__name__ == type(b).__name__
        if type(b).__name__ == "BoundingBoxes":
            assert a.format.name == b.format.name and tuple(a.canvas_size) == tuple(b.canvas_size)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-6)
        assert to_np(a).dtype == to_np(b).dtype
    else:
        assert_same_item(a, b)


@pytest.mark.parametrize("target_keys", [None, "all"])
def test_wrap_for_transforms_v2(tmp_path, target_keys):
    from torchvision.datasets import wrap_dataset_for_transforms_v2 as tv_wrap
    make_voc(str(tmp_path))
    img_dir, ann = make_coco(str(tmp_path), n_images=5)
    pairs = [(fds.VOCDetection(str(tmp_path)), tvd.VOCDetection(str(tmp_path))),
             (fds.CocoDetection(img_dir, ann), tvd.CocoDetection(img_dir, ann))]
    for fv, tv in pairs:
        fw, tw = fds.wrap_dataset_for_transforms_v2(fv, target_keys), tv_wrap(tv, target_keys)
        assert len(fw) == len(tw) and type(fw).__name__ == type(tw).__name__
        for i in range(len(tw)):
            _assert_same_wrapped(fw[i], tw[i])
    seg = fds.wrap_dataset_for_transforms_v2(fds.VOCSegmentation(str(tmp_path)))
    tseg = tv_wrap(tvd.VOCSegmentation(str(tmp_path)))
    _assert_same_wrapped(seg[1], tseg[1])
    with pytest.raises(ValueError, match="target_keys"):
        fds.wrap_dataset_for_transforms_v2(fds.VOCSegmentation(str(tmp_path)), target_keys={"boxes"})


def test_wrapped_detection_through_transforms_v2(tmp_path):
    from flowvision.transforms import v2
    make_voc(str(tmp_path))
    ds = fds.VOCDetection(str(tmp_path), transforms=v2.Compose([v2.Resize((40, 50)), v2.RandomHorizontalFlip(1.0)]))
    wrapped = fds.wrap_dataset_for_transforms_v2(ds)
    img, target = wrapped[1]
    raw_img, raw = fds.wrap_dataset_for_transforms_v2(fds.VOCDetection(str(tmp_path)))[1]
    assert img.size == (50, 40) and tuple(target["boxes"].canvas_size) == (40, 50)
    sx, sy = 50 / raw_img.width, 40 / raw_img.height
    b = to_np(raw["boxes"]).astype(np.float64)
    expected = np.stack([50 - b[:, 2] * sx, b[:, 1] * sy, 50 - b[:, 0] * sx, b[:, 3] * sy], 1)
    np.testing.assert_allclose(to_np(target["boxes"]), expected, atol=1)
    np.testing.assert_array_equal(to_np(target["labels"]), to_np(raw["labels"]))


def _sort_like_flowvision(tv, attrs):
    """torchvision lists some folders in the file system's order, flowvision sorted: reorder torchvision's lists."""
    order = sorted(range(len(getattr(tv, attrs[0]))), key=lambda i: getattr(tv, attrs[0])[i])
    for a in attrs:
        setattr(tv, a, [getattr(tv, a)[i] for i in order])


@pytest.mark.parametrize("split,mode", [("train", "fine"), ("val", "fine"), ("train", "coarse")])
@pytest.mark.parametrize("target_type", ["instance", "semantic", "color", "polygon", ["semantic", "polygon"]])
def test_cityscapes(tmp_path, split, mode, target_type):
    make_cityscapes(str(tmp_path))
    fv = fds.Cityscapes(str(tmp_path), split=split, mode=mode, target_type=target_type)
    tv = tvd.Cityscapes(str(tmp_path), split=split, mode=mode, target_type=target_type)
    _sort_like_flowvision(tv, ["images", "targets"])
    assert_same_dataset(fv, tv)
    assert repr(fv) == repr(tv)


def test_cityscapes_missing(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="leftImg8bit_trainvaltest.zip"):
        fds.Cityscapes(str(tmp_path))
    with pytest.raises(ValueError, match="train_extra"):
        fds.Cityscapes(str(tmp_path), split="test", mode="coarse")


@pytest.mark.parametrize("image_set", ["train", "val", "train_noval"])
@pytest.mark.parametrize("mode", ["segmentation", "boundaries"])
def test_sbd(tmp_path, image_set, mode):
    make_sbd(str(tmp_path))
    fv = fds.SBDataset(str(tmp_path), image_set=image_set, mode=mode)
    tv = tvd.SBDataset(str(tmp_path), image_set=image_set, mode=mode)
    assert_same_dataset(fv, tv)
    assert repr(fv) == repr(tv)


@pytest.mark.parametrize("train", [True, False])
def test_kitti(tmp_path, train):
    make_kitti(str(tmp_path))
    fv, tv = fds.Kitti(str(tmp_path), train=train), tvd.Kitti(str(tmp_path), train=train)
    _sort_like_flowvision(tv, ["images", "targets"] if train else ["images"])
    assert_same_dataset(fv, tv)


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_widerface(tmp_path, split):
    make_widerface(str(tmp_path))
    fv, tv = fds.WIDERFace(str(tmp_path), split=split), tvd.WIDERFace(str(tmp_path), split=split)
    assert_same_dataset(fv, tv)
    assert repr(fv) == repr(tv)


def test_wrap_more_datasets(tmp_path, monkeypatch):
    from torchvision.datasets import wrap_dataset_for_transforms_v2 as tv_wrap
    from test_datasets_fixtures_lists import make_celeba, make_pets
    root = str(tmp_path)
    make_kitti(root)
    make_widerface(root)
    make_sbd(os.path.join(root, "sbd"))
    make_pets(root)
    make_cityscapes(os.path.join(root, "cs"))
    md5s = make_celeba(root)
    for cls in (fds.CelebA, tvd.CelebA):
        monkeypatch.setattr(cls, "file_list", [(i, md5s.get(f, m), f) for i, m, f in cls.file_list])
    cases = [
        (lambda m: m.Kitti(root), None), (lambda m: m.Kitti(root), "all"), (lambda m: m.Kitti(root, train=False), None),
        (lambda m: m.WIDERFace(root), None), (lambda m: m.WIDERFace(root, split="val"), {"bbox", "pose"}),
        (lambda m: m.SBDataset(os.path.join(root, "sbd"), mode="segmentation"), None),
        (lambda m: m.OxfordIIITPet(root, target_types=["category", "segmentation"]), None),
        (lambda m: m.CelebA(root, target_type=["bbox", "identity"]), None),
        (lambda m: m.Cityscapes(os.path.join(root, "cs"), target_type="semantic"), None),
    ]
    for make, keys in cases:
        fv, tv = make(fds), make(tvd)
        if isinstance(tv, (tvd.Kitti, tvd.Cityscapes)):
            _sort_like_flowvision(tv, ["images", "targets"] if tv.targets else ["images"])
        fw, tw = fds.wrap_dataset_for_transforms_v2(fv, keys), tv_wrap(tv, keys)
        assert len(fw) == len(tw) > 0
        for i in range(len(tw)):
            _assert_same_wrapped(fw[i], tw[i])
    with pytest.raises(RuntimeError, match="boundaries"):
        fds.wrap_dataset_for_transforms_v2(fds.SBDataset(os.path.join(root, "sbd")))


def test_wrap_cityscapes_instances(tmp_path):
    """torchvision's own wrapper fails on 16-bit instance PNGs (uint16 compare); check against numpy instead."""
    from PIL import Image
    make_cityscapes(str(tmp_path))
    ds = fds.wrap_dataset_for_transforms_v2(fds.Cityscapes(str(tmp_path), target_type="instance"))
    raw = fds.Cityscapes(str(tmp_path), target_type="instance")
    for i in range(len(ds)):
        _, target = ds[i]
        data = np.asarray(Image.open(raw.targets[i][0])).astype(np.int64)
        ids = np.unique(data)
        np.testing.assert_array_equal(to_np(target["labels"]), np.where(ids >= 1000, ids // 1000, ids))
        np.testing.assert_array_equal(to_np(target["masks"]), np.stack([(data == k)[None] for k in ids]))


def _joint(img, target):
    return _describe(img), ("joint", target)


@pytest.mark.parametrize("name", ["VOCSegmentation", "VOCDetection", "CocoDetection", "SBDataset", "Kitti",
                                  "WIDERFace"])
def test_transforms_applied_like_torchvision(tmp_path, name):
    """The joint ``transforms`` and the separate ``transform`` / ``target_transform`` give torchvision's items."""
    root = str(tmp_path)
    if name.startswith("VOC"):
        make_voc(root)
        args, kw = (root,), {"year": "2012", "image_set": "train"}
    elif name == "CocoDetection":
        args, kw = make_coco(root, n_images=3), {}
    elif name == "SBDataset":
        make_sbd(root)
        args, kw = (root,), {"image_set": "train", "mode": "segmentation"}
    elif name == "Kitti":
        make_kitti(root)
        args, kw = (root,), {"train": True}
    else:
        make_widerface(root)
        args, kw = (root,), {"split": "train"}
    for extra in ({"transforms": _joint}, {"transform": _describe, "target_transform": lambda t: ("sep", t)}):
        if name == ("WIDERFace" if "transforms" in extra else "SBDataset"):
            continue  # torchvision's WIDERFace takes only the separate pair, SBDataset only the joint one
        fv, tv = getattr(fds, name)(*args, **kw, **extra), getattr(tvd, name)(*args, **kw, **extra)
        if name == "Kitti":
            _sort_like_flowvision(tv, ["images", "targets"])
        assert_same_dataset(fv, tv)
        assert isinstance(fv[0][0], tuple) and fv[0][1][0] in ("joint", "sep")
