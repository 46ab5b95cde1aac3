"""``engine.utils.data``'s samplers and stream datasets, as PyTorch's: ``SequentialSampler``, ``RandomSampler``
(with and without replacement, ``num_samples``), ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``, ``IterableDataset``/``ChainDataset``, ``StackDataset``, ``default_convert``. Before, a script
that imported any of them (``from torch.utils.data import RandomSampler``, a train/validation split by
``SubsetRandomSampler``, class balancing by ``WeightedRandomSampler``, a stream of generated data) stopped with
ImportError, and ``loader.sampler`` was None.

Where the order depends on the random generator (the engine's is not PyTorch's), what is held to PyTorch is the
structure: counts, lengths, which indices, batch sizes; where it does not, the batches themselves."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import engine


def _squares(lib):
    """A stream of i * i for i < n, as each library's IterableDataset."""

    class Squares(lib.utils.data.IterableDataset):
        def __init__(self, n, with_len=True):
            self.n, self.with_len = n, with_len

        def __iter__(self):
            return iter(float(i * i) for i in range(self.n))

        def __len__(self):
            if not self.with_len:
                raise TypeError("Squares has no length")
            return self.n

    return Squares


def _structure(lib):
    """What both libraries must agree on, as plain values."""
    D = lib.utils.data
    Squares = _squares(lib)
    ds = D.TensorDataset(lib.arange(10.0), lib.arange(10))
    out = {}
    loader = D.DataLoader(ds, batch_size=4)
    out["sequential"] = [b[1].tolist() for b in loader]
    out["sampler types"] = (type(loader.sampler).__name__, type(loader.batch_sampler).__name__, len(loader))
    shuffled = D.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
    seen = sum((b[1].tolist() for b in shuffled), [])
    out["shuffled"] = (type(shuffled.sampler).__name__, len(shuffled), [len(b[1]) for b in shuffled],
                       len(set(seen)), set(seen) <= set(range(10)))  # 8 distinct indices of the 10
    lib.manual_seed(0)
    r = D.RandomSampler(ds, num_samples=25)
    drawn = list(r)
    out["random 25"] = (len(r), len(drawn), Counter(Counter(drawn).values()) == Counter({3: 5, 2: 5}))
    lib.manual_seed(0)
    rr = list(D.RandomSampler(ds, replacement=True, num_samples=1000))
    out["with replacement"] = (len(rr), min(rr) >= 0, max(rr) <= 9, len(set(rr)))
    sub = list(D.SubsetRandomSampler([3, 5, 7]))
    out["subset"] = sorted(sub)
    lib.manual_seed(0)
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400))
    counts = Counter(w)
    out["weighted"] = (sorted(counts), 0.6 < counts[3] / 400 < 0.9)
    out["weighted no replacement"] = sorted(D.WeightedRandomSampler([1.0, 1, 1, 1], 4, replacement=False))
    out["batch sampler"] = (list(D.BatchSampler(range(10), 3, False)), list(D.BatchSampler(range(10), 3, True)),
                            len(D.BatchSampler(range(10), 3, False)), len(D.BatchSampler(range(10), 3, True)))
    out["batch sampler loader"] = [b[1].tolist() for b in D.DataLoader(
        ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 3, drop_last=False))]
    out["sampler loader"] = [b[1].tolist() for b in D.DataLoader(ds, batch_size=2, sampler=[9, 0, 4, 4, 1])]
    stream = D.DataLoader(Squares(7), batch_size=3)
    out["stream"] = ([b.tolist() for b in stream], len(stream), str(next(iter(stream)).dtype).rsplit(".", 1)[1])
    out["stream drop_last"] = [b.tolist() for b in D.DataLoader(Squares(7), batch_size=3, drop_last=True)]
    out["stream unbatched"] = [s.tolist() if hasattr(s, "tolist") else s
                               for s in D.DataLoader(Squares(3), batch_size=None)]
    out["chain"] = [b.tolist() for b in D.DataLoader(Squares(2) + Squares(3), batch_size=2)]
    out["chain len"] = len(D.ChainDataset([Squares(2), Squares(3)]))
    stack = D.StackDataset(lib.arange(3), lib.arange(3) * 10)
    out["stack"] = (len(stack), [int(v) for v in stack[2]])
    stack_d = D.StackDataset(x=lib.arange(3), y=lib.arange(3) * 10)
    out["stack dict"] = {k: int(v) for k, v in stack_d[1].items()}
    conv = D.default_convert([np.arange(2), (np.float64(1.5), "a"), {"k": np.ones(1, dtype=np.float32)}])
    out["default_convert"] = (type(conv[0]).__name__, conv[0].tolist(), type(conv[1]).__name__,
                              float(conv[1][0]), conv[1][1], conv[2]["k"].tolist())
    out["unbatched map-style"] = [type(s).__name__ for s in D.DataLoader([np.ones(2), np.zeros(2)], batch_size=None)]
    out["worker info"] = D.get_worker_info()
    return out


def _refusals(lib):
    D = lib.utils.data
    Squares = _squares(lib)
    ds = D.TensorDataset(lib.arange(4.0))
    calls = {
        "stream shuffle": lambda: D.DataLoader(Squares(3), shuffle=True),
        "stream sampler": lambda: D.DataLoader(Squares(3), sampler=[0, 1]),
        "stream no len": lambda: len(D.DataLoader(Squares(3, with_len=False), batch_size=2)),
        "num_samples 0": lambda: D.RandomSampler(ds, num_samples=0),
        "replacement not bool": lambda: D.RandomSampler(ds, replacement=1),
        "weights 2-d": lambda: D.WeightedRandomSampler([[1.0, 2.0]], 2),
        "batch_size 0": lambda: D.BatchSampler(range(3), 0, False),
        "drop_last not bool": lambda: D.BatchSampler(range(3), 2, 1),
        "stack mixed": lambda: D.StackDataset(lib.arange(3), y=lib.arange(3)),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except (ValueError, TypeError) as e:
            out[name] = (type(e).__name__, str(e).split(",")[0].replace("torch.", "").replace("engine.", ""))
    return out


def test_samplers_and_streams():
    s = _structure(engine)
    assert s["sequential"] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert s["sampler types"] == ("SequentialSampler", "BatchSampler", 3)
    assert s["shuffled"] == ("RandomSampler", 2, [4, 4], 8, True)
    assert s["random 25"] == (25, 25, True)  # two whole permutations and half of a third
    assert s["with replacement"][:3] == (1000, True, True) and s["with replacement"][3] == 10
    assert s["subset"] == [3, 5, 7]
    assert s["weighted"] == ([1, 3], True) and s["weighted no replacement"] == [0, 1, 2, 3]
    assert s["batch sampler"] == ([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]], [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 4, 3)
    assert s["sampler loader"] == [[9, 0], [4, 4], [1]]
    assert s["stream"] == ([[0.0, 1.0, 4.0], [9.0, 16.0, 25.0], [36.0]], 3, "float64")
    assert s["stream drop_last"] == [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]
    assert s["chain"] == [[0.0, 1.0], [0.0, 1.0], [4.0]] and s["chain len"] == 5
    assert s["stack"] == (3, [2, 20]) and s["stack dict"] == {"x": 1, "y": 10}
    assert s["default_convert"] == ("Tensor", [0, 1], "list", 1.5, "a", [1.0])
    assert s["unbatched map-style"] == ["Tensor", "Tensor"] and s["worker info"] is None


@pytest.mark.torch
def test_the_structure_is_pytorchs():
    torch = pytest.importorskip("torch")
    assert _structure(engine) == _structure(torch)


def test_the_refusals():
    r = _refusals(engine)
    assert r["stream shuffle"] == ("ValueError", "DataLoader with IterableDataset: expected unspecified shuffle "
                                                  "option")
    assert r["stream no len"] == ("TypeError", "Squares has no length")
    assert r["num_samples 0"] == ("ValueError", "num_samples should be a positive integer value")
    assert r["weights 2-d"][0] == "ValueError" and r["drop_last not bool"][0] == "ValueError"


@pytest.mark.torch
def test_the_refusals_are_pytorchs():
    torch = pytest.importorskip("torch")
    assert _refusals(engine) == _refusals(torch)
