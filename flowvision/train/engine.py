"""The training and validation loops of timm's ``train.py`` on the flowvision engine.

One update = forward, loss (divided by the accumulation count), backward on every micro-batch, then on
the last micro-batch of an update: gradient clipping, ``optimizer.step()``, ``zero_grad``, the EMA update
with the update count, and ``scheduler.step_update`` — the order timm uses, so a run here and a run of
timm+torch with the same weights, batches and hyper-parameters follow the same trajectory.
"""
from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable, Dict, Iterable, Optional

import numpy as np

import flowvision.backend as fb
from flowvision.data.utils import AverageMeter, accuracy, dispatch_clip_grad

__all__ = ["NonFiniteLossError", "train_one_epoch", "validate", "as_batch"]


class NonFiniteLossError(FloatingPointError):
    """The training loss became NaN or infinite; training stops before the weights are used further."""


def as_batch(x, y):
    """Loader output (numpy or engine tensors) -> engine tensors (float32 images, targets as given)."""
    if not fb.is_tensor(x):
        x = fb.from_numpy(np.ascontiguousarray(np.asarray(x, dtype=np.float32)))
    if not fb.is_tensor(y):
        y = fb.from_numpy(np.ascontiguousarray(np.asarray(y)))
    return x, y


def _progress(iterable, total: int, desc: str, enabled: bool):
    if not enabled:
        return iterable
    from tqdm import tqdm
    return tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True)


def train_one_epoch(epoch: int, model, loader: Iterable, optimizer, loss_fn: Callable, *,
                    lr_scheduler=None, mixup_fn: Optional[Callable] = None, model_ema=None,
                    clip_grad: Optional[float] = None, clip_mode: str = "norm", grad_accum_steps: int = 1,
                    num_updates: Optional[int] = None, num_batches: Optional[int] = None,
                    progress: bool = False, on_step: Optional[Callable[[Dict[str, Any]], None]] = None
                    ) -> Dict[str, Any]:
    """Train ``model`` for one pass over ``loader``.

    Args:
        epoch: the epoch index (sets the starting update count when ``num_updates`` is None).
        model: the module, put in train mode here.
        loader: yields ``(images, targets)`` batches (numpy arrays or engine tensors).
        optimizer: a flowvision optimizer.
        loss_fn: ``loss_fn(output, target) -> scalar tensor``.
        lr_scheduler: a timm-style scheduler; ``step_update`` is called after every update.
        mixup_fn: ``flowvision.data.Mixup`` (or any ``(x, y) -> (x, soft_y)``) applied per batch.
        model_ema: ``ModelEmaV3``-like object updated after every update with the update count.
        clip_grad: clip value (None: no clipping); ``clip_mode`` is 'norm', 'value' or 'agc'.
        grad_accum_steps: micro-batches per optimizer update.
        num_updates: updates done before this epoch (default ``epoch * updates_per_epoch``).
        num_batches: batches in ``loader`` (default ``len(loader)``).
        progress: show a tqdm bar with loss, lr and images/s.
        on_step: called after each micro-batch with ``{'loss', 'batch_idx', 'num_updates', 'lr'}``.

    Returns:
        ``{'loss': mean loss, 'lr': last lr, 'num_updates', 'images', 'seconds', 'img_per_s'}``.

    Raises:
        NonFiniteLossError: the loss is NaN or infinite (the optimizer has not stepped on it).
    """
    if grad_accum_steps < 1:
        raise ValueError(f"grad_accum_steps must be >= 1, got {grad_accum_steps}")
    n = len(loader) if num_batches is None else num_batches
    if n <= 0:
        raise ValueError("the training loader is empty (dataset smaller than one batch with drop_last?)")
    updates_per_epoch = (n + grad_accum_steps - 1) // grad_accum_steps
    if num_updates is None:
        num_updates = epoch * updates_per_epoch
    last_batch_idx = n - 1
    last_accum_steps = n % grad_accum_steps or grad_accum_steps
    last_batch_idx_to_accum = n - last_accum_steps
    model.train()
    losses = AverageMeter()
    images = 0
    start = time.perf_counter()
    bar = _progress(itertools.islice(loader, n), n, f"train {epoch}", progress)
    optimizer.zero_grad()
    for batch_idx, (x, y) in enumerate(bar):
        last_batch = batch_idx == last_batch_idx
        need_update = last_batch or (batch_idx + 1) % grad_accum_steps == 0
        accum_steps = last_accum_steps if batch_idx >= last_batch_idx_to_accum else grad_accum_steps
        x, y = as_batch(x, y)
        if mixup_fn is not None:
            x, y = mixup_fn(x, y)
        output = model(x)
        loss = loss_fn(output, y)
        if accum_steps > 1:
            loss = loss / accum_steps
        loss_value = float(loss.item()) * accum_steps
        if not math.isfinite(loss_value):
            raise NonFiniteLossError(f"training loss is {loss_value} at epoch {epoch}, batch {batch_idx} "
                                     f"(update {num_updates}); lower the learning rate or enable --clip-grad")
        loss.backward()
        if need_update:
            if clip_grad is not None:
                params = list(model.parameters())
                if clip_mode == "agc":  # as timm: the classifier (last weight and bias) is not AGC-clipped
                    params = params[:-2]
                dispatch_clip_grad(params, value=clip_grad, mode=clip_mode)
            optimizer.step()
        bs = int(x.shape[0])
        losses.update(loss_value, bs)
        images += bs
        lr = sum(g["lr"] for g in optimizer.param_groups) / len(optimizer.param_groups)
        if need_update:
            num_updates += 1
            optimizer.zero_grad()
            if model_ema is not None:
                model_ema.update(model, step=num_updates)
            if lr_scheduler is not None:
                lr_scheduler.step_update(num_updates=num_updates, metric=losses.avg)
        if on_step is not None:
            on_step({"loss": loss_value, "batch_idx": batch_idx, "num_updates": num_updates, "lr": lr})
        if progress:
            elapsed = time.perf_counter() - start
            bar.set_postfix(loss=f"{losses.val:.4f}", avg=f"{losses.avg:.4f}", lr=f"{lr:.2e}",
                            img_s=f"{images / max(elapsed, 1e-9):.1f}")
    seconds = time.perf_counter() - start
    lr = sum(g["lr"] for g in optimizer.param_groups) / len(optimizer.param_groups)
    return {"loss": losses.avg, "lr": lr, "num_updates": num_updates, "images": images, "seconds": seconds,
            "img_per_s": images / max(seconds, 1e-9)}


def validate(model, loader: Iterable, loss_fn: Optional[Callable] = None, *, progress: bool = False,
             num_classes: Optional[int] = None, desc: str = "val") -> Dict[str, float]:
    """Top-1/top-5 accuracy (percent) and mean cross-entropy of ``model`` over ``loader``.

    Args:
        model: put in eval mode; run under ``no_grad``.
        loader: yields ``(images, int targets)``.
        loss_fn: loss for the report (default: cross-entropy).
        progress: show a tqdm bar.
        num_classes: when given, targets outside ``[0, num_classes)`` raise a clear error.
        desc: the progress bar's label.

    Returns:
        ``{'loss', 'top1', 'top5', 'images', 'seconds', 'img_per_s'}``.
    """
    import flowvision.backend.nn.functional as F
    model.eval()
    loss_m, top1_m, top5_m = AverageMeter(), AverageMeter(), AverageMeter()
    images = 0
    start = time.perf_counter()
    n = len(loader) if hasattr(loader, "__len__") else None
    with fb.no_grad():
        for x, y in _progress(loader, n, desc, progress):
            x, y = as_batch(x, y)
            target = y.numpy().reshape(-1)
            if num_classes is not None and target.size and (target.min() < 0 or target.max() >= num_classes):
                raise ValueError(f"validation label {int(target.max())} is outside the model's "
                                 f"{num_classes} classes")
            output = model(x)
            loss = loss_fn(output, y) if loss_fn is not None else F.cross_entropy(output, y)
            out = output.numpy()
            k5 = min(5, out.shape[1])
            acc1, acc5 = accuracy(out, target, topk=(1, k5))
            bs = int(x.shape[0])
            loss_m.update(float(loss.item()), bs)
            top1_m.update(acc1, bs)
            top5_m.update(acc5, bs)
            images += bs
    seconds = time.perf_counter() - start
    return {"loss": loss_m.avg, "top1": top1_m.avg, "top5": top5_m.avg, "images": images, "seconds": seconds,
            "img_per_s": images / max(seconds, 1e-9)}

