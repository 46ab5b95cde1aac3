"""Loss functions where a sweep of every option against PyTorch 2.13 (values, gradients, second derivatives,
float64) found the engine different: ``nll_loss``'s recorded gradient (create_graph) was a constant, so a penalty
on it could not be differentiated and the incoming gradient got none back; ``poisson_nll_loss(full=True)`` gave
the target no gradient through Stirling's term; ``binary_cross_entropy``'s gradient at a probability of 0 or 1
divided by the float64 1e-12 where PyTorch's EPSILON is a float."""

from __future__ import annotations

import numpy as np
import pytest

import engine

A = np.random.default_rng(0).standard_normal((4, 5))
W = np.random.default_rng(1).uniform(0.5, 2, 5)


def _nll_cases(L):  # noqa: N803
    F = L.nn.functional  # noqa: N806
    return {
        "mean": (lambda a: F.nll_loss(a, L.tensor([0, 1, 2, 3])), ()),
        "weights, ignored row": (lambda a: F.nll_loss(a, L.tensor([0, 7, 2, 3]), weight=L.tensor(W), ignore_index=7),
                                 ()),
        "none": (lambda a: F.nll_loss(a, L.tensor([0, 1, 2, 3]), weight=L.tensor(W), reduction="none"), (4,)),
        "sum": (lambda a: F.nll_loss(a, L.tensor([0, 1, 2, 3]), reduction="sum"), ()),
        "positions": (lambda a: F.nll_loss(a.reshape(2, 5, 2), L.tensor([[0, 1], [2, 3]])), ()),
        "one row": (lambda a: F.nll_loss(a[0], L.tensor(2)), ()),
    }


def _double_backward(L, name):  # noqa: N803
    fn, shape = _nll_cases(L)[name]
    a = L.tensor(A, requires_grad=True)
    v = L.tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape) if shape else 1.3, dtype=L.float64,
                 requires_grad=True)
    (g,) = L.autograd.grad(fn(a), a, v, create_graph=True)
    h = (g * L.tensor(np.cos(np.arange(20.0)).reshape(4, 5))).sum()
    gv, ga = L.autograd.grad(h, (v, a), create_graph=True)
    (g ** 2).sum().backward()  # a gradient penalty on the loss's own input
    return [g.requires_grad, g.detach().numpy(), gv.detach().numpy(), ga.detach().numpy(), a.grad.numpy(),
            v.grad.numpy()]


@pytest.mark.parametrize("name", sorted(_nll_cases(engine)))
def test_nll_loss_s_recorded_gradient_is_connected_as_pytorchs(name):
    ours = _double_backward(engine, name)
    assert ours[0]  # (it was a constant: the penalty's backward raised "does not require grad")
    assert not ours[3].any() and not ours[4].any()  # the log-probabilities: a zero second derivative, not none
    if name in ("mean", "weights, ignored row", "none", "sum"):
        fn, _ = _nll_cases(engine)[name]
        assert fn(engine.tensor(A, requires_grad=True)).grad_fn.name() == "NllLossBackward0"
    try:
        import torch
    except ImportError:
        return
    theirs = _double_backward(torch, name)
    for mine, other in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, other, rtol=1e-12, atol=1e-14)


def test_nll_loss_s_recorded_gradient_is_one_node_with_pytorchs_name():
    a = engine.tensor(A, requires_grad=True)
    y = engine.nn.functional.nll_loss(a, engine.tensor([0, 1, 2, 3]))
    (g,) = engine.autograd.grad(y, a, create_graph=True)
    assert g.grad_fn.name() == "NllLossBackwardBackward0"
    (third,) = engine.autograd.grad((g * g).sum(), a, allow_unused=True)
    assert not third.any()


@pytest.mark.parametrize("log_input", [True, False])
def test_poisson_nll_loss_s_full_term_reaches_the_target(log_input):
    x = engine.tensor([0.5, 2.0, 3.0], dtype=engine.float64, requires_grad=True)
    t = engine.tensor([0.0, 1.0, 4.0], dtype=engine.float64, requires_grad=True)
    loss = engine.nn.functional.poisson_nll_loss(x, t, log_input=log_input, full=True, reduction="sum")
    gx, gt = engine.autograd.grad(loss, (x, t))
    # d/dt of t log t - t + log(2 pi t) / 2 is log t + 1 / (2 t), for counts above 1; NaN at 0 (0 * log 0's), as
    # PyTorch's
    own = -x.detach().numpy() if log_input else -np.log(x.detach().numpy() + 1e-8)  # (the rest of the loss's)
    assert np.isnan(gt[0].item())
    np.testing.assert_allclose(gt.numpy()[1:], own[1:] + [0.0, np.log(4.0) + 1 / 8], rtol=1e-7)
    try:
        import torch
    except ImportError:
        return
    xt, tt = (torch.tensor(v.detach().numpy(), requires_grad=True) for v in (x, t))
    theirs = torch.autograd.grad(torch.nn.functional.poisson_nll_loss(xt, tt, log_input=log_input, full=True,
                                                                      reduction="sum"), (xt, tt))
    for mine, other in zip((gx, gt), theirs):
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=1e-12, equal_nan=True)


def test_binary_cross_entropy_s_gradient_at_zero_and_one_divides_by_pytorchs_epsilon():
    for create_graph in (False, True):
        p = engine.tensor([0.0, 1.0, 0.5], dtype=engine.float64, requires_grad=True)
        y = engine.tensor([1.0, 0.0, 0.5], dtype=engine.float64)
        (g,) = engine.autograd.grad(engine.nn.functional.binary_cross_entropy(p, y), p, create_graph=create_graph)
        # -1 / max(0 * 1, float32(1e-12)) / 3: 1e-12 as a float is 9.9999999600419720e-13
        assert g.detach().tolist() == [-1 / float(np.float32(1e-12)) / 3, 1 / float(np.float32(1e-12)) / 3, 0.0]
