"""Per-layer-shape kernel speed as a share of the FMA peak: GEMM (packed weights), NHWC direct conv, depthwise
conv and fused attention on the shapes of the benchmark models, one thread, process CPU time.

    python benchmarks/bench_layers.py                          # this build
    python benchmarks/bench_layers.py --against /tmp/base      # before/after: /tmp/base holds an older `flowvision`
                                                               # package (with its own built _C) to compare with

With ``--against`` both builds run in alternating child processes (base, new, base, new, ...; two rounds, best
of each) -- one process cannot load two builds of the extension -- and the table adds the base time, new/base and
whether the two outputs are bit-identical (a hash of the output bytes on the same seeded inputs).
GFLOP/s counts 2 per multiply-add (depthwise: its own K*K*C*OH*OW multiply-adds; attention: the two products,
4 Lq Lk D per head); % of ``_C.fma_peak_gflops`` on one core, measured in each child.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def _shapes():
    """(label, kind, params): the layers that dominate the seven benchmark models at batch 1."""
    g = [  # (M tokens/pixels, K, N, epilogue)
        ("gemm ViT qkv 197x768->2304", (197, 768, 2304, "none")),
        ("gemm ViT fc1 197x768->3072 gelu", (197, 768, 3072, "gelu")),
        ("gemm ViT fc2 197x3072->768", (197, 3072, 768, "none")),
        ("gemm Swin/ConvNeXt pw 3136x96->384 gelu", (3136, 96, 384, "gelu")),
        ("gemm ResNet 1x1 3136x256->64 relu", (3136, 256, 64, "relu")),
        ("gemm MBv3 1x1 784x40->120 hswish", (784, 40, 120, "hardswish")),
        ("gemm EffNet 1x1 3136x24->144 silu", (3136, 24, 144, "silu")),
        ("gemv classifier 1x1280->1000", (1, 1280, 1000, "none")),
        ("gemv SE 1x1152->48 silu", (1, 1152, 48, "silu")),
        ("gemm batch-2 classifier 2x1280->1000", (2, 1280, 1000, "none")),
    ]
    c = [  # (H, C, O, k, stride, groups)
        ("conv stem 7x7/2 3->64 224", (224, 3, 64, 7, 2, 1)),
        ("conv 3x3 64->64 56", (56, 64, 64, 3, 1, 1)),
        ("conv 3x3/2 128->128 56", (56, 128, 128, 3, 2, 1)),
        ("conv 3x3 256->256 14", (14, 256, 256, 3, 1, 1)),
        ("conv 3x3 512->512 7", (7, 512, 512, 3, 1, 1)),
        ("conv EffNet stem 3x3/2 3->32 224", (224, 3, 32, 3, 2, 1)),
        ("dw 3x3 32 112 (EffNet)", (112, 32, 32, 3, 1, 32)),
        ("dw 3x3 72 56 (MBv3)", (56, 72, 72, 3, 1, 72)),
        ("dw 5x5/2 144 56 (EffNet)", (56, 144, 144, 5, 2, 144)),
        ("dw 5x5 672 14 (EffNet)", (14, 672, 672, 5, 1, 672)),
        ("dw 7x7 96 56 (ConvNeXt)", (56, 96, 96, 7, 1, 96)),
        ("dw 7x7 768 7 (ConvNeXt)", (7, 768, 768, 7, 1, 768)),
    ]
    a = [  # (batch*heads, N, D)
        ("attn ViT 12 heads N=197 D=64", (12, 197, 64)),
        ("attn Swin 64 win x 3 heads N=49 D=32", (192, 49, 32)),
    ]
    return [(lab, "gemm", p) for lab, p in g] + [(lab, "conv", p) for lab, p in c] + [(lab, "attn", p) for lab, p in a]


def _make(kind, p, rng):
    """(fn, flops): fn() runs the kernel once and returns its output array."""
    from flowvision.backend import _C
    if kind == "gemm":
        M, K, N, ep = p
        a = rng.standard_normal((M, K), dtype=np.float32)
        w = rng.standard_normal((N, K), dtype=np.float32) * np.float32(K ** -0.5)
        b = rng.standard_normal(N, dtype=np.float32)
        pk, out = _C.pack_b(w, True), np.empty((M, N), np.float32)
        return (lambda: _C.gemm_packed(a, pk, b, ep, out=out)), 2 * M * K * N
    if kind == "conv":
        H, C, O, k, s, g = p
        x = rng.standard_normal((1, H, H, C), dtype=np.float32)
        w = rng.standard_normal((O, C // g, k, k), dtype=np.float32) * np.float32((C // g * k * k) ** -0.5)
        b = rng.standard_normal(O, dtype=np.float32)
        pk = _C.pack_conv(w, g)
        OH = (H + 2 * (k // 2) - k) // s + 1
        out = np.empty((1, OH, OH, O), np.float32)
        fn = lambda: _C.conv2d_nhwc(x, pk, b, [s, s], [k // 2, k // 2], [1, 1], "relu", out=out)  # noqa: E731
        return fn, 2 * OH * OH * O * (C // g) * k * k
    B, N, D = p
    q, kk, v = (rng.standard_normal((B, N, D), dtype=np.float32) for _ in range(3))
    out = np.empty((B, N, D), np.float32)
    return (lambda: _C.sdpa(q, kk, v, out=out)), 4 * B * N * N * D


def _child(min_time):
    """Time every shape in this process (1 thread, CPU time, best of >= 5 runs and >= min_time s); JSON out."""
    from flowvision.backend import _C
    _C.set_num_threads(1)
    peak = _C.fma_peak_gflops(0.5, 1)
    res = {"peak": peak, "isa": _C.cpu_isa(), "rows": {}}
    for label, kind, p in _shapes():
        fn, flops = _make(kind, p, np.random.default_rng(0))
        y = fn()
        digest = hashlib.sha1(np.ascontiguousarray(y).tobytes()).hexdigest()[:12]
        ts, t0 = [], time.perf_counter()
        while len(ts) < 5 or (time.perf_counter() - t0 < min_time and len(ts) < 2000):
            s = time.process_time()
            fn()
            ts.append(time.process_time() - s)
        res["rows"][label] = (min(ts), flops, digest)
    print("JSON" + json.dumps(res))


def _run_child(snapshot, min_time):
    code = ("import sys\n"
            + ("sys.meta_path[:] = [f for f in sys.meta_path if 'skbc' not in type(f).__module__]\n"
               f"sys.path.insert(0, {snapshot!r})\n" if snapshot else "")
            + f"sys.argv = ['bench_layers', '--_child', '--min-time', '{min_time}']\n"
            + f"exec(open({os.path.abspath(__file__)!r}).read())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("JSON")), None)
    if line is None:
        sys.exit(f"child failed ({'base ' + snapshot if snapshot else 'this build'}):\n{r.stderr[-2000:]}")
    return json.loads(line[4:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", default="", help="directory holding the baseline `flowvision` package")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        return _child(args.min_time)
    new, base = [], []
    for _ in range(args.rounds):
        if args.against:
            base.append(_run_child(args.against, args.min_time))
        new.append(_run_child("", args.min_time))
    peak = max(r["peak"] for r in new + base)
    load = os.getloadavg()
    print(f"# {new[0]['isa']} | 1 thread, CPU time | 1-core FMA peak {peak:.0f} GFLOP/s (best child) | "
          f"load avg {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    cols = "| layer | GFLOP | " + ("base ms | base % peak | " if base else "") + "ms | GFLOP/s | % peak |"
    cols += " new/base | bit-identical |" if base else ""
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    for label, _, _ in _shapes():
        t = min(r["rows"][label][0] for r in new)
        flops, dig = new[0]["rows"][label][1], new[0]["rows"][label][2]
        row = f"| {label} | {flops * 1e-9:.3f} | "
        if base:
            tb = min(r["rows"][label][0] for r in base)
            row += f"{tb * 1e3:.3f} | {100 * flops / tb * 1e-9 / peak:.0f}% | "
        row += f"{t * 1e3:.3f} | {flops / t * 1e-9:.1f} | {100 * flops / t * 1e-9 / peak:.0f}% |"
        if base:
            row += f" {t / tb:.2f} | {'yes' if dig == base[0]['rows'][label][2] else 'NO'} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
