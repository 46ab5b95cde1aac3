"""``torch.utils.data.dataloader``: the loader and its collation."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _chunks

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


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


def default_convert(data):
    """NumPy arrays and numbers (inside lists, tuples and dicts too) as tensors, not batched: what the loader does
    to samples with ``batch_size=None`` and no ``collate_fn``."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return creation.as_tensor(data)
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return creation.as_tensor(np.asarray(data))
    if isinstance(data, Mapping):
        return {key: default_convert(v) for key, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, tuple):
        return [default_convert(v) for v in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(v) for v in data]
    return data


def get_worker_info():
    """None: the batches are made in this process (there are no worker processes)."""
    return None


# ----------------------------------------------------------------------------- samplers: which samples, in which order


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
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # (a stream: its own order)
            for name, value in (("shuffle", shuffle if shuffle else None), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                     f"{name}={value}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, bool(drop_last))
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        self.collate_fn, self.generator = collate_fn, generator
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn

    def __iter__(self):
        if self.batch_size is None and self.batch_sampler is None:  # samples one by one, not batched
            convert = self.collate_fn or default_convert
            samples = iter(self.dataset) if self._iterable else (self.dataset[i] for i in self.sampler)
            for sample in samples:
                yield convert(sample)
            return
        collate = self.collate_fn or default_collate
        if self._iterable:
            for batch in _chunks(self.dataset, self.batch_size, self.drop_last):  # (a stream: as they come)
                yield collate(batch)
            return
        fast = self.collate_fn is None and type(self.dataset) is TensorDataset
        for indices in self.batch_sampler:
            indices = list(indices)
            if fast:  # one gather per tensor: the same batch as stacking the samples
                yield [t[creation.tensor(indices, dtype=dtypes.int64, device=t.device)]
                       for t in self.dataset.tensors]
            else:
                yield collate([self.dataset[i] for i in indices])

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)  # (a stream without __len__ has no length: TypeError, as in PyTorch)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
