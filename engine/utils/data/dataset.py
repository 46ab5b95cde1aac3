"""``torch.utils.data.dataset``: the datasets (``from torch.utils.data.dataset import Dataset``)."""

from . import ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]
