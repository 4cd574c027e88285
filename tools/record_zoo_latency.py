"""Record batch-1 latency of ``flowvision.compile`` for some zoo models into
``benchmarks/results/zoo_latency.json`` (the documentation's zoo table shows it in its "captured ms" column).

    python tools/record_zoo_latency.py resnet18 resnet50 --repeat 20 --note "idle 2-core VM"

Each model is built with random weights (latency does not depend on them), put in eval mode, compiled on a
(1, 3, H, W) input at its default size, warmed up, then timed ``--repeat`` times; the median is recorded with the
thread count, CPU kernel ISA and the note. Existing entries for other models are kept.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "results", "zoo_latency.json")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    import flowvision
    from flowvision import backend as flow
    from tqdm import tqdm

    data = {"models": {}}
    if os.path.isfile(args.out):
        with open(args.out) as f:
            data = json.load(f)
    for name in tqdm(args.models, desc="models", unit="model"):
        model = flowvision.models.create_model(name).eval()
        size = tuple(flowvision.models.get_pretrained_cfg(name).input_size)
        x = flow.randn(1, *size)
        fast = flowvision.compile(model, x)
        with flow.no_grad():
            for _ in range(args.warmup):
                fast(x)
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                fast(x)
                times.append((time.perf_counter() - t) * 1e3)
        data["models"][name] = {"captured_ms": round(statistics.median(times), 2), "input_size": list(size),
                                "repeat": args.repeat, "fallback": bool(getattr(fast, "fallback_reason", None))}
        tqdm.write(f"{name}: {data['models'][name]['captured_ms']} ms")
    data["source"] = (f"tools/record_zoo_latency.py on {platform.machine()} with {flow.get_num_threads()} threads, "
                      f"kernel ISA {flow.cpu_isa()}, {datetime.date.today().isoformat()}"
                      + (f" ({args.note})" if args.note else ""))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
