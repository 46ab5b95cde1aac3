"""Distributions check the values given to ``log_prob`` and ``cdf`` as PyTorch's do while ``validate_args`` is on
(its default): the event's shape, a shape that broadcasts with the batch, every element within the support (the
engine checked parameters only: ``Uniform(1, 3).log_prob(5)`` was -inf, ``Bernoulli(0.3).log_prob(0.5)`` a number).
With ``validate_args=False`` nothing is checked, as there. And what was missing beside: ``Uniform.icdf`` (so
``Kumaraswamy.icdf``), ``Uniform.mode``, ``Bernoulli.mode``, ``Gamma.cdf``/``Chi2.cdf``; ``repr`` shows a one-number
parameter's value. Expected answers printed by torch 2.13.0, and held to the torch installed where there is one."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine

SUPPORT = "Expected value argument"
REFUSED = [
    ("D.Uniform(1.0, 3.0).log_prob(L.tensor(5.0))", SUPPORT + " (Tensor of shape ()) to be within the support "
                                                    "(Interval(lower_bound=1.0, upper_bound=3.0)) of the distribution "
                                                    "Uniform(low: 1.0, high: 3.0), but found invalid values:"),
    ("D.Uniform(1.0, 3.0).cdf(L.tensor([2.0, 0.0]))", SUPPORT + " (Tensor of shape (2,)) to be within the support"),
    ("D.Normal(0.0, 1.0).log_prob(L.tensor([float('nan')]))", SUPPORT + " (Tensor of shape (1,)) to be within the "
                                                              "support (Real())"),
    ("D.Bernoulli(0.3).log_prob(L.tensor([0.5]))", SUPPORT + " (Tensor of shape (1,)) to be within the support "
                                                   "(Boolean())"),
    ("D.Exponential(2.0).log_prob(L.tensor(-1.0))", SUPPORT),
    ("D.Poisson(2.0).log_prob(L.tensor(1.5))", SUPPORT),
    ("D.Beta(2.0, 3.0).log_prob(L.tensor(1.5))", SUPPORT),
    ("D.Gamma(2.0, 3.0).cdf(L.tensor(-0.5))", SUPPORT),
    ("D.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2))", "Value is not broadcastable with batch_shape+event_shape: "),
    ("D.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3))",
     "The right-most size of value must match event_shape: "),
]
ALLOWED = [
    ("D.Uniform(1.0, 3.0, validate_args=False).log_prob(L.tensor(5.0))", [-math.inf]),
    ("D.Bernoulli(0.3, validate_args=False).log_prob(L.tensor(0.5))", [-0.7803239]),
    ("D.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2, 1))", [-0.9189385] * 6),
    ("D.Uniform(-1.0, 1.0).icdf(L.tensor([0.25, 1.0]))", [-0.5, 1.0]),
    ("D.Kumaraswamy(2.0, 3.0).icdf(L.tensor([0.5]))", [0.4542020]),
    ("D.Uniform(-1.0, 1.0).mode", [math.nan]),
    ("D.Bernoulli(L.tensor([0.3, 0.5, 0.7])).mode", [0.0, math.nan, 1.0]),
    ("D.Gamma(2.0, 3.0).cdf(L.tensor([0.5, 0.0]))", [0.4421746, 0.0]),
    ("D.Chi2(3.0).cdf(L.tensor([1.0]))", [0.1987480]),
]


def _run(lib, expr):
    return eval(expr, {"L": lib, "D": lib.distributions})  # noqa: S307 - the tables' own expressions


@pytest.mark.parametrize(("expr", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_value_outside_the_distribution_is_refused(expr, message):
    with pytest.raises(ValueError) as refusal:
        _run(engine, expr)
    assert str(refusal.value).startswith(message)


@pytest.mark.parametrize(("expr", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_the_refusals_are_pytorchs(expr, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as refusal:
        _run(torch, expr)
    assert str(refusal.value).replace("torch.Size", "engine.Size").startswith(message)


@pytest.mark.parametrize(("expr", "values"), ALLOWED, ids=[a[0] for a in ALLOWED])
def test_what_is_allowed_gives_pytorchs_values(expr, values):
    np.testing.assert_allclose(_run(engine, expr).numpy().reshape(-1), values, rtol=1e-6)


@pytest.mark.parametrize(("expr", "values"), ALLOWED, ids=[a[0] for a in ALLOWED])
def test_the_allowed_values_are_pytorchs(expr, values):
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(_run(torch, expr).numpy().reshape(-1), values, rtol=1e-6)


def test_a_ones_parameter_is_shown_by_its_value():
    D = engine.distributions
    assert repr(D.Uniform(1.0, 3.0)) == "Uniform(low: 1.0, high: 3.0)"
    assert repr(D.Normal(engine.zeros(2), 1.0)) == "Normal(loc: engine.Size([2]), scale: engine.Size([2]))"
