"""Detection and segmentation inference speed: flowvision vs torchvision on the identical model and weights (eval,
random weights, builder defaults), side by side in one run with equal thread counts.

    python benchmarks/bench_detection.py --threads 1 --cpu-time          # the documented run (docs/benchmarks.md)
    python benchmarks/bench_detection.py --models ssd300_vgg16 --threads 2
    python benchmarks/bench_detection.py --profile fasterrcnn_resnet50_fpn   # where the time goes, both sides
    python benchmarks/bench_detection.py --threads 1 --cpu-time --captured  # flowvision's static part captured
    python benchmarks/bench_detection.py --threads 1 --cpu-time --captured --onnx  # and ONNX Runtime

Detection models get one 3x480x640 image in [0, 1] (the list-of-CHW input; each model resizes it itself),
segmentation models a 1x3x520x520 normalised batch. Weights: torchvision's builder with weights=None and
weights_backbone=None, its state_dict copied into flowvision's builder. The contenders run interleaved in rounds
(bench_models._bench); the table shows best-of-N ms, the median in brackets, and torch/fv (> 1 = flowvision faster).
``--cpu-time`` measures process CPU time (use with --threads 1: robust to other users' load on a shared machine).
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import _bench  # noqa: E402

DETECTION = ["ssd300_vgg16", "ssdlite320_mobilenet_v3_large", "fasterrcnn_resnet50_fpn", "retinanet_resnet50_fpn"]
SEGMENTATION = ["fcn_resnet50", "deeplabv3_resnet50"]


def build_pair(name):
    """(torchvision model, flowvision model, input array, kind) with identical weights, both in eval mode."""
    import torch
    import torchvision.models.detection as tvd
    import torchvision.models.segmentation as tvs
    import flowvision.models.detection as fvd
    import flowvision.models.segmentation as fvs
    from flowvision import backend as flow
    kind = "det" if name in DETECTION else "seg"
    tv_mod, fv_mod = (tvd, fvd) if kind == "det" else (tvs, fvs)
    torch.manual_seed(0)
    ref = getattr(tv_mod, name)(weights=None, weights_backbone=None).eval()
    ours = getattr(fv_mod, name)(weights=None, weights_backbone=None).eval()
    sd = {k: flow.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    ours.load_state_dict(sd, strict=True)
    rng = np.random.default_rng(0)
    if kind == "det":
        x = rng.random((3, 480, 640), dtype=np.float32)
    else:
        x = rng.standard_normal((1, 3, 520, 520), dtype=np.float32)
    return ref, ours, x, kind


# a detection model's head modules that take one Tensor (one call per FPN level, or the ROI batch): compiled too,
# each planned per input shape on its first call
STATIC_HEADS = ["head.classification_head.conv", "head.classification_head.cls_logits",
                "head.regression_head.conv", "head.regression_head.bbox_reg",  # RetinaNet
                "rpn.head.conv", "rpn.head.cls_logits", "rpn.head.bbox_pred",  # Faster R-CNN's RPN
                "roi_heads.box_head", "roi_heads.box_predictor"]  # and its box head on the sampled ROIs


def capture_static_part(ours, x, kind):
    """flowvision with its static graph captured (``flowvision.compile``): a segmentation model whole (it returns a
    dict of Tensors); a detection model's backbone + FPN on the transformed image batch this input produces, and the
    head modules of STATIC_HEADS it has (the anchor, proposal, ROI pooling and NMS stages stay eager: their shapes
    depend on the data)."""
    from flowvision import backend as flow
    fx = flow.from_numpy(x)
    if kind == "seg":
        return flow.compile(ours, fx)
    with flow.no_grad():
        batch = ours.transform([fx])[0].tensors
    ours.backbone = flow.compile(ours.backbone, batch)
    for path in STATIC_HEADS:
        parent_path, _, leaf = path.rpartition(".")
        try:
            parent = ours.get_submodule(parent_path)
        except AttributeError:
            continue
        if hasattr(parent, leaf):
            setattr(parent, leaf, flow.compile(getattr(parent, leaf)))
    return ours


def export_onnx(ref, x, kind, tmpdir):
    """torchvision's model exported to ONNX with the legacy exporter (opset 17): torchvision's detection models export
    through it with their transform, RPN / NMS and postprocessing in the graph."""
    import warnings
    import torch
    path = os.path.join(tmpdir, "model.onnx")
    example = ([torch.from_numpy(x)],) if kind == "det" else (torch.from_numpy(x),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(ref, example, path, input_names=["images"], opset_version=17, dynamo=False)
    return path


def ort_callable(path, x, threads):
    """ONNX Runtime (CPU provider) on the exported model, ``threads`` intra-op threads."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {"images": x}
    return lambda: sess.run(None, feed)


def describe_ort(out, kind):
    return f"{len(out[0])} dets" if kind == "det" else "x".join(str(s) for s in out[0].shape)


def callables(ref, ours, x, kind):
    import torch
    from flowvision import backend as flow
    tx, fx = torch.from_numpy(x), flow.from_numpy(x)

    def run_torch():
        with torch.no_grad():
            return ref([tx]) if kind == "det" else ref(tx)

    def run_fv():
        with flow.no_grad():
            return ours([fx]) if kind == "det" else ours(fx)
    return run_fv, run_torch


def describe(out, kind):
    if kind == "det":
        return f"{len(out[0]['boxes'])} dets"
    return "x".join(str(s) for s in out["out"].shape)


def profile(name, threads):
    """cProfile of flowvision's forward (self time per Python function: the engine ops show up as their
    wrappers) and torch.profiler's per-op table for torchvision, one call each after a warm-up."""
    import cProfile
    import pstats
    import torch
    from flowvision import backend as flow
    flow._C.set_num_threads(threads)
    torch.set_num_threads(threads)
    ref, ours, x, kind = build_pair(name)
    run_fv, run_torch = callables(ref, ours, x, kind)
    run_fv()
    run_torch()
    print(f"== flowvision {name}: cProfile, top functions by self time")
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    run_fv()
    pr.disable()
    print(f"(wall {1e3 * (time.perf_counter() - t0):.0f} ms under the profiler)")
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    print(f"== torchvision {name}: torch.profiler, top ops by self CPU time")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run_torch()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(DETECTION + SEGMENTATION))
    ap.add_argument("--threads", default="1", help="thread counts, each used for both contenders")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per contender (at least)")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds per contender and case (at least)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with process CPU time (use with --threads 1: independent of other users' load)")
    ap.add_argument("--profile", metavar="MODEL", help="profile one model on both sides instead of timing")
    ap.add_argument("--captured", action="store_true",
                    help="flowvision with its static graph captured: segmentation models whole, detection models' "
                         "backbone + FPN (capture_static_part)")
    ap.add_argument("--onnx", action="store_true", help="also ONNX Runtime on torchvision's model exported to ONNX")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    if args.profile:
        return profile(args.profile, threads[0])

    import torch
    import torchvision
    from flowvision import backend as flow
    clock = time.process_time if args.cpu_time else time.perf_counter
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}; clock: "
          f"{'process CPU time' if args.cpu_time else 'wall'}; eval, random weights, batch 1")
    print(f"{'model':32s} {'input':>9s} {'thr':>3s} {'torchvision ms':>18s} {'flowvision ms':>18s} "
          f"{'torch/fv':>8s}" + (f" {'ORT ms':>18s} {'ORT/fv':>6s}" if args.onnx else "") + "  output")
    tmpdir = tempfile.mkdtemp(prefix="fv_bench_det_")
    for name in [n for n in args.models.split(",") if n]:
        ref, ours, x, kind = build_pair(name)
        onnx_path = export_onnx(ref, x, kind, tmpdir) if args.onnx else None
        if args.captured:
            ours = capture_static_part(ours, x, kind)
        run_fv, run_torch = callables(ref, ours, x, kind)
        size = "x".join(str(s) for s in x.shape[-2:])
        for t in threads:
            flow._C.set_num_threads(t)
            torch.set_num_threads(t)
            contenders = {"fv": run_fv, "torch": run_torch}
            if args.onnx:
                contenders["ort"] = ort_callable(onnx_path, x, t)
            res = _bench(contenders, args.repeat, args.min_time, clock=clock)
            (fb, fm), (tb, tm) = res["fv"], res["torch"]
            ort_cols = ""
            if args.onnx:
                ob, om = res["ort"]
                ort_cols = f" {1e3 * ob:9.1f} ({1e3 * om:6.1f}) {ob / fb:6.2f}"
            print(f"{name:32s} {size:>9s} {t:3d} {1e3 * tb:9.1f} ({1e3 * tm:6.1f}) {1e3 * fb:9.1f} "
                  f"({1e3 * fm:6.1f}) {tb / fb:8.2f}{ort_cols}  fv {describe(run_fv(), kind)}, tv "
                  f"{describe(run_torch(), kind)}"
                  + (f", ORT {describe_ort(contenders['ort'](), kind)}" if args.onnx else ""), flush=True)
        del ref, ours
        if onnx_path:
            os.remove(onnx_path)
    shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == "__main__":
    main()
