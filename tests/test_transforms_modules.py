"""Transforms are nn.Modules exactly where torchvision's are, and nn.Sequential of them matches torchvision."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")
pytest.importorskip("torchvision.transforms.v2")

import flowvision.backend as fb  # noqa: E402
import flowvision.transforms as T  # noqa: E402
import flowvision.transforms.v2 as T2  # noqa: E402


def _module_flags(mod_ours, mod_tv, base_ours, base_tv):
    names = [n for n in dir(mod_tv) if isinstance(getattr(mod_tv, n), type) and n[0].isupper() and hasattr(mod_ours, n)]
    return {n: (issubclass(getattr(mod_ours, n), base_ours), issubclass(getattr(mod_tv, n), base_tv)) for n in names}


@pytest.mark.parametrize("ours,theirs", [(T, tv.transforms), (T2, tv.transforms.v2)])
def test_module_subclassing_matches_torchvision(ours, theirs):
    flags = _module_flags(ours, theirs, fb.nn.Module, torch.nn.Module)
    assert len(flags) > 25
    mismatched = {n: f for n, f in flags.items() if f[0] != f[1]}
    assert not mismatched, mismatched


def test_sequential_of_v1_transforms_matches_torchvision():
    x = np.random.default_rng(0).random((3, 10, 12)).astype(np.float32)
    ours = fb.nn.Sequential(T.RandomHorizontalFlip(p=1.0), T.CenterCrop(8), T.Pad(1, fill=0.5),
                            T.Normalize([0.4, 0.5, 0.6], [0.2, 0.3, 0.4]), T.Grayscale(3))
    theirs = torch.nn.Sequential(tv.transforms.RandomHorizontalFlip(p=1.0), tv.transforms.CenterCrop(8),
                                 tv.transforms.Pad(1, fill=0.5),
                                 tv.transforms.Normalize([0.4, 0.5, 0.6], [0.2, 0.3, 0.4]), tv.transforms.Grayscale(3))
    np.testing.assert_allclose(ours(fb.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    ours.eval()
    assert all(not m.training for m in ours.modules())
    seen = []
    ours[1].register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    ours(fb.tensor(x))
    assert seen == [(3, 8, 8)]


def test_sequential_of_v2_transforms_matches_torchvision():
    x = np.random.default_rng(1).random((3, 9, 9)).astype(np.float32)
    ours = fb.nn.Sequential(T2.RandomVerticalFlip(p=1.0), T2.CenterCrop(6), T2.Normalize([0.5] * 3, [0.25] * 3))
    theirs = torch.nn.Sequential(tv.transforms.v2.RandomVerticalFlip(p=1.0), tv.transforms.v2.CenterCrop(6),
                                 tv.transforms.v2.Normalize([0.5] * 3, [0.25] * 3))
    np.testing.assert_allclose(ours(fb.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)


def test_transform_modules_pickle_and_keep_repr():
    import pickle
    c = T.Compose([T.Resize(5), T.RandomCrop(4), T.ToTensor()])
    back = pickle.loads(pickle.dumps(c))
    assert repr(back) == repr(c)
    assert repr(T.Resize(5)) == repr(tv.transforms.Resize(5)).replace("InterpolationMode.BILINEAR", "bilinear")
    assert list(T.Normalize([0.5], [0.5]).state_dict()) == list(tv.transforms.Normalize([0.5], [0.5]).state_dict())
