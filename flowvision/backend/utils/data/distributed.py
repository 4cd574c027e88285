"""``utils.data.distributed.DistributedSampler`` (torch's import path)."""
from .sampler import DistributedSampler  # noqa: F401
