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
