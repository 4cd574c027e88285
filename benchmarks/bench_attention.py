"""Scaled-dot-product attention on the zoo's shapes: the fused kernel vs torch vs flowvision's old composite path.

    python benchmarks/bench_attention.py                 # all shapes, 1 thread
    python benchmarks/bench_attention.py --only swin --repeat 5
    python benchmarks/bench_attention.py --model-ab vit_base_patch16_224 --batch 8 --rounds 3

q, k, v are the permuted views of a qkv projection output, as the models produce them:
- ViT-B / DeiT-S: qkv (B, N, 3, H, D) -> (B, H, N, D) views, no mask;
- Swin-T stages (window attention, shifted blocks): qkv (B, nW, N, 3, H, D) -> (B, nW, H, N, D) views, additive
  mask (nW, H, N, N) (relative-position bias + shift mask).
Columns: "fused" = `F.scaled_dot_product_attention` (the `_C.sdpa` kernel, output in (.., N, H, D) memory),
"torch" = torch's `F.scaled_dot_product_attention` on the same (strided) tensors, "composite" = flowvision's previous
path (scale, matmul, mask add, softmax, matmul as separate ops). Clock: process CPU time with 1 thread (robust to
other users' load); GFLOP/s counts the two matmuls (4 * Lq * Lk * D per head), % of `_C.fma_peak_gflops`.

--model-ab: the whole model, captured (`flowvision.compile`) and eager, with the fused kernel and with it switched
off (the composite path, also at capture time), timed interleaved in one process (1 thread, CPU time): the A/B
that other changes to the tree cannot blur.
"""
import argparse
import time

import numpy as np
import torch

import flowvision.backend as flow
from flowvision.backend import _C
from flowvision.backend._ops import attention as A
from flowvision.backend.nn import functional as F


def shapes():
    rows = []
    for b in (1, 8):
        rows.append((f"ViT-B b{b}", "vit", (b,), 12, 197, 64))
    for b in (1, 8):
        rows.append((f"DeiT-S b{b}", "vit", (b,), 6, 197, 64))
    for b in (1, 8):
        for stage, (nw, heads) in enumerate([(64, 3), (16, 6), (4, 12), (1, 24)], 1):
            rows.append((f"Swin-T b{b} s{stage}", "swin", (b, nw), heads, 49, 32))
    return rows


def make_inputs(kind, lead, heads, n, d, rng):
    qkv = rng.standard_normal(lead + (n, 3, heads, d)).astype(np.float32)
    nd = len(lead)
    perm = (nd + 1,) + tuple(range(nd)) + (nd + 2, nd, nd + 3)  # (3, *lead, heads, n, d)
    q, k, v = qkv.transpose(perm)
    mask = None
    if kind == "swin":
        nw = lead[1]
        mask = rng.standard_normal((nw, heads, n, n)).astype(np.float32)
        mask[..., : n // 2, n // 2:] = -100.0  # the shift mask's large negatives
    return q, k, v, mask


def cpu_time(fn, repeat, min_time):
    fn()
    best = float("inf")
    for _ in range(repeat):
        reps, t0 = 0, time.process_time()
        while True:
            fn()
            reps += 1
            el = time.process_time() - t0
            if el >= min_time:
                break
        best = min(best, el / reps)
    return best


def model_ab(name, batch, rounds):
    import flowvision
    import flowvision.models as M
    m = M.create_model(name).eval()
    x = flow.randn(batch, 3, 224, 224)
    real = A.fused_sdpa_supported

    def composite(fn):
        def run():
            A.fused_sdpa_supported = lambda *a: False
            try:
                return fn()
            finally:
                A.fused_sdpa_supported = real
        return run

    fused_plan = flowvision.compile(m, x)
    composite_plan = composite(lambda: flowvision.compile(m, x))()
    runs = {"captured, fused": lambda: fused_plan(x), "captured, composite": lambda: composite_plan(x),
            "eager, fused": lambda: m(x), "eager, composite": composite(lambda: m(x))}
    times = {k: [] for k in runs}
    with flow.no_grad():
        for fn in runs.values():
            fn()
        for _ in range(rounds):
            for k, fn in runs.items():
                t0 = time.process_time()
                fn()
                times[k].append(time.process_time() - t0)
    print(f"| model | batch | path | best ms | median ms |")
    print("|---|---|---|---|---|")
    for k, v in times.items():
        print(f"| {name} | {batch} | {k} | {min(v) * 1e3:.1f} | {np.median(v) * 1e3:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="substring of the row label (vit, deit, swin, b8, ...)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds of CPU time per measurement")
    ap.add_argument("--model-ab", default="", help="a model name: whole-model fused vs composite A/B instead")
    ap.add_argument("--batch", type=int, default=1, help="--model-ab batch size")
    ap.add_argument("--rounds", type=int, default=5, help="--model-ab interleaved rounds")
    args = ap.parse_args()
    flow.set_num_threads(1)
    torch.set_num_threads(1)
    if args.model_ab:
        return model_ab(args.model_ab, args.batch, args.rounds)
    peak = _C.fma_peak_gflops(0.5, 1)
    print(f"# flowvision {_C.cpu_isa()} | torch {torch.__version__} | 1 thread, CPU time | FMA peak {peak:.0f} GFLOP/s")
    print("| shape | q (.., H, N, D) | mask | fused ms | torch ms | composite ms | fused/torch speed-up | "
          "fused/composite speed-up | fused GFLOP/s (% peak) | torch GFLOP/s (% peak) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    real_supported = A.fused_sdpa_supported
    for label, kind, lead, heads, n, d in shapes():
        if args.only.lower() not in label.lower():
            continue
        q, k, v, mask = make_inputs(kind, lead, heads, n, d, rng)
        fq, fk, fv = (flow.Tensor._wrap(a) for a in (q, k, v))  # the strided views themselves
        fm = None if mask is None else flow.tensor(mask)
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        tm = None if mask is None else torch.from_numpy(mask)
        scale = d ** -0.5
        with flow.no_grad(), torch.no_grad():
            fused = cpu_time(lambda: F.scaled_dot_product_attention(fq, fk, fv, attn_mask=fm, scale=scale),
                             args.repeat, args.min_time)
            ref = cpu_time(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm,
                                                                                     scale=scale),
                           args.repeat, args.min_time)
            A.fused_sdpa_supported = lambda *a: False
            try:
                old = cpu_time(lambda: F.scaled_dot_product_attention(fq, fk, fv, attn_mask=fm, scale=scale),
                               args.repeat, args.min_time)
            finally:
                A.fused_sdpa_supported = real_supported
        flops = 4.0 * np.prod(lead) * heads * n * n * d
        gf, gt = flops / fused / 1e9, flops / ref / 1e9
        print(f"| {label} | {tuple(q.shape)} | {'(' + ', '.join(map(str, mask.shape)) + ')' if mask is not None else '-'}"
              f" | {fused * 1e3:.2f} | {ref * 1e3:.2f} | {old * 1e3:.2f} | {ref / fused:.2f} | {old / fused:.2f} | "
              f"{gf:.0f} ({100 * gf / peak:.0f}%) | {gt:.0f} ({100 * gt / peak:.0f}%) |")


if __name__ == "__main__":
    main()
