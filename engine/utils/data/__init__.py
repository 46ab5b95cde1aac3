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

from ... import creation, dtypes
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset",
           "DataLoader", "random_split", "default_collate", "default_convert", "get_worker_info", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "dataset", "sampler", "dataloader", "distributed"]


class Dataset:
    """A map-style dataset: ``__getitem__(i)`` gives the i-th sample and ``__len__`` their number."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: ``__iter__`` gives the samples (lines of a file, generated data). The loader
    batches them as they come; it takes no sampler and no shuffle (the stream decides the order)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it is iterated, not indexed")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Samples that are tuples (``StackDataset(images, labels)``) or dicts (``StackDataset(x=..., y=...)``) of the
    samples of datasets of one length."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else dict(kwargs)

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


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
def _positive_int(value, name: str):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler:
    """The order of a map-style dataset's samples: ``__iter__`` gives their indices."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random order each pass; ``replacement=True`` draws ``num_samples`` indices independently; without,
    ``num_samples`` past the dataset's length runs through several permutations."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source, self.replacement, self._num_samples, self.generator = (data_source, replacement,
                                                                                 num_samples, generator)
        _positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, want = len(self.data_source), self.num_samples
        if self.replacement:
            yield from creation.randint(0, n, (want,), dtype=dtypes.int64, device="cpu",
                                        generator=self.generator).tolist()
            return
        for _ in range(want // n):
            yield from creation.randperm(n, device="cpu", generator=self.generator).tolist()
        yield from creation.randperm(n, device="cpu", generator=self.generator).tolist()[:want % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a new random order each pass."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in creation.randperm(len(self.indices), device="cpu", generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with the given (unnormalised) weights: to see a rare class as often as the
    others."""

    def __init__(self, weights, num_samples, replacement: bool = True, generator=None):
        _positive_int(num_samples, "num_samples")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = creation.as_tensor(weights.detach().cpu().numpy() if isinstance(weights, Tensor) else
                               np.asarray(weights), dtype=dtypes.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def __iter__(self):
        yield from creation.multinomial(self.weights, self.num_samples, self.replacement,
                                        generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


def _chunks(items, size, drop_last):
    """``items`` in lists of ``size``, the last one shorter unless ``drop_last``."""
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class DistributedSampler(Sampler):
    """The ``rank``-th of ``num_replicas`` equal shares of the dataset's indices (padded by repeating, or cut with
    ``drop_last``), shuffled anew at each ``set_epoch`` from ``seed + epoch``, as PyTorch's. Without a process
    group (the engine has none) ``num_replicas`` and ``rank`` must be given."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False):
        if num_replicas is None or rank is None:
            from ... import distributed

            num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
            rank = distributed.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ...random import Generator

            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = creation.randperm(n, device="cpu", generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle the next pass makes (call it before each epoch, as with PyTorch's)."""
        self.epoch = epoch


class BatchSampler(Sampler):
    """Another sampler's indices in lists of ``batch_size`` (the last one shorter unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        _positive_int(batch_size, "batch_size")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        return _chunks(self.sampler, self.batch_size, self.drop_last)

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


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


from . import dataloader, dataset, distributed, sampler  # noqa: E402 - PyTorch's submodules, by their names
