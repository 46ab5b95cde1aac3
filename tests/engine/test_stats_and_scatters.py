"""``mode``, ``nanmedian``, ``nanquantile`` and ``select_scatter``/``slice_scatter``/``diagonal_scatter``, missing
before (AttributeError): values and gradients against PyTorch 2.13 over random tensors (NaN among them), and by
hand. Writing them found that ``median()`` and ``max()`` of all elements did not share their gradient as
PyTorch's: ``median()`` gave a tie's whole gradient to one of the equal elements (PyTorch shares it evenly, as
``max()`` does), and ``max()``/``median()`` of a tensor with a NaN gave every element a NaN gradient (PyTorch's
goes evenly to the NaNs).

Where values tie, which of the equal elements PyTorch's ``median``/``nanmedian`` along a dimension or its quantiles
pick is its sort's business: the sweep compares their values on tensors with ties, and their indices and
gradients on tensors without (and no index for a slice that is all NaN, where the engine gives the first).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine


def _programs(seed, n):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        shape = tuple(int(s) for s in rng.integers(1, 6, rng.integers(1, 4)))
        ties = bool(rng.random() < 0.5)
        x = rng.integers(-2, 3, shape).astype(float) if ties else rng.standard_normal(shape)
        if rng.random() < 0.4:
            x = np.where(rng.random(shape) < 0.3, np.nan, x)
        dim = int(rng.integers(-len(shape), len(shape)))
        keep = bool(rng.random() < 0.5)
        q = float(rng.random())
        how = str(rng.choice(["linear", "lower", "higher", "nearest", "midpoint"]))
        d = int(rng.integers(0, len(shape)))
        i = int(rng.integers(0, shape[d]))
        start, step = int(rng.integers(0, shape[d])), int(rng.integers(1, 3))
        sliced = list(shape)
        sliced[d] = len(range(start, shape[d], step))
        offset = int(rng.integers(-1, 2))
        sources = (rng.standard_normal(shape[:d] + shape[d + 1:]), rng.standard_normal(sliced),
                   np.diagonal(np.zeros(shape), offset, 0, len(shape) - 1).copy() + rng.standard_normal()
                   if len(shape) > 1 else None)
        yield shape, ties, x, dim, keep, q, how, d, i, start, step, offset, sources


def _calls(lib, program):
    shape, ties, x0, dim, keep, q, how, d, i, start, step, offset, (s0, s1, s2) = program
    calls = {
        "nanmedian": lambda x: x.nanmedian(),
        "median": lambda x: x.median(),
        "max": lambda x: x.max(),
        "nanmedian dim": lambda x: x.nanmedian(dim, keep),
        "nanquantile": lambda x: x.nanquantile(q, dim, keep, interpolation=how),
        "nanquantile all": lambda x: lib.nanquantile(x, lib.tensor([0.1, 0.5, 0.9], dtype=lib.float64)),
        "select_scatter": lambda x: lib.select_scatter(x, lib.tensor(s0, requires_grad=True), d, i),
        "slice_scatter": lambda x: x.slice_scatter(lib.tensor(s1, requires_grad=True), d, start, None, step),
    }
    if not np.isnan(x0).any():
        calls["mode"] = lambda x: x.mode(dim, keep)
    if s2 is not None:
        calls["diagonal_scatter"] = lambda x: lib.diagonal_scatter(x, lib.tensor(s2, requires_grad=True), offset, 0,
                                                                   len(shape) - 1)
    return calls


def _run(lib, program, name):
    x = lib.tensor(program[2], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _calls(lib, program)[name](x)
    outs = list(out) if isinstance(out, tuple) else [out]
    first = outs[0]
    (first * lib.tensor(np.cos(np.arange(first.numel())).reshape(tuple(first.shape)))).nansum().backward()
    return [t.detach().numpy() for t in outs] + [x.grad.numpy()]


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1])
def test_random_calls_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    different, compared = [], 0
    for program in _programs(seed, 300):
        ties = program[1]
        for name in _calls(engine, program):
            ours, theirs = _run(engine, program, name), _run(torch, program, name)
            picks = name in ("nanmedian dim", "nanquantile", "nanquantile all", "mode")
            if ties and picks:  # (which equal element is picked: the values only)
                ours, theirs = ours[:1], theirs[:1]
            elif name == "nanmedian dim" and np.isnan(program[2]).all(axis=program[3]).any():
                ours, theirs = ours[:1] + ours[2:], theirs[:1] + theirs[2:]  # (an all-NaN slice's index: any)
            compared += 1
            for a, b in zip(ours, theirs):
                if a.shape != b.shape or not np.allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True):
                    different.append((name, program[:5]))
                    break
    assert different == []
    assert compared > 2000


def test_mode_by_hand():
    x = engine.tensor([[1.0, 3.0, 3.0, 2.0, 2.0], [5.0, 5.0, 1.0, 1.0, 7.0]], requires_grad=True)
    values, indices = x.mode(1)
    assert values.tolist() == [2.0, 1.0] and indices.tolist() == [4, 3]  # the smallest of the most frequent, last
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0, 0.0]]


def test_nan_ignoring_statistics_by_hand():
    x = engine.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan")] * 4])
    values, indices = x.nanmedian(1)
    assert values[0].item() == 2.0 and indices[0].item() == 3 and np.isnan(values[1].item())
    assert engine.tensor([1.0, float("nan"), 3.0, 2.0]).nanquantile(0.25).item() == 1.5
    assert np.isnan(engine.tensor([float("nan")] * 2).nanquantile(0.3).item())


def test_a_tie_or_a_nan_shares_the_gradient_of_a_whole_reduction():
    x = engine.tensor([1.0, 2.0, 2.0, 2.0, 3.0], requires_grad=True)
    x.median().backward()
    assert x.grad.tolist() == pytest.approx([0.0, 1 / 3, 1 / 3, 1 / 3, 0.0])
    assert x.median().grad_fn.name() == "MedianBackward0"
    y = engine.tensor([1.0, float("nan"), 2.0, float("nan")], requires_grad=True)
    y.max().backward()
    assert y.grad.tolist() == [0.0, 0.5, 0.0, 0.5]
    y.grad = None
    y.nanmedian().backward()
    assert y.grad.tolist() == [1.0, 0.0, 0.0, 0.0] and y.nanmedian().grad_fn.name() == "NanmedianBackward0"


def test_scatters_write_into_a_copy():
    x = engine.zeros(2, 3, requires_grad=True)
    src = engine.tensor([7.0, 8.0], requires_grad=True)
    out = x.select_scatter(src, 1, 2)
    assert out.tolist() == [[0.0, 0.0, 7.0], [0.0, 0.0, 8.0]] and x.tolist() == [[0.0] * 3] * 2
    (out * engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert src.grad.tolist() == [3.0, 6.0] and x.grad.tolist() == [[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]]
    assert out.grad_fn.name() == "SelectScatterBackward0"
    assert engine.zeros(4).slice_scatter(engine.ones(2), start=1, step=2).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert engine.zeros(2, 2).diagonal_scatter(engine.tensor([1.0, 2.0])).tolist() == [[1.0, 0.0], [0.0, 2.0]]
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice of self"):
        engine.zeros(2, 3).select_scatter(engine.ones(3), 1, 0)
