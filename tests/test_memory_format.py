"""memory_format=channels_last: torch's strides, is_contiguous rules, conversions, and equal results in models."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowvision.backend as fb  # noqa: E402

FORMATS = ["contiguous_format", "channels_last", "preserve_format"]


def _pair(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return fb.tensor(x), torch.tensor(x)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 4), (3, 3, 1, 5)])
def test_strides_and_flags_follow_torch(shape):
    f, t = _pair(shape)
    for fmt in ("contiguous_format", "channels_last"):
        fc, tc = f.contiguous(memory_format=getattr(fb, fmt)), t.contiguous(memory_format=getattr(torch, fmt))
        assert fc.stride() == tc.stride(), (fmt, fc.stride(), tc.stride())
        for q in ("contiguous_format", "channels_last"):
            assert fc.is_contiguous(memory_format=getattr(fb, q)) == tc.is_contiguous(memory_format=getattr(torch, q))
        assert fc.is_contiguous() == tc.is_contiguous()
        np.testing.assert_array_equal(fc.numpy(), tc.numpy())
        ft, tt = f.to(memory_format=getattr(fb, fmt)), t.to(memory_format=getattr(torch, fmt))
        assert ft.stride() == tt.stride()
        # the *_like functions and clone keep channels_last by default (preserve_format)
        for fn in ("empty_like", "zeros_like", "ones_like"):
            assert getattr(fb, fn)(fc).stride() == getattr(torch, fn)(tc).stride(), fn
        assert fb.full_like(fc, 2.0).stride() == torch.full_like(tc, 2.0).stride()
        assert fc.clone().stride() == tc.clone().stride()
        for mf in FORMATS:
            assert fc.clone(memory_format=getattr(fb, mf)).stride() == tc.clone(memory_format=getattr(torch, mf)).stride()
            assert fb.empty_like(fc, memory_format=getattr(fb, mf)).stride() == \
                torch.empty_like(tc, memory_format=getattr(torch, mf)).stride()
        # numpy-computed elementwise results keep the layout (the threaded C++ kernels return contiguous
        # outputs: equal values, torch's contiguous strides)
        assert (fc * 2 + 1).stride() == (tc * 2 + 1).stride()
        np.testing.assert_array_equal(fc.relu().numpy(), tc.relu().numpy())
    assert fb.empty(*shape, memory_format=fb.channels_last).stride() == \
        torch.empty(*shape, memory_format=torch.channels_last).stride()


def test_channels_last_3d_and_rank_errors():
    f, t = _pair((2, 3, 2, 4, 5))
    a = f.contiguous(memory_format=fb.channels_last_3d)
    b = t.contiguous(memory_format=torch.channels_last_3d)
    assert a.stride() == b.stride()
    assert a.is_contiguous(memory_format=fb.channels_last_3d)
    assert not fb.zeros(3, 4).is_contiguous(memory_format=fb.channels_last)
    with pytest.raises(RuntimeError, match="rank 4"):
        fb.zeros(3, 4).contiguous(memory_format=fb.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        fb.zeros(1, 1, 1, 1).contiguous(memory_format="nhwc")


def test_gradient_through_format_change():
    f, t = _pair((2, 3, 4, 4))
    f.requires_grad_(True)
    t.requires_grad_(True)
    w = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    (f.contiguous(memory_format=fb.channels_last) * fb.tensor(w)).sum().backward()
    (t.contiguous(memory_format=torch.channels_last) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())


def test_module_to_channels_last_gives_equal_outputs():
    from flowvision.models import resnet18
    fb.manual_seed(0)
    m = resnet18(weights=None).eval()
    x = fb.randn(2, 3, 64, 64)
    with fb.no_grad():
        ref = m(x)
    m.to(memory_format=fb.channels_last)
    w = m.conv1.weight
    tw = torch.empty(tuple(w.shape)).to(memory_format=torch.channels_last)
    assert w.stride() == tw.stride() and w.is_contiguous(memory_format=fb.channels_last)
    assert m.fc.weight.is_contiguous()  # 2-D parameters are left alone, as in torch
    with fb.no_grad():
        out = m(x.to(memory_format=fb.channels_last))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)
    # training step works on channels_last parameters
    m.train()
    loss = m(x.contiguous(memory_format=fb.channels_last)).sum()
    loss.backward()
    assert m.conv1.weight.grad.shape == m.conv1.weight.shape
