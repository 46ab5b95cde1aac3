"""``engine.utils.data``: PyTorch's map-style datasets and its ``DataLoader``, for a training loop over
mini-batches (``for x, y in DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True)``).

Batches are made in this process: ``num_workers`` and ``pin_memory`` are accepted and change nothing but speed in
PyTorch, so the batches are the same. A shuffle or a split draws from ``generator=`` (an ``engine.Generator``) or
the engine's global generator, so a seed repeats it (the order differs from PyTorch's, whose generator is
another). A ``TensorDataset`` is batched by one gather per tensor rather than item by item; the batches are the
same as the item-by-item collation's.
"""

from . import dataloader, dataset, distributed, sampler
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset",
           "DataLoader", "random_split", "default_collate", "default_convert", "get_worker_info", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "dataset", "sampler", "dataloader", "distributed"]
