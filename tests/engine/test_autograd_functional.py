"""engine.autograd.functional: jacobian, vjp and jvp against PyTorch 2.13 and against finite differences; hessian
by hand (against PyTorch in test_higher_order.py)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.autograd import functional as AF

RNG = np.random.default_rng(4)
A, B = RNG.standard_normal((2, 3)), RNG.standard_normal(3)


def _mixed(lib):
    return lambda x, y: ((x.sin() * y).sum(0) + x[0].exp(), (x * x).sum())


def test_the_jacobian_equals_central_differences():
    x = engine.tensor(A)
    jac = AF.jacobian(lambda t: (t.tanh() * t).sum(1), x)
    assert tuple(jac.shape) == (2, 2, 3)
    eps, numeric = 1e-6, np.zeros((2, 2, 3))
    for i in np.ndindex(2, 3):
        up, down = A.copy(), A.copy()
        up[i] += eps
        down[i] -= eps
        numeric[(slice(None),) + i] = ((np.tanh(up) * up).sum(1) - (np.tanh(down) * down).sum(1)) / (2 * eps)
    np.testing.assert_allclose(jac.numpy(), numeric, atol=1e-8)


@pytest.mark.torch
def test_jacobian_vjp_and_jvp_equal_torchs():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (engine, torch):
        inputs = (lib.tensor(A), lib.tensor(B))
        jac = lib.autograd.functional.jacobian(_mixed(lib), inputs)
        out, vjp = lib.autograd.functional.vjp(lambda x: (x ** 3).sum(), inputs[1])
        _, jvp = lib.autograd.functional.jvp(lambda x: x.exp() * x, inputs[0], lib.ones(2, 3, dtype=lib.float64))
        results.append([t.numpy() for row in jac for t in row] + [out.numpy(), vjp.numpy(), jvp.numpy()])
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_an_unused_input_gets_zeros_or_a_refusal_in_strict_mode():
    jac = AF.jacobian(lambda x, y: x * 2, (engine.tensor(B), engine.tensor(B)))
    assert jac[1].tolist() == [[0.0] * 3] * 3 and jac[0].tolist() == (2 * np.eye(3)).tolist()
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda x, y: x * 2, (engine.tensor(B), engine.tensor(B)), strict=True)


def test_hessian_is_the_jacobian_of_the_gradient_and_bad_calls_are_refused():
    """(The higher-order tests are in test_higher_order.py.) sum(x^3)'s Hessian is diag(6 x)."""
    np.testing.assert_allclose(AF.hessian(lambda x: (x ** 3).sum(), engine.tensor(B)).numpy(), np.diag(6 * B),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda x: x, [1.0, 2.0])
    assert engine.autograd.functional is AF  # torch.autograd.functional.jacobian, as a script writes it
