"""KxK / grouped / depthwise / stem convolution: flowvision's NHWC direct kernel vs PyTorch.

    python benchmarks/bench_conv.py [--threads 1] [--cpu-time] [--repeat 5] [--only resnet50,stem,...,gate] [--batch 1,8]

Columns per shape: PyTorch F.conv2d (NCHW, its default oneDNN path), `_C.conv2d_nhwc` alone (NHWC in, NHWC out,
weights packed once), flowvision eager `F.conv2d` (NCHW tensors: the transposes around the NHWC kernel included)
and the previous eager path (im2col + GEMM, `_C.conv2d_forward`); ms, GFLOP/s and % of the measured FMA peak of
the thread count used. With --cpu-time the clock is process CPU time (robust to other load on a shared machine):
ms are CPU-ms and % is of one core's peak times the threads. Group "gate": the squeeze-excitation gate
x * sigmoid(gate) on NHWC maps of EfficientNet-B0 / MobileNetV3 -- `_C.channel_gate_nhwc` vs the two steps it
replaces (`_C.pointwise` on the gate, then numpy's broadcast multiply) vs torch (channels-last x * sigmoid(g)).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# (group, label, N, C, H, O, k, stride, padding, dilation, groups)
def shapes(batches):
    out = []
    for n in batches:
        b = f" b{n}"
        out += [
            ("resnet50", "R50 3x3 64 56" + b, n, 64, 56, 64, 3, 1, 1, 1, 1),
            ("resnet50", "R50 3x3/2 128 56" + b, n, 128, 56, 128, 3, 2, 1, 1, 1),
            ("resnet50", "R50 3x3 128 28" + b, n, 128, 28, 128, 3, 1, 1, 1, 1),
            ("resnet50", "R50 3x3 256 14" + b, n, 256, 14, 256, 3, 1, 1, 1, 1),
            ("resnet50", "R50 3x3 512 7" + b, n, 512, 7, 512, 3, 1, 1, 1, 1),
            ("stem", "stem 7x7/2 3->64 224" + b, n, 3, 224, 64, 7, 2, 3, 1, 1),
            ("stem", "stem 3x3/2 3->32 224" + b, n, 3, 224, 32, 3, 2, 1, 1, 1),
        ]
    n = batches[0]
    b = f" b{n}"
    out += [
        ("depthwise", "effb0 dw3x3 32 112" + b, n, 32, 112, 32, 3, 1, 1, 1, 32),
        ("depthwise", "effb0 dw3x3/2 96 112" + b, n, 96, 112, 96, 3, 2, 1, 1, 96),
        ("depthwise", "effb0 dw5x5/2 144 56" + b, n, 144, 56, 144, 5, 2, 2, 1, 144),
        ("depthwise", "effb0 dw5x5 240 28" + b, n, 240, 28, 240, 5, 1, 2, 1, 240),
        ("depthwise", "effb0 dw3x3 480 14" + b, n, 480, 14, 480, 3, 1, 1, 1, 480),
        ("depthwise", "mnv3 dw5x5/2 72 56" + b, n, 72, 56, 72, 5, 2, 2, 1, 72),
        ("depthwise", "mnv3 dw5x5 960 7" + b, n, 960, 7, 960, 5, 1, 2, 1, 960),
        ("grouped", "rx50 3x3 g32 128 56" + b, n, 128, 56, 128, 3, 1, 1, 1, 32),
        ("grouped", "rx50 3x3 g32 256 28" + b, n, 256, 28, 256, 3, 1, 1, 1, 32),
        ("grouped", "rx50 3x3 g32 512 14" + b, n, 512, 14, 512, 3, 1, 1, 1, 32),
        ("grouped", "rx50 3x3 g32 1024 7" + b, n, 1024, 7, 1024, 3, 1, 1, 1, 32),
        ("dilated", "dlv3 3x3 d2 256 65" + b, n, 256, 65, 256, 3, 1, 2, 2, 1),
        ("dilated", "dlv3 3x3 d4 512 65" + b, n, 512, 65, 512, 3, 1, 4, 4, 1),
    ]
    return out


def best(fn, repeat, clock, min_time=0.3):
    fn()
    ts = []
    t_end = time.perf_counter() + min_time
    while len(ts) < repeat or (time.perf_counter() < t_end and len(ts) < 20 * repeat):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return min(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu-time", action="store_true", help="time with process CPU time instead of wall clock")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--batch", default="1,8", help="batch sizes of the ResNet-50 and stem shapes (others: the first)")
    ap.add_argument("--only", default="", help="comma-separated groups: resnet50,stem,depthwise,grouped,dilated,gate")
    ap.add_argument("--no-old", action="store_true", help="skip the previous im2col path column")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as tF

    import flowvision.backend as fb
    from flowvision.backend import _C
    import flowvision.backend.nn.functional as F

    torch.set_num_threads(args.threads)
    _C.set_num_threads(args.threads)
    clock = time.process_time if args.cpu_time else time.perf_counter
    peak = _C.fma_peak_gflops(1.0, 1) * args.threads
    print(f"isa {_C.cpu_isa()}, threads {args.threads}, clock {'CPU time' if args.cpu_time else 'wall'}, "
          f"FMA peak {peak:.0f} GFLOP/s ({args.threads} thread(s)); torch {torch.__version__}")
    hdr = f"{'shape':30s} {'GFLOP':>6s} | {'torch ms':>8s} {'%pk':>4s} | {'nhwc ms':>8s} {'%pk':>4s} {'x':>5s} | " \
          f"{'eager ms':>8s} {'x':>5s}" + ("" if args.no_old else f" | {'im2col ms':>9s}")
    print(hdr)
    print("-" * len(hdr))
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    batches = [int(b) for b in args.batch.split(",")]
    with torch.no_grad(), fb.no_grad():
        for group, label, n, c, h, o, k, s, p, d, g in shapes(batches):
            if only and group not in only:
                continue
            x = rng.standard_normal((n, c, h, h), dtype=np.float32)
            w = (rng.standard_normal((o, c // g, k, k), dtype=np.float32) * 0.1)
            bias = rng.standard_normal(o, dtype=np.float32)
            oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
            flop = 2.0 * n * o * oh * oh * (c // g) * k * k
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
            t_torch = best(lambda: tF.conv2d(tx, tw, tb, s, p, d, g), args.repeat, clock)
            xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
            pk = _C.pack_conv(w, g)
            t_nhwc = best(lambda: _C.conv2d_nhwc(xn, pk, bias, [s, s], [p, p], [d, d]), args.repeat, clock)
            fx, fw, fbias = fb.from_numpy(x), fb.from_numpy(w), fb.from_numpy(bias)
            t_eager = best(lambda: F.conv2d(fx, fw, fbias, s, p, d, g), args.repeat, clock)
            line = (f"{label:30s} {flop * 1e-9:6.2f} | {t_torch * 1e3:8.2f} {flop / t_torch / peak * 1e-7:4.0f} | "
                    f"{t_nhwc * 1e3:8.2f} {flop / t_nhwc / peak * 1e-7:4.0f} {t_torch / t_nhwc:5.2f} | "
                    f"{t_eager * 1e3:8.2f} {t_torch / t_eager:5.2f}")
            if not args.no_old:
                t_old = best(lambda: _C.conv2d_forward(x, w, bias, [s, s], [p, p], [d, d], g), args.repeat, clock)
                line += f" | {t_old * 1e3:9.2f}"
            print(line, flush=True)
    print("x = torch ms / ours (>1: faster than torch); %pk = % of the measured FMA peak")
    if not only or "gate" in only:
        gate_bench(args, clock, rng, batches[0])


def gate_bench(args, clock, rng, n):
    import torch
    from flowvision.backend import _C
    print(f"\nSE gate y = x * sigmoid(g), batch {n}: ms")
    print(f"{'map (H, W, C)':22s} | {'torch':>7s} | {'pointwise+mul':>13s} | {'channel_gate':>12s} {'x torch':>7s} {'x 2-step':>8s}")
    for h, c in [(112, 32), (56, 96), (56, 144), (28, 240), (14, 480), (14, 672), (7, 1152), (28, 72), (7, 960)]:
        x = rng.standard_normal((n, h, h, c), dtype=np.float32)
        g = rng.standard_normal((n, c), dtype=np.float32)
        out = np.empty_like(x)
        tx = torch.from_numpy(x).permute(0, 3, 1, 2)  # an NCHW view of channels-last memory
        tg = torch.from_numpy(g)[:, :, None, None]
        t_torch = best(lambda: tx * torch.sigmoid(tg), args.repeat, clock)
        t_two = best(lambda: x * _C.pointwise(g, "sigmoid")[:, None, None, :], args.repeat, clock)
        t_gate = best(lambda: _C.channel_gate_nhwc(x, g, "sigmoid", out), args.repeat, clock)
        print(f"{str((h, h, c)):22s} | {t_torch * 1e3:7.3f} | {t_two * 1e3:13.3f} | {t_gate * 1e3:12.3f} "
              f"{t_torch / t_gate:7.2f} {t_two / t_gate:8.2f}", flush=True)


if __name__ == "__main__":
    main()
