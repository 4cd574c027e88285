"""Optical-flow datasets against torchvision on the same miniature .flo / .pfm / 16-bit PNG files."""
import numpy as np
import pytest

import flowvision.datasets as fds
from flowvision.datasets.utils import CorruptDatasetError
from test_datasets_classification import assert_same_dataset
from test_datasets_fixtures_lists import make_flow_datasets

tvd = pytest.importorskip("torchvision.datasets")


@pytest.fixture(scope="module")
def flow_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("flow")
    make_flow_datasets(str(root))
    return str(root)


@pytest.mark.parametrize("name,kwargs", [
    ("Sintel", {"split": "train", "pass_name": "clean"}), ("Sintel", {"split": "train", "pass_name": "both"}),
    ("Sintel", {"split": "test"}),
    ("KittiFlow", {"split": "train"}), ("KittiFlow", {"split": "test"}),
    ("FlyingChairs", {"split": "train"}), ("FlyingChairs", {"split": "val"}),
    ("FlyingThings3D", {"split": "train"}), ("FlyingThings3D", {"pass_name": "both", "camera": "both"}),
    ("HD1K", {"split": "train"}), ("HD1K", {"split": "test"}),
])
def test_flow_datasets(flow_root, name, kwargs):
    fv, tv = getattr(fds, name)(flow_root, **kwargs), getattr(tvd, name)(flow_root, **kwargs)
    assert_same_dataset(fv, tv)
    sample = fv[0]
    if sample[2] is not None:
        assert sample[2].dtype == np.float32 and sample[2].shape == (2, 6, 8)


def test_bad_flow_files(tmp_path):
    from flowvision.datasets.optical_flow import _read_flo, _read_pfm
    (tmp_path / "x.flo").write_bytes(b"PIEH" + np.array([8, 6], "<i4").tobytes() + b"\x00" * 10)
    with pytest.raises(CorruptDatasetError, match="x.flo"):
        _read_flo(str(tmp_path / "x.flo"))
    (tmp_path / "y.pfm").write_bytes(b"P6\n1 1\n255\n")
    with pytest.raises(CorruptDatasetError, match="y.pfm"):
        _read_pfm(str(tmp_path / "y.pfm"))


@pytest.fixture(scope="module")
def stereo_root(tmp_path_factory):
    from test_datasets_fixtures_lists import make_stereo_datasets
    root = tmp_path_factory.mktemp("stereo")
    make_stereo_datasets(str(root))
    return str(root)


@pytest.mark.parametrize("name,kwargs", [
    ("CarlaStereo", {}), ("Kitti2012Stereo", {"split": "train"}), ("Kitti2012Stereo", {"split": "test"}),
    ("Kitti2015Stereo", {"split": "train"}), ("Kitti2015Stereo", {"split": "test"}),
    ("Middlebury2014Stereo", {"split": "train"}), ("Middlebury2014Stereo", {"split": "train", "calibration": "both"}),
    ("Middlebury2014Stereo", {"split": "test", "calibration": None}),
    ("CREStereo", {}), ("FallingThingsStereo", {"variant": "both"}),
    ("SceneFlowStereo", {"variant": "FlyingThings3D", "pass_name": "both"}), ("SceneFlowStereo", {"variant": "Monkaa"}),
    ("SintelStereo", {"pass_name": "both"}), ("InStereo2k", {"split": "train"}), ("InStereo2k", {"split": "test"}),
    ("ETH3DStereo", {"split": "train"}), ("ETH3DStereo", {"split": "test"}),
])
def test_stereo_datasets(stereo_root, name, kwargs):
    fv, tv = getattr(fds, name)(stereo_root, **kwargs), getattr(tvd, name)(stereo_root, **kwargs)
    assert_same_dataset(fv, tv)


def test_stereo_missing(tmp_path):
    from flowvision.datasets.utils import DatasetNotFoundError
    with pytest.raises(DatasetNotFoundError, match="carla-highres"):
        fds.CarlaStereo(str(tmp_path))
    with pytest.raises(ValueError, match="calibration"):
        fds.Middlebury2014Stereo(str(tmp_path), split="test")
