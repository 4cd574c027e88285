"""v2 temporal transforms of videos."""
from __future__ import annotations

import numpy as np

from .. import _functional_tensor as F_t
from . import functional as F
from ._transform import Transform
from .tv_tensors import Video


class UniformTemporalSubsample(Transform):
    """Keep ``num_samples`` frames of a video, evenly spaced in time.

    Args:
        num_samples (int): number of frames to keep.
    """

    _transformed_types = (Video,)

    def __init__(self, num_samples: int) -> None:
        self.num_samples = num_samples

    def transform(self, inpt, params):
        a = F._plain(inpt).numpy()
        t = a.shape[-4]
        idx = np.linspace(0, t - 1, self.num_samples).astype(np.int64)
        return F._rewrap(F_t.from_numpy(np.take(a, idx, axis=-4)), inpt)
