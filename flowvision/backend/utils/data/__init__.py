"""flowvision.backend.utils.data: torch.utils.data's datasets, samplers, collation and DataLoader."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset,  # noqa: F401
                      Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler, BatchSampler, DistributedSampler)
from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info, WorkerInfo  # noqa: F401
from . import distributed  # noqa: F401

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "default_collate", "default_convert",
           "DataLoader", "get_worker_info", "WorkerInfo"]
