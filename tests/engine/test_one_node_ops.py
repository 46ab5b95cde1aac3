"""``logcumsumexp``, ``nansum`` and ``linalg.cross`` are one node each, as PyTorch's (their graphs and torch
comparisons are in test_composite_graphs.py); here their values and gradients worked out by hand, on each device
(CuPy's ``ufunc.accumulate`` takes only add and multiply, so a GPU runs ``logcumsumexp``'s steps a slice at a
time), and the cost that one node saves.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine


def test_logcumsumexp_is_exact_however_far_apart_the_terms(device):
    x = engine.tensor([[-1000.0, 0.0, -1000.0, 800.0], [float("-inf"), 1.0, 1.0, float("-inf")]],
                      dtype=engine.float64, device=device, requires_grad=True)
    y = x.logcumsumexp(1)
    want = [[-1000.0, 0.0, 0.0, 800.0], [float("-inf"), 1.0, 1.0 + math.log(2.0), 1.0 + math.log(2.0)]]
    np.testing.assert_allclose(y.detach().cpu().numpy(), want, rtol=1e-15, atol=0)
    assert y.grad_fn.name() == "LogcumsumexpBackward0" and len(y.grad_fn.next_functions) == 1
    # d/dx_j of sum_i w_i y_i = sum_{i >= j} w_i exp(x_j - y_i); with w = 1 on row 1: x_1 = x_2 = 1. Where x_j
    # and y_j are both -inf, PyTorch's log-space formula gives NaN (exp(-inf - -inf)), and so does the engine's
    y.backward(engine.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]], dtype=engine.float64, device=device))
    g = x.grad.cpu().numpy()
    assert g[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(g[1], [float("nan"), 1.0 + 0.5 + 0.5, 0.5 + 0.5, 0.0], rtol=1e-15, atol=0)


def test_logcumsumexp_of_a_number_and_of_nothing(device):
    x = engine.tensor(2.5, device=device, requires_grad=True)
    y = x.logcumsumexp(0)
    assert y.item() == 2.5 and y.grad_fn.name() == "LogcumsumexpBackward0"
    y.backward()
    assert x.grad.item() == 1.0
    assert engine.zeros(0, 3, device=device).logcumsumexp(0).shape == (0, 3)


def test_nansum_skips_nan_in_its_value_and_its_gradient(device):
    x = engine.tensor([[1.0, float("nan"), 2.0], [float("nan"), float("nan"), 4.0]], device=device,
                      requires_grad=True)
    y = x.nansum(1)
    assert y.tolist() == [3.0, 4.0] and y.grad_fn.name() == "NansumBackward0"
    y.backward(engine.tensor([2.0, -3.0], device=device))
    assert x.grad.tolist() == [[2.0, 0.0, 2.0], [-0.0, -0.0, -3.0]]
    assert engine.tensor([1, 2, 3], device=device).nansum().item() == 6  # (integers: their sum)


def test_cross_of_the_axes_and_its_gradient(device):
    e = engine.eye(3, dtype=engine.float64, device=device)
    a = e.clone().requires_grad_()
    b = e.roll(1, 0).clone().requires_grad_()  # (e3, e1, e2)
    y = engine.linalg.cross(a, b)  # e1 x e3 = -e2, e2 x e1 = -e3, e3 x e2 = -e1
    assert y.tolist() == [[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]]
    g = engine.tensor([[1.0, 2.0, 3.0]] * 3, dtype=engine.float64, device=device)
    y.backward(g)
    # d/da <g, a x b> = b x g; d/db = g x a
    gv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(a.grad.cpu().numpy(), np.cross(np.roll(np.eye(3), 1, 0), gv))
    np.testing.assert_array_equal(b.grad.cpu().numpy(), np.cross(gv, np.eye(3)))


def test_cross_broadcasts_and_sums_the_gradient_back(device):
    a = engine.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], device=device, requires_grad=True)
    b = engine.tensor([[0.0, 0.0, 2.0]], device=device, requires_grad=True)
    y = engine.cross(a, b, dim=1)
    assert y.tolist() == [[0.0, -2.0, 0.0], [2.0, 0.0, 0.0]]
    y.sum().backward()
    assert b.grad.shape == (1, 3)
    assert b.grad.tolist() == [[-1.0, 1.0, 0.0]]  # sum over rows of ones x a_row: (1,1,1) x e1 + (1,1,1) x e2
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        engine.linalg.cross(a, b[0])


def test_logcumsumexp_records_one_node_however_long():
    x = engine.randn(4, 500, requires_grad=True)
    y = x.logcumsumexp(1)
    seen, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.extend(n for n, _ in node.next_functions)
    assert len(seen) == 2  # the node and the leaf's AccumulateGrad (it was 500 logaddexp nodes and a cat)
