"""flowvision CUDA vs PyTorch (cuDNN) on one GPU, side by side in one run.

    python benchmarks/bench_cuda.py                         # the default table: resnet50 / vit_base / swin_tiny,
                                                            # batch 1/32/128, fp32 + fp16 + bf16, R50 train b64
    python benchmarks/bench_cuda.py --models resnet50 --batches 128 --precisions fp32 --repeat 20
    python benchmarks/bench_cuda.py --tf32                  # flowvision fp32 convs/matmuls on TF32 tensor cores
    python benchmarks/bench_cuda.py --json out.json         # also write the rows as JSON

Both frameworks run the identical timm architecture with the same weights. PyTorch runs with its defaults
(cudnn.benchmark on; cuDNN may use TF32 for fp32 convolutions unless --torch-strict-fp32). Mixed precision is
autocast in both (torch.autocast("cuda", dtype) / flowvision.backend.cuda.autocast(dtype)). Each timing is
the median of --repeat runs measured with CUDA events after --warmup runs; throughput = batch / time.
ratio = flowvision throughput / torch throughput (the targets: R50 b128 >= 0.7 fp32, >= 0.5 mixed,
training step >= 0.5). The training step is forward + cross-entropy + backward + SGD (momentum 0.9) update.
Needs an NVIDIA GPU, a CUDA build of flowvision and a CUDA build of torch; exits with a message otherwise.
"""
import argparse
import json
import statistics
import sys

import numpy as np

MODELS = {"resnet50": "resnet50", "vit_base_patch16_224": "vit_base_patch16_224",
          "swin_tiny": "swin_tiny_patch4_window7_224"}


def _require_gpu():
    from flowvision.backend import cuda
    reasons = []
    if not cuda.is_available():
        reasons.append("flowvision: " + cuda._why_unavailable())
    try:
        import torch
        if not torch.cuda.is_available():
            reasons.append("torch: torch.cuda.is_available() is False")
    except ImportError:
        reasons.append("torch is not installed (the reference side of the benchmark)")
    if reasons:
        sys.exit("bench_cuda.py needs an NVIDIA GPU: " + "; ".join(reasons))


def build_pair(name):
    import timm
    import torch
    import flowvision.models as M
    from flowvision import backend as flow
    torch.manual_seed(0)
    ref = timm.create_model(name, pretrained=False)
    ours = M.create_model(name, pretrained=False)
    sd = {k: v.detach().cpu().numpy().copy() for k, v in ref.state_dict().items()}
    ours.load_state_dict({k: flow.from_numpy(v) for k, v in sd.items()}, strict=True)
    return ref.cuda(), ours.cuda()


def _time_events(cuda, fn, warmup, repeat):
    """Median ms of fn() between CUDA events of `cuda` (torch.cuda or flowvision.backend.cuda: same API)."""
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(repeat):
        a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def _time_torch(fn, warmup, repeat):
    import torch
    return _time_events(torch.cuda, fn, warmup, repeat)


def _time_fv(fn, warmup, repeat):
    from flowvision.backend import cuda
    return _time_events(cuda, fn, warmup, repeat)


def _dtypes(precision):
    import torch
    from flowvision import backend as flow
    return {"fp32": (None, None), "fp16": (torch.float16, flow.float16), "bf16": (torch.bfloat16, flow.bfloat16)}[precision]


def bench_inference(name, batch, precision, warmup, repeat):
    import torch
    from flowvision import backend as flow
    from flowvision.backend import cuda
    ref, ours = build_pair(MODELS[name])
    ref.eval()
    ours.eval()
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    xt, xf = torch.from_numpy(x).cuda(), flow.from_numpy(x).cuda()
    tdt, fdt = _dtypes(precision)

    def run_torch():
        with torch.no_grad(), torch.autocast("cuda", dtype=tdt, enabled=tdt is not None):
            return ref(xt)

    def run_fv():
        with flow.no_grad(), cuda.autocast(enabled=fdt is not None, dtype=fdt):
            return ours(xf)

    # correctness first: the two logits agree (loosely in mixed precision)
    a, b = run_torch().float().cpu().numpy(), run_fv().float().cpu().numpy()
    err = float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-6))
    t_ms, f_ms = _time_torch(run_torch, warmup, repeat), _time_fv(run_fv, warmup, repeat)
    del ref, ours
    return {"model": name, "batch": batch, "precision": precision, "torch_ms": t_ms, "fv_ms": f_ms,
            "torch_img_s": batch / t_ms * 1e3, "fv_img_s": batch / f_ms * 1e3, "ratio": t_ms / f_ms,
            "max_rel_logit_diff": err}


def bench_train(batch, precision, warmup, repeat):
    import torch
    from flowvision import backend as flow
    from flowvision.backend import cuda
    from flowvision.backend.nn import functional as F
    ref, ours = build_pair("resnet50")
    ref.train()
    ours.train()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)
    y = rng.integers(0, 1000, batch)
    xt, yt = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    xf, yf = flow.from_numpy(x).cuda(), flow.from_numpy(y).cuda()
    tdt, fdt = _dtypes(precision)
    opt = torch.optim.SGD(ref.parameters(), lr=0.01, momentum=0.9)
    params = [p for p in ours.parameters() if p.requires_grad]
    bufs = [None] * len(params)

    def step_torch():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=tdt, enabled=tdt is not None):
            loss = torch.nn.functional.cross_entropy(ref(xt), yt)
        loss.backward()
        opt.step()

    def step_fv():
        ours.zero_grad()
        with cuda.autocast(enabled=fdt is not None, dtype=fdt):
            loss = F.cross_entropy(ours(xf), yf)
        loss.backward()
        with flow.no_grad():  # SGD with momentum on the device (flowvision's optimisers are CPU-only so far)
            for i, p in enumerate(params):
                g = p.grad
                bufs[i] = g.clone() if bufs[i] is None else bufs[i] * 0.9 + g
                p.sub_(bufs[i] * 0.01)

    t_ms, f_ms = _time_torch(step_torch, warmup, repeat), _time_fv(step_fv, warmup, repeat)
    return {"model": "resnet50 train step", "batch": batch, "precision": precision, "torch_ms": t_ms, "fv_ms": f_ms,
            "torch_img_s": batch / t_ms * 1e3, "fv_img_s": batch / f_ms * 1e3, "ratio": t_ms / f_ms,
            "max_rel_logit_diff": float("nan")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 32, 128])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "fp16", "bf16"], choices=["fp32", "fp16", "bf16"])
    ap.add_argument("--train-batch", type=int, default=64, help="ResNet-50 training-step batch (0: skip)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--tf32", action="store_true", help="flowvision fp32 conv/matmul on TF32 tensor cores")
    ap.add_argument("--torch-strict-fp32", action="store_true", help="disable TF32 in cuDNN/cuBLAS for torch")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    _require_gpu()
    import torch
    from flowvision.backend import cuda
    torch.backends.cudnn.benchmark = True
    if args.torch_strict_fp32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    cuda.allow_tf32 = args.tf32
    print(f"GPU: {cuda.get_device_name(0)} (sm_{''.join(map(str, cuda.get_device_capability()))}); torch "
          f"{torch.__version__} cuDNN {torch.backends.cudnn.version()}; flowvision TF32={args.tf32}, torch cuDNN "
          f"TF32={torch.backends.cudnn.allow_tf32}")
    hdr = f"{'model':22s} {'batch':>5s} {'prec':>5s} {'torch ms':>9s} {'fv ms':>9s} {'torch img/s':>11s} " \
          f"{'fv img/s':>9s} {'fv/torch':>8s} {'logit diff':>10s}"
    print(hdr)
    rows = []

    def show(r):
        rows.append(r)
        print(f"{r['model']:22s} {r['batch']:5d} {r['precision']:>5s} {r['torch_ms']:9.2f} {r['fv_ms']:9.2f} "
              f"{r['torch_img_s']:11.1f} {r['fv_img_s']:9.1f} {r['ratio']:8.2f} {r['max_rel_logit_diff']:10.1e}",
              flush=True)

    for name in args.models:
        for batch in args.batches:
            for prec in args.precisions:
                show(bench_inference(name, batch, prec, args.warmup, args.repeat))
                cuda.empty_cache()
                torch.cuda.empty_cache()
    if args.train_batch:
        for prec in args.precisions:
            show(bench_train(args.train_batch, prec, args.warmup, args.repeat))
    print(f"flowvision peak device memory: {cuda.max_memory_allocated() / 2**20:.0f} MiB allocated, "
          f"{cuda.max_memory_reserved() / 2**20:.0f} MiB reserved")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
