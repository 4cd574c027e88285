"""``flowvision validate``: top-1/top-5 of a checkpoint (a ``flowvision train`` checkpoint or a plain state
dict) over a dataset split."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from .data import create_dataset, dataset_classes

__all__ = ["add_validate_arguments", "main", "run_cli"]


def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    from .recipe import add_data_arguments
    p.add_argument("--checkpoint", required=True, help="a flowvision train checkpoint (last.pth / best.pth)")
    p.add_argument("--split", default="validation", help="split / sub-folder to evaluate (default validation)")
    p.add_argument("--use-ema", action="store_true", help="evaluate the EMA weights stored in the checkpoint")
    p.add_argument("-b", "--batch-size", type=int, default=64, help="batch size (default 64)")
    add_data_arguments(p)
    p.set_defaults(model=None)


def _run(args: argparse.Namespace) -> dict:
    import flowvision.backend as fb
    import flowvision.backend.nn as nn
    from flowvision.data import create_loader
    from flowvision.models import create_model
    from .checkpoint import CheckpointError, load_checkpoint
    from .engine import validate
    from .recipe import _data_config

    if args.threads:
        fb.set_num_threads(args.threads)
    ckpt = load_checkpoint(args.checkpoint)
    saved = ckpt.get("args") or {}
    for key in ("model", "dataset", "img_size", "crop_pct", "mean", "std", "split_seed", "data_dir"):
        if getattr(args, key, None) in (None, "", "folder") and saved.get(key) not in (None, ""):
            setattr(args, key, saved[key])
    if not args.model:
        raise ValueError("the checkpoint does not name its model; pass --model")
    if args.dataset == "digits" and not args.img_size:
        args.img_size = 32
    ds = create_dataset(args.dataset, args.data_dir, args.split, False, args.img_size or 32, args.split_seed)
    num_classes = args.num_classes or saved.get("num_classes") or len(dataset_classes(ds))
    model = create_model(args.model, num_classes=num_classes)
    key = "state_dict_ema" if args.use_ema else "state_dict"
    if key not in ckpt:
        raise CheckpointError(f"{args.checkpoint!r} has no {key!r} (trained without --model-ema?)")
    try:
        model.load_state_dict(ckpt[key])
    except (KeyError, RuntimeError, ValueError) as e:
        raise CheckpointError(f"{args.checkpoint!r} does not fit {args.model} with {num_classes} classes: {e}") from e
    cfg = _data_config(args, model)
    loader = create_loader(ds, cfg["input_size"], args.batch_size, is_training=False,
                           interpolation=cfg["interpolation"], mean=cfg["mean"], std=cfg["std"],
                           crop_pct=cfg["crop_pct"], crop_mode=cfg.get("crop_mode"), num_workers=args.workers)
    return validate(model, loader, nn.CrossEntropyLoss(), progress=not args.no_progress, num_classes=num_classes)


def run_cli(args: argparse.Namespace) -> int:
    """Evaluate and print ``top1``/``top5``/``loss``; exit 2 with a message on bad input."""
    from .checkpoint import CheckpointError
    try:
        r = _run(args)
    except (CheckpointError, ValueError, FileNotFoundError, ImportError) as e:
        print(f"flowvision validate: {e}", file=sys.stderr)
        return 2
    print(f"{args.model} on {args.dataset}/{args.split}: top1 {r['top1']:.3f}  top5 {r['top5']:.3f}  "
          f"loss {r['loss']:.4f}  ({r['images']} images, {r['img_per_s']:.1f} img/s)")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="flowvision validate", description=__doc__.splitlines()[0])
    add_validate_arguments(p)
    return run_cli(p.parse_args(argv))
