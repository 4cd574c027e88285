"""AugMixDataset: clean + augmented splits of each sample for the JSD loss (timm semantics)."""
from __future__ import annotations

from typing import Any

__all__ = ["AugMixDataset"]


class AugMixDataset:
    """Wraps a dataset whose ``transform`` is the 3-tuple from ``create_transform(..., separate=True)``.

    ``dataset[i]`` -> ``((clean, aug_1, ..., aug_{num_splits-1}), target)``: the base transform
    (crop/flip) runs once, the first split is only normalised, the others run the augmentation
    (AugMix / RandAugment ...) and then the normalisation.  ``fast_collate`` de-interleaves the
    tuples into one batch of ``num_splits * B`` samples, split-major.

    Args:
        dataset: the dataset; its ``transform`` must be the 3-tuple.
        num_splits: number of splits (the clean one included).
    """

    def __init__(self, dataset: Any, num_splits: int = 2) -> None:
        if num_splits < 2:
            raise ValueError(f"num_splits must be >= 2, got {num_splits}")
        self.augmentation = None
        self.normalize = None
        self.dataset = dataset
        if getattr(self.dataset, "transform", None) is not None:
            self._set_transforms(self.dataset.transform)
        self.num_splits = num_splits

    def _set_transforms(self, x):
        if not (isinstance(x, (list, tuple)) and len(x) == 3):
            raise ValueError("AugMixDataset expects a tuple of 3 transforms (create_transform(..., separate=True))")
        self.dataset.transform = x[0]
        self.augmentation = x[1]
        self.normalize = x[2]

    @property
    def transform(self):
        return self.dataset.transform

    @transform.setter
    def transform(self, x):
        self._set_transforms(x)

    def _normalize(self, x):
        return x if self.normalize is None else self.normalize(x)

    def __getitem__(self, i):
        x, y = self.dataset[i]
        x_list = [self._normalize(x)]
        for _ in range(self.num_splits - 1):
            x_list.append(self._normalize(self.augmentation(x)))
        return tuple(x_list), y

    def __len__(self):
        return len(self.dataset)
