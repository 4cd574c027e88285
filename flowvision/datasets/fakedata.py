"""``FakeData``: random images, the same for an index on every call."""
from typing import Any, Callable, Optional, Tuple

import numpy as np
from PIL import Image

from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """Random PIL images and integer targets, deterministic per index.

    Args:
        size: number of samples.
        image_size: ``(C, H, W)``; C is 1 (mode ``L``), 3 (``RGB``) or 4 (``RGBA``).
        num_classes: targets are drawn from ``range(num_classes)``.
        transform: applied to the image.
        target_transform: applied to the target.
        random_offset: added to the index to seed a sample.

    Images come from standard-normal noise turned into a PIL image like ``ToPILImage`` does (values scaled by
    255 and wrapped to uint8). The generator is numpy's, so pixel values differ from torchvision's (which
    draws from torch's generator); shapes, modes, types and per-index determinism are the same.
    """

    def __init__(self, size: int = 1000, image_size: Tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 random_offset: int = 0) -> None:
        super().__init__(transform=transform, target_transform=target_transform)
        if len(image_size) != 3 or image_size[0] not in (1, 3, 4):
            raise ValueError(f"image_size must be (C, H, W) with C in (1, 3, 4), got {image_size}")
        self.size = size
        self.num_classes = num_classes
        self.image_size = tuple(image_size)
        self.random_offset = random_offset

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, int target)`` for ``index``."""
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng = np.random.default_rng(index + self.random_offset)
        c, h, w = self.image_size
        noise = rng.standard_normal((h, w, c), dtype=np.float32)
        target = int(rng.integers(0, self.num_classes))
        # ToPILImage's float path: multiply by 255 and cast (wrapping like torch's byte conversion)
        pixels = (noise * 255).astype(np.int64).astype(np.uint8)
        img = Image.fromarray(pixels[:, :, 0] if c == 1 else pixels)  # uint8 HW -> L, HWC -> RGB / RGBA
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return self.size
