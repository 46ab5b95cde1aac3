"""``engine.utils.data``: PyTorch's map-style datasets and its ``DataLoader``, for a training loop over
mini-batches (``for x, y in DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True)``).

Batches are made in this process: ``num_workers`` and ``pin_memory`` are accepted and change nothing but speed in
PyTorch, so the batches are the same. A shuffle or a split draws from ``generator=`` (an ``engine.Generator``) or
the engine's global generator, so a seed repeats it (the order differs from PyTorch's, whose generator is
another). A ``TensorDataset`` is batched by one gather per tensor rather than item by item; the batches are the
same as the item-by-item collation's.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from .. import creation, dtypes
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "random_split", "default_collate"]


class Dataset:
    """A map-style dataset: ``__getitem__(i)`` gives the i-th sample and ``__len__`` their number."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples ``(t[i] for t in tensors)``: the tensors' first dimensions are the samples."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor) or t.dim() == 0:
                raise ValueError("TensorDataset takes tensors of at least one dimension (the samples)")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors: "
                             + ", ".join(str(t.shape[0]) for t in tensors) + " samples")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = int(np.searchsorted(self.cumulative_sizes, index, side="right"))
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Non-overlapping random subsets of the given lengths, or of the given fractions of the dataset (the
    remainder shared one by one from the first, as PyTorch shares it)."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, f in enumerate(lengths):
            if not 0 <= f <= 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in lengths):
        raise ValueError(f"random_split: lengths must be whole numbers of samples >= 0 or fractions adding up to 1, "
                         f"got {lengths}")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = creation.randperm(n, device="cpu", generator=generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


def default_collate(batch):
    """Samples into a batch, as PyTorch's: tensors stacked (a new first dimension), NumPy arrays and numbers made
    tensors, and tuples, lists and dicts collated field by field (a tuple's fields come back as a list)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return creation.stack(batch, 0)
    if isinstance(elem, np.ndarray):
        return creation.stack([creation.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return creation.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return creation.tensor(batch)
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, numbers.Integral):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple keeps its type
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if any(len(s) != len(elem) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, NumPy arrays, numbers, dicts or lists; found "
                    f"{type(elem).__name__}")


class DataLoader:
    """Iterates a dataset in batches of ``batch_size`` samples (in order, or in a new random order each epoch with
    ``shuffle=True``), the last one smaller unless ``drop_last``; ``batch_size=None`` gives the samples one by one,
    uncollated. ``collate_fn`` makes a batch of a list of samples (``default_collate`` by default)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        # PyTorch's parameters, each taken by name (a misspelt one is a TypeError, not ignored); those of worker
        # processes and pinned memory change only PyTorch's speed, and the batches here are made in this process
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        self.collate_fn, self.generator = collate_fn, generator
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn

    def _order(self) -> list:
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        return creation.randperm(n, device="cpu", generator=self.generator).tolist() if self.shuffle else list(range(n))

    def _batches(self):
        if self.batch_sampler is not None:
            yield from (list(b) for b in self.batch_sampler)
            return
        order, size = self._order(), self.batch_size
        end = len(order) - len(order) % size if self.drop_last else len(order)
        for start in range(0, end, size):
            yield order[start:start + size]

    def __iter__(self):
        if self.batch_size is None and self.batch_sampler is None:
            for i in self._order():
                sample = self.dataset[i]
                yield self.collate_fn(sample) if self.collate_fn is not None else sample
            return
        fast = self.collate_fn is None and type(self.dataset) is TensorDataset
        for indices in self._batches():
            if fast:  # one gather per tensor: the same batch as stacking the samples
                yield [t[creation.tensor(indices, dtype=dtypes.int64, device=t.device)]
                       for t in self.dataset.tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[i] for i in indices])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
