"""2-D max pooling in C (``engine/_ckernels.c``, where it was built): the same maxima and the same picks as the
NumPy spelling it replaces (which pads with -inf: the first maximum, the last NaN), over kernels, strides, padding,
dilation and ceil_mode, with ties, NaNs and infinities; and the gradient each way. Compared with torch 2.13 where
it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import kernels
from engine.functions import conv

pytestmark = pytest.mark.skipif(kernels.implementation() != "compiled", reason="engine/_ckernels.c is not built")

CASES = [  # (kernel, stride, padding, dilation, ceil_mode)
    (2, 2, 0, 1, False), (3, 2, 1, 1, False), (3, 1, 1, 1, False), ((2, 3), (1, 2), (1, 0), 1, True),
    (3, 3, 1, 2, True), ((1, 4), (3, 1), (0, 2), (2, 1), False), (2, 1, 0, 1, False), (5, 3, 2, 1, True),
]


def _data(shape, dtype, seed):
    rs = np.random.default_rng(seed)
    x = np.round(rs.standard_normal(shape), 1).astype(dtype)  # (ties)
    flat = x.reshape(-1)
    flat[rs.choice(flat.size, flat.size // 20, replace=False)] = np.nan
    flat[rs.choice(flat.size, flat.size // 20, replace=False)] = -np.inf
    flat[rs.choice(flat.size, flat.size // 40, replace=False)] = np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_the_picks_are_the_numpy_spellings(case, dtype, monkeypatch):
    kernel, stride, padding, dilation, ceil_mode = case
    pair = [k if isinstance(k, tuple) else (k, k) for k in (kernel, stride, padding, dilation)]
    x = _data((2, 3, 9, 8), dtype, hash(case) % 1000)
    compiled = conv._max_pool(x, *pair, ceil_mode)
    assert compiled[4] is None  # (the C path: no padded copy)
    gy = np.random.default_rng(1).standard_normal(compiled[0].shape).astype(dtype)
    ctx = conv.MaxPool.__new__(conv.MaxPool)
    ctx.saved, ctx.meta, ctx.shape = (compiled[1],), (*pair[:2], pair[3], *compiled[2:4], None), x.shape
    mine = conv.MaxPool.backward(ctx, gy)
    monkeypatch.setattr(kernels, "_ck", None)
    after = conv.MaxPool.backward(ctx, gy)  # (picked in C, the C part switched off since: NumPy's adds)
    spelled = conv._max_pool(x, *pair, ceil_mode)
    np.testing.assert_array_equal(compiled[0], spelled[0])
    np.testing.assert_array_equal(compiled[1], spelled[1])
    ctx.meta = (*pair[:2], pair[3], *spelled[2:5])
    theirs = conv.MaxPool.backward(ctx, gy)
    # (a place two windows share adds their gradients in another order each way: within an ulp)
    tight = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14, "atol": 1e-15}
    np.testing.assert_allclose(mine, theirs, **tight)
    np.testing.assert_allclose(after, theirs, **tight)


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_values_indices_and_gradients_are_torchs(case):
    torch = pytest.importorskip("torch")
    kernel, stride, padding, dilation, ceil_mode = case
    xd = _data((2, 3, 9, 8), np.float64, 7)
    xd[np.isinf(xd)] = 0.0  # (an all -inf window: PyTorch picks its first place inside, NumPy's spelling the first)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y, where = lib.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
        y.backward(lib.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape))))
        results.append((y.detach().numpy(), where.numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)
