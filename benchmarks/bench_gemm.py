"""SGEMM speed: flowvision's _C GEMMs vs numpy (OpenBLAS) and torch (MKL), one run, equal thread counts.

    python benchmarks/bench_gemm.py                 # 1 and 2 threads, all shapes
    python benchmarks/bench_gemm.py --threads 2 --only 2048

Shapes: 2048^3 and the GEMMs of ViT-B/16 (197 tokens x batch, 768 <-> 2304/3072) and ResNet-50's 1x1 convs as
GEMMs (M = pixels x batch, K = in channels, N = out channels). C = A(M,K) @ W(N,K)^T, i.e. a Linear layer.
With --cpu-time the clock is process CPU time summed over threads, so ms is CPU-ms and % is of ONE core's peak
(per busy core-second; spin-waiting threads count as busy). Rows: flowvision `_C.gemm` (packs B every call), `_C.gemm_packed` with the weight packed once (if built), numpy
`a @ w.T`, torch `a @ w.T`; best-of-N ms (CPU time is not used: the harness times wall clock best-of, which
under load is the least disturbed run), GFLOP/s and % of the FMA peak measured with the same thread count.
numpy's thread count is whatever OpenBLAS starts with (set OPENBLAS_NUM_THREADS before running to pin it).
"""
import argparse
import os
import time

import numpy as np

SHAPES = [  # (label, M, N, K)
    ("square 2048^3", 2048, 2048, 2048),
    ("ViT-B qkv b1 (197x2304x768)", 197, 2304, 768),
    ("ViT-B fc1 b8 (1576x3072x768)", 1576, 3072, 768),
    ("ViT-B fc2 b8 (1576x768x3072)", 1576, 768, 3072),
    ("R50 conv2 1x1 b1 (3136x64x256)", 3136, 64, 256),
    ("R50 conv3 1x1 b1 (3136x256x64)", 3136, 256, 64),
    ("R50 layer3 1x1 b8 (1568x1024x256)", 1568, 1024, 256),
    ("R50 layer4 1x1 b1 (49x2048x512)", 49, 2048, 512),
    ("R50 fc b1 (1x1000x2048)", 1, 1000, 2048),
]


def best(fn, repeat, min_time=0.3, clock=time.perf_counter):
    fn()
    ts = []
    t0 = time.perf_counter()
    while len(ts) < repeat or (time.perf_counter() - t0 < min_time and len(ts) < 20 * repeat):
        s = clock()
        fn()
        ts.append(clock() - s)
    return min(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with process CPU time (all threads): GFLOP/s per busy core-second vs the 1-core peak; "
                         "what a kernel achieves when it runs, independent of other users' load")
    args = ap.parse_args()
    import torch
    from flowvision.backend import _C
    rng = np.random.default_rng(0)
    print(f"# {_C.cpu_isa()} | load avg {os.getloadavg()[0]:.1f} | torch {torch.__version__} | numpy {np.__version__}")
    print("| shape | thr | contender | ms | GFLOP/s | % peak |\n|---|---|---|---|---|---|")
    for t in [int(x) for x in args.threads.split(",")]:
        _C.set_num_threads(t)
        torch.set_num_threads(t)
        peak = max(_C.fma_peak_gflops(0.5, t), t * _C.fma_peak_gflops(0.5, 1))  # see bench_models.py
        for label, M, N, K in SHAPES:
            if args.only and args.only not in label:
                continue
            a = rng.standard_normal((M, K), dtype=np.float32)
            w = rng.standard_normal((N, K), dtype=np.float32)
            ta, tw = torch.from_numpy(a), torch.from_numpy(w)
            fns = {"fv _C.gemm": lambda: _C.gemm(a, w, False, True)}
            if hasattr(_C, "gemm_packed"):
                pk = _C.pack_b(w, True)
                fns["fv gemm_packed"] = lambda: _C.gemm_packed(a, pk)
            fns["numpy"] = lambda: a @ w.T
            fns["torch"] = lambda: ta @ tw.T
            flops = 2.0 * M * N * K
            for name, fn in fns.items():
                s = best(fn, args.repeat, clock=time.process_time if args.cpu_time else time.perf_counter)
                g = flops / s * 1e-9
                pk_ = peak / t if args.cpu_time else peak
                print(f"| {label} | {t} | {name} | {s * 1e3:.2f} | {g:.0f} | {100 * g / pk_:.0f}% |", flush=True)
        print(f"# {t} thread(s): FMA peak {peak:.0f} GFLOP/s, load avg {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
