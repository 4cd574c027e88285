"""The ``flowvision`` command line."""
import argparse
import sys


def _info(args):
    import flowvision
    from flowvision import backend as fb
    from flowvision.backend import cuda
    print(f"flowvision {flowvision.__version__}")
    print(f"kernel ISA: {fb.cpu_isa()}  threads: {fb.get_num_threads()}")
    print(f"CUDA: built={cuda.is_built()} available={cuda.is_available()}")
    x = fb.randn(2, 3, requires_grad=True)
    (x * x).sum().backward()
    ok = bool(((x.grad - 2 * x.detach()).abs().max() < 1e-6).item())
    print(f"autograd self-check: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def _predict(args):
    try:
        from flowvision import models  # noqa: F401
    except ImportError:
        print("flowvision predict needs the model zoo (flowvision.models), which is not part of this build yet.",
              file=sys.stderr)
        return 2
    return models.predict_main(args)  # provided by the model zoo


def main(argv=None):
    parser = argparse.ArgumentParser(prog="flowvision", description="flowvision command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="show the build (kernel ISA, threads, CUDA) and run a self-check").set_defaults(func=_info)
    p = sub.add_parser("predict", help="classify an image with a model from the zoo")
    p.add_argument("image", nargs="?")
    p.add_argument("--model", default=None)
    p.set_defaults(func=_predict)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
