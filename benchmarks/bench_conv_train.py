"""Training convolutions: flowvision's autograd kernels (forward, input gradient, weight gradient) vs PyTorch.

    python benchmarks/bench_conv_train.py [--threads 1] [--clock cpu] [--repeat 5] [--only r18,r50]

The shapes are the convolutions of a ResNet-18 step at 112x112 batch 8 (bench_train.py's small config; ``--r18-batch 32``: its full one) and the
3x3 / 1x1 / strided convolutions of a ResNet-50 at 224x224 batch 2. Per shape and pass: torch ms, flowvision ms
(``_C.conv2d_forward`` / ``_C.conv2d_backward_input`` / ``_C.conv2d_backward_weight``, the kernels that
``nn.functional``'s Conv2d autograd op runs) and torch / flowvision (> 1: faster than torch). Torch and flowvision
are timed alternately, best of --repeat. ``--clock cpu`` times by the process CPU time (robust to other load on a
shared machine; at several threads it sums the threads' time, so use the wall clock there).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# (group, label, N, C, H, O, k, stride, padding)
def shapes(r18_batch=8):
    r18 = [("r18", f"r18 {lab} b{r18_batch}", r18_batch, c, h, o, k, s, p) for lab, c, h, o, k, s, p in [
        ("stem 7x7/2 3 112", 3, 112, 64, 7, 2, 3),
        ("3x3 64 28", 64, 28, 64, 3, 1, 1),
        ("3x3/2 64 28", 64, 28, 128, 3, 2, 1),
        ("1x1/2 64 28", 64, 28, 128, 1, 2, 0),
        ("3x3 128 14", 128, 14, 128, 3, 1, 1),
        ("3x3 256 7", 256, 7, 256, 3, 1, 1),
        ("3x3 512 4", 512, 4, 512, 3, 1, 1),
    ]]
    r50 = [("r50", f"r50 {lab} b2", 2, c, h, o, k, s, p) for lab, c, h, o, k, s, p in [
        ("3x3 64 56", 64, 56, 64, 3, 1, 1),
        ("1x1 256->64 56", 256, 56, 64, 1, 1, 0),
        ("1x1 64->256 56", 64, 56, 256, 1, 1, 0),
        ("3x3/2 128 56", 128, 56, 128, 3, 2, 1),
        ("3x3 128 28", 128, 28, 128, 3, 1, 1),
        ("3x3 256 14", 256, 14, 256, 3, 1, 1),
        ("3x3 512 7", 512, 7, 512, 3, 1, 1),
    ]]
    return r18 + r50


def best_pair(f_torch, f_ours, repeat, clock):
    """Best of `repeat` times of each, the two timed alternately (so load changes hit both)."""
    f_torch(), f_ours()
    tt, to = [], []
    for _ in range(repeat):
        t0 = clock()
        f_torch()
        tt.append(clock() - t0)
        t0 = clock()
        f_ours()
        to.append(clock() - t0)
    return min(tt), min(to)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated groups: r18,r50")
    ap.add_argument("--r18-batch", type=int, default=8, help="batch of the ResNet-18 shapes (bench_train --full: 32)")
    args = ap.parse_args()

    import torch
    from flowvision.backend import _C

    torch.set_num_threads(args.threads)
    _C.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"isa {_C.cpu_isa()}, threads {args.threads}, clock {args.clock}; torch {torch.__version__}")
    hdr = f"{'shape':28s} | {'fwd torch':>9s} {'ours':>7s} {'x':>5s} | {'gin torch':>9s} {'ours':>7s} {'x':>5s} | " \
          f"{'gw torch':>9s} {'ours':>7s} {'x':>5s}"
    print(hdr)
    print("-" * len(hdr))
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    tot_t = tot_o = 0.0
    for group, label, n, c, h, o, k, s, p in shapes(args.r18_batch):
        if only and group not in only:
            continue
        x = rng.standard_normal((n, c, h, h), dtype=np.float32)
        w = rng.standard_normal((o, c, k, k), dtype=np.float32) * 0.1
        oh = (h + 2 * p - k) // s + 1
        gy = rng.standard_normal((n, o, oh, oh), dtype=np.float32)
        tx, tw, tg = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(gy)
        st, pd, dl = [s, s], [p, p], [1, 1]
        cols = []
        with torch.no_grad():
            cols.append(best_pair(lambda: torch.conv2d(tx, tw, None, s, p),
                                  lambda: _C.conv2d_forward(x, w, None, st, pd, dl, 1), args.repeat, clock))
            cols.append(best_pair(
                lambda: torch.ops.aten.convolution_backward(tg, tx, tw, None, st, pd, dl, False, [0, 0], 1,
                                                            [True, False, False]),
                lambda: _C.conv2d_backward_input(gy, w, x.shape, st, pd, dl, 1), args.repeat, clock))
            cols.append(best_pair(
                lambda: torch.ops.aten.convolution_backward(tg, tx, tw, None, st, pd, dl, False, [0, 0], 1,
                                                            [False, True, False]),
                lambda: _C.conv2d_backward_weight(gy, x, w.shape, st, pd, dl, 1), args.repeat, clock))
        line = f"{label:28s}"
        for tt, to in cols:
            line += f" | {tt * 1e3:9.2f} {to * 1e3:7.2f} {tt / to:5.2f}"
            tot_t += tt
            tot_o += to
        print(line, flush=True)
    print(f"total: torch {tot_t * 1e3:.1f} ms, flowvision {tot_o * 1e3:.1f} ms, x {tot_t / tot_o:.2f}")
    print("x = torch ms / flowvision ms (> 1: flowvision faster)")


if __name__ == "__main__":
    main()
