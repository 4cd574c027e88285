"""timm's classification losses on flowvision.backend (autograd-capable nn.Modules).

Imported lazily by ``flowvision.data`` (the augmentation part never loads the engine).
"""
from __future__ import annotations

from typing import Any, Optional

import flowvision.backend as fb
import flowvision.backend.nn as nn
import flowvision.backend.nn.functional as F

__all__ = ["LabelSmoothingCrossEntropy", "SoftTargetCrossEntropy", "JsdCrossEntropy", "BinaryCrossEntropy"]


def _as_tensor(x, dtype=None):
    if fb.is_tensor(x):
        return x
    from ._arrays import as_numpy, kind_of
    import numpy as np
    arr = as_numpy(x) if kind_of(x) != "other" else np.asarray(x)
    return fb.from_numpy(arr if dtype is None else arr.astype(dtype))


class LabelSmoothingCrossEntropy(nn.Module):
    """``(1-e)*NLL + e*mean(-log p)`` over int targets.

    Args:
        smoothing: the smoothing ``e``, below 1.
    """

    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        if not smoothing < 1.0:
            raise ValueError(f"smoothing must be < 1, got {smoothing}")
        self.smoothing = smoothing
        self.confidence = 1.0 - smoothing

    def forward(self, x, target):
        target = _as_tensor(target)
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.long().unsqueeze(1)).squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


class SoftTargetCrossEntropy(nn.Module):
    """``mean(sum(-t * log_softmax(x)))`` for Mixup/CutMix soft targets."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x, target):
        target = _as_tensor(target)
        return fb.sum(-target * F.log_softmax(x, dim=-1), dim=-1).mean()


class JsdCrossEntropy(nn.Module):
    """AugMix JSD loss: CE on the clean split + alpha * mean KL(p_i || clamp(mean p)).

    Args:
        num_splits: augmentation splits in the batch (the first is clean).
        alpha: weight of the Jensen-Shannon term.
        smoothing: label smoothing of the clean split's cross entropy.
    """

    def __init__(self, num_splits: int = 3, alpha: float = 12, smoothing: float = 0.1):
        super().__init__()
        self.num_splits = num_splits
        self.alpha = alpha
        if smoothing is not None and smoothing > 0:
            self.cross_entropy_loss: nn.Module = LabelSmoothingCrossEntropy(smoothing)
        else:
            self.cross_entropy_loss = nn.CrossEntropyLoss()

    def forward(self, output, target):
        target = _as_tensor(target)
        split_size = output.shape[0] // self.num_splits
        if split_size * self.num_splits != output.shape[0]:
            raise ValueError(f"batch of {output.shape[0]} does not split into {self.num_splits} equal parts")
        logits_split = fb.split(output, split_size)
        loss = self.cross_entropy_loss(logits_split[0], target[:split_size])
        probs = [F.softmax(logits, dim=1) for logits in logits_split]
        logp_mixture = fb.clamp(fb.stack(probs).mean(dim=0), 1e-7, 1).log()
        kl = None
        for p in probs:
            k = F.kl_div(logp_mixture, p, reduction="batchmean")
            kl = k if kl is None else kl + k
        return loss + self.alpha * kl / len(probs)


class BinaryCrossEntropy(nn.Module):
    """BCE-with-logits with one-hot (+ smoothing) from index targets, optional thresholding.

    Args:
        smoothing: label smoothing of the one-hot targets.
        target_threshold: binarize the (mixed) targets at this value.
        weight: per-class weight of the loss.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        sum_classes: sum over classes before the reduction.
        pos_weight: weight of the positive examples per class.
        smooth_dense: smooth dense (already soft) targets too.
    """

    def __init__(self, smoothing: float = 0.1, target_threshold: Optional[float] = None, weight: Any = None,
                 reduction: str = "mean", sum_classes: bool = False, pos_weight: Any = None,
                 smooth_dense: bool = False) -> None:
        super().__init__()
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
        if pos_weight is not None and not fb.is_tensor(pos_weight):
            pos_weight = fb.tensor(pos_weight, dtype=fb.float32)
        self.smoothing = smoothing
        self.target_threshold = target_threshold
        self.reduction = "none" if sum_classes else reduction
        self.sum_classes = sum_classes
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.smooth_dense = smooth_dense

    def forward(self, x, target):
        target = _as_tensor(target)
        batch_size = x.shape[0]
        if batch_size != target.shape[0]:
            raise ValueError(f"logits batch {batch_size} != target batch {target.shape[0]}")
        if tuple(target.shape) != tuple(x.shape):
            num_classes = x.shape[-1]
            off_value = self.smoothing / num_classes
            on_value = 1.0 - self.smoothing + off_value
            idx = target.long().view(-1, 1)
            target = fb.full((batch_size, num_classes), off_value, dtype=x.dtype).scatter(1, idx, on_value)
        elif self.smooth_dense and self.smoothing:
            target = target * (1.0 - self.smoothing) + 0.5 * self.smoothing
        if self.target_threshold is not None:
            target = target.gt(self.target_threshold).to(dtype=target.dtype)
        loss = F.binary_cross_entropy_with_logits(x, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
        if self.sum_classes:
            loss = loss.sum(-1).mean()
        return loss
