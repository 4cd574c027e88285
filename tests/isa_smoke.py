"""Kernel-and-model smoke workload, run natively and under emulated CPUs (tests/test_isa_emulated.py).

    python tests/isa_smoke.py OUT.npz

Runs every kernel family (forward and backward), a small CNN and a small ViT eager and through
``flowvision.compile``, transforms on a tensor and Mixup, all on fixed seeds and small inputs, and saves every
output array to OUT.npz (plus ``isa``/``isa_reason``: the kernel table the dispatch chose). The same script under
``qemu-x86_64 -cpu Haswell`` or ``-cpu Nehalem`` must give the same arrays as the native run with the same ISA.
"""
from __future__ import annotations

import sys

import numpy as np


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def run() -> dict[str, np.ndarray]:
    import flowvision
    import flowvision.backend as flow
    import flowvision.backend.nn.functional as F
    from flowvision.backend import _C
    from flowvision.layers import window_partition, window_reverse

    out: dict[str, np.ndarray] = {"isa": np.array(_C.cpu_isa()), "isa_reason": np.array(_C.cpu_isa_reason())}
    rng = np.random.default_rng(0)

    def grad_check(name, fn, *arrays):
        """Record fn(*inputs) and the gradient of sum(out * probe) with respect to every input."""
        xs = [flow.tensor(a, requires_grad=True) for a in arrays]
        y = fn(*xs)
        probe = flow.tensor(_rand(rng, *y.shape))
        (y * probe).sum().backward()
        out[name] = y.detach().numpy()
        for i, x in enumerate(xs):
            out[f"{name}.grad{i}"] = x.grad.numpy()

    # GEMM (batched, transposed, packed through Linear) and the elementwise families
    grad_check("matmul", lambda a, b: a @ b, _rand(rng, 2, 33, 47), _rand(rng, 2, 47, 29))
    grad_check("linear", lambda x, w, b: F.linear(x, w, b), _rand(rng, 5, 70), _rand(rng, 40, 70), _rand(rng, 40))
    grad_check("gelu", F.gelu, _rand(rng, 3, 257))
    grad_check("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), _rand(rng, 3, 257))
    grad_check("silu", F.silu, _rand(rng, 3, 257))
    grad_check("hardswish", F.hardswish, _rand(rng, 3, 257))
    grad_check("sigmoid", F.sigmoid, _rand(rng, 3, 257))
    grad_check("relu6", F.relu6, _rand(rng, 3, 257) * 4)
    grad_check("softmax", lambda x: F.softmax(x, dim=-1), _rand(rng, 7, 131))
    grad_check("log_softmax", lambda x: F.log_softmax(x, dim=-1), _rand(rng, 7, 131))
    grad_check("add_bcast", lambda a, b: a * b + a, _rand(rng, 4, 9, 17), _rand(rng, 1, 9, 1))
    # convolution: dense, strided, grouped, depthwise, dilated
    grad_check("conv", lambda x, w, b: F.conv2d(x, w, b, padding=1), _rand(rng, 2, 5, 13, 11), _rand(rng, 8, 5, 3, 3),
               _rand(rng, 8))
    grad_check("conv_s2_g2", lambda x, w: F.conv2d(x, w, stride=2, padding=2, groups=2, dilation=2),
               _rand(rng, 1, 6, 15, 15), _rand(rng, 4, 3, 3, 3))
    grad_check("conv_dw", lambda x, w: F.conv2d(x, w, padding=1, groups=6), _rand(rng, 1, 6, 9, 9),
               _rand(rng, 6, 1, 3, 3))
    # 16 -> 16 channels, unit-stride 3x3: Winograd F(4x4, 3x3) at every vector width (4, 8, 16 lanes)
    grad_check("conv_winograd", lambda x, w, b: F.conv2d(x, w, b, padding=1), _rand(rng, 2, 16, 9, 10),
               _rand(rng, 16, 16, 3, 3) * 0.2, _rand(rng, 16))
    # pooling, normalisation, interpolation
    grad_check("max_pool", lambda x: F.max_pool2d(x, 3, 2, 1), _rand(rng, 2, 3, 11, 11))
    grad_check("avg_pool", lambda x: F.avg_pool2d(x, 3, 2, 1), _rand(rng, 2, 3, 11, 11))
    grad_check("adaptive_avg", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), _rand(rng, 2, 3, 11, 7))
    grad_check("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
               _rand(rng, 4, 3, 5, 5), _rand(rng, 3), _rand(rng, 3))
    grad_check("layer_norm", lambda x, w, b: F.layer_norm(x, (48,), w, b), _rand(rng, 6, 48), _rand(rng, 48),
               _rand(rng, 48))
    grad_check("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), _rand(rng, 2, 4, 5, 5), _rand(rng, 4),
               _rand(rng, 4))
    grad_check("bilinear", lambda x: F.interpolate(x, size=(13, 9), mode="bilinear", align_corners=False),
               _rand(rng, 1, 2, 7, 5))
    grad_check("bicubic", lambda x: F.interpolate(x, scale_factor=2.0, mode="bicubic", align_corners=True),
               _rand(rng, 1, 2, 5, 5))
    # fused attention and the Swin window kernels
    grad_check("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), _rand(rng, 2, 3, 19, 16),
               _rand(rng, 2, 3, 23, 16), _rand(rng, 2, 3, 23, 16))
    grad_check("window", lambda x: window_reverse(window_partition(x, (4, 4), (2, 2)) * 2.0, (4, 4), (2, 2), 10, 9),
               _rand(rng, 2, 10, 9, 8))
    # float16 storage round trip (F16C on AVX2)
    out["half"] = flow.tensor(_rand(rng, 67) * 100).half().float().numpy()

    # a small CNN, a mobile net and a small ViT, eager and captured (NHWC conv, packed GEMM, Winograd, the fused
    # expansion + depthwise step, native plan executor)
    flow.manual_seed(0)
    cnn = flowvision.models.create_model("resnet18", num_classes=10).eval()
    mobile = flowvision.models.create_model("mobilenetv3_small_050", num_classes=10).eval()
    vit = flowvision.models.create_model("vit_tiny_patch16_224", img_size=32, patch_size=8, num_classes=10).eval()
    for name, model, size in (("resnet18", cnn, 40), ("mobilenetv3", mobile, 48), ("vit_tiny", vit, 32)):
        x = flow.tensor(_rand(rng, 2, 3, size, size))
        with flow.no_grad():
            out[f"{name}.eager"] = model(x).numpy()
            compiled = flowvision.compile(model, x)
            out[f"{name}.compiled"] = compiled(x).numpy()

    # transforms on a tensor and Mixup/CutMix, seeded
    import flowvision.transforms as T
    from flowvision.data import Mixup

    img = flow.tensor(rng.random((3, 37, 29), dtype=np.float32))
    tf = T.Compose([T.Resize((24, 20), antialias=True), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))])
    out["transform"] = tf(img).numpy()
    mix = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=10, seed=3)
    xb, yb = mix(rng.random((4, 3, 16, 16), dtype=np.float32), np.array([1, 2, 3, 4]))
    out["mixup.x"], out["mixup.y"] = np.asarray(xb), np.asarray(yb)

    # the Pillow-exact uint8 kernels behind PIL resize and ColorJitter (4-byte pixels take the vector paths)
    u8 = rng.integers(0, 256, (29, 37, 3), dtype=np.uint8)
    rgbx = np.concatenate([u8, u8[..., :1]], axis=2)
    out["resample_u8"] = _C.resample_u8(u8, [17, 45], "bicubic", False)
    out["resample_u8.rgbx"] = _C.resample_u8(rgbx, [11, 30], "lanczos", True)
    out["color_ops_u8"] = _C.color_ops_u8(rgbx, [("contrast", 1.4), ("saturation", 0.6), ("brightness", 1.2)])
    # Pillow's affine transform (RandAugment's geometric ops): AVX2 gathers four bilinear pixels at a time
    for filt in ("nearest", "bilinear", "bicubic"):
        out["affine_u8." + filt] = _C.affine_u8(rgbx, [0.9, 0.35, -4.0, -0.2, 1.1, 3.0], [26, 31], filt, [9, 8, 7, 6])
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    np.savez(sys.argv[1], **run())
