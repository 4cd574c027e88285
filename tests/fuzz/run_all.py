"""Fuzz every target for a fixed time, a few at a time, and fail on any finding (the CI fuzzing step).

    python tests/fuzz/run_all.py --seconds 60 --jobs 2

Each target starts from its committed seeds (read-only; new inputs go to a scratch directory) with a fixed seed, so
a run is repeatable up to timing. A crash, leak, timeout or out-of-memory input is kept under ``--artifacts`` and the
run exits 1 after printing the target's last output lines; a clean run prints one line per target (executions, rate,
coverage, corpus size). Long local runs use ``tests/fuzz/long_run.sh`` instead.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

_STAT = re.compile(r"#(\d+)\s+DONE\s+cov: (\d+) ft: \d+ corp: (\d+)/")


def fuzz_one(name: str, seconds: int, artifacts: str) -> Tuple[str, int, str]:
    """Fuzz ``name`` for ``seconds``; returns (name, exit status, summary line or the output's tail)."""
    out = os.path.join(artifacts, name)
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=f"fv-corpus-{name}-")
    # libFuzzer's RSS limit reads the peak RSS, which Linux carries across fork+exec from this process (a pytest run
    # may already hold gigabytes): the limit is 2 GB on top of this process's peak
    rss_limit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024 + 2048
    cmd = [sys.executable, os.path.join(HERE, "run.py"), name, f"-max_total_time={seconds}", "-seed=1",
           f"-rss_limit_mb={rss_limit}", "-print_final_stats=1", f"-artifact_prefix={out}/", scratch,
           os.path.join(HERE, "corpus", name)]
    t0 = time.monotonic()
    # the whole run is bounded: libFuzzer stops itself after -max_total_time, plus the instrumentation start-up
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 3 + 120, cwd=out)
    text = r.stdout + r.stderr
    m = _STAT.search(text)
    if r.returncode != 0 or m is None:
        # the Python traceback comes before libFuzzer's trailer and stats: keep it in the summary
        cut = text.find("=== Uncaught Python exception")
        return name, r.returncode or 1, text[cut:cut + 4000] if cut >= 0 else text[-4000:]
    execs, cov, corpus = (int(g) for g in m.groups())
    took = time.monotonic() - t0
    return name, 0, f"{name:15s} {execs:9d} runs  {execs / seconds:8.0f}/s  cov {cov:5d}  corpus {corpus:5d}  ({took:.0f} s)"


def main(argv: Optional[List[str]] = None) -> int:
    import targets  # noqa: E402  (after sys.path)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60, help="fuzzing time per target")
    ap.add_argument("--jobs", type=int, default=2, help="targets fuzzed at once (each is one process)")
    ap.add_argument("--artifacts", default=os.path.join(tempfile.gettempdir(), "flowvision-fuzz"),
                    help="where crash/leak/timeout inputs are written")
    ap.add_argument("targets", nargs="*", help="the targets (default: all)")
    args = ap.parse_args(argv)
    names = args.targets or sorted(targets.TARGETS)
    unknown = sorted(set(names) - set(targets.TARGETS))
    if unknown:
        ap.error(f"unknown targets {unknown}; one of {sorted(targets.TARGETS)}")
    failed = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, status, summary in pool.map(lambda n: fuzz_one(n, args.seconds, args.artifacts), names):
            if status == 0:
                print(summary, flush=True)
            else:
                failed.append(name)
                print(f"{name}: FAILED (exit {status}); inputs under {os.path.join(args.artifacts, name)}\n{summary}",
                      flush=True)
    print(f"fuzz: {len(names) - len(failed)}/{len(names)} targets clean after {args.seconds} s each")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
