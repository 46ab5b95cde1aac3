"""``as_strided`` and ``unfold``, views of a tensor's memory with strides of one's choosing, held to PyTorch by
random programs: their values, shapes, strides and storage offsets, the refusals of views outside the memory, the
gradient (where the view shows an element twice, of a tensor that is itself a view, or expanded), and writes
through them. ``unfold`` was a copy before, so a write into a window did not reach the tensor."""

from __future__ import annotations

import random

import numpy as np
import pytest

import engine
from tests.engine.test_view_writes_random import _against_torch, _view, _views

needs_torch = pytest.mark.torch


def _strided(rng, storage, view_shape):
    """A random ``as_strided`` of a view (or an ``unfold``): ``("as_strided", (size, stride, offset))`` within a
    storage of ``storage`` elements (now and then outside it, or with no offset given), or ``("unfold", ...)``."""
    if view_shape and rng.random() < 0.4:
        d = rng.randrange(len(view_shape))
        n = view_shape[d]
        size = rng.randint(0, n) if rng.random() < 0.9 else n + 1
        return ("unfold", (d - len(view_shape) if rng.random() < 0.3 else d, size, rng.randint(1, 3)))
    for _ in range(20):
        nd = rng.randint(0, 3)
        size = tuple(rng.randint(1, 3) for _ in range(nd))
        stride = tuple(rng.randint(0, 3) for _ in range(nd))
        offset = rng.randrange(storage) if rng.random() < 0.8 else None
        need = (offset or 0) + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if need <= storage or rng.random() < 0.05:
            return ("as_strided", (size, stride, offset))
    return ("as_strided", ((1,), (1,), 0))


def _apply(t, op):
    kind, a = op
    if kind == "unfold":
        return t.unfold(*a)
    size, stride, offset = a
    return t.as_strided(size, stride) if offset is None else t.as_strided(size, stride, offset)


def _programs(seed, n):
    rng = random.Random(seed)
    for _ in range(n):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
        ops, vshape = _views(rng, shape) if rng.random() < 0.6 else ([], shape)
        expand = rng.random() < 0.15
        if expand:
            vshape = (2, *vshape)
        first = _strided(rng, int(np.prod(shape)), vshape)
        yield shape, ops, expand, first, rng.random() < 0.3, rng.random() < 0.5


def _read_program(lib, program, seed):
    """A strided view (or two: an ``unfold`` of an ``as_strided``, ...) of a view of a tensor, a loss of it: the
    view's geometry and values, and the gradient."""
    shape, ops, expand, first, again, square = program
    draws = np.random.default_rng(seed)
    w = lib.tensor(draws.standard_normal(shape), requires_grad=True)
    v = w * 1
    for op in ops:
        v = _view(v, op)
    if expand:
        v = v.unsqueeze(0).expand(2, *v.shape)
    s = _apply(v, first)
    if again and s.dim():
        s = s.unfold(0, 1, 1) if s.shape[0] else s
    geometry = (tuple(s.shape), s.stride(), s.storage_offset())
    loss = (s * s if square else s * lib.tensor(draws.standard_normal(tuple(s.shape)))).sum()
    loss.backward()
    return "ok", np.array(geometry, dtype=object), s.detach().numpy(), w.grad.numpy()


def _same_geometry(a, b):
    return all(np.array_equal(x, y) if isinstance(x, np.ndarray) and x.dtype != object else x == y
               for x, y in zip(a, b))


def _geometry(out):
    """Shape, storage offset and the strides of the dimensions with more than one element (PyTorch's and NumPy's
    strides of a dimension of one element, or of an empty tensor, are each library's own choice)."""
    shape, stride, offset = out[1]
    empty = 0 in shape
    return shape, offset, tuple(None if n == 1 or empty else s for n, s in zip(shape, stride))


@needs_torch
@pytest.mark.parametrize("seed", [0, 1])
def test_strided_views_read_as_pytorchs(seed):
    """Values and gradient of 1,500 random ``as_strided``/``unfold`` views of views (slices, transposes, diagonals,
    expanded ones; now and then an ``unfold`` of the result) against PyTorch's, and the same refusals (outside the
    memory, ``unfold`` of a window larger than the dimension); then their shapes, strides and storage offsets."""
    torch = pytest.importorskip("torch")
    programs = list(_programs(seed, 1500))
    different, outcomes = _against_torch(torch, programs, lambda lib, p, s: _without_geometry(
        _read_program(lib, p, s)))
    assert different == []
    assert outcomes["ok"] > 1200 and outcomes["raises"] > 20, outcomes
    geometry_different = []
    for i, program in enumerate(programs):
        try:
            theirs = _geometry(_read_program(torch, program, i))
        except RuntimeError:
            continue
        ours = _geometry(_read_program(engine, program, i))
        if theirs != ours:
            geometry_different.append((program, theirs, ours))
    assert geometry_different == []


def _without_geometry(out):
    return (out[0], *out[2:])


def _injective(op, view_shape):
    """Whether the strided view shows no memory place twice (a write through it is then PyTorch's one result)."""
    kind, a = op
    if kind == "unfold":
        return a[1] <= a[2] or a[1] == 0
    size, stride, _ = a
    places = np.zeros(size, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        places = places + (np.arange(n) * s).reshape((1,) * k + (n,) + (1,) * (len(size) - k - 1))
    return len(set(places.reshape(-1).tolist())) == places.size


def _write_programs(seed, n):
    rng = random.Random(seed)
    made = 0
    while made < n:
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
        ops, vshape = _views(rng, shape) if rng.random() < 0.5 else ([], shape)
        op = _strided(rng, int(np.prod(shape)), vshape)
        if not _injective(op, vshape):
            continue
        made += 1
        yield (shape, ops, op, rng.choice(["copy_", "add_", "mul_", "setall", "exp_", "pow_w"]),
               rng.choice(["base", "view", "both"]), rng.random() < 0.3, rng.random() < 0.3)


def _run_write(lib, program, seed):
    shape, ops, op, write, read, base_requires_grad, then_base = program
    draws = np.random.default_rng(seed)
    x = lib.tensor(draws.standard_normal(shape))
    h = x * lib.tensor(1.0, requires_grad=True) if base_requires_grad else x * 1
    v = h
    for view_op in ops:
        v = _view(v, view_op)
    v = _apply(v, op)
    w = lib.tensor(draws.uniform(0.5, 1.5, tuple(v.shape)), requires_grad=True)
    if write == "copy_":
        v.copy_(w * 2)
    elif write == "add_":
        v.add_(w.sin())
    elif write == "mul_":
        v.mul_(w)
    elif write == "setall":
        v[...] = w * 3
    elif write == "exp_":
        v.mul_(w).exp_()
    else:
        v.abs_().add_(0.5).pow_(w)
    if then_base:
        h.mul_(lib.tensor(draws.standard_normal(shape)))
    loss = 0
    if read != "view":
        loss = loss + (h * lib.tensor(draws.standard_normal(shape))).sum()
    if read != "base":
        loss = loss + (v * lib.tensor(draws.standard_normal(tuple(v.shape)))).sum()
    if not (isinstance(loss, lib.Tensor) and loss.requires_grad):
        return ("no grad", h.detach().numpy())
    loss.backward()
    return ("ok", h.detach().numpy(), None if w.grad is None else w.grad.numpy())


@needs_torch
@pytest.mark.parametrize("seed", [0, 1])
def test_writes_through_strided_views_are_pytorchs(seed):
    """1,000 random in-place ops through an ``as_strided``/``unfold`` view that shows no place twice (of the tensor
    or of a view of it; an ``as_strided`` may show elements its input did not), then sometimes a write into the
    whole tensor: the tensor's values and the gradient, against PyTorch's."""
    torch = pytest.importorskip("torch")
    different, outcomes = _against_torch(torch, _write_programs(seed, 1000), _run_write)
    assert different == []
    assert outcomes["ok"] > 800, outcomes
