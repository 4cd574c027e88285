"""Every ``rng=`` of flowvision.data takes what ``resolve_rng`` takes (a RandomSource, a numpy Generator or an int
seed), also in the CutMix box helpers and ``apply_op``, and the same seed gives the same draw."""
import numpy as np
import pytest

from flowvision.data import RandomSource, apply_op, cutmix_bbox_and_lam, rand_bbox, rand_bbox_minmax


@pytest.mark.parametrize("make_rng", [lambda: 3, lambda: np.random.default_rng(3), lambda: RandomSource(3)])
def test_box_helpers_take_any_rng_like(make_rng):
    a = rand_bbox((3, 32, 48), 0.4, rng=make_rng())
    b = rand_bbox((3, 32, 48), 0.4, rng=make_rng())
    assert a == b and all(0 <= v <= 48 for v in a)
    lo_hi = rand_bbox_minmax((3, 32, 48), (0.2, 0.8), rng=make_rng())
    assert lo_hi == rand_bbox_minmax((3, 32, 48), (0.2, 0.8), rng=make_rng())
    (yl, yu, xl, xu), lam = cutmix_bbox_and_lam((3, 32, 48), 0.4, rng=make_rng())
    assert 0 <= yl <= yu <= 32 and 0 <= xl <= xu <= 48 and 0.0 <= lam <= 1.0


def test_apply_op_takes_an_int_seed():
    img = np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    a = apply_op(img, "GaussianBlurRand", 1.0, rng=5)
    b = apply_op(img, "GaussianBlurRand", 1.0, rng=5)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
