"""stochastic_depth / StochasticDepth and drop_block2d / DropBlock2d (torchvision.ops semantics; the random
draws come from flowvision's generator, so the masks differ from torch's but their distribution is the same)."""
from typing import cast

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn

__all__ = ["stochastic_depth", "StochasticDepth", "drop_block2d", "DropBlock2d", "sample_drop", "block_drop"]


def _bernoulli(shape, prob, like):
    """A 0/1 mask of ``shape`` with P(1) = ``prob``, on ``like``'s device and in its dtype."""
    return flow.empty(tuple(shape), dtype=like.dtype, device=like.device).bernoulli_(prob)


def sample_drop(input: flow.Tensor, p: float, per_sample: bool = True, scale_by_keep: bool = True) -> flow.Tensor:
    """Zero ``input`` with probability ``p``, per sample (one draw per leading index) or as a whole.

    The single stochastic-depth kernel behind ``stochastic_depth`` (torchvision) and ``drop_path`` (timm); the
    mask is drawn on the input's device. Kept values are divided by ``1 - p`` when ``scale_by_keep``.

    Args:
        input: the residual branch, any shape with a leading batch dimension.
        p: drop probability in [0, 1].
        per_sample: one draw per sample (torchvision's ``"row"``) or one for the whole batch (``"batch"``).
        scale_by_keep: rescale the kept values so the expectation is unchanged.

    Returns:
        ``input * mask`` (a new tensor).
    """
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if per_sample else [1] * input.ndim
    noise = _bernoulli(size, survival_rate, input)
    if survival_rate > 0.0 and scale_by_keep:
        noise.div_(survival_rate)
    return input * noise


def stochastic_depth(input: flow.Tensor, p: float, mode: str, training: bool = True) -> flow.Tensor:
    """torchvision's ``stochastic_depth``: drop rows (``mode="row"``) or the whole batch (``"batch"``).

    Args:
        input: the residual branch.
        p: drop probability in [0, 1].
        mode: ``"row"`` or ``"batch"``.
        training: identity when False.

    Returns:
        ``input`` itself when not training or ``p == 0``, else the masked and rescaled tensor.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    return sample_drop(input, p, per_sample=mode == "row")


class StochasticDepth(nn.Module):
    """:func:`stochastic_depth` as a module: drops whole residual branches while training.

    Args:
        p: drop probability.
        mode: ``"batch"`` (one draw for the batch) or ``"row"`` (one per sample).
    """

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"


def block_drop(x: flow.Tensor, gamma: float, kh: int, kw: int, *, couple_channels: bool = False,
               valid_seeds_only: bool = False, with_noise: bool = False, scale: bool = True, eps: float = 1e-6,
               inplace: bool = False) -> flow.Tensor:
    """Drop random ``kh`` x ``kw`` blocks of a (B, C, H, W) map: the one DropBlock kernel behind
    ``drop_block2d`` (torchvision) and ``drop_block_2d`` (timm), computed on ``x``'s device.

    Block centres are Bernoulli(``gamma``) seeds, grown to blocks by a stride-1 max-pool.

    Args:
        x: the (B, C, H, W) input.
        gamma: seed rate.
        kh, kw: block size (each at most the map size).
        couple_channels: one mask shared by all channels.
        valid_seeds_only: seeds only where a whole block fits (torchvision), else anywhere (timm).
        with_noise: fill dropped blocks with gaussian noise instead of rescaling the kept values.
        scale: rescale kept values by numel / (kept + ``eps``).
        eps: the rescale's guard against an all-dropped mask.
        inplace: write into ``x``.

    Returns:
        The masked tensor (``x`` itself when ``inplace``).
    """
    B, C, H, W = x.shape
    c = 1 if couple_channels else C
    with flow.no_grad():
        if valid_seeds_only:
            seeds = _bernoulli((B, c, H - kh + 1, W - kw + 1), gamma, x)
            seeds = F.pad(seeds, [kw // 2, (kw - 1) // 2, kh // 2, (kh - 1) // 2], value=0)
        else:
            seeds = _bernoulli((B, c, H, W), min(gamma, 1.0), x)
        # without return_indices max_pool2d returns one tensor
        block_mask = cast(flow.Tensor, F.max_pool2d(seeds, kernel_size=(kh, kw), stride=1,
                                                    padding=(kh // 2, kw // 2)))
        if kh % 2 == 0 or kw % 2 == 0:  # an even window pads one more row/col than it consumes
            block_mask = block_mask[..., (kh + 1) % 2:, (kw + 1) % 2:]  # type: ignore[index]  # bound at import
        keep_mask = 1.0 - block_mask
        if with_noise:
            noise = flow.randn(tuple(keep_mask.shape), dtype=x.dtype, device=x.device) * block_mask
        elif scale:
            keep_mask = keep_mask * (keep_mask.numel() / (keep_mask.sum() + eps))
    if with_noise:
        return x.mul_(keep_mask).add_(noise) if inplace else x * keep_mask + noise
    return x.mul_(keep_mask) if inplace else x * keep_mask


def drop_block2d(input: flow.Tensor, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06,
                 training: bool = True) -> flow.Tensor:
    """torchvision's ``drop_block2d``: drop odd ``block_size`` squares so about ``p`` of the map is dropped.

    Args:
        input: a (N, C, H, W) tensor.
        p: drop probability in [0, 1].
        block_size: odd block side (clipped to the map size).
        inplace: write into ``input``.
        eps: guard of the rescale.
        training: identity when False.

    Returns:
        The masked, rescaled tensor (``input`` itself when not training, ``p == 0`` or ``inplace``).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != 4:
        raise ValueError(f"input should be 4 dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    N, C, H, W = input.shape
    block_size = min(block_size, W, H)
    if block_size % 2 == 0:
        raise ValueError(f"block size should be odd. Got {block_size} which is even.")
    gamma = (p * H * W) / ((block_size ** 2) * ((H - block_size + 1) * (W - block_size + 1)))
    return block_drop(input, gamma, block_size, block_size, valid_seeds_only=True, eps=eps, inplace=inplace)


class DropBlock2d(nn.Module):
    """:func:`drop_block2d` as a module: drops contiguous blocks of feature maps while training.

    Args:
        p: drop probability of a unit.
        block_size: side of the dropped square blocks.
        inplace: modify the input.
        eps: added to the normaliser against division by zero.
    """

    def __init__(self, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06) -> None:
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, inplace={self.inplace})"
