"""Time single ops in flowvision.backend and PyTorch side by side (same machine, same thread count, one run).

    python benchmarks/bench_ops.py [--threads N] [--repeat R] [--only conv2d,linear,...] [--backward]

Prints per-op median times and the ratio flowvision/torch (lower is better for flowvision; >1 = slower).
"""
import argparse
import statistics
import time

import numpy as np


def _time(fn, repeat, stat="median", warmup=2, min_time=0.2):
    for _ in range(warmup):
        fn()
    times = []
    t_start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - t_start < min_time and len(times) < 50 * repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) if stat == "min" else statistics.median(times)


def cases():
    """(group, label, make(fb, torch, rng) -> (fb_fn, torch_fn))."""
    out = []

    def conv(n, c, h, o, k, s, p, groups=1):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal((n, c, h, h), dtype=np.float32)
            w = rng.standard_normal((o, c // groups, k, k), dtype=np.float32) * 0.1
            b = rng.standard_normal((o,), dtype=np.float32)
            fx, fw, fbias = fb.from_numpy(x), fb.from_numpy(w), fb.from_numpy(b)
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
            if backward:
                fx.requires_grad_(); fw.requires_grad_(); tx.requires_grad_(); tw.requires_grad_()
                return (lambda: F.conv2d(fx, fw, fbias, s, p, 1, groups).sum().backward(),
                        lambda: tF.conv2d(tx, tw, tb, s, p, 1, groups).sum().backward())
            return (lambda: F.conv2d(fx, fw, fbias, s, p, 1, groups),
                    lambda: tF.conv2d(tx, tw, tb, s, p, 1, groups))
        return make

    for label, args in [
        ("stem 7x7/2 3->64 224", (1, 3, 224, 64, 7, 2, 3)),
        ("3x3 64->64 56", (1, 64, 56, 64, 3, 1, 1)),
        ("1x1 256->64 56", (1, 256, 56, 64, 1, 1, 0)),
        ("1x1 64->256 56", (1, 64, 56, 256, 1, 1, 0)),
        ("3x3/2 128->128 56", (1, 128, 56, 128, 3, 2, 1)),
        ("3x3 256->256 14", (1, 256, 14, 256, 3, 1, 1)),
        ("3x3 512->512 7", (1, 512, 7, 512, 3, 1, 1)),
        ("3x3 64->64 56 b8", (8, 64, 56, 64, 3, 1, 1)),
        ("dw3x3 128 56", (1, 128, 56, 128, 3, 1, 1, 128)),
    ]:
        out.append(("conv2d", f"conv2d {label}", conv(*args)))

    def linear(m, k, n):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal((m, k), dtype=np.float32)
            w = rng.standard_normal((n, k), dtype=np.float32) * 0.02
            b = rng.standard_normal((n,), dtype=np.float32)
            fx, fw, fbias = fb.from_numpy(x), fb.from_numpy(w), fb.from_numpy(b)
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
            if backward:
                fx.requires_grad_(); fw.requires_grad_(); tx.requires_grad_(); tw.requires_grad_()
                return (lambda: F.linear(fx, fw, fbias).sum().backward(), lambda: tF.linear(tx, tw, tb).sum().backward())
            return lambda: F.linear(fx, fw, fbias), lambda: tF.linear(tx, tw, tb)
        return make

    for label, args in [("ViT-B qkv 197x768->2304", (197, 768, 2304)), ("ViT-B fc1 197x768->3072", (197, 768, 3072)),
                        ("ViT-B fc2 197x3072->768", (197, 3072, 768)), ("ViT-B proj b8 1576x768->768", (1576, 768, 768))]:
        out.append(("linear", f"linear {label}", linear(*args)))

    def softmax(shape):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal(shape, dtype=np.float32)
            fx, tx = fb.from_numpy(x), torch.from_numpy(x)
            if backward:
                fx.requires_grad_(); tx.requires_grad_()
                return (lambda: F.softmax(fx, -1).sum().backward(), lambda: tF.softmax(tx, -1).sum().backward())
            return lambda: F.softmax(fx, -1), lambda: tF.softmax(tx, -1)
        return make

    def layer_norm(shape):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal(shape, dtype=np.float32)
            w = rng.standard_normal(shape[-1:], dtype=np.float32)
            b = rng.standard_normal(shape[-1:], dtype=np.float32)
            fx, fw, fbb = fb.from_numpy(x), fb.from_numpy(w), fb.from_numpy(b)
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
            if backward:
                fx.requires_grad_(); tx.requires_grad_()
                return (lambda: F.layer_norm(fx, shape[-1:], fw, fbb).sum().backward(),
                        lambda: tF.layer_norm(tx, shape[-1:], tw, tb).sum().backward())
            return lambda: F.layer_norm(fx, shape[-1:], fw, fbb), lambda: tF.layer_norm(tx, shape[-1:], tw, tb)
        return make

    out.append(("softmax", "softmax ViT-B attn 12x197x197", softmax((12, 197, 197))))
    out.append(("softmax", "softmax b8 attn 96x197x197", softmax((96, 197, 197))))
    out.append(("layer_norm", "layer_norm 197x768", layer_norm((1, 197, 768))))
    out.append(("layer_norm", "layer_norm b8 8x197x768", layer_norm((8, 197, 768))))

    def pool(kind):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal((1, 64, 112, 112), dtype=np.float32)
            fx, tx = fb.from_numpy(x), torch.from_numpy(x)
            if kind == "max":
                return lambda: F.max_pool2d(fx, 3, 2, 1), lambda: tF.max_pool2d(tx, 3, 2, 1)
            return lambda: F.adaptive_avg_pool2d(fx, 7), lambda: tF.adaptive_avg_pool2d(tx, 7)
        return make

    out.append(("pool", "max_pool2d 3x3/2 64x112", pool("max")))
    out.append(("pool", "adaptive_avg_pool2d 64x112->7", pool("avg")))

    def batch_norm(shape):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal(shape, dtype=np.float32)
            c = shape[1]
            rm, rv = np.zeros(c, np.float32), np.ones(c, np.float32)
            fx, tx = fb.from_numpy(x), torch.from_numpy(x)
            frm, frv, trm, trv = fb.from_numpy(rm), fb.from_numpy(rv), torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
            return (lambda: F.batch_norm(fx, frm, frv, None, None, False),
                    lambda: tF.batch_norm(tx, trm, trv, None, None, False))
        return make

    out.append(("batch_norm", "batch_norm eval 1x256x56x56", batch_norm((1, 256, 56, 56))))

    def gelu(shape):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal(shape, dtype=np.float32)
            fx, tx = fb.from_numpy(x), torch.from_numpy(x)
            return lambda: F.gelu(fx), lambda: tF.gelu(tx)
        return make

    out.append(("activation", "gelu 197x3072", gelu((197, 3072))))

    def interp(mode):
        def make(fb, torch, F, tF, rng, backward):
            x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
            fx, tx = fb.from_numpy(x), torch.from_numpy(x)
            kw = {} if mode == "nearest" else {"align_corners": False}
            return (lambda: F.interpolate(fx, scale_factor=2, mode=mode, **kw),
                    lambda: tF.interpolate(tx, scale_factor=2, mode=mode, **kw))
        return make

    out.append(("interpolate", "interpolate bilinear x2 64x56", interp("bilinear")))
    out.append(("interpolate", "interpolate nearest x2 64x56", interp("nearest")))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=None, help="threads for both engines (default: all CPUs)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--only", default="", help="comma-separated groups (conv2d,linear,softmax,layer_norm,pool,...)")
    ap.add_argument("--backward", action="store_true", help="time forward+backward instead of forward")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="median of the runs, or min (more robust on a loaded machine)")
    args = ap.parse_args(argv)

    import torch
    import torch.nn.functional as tF
    import flowvision.backend as fb
    import flowvision.backend.nn.functional as F

    n = args.threads or fb.get_num_threads()
    fb.set_num_threads(n)
    torch.set_num_threads(n)
    only = {s for s in args.only.split(",") if s}
    rng = np.random.default_rng(0)
    import os
    print(f"threads={n} isa={fb.cpu_isa()} torch={torch.__version__} mode={'fwd+bwd' if args.backward else 'fwd'} "
          f"stat={args.stat} load={os.getloadavg()[0]:.1f}")
    print(f"{'op':44s} {'flowvision ms':>14s} {'torch ms':>10s} {'ratio':>7s}")
    ratios = []
    for group, label, make in cases():
        if only and group not in only:
            continue
        if args.backward and group in ("pool", "batch_norm", "activation", "interpolate"):
            continue
        f_fn, t_fn = make(fb, torch, F, tF, rng, args.backward)
        with torch.no_grad() if not args.backward else _null():
            with fb.no_grad() if not args.backward else _null():
                tf = _time(f_fn, args.repeat, args.stat)
                tt = _time(t_fn, args.repeat, args.stat)
        ratios.append(tf / tt)
        print(f"{label:44s} {tf * 1e3:14.3f} {tt * 1e3:10.3f} {tf / tt:7.2f}")
    if ratios:
        print(f"geometric mean ratio: {float(np.exp(np.mean(np.log(ratios)))):.2f}   worst: {max(ratios):.2f}")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


if __name__ == "__main__":
    main()
