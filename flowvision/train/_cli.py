"""The ``train`` and ``validate`` sub-commands of the ``flowvision`` command line."""
import argparse


def _train(args: argparse.Namespace) -> int:
    from .recipe import run_cli
    return run_cli(args)


def _validate(args: argparse.Namespace) -> int:
    from .validate import run_cli
    return run_cli(args)


def add_subcommands(sub) -> None:
    """Register ``train`` and ``validate`` on an ``argparse`` sub-parser collection."""
    from .recipe import add_train_arguments
    from .validate import add_validate_arguments
    t = sub.add_parser("train", help="train a model from the zoo with timm's recipe (see docs/training.md)")
    add_train_arguments(t)
    t.set_defaults(func=_train)
    v = sub.add_parser("validate", help="top-1/top-5 of a training checkpoint over a dataset split")
    add_validate_arguments(v)
    v.set_defaults(func=_validate)
