"""Load test of ``flowvision serve`` on 127.0.0.1: throughput and latency with dynamic batching on and off.

Starts the server itself for each configuration (one at a time, so they never share the CPU), runs N concurrent
asyncio clients (httpx) for a fixed time, each posting the example photo as multipart and waiting for the
answer before sending the next, and prints one table. Configurations alternate over ``--rounds`` so machine noise
hits both alike; the server's CPU time per answered request (from /proc) is the number least affected by
other load on a shared machine. An ``overload`` configuration (queue bound below the client count) checks that excess load is
answered 503 + Retry-After at once, never by timeouts.

    python benchmarks/bench_serve.py --clients 32 --duration 30 --rounds 2
"""
import argparse
import asyncio
import os
import statistics
import sys
import time

import httpx
import numpy as np

from flowvision.serve._process import ServerProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAT = os.path.join(ROOT, "examples", "chelsea.jpg")

CONFIGS = {
    "batching": ["--max-batch", "8", "--max-delay-ms", "5", "--max-queue", "64"],
    "no batching": ["--max-batch", "1", "--max-delay-ms", "0", "--max-queue", "64"],
    "overload (queue 8)": ["--max-batch", "8", "--max-delay-ms", "5", "--max-queue", "8"],
}


async def _client(client, url, payload, stop_at, out):
    while time.perf_counter() < stop_at:
        t0 = time.perf_counter()
        try:
            r = await client.post(url, files=[("file", ("cat.jpg", payload, "image/jpeg"))])
            code = r.status_code
            if code == 503 and r.headers.get("retry-after") != "1":
                code = "503 without Retry-After"
        except httpx.TimeoutException:
            code = "client timeout"
        except httpx.TransportError as e:
            code = type(e).__name__
        out.append((code, time.perf_counter() - t0))
        if code == 503:
            await asyncio.sleep(0.05)  # a polite client backs off a little before retrying


async def _load(url, clients, duration, payload):
    out = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await client.post(url, files=[("file", ("cat.jpg", payload, "image/jpeg"))])  # warm the connection path
        stop_at = time.perf_counter() + duration
        t0 = time.perf_counter()
        await asyncio.gather(*[_client(client, url, payload, stop_at, out) for _ in range(clients)])
        wall = time.perf_counter() - t0
    return out, wall


def _cpu_seconds(pid):
    """User + system CPU time of a process (all its threads) from /proc: robust to other load on the machine."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _batch_mean(srv):
    from prometheus_client.parser import text_string_to_metric_families
    text = httpx.get(srv.url + "/metrics").text
    vals = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name.startswith("flowvision_batch_size_")}
    return vals["flowvision_batch_size_sum"] / max(vals["flowvision_batch_size_count"], 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--duration", type=float, default=30.0, help="seconds of load per configuration and round")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of: " + ", ".join(CONFIGS))
    args = ap.parse_args(argv)
    with open(CAT, "rb") as f:
        payload = f.read()
    names = [n.strip() for n in args.configs.split(",")]
    results = {n: [] for n in names}
    for _ in range(args.rounds):
        for name in names:
            cmd = ["--model", args.model, "--threads", str(args.threads), "--log-level", "warning"] + CONFIGS[name]
            with ServerProcess(cmd) as srv:
                cpu0 = _cpu_seconds(srv.proc.pid)
                out, wall = asyncio.run(_load(srv.url + "/v1/predict", args.clients, args.duration, payload))
                cpu = _cpu_seconds(srv.proc.pid) - cpu0
                results[name].append((out, wall, _batch_mean(srv), cpu))
                n_ok = sum(1 for c, _ in out if c == 200)
                print(f"  {name}: {n_ok / wall:.2f} ok req/s, server CPU {1000 * cpu / max(n_ok, 1):.0f} ms per "
                      "answered request", flush=True)
    print(f"model {args.model}, {args.clients} clients, {args.duration:g} s x {args.rounds} round(s), "
          f"server threads {args.threads}, CPUs {os.cpu_count()}")
    print(f"{'config':20s} {'ok req/s':>9s} {'p50 ms':>8s} {'p95 ms':>8s} {'p99 ms':>8s} {'mean batch':>10s} "
          f"{'CPU ms/ok':>9s} {'200':>6s} {'503':>6s} {'other':>6s}")
    for name in names:
        runs = results[name]
        out = [o for r in runs for o in r[0]]
        wall = sum(r[1] for r in runs)
        ok = np.array([t for c, t in out if c == 200]) * 1000
        n503 = sum(1 for c, _ in out if c == 503)
        other = {c: sum(1 for x, _ in out if x == c) for c, _ in out if c not in (200, 503)}
        pct = np.percentile(ok, [50, 95, 99]) if len(ok) else [float("nan")] * 3
        print(f"{name:20s} {len(ok) / wall:9.2f} {pct[0]:8.1f} {pct[1]:8.1f} {pct[2]:8.1f} "
              f"{statistics.mean(r[2] for r in runs):10.2f} {1000 * sum(r[3] for r in runs) / max(len(ok), 1):9.0f} {len(ok):6d} {n503:6d} {sum(other.values()):6d}"
              + (f"  {other}" if other else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
