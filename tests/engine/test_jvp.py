"""``autograd.functional.jvp`` by PyTorch's double-backward trick (``u -> J^T u`` recorded, then differentiated
against ``u`` in the direction ``v``): ``func`` runs once and the product costs two backward passes, not one per
output element; the values PyTorch 2.13's, for several inputs and outputs, outputs that do not depend on an input,
``create_graph`` (a second derivative through the product), ``strict`` and bad ``v``; and where the trick cannot see
the whole derivative (an op whose backward the engine cannot record, a user's Function whose backward is computed in
NumPy), the whole Jacobian's product, still right."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.autograd import functional as AF
from engine.autograd import graph

RNG = np.random.default_rng(8)
X, Y, V, W = (RNG.standard_normal(s) for s in ((3, 4), (4,), (3, 4), (4,)))


def _fns(lib):
    F = lib.nn.functional
    return {
        "one to one": (lambda x: x.exp() * x.sin(), (X,), (V,)),
        "two to two": (lambda x, y: ((x.tanh() @ y) * 2, (x * y).sum()), (X, Y), (V, W)),
        "a product and a softmax": (lambda x, y: F.softmax(x * y, dim=1).log1p(), (X, Y), (V, W)),
        "an output one input misses": (lambda x, y: (x.sum(0) * 3, y.cos()), (X, Y), (V, W)),
        "an output no input reaches": (lambda x: (x.sigmoid(), lib.ones(2, dtype=lib.float64)), (X,), (V,)),
        "a layer": (lambda x, y: F.gelu(F.linear(x, x[:2] * 0.5 + 1, None)) + y.sum(), (X, Y), (V, W)),
        "an identity": (lambda x: x, (X,), (V,)),
    }


def _run(lib, name, create_graph=False):
    fn, xs, vs = _fns(lib)[name]
    out, prod = lib.autograd.functional.jvp(fn, tuple(lib.tensor(x) for x in xs), tuple(lib.tensor(v) for v in vs),
                                            create_graph=create_graph)
    return _arrays(out), _arrays(prod)


def _arrays(r):
    return [t.detach().numpy() for t in r] if isinstance(r, tuple) else [r.detach().numpy()]


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_fns(engine)))
def test_the_product_is_torchs(name):
    torch = pytest.importorskip("torch")
    (mine_out, mine), (their_out, theirs) = _run(engine, name), _run(torch, name)
    for a, b in zip(mine_out + mine, their_out + theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_the_product_is_the_directional_derivative():
    """Against a central difference of func along v, without PyTorch."""
    fn, xs, vs = _fns(engine)["a product and a softmax"]
    eps = 1e-6
    _, prod = AF.jvp(fn, tuple(engine.tensor(x) for x in xs), tuple(engine.tensor(v) for v in vs))
    up = fn(*(engine.tensor(x + eps * v) for x, v in zip(xs, vs)))
    down = fn(*(engine.tensor(x - eps * v) for x, v in zip(xs, vs)))
    np.testing.assert_allclose(prod.numpy(), ((up - down) / (2 * eps)).numpy(), atol=1e-8)


def test_func_runs_once_and_the_walks_do_not_grow_with_the_output(monkeypatch):
    """Two walks (the recorded vector-Jacobian product, and its gradient), for 2 outputs or 2000: the Jacobian's way
    took one walk per output element."""
    walks = []
    real = graph.grad
    monkeypatch.setattr(AF, "grad", lambda *a, **k: walks.append(1) or real(*a, **k))
    for n in (2, 2000):
        calls, walks[:] = [], []

        def fn(x, n=n, calls=calls):
            calls.append(1)
            return (x.unsqueeze(0) * engine.ones(n, 1, dtype=engine.float64)).sin()

        x = engine.tensor(RNG.standard_normal(5))
        _, prod = AF.jvp(fn, x, engine.ones(5, dtype=engine.float64))
        assert len(calls) == 1 and len(walks) == 2
        np.testing.assert_allclose(prod.numpy(), np.broadcast_to(np.cos(x.numpy()), (n, 5)), rtol=1e-15)


@pytest.mark.torch
def test_create_graph_keeps_the_product_differentiable_as_torchs():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (engine, torch):
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y, requires_grad=True)
        _, prod = lib.autograd.functional.jvp(lambda a, b: (a.sin() * b).exp(), (x, y),
                                              (lib.tensor(V), lib.tensor(W)), create_graph=True)
        assert prod.requires_grad
        prod.pow(2).sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-11)


class NumpyCube(engine.autograd.Function):
    """A user's Function whose backward computes in NumPy: its gradient is right, but a constant to a second pass."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        return engine.tensor(gy.detach().numpy() * 3 * x.detach().numpy() ** 2)


@pytest.mark.parametrize("case", ["a NumPy backward", "a NumPy backward beside a differentiable path",
                                  "an op the recording walk refuses"])
def test_where_the_trick_cannot_see_the_whole_derivative_the_jacobian_gives_it(case):
    x, v = engine.tensor(X), engine.tensor(V)
    if case == "a NumPy backward":
        fn, expected = NumpyCube.apply, 3 * X ** 2 * V
    elif case == "a NumPy backward beside a differentiable path":
        fn, expected = (lambda t: NumpyCube.apply(t) + t.sin()), (3 * X ** 2 + np.cos(X)) * V
    else:  # (embedding's scale_grad_by_freq has no recorded backward: the walk refuses it by name)
        idx = engine.tensor([[0, 2, 2], [1, 0, 2]])

        def fn(w):
            return engine.nn.functional.embedding(idx, w, scale_grad_by_freq=True) * 2

        counts = np.bincount(idx.numpy().ravel(), minlength=3)
        expected = 2 * V[idx.numpy()] / counts[idx.numpy()][..., None]
    _, prod = AF.jvp(fn, x, v)
    np.testing.assert_allclose(prod.numpy(), expected, rtol=1e-13)


def test_strict_mode_and_bad_vectors_are_refused_in_torchs_words():
    x, y = engine.tensor(X), engine.tensor(Y)
    with pytest.raises(RuntimeError, match="Output 1 of the user-provided function does not require gradients"):
        AF.jvp(lambda a: (a * 2, engine.ones(2)), x, engine.tensor(V), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        AF.jvp(lambda a, b: a * 2, (x, y), (engine.tensor(V), engine.tensor(W)), strict=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape: input has shape \\[3, 4\\] while v has shape \\[4\\]"):
        AF.jvp(lambda a: a * 2, x, engine.tensor(W))
    with pytest.raises(RuntimeError, match="v can only be None if the input to the user-provided function is a single"):
        AF.jvp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        AF.jvp(lambda a, b: a * b, (x, x), (engine.tensor(V),))
    _, prod = AF.jvp(lambda a: a * 3, engine.tensor([2.0]))  # (v may be left out for one element)
    assert prod.tolist() == [3.0]
