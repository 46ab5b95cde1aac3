"""An index out of range on a GPU: CuPy wraps an integer-array index past either end round (its documented
difference from NumPy, which the stand-in now models), so a label past the number of classes trained silently on
another class. The engine checks on the device without waiting for it and raises at the next point the host waits
(engine/_deferred.py), as PyTorch's device-side assert does: here on the CuPy stand-in, which records every host
synchronisation (none may be added by a check), and on a real GPU where there is one. On the CPU the refusals are
immediate, as before."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import _deferred


def _cases(device):
    x = engine.randn(4, 5, device=device)
    table = engine.randn(6, 3, device=device)

    def idx(values):
        return engine.tensor(values, device=device)

    return {
        "cross_entropy": (lambda bad: F.cross_entropy(x, idx([0, 1, 7 if bad else 2, 3])), IndexError,
                          "Target out of bounds"),
        "nll_loss": (lambda bad: F.nll_loss(x, idx([0, -1 if bad else 1, 2, 3])), IndexError, "Target out of bounds"),
        "embedding": (lambda bad: F.embedding(idx([[0, 6 if bad else 5]]), table).sum(), IndexError,
                      "index out of range in self"),
        "getitem": (lambda bad: x[idx([0, 9 if bad else 3])].sum(), IndexError, "index out of range"),
        "getitem, second dimension": (lambda bad: x[:, idx([-6 if bad else -5])].sum(), IndexError,
                                      "for dimension 1 with size 5"),
        "index_select": (lambda bad: x.index_select(1, idx([5 if bad else 4])).sum(), IndexError,
                         "index out of range"),
        "gather": (lambda bad: x.gather(1, idx([[5 if bad else 4]] * 4)).sum(), RuntimeError, "gather()"),
        "take": (lambda bad: x.take(idx([20 if bad else 19])).sum(), IndexError, "take()"),
        "setitem": (lambda bad: _written(x.clone(), idx([4 if bad else 3])), IndexError, "index out of range"),
        "scatter_add": (lambda bad: x.scatter_add(0, idx([[4 if bad else 3] * 5]), engine.ones(1, 5, device=device))
                        .sum(), RuntimeError, "scatter_add()"),
    }


def _written(t, where):
    t[where] = 0.0
    return t.sum()


@pytest.mark.parametrize("name", sorted(_cases("cpu")))
def test_an_index_out_of_range_on_the_gpu_is_raised_at_the_next_host_read(cuda_device, name):
    from tests import fake_cupy

    make, error, words = _cases(cuda_device)[name]
    fake_cupy.syncs.clear()
    good = make(False)
    assert good.item() == good.item()  # (in range: nothing raised)
    fake_cupy.syncs.clear()
    out = make(True)  # (no error yet: the device has not been asked)
    assert fake_cupy.syncs == [], fake_cupy.syncs  # the check waited for nothing
    with pytest.raises(error, match=words) as raised:
        out.item()
    assert "raised at the next point the host waited for the device" in str(raised.value)
    assert make(False).item() == good.item()  # the failure was reported once; the next read is clean


@pytest.mark.parametrize("name", sorted(_cases("cpu")))
def test_on_the_cpu_the_same_index_is_refused_at_once(name):
    make, error, _ = _cases("cpu")[name]
    with pytest.raises(error):
        make(True)
    assert np.isfinite(make(False).item())


def test_every_point_that_waits_for_the_device_reports_it(cuda_device):
    x = engine.randn(3, device=cuda_device)
    for read in (lambda t: t.item(), lambda t: bool(t), lambda t: t.tolist(), lambda t: t.cpu(),
                 lambda t: t.numpy(force=True), lambda t: engine.cuda.synchronize()):
        picked = x[engine.tensor([3], device=cuda_device)].sum()
        with pytest.raises(IndexError, match="index out of range"):
            read(picked)
    assert not _deferred._first  # (nothing left pending)


def test_targets_equal_to_ignore_index_are_not_out_of_range(cuda_device):
    x = engine.randn(3, 4, device=cuda_device)
    loss = F.cross_entropy(x, engine.tensor([0, -100, 3], device=cuda_device))
    assert np.isfinite(loss.item())
    loss = F.cross_entropy(x, engine.tensor([0, 7, 3], device=cuda_device), ignore_index=7)
    assert np.isfinite(loss.item())


def test_the_checks_keep_no_more_than_their_bound_when_nothing_is_read(cuda_device):
    x = engine.randn(3, device=cuda_device)
    for _ in range(_deferred._MAX_MESSAGES + 10):
        x[engine.tensor([0], device=cuda_device)]
    assert len(_deferred._messages) <= _deferred._MAX_MESSAGES and len(_deferred._first) == 1
    assert x.sum().item() == x.sum().item()


def test_scatter_takes_no_index_from_the_end_as_pytorchs():
    x = engine.zeros(4, 5)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 4"):
        x.scatter(0, engine.tensor([[-1] * 5]), 1.0)  # (it wrote the last row)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x.scatter_add(0, engine.tensor([[4] * 5]), engine.ones(1, 5))  # (NumPy's IndexError, "axis")
    assert x.scatter(1, engine.tensor([[4], [0], [1], [2]]), 1.0).sum().item() == 4.0


@pytest.mark.parametrize("name", ["binary_cross_entropy", "multinomial", "multinomial, a row of zeros"])
def test_value_checks_on_the_gpu_are_deferred_too(cuda_device, name):
    from tests import fake_cupy

    def make(device, bad):
        if name == "binary_cross_entropy":
            p = engine.tensor([0.2, 1.5 if bad else 0.5], device=device)
            return F.binary_cross_entropy(p, engine.tensor([0.0, 1.0], device=device))
        weights = [[0.2, 0.8], [0.0, 0.0] if bad else [0.5, 0.5]] if "zeros" in name else [[0.2, -0.1 if bad else 0.8]]
        return engine.multinomial(engine.tensor(weights, device=device), 1).sum()

    words = {"binary_cross_entropy": "all elements of input should be between 0 and 1",
             "multinomial": "probability tensor contains either `inf`, `nan` or element < 0",
             "multinomial, a row of zeros": r"invalid multinomial distribution \(sum of probabilities <= 0\)"}[name]
    with pytest.raises(RuntimeError, match=words):
        make("cpu", True)
    fake_cupy.syncs.clear()
    out = make(cuda_device, True)
    assert fake_cupy.syncs == []
    with pytest.raises(RuntimeError, match=words):
        out.item()
    assert np.isfinite(make(cuda_device, False).item())
