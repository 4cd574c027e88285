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
        print("flowvision predict: give image files, directories or globs, or --ray DIR_OR_GLOB --out FILE",
              file=sys.stderr)
        return 2
    from flowvision.models._predict import predict_main
    return predict_main(args)


def _models(args):
    from flowvision.models._predict import models_main
    return models_main(args)


def main(argv=None):
    import flowvision
    parser = argparse.ArgumentParser(prog="flowvision", description="flowvision command line")
    parser.add_argument("--version", action="version", version=f"flowvision {flowvision.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="show the build (kernel ISA, threads, CUDA) and run a self-check").set_defaults(func=_info)
    p = sub.add_parser("predict", help="classify images (top-k ImageNet labels), or detect/segment them and draw "
                       "the result, with a pretrained model from the zoo")
    p.add_argument("image", nargs="*", help="image files, directories (searched recursively) or globs ('imgs/*.jpg')")
    p.add_argument("--model", default="tf_efficientnet_lite0",
                   help="model name, optionally with a weights tag (default: tf_efficientnet_lite0, offline weights); "
                   "a detection or segmentation builder such as ssdlite320_mobilenet_v3_large or lraspp_mobilenet_v3_large")
    p.add_argument("--topk", type=int, default=5, help="how many labels to print (default 5)")
    p.add_argument("--batch-size", type=int, default=16, help="images per forward pass (default 16; with --ray, "
                   "images per Ray batch)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON list")
    p.add_argument("--save-dir", help="detection/segmentation: write each image with its boxes/masks drawn here (PNG)")
    p.add_argument("--score-thresh", type=float, default=0.5, help="detection: lowest score shown (default 0.5)")
    p.add_argument("--checkpoint", help="load these weights (a local .safetensors/.pth/.npz file) instead of the "
                   "pretrained ones")
    p.add_argument("--no-pretrained", dest="pretrained", action="store_false",
                   help="randomly initialised weights (to try the pipeline without downloading)")
    g = p.add_argument_group("dataset-scale inference on Ray Data (pip install \"flowvision[ray]\")")
    g.add_argument("--ray", metavar="DIR_OR_GLOB", help="classify every image under a directory or matching a glob")
    g.add_argument("--out", help="results file: .parquet or .jsonl (path, top_indices, top_labels, top_probs)")
    g.add_argument("--ray-address", help="address of a running Ray cluster (default: start a local one)")
    g.add_argument("--actors", type=int, default=2, help="model actors (default 2)")
    g.add_argument("--cpus-per-actor", type=float, default=1, help="CPUs per actor; its kernel threads (default 1)")
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
