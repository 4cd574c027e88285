"""RandomErasing (timm semantics): erase random boxes of a normalised CHW image or NCHW batch.

Runs **after normalisation**, in place, on numpy arrays, flowvision.backend tensors or DLPack
(torch) tensors; the same object is returned.  Fill modes (values in normalised space):
``const`` zeros, ``rand`` one N(0,1) colour per box and channel, ``pixel`` N(0,1) per pixel.
"""
from __future__ import annotations

from typing import Optional

import math

import numpy as np

from ._arrays import as_numpy
from ._random import RngLike, resolve_rng

__all__ = ["RandomErasing"]


class RandomErasing:
    """Random Erasing (Zhong et al. 2017), timm's variant.

    Args: probability (per image), min_area / max_area (fraction of the image, divided by the box
    count), min_aspect / max_aspect (log-uniform; max defaults to 1/min), mode ('const' | 'rand' |
    'pixel'), min_count / max_count (boxes per image, uniform), num_splits (with > 1, the first
    B // num_splits samples — the clean AugMix split — are left alone), device (accepted for timm
    compatibility; arrays stay where they are), rng / seed.
    """

    def __init__(self, probability: float = 0.5, min_area: float = 0.02, max_area: float = 1 / 3,
                 min_aspect: float = 0.3, max_aspect: Optional[float] = None, mode: str = "const", min_count: int = 1,
                 max_count: Optional[int] = None, num_splits: int = 0, device: str = "cpu", rng: RngLike = None,
                 seed: Optional[int] = None) -> None:
        self.probability = probability
        self.min_area = min_area
        self.max_area = max_area
        max_aspect = max_aspect or 1 / min_aspect
        self.log_aspect_ratio = (math.log(min_aspect), math.log(max_aspect))
        self.min_count = min_count
        self.max_count = max_count or min_count
        if self.max_count < self.min_count:
            raise ValueError(f"max_count ({max_count}) must be >= min_count ({min_count})")
        self.num_splits = num_splits
        self.mode = (mode or "const").lower()
        if self.mode not in ("const", "rand", "pixel"):
            raise ValueError(f"unknown RandomErasing mode {mode!r}; expected 'const', 'rand' or 'pixel'")
        self.rand_color = self.mode == "rand"
        self.per_pixel = self.mode == "pixel"
        self.device = device
        self.rng = resolve_rng(rng, seed)

    def manual_seed(self, seed):
        self.rng = resolve_rng(seed=seed)
        return self

    def _erase(self, img, chan, img_h, img_w):
        rng = self.rng
        if rng.random() > self.probability:
            return
        area = img_h * img_w
        count = self.min_count if self.min_count == self.max_count else rng.randint(self.min_count, self.max_count)
        for _ in range(count):
            for _attempt in range(10):
                target_area = rng.uniform(self.min_area, self.max_area) * area / count
                aspect_ratio = math.exp(rng.uniform(*self.log_aspect_ratio))
                h = int(round(math.sqrt(target_area * aspect_ratio)))
                w = int(round(math.sqrt(target_area / aspect_ratio)))
                if w < img_w and h < img_h:
                    top = rng.randint(0, img_h - h)
                    left = rng.randint(0, img_w - w)
                    region = img[:, top:top + h, left:left + w]
                    if self.per_pixel:
                        region[...] = rng.normal((chan, h, w), img.dtype)
                    elif self.rand_color:
                        region[...] = rng.normal((chan, 1, 1), img.dtype)
                    else:
                        region[...] = 0
                    break

    def __call__(self, input):
        x = as_numpy(input, "RandomErasing input", writable=True)
        if (self.per_pixel or self.rand_color) and not np.issubdtype(x.dtype, np.floating):
            raise TypeError(f"RandomErasing mode {self.mode!r} fills with N(0,1) noise and needs a float "
                            f"(normalised) image, got dtype {x.dtype}")
        if x.ndim == 3:
            self._erase(x, *x.shape)
        elif x.ndim == 4:
            batch_size, chan, img_h, img_w = x.shape
            batch_start = batch_size // self.num_splits if self.num_splits > 1 else 0
            for i in range(batch_start, batch_size):
                self._erase(x[i], chan, img_h, img_w)
        else:
            raise ValueError(f"RandomErasing expects a (C, H, W) image or (B, C, H, W) batch, got shape {tuple(x.shape)}")
        return input

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.probability}, mode={self.mode}, count=({self.min_count}, {self.max_count}))"
