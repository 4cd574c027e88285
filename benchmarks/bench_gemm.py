"""SGEMM speed on the layer shapes of the zoo: flowvision's packed GEMM vs torch (MKL) vs numpy (OpenBLAS).

    python benchmarks/bench_gemm.py                         # all shapes, 1 and 2 threads
    python benchmarks/bench_gemm.py --only swin --threads 1
    python benchmarks/bench_gemm.py --set classic           # 2048^3, ResNet-50 1x1 convs, _C.gemm too
    python benchmarks/bench_gemm.py --threads 2 --cpu-time --only 2048   # --only searches every set

Every row is a Linear layer C = epilogue(A(M, K) @ W(N, K)^T + bias) with the epilogue the captured model fuses
(gelu after fc1, the residual add after ViT's proj / fc2 and Swin's fc2):
- "fv packed": `_C.gemm_packed` with the weight packed once (`_C.pack_b`) and the fused epilogue;
- "torch": `F.linear` followed by the same epilogue as separate ops (what eager torch runs);
- "numpy": `a @ w.T + b` only (no activation / residual: numpy has no fused or vectorised GELU).
1 thread: the clock is process CPU time (robust to other users' load on a shared machine), % of the 1-core FMA
peak (`_C.fma_peak_gflops`). 2 threads: wall clock (indicative under load), % of twice the 1-core peak, and the
scaling = 1-thread CPU time / 2-thread wall time (--cpu-time: CPU time at every thread count, i.e. GFLOP/s per busy
core-second, % of one core's peak, no scaling column). Best of N runs each.
"""
import argparse
import os
import time

import numpy as np


def _swin(batch):
    rows = []
    for stage, (tokens, c) in enumerate([(3136, 96), (784, 192), (196, 384), (49, 768)], 1):
        m = tokens * batch
        rows += [
            (f"Swin-T b{batch} s{stage} qkv", m, c, 3 * c, "none"),
            (f"Swin-T b{batch} s{stage} proj", m, c, c, "none"),
            (f"Swin-T b{batch} s{stage} fc1", m, c, 4 * c, "gelu"),
            (f"Swin-T b{batch} s{stage} fc2", m, 4 * c, c, "residual"),
        ]
    return rows


def _vit(batch):
    m = 197 * batch
    return [(f"ViT-B b{batch} qkv", m, 768, 2304, "none"), (f"ViT-B b{batch} proj", m, 768, 768, "residual"),
            (f"ViT-B b{batch} fc1", m, 768, 3072, "gelu"), (f"ViT-B b{batch} fc2", m, 3072, 768, "residual")]


def _convnext(batch):
    rows = []
    for stage, (pixels, c) in enumerate([(3136, 96), (784, 192), (196, 384), (49, 768)], 1):
        rows += [(f"ConvNeXt-T b{batch} s{stage} pw1", pixels * batch, c, 4 * c, "gelu"),
                 (f"ConvNeXt-T b{batch} s{stage} pw2", pixels * batch, 4 * c, c, "none")]
    return rows


SETS = {  # (label, M, K, N, epilogue)
    "transformer": _swin(1) + _vit(1) + _vit(8) + _convnext(1)
    + [r for r in _swin(8) if "s1 " in r[0] or "s4 " in r[0]],
    "classic": [("square 2048^3", 2048, 2048, 2048, "none"), ("R50 conv2 1x1 b1", 3136, 256, 64, "none"),
                ("R50 conv3 1x1 b1", 3136, 64, 256, "none"), ("R50 layer3 1x1 b8", 1568, 256, 1024, "none"),
                ("R50 layer4 1x1 b1", 49, 512, 2048, "none"), ("R50 fc b1", 1, 2048, 1000, "none")],
}


def best(fn, repeat, min_time, clock):
    fn()
    ts = []
    t0 = time.perf_counter()
    while len(ts) < repeat or (time.perf_counter() - t0 < min_time and len(ts) < 20 * repeat):
        s = clock()
        fn()
        ts.append(clock() - s)
    return min(ts)


def contenders(label, M, K, N, ep, rng, with_gemm):
    import torch
    import torch.nn.functional as TF
    from flowvision.backend import _C
    a = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((N, K), dtype=np.float32) * np.float32(K ** -0.5)
    b = rng.standard_normal(N, dtype=np.float32)
    r = rng.standard_normal((M, N), dtype=np.float32)
    ta, tw, tb, tr = (torch.from_numpy(x) for x in (a, w, b, r))
    pk = _C.pack_b(w, True)
    out = np.empty((M, N), np.float32)
    if ep == "residual":
        res_out = r.copy()  # out= aliasing the residual, as the captured plan's arena does
        fv = lambda: _C.gemm_packed(a, pk, b, "none", res_out, out=res_out)  # noqa: E731
        th = lambda: TF.linear(ta, tw, tb) + tr  # noqa: E731
    else:
        fv = lambda: _C.gemm_packed(a, pk, b, ep, out=out)  # noqa: E731
        th = (lambda: TF.gelu(TF.linear(ta, tw, tb))) if ep == "gelu" else (lambda: TF.linear(ta, tw, tb))  # noqa: E731
    fns = {"fv packed": fv}
    if with_gemm:
        fns["fv _C.gemm"] = lambda: _C.gemm(a[None], w[None], False, True)
    fns["torch"] = th
    fns["numpy"] = lambda: a @ w.T + b
    return fns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--set", default="transformer", choices=sorted(SETS))
    ap.add_argument("--only", default="", help="substring of the shape label (case-insensitive), in every set")
    ap.add_argument("--cpu-time", action="store_true", help="process CPU time at every thread count")
    args = ap.parse_args()
    import torch
    from flowvision.backend import _C
    threads = [int(x) for x in args.threads.split(",")]
    rng = np.random.default_rng(0)
    _C.set_num_threads(1)
    peak1 = _C.fma_peak_gflops(0.5, 1)
    print(f"# {_C.cpu_isa()} | 1-core FMA peak {peak1:.0f} GFLOP/s | load avg {os.getloadavg()[0]:.1f} | "
          f"torch {torch.__version__} | numpy {np.__version__}")
    head = "| shape | M | K | N | epilogue | contender |"
    for t in threads:
        head += (f" {t}-thr CPU ms | GFLOP/s | % peak |" if t == 1 or args.cpu_time
                 else f" {t}-thr wall ms | GFLOP/s | % peak | scaling |")
    print(head + "\n" + "|---" * (head.count("|") - 1) + "|")
    shapes = [r for rows in SETS.values() for r in rows] if args.only else SETS[args.set]
    for label, M, K, N, ep in shapes:
        if args.only.lower() not in label.lower():
            continue
        flops = 2.0 * M * N * K
        fns = contenders(label, M, K, N, ep, rng, (label, M, K, N, ep) in SETS["classic"])
        cells = {name: "" for name in fns}
        t1 = {}
        for t in threads:
            _C.set_num_threads(t)
            torch.set_num_threads(t)
            cpu = t == 1 or args.cpu_time
            clock = time.process_time if cpu else time.perf_counter
            for name, fn in fns.items():
                if name == "numpy" and t != threads[0]:
                    cells[name] += " | | |" + ("" if cpu else " |")
                    continue  # OpenBLAS keeps the thread count it started with
                s = best(fn, args.repeat, args.min_time, clock)
                g = flops / s * 1e-9
                cells[name] += f" {s * 1e3:.2f} | {g:.0f} | {100 * g / (peak1 * (1 if cpu else t)):.0f}% |"
                if t == 1:
                    t1[name] = s
                elif not cpu:
                    cells[name] += f" {t1[name] / s:.2f}x |" if name in t1 else " |"
        for name in fns:
            print(f"| {label} | {M} | {K} | {N} | {ep} | {name} |{cells[name]}", flush=True)
    _C.set_num_threads(max(threads))
    print(f"# load avg at end {os.getloadavg()[0]:.1f}; numpy: OpenBLAS's own thread count "
          f"(OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')})")


if __name__ == "__main__":
    main()
