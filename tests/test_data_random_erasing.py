"""RandomErasing parity with timm 1.0.

timm draws boxes with Python ``random`` and noise with torch's RNG.  ``TimmRandom(normal_fn=...)``
draws boxes from ``random`` in timm's order and takes noise from a function we point at torch, so
seeding ``random`` and ``torch`` identically forces the same boxes and fill for both libraries.
"""
import random

import numpy as np
import pytest

from flowvision.data import RandomErasing, TimmRandom

torch = pytest.importorskip("torch")
timm_re = pytest.importorskip("timm.data.random_erasing")


def _torch_normal(shape, dtype):
    return torch.empty(shape, dtype=torch.float32).normal_().numpy()


@pytest.mark.parametrize("mode", ["const", "rand", "pixel"])
@pytest.mark.parametrize("kw", [dict(), dict(max_count=3), dict(min_count=2, max_count=4, probability=0.8),
                                dict(num_splits=2, min_aspect=0.5, max_aspect=3.0), dict(min_area=0.2, max_area=0.9)])
@pytest.mark.parametrize("batched", [False, True])
def test_matches_timm(mode, kw, batched):
    x = np.random.default_rng(0).standard_normal((6, 3, 20, 24) if batched else (3, 20, 24)).astype(np.float32)
    for seed in range(4):
        random.seed(seed)
        torch.manual_seed(seed)
        ref = timm_re.RandomErasing(mode=mode, device="cpu", **{"probability": 0.9, **kw})(torch.from_numpy(x.copy()))
        random.seed(seed)
        torch.manual_seed(seed)
        xm = x.copy()
        out = RandomErasing(mode=mode, rng=TimmRandom(normal_fn=_torch_normal), **{"probability": 0.9, **kw})(xm)
        assert out is xm
        np.testing.assert_array_equal(xm, ref.numpy())


def test_torch_tensor_in_place_and_seeded():
    x = torch.randn(4, 3, 16, 16)
    a = x.clone()
    out = RandomErasing(probability=1.0, mode="pixel", seed=3)(a)
    assert out is a and not torch.equal(a, x)
    b = x.clone()
    RandomErasing(probability=1.0, mode="pixel", seed=3)(b)
    assert torch.equal(a, b)


def test_bad_input():
    with pytest.raises(ValueError, match="mode"):
        RandomErasing(mode="nope")
    with pytest.raises(TypeError, match="float"):
        RandomErasing(mode="pixel")(np.zeros((3, 8, 8), np.uint8))
    with pytest.raises(ValueError, match="shape"):
        RandomErasing()(np.zeros((8, 8), np.float32))
    RandomErasing(probability=1.0)(np.ones((3, 8, 8), np.uint8))  # const works on any dtype
