"""Record batch-1 latency of ``flowvision.compile`` for zoo models into ``benchmarks/results/zoo_latency.json``
(the documentation's zoo table shows it in its "captured ms" column).

    python tools/record_zoo_latency.py --all --threads 1 --note "idle 2-core VM"
    python tools/record_zoo_latency.py resnet18 resnet50 --repeat 20

Each model is built with random weights (latency does not depend on them), put in eval mode, compiled on a
(1, 3, H, W) input at its default size, warmed up, then timed ``--repeat`` times (fewer for slow models: at least
``--min-repeat`` and about ``--budget`` seconds). Two medians are recorded: the calling thread's CPU time
(``captured_ms``, what the table shows: with one thread it is the latency an idle machine gives, and it stays
close to that on a loaded machine, where wall time does not) and the wall time (``wall_ms``). The file is rewritten
atomically after every model, so an interrupted run resumes where it stopped (models already recorded are skipped
unless ``--force``); a model that fails to build or compile is recorded with its error.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from typing import Dict, List, Optional

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "results", "zoo_latency.json")


def _save(data: Dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def measure(name: str, repeat: int, min_repeat: int, warmup: int, budget_s: float) -> Dict:
    """Compile ``name`` at batch 1 and time it; returns the record stored for it."""
    import flowvision
    from flowvision import backend as flow

    model = flowvision.models.create_model(name).eval()
    cfg = flowvision.models.get_pretrained_cfg(name)  # None for a model registered without weights
    size = tuple(cfg.input_size if cfg is not None else getattr(model, "pretrained_cfg", {}).get("input_size", (3, 224, 224)))
    x = flow.randn(1, *size)
    fast = flowvision.compile(model, x)
    cpu, wall = [], []
    with flow.no_grad():
        for _ in range(warmup):
            fast(x)
        start = time.perf_counter()
        for i in range(repeat):
            c, w = time.thread_time(), time.perf_counter()
            fast(x)
            cpu.append((time.thread_time() - c) * 1e3)
            wall.append((time.perf_counter() - w) * 1e3)
            if i + 1 >= min_repeat and time.perf_counter() - start > budget_s:
                break
    return {"captured_ms": round(statistics.median(cpu), 2), "wall_ms": round(statistics.median(wall), 2),
            "input_size": list(size), "repeat": len(cpu), "fallback": bool(getattr(fast, "fallback_reason", None))}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--all", action="store_true", help="every registered model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--min-repeat", type=int, default=5)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of timed calls per model, about")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--force", action="store_true", help="measure models already in the file again")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    import gc

    import flowvision
    from flowvision import backend as flow
    from tqdm import tqdm

    names = flowvision.models.list_models() if args.all else args.models
    if not names:
        ap.error("name models or pass --all")
    flow.set_num_threads(args.threads)
    data: Dict = {"models": {}}
    if os.path.isfile(args.out):
        with open(args.out) as f:
            data = json.load(f)
    data["source"] = (f"tools/record_zoo_latency.py on {platform.machine()} with {flow.get_num_threads()} "
                      f"thread(s), kernel ISA {flow.cpu_isa()}, {datetime.date.today().isoformat()}"
                      + (f" ({args.note})" if args.note else ""))
    todo = [n for n in names if args.force or n not in data["models"]]
    for name in tqdm(todo, desc="models", unit="model"):
        try:
            record = measure(name, args.repeat, args.min_repeat, args.warmup, args.budget)
        except Exception as e:  # noqa: BLE001 - one model's failure is recorded, the run goes on
            record = {"error": f"{type(e).__name__}: {e}"[:300]}
        data["models"][name] = record
        _save(data, args.out)
        tqdm.write(f"{name}: {record.get('captured_ms', record.get('error'))}")
        gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
