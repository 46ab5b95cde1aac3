"""``torch.utils.data.sampler``: the orders a loader draws its indices in, and their batching."""

from __future__ import annotations

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


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
