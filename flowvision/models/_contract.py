"""The methods every classification model shares (timm's model contract), written once.

A family's model class inherits ``ClassifierContract`` and names its head through two class attributes:
``head_attr`` (the attribute holding the final classifier, ``'head'``/``'fc'``/``'classifier'``) and, where the
pooling is a separate module, ``pool_attr``. Families whose head is not a single pool + linear override
``reset_classifier``; everything else (``get_classifier``, ``no_weight_decay``, ``set_grad_checkpointing``,
``forward``, the input check) is inherited. Three refinements write the rest once: ``HeadModuleContract`` (the
head is a ``ClassifierHead``-like module with its own ``reset``), ``MeanPoolContract`` (a mean over ``pool_dims``,
then a Linear ``head``) and ``StagedContract`` (a pyramid of stages run by ``_stage(i, x)``: ``forward_features``
and ``forward_intermediates``).

Gradient checkpointing is real where a family runs its blocks through ``checkpoint_seq`` (or
``self.run_blocks``): with ``set_grad_checkpointing(True)``, in training mode under autograd, each block keeps
only its input and recomputes its activations during backward (``flowvision.backend.utils.checkpoint``).
"""
from typing import List, Optional, Set, Tuple, Union

from flowvision.backend import Tensor, nn
from flowvision.layers import create_classifier

from ._features import feature_take_indices

__all__ = ["ClassifierContract", "HeadModuleContract", "MeanPoolContract", "StagedContract", "check_input_channels",
           "check_mean_pool", "checkpoint_seq"]


def checkpoint_seq(blocks, x, enabled: bool = True):
    """Apply ``blocks`` (an iterable of modules) in order to ``x``.

    With ``enabled`` and autograd recording, every block runs under ``checkpoint``: its intermediate
    activations are freed after the forward pass and recomputed in backward (same gradients, less memory).
    """
    from flowvision.backend.autograd.grad_mode import is_grad_enabled
    from flowvision.backend.utils.checkpoint import checkpoint
    recompute = enabled and is_grad_enabled()
    for blk in blocks:
        x = checkpoint(blk, x) if recompute else blk(x)
    return x


def check_input_channels(x, in_chans: int) -> None:
    """A clear error for a non-4-D input or the wrong channel count (instead of a kernel shape error)."""
    if x.ndim != 4:
        raise ValueError(f"expected a (B, C, H, W) tensor, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"expected a floating-point input tensor, got {x.dtype} (convert images with "
                        f"x.float() / 255 or transforms.ToDtype(float32, scale=True))")
    if 0 in tuple(x.shape):
        raise ValueError(f"input of shape {tuple(x.shape)} is empty: batch, height and width must be positive")
    if x.shape[1] != in_chans:
        raise ValueError(f"input has {x.shape[1]} channels, the model expects {in_chans} "
                         f"(create it with in_chans={x.shape[1]})")


class ClassifierContract:
    """Mixin: ``get_classifier``, ``no_weight_decay``, ``set_grad_checkpointing`` and ``forward``."""

    head_attr = "head"
    pool_attr: Optional[str] = None
    no_weight_decay_names: Set[str] = set()

    def reset_classifier(self, num_classes: int, global_pool: Optional[str] = None) -> None:
        """A new ``num_classes`` head (0: none, forward returns pre-logits) and optionally a new pooling.

        This default serves CNN heads built by ``create_classifier`` (``pool_attr`` + ``head_attr``).
        """
        if self.pool_attr is None:
            raise NotImplementedError(f"{type(self).__name__} must define reset_classifier")
        self.num_classes = classifier_or_none(num_classes)
        pool_type = global_pool if global_pool is not None else getattr(self, self.pool_attr).pool_type
        pool, head = create_classifier(self.num_features, num_classes, pool_type=pool_type)
        setattr(self, self.pool_attr, pool)
        setattr(self, self.head_attr, head)

    def get_classifier(self, name_only: bool = False):
        """The final classifier module (or its attribute name with ``name_only=True``)."""
        return self.head_attr if name_only else getattr(self, self.head_attr)

    def no_weight_decay(self) -> Set[str]:
        """Parameter names an optimizer should not decay (position embeddings, tokens, scales)."""
        names = {n for n, _ in self.named_parameters()}
        return {n for n in self.no_weight_decay_names if n in names}

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """Turns activation recomputation on or off for the blocks the family runs through ``run_blocks``
        (training mode only; the values computed are the same either way)."""
        self.grad_checkpointing = bool(enable)

    def run_blocks(self, blocks, x):
        """``blocks`` applied in order, checkpointed when ``set_grad_checkpointing(True)`` and training."""
        return checkpoint_seq(blocks, x, enabled=getattr(self, "grad_checkpointing", False) and self.training)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


class HeadModuleContract(ClassifierContract):
    """Mixin for models whose ``head`` is a head module (``ClassifierHead``, ``NormMlpClassifierHead``: pooling,
    dropout and ``fc``, with its own ``reset``): ``get_classifier``, ``reset_classifier`` and ``forward_head``."""

    def get_classifier(self, name_only: bool = False):
        """The head's ``fc`` (or its name with ``name_only=True``)."""
        return "head.fc" if name_only else self.head.fc

    def reset_classifier(self, num_classes: int, global_pool: Optional[str] = None) -> None:
        """A new ``num_classes`` head (0: none, forward returns pre-logits) and optionally a new pooling."""
        self.num_classes = classifier_or_none(num_classes)
        self.head.reset(num_classes, global_pool)

    def forward_head(self, x: Tensor, pre_logits: bool = False) -> Tensor:
        """Pooled features (``pre_logits``) or logits."""
        return self.head(x, pre_logits=pre_logits)


def check_mean_pool(global_pool: str) -> str:
    """``global_pool`` of a model pooled by a mean: ``'avg'``, or ``''`` for none (a ValueError otherwise)."""
    if global_pool not in ("avg", ""):
        raise ValueError(f"global_pool must be 'avg' or '', got {global_pool!r}")
    return global_pool


class MeanPoolContract(ClassifierContract):
    """Mixin for models whose head is a mean over ``pool_dims`` (``global_pool='avg'``; ``''`` keeps every
    position) followed by a Linear ``head``: ``reset_classifier`` and ``forward_head``."""

    pool_dims: Tuple[int, ...] = (2, 3)

    def reset_classifier(self, num_classes: int, global_pool: Optional[str] = None) -> None:
        """A new Linear head of ``num_classes`` (0: none, forward returns pre-logits) and optionally a new pooling
        (``'avg'`` or ``''``)."""
        self.num_classes = classifier_or_none(num_classes)
        if global_pool is not None:
            self.global_pool = check_mean_pool(global_pool)
        self.head = linear_head(self.num_features, num_classes)

    def forward_head(self, x: Tensor, pre_logits: bool = False) -> Tensor:
        """Pooled features (``pre_logits``) or logits."""
        if self.global_pool == "avg":
            x = x.mean(dim=self.pool_dims)
        return x if pre_logits else self.head(x)


class StagedContract(MeanPoolContract):
    """Mixin for a pyramid of ``num_stages`` stages: ``_stage(i, x)`` runs stage ``i`` (its stem or downsampling
    included), ``final_norm`` follows the last one. Gives ``forward_features`` and timm's ``forward_intermediates``;
    with ``tokens_last`` the stages output (B, H, W, C) tokens and the intermediates are permuted to NCHW."""

    tokens_last = False

    def final_norm(self, x: Tensor) -> Tensor:
        """The norm after the last stage (``self.norm``)."""
        return self.norm(x)

    def forward_intermediates(self, x: Tensor, indices: Optional[Union[int, List[int]]] = None, norm: bool = False,
                              stop_early: bool = False, output_fmt: str = "NCHW", intermediates_only: bool = False):
        """(final features, [NCHW outputs of the stages ``indices`` names]) with timm's semantics: ``norm`` applies
        the final norm to the last stage's output, ``stop_early`` stops after the last stage asked for."""
        if output_fmt != "NCHW":
            raise ValueError(f"{type(self).__name__}'s intermediates are NCHW, got output_fmt={output_fmt!r}")
        check_input_channels(x, self.in_chans)
        final = self.num_stages - 1
        take, max_index = feature_take_indices(self.num_stages, indices)
        last = max_index if stop_early else final
        intermediates = []
        for i in range(last + 1):
            x = self._stage(i, x)
            if i in take:
                y = self.final_norm(x) if norm and i == final else x
                intermediates.append(y.permute(0, 3, 1, 2) if self.tokens_last else y)
        if intermediates_only:
            return intermediates
        return (self.final_norm(x) if last == final else x), intermediates

    def forward_features(self, x: Tensor) -> Tensor:
        """The last stage's output after ``final_norm``."""
        check_input_channels(x, self.in_chans)
        for i in range(self.num_stages):
            x = self._stage(i, x)
        return self.final_norm(x)


def linear_head(num_features: int, num_classes: int) -> nn.Module:
    """``Linear(num_features, num_classes)``, or Identity for a headless model (``num_classes=0``)."""
    return nn.Linear(num_features, num_classes) if num_classes > 0 else nn.Identity()


def classifier_or_none(num_classes: Optional[int]) -> int:
    if not isinstance(num_classes, int) or num_classes < 0:
        raise ValueError(f"num_classes must be a non-negative int, got {num_classes!r}")
    return num_classes
