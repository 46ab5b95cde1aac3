"""engine.distributions: log_prob, entropy, cdf and KL with their gradients against PyTorch 2.13 from the same
float64 parameters; draws held to their distributions (moments, frequencies) and to the reparameterisation's
gradient; PyTorch's refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine import distributions as D

RNG = np.random.default_rng(17)
LOC, SCALE = RNG.standard_normal((2, 3)), RNG.uniform(0.3, 2.0, (2, 3))
VALUE = RNG.standard_normal((4, 2, 3))
LOGITS = RNG.standard_normal((2, 5))
PROBS = RNG.uniform(0.0, 1.0, (2, 5))
PROBS[0, 1] = 0.0  # a category that cannot happen
ACTIONS = np.array([[0, 4], [2, 3], [1, 1]])
P = RNG.uniform(0.05, 0.95, (3,))
COIN = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])

CASES = {  # name: (parameters, the quantity, with dist = the library's distributions module)
    "Normal log_prob": ((LOC, SCALE), lambda lib, d, m, s: d.Normal(m, s).log_prob(lib.tensor(VALUE))),
    "Normal entropy and cdf": ((LOC, SCALE), lambda lib, d, m, s: d.Normal(m, s).entropy()
                               + d.Normal(m, s).cdf(lib.tensor(VALUE)).sum(0)),
    "Normal KL": ((LOC, SCALE), lambda lib, d, m, s: d.kl_divergence(d.Normal(m, s), d.Normal(m * 0.5 + 1, s * s))),
    "Categorical logits": ((LOGITS,), lambda lib, d, lg: d.Categorical(logits=lg).log_prob(lib.tensor(ACTIONS))
                           + d.Categorical(logits=lg).entropy()),
    "Categorical probs": ((PROBS,), lambda lib, d, pr: d.Categorical(probs=pr).log_prob(lib.tensor(ACTIONS[:, ::-1]
                                                                                               .copy()))
                          + d.Categorical(probs=pr).entropy()),
    "Categorical KL": ((LOGITS, PROBS), lambda lib, d, lg, pr: d.kl_divergence(d.Categorical(probs=pr),
                                                                                d.Categorical(logits=lg))),
    "Bernoulli": ((P,), lambda lib, d, p: d.Bernoulli(p).log_prob(lib.tensor(COIN)) + d.Bernoulli(p).entropy()),
    "Bernoulli logits KL": ((P,), lambda lib, d, p: d.kl_divergence(d.Bernoulli(logits=p * 4 - 2), d.Bernoulli(p))),
    "Uniform": ((LOC, SCALE), lambda lib, d, lo, w: d.Uniform(lo, lo + w).log_prob(lo + w / 3)
                + d.Uniform(lo, lo + w).entropy() + d.Uniform(lo, lo + w).cdf(lo + w / 4)),
}


def _run(lib, name):
    arrays, fn = CASES[name]
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, lib.distributions, *params)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().numpy(), [p.grad.numpy() for p in params]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_quantities_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    (ours, our_grads), (theirs, their_grads) = _run(engine, name), _run(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)


def test_values_a_learner_can_check_by_hand():
    n = D.Normal(0.0, 1.0)
    assert n.log_prob(engine.tensor(0.0)).item() == pytest.approx(-0.5 * np.log(2 * np.pi))
    assert n.cdf(engine.tensor(0.0)).item() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        n.log_prob(0.0)  # (as PyTorch, while validate_args is on; off, a number is taken)
    assert D.Normal(0.0, 1.0, validate_args=False).log_prob(0.0).item() == pytest.approx(-0.5 * np.log(2 * np.pi))
    assert n.entropy().item() == pytest.approx(0.5 * np.log(2 * np.pi * np.e))
    c = D.Categorical(probs=engine.tensor([1.0, 3.0]))  # normalised: 0.25, 0.75
    assert c.probs.tolist() == [0.25, 0.75] and c.log_prob(engine.tensor(1)).item() == pytest.approx(np.log(0.75))
    assert c.entropy().item() == pytest.approx(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75)))
    b = D.Bernoulli(engine.tensor(0.2))
    assert b.log_prob(engine.tensor(1.0)).item() == pytest.approx(np.log(0.2))
    assert D.Uniform(1.0, 3.0).log_prob(engine.tensor(2.0)).item() == pytest.approx(-np.log(2))
    assert D.Uniform(1.0, 3.0, validate_args=False).log_prob(engine.tensor(5.0)).item() == -np.inf
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(\)\) to be within the support "
                                         r"\(Interval\(lower_bound=1.0, upper_bound=3.0\)\)"):
        D.Uniform(1.0, 3.0).log_prob(engine.tensor(5.0))  # (PyTorch's validate_args, on by default)


def test_draws_follow_their_distributions():
    engine.manual_seed(3)
    x = D.Normal(engine.tensor([2.0, -1.0]), engine.tensor([0.5, 3.0])).sample((20000,))
    assert tuple(x.shape) == (20000, 2) and not x.requires_grad
    np.testing.assert_allclose(x.mean(0).numpy(), [2.0, -1.0], atol=0.06)
    np.testing.assert_allclose(x.std(0).numpy(), [0.5, 3.0], rtol=0.03)
    actions = D.Categorical(probs=engine.tensor([[0.1, 0.0, 0.9], [0.5, 0.5, 0.0]])).sample((4000,))
    assert tuple(actions.shape) == (4000, 2) and actions.dtype == engine.int64
    counts = [np.bincount(actions[:, i].numpy(), minlength=3) / 4000 for i in range(2)]
    np.testing.assert_allclose(counts[0], [0.1, 0.0, 0.9], atol=0.03)
    np.testing.assert_allclose(counts[1], [0.5, 0.5, 0.0], atol=0.03)
    coins = D.Bernoulli(engine.tensor([0.2, 0.7])).sample((5000,))
    np.testing.assert_allclose(coins.mean(0).numpy(), [0.2, 0.7], atol=0.03)
    u = D.Uniform(engine.tensor(-1.0), engine.tensor(3.0)).sample((5000,))
    assert float(u.min()) >= -1.0 and float(u.max()) < 3.0 and float(u.mean()) == pytest.approx(1.0, abs=0.08)


def test_rsample_carries_the_gradient_to_the_parameters_as_a_vae_needs():
    loc = engine.tensor([1.0, -2.0], requires_grad=True)
    scale = engine.tensor([0.5, 2.0], requires_grad=True)
    engine.manual_seed(5)
    z = D.Normal(loc, scale).rsample((3,))
    eps = (z.detach() - loc.detach()) / scale.detach()  # the standard normal draws behind z
    z.sum().backward()
    assert loc.grad.tolist() == [3.0, 3.0]
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)


def test_a_reinforce_step_raises_the_probability_of_a_rewarded_action():
    logits = engine.zeros(3, requires_grad=True)
    opt = engine.optim.SGD([logits], lr=0.5)
    for _ in range(20):
        policy = D.Categorical(logits=logits)
        loss = -(policy.log_prob(engine.tensor(2)) * 1.0)  # action 2 always rewarded
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert D.Categorical(logits=logits).probs[2].item() > 0.9


def test_refusals_are_pytorchs():
    with pytest.raises(ValueError, match="constraint GreaterThan"):
        D.Normal(0.0, engine.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
        D.Categorical(probs=engine.ones(2), logits=engine.ones(2))
    with pytest.raises(ValueError, match="within the support"):
        D.Categorical(logits=engine.zeros(3)).log_prob(engine.tensor(3))
    with pytest.raises(ValueError, match="Interval"):
        D.Bernoulli(engine.tensor(1.5))
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Categorical(logits=engine.zeros(3)).rsample()
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Cauchy and q type "
                                                  "Uniform"):
        D.kl_divergence(D.Cauchy(0.0, 1.0), D.Uniform(0.0, 1.0))
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)).item() == math.inf  # (PyTorch's pair)
    D.Normal(0.0, engine.tensor([-1.0]), validate_args=False)  # validation off: accepted, as PyTorch's


def test_kl_divergence_lives_where_pytorchs_does():
    from engine.distributions.kl import kl_divergence

    assert kl_divergence is D.kl_divergence is engine.distributions.kl.kl_divergence
    assert kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)
