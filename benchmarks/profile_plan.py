"""Where a captured plan's time goes: per-step wall time of the native executor (``ExecPlan.run(profile=True)``)
summed by step class, next to ONNX Runtime's per-node profile (``SessionOptions.enable_profiling``) summed by op
type, on the same timm model and weights.

    python benchmarks/profile_plan.py --model mobilenetv3_large_100 --batch 1 --threads 1
    python benchmarks/profile_plan.py --model efficientnet_b0 --batch 8 --threads 1 --steps 15 --ort

Steps are classified by their label (the captured op, e.g. ``conv``/``linear``/``channel_gate``) and, for
convolutions, by kind (depthwise / 1x1 / KxK). Times are the median over --repeat runs.
"""
import argparse
import collections
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def _step_class(g, op, label):
    """The step's label, convolutions refined by kind and input size: 'conv dw5x5 small+hardswish' (<= 14x14),
    'conv 1x1 1px' (a squeeze-excitation FC), 'conv 1x1 large+res', ... The kernel size is read from the padding
    (the weights are released after lowering; the mobile networks pad "same")."""
    if op.kind != "conv":
        return label
    a = op.attrs
    shape = g.meta[a["x"]][0]  # logical NCHW
    hw = shape[-2:]
    k = 2 * a["padding"][0] + 1
    kind = f"dw{k}x{k}" if a["groups"] > 1 and a["groups"] == shape[1] else f"{k}x{k}"
    size = "1px" if hw[0] * hw[1] == 1 else ("small" if hw[0] * hw[1] <= 196 else "large")
    return f"{label.split('+')[0]} {kind} {size}" + (f"+{a['ep']}" if a["ep"] != "none" else "") + (
        "+res" if "residual" in label else "")


def fv_profile(model, x, threads, repeat):
    from flowvision import backend as flow
    flow._C.set_num_threads(threads)
    cm = flow.compile(model, flow.from_numpy(x))
    plan = cm._plan_for(flow.from_numpy(x))
    native = plan.native
    if native is None:
        raise RuntimeError(f"the plan has no native executor: {plan.native_error}")
    info = native.steps()
    for _ in range(3):
        native.run(x)
    runs = np.array([native.run(x, profile=True)[1] for _ in range(repeat)])
    med = np.median(runs, axis=0)
    totals = med.sum()
    g = plan.graph
    by_out = {op.outs[0]: op for op in g.ops if op.outs}
    labels, flops = [], []
    for (label, _, _), (ins, outs) in plan.native_steps:
        op = by_out[outs[0]]
        if op.kind == "conv" and list(ins) != op.inputs():  # a 1x1 expansion fused with this depthwise conv
            pw = by_out[op.attrs["x"]]
            labels.append("expand 1x1 (" + _step_class(g, pw, label).split(" ", 1)[1] + ") + " +
                          _step_class(g, op, label.split("+conv", 1)[-1]).split(" ", 1)[1])
            flops.append(_conv_flops(g, pw) + _conv_flops(g, op))
        else:
            labels.append(_step_class(g, op, label))
            flops.append(_conv_flops(g, op))
    assert len(labels) == len(info)
    return list(zip(labels, map(float, med), flops)), float(totals)


def _conv_flops(g, op):
    """2 x multiply-adds of a convolution step (0 for other steps)."""
    if op.kind != "conv":
        return 0
    a = op.attrs
    c = g.meta[a["x"]][0][1]
    out = g.meta[op.outs[0]][0]
    k = 2 * a["padding"][0] + 1
    return 2 * int(np.prod(out)) * (c // a["groups"]) * k * k


def ort_profile(onnx_path, x, threads, repeat):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    for _ in range(3 + repeat):
        sess.run(None, {"x": x})
    events = json.load(open(sess.end_profiling()))
    per = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per[(e["name"][:-12], e["args"].get("op_name", "?"))].append(e["dur"] / 1e6)
    by_op = collections.Counter()
    for (_, op), ts in per.items():
        by_op[op] += float(np.median(ts[3:] if len(ts) > 3 else ts))
    return by_op


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mobilenetv3_large_100")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--steps", type=int, default=12, help="also list the N slowest steps")
    ap.add_argument("--ort", action="store_true", help="also ONNX Runtime's profile by op type")
    args = ap.parse_args()
    from bench_models import build_pair, _onnx_export
    ref, ours = build_pair(args.model)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224), dtype=np.float32)
    steps, total = fv_profile(ours, x, args.threads, args.repeat)
    by_label = collections.Counter()
    count = collections.Counter()
    fl = collections.Counter()
    for label, t, f in steps:
        by_label[label] += t
        count[label] += 1
        fl[label] += f
    print(f"# {args.model} batch {args.batch} threads {args.threads}: flowvision captured {total * 1e3:.2f} ms "
          f"(sum of per-step medians of {args.repeat}, {len(steps)} steps)")
    for k, t in by_label.most_common():
        rate = f"{fl[k] / t / 1e9:6.1f} GFLOP/s" if fl[k] else ""
        print(f"  fv  {k:<40s} n={count[k]:3d} {t * 1e3:8.3f} ms {rate}")
    if args.steps:
        print("  slowest steps:")
        for label, t, _ in sorted(steps, key=lambda s: -s[1])[:args.steps]:
            print(f"    {label:<60s} {t * 1e3:8.3f} ms")
    if args.ort:
        path = _onnx_export(ref, x, tempfile.mkdtemp())
        by_op = ort_profile(path, x, args.threads, args.repeat)
        print(f"# ORT total (node kernels) {sum(by_op.values()) * 1e3:.2f} ms")
        for op, t in by_op.most_common():
            print(f"  ort {op:<40s} {t * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
