"""The ``flowvision`` command line."""
import argparse
import sys


def _info(args):
    import flowvision
    from flowvision import backend as fb
    from flowvision.backend import cuda
    print(f"flowvision {flowvision.__version__}")
    print(f"kernel ISA: {fb.cpu_isa()} ({fb.cpu_isa_reason()}); this CPU supports: {', '.join(fb.supported_isas())}")
    print(f"threads: {fb.get_num_threads()}")
    print(f"CUDA: built={cuda.is_built()} available={cuda.is_available()}")
    x = fb.randn(2, 3, requires_grad=True)
    (x * x).sum().backward()
    ok = bool(((x.grad - 2 * x.detach()).abs().max() < 1e-6).item())
    print(f"autograd self-check: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def _predict(args):
    if args.ray:
        if args.image:
            print("flowvision predict: give image files or --ray SOURCE, not both", file=sys.stderr)
            return 2
        from flowvision.distributed.ray import predict_main as ray_predict_main
        return ray_predict_main(args)
    if not args.image:
        print("flowvision predict: give image file(s), or --ray DIR_OR_GLOB --out FILE", file=sys.stderr)
        return 2
    from flowvision.models._predict import predict_main
    return predict_main(args)


def _models(args):
    from flowvision.models._predict import models_main
    return models_main(args)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="flowvision", description="flowvision command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="show the build (kernel ISA, threads, CUDA) and run a self-check").set_defaults(func=_info)
    p = sub.add_parser("predict", help="classify images with a pretrained model from the zoo (top-k ImageNet labels)")
    p.add_argument("image", nargs="*", help="image file(s)")
    p.add_argument("--model", default="tf_efficientnet_lite0",
                   help="model name, optionally with a weights tag (default: tf_efficientnet_lite0, offline weights)")
    p.add_argument("--topk", type=int, default=5, help="how many labels to print (default 5)")
    g = p.add_argument_group("dataset-scale inference on Ray Data (pip install \"flowvision[ray]\")")
    g.add_argument("--ray", metavar="DIR_OR_GLOB", help="classify every image under a directory or matching a glob")
    g.add_argument("--out", help="results file: .parquet or .jsonl (path, top_indices, top_labels, top_probs)")
    g.add_argument("--ray-address", help="address of a running Ray cluster (default: start a local one)")
    g.add_argument("--actors", type=int, default=2, help="model actors (default 2)")
    g.add_argument("--cpus-per-actor", type=float, default=1, help="CPUs per actor; its kernel threads (default 1)")
    g.add_argument("--batch-size", type=int, default=16, help="images per batch (default 16)")
    p.set_defaults(func=_predict)
    m = sub.add_parser("models", help="list the registered models")
    m.add_argument("pattern", nargs="?", default="", help="fnmatch pattern, e.g. 'resnet*'")
    m.add_argument("--pretrained", action="store_true", help="list arch.tag names that have weights")
    m.set_defaults(func=_models)
    from flowvision.hub.cli import add_subcommands
    add_subcommands(sub)  # download, cache
    from flowvision.serve._cli import add_subcommand as add_serve
    add_serve(sub)  # serve
    from flowvision.train._cli import add_subcommands as add_train
    add_train(sub)  # train, validate
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
