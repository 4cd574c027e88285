"""``flowvision serve``: argument parsing and the uvicorn launch (graceful shutdown on SIGTERM/SIGINT)."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile

DEFAULT_MODEL = "tf_efficientnet_lite0"


def add_subcommand(sub) -> None:
    """Register ``serve`` on the ``flowvision`` command's subparsers."""
    p = sub.add_parser("serve", help="run an HTTP inference server (needs the 'serve' extra: "
                       "pip install 'flowvision[serve]')",
                       description="Serve one or more models over HTTP with dynamic batching: POST /v1/predict, "
                       "GET /v1/models, /healthz, /metrics (Prometheus) and a web page at /.")
    p.add_argument("--model", action="append", default=None, metavar="NAME[.tag]",
                   help=f"model to serve; repeat to serve several (default: {DEFAULT_MODEL}, offline weights)")
    p.add_argument("--checkpoint", action="append", default=None, metavar="PATH",
                   help="local weights (safetensors/torch/npz) for the model given at the same position")
    p.add_argument("--pretrained", action=argparse.BooleanOptionalAction, default=True,
                   help="load the registry's pretrained weights when no checkpoint is given (default: yes)")
    p.add_argument("--input-size", type=int, default=None, metavar="PX",
                   help="square input side: overrides a classifier's pretrained size; segmentation default 520")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--workers", type=int, default=1, help="server processes, each with its own model copy")
    p.add_argument("--max-batch", type=int, default=8, help="most images in one model call (default 8)")
    p.add_argument("--max-delay-ms", type=float, default=5.0,
                   help="how long a batch waits for more requests (default 5 ms; 0 = no waiting)")
    p.add_argument("--max-queue", type=int, default=64,
                   help="images waiting per model before requests get 503 + Retry-After (default 64)")
    p.add_argument("--timeout", type=float, default=30.0, help="per-request timeout in seconds (504 after it)")
    p.add_argument("--max-body-mb", type=float, default=20.0, help="largest request body in MiB (413 above)")
    p.add_argument("--max-pixels", type=int, default=40_000_000,
                   help="largest image width*height accepted, the decompression-bomb limit (413 above)")
    p.add_argument("--max-images", type=int, default=32, help="most images in one request (413 above)")
    p.add_argument("--threads", type=int, default=None, help="kernel threads per worker (default: all CPUs)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=serve_main)


def _check_models(names, checkpoints):
    from flowvision.models._api import _load_subpackages, list_builders
    from flowvision.models._registry import is_model, model_entrypoint, split_model_name_tag
    _load_subpackages()
    for name in names:
        arch, _ = split_model_name_tag(name)
        if not (is_model(name) or arch in list_builders()):
            try:
                model_entrypoint(name)
            except RuntimeError as e:
                return str(e)
            return f"unknown model {name!r}"
    for path in checkpoints:
        if not os.path.isfile(path):
            return f"no such checkpoint file: {path}"
    if len(checkpoints) > len(names):
        return f"{len(checkpoints)} --checkpoint for {len(names)} --model"
    return None


def serve_main(args) -> int:
    """Run the server until SIGTERM/SIGINT; in-flight requests finish first. Returns the exit status."""
    try:
        import uvicorn
        from ._app import CONFIG_ENV, ServeConfig, create_app
        from ._predictor import ModelSpec
    except ImportError as e:
        print(f"flowvision serve: {e.name} is missing: pip install 'flowvision[serve]'", file=sys.stderr)
        return 2
    names = args.model or [DEFAULT_MODEL]
    checkpoints = args.checkpoint or []
    problem = _check_models(names, checkpoints)
    if problem is None:
        for flag in ("workers", "max_batch", "max_queue", "max_images", "max_pixels", "port"):
            if getattr(args, flag) < (0 if flag == "port" else 1):
                problem = f"--{flag.replace('_', '-')} must be positive, got {getattr(args, flag)}"
        if args.timeout <= 0 or args.max_delay_ms < 0 or args.max_body_mb <= 0:
            problem = "--timeout and --max-body-mb must be > 0 and --max-delay-ms >= 0"
    if problem:
        print(f"flowvision serve: {problem}", file=sys.stderr)
        return 2
    specs = [ModelSpec(n, checkpoints[i] if i < len(checkpoints) else None, args.pretrained, args.input_size)
             for i, n in enumerate(names)]
    config = ServeConfig(models=specs, max_batch=args.max_batch, max_delay_ms=args.max_delay_ms,
                         max_queue=args.max_queue, timeout_s=args.timeout, max_body_mb=args.max_body_mb,
                         max_pixels=args.max_pixels, max_images=args.max_images, threads=args.threads)
    common = dict(host=args.host, port=args.port, log_level=args.log_level, timeout_keep_alive=5,
                  timeout_graceful_shutdown=int(args.timeout) + 5)
    # uvicorn drains on SIGTERM, then re-raises it with the handler that was installed before it started: with
    # Python's default that kills the process (status -15) after a clean drain. A no-op handler makes a
    # requested, graceful stop exit 0, as process supervisors expect.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    if args.workers == 1:
        uvicorn.run(create_app(config), **common)
        return 0
    # several processes: each worker builds the app from the environment; metrics are summed through files
    os.environ[CONFIG_ENV] = config.to_json()
    with tempfile.TemporaryDirectory(prefix="fv-prom-") as prom_dir:
        os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", prom_dir)
        uvicorn.run("flowvision.serve._app:app_from_env", factory=True, workers=args.workers, **common)
    return 0
