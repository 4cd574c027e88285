"""``flowvision train``: timm's ``train.py`` recipe (its argument names and defaults) on the flowvision engine.

Every epoch re-seeds Python, numpy, the engine, the loader's shuffle and augmentation and Mixup from
``(seed, epoch)``, so training N epochs straight and training K epochs, stopping, and ``--resume``-ing the
last checkpoint for N-K more give the same weights bit for bit.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import sys
import time
from typing import Any, Dict, List, Optional

import numpy as np

from ._names import OPTIMIZERS, SCHEDULERS
from .data import DATASETS, create_dataset, dataset_classes

__all__ = ["add_train_arguments", "build_parser", "run", "main"]


def _floats(n: Optional[int] = None):
    return dict(type=float, nargs=n if n else "+")


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    """Dataset / model-input arguments shared by ``train`` and ``validate``."""
    g = p.add_argument_group("data")
    g.add_argument("--data-dir", default=None, help="folder with <split>/<class>/images, or a CIFAR root")
    g.add_argument("--dataset", default="folder", choices=DATASETS,
                   help="'folder' (ImageFolder), 'digits' (scikit-learn's bundled 8x8 digits), cifar10/cifar100")
    g.add_argument("--img-size", type=int, default=None, help="input size (default: the model's)")
    g.add_argument("--crop-pct", type=float, default=None, help="eval centre-crop fraction (default: the model's)")
    g.add_argument("--mean", **_floats(), default=None, help="normalisation mean (default: the model's)")
    g.add_argument("--std", **_floats(), default=None, help="normalisation std (default: the model's)")
    g.add_argument("--interpolation", default="", help="eval resize interpolation (default: the model's)")
    g.add_argument("-vb", "--validation-batch-size", type=int, default=None, help="eval batch size")
    g.add_argument("-j", "--workers", type=int, default=0, help="data-loading worker processes (default 0)")
    g.add_argument("--split-seed", type=int, default=0, help="train/validation split seed of 'digits'")
    m = p.add_argument_group("model")
    m.add_argument("--model", default="resnet18", help="model name from the registry (default resnet18)")
    m.add_argument("--pretrained", action="store_true", help="start from the model's pretrained weights")
    m.add_argument("--num-classes", type=int, default=None, help="classifier classes (default: the dataset's)")
    m.add_argument("--drop", type=float, default=None, help="dropout rate before the classifier")
    m.add_argument("--drop-path", type=float, default=None, help="stochastic depth rate")
    m.add_argument("--threads", type=int, default=None, help="kernel threads (default: all usable CPUs)")
    m.add_argument("--no-progress", action="store_true", help="no tqdm progress bars")


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """The ``train`` arguments (timm train.py names)."""
    add_data_arguments(p)
    p.add_argument("--train-split", default="train", help="training split / sub-folder (default train)")
    p.add_argument("--val-split", default="validation", help="validation split / sub-folder (default validation)")
    p.add_argument("-b", "--batch-size", type=int, default=128, help="training batch size (default 128)")
    p.add_argument("--grad-accum-steps", type=int, default=1, help="micro-batches per optimizer update")
    o = p.add_argument_group("optimizer")
    o.add_argument("--opt", default="sgd", choices=OPTIMIZERS, help="optimizer (default sgd = SGD-Nesterov)")
    o.add_argument("--opt-eps", type=float, default=None, help="optimizer epsilon")
    o.add_argument("--opt-betas", **_floats(), default=None, help="optimizer betas")
    o.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    o.add_argument("--weight-decay", type=float, default=2e-5, help="weight decay (default 2e-5)")
    o.add_argument("--clip-grad", type=float, default=None, help="gradient clipping value (default off)")
    o.add_argument("--clip-mode", default="norm", choices=("norm", "value", "agc"), help="clipping mode")
    s = p.add_argument_group("learning rate schedule")
    s.add_argument("--sched", default="cosine", choices=SCHEDULERS, help="schedule (default cosine)")
    s.add_argument("--sched-on-updates", action="store_true", help="step the schedule per update, not per epoch")
    s.add_argument("--lr", type=float, default=None, help="learning rate (default: lr-base scaled by batch)")
    s.add_argument("--lr-base", type=float, default=0.1, help="lr for a batch of --lr-base-size (default 0.1)")
    s.add_argument("--lr-base-size", type=int, default=256, help="reference batch of --lr-base (default 256)")
    s.add_argument("--lr-base-scale", default="", choices=("", "linear", "sqrt"),
                   help="lr scaling with batch size (default: sqrt for adam-type, linear otherwise)")
    s.add_argument("--warmup-lr", type=float, default=1e-5, help="lr at the start of warmup")
    s.add_argument("--min-lr", type=float, default=0.0, help="cosine/poly lr floor")
    s.add_argument("--epochs", type=int, default=300, help="epochs (default 300)")
    s.add_argument("--warmup-epochs", type=int, default=5, help="linear warmup epochs (default 5)")
    s.add_argument("--warmup-prefix", action="store_true", help="warmup precedes --epochs instead of inside them")
    s.add_argument("--cooldown-epochs", type=int, default=0, help="epochs at min-lr after the schedule")
    s.add_argument("--decay-epochs", type=float, default=90, help="step schedule interval")
    s.add_argument("--decay-milestones", type=int, nargs="+", default=[90, 180, 270], help="multistep epochs")
    s.add_argument("--decay-rate", "--dr", type=float, default=0.1, help="step/multistep factor")
    a = p.add_argument_group("augmentation and regularisation")
    a.add_argument("--no-aug", action="store_true", help="resize + centre crop only for training")
    a.add_argument("--scale", **_floats(2), default=[0.08, 1.0], help="random-resized-crop area range")
    a.add_argument("--ratio", **_floats(2), default=[3.0 / 4.0, 4.0 / 3.0], help="random-resized-crop aspect")
    a.add_argument("--hflip", type=float, default=0.5, help="horizontal flip probability")
    a.add_argument("--vflip", type=float, default=0.0, help="vertical flip probability")
    a.add_argument("--color-jitter", type=float, default=0.4, help="colour jitter factor")
    a.add_argument("--aa", default=None, help="auto-augment policy, e.g. rand-m9-mstd0.5-inc1")
    a.add_argument("--train-interpolation", default="random", help="training resize interpolation")
    a.add_argument("--reprob", type=float, default=0.0, help="random erasing probability")
    a.add_argument("--remode", default="pixel", help="random erasing mode")
    a.add_argument("--recount", type=int, default=1, help="random erasing count")
    a.add_argument("--mixup", type=float, default=0.0, help="mixup alpha (on when > 0)")
    a.add_argument("--cutmix", type=float, default=0.0, help="cutmix alpha (on when > 0)")
    a.add_argument("--cutmix-minmax", **_floats(2), default=None, help="cutmix box ratio range")
    a.add_argument("--mixup-prob", type=float, default=1.0, help="chance to mix a batch")
    a.add_argument("--mixup-switch-prob", type=float, default=0.5, help="chance of cutmix when both are on")
    a.add_argument("--mixup-mode", default="batch", choices=("batch", "pair", "elem"), help="mixup granularity")
    a.add_argument("--mixup-off-epoch", type=int, default=0, help="stop mixing at this epoch (0: never)")
    a.add_argument("--smoothing", type=float, default=0.1, help="label smoothing (default 0.1)")
    e = p.add_argument_group("model EMA")
    e.add_argument("--model-ema", action="store_true", help="keep an exponential moving average of the weights")
    e.add_argument("--model-ema-decay", type=float, default=0.9998, help="EMA decay")
    e.add_argument("--model-ema-warmup", action="store_true", help="EMA decay warmup")
    r = p.add_argument_group("run")
    r.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    r.add_argument("--output", default="output/train", help="parent folder of the run folder")
    r.add_argument("--experiment", default="", help="run folder name (default: <model>-<dataset>)")
    r.add_argument("--resume", default="", help="checkpoint to continue from (model, optimizer, schedule, EMA, RNG)")
    r.add_argument("--eval-metric", default="top1", choices=("top1", "top5", "loss"), help="metric for best.pth")
    r.add_argument("--max-batches", type=int, default=0, help="stop each epoch after this many batches (smoke runs)")
    r.add_argument("--stop-epoch", type=int, default=0,
                   help="stop after this epoch count although the schedule spans --epochs (train in chunks, "
                        "continue with --resume)")
    d = p.add_argument_group("distributed (start with: mpirun -np N flowvision train --distributed ...)")
    d.add_argument("--distributed", action="store_true",
                   help="data-parallel over MPI: one process per rank, gradients averaged by DistributedDataParallel, "
                        "the training set sharded by DistributedSampler; only rank 0 logs and writes checkpoints")
    d.add_argument("--sync-bn", action="store_true", help="with --distributed: BatchNorm statistics over all ranks")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flowvision train", description=__doc__.splitlines()[0])
    add_train_arguments(p)
    return p


def _data_config(args, model) -> Dict[str, Any]:
    from flowvision.data import resolve_data_config
    overrides = {k: v for k, v in dict(mean=args.mean, std=args.std, crop_pct=args.crop_pct,
                                       interpolation=args.interpolation or None).items() if v is not None}
    if args.img_size:
        overrides["input_size"] = (3, args.img_size, args.img_size)
    return resolve_data_config(overrides, model=model)


def _seed_all(seed: int) -> None:
    import flowvision.backend as fb
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    fb.manual_seed(seed)


def _epoch_seed(seed: int, epoch: int) -> int:
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def _lr(args, world_size: int = 1) -> float:
    if args.lr is not None:
        return args.lr
    batch = args.batch_size * args.grad_accum_steps * world_size  # the global batch, as timm scales it
    scale = args.lr_base_scale or ("sqrt" if args.opt in ("adam", "adamw", "lamb") else "linear")
    ratio = batch / args.lr_base_size
    return args.lr_base * (math.sqrt(ratio) if scale == "sqrt" else ratio)


class _Logger:
    """``summary.csv`` (one row per epoch) and ``log.jsonl`` in the run folder."""

    def __init__(self, out_dir: str, resume: bool):
        self.csv_path = os.path.join(out_dir, "summary.csv")
        self.json_path = os.path.join(out_dir, "log.jsonl")
        if not resume:
            for path in (self.csv_path, self.json_path):
                if os.path.exists(path):
                    os.unlink(path)

    def write(self, row: Dict[str, Any]) -> None:
        new = not os.path.exists(self.csv_path)
        with open(self.csv_path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)
        with open(self.json_path, "a") as f:
            f.write(json.dumps(row) + "\n")


def _check_classes(train_ds, val_ds, num_classes: int) -> None:
    for name, ds in (("training", train_ds), ("validation", val_ds)):
        n = len(dataset_classes(ds))
        targets = getattr(ds, "targets", None)
        top = int(max(targets)) + 1 if targets is not None and len(targets) else n
        if max(n, top) > num_classes:
            raise ValueError(f"the {name} set has {max(n, top)} classes but the model head has {num_classes}; "
                             f"pass --num-classes {max(n, top)} (or leave it out to use the dataset's)")


def run(args: argparse.Namespace) -> Dict[str, Any]:
    """Train as ``args`` say; returns ``{'best_metric', 'best_epoch', 'last': last epoch's row, 'out_dir'}``."""
    from flowvision.data import Mixup, ModelEmaV3, create_loader
    from flowvision.data.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
    from flowvision.models import create_model
    import flowvision.backend as fb
    import flowvision.backend.nn as nn
    from .checkpoint import load_checkpoint, restore_training_state, save_checkpoint, training_state
    from .engine import train_one_epoch, validate
    from .optim_factory import create_optimizer_v2
    from .scheduler_factory import create_scheduler_v2

    if args.threads:
        fb.set_num_threads(args.threads)
    if args.batch_size < 1 or args.grad_accum_steps < 1 or args.epochs < 1:
        raise ValueError("--batch-size, --grad-accum-steps and --epochs must be positive")
    if args.sync_bn and not args.distributed:
        raise ValueError("--sync-bn needs --distributed")
    rank, world = 0, 1
    if args.distributed:
        import flowvision.backend.distributed as dist
        if not dist.is_initialized():
            dist.init_process_group(backend="mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    main_rank = rank == 0
    _seed_all(args.seed)
    if args.dataset == "digits" and not args.img_size:
        args.img_size = 32  # the images are made at this size; the model's 224 would only upsample them
    img_size = args.img_size or 32
    train_ds = create_dataset(args.dataset, args.data_dir, args.train_split, True, img_size, args.split_seed)
    val_ds = create_dataset(args.dataset, args.data_dir, args.val_split, False, img_size, args.split_seed)
    num_classes = args.num_classes or len(dataset_classes(train_ds))
    _check_classes(train_ds, val_ds, num_classes)
    model = create_model(args.model, pretrained=args.pretrained, num_classes=num_classes, drop_rate=args.drop,
                         drop_path_rate=args.drop_path)
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    cfg = _data_config(args, model)
    lr = _lr(args, world)
    optimizer = create_optimizer_v2(model, opt=args.opt, lr=lr, weight_decay=args.weight_decay,
                                    momentum=args.momentum, eps=args.opt_eps, betas=args.opt_betas)
    model_ema = ModelEmaV3(model, decay=args.model_ema_decay, use_warmup=args.model_ema_warmup) \
        if args.model_ema else None
    mixup_on = args.mixup > 0 or args.cutmix > 0 or args.cutmix_minmax is not None
    loss_fn = SoftTargetCrossEntropy() if mixup_on else (
        LabelSmoothingCrossEntropy(args.smoothing) if args.smoothing else nn.CrossEntropyLoss())
    val_loss_fn = nn.CrossEntropyLoss()

    def loader(ds, training: bool, seed: int):
        bs = args.batch_size if training else (args.validation_batch_size or args.batch_size)
        return create_loader(
            ds, cfg["input_size"], bs, is_training=training, no_aug=args.no_aug, re_prob=args.reprob,
            re_mode=args.remode, re_count=args.recount, scale=args.scale, ratio=args.ratio, hflip=args.hflip,
            vflip=args.vflip, color_jitter=args.color_jitter, auto_augment=args.aa,
            interpolation=args.train_interpolation if training else cfg["interpolation"], mean=cfg["mean"],
            std=cfg["std"], crop_pct=cfg["crop_pct"], crop_mode=cfg.get("crop_mode"), num_workers=args.workers,
            persistent_workers=False, seed=seed, distributed=args.distributed and training)

    # with --distributed each rank sees ceil(N / world) samples (DistributedSampler pads to equal shares)
    n_batches = (len(train_ds) + world - 1) // world // args.batch_size
    if args.max_batches:
        n_batches = min(n_batches, args.max_batches)
    if n_batches == 0:
        raise ValueError(f"the training set ({len(train_ds)} images) is smaller than one batch of "
                         f"{args.batch_size}")
    updates_per_epoch = (n_batches + args.grad_accum_steps - 1) // args.grad_accum_steps
    scheduler, num_epochs = create_scheduler_v2(
        optimizer, sched=args.sched, num_epochs=args.epochs, decay_epochs=args.decay_epochs,
        decay_milestones=args.decay_milestones, cooldown_epochs=args.cooldown_epochs, decay_rate=args.decay_rate,
        min_lr=args.min_lr, warmup_lr=args.warmup_lr, warmup_epochs=args.warmup_epochs,
        warmup_prefix=args.warmup_prefix, step_on_epochs=not args.sched_on_updates,
        updates_per_epoch=updates_per_epoch)

    experiment = args.experiment or f"{args.model}-{args.dataset}"
    out_dir = os.path.join(args.output, experiment)
    if main_rank:
        os.makedirs(out_dir, exist_ok=True)
    start_epoch, best_metric, best_epoch = 0, None, None
    if args.resume:
        ckpt = load_checkpoint(args.resume)
        start_epoch = restore_training_state(ckpt, model, optimizer, scheduler, model_ema, path=args.resume)
        best_metric = ckpt.get("best_metric")
        best_epoch = ckpt.get("best_epoch")
    elif scheduler is not None:
        scheduler.step(0)
    # resumed weights are loaded before wrapping: DDP starts every rank from rank 0's parameters and buffers
    train_model = nn.parallel.DistributedDataParallel(model) if args.distributed else model
    if main_rank:
        with open(os.path.join(out_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=1, default=str)
        log = _Logger(out_dir, resume=bool(args.resume))
    arg_dict = {k: v for k, v in vars(args).items() if k != "func"}
    arg_dict["num_classes"] = num_classes
    higher_better = args.eval_metric != "loss"
    progress = not args.no_progress and main_rank
    last_row: Dict[str, Any] = {}
    end_epoch = min(num_epochs, args.stop_epoch) if args.stop_epoch else num_epochs
    for epoch in range(start_epoch, end_epoch):
        eseed = _epoch_seed(args.seed, epoch)
        _seed_all(eseed + rank)  # per-rank dropout/drop-path draws; rank 0 (and one process) as before
        train_loader = loader(train_ds, True, eseed + rank)  # augmentation differs per rank; the shard split not
        if args.distributed:
            sampler = getattr(train_loader, "loader", train_loader).sampler
            sampler.seed = args.seed
            sampler.set_epoch(epoch)
        mixup_fn = None
        if mixup_on and not (args.mixup_off_epoch and epoch >= args.mixup_off_epoch):
            mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, cutmix_minmax=args.cutmix_minmax,
                             prob=args.mixup_prob, switch_prob=args.mixup_switch_prob, mode=args.mixup_mode,
                             label_smoothing=args.smoothing, num_classes=num_classes, seed=eseed)
        train = train_one_epoch(epoch, train_model, train_loader, optimizer, loss_fn, lr_scheduler=scheduler,
                                mixup_fn=mixup_fn, model_ema=model_ema, clip_grad=args.clip_grad,
                                clip_mode=args.clip_mode, grad_accum_steps=args.grad_accum_steps,
                                num_updates=epoch * updates_per_epoch, num_batches=n_batches, progress=progress)
        # rank 0 validates (every rank holds the same weights) and shares the numbers, so a metric-driven
        # schedule steps alike everywhere
        val = ema_val = None
        if main_rank:
            val_loader = loader(val_ds, False, eseed)
            val = validate(model, val_loader, val_loss_fn, progress=progress, num_classes=num_classes)
            if model_ema is not None:
                ema_val = validate(model_ema.module, val_loader, val_loss_fn, progress=progress, desc="val ema")
        if args.distributed:
            train["loss"], val, ema_val = _share_metrics(train["loss"], val, ema_val, model_ema is not None)
        row = {"epoch": epoch, "train_loss": train["loss"], "lr": train["lr"], "train_img_per_s": train["img_per_s"],
               "train_seconds": train["seconds"], "val_loss": val["loss"], "top1": val["top1"], "top5": val["top5"]}
        metric = val[args.eval_metric]
        if model_ema is not None:
            row.update(ema_top1=ema_val["top1"], ema_top5=ema_val["top5"], ema_val_loss=ema_val["loss"])
            metric = ema_val[args.eval_metric]
        if scheduler is not None:
            scheduler.step(epoch + 1, metric)
        improved = best_metric is None or (metric > best_metric if higher_better else metric < best_metric)
        if improved:
            best_metric, best_epoch = metric, epoch
        last_row = row
        if not main_rank:
            continue
        state = training_state(model, optimizer, scheduler, model_ema, epoch=epoch + 1, metric=metric,
                               best_metric=best_metric, args=arg_dict)
        state["best_epoch"] = best_epoch
        save_checkpoint(state, os.path.join(out_dir, "last.pth"))
        if improved:
            save_checkpoint(state, os.path.join(out_dir, "best.pth"))
        log.write(row)
        ema_txt = f"  ema top1 {row['ema_top1']:.2f}" if model_ema is not None else ""
        print(f"epoch {epoch}: train loss {train['loss']:.4f} ({train['img_per_s']:.1f} img/s, "
              f"{train['seconds']:.1f}s)  val loss {val['loss']:.4f}  top1 {val['top1']:.2f}  "
              f"top5 {val['top5']:.2f}{ema_txt}  lr {train['lr']:.3e}", flush=True)
    return {"best_metric": best_metric, "best_epoch": best_epoch, "last": last_row, "out_dir": out_dir,
            "rank": rank}


_VAL_KEYS = ("loss", "top1", "top5")


def _share_metrics(train_loss: float, val, ema_val, with_ema: bool):
    """The training loss averaged over ranks; rank 0's validation results broadcast to every rank."""
    import flowvision.backend as fb
    import flowvision.backend.distributed as dist
    loss = fb.tensor([train_loss], dtype=fb.float64)
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    n = len(_VAL_KEYS)
    buf = np.zeros(2 * n, np.float64)
    if dist.get_rank() == 0:
        buf[:n] = [val[k] for k in _VAL_KEYS]
        if with_ema:
            buf[n:] = [ema_val[k] for k in _VAL_KEYS]
    shared = fb.from_numpy(buf)
    dist.broadcast(shared, src=0)
    got = shared.numpy()
    val = dict(val or {}, **dict(zip(_VAL_KEYS, map(float, got[:n]))))
    ema_val = dict(zip(_VAL_KEYS, map(float, got[n:]))) if with_ema else None
    return float(loss.numpy()[0]), val, ema_val


def main(argv: Optional[List[str]] = None) -> int:
    """Command-line entry: parse ``argv`` and train; returns the exit status."""
    args = build_parser().parse_args(argv)
    return run_cli(args)


def _abort_peers(args: argparse.Namespace, code: int) -> int:
    """A distributed rank that stops takes the whole MPI job down: its peers would wait in a collective."""
    if getattr(args, "distributed", False):
        import flowvision.backend.distributed as dist
        if dist.is_initialized():
            sys.stderr.flush()
            from flowvision.backend.distributed._mpi import import_mpi
            import_mpi().COMM_WORLD.Abort(code)
    return code


def run_cli(args: argparse.Namespace) -> int:
    """Run training, turning expected failures into a one-line message and exit status 1 (2 for bad input)."""
    from .checkpoint import CheckpointError
    from .engine import NonFiniteLossError
    start = time.perf_counter()
    try:
        res = run(args)
    except NonFiniteLossError as e:
        print(f"flowvision train: stopped: {e}. The last good checkpoint (if any) is kept.", file=sys.stderr)
        return _abort_peers(args, 1)
    except CheckpointError as e:
        print(f"flowvision train: {e}", file=sys.stderr)
        return _abort_peers(args, 2)
    except (ValueError, FileNotFoundError, ImportError) as e:
        print(f"flowvision train: {e}", file=sys.stderr)
        return _abort_peers(args, 2)
    if getattr(args, "distributed", False):
        import flowvision.backend.distributed as dist
        dist.destroy_process_group()
    if res.get("rank", 0) != 0:
        return 0
    best = "n/a" if res["best_metric"] is None else f"{res['best_metric']:.4f}"
    print(f"done in {time.perf_counter() - start:.1f}s: best {args.eval_metric} {best} "
          f"(epoch {res['best_epoch']}); checkpoints in {res['out_dir']}")
    return 0
