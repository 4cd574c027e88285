"""Swin window partition / reverse (`_C.window_partition` / `_C.window_reverse`, flowvision.layers.window_*):
against torch's roll + pad + view/permute on every ISA this CPU supports, bit-identical for 1/2/3 threads;
gradients against torch autograd; bad inputs raise clear errors; a small Swin against timm, eager and compiled,
and its cached attention mask following writes to the bias table."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")
_C = pytest.importorskip("flowvision.backend._C")

import flowvision  # noqa: E402
from flowvision import backend as flow  # noqa: E402
from flowvision.layers import window_partition, window_reverse  # noqa: E402
from flowvision.models.swin_transformer import SwinTransformer  # noqa: E402


# (B, H, W, C, window, shift): exact tiling, padding on one / both sides, non-square windows, channels 3/96/100
CASES = [
    (2, 14, 14, 96, (7, 7), (3, 3)),
    (1, 14, 14, 96, (7, 7), (0, 0)),
    (2, 9, 11, 3, (4, 3), (2, 1)),
    (1, 10, 10, 100, (7, 7), (3, 3)),
    (3, 5, 6, 100, (7, 7), (0, 0)),
    (1, 8, 12, 3, (4, 4), (0, 2)),
]


def torch_partition(x, window, shift):
    """timm Swin's order: roll by -shift, zero-pad bottom/right, then cut into windows."""
    b, h, w, c = x.shape
    wh, ww = window
    x = torch.roll(x, (-shift[0], -shift[1]), (1, 2))
    x = torch.nn.functional.pad(x, (0, 0, 0, -w % ww, 0, -h % wh))
    hp, wp = x.shape[1:3]
    return x.view(b, hp // wh, wh, wp // ww, ww, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, wh * ww, c)


def torch_reverse(windows, window, shift, h, w, shortcut=None):
    wh, ww = window
    c = windows.shape[-1]
    hp, wp = -(-h // wh) * wh, -(-w // ww) * ww
    x = windows.reshape(-1, hp // wh, wp // ww, wh, ww, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, hp, wp, c)
    x = torch.roll(x[:, :h, :w], shift, (1, 2))
    return x if shortcut is None else shortcut + x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_match_torch_on_every_isa_and_thread_count(isa, threads, dtype):
    rng = np.random.default_rng(0)
    for b, h, w, c, window, shift in CASES:
        x = rng.standard_normal((b, h, w, c)).astype(dtype)
        sc = rng.standard_normal((b, h, w, c)).astype(dtype)
        ref_win = torch_partition(torch.from_numpy(x), window, shift).numpy()
        ref_y = torch_reverse(torch.from_numpy(ref_win), window, shift, h, w, torch.from_numpy(sc)).numpy()
        for n in (1, 2, 3):
            _C.set_num_threads(n)
            win = _C.window_partition(x, window, shift)
            assert win.dtype == dtype
            # pure copies / one add per element: equal to torch bit for bit, whatever the threads and ISA
            np.testing.assert_array_equal(win, ref_win, err_msg=f"partition {isa} {n} thr {(b, h, w, c)}")
            np.testing.assert_array_equal(_C.window_reverse(win, window, shift, (h, w), sc), ref_y)
            np.testing.assert_array_equal(_C.window_reverse(win, window, shift, (h, w)), x)  # exact inverse


def test_shift_is_taken_modulo_the_map_like_roll():
    x = np.random.default_rng(1).standard_normal((1, 6, 5, 4)).astype(np.float32)
    ref = torch_partition(torch.from_numpy(x), (3, 3), (6 + 2, -1 % 5)).numpy()
    np.testing.assert_array_equal(_C.window_partition(x, (3, 3), (8, -1)), ref)


def test_layers_api_gradients_match_torch_autograd():
    rng = np.random.default_rng(2)
    for b, h, w, c, window, shift in CASES[:4]:
        x = rng.standard_normal((b, h, w, c))
        sc = rng.standard_normal((b, h, w, c))
        tx = torch.tensor(x, requires_grad=True)
        tsc = torch.tensor(sc, requires_grad=True)
        scale = np.linspace(0.5, 1.5, c)  # makes the gradient reaching the partition non-uniform
        twin = torch_partition(tx, window, shift)
        tw2 = twin * torch.from_numpy(scale)
        ty = torch_reverse(tw2, window, shift, h, w, tsc)
        gy = rng.standard_normal(ty.shape)
        ty.backward(torch.from_numpy(gy))

        fx = flow.tensor(x, requires_grad=True)
        fsc = flow.tensor(sc, requires_grad=True)
        fwin = window_partition(fx, window, shift)
        fw2 = fwin * flow.from_numpy(scale)
        fy = window_reverse(fw2, window, shift, h, w, shortcut=fsc)
        fy.backward(flow.from_numpy(gy))
        np.testing.assert_array_equal(fwin.detach().numpy(), twin.detach().numpy())
        np.testing.assert_array_equal(fy.detach().numpy(), ty.detach().numpy())
        np.testing.assert_array_equal(fx.grad.numpy(), tx.grad.numpy())
        np.testing.assert_array_equal(fsc.grad.numpy(), tsc.grad.numpy())


def test_layers_api_float16_and_no_shortcut():
    x = np.random.default_rng(3).standard_normal((1, 9, 9, 8)).astype(np.float16)
    win = window_partition(flow.from_numpy(x), 4, 2)
    assert win.dtype == flow.float16 and tuple(win.shape) == (9, 16, 8)
    np.testing.assert_array_equal(win.numpy(), torch_partition(torch.from_numpy(x), (4, 4), (2, 2)).numpy())
    back = window_reverse(win, 4, 2, 9, 9)
    np.testing.assert_array_equal(back.numpy(), x)


def test_generic_fallback_equals_the_kernels():
    """The roll / pad / reshape formulation used on devices without the kernel (CUDA), checked on CPU."""
    from flowvision.backend._ops.window import _composite_partition, _composite_reverse
    rng = np.random.default_rng(7)
    for b, h, w, c, window, shift in CASES:
        x = flow.from_numpy(rng.standard_normal((b, h, w, c)).astype(np.float32))
        sc = flow.from_numpy(rng.standard_normal((b, h, w, c)).astype(np.float32))
        win = window_partition(x, window, shift)
        np.testing.assert_array_equal(_composite_partition(x, window, shift).numpy(), win.numpy())
        np.testing.assert_array_equal(_composite_reverse(win, window, shift, h, w, sc).numpy(),
                                      window_reverse(win, window, shift, h, w, sc).numpy())


def test_bad_inputs_raise_clear_errors():
    x = np.zeros((1, 8, 8, 4), np.float32)
    with pytest.raises(ValueError, match="must be 4-D"):
        _C.window_partition(np.zeros((8, 8, 4), np.float32), (4, 4), (0, 0))
    with pytest.raises(ValueError, match="window_size must be positive"):
        _C.window_partition(x, (0, 4), (0, 0))
    with pytest.raises(ValueError, match="float32 or float64"):
        _C.window_partition(x.astype(np.int64), (4, 4), (0, 0))
    with pytest.raises(ValueError, match="non-empty spatial size"):
        _C.window_partition(np.zeros((1, 0, 8, 4), np.float32), (4, 4), (0, 0))
    win = _C.window_partition(x, (4, 4), (2, 2))
    with pytest.raises(ValueError, match="do not tile"):
        _C.window_reverse(win[:3], (4, 4), (2, 2), (8, 8))
    with pytest.raises(ValueError, match="do not tile"):
        _C.window_reverse(win, (4, 2), (2, 2), (8, 8))
    with pytest.raises(ValueError, match="'shortcut' must have shape"):
        _C.window_reverse(win, (4, 4), (2, 2), (8, 8), np.zeros((1, 8, 7, 4), np.float32))
    with pytest.raises(ValueError, match="dtype of 'windows'"):
        _C.window_reverse(win, (4, 4), (2, 2), (8, 8), np.zeros((1, 8, 8, 4), np.float64))
    with pytest.raises(RuntimeError, match="must be 4-D"):
        window_partition(flow.zeros(8, 8, 4), 4)
    with pytest.raises(RuntimeError, match="floating-point"):
        window_partition(flow.zeros(1, 8, 8, 4, dtype=flow.int64), 4)
    with pytest.raises(ValueError, match="pair of ints"):
        window_partition(flow.zeros(1, 8, 8, 4), (4, 4, 4))
    with pytest.raises(TypeError, match="must be a Tensor"):
        window_reverse(x, 4, 0, 8, 8)


# ---------------------------------------------------------------- a small Swin against timm
SMALL = dict(img_size=40, patch_size=2, embed_dim=16, depths=(2, 2), num_heads=(2, 4), window_size=6,
             num_classes=7, drop_path_rate=0.0)  # 20x20 and 10x10 maps: padded and shifted windows in both stages


def _small_pair():
    torch.manual_seed(0)
    ref = timm.models.swin_transformer.SwinTransformer(**SMALL).eval()
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if "relative_position_bias_table" in name:
                p.normal_(0, 0.5)  # a bias that matters against the shift mask
    ours = SwinTransformer(**SMALL).eval()
    ours.load_state_dict({k: flow.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()})
    return ref, ours


def _close(out, ref, rtol=1e-4):
    ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
    out = out.detach().numpy() if hasattr(out, "detach") else np.asarray(out)
    assert out.shape == ref.shape
    scale = max(float(np.abs(ref).max()), 1e-6)
    assert float(np.abs(out - ref).max()) <= rtol * scale


def test_small_swin_matches_timm_eager_compiled_and_after_a_bias_update():
    ref, ours = _small_pair()
    x = np.random.default_rng(4).standard_normal((2, 3, 40, 40)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x))
    attn = ours.layers[0].blocks[1].attn
    with flow.no_grad():
        _close(ours(flow.from_numpy(x)), expected)
        mask = attn._mask_cache[3]
        assert tuple(mask.shape) == (16, 2, 36, 36)  # (nW, heads, N, N): bias + shift mask
        _close(ours(flow.from_numpy(x)), expected)  # second call: the cached masks
        assert attn._mask_cache[3] is mask
    compiled = flowvision.compile(ours, flow.from_numpy(x))
    assert compiled.plans[next(iter(compiled.plans))] is not None, compiled.fallback_reason
    _close(compiled(flow.from_numpy(x)), expected)
    steps = compiled.explain(flow.from_numpy(x))
    assert steps.count("WindowPartition") == 4 and steps.count("WindowReverse") == 4
    assert "Roll" not in steps
    if steps.startswith("executor: native"):  # the C++ executor runs the window ops as native steps
        assert "PYTHON WindowPartition" not in steps and "PYTHON WindowReverse" not in steps

    # an in-place write to one block's bias table: the cached mask (eager) and the plan (compiled) follow it
    with torch.no_grad():
        ref.layers[1].blocks[1].attn.relative_position_bias_table.mul_(-2.0)
        expected = ref(torch.from_numpy(x))
    with flow.no_grad():
        ours.layers[1].blocks[1].attn.relative_position_bias_table.mul_(-2.0)
        _close(ours(flow.from_numpy(x)), expected)
        assert attn._mask_cache[3] is mask  # the other blocks keep theirs
    _close(compiled(flow.from_numpy(x)), expected)


def test_small_swin_gradients_match_timm_in_train_and_eval():
    ref, ours = _small_pair()
    x = np.random.default_rng(5).standard_normal((2, 3, 40, 40)).astype(np.float32)
    for train in (True, False):
        ref.train(train)
        ours.train(train)
        ref.zero_grad()
        for p in ours.parameters():
            p.grad = None
        ref(torch.from_numpy(x)).square().sum().backward()
        ours(flow.from_numpy(x)).square().sum().backward()
        # an eval-mode forward with grad enabled must not reuse a cached (detached) mask
        for name in ("layers.0.blocks.1.attn.relative_position_bias_table", "layers.1.blocks.0.attn.qkv.weight",
                     "patch_embed.proj.weight"):
            _close(dict(ours.named_parameters())[name].grad, dict(ref.named_parameters())[name].grad, rtol=1e-3)


def test_small_swin_trains_with_drop_path():
    """Training with an active DropPath keeps the residual add outside the reverse kernel; in eval the same
    weights give the fused path's result."""
    torch.manual_seed(0)
    flow.manual_seed(0)  # the DropPath masks: a block whose samples are all dropped gets no gradient
    ours = SwinTransformer(**{**SMALL, "drop_path_rate": 0.5}).train()
    x = flow.from_numpy(np.random.default_rng(6).standard_normal((2, 3, 40, 40)).astype(np.float32))
    ours(x).square().sum().backward()
    grads = [b.attn.relative_position_bias_table.grad for stage in ours.layers for b in stage.blocks]
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)
    assert sum(float(np.abs(g.numpy()).sum() > 0) for g in grads) >= 2  # the ones DropPath kept train
    ours.eval()
    with flow.no_grad():
        fused = ours(x).numpy()
    blocks = [b for stage in ours.layers for b in stage.blocks]
    with flow.no_grad():  # the unfused formula by hand: x + attn(norm1(x)), then the MLP half
        y = ours.patch_embed(x)
        for stage in ours.layers:
            y = stage.downsample(y)
            for blk in stage.blocks:
                b, h, w, c = y.shape
                y = y + blk._attn(blk.norm1(y))
                y = y.reshape(b, -1, c)
                y = (y + blk.mlp(blk.norm2(y))).reshape(b, h, w, c)
        ref = ours.forward_head(ours.norm(y)).numpy()
    assert len(blocks) == 4
    np.testing.assert_allclose(fused, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, 2])
def test_swin_tiny_224_compiled_matches_timm(batch):
    """Full-size Swin-T (shifted 56/28/14 maps, unshifted 7x7 stage), eager and compiled, against timm."""
    import flowvision.models as M
    torch.manual_seed(0)
    ref = timm.create_model("swin_tiny_patch4_window7_224", pretrained=False).eval()
    ours = M.create_model("swin_tiny_patch4_window7_224", pretrained=False).eval()
    ours.load_state_dict({k: flow.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(8).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x))
    with flow.no_grad():
        _close(ours(flow.from_numpy(x)), expected)
    compiled = flowvision.compile(ours, flow.from_numpy(x))
    _close(compiled(flow.from_numpy(x)), expected)
    steps = compiled.explain(flow.from_numpy(x))
    assert steps.count("WindowPartition") == 12 and steps.count("WindowReverse") == 12 and "Roll" not in steps
