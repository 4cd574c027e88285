"""Whole-model inference speed: flowvision eager, flowvision captured (``flowvision.compile``) vs PyTorch eager
(and ONNX Runtime) on the identical timm model and weights, side by side in one run with equal thread counts.

    python benchmarks/bench_models.py                       # all models, batch 1 and 8, 1 and 2 threads
    python benchmarks/bench_models.py --models resnet50 --batches 1 --threads 2 --repeat 5
    python benchmarks/bench_models.py --onnx                # + ONNX Runtime on the torch-exported model
    python benchmarks/bench_models.py --onnx --openvino --no-eager --no-rss   # captured vs ORT vs OpenVINO vs torch
    python benchmarks/bench_models.py --no-rss              # skip the per-process peak-RSS measurement
    python benchmarks/bench_models.py --isa avx2 --onnx     # AVX2 kernels (flowvision and torch) on an AVX-512 CPU
    python benchmarks/bench_models.py --no-winograd ...     # flowvision's direct 3x3 convs only (before/after)
    python benchmarks/bench_models.py --separate-pw-dw ...  # expansion and depthwise conv as two plan steps
    python benchmarks/bench_models.py --threads 1 --cpu-time --onnx   # the 1-thread table of docs/benchmarks.md
    python benchmarks/bench_models.py --threads 1 --batches 1,8 --cpu-time --no-rss --repeat 3 --min-time 0 \
        --compare-executors                                 # captured: native (C++) vs Python plan executor

For every (model, batch, threads) the contenders run interleaved in rounds so that
load spikes from other processes hit all of them (blocks of --repeat calls, 2 rounds); the table shows the best-of-N time (ms), the median in
brackets, torch/fv and torch/captured (> 1 = flowvision faster), ORT/captured (> 1 = captured faster than ONNX
Runtime), OV/captured likewise for OpenVINO (``--openvino``: the same ONNX export, read with the input shape fixed,
``INFERENCE_NUM_THREADS`` = the thread count, ``PERFORMANCE_HINT=LATENCY``, float32 inference precision), achieved
GFLOP/s (FLOPs counted by torch's FlopCounterMode, 2 per multiply-add, convs and matmuls only)
and % of the FMA peak measured by ``_C.fma_peak_gflops`` with the same thread count. The captured module is
compiled (and validated against eager) before timing. Peak RSS: each (framework, model, batch) runs one forward
pass in a fresh subprocess (2 threads) and its VmHWM is reported -- flowvision eager, flowvision captured
(compile included), torch, ONNX Runtime; the flowvision children do not import torch.
"""
import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MODELS = ["resnet50", "resnet18", "vit_base_patch16_224", "swin_tiny_patch4_window7_224", "convnext_tiny",
          "efficientnet_b0", "mobilenetv3_large_100"]


def _state_dict_np(ref):
    return {k: v.detach().cpu().numpy().copy() for k, v in ref.state_dict().items()}


def build_pair(name):
    import timm
    import torch
    import flowvision.models as M
    from flowvision import backend as flow
    torch.manual_seed(0)
    ref = timm.create_model(name, pretrained=False).eval()
    ours = M.create_model(name, pretrained=False).eval()
    ours.load_state_dict({k: flow.from_numpy(v) for k, v in _state_dict_np(ref).items()}, strict=True)
    return ref, ours


def count_flops(ref, x):
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        ref(torch.from_numpy(x))
    return fc.get_total_flops()


_NO_WINOGRAD = "FLOWVISION_BENCH_NO_WINOGRAD"


_SEPARATE_PW_DW = "FLOWVISION_BENCH_SEPARATE_PW_DW"
_switched = []


def _winograd_switch(flow):
    """The algorithm switches of this run (--no-winograd, --separate-pw-dw), for the main thread's plans."""
    if os.environ.get(_NO_WINOGRAD) == "1":
        flow.backends.cpu.allow_winograd = False
    if os.environ.get(_SEPARATE_PW_DW) == "1" and not _switched:
        from flowvision.backend._ops import kernel_select
        _switched.append(kernel_select.separate_pw_dw())
        _switched[0].__enter__()  # for the rest of the process


def _rss_child(argv):
    """Subprocess entry: one forward pass, then print this process's VmHWM (peak RSS) in KiB."""
    fw, name, batch, weights, onnx_file = argv
    batch = int(batch)
    sd = dict(np.load(weights))
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    if fw in ("fv", "fvc"):
        import flowvision.models as M
        from flowvision import backend as flow
        flow._C.set_num_threads(2)
        _winograd_switch(flow)
        m = M.create_model(name, pretrained=False).eval()
        m.load_state_dict({k: flow.from_numpy(v) for k, v in sd.items()}, strict=True)
        del sd
        if fw == "fvc":
            flow.compile(m, flow.from_numpy(x))(flow.from_numpy(x))
        else:
            with flow.no_grad():
                m(flow.from_numpy(x))
    elif fw == "ov":
        del sd
        _ov_request(onnx_file, x, 2).infer({0: x})
    elif fw == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.inter_op_num_threads = 1
        del sd
        ort.InferenceSession(onnx_file, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    else:
        import timm
        import torch
        torch.set_num_threads(2)
        m = timm.create_model(name, pretrained=False).eval()
        m.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
        del sd
        with torch.no_grad():
            m(torch.from_numpy(x))
    with open("/proc/self/status") as f:  # per-process high-water mark (ru_maxrss would include the forked parent)
        print(next(int(line.split()[1]) for line in f if line.startswith("VmHWM")))


def peak_rss_mb(fw, name, batch, weights, onnx_file=""):
    for _ in range(40):  # a shared dev tree may be mid-rebuild (the extension briefly missing): wait for it
        r = subprocess.run([sys.executable, __file__, "--_rss-child", fw, name, str(batch), weights, onnx_file],
                           capture_output=True, text=True)
        if "cannot open shared object file" not in r.stderr:
            break
        time.sleep(15)
    try:
        return int(r.stdout.strip().splitlines()[-1]) / 1024.0
    except (ValueError, IndexError):
        return float("nan")


def _bench(fns, repeat, min_time, rounds=2, clock=time.perf_counter):
    """fns: {label: fn}. Rounds of blocks (fv x R, torch x R, ...), each block after one untimed call, so
    neither runtime's idle-spinning threads (OpenMP's, ours) are measured against the other while load
    spikes still hit every contender. Returns {label: (best_s, median_s)}."""
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            f()
            t0 = time.perf_counter()
            n = 0
            while n < repeat or (time.perf_counter() - t0 < min_time / rounds and n < 4 * repeat):
                s = clock()
                f()
                times[k].append(clock() - s)
                n += 1
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


def _onnx_export(ref, x, tmpdir):
    """The torch model exported to ONNX once per model (batch dimension dynamic): the file ORT and OpenVINO read."""
    import torch
    path = os.path.join(tmpdir, "model.onnx")
    if not os.path.exists(path):
        try:  # the TorchScript exporter where it still exists, else torch's default (dynamo) exporter
            torch.onnx.export(ref, torch.from_numpy(x), path, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, opset_version=17, dynamo=False)
        except Exception as e:  # noqa: BLE001
            try:
                torch.onnx.export(ref, (torch.from_numpy(x),), path, input_names=["x"], output_names=["y"],
                                  dynamic_shapes=({0: torch.export.Dim("n")},))
            except Exception as e2:  # noqa: BLE001
                print(f"# ONNX export failed: {type(e).__name__}: {e} / {type(e2).__name__}: {e2}"[:400])
                return None
    return path


def _ort_session(path, threads):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _ov_request(path, x, threads):
    """An OpenVINO infer request for the ONNX file at ``path`` with ``x``'s shape fixed (static shapes are
    OpenVINO's fast path), ``threads`` inference threads, the latency hint and float32 precision (every engine
    computes in float32). None if openvino does not import or the model does not load."""
    try:
        import openvino as ov
    except ImportError:
        return None
    core = ov.Core()
    try:
        model = core.read_model(path)
        model.reshape({model.inputs[0].get_any_name(): list(x.shape)})
        compiled = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                                                     "INFERENCE_PRECISION_HINT": "f32"})
    except Exception as e:  # noqa: BLE001
        print(f"# OpenVINO failed: {type(e).__name__}: {e}"[:400])
        return None
    return compiled.create_infer_request()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--_rss-child":
        return _rss_child(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", default="1,2", help="thread counts, each used for every contender")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per contender (at least)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per contender and case (at least)")
    ap.add_argument("--onnx", action="store_true", help="also ONNX Runtime (if onnxruntime imports)")
    ap.add_argument("--openvino", action="store_true",
                    help="also OpenVINO (if openvino imports) on the ONNX export ORT reads")
    ap.add_argument("--no-eager", action="store_true",
                    help="skip flowvision eager (needs the captured path; the ratios are then against captured)")
    ap.add_argument("--no-rss", action="store_true")
    ap.add_argument("--no-captured", action="store_true", help="skip flowvision.compile (the captured path)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with process CPU time (use with --threads 1: independent of other users' load)")
    ap.add_argument("--check", action="store_true", help="also print max |fv - torch| / max |torch|")
    ap.add_argument("--executor", default="native", choices=("native", "python"),
                    help="the captured path's plan executor (flowvision.compile(..., executor=))")
    ap.add_argument("--compare-executors", action="store_true",
                    help="also the captured path with the other plan executor (column 'captured other ms')")
    ap.add_argument("--compare-unpacked", action="store_true",
                    help="also flowvision with the packed-weight Linear/1x1-conv paths off (before/after in one run)")
    ap.add_argument("--no-winograd", action="store_true",
                    help="flowvision without Winograd 3x3 convs (backends.cpu.allow_winograd = False): the direct "
                         "kernels, for a before/after")
    ap.add_argument("--separate-pw-dw", action="store_true",
                    help="captured plans run a 1x1 expansion and the depthwise conv reading it as two steps (the "
                         "unfused baseline)")
    ap.add_argument("--isa", choices=("avx512", "avx2", "portable"),
                    help="kernel ISA for flowvision (FLOWVISION_ISA) and torch (ATEN_CPU_CAPABILITY, portable = "
                         "torch's 'default'); ONNX Runtime and OpenVINO run as they choose")
    args = ap.parse_args()
    if args.isa:  # both read at import (children inherit it)
        os.environ["FLOWVISION_ISA"] = args.isa
        os.environ["ATEN_CPU_CAPABILITY"] = "default" if args.isa == "portable" else args.isa
    if args.no_winograd:  # the RSS children inherit it
        os.environ[_NO_WINOGRAD] = "1"
    if args.separate_pw_dw:
        os.environ[_SEPARATE_PW_DW] = "1"

    import torch
    import flowvision.models as M
    from flowvision import backend as flow
    _C = flow._C
    _winograd_switch(flow)
    if args.isa and _C.cpu_isa() != args.isa:
        sys.exit(f"--isa {args.isa}: this CPU supports only {_C.supported_isas()} ({_C.cpu_isa_reason()})")
    threads = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    names = [n for n in args.models.split(",") if n]
    cap = not args.no_captured
    eager = not args.no_eager
    if not (cap or eager):
        sys.exit("--no-eager and --no-captured leave no flowvision contender")
    base = "fv" if eager else "fvc"  # the flowvision time the peers' ratios are taken against
    other_ex = "python" if args.executor == "native" else "native"
    cmp_ex = cap and args.compare_executors
    # the peak: one core's FMA loop (best of short bursts) x threads; on a shared machine the t-thread
    # measurement rarely gets t idle cores at once (it is printed too)
    _C.set_num_threads(1)
    peak1 = _C.fma_peak_gflops(1.0, 1)
    measured, peaks = {}, {}
    for t in threads:
        _C.set_num_threads(t)
        measured[t] = _C.fma_peak_gflops(1.0, t)
        peaks[t] = max(measured[t], t * peak1)
    load = os.getloadavg()
    print(f"# flowvision {_C.cpu_isa()} | torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}) | load avg {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} | FMA peak " + ", ".join(f"{t} thr {p:.0f} GFLOP/s (measured {measured[t]:.0f})"
                                                    for t, p in peaks.items()))
    def peer_cols(label):
        return f"{label} ms | " + (f"{label}/fv | " if eager else "") + (f"{label}/captured | " if cap else "")
    hdr = ("| model | batch | thr | " + ("fv unpacked ms | " if args.compare_unpacked else "") +
           ("flowvision ms | " if eager else "") + (f"fv captured ({args.executor}) ms | " if cap else "")
           + (f"captured ({other_ex}) ms | {other_ex}/{args.executor} | " if cmp_ex else "") + peer_cols("torch")
           + (peer_cols("ORT") if args.onnx else "") + (peer_cols("OV") if args.openvino else "")
           + "GFLOP | " + ("fv GFLOP/s (% peak) | " if eager else "") + ("captured GFLOP/s (% peak) | " if cap else "")
           + "torch GFLOP/s (% peak) |")
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    rss_rows = []
    tmp = tempfile.mkdtemp(prefix="fvbench")  # weights + ONNX exports for the RSS/ORT runs: ~1.5 GB
    atexit.register(shutil.rmtree, tmp, True)
    from tqdm.auto import tqdm
    # progress on stderr, on a terminal only: stdout carries the result table
    for name in tqdm(names, desc="models", unit="model", disable=None, leave=False):
        if not M.is_model(name):
            print(f"| {name} | (not in flowvision.models) |")
            continue
        ref, ours = build_pair(name)
        wfile = os.path.join(tmp, name + ".npz")
        np.savez(wfile, **_state_dict_np(ref))
        mdir = os.path.join(tmp, name)
        os.makedirs(mdir, exist_ok=True)
        compiled = compiled_other = None
        for b in batches:
            x = np.random.default_rng(0).standard_normal((b, 3, 224, 224), dtype=np.float32)
            flops = count_flops(ref, x)
            fx, tx = flow.from_numpy(x), torch.from_numpy(x)
            if args.check:
                with flow.no_grad(), torch.no_grad():
                    r = ref(tx).numpy()
                    o = ours(fx).numpy()
                print(f"# {name} b{b}: max|fv-torch|/max|torch| = {np.abs(o - r).max() / np.abs(r).max():.2e}")
            if cap:  # compiled (captured, validated against eager) once per model; a new batch size re-plans
                compiled = flow.compile(ours, fx, executor=args.executor) if compiled is None else compiled
                compiled(fx)
                if cmp_ex:
                    compiled_other = (flow.compile(ours, fx, executor=other_ex) if compiled_other is None
                                      else compiled_other)
                    compiled_other(fx)
                if compiled.fallback_reason:
                    print(f"# {name} b{b}: captured path fell back to eager: {compiled.fallback_reason}")
                if args.check:
                    c = compiled(fx).numpy()
                    print(f"# {name} b{b}: max|captured-torch|/max|torch| = {np.abs(c - r).max() / np.abs(r).max():.2e}")
            for t in threads:
                _C.set_num_threads(t)
                torch.set_num_threads(t)

                def run_fv():
                    with flow.no_grad():
                        ours(fx)

                def run_torch():
                    with torch.no_grad():
                        ref(tx)
                fns = {"fv": run_fv, "torch": run_torch} if eager else {"torch": run_torch}
                if cap:
                    fns["fvc"] = lambda: compiled(fx)
                if cmp_ex:
                    fns["fvc2"] = lambda: compiled_other(fx)
                if args.compare_unpacked:
                    from flowvision.backend._ops.kernel_select import reference_kernels

                    def run_fv_unpacked():
                        with reference_kernels():
                            run_fv()
                    fns["fv0"] = run_fv_unpacked
                onnx_path = _onnx_export(ref, x, mdir) if args.onnx or args.openvino else None
                if args.onnx and onnx_path:
                    sess = _ort_session(onnx_path, t)
                    if sess is not None:
                        fns["ort"] = lambda: sess.run(None, {"x": x})
                if args.openvino and onnx_path:
                    req = _ov_request(onnx_path, x, t)
                    if req is not None:
                        fns["ov"] = lambda: req.infer({0: x})
                res = _bench(fns, args.repeat, args.min_time,
                             clock=time.process_time if args.cpu_time else time.perf_counter)
                fv, tt = res.get("fv"), res["torch"]
                fc = res.get("fvc")

                def peer(key):
                    if key not in res:
                        return "n/a | " * (1 + eager + cap)
                    o = res[key]
                    return (f"{o[0] * 1e3:.1f} ({o[1] * 1e3:.1f}) | " + (f"{o[0] / fv[0]:.2f} | " if eager else "")
                            + (f"{o[0] / fc[0]:.2f} | " if cap else ""))
                row = f"| {name} | {b} | {t} | "
                if args.compare_unpacked:
                    row += f"{res['fv0'][0] * 1e3:.1f} ({res['fv0'][1] * 1e3:.1f}) | "
                if eager:
                    row += f"{fv[0] * 1e3:.1f} ({fv[1] * 1e3:.1f}) | "
                if cap:
                    row += f"{fc[0] * 1e3:.1f} ({fc[1] * 1e3:.1f}) | "
                if cmp_ex:
                    f2 = res["fvc2"]
                    row += f"{f2[0] * 1e3:.1f} ({f2[1] * 1e3:.1f}) | {f2[0] / fc[0]:.2f} | "
                row += peer("torch") + (peer("ort") if args.onnx else "") + (peer("ov") if args.openvino else "")
                g_t = flops / tt[0] * 1e-9
                row += f"{flops * 1e-9:.1f} | "
                if eager:
                    g_fv = flops / fv[0] * 1e-9
                    row += f"{g_fv:.0f} ({100 * g_fv / peaks[t]:.0f}%) | "
                if cap:
                    g_c = flops / fc[0] * 1e-9
                    row += f"{g_c:.0f} ({100 * g_c / peaks[t]:.0f}%) | "
                row += f"{g_t:.0f} ({100 * g_t / peaks[t]:.0f}%) |"
                print(row, flush=True)
            if not args.no_rss:
                onnx_file = os.path.join(mdir, "model.onnx")  # exported by _ort_session above
                fws = (["fv"] if eager else []) + (["fvc"] if cap else []) + ["torch"]
                if args.onnx and os.path.exists(onnx_file):
                    fws.append("ort")
                if args.openvino and os.path.exists(onnx_file):
                    fws.append("ov")
                rss_rows.append((name, b, {fw: peak_rss_mb(fw, name, b, wfile, onnx_file) for fw in fws}))
        del ref, ours, compiled, compiled_other
    if rss_rows:
        labels = {"fv": "flowvision", "fvc": "fv captured", "torch": "torch", "ort": "ORT", "ov": "OpenVINO"}
        fws = [fw for fw in labels if any(fw in r[2] for r in rss_rows)]
        print("\n| model | batch | " + " | ".join(f"{labels[fw]} peak RSS MiB" for fw in fws) + " |")
        print("|---|---|" + "---|" * len(fws))
        for name, b, vals in rss_rows:
            print(f"| {name} | {b} | " + " | ".join(f"{vals.get(fw, float('nan')):.0f}" for fw in fws) + " |")
    load = os.getloadavg()
    print(f"# load avg at end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
