"""One training step — forward, label-smoothed cross-entropy, backward, SGD-Nesterov update — in flowvision and
in PyTorch (timm models), same weights, batch and thread count, interleaved in one run.

    python benchmarks/bench_train.py                       # small configurations (a shared 2-core machine)
    python benchmarks/bench_train.py --full                # the sizes of the training-speed acceptance table
    python benchmarks/bench_train.py --only resnet18 --rss # also the peak RSS of each side (one process each)
    python benchmarks/bench_train.py --profile resnet18    # where a flowvision step spends its time (cProfile)
    python benchmarks/bench_train.py --full --isolated     # each side in its own process, as a user runs it

Prints per-model median step time, images/s, the step's GFLOP/s (3 x the forward FLOPs counted by torch's
FlopCounterMode), that rate as % of the measured FMA peak at the same thread count, and the ratio torch/flowvision
(> 1: flowvision is faster). Each round times one step of each side back to back (the order alternates), and the
ratio column is the median of those per-round ratios: on a shared machine whose speed drifts over minutes, a pair of
steps run seconds apart sees the same machine, where the two sides' medians may come from different minutes. The
ms columns are each side's median. In one process the two frameworks can share freed memory (numpy's arrays
did, through glibc's heap, until flowvision had its own allocator); ``--isolated`` runs each side in its own
process instead (rounds of one process per side, order alternating), which is what a user's process sees.
``--clock cpu`` times each step by the process CPU time instead of the wall clock: on a
machine shared with other jobs it is the fairer single-thread figure (time slices taken by other processes do not
count); with several threads it adds the threads' times, so use the wall clock there.
"""
import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

SMALL = [("resnet18", 112, 8), ("resnet50", 112, 4), ("vit_small_patch16_224", 224, 2), ("efficientnet_b0", 112, 4),
         ("convnext_tiny", 112, 2)]
FULL = [("resnet18", 112, 32), ("resnet50", 224, 16), ("vit_small_patch16_224", 224, 16), ("efficientnet_b0", 224, 16),
        ("convnext_tiny", 224, 8)]
NUM_CLASSES = 1000


def build(name, size, batch, seed=0):
    """timm model and flowvision model with the same weights, their steps, and the step's FLOPs."""
    import timm
    import torch
    from timm.loss import LabelSmoothingCrossEntropy as TLoss
    from timm.optim import create_optimizer_v2 as t_opt

    import flowvision.backend as fb
    from flowvision.data.loss import LabelSmoothingCrossEntropy
    from flowvision.models import create_model
    from flowvision.train import create_optimizer_v2

    torch.manual_seed(seed)
    kw = dict(img_size=size) if name.startswith("vit") else {}
    tm = timm.create_model(name, num_classes=NUM_CLASSES, **kw).train()
    fm = create_model(name, num_classes=NUM_CLASSES, **kw).train()
    fm.load_state_dict({k: fb.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, size, size), dtype=np.float32)
    y = rng.integers(0, NUM_CLASSES, batch)
    topt = t_opt(tm, opt="sgd", lr=0.01, weight_decay=1e-4, momentum=0.9)
    fopt = create_optimizer_v2(fm, opt="sgd", lr=0.01, weight_decay=1e-4, momentum=0.9)
    tloss, floss = TLoss(0.1), LabelSmoothingCrossEntropy(0.1)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    fx, fy = fb.from_numpy(x), fb.from_numpy(y)

    def t_step():
        loss = tloss(tm(tx), ty)
        topt.zero_grad()
        loss.backward()
        topt.step()
        return loss.item()

    def f_step():
        loss = floss(fm(fx), fy)
        fopt.zero_grad()
        loss.backward()
        fopt.step()
        return loss.item()

    # forward FLOPs x 3 for the step (backward = 2 x forward): torch's counter ignores groups in
    # convolution_backward and over-counts depthwise backward by the channel count (EfficientNet: 40x)
    from torch.utils.flop_counter import FlopCounterMode
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        tm(tx)
    return f_step, t_step, 3 * fc.get_total_flops()


def bench(args):
    import torch

    import flowvision.backend as fb
    torch.set_num_threads(args.threads)
    fb.set_num_threads(args.threads)
    configs = FULL if args.full else SMALL
    if args.only:
        configs = [c for c in configs if c[0] in args.only.split(",")]
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    peak = fb._C.fma_peak_gflops(1.0, args.threads)
    print(f"threads {args.threads}, torch {torch.__version__}, {args.repeat} interleaved rounds after "
          f"{args.warmup} warm-up steps each; median step time ({args.clock} clock); FMA peak {peak:.1f} GFLOP/s")
    hdr = (f"{'model':<24}{'size':>5}{'batch':>6}{'GFLOP':>8}{'fv ms':>9}{'torch ms':>10}{'fv img/s':>10}"
           f"{'fv GFLOP/s':>11}{'(% peak)':>9}{'torch GFLOP/s':>14}{'(% peak)':>9}{'torch/fv':>9}  (range)")
    rows = []
    print(hdr)
    for name, size, batch in configs:
        f_step, t_step, flops = build(name, size, batch)
        for _ in range(args.warmup):
            f_step()
            t_step()
        ft, tt = [], []
        for r in range(args.repeat):
            order = ((f_step, ft), (t_step, tt)) if r % 2 == 0 else ((t_step, tt), (f_step, ft))
            for fn, acc in order:
                t0 = clock()
                fn()
                acc.append(clock() - t0)
        fm, tm = statistics.median(ft), statistics.median(tt)
        ratios = [t / f for f, t in zip(ft, tt)]
        ratio = statistics.median(ratios)
        line = (f"{name:<24}{size:>5}{batch:>6}{flops / 1e9:>8.2f}{fm * 1e3:>9.1f}{tm * 1e3:>10.1f}{batch / fm:>10.1f}"
                f"{flops / fm / 1e9:>11.1f}{100 * flops / fm / 1e9 / peak:>8.0f}%{flops / tm / 1e9:>14.1f}"
                f"{100 * flops / tm / 1e9 / peak:>8.0f}%{ratio:>9.2f}  ({min(ratios):.2f}-{max(ratios):.2f})")
        if args.rss:
            (_, fp, fd), (_, tp, td) = (_side(fw, name, size, batch, args.threads) for fw in ("flowvision", "torch"))
            line += f"   peak RSS fv {fp:.0f} MB (+{fd:.0f} by the steps), torch {tp:.0f} MB (+{td:.0f})"
        print(line, flush=True)
        rows.append((name, ratio))
    if rows:
        geo = float(np.exp(np.mean([np.log(r) for _, r in rows])))
        print(f"geometric mean torch/fv: {geo:.2f}")


def _side_child(fw, name, size, batch, threads, warmup, steps):
    """Subprocess: build both models (the same baseline for each side), run ``warmup`` then ``steps`` timed steps of
    one framework, print the median step seconds and the peak RSS (VmHWM, KiB) after the steps and before them."""
    import torch

    import flowvision.backend as fb
    torch.set_num_threads(int(threads))
    fb.set_num_threads(int(threads))
    f_step, t_step, _ = build(name, int(size), int(batch))
    step = f_step if fw == "flowvision" else t_step
    with open("/proc/self/status") as f:
        base = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    for _ in range(int(warmup)):
        step()
    times = []
    for _ in range(int(steps)):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    print(statistics.median(times), peak, base)


def _side(fw, name, size, batch, threads, warmup=0, steps=3):
    """(median step s, peak RSS MB, MB added by the steps) of one framework in its own process."""
    out = subprocess.run([sys.executable, __file__, "--_side-child", fw, name, str(size), str(batch), str(threads),
                          str(warmup), str(steps)], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024, (int(out[1]) - int(out[2])) / 1024


def bench_isolated(args):
    """Each side in its own process, as a user runs it: the two frameworks do not share an allocator's free memory
    (in one process, one side's steps reuse pages the other just freed, which hides page-fault costs)."""
    import torch

    import flowvision.backend as fb
    configs = FULL if args.full else SMALL
    if args.only:
        configs = [c for c in configs if c[0] in args.only.split(",")]
    peak = fb._C.fma_peak_gflops(1.0, args.threads)
    print(f"threads {args.threads}, torch {torch.__version__}, {args.repeat} rounds of one process per side (order "
          f"alternating), each {args.warmup} warm-up + {args.steps} timed steps; FMA peak {peak:.1f} GFLOP/s")
    print(f"{'model':<24}{'size':>5}{'batch':>6}{'fv ms':>9}{'torch ms':>10}{'torch/fv':>9}  (range)"
          f"{'peak RSS fv MB':>17}{'torch MB':>10}")
    rows = []
    for name, size, batch in configs:
        ft, tt, frss, trss = [], [], [], []
        for r in range(args.repeat):
            sides = ("flowvision", "torch") if r % 2 == 0 else ("torch", "flowvision")
            for fw in sides:
                sec, rss, _ = _side(fw, name, size, batch, args.threads, args.warmup, args.steps)
                (ft if fw == "flowvision" else tt).append(sec)
                (frss if fw == "flowvision" else trss).append(rss)
        ratios = [t / f for f, t in zip(ft, tt)]
        ratio = statistics.median(ratios)
        print(f"{name:<24}{size:>5}{batch:>6}{statistics.median(ft) * 1e3:>9.1f}{statistics.median(tt) * 1e3:>10.1f}"
              f"{ratio:>9.2f}  ({min(ratios):.2f}-{max(ratios):.2f}){max(frss):>17.0f}{max(trss):>10.0f}", flush=True)
        rows.append(ratio)
    if rows:
        print(f"geometric mean torch/fv: {float(np.exp(np.mean(np.log(rows)))):.2f}")


def profile(args):
    import cProfile
    import pstats

    import flowvision.backend as fb
    fb.set_num_threads(args.threads)
    name, size, batch = next(c for c in (FULL if args.full else SMALL) if c[0] == args.profile)
    f_step, _, _ = build(name, size, batch)
    f_step()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(2):
        f_step()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(args.top)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--_side-child":
        return _side_child(*sys.argv[2:9])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5, help="interleaved timed rounds per model")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--full", action="store_true", help="the acceptance sizes (resnet50 @224 b16, ...)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="time steps by the wall clock or by the process CPU time (fairer on a shared machine, 1 thread)")
    p.add_argument("--only", default="", help="comma-separated model names")
    p.add_argument("--rss", action="store_true", help="measure each side's peak RSS in its own process")
    p.add_argument("--isolated", action="store_true",
                   help="time each side in its own process (rounds of one process per side) instead of interleaving "
                        "the two in one process")
    p.add_argument("--steps", type=int, default=3, help="timed steps per process with --isolated")
    p.add_argument("--profile", default="", help="cProfile two flowvision steps of this model instead")
    p.add_argument("--top", type=int, default=25, help="profile rows to print")
    args = p.parse_args()
    if args.profile:
        return profile(args)
    return bench_isolated(args) if args.isolated else bench(args)


if __name__ == "__main__":
    sys.exit(main())
