"""More of ``torch.distributions``, missing before (AttributeError): ``Exponential``, ``Laplace``, ``Cauchy``,
``Gumbel``, ``HalfNormal``, ``LogNormal``, ``Poisson``, ``Geometric``, ``OneHotCategorical``, ``Independent``,
``MultivariateNormal`` (``scale_tril``, ``covariance_matrix`` or ``precision_matrix``), ``Gamma``, ``Chi2``,
``Beta``, ``StudentT``, ``Binomial`` (drawn on the host; the gamma family's ``rsample`` in
test_reparameterized_gamma.py), and ``kl_divergence``
between two of each kind. Their ``log_prob``, ``entropy``, ``mean``, ``variance``, ``mode``, ``stddev``, ``cdf``,
``icdf`` and divergences, with every parameter's gradient, against PyTorch 2.13 (~3,500 comparisons); their draws
by their statistics (the engine's generator is not PyTorch's). Writing them found that ``linalg.solve_triangular``
read a square right-hand side without batch dimensions as a batch of vectors where ``A`` had one (fixed, with a
row in ``test_linalg_rest``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine

NAMES = ["Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "LogNormal", "Poisson", "Geometric", "GeometricL",
         "OneHot", "Independent", "MVN_tril", "MVN_cov", "MVN_prec", "Gamma", "Chi2", "Beta", "StudentT", "Binomial",
         "BinomialL"]
WHAT = ["log_prob", "entropy", "mean", "variance", "cdf", "icdf", "mode", "stddev", "kl"]


def _spd(L, a, b):
    m = b.unsqueeze(-1) * a.unsqueeze(-2) * 0.3
    return m @ m.mT + L.diag_embed(b)


def _make(L, name, a, b):
    D = L.distributions
    return {
        "Exponential": lambda: D.Exponential(b), "Laplace": lambda: D.Laplace(a, b), "Cauchy": lambda: D.Cauchy(a, b),
        "Gumbel": lambda: D.Gumbel(a, b), "HalfNormal": lambda: D.HalfNormal(b), "LogNormal": lambda: D.LogNormal(a, b),
        "Poisson": lambda: D.Poisson(b), "Geometric": lambda: D.Geometric(probs=b / (b.max() + 0.1)),
        "GeometricL": lambda: D.Geometric(logits=a), "OneHot": lambda: D.OneHotCategorical(logits=a),
        "Independent": lambda: D.Independent(D.Normal(a, b), 1),
        "MVN_tril": lambda: D.MultivariateNormal(a, scale_tril=L.tril(b.unsqueeze(-1) * b.unsqueeze(-2) * 0.1)
                                                 + L.diag_embed(b)),
        "MVN_cov": lambda: D.MultivariateNormal(a, covariance_matrix=_spd(L, a, b)),
        "MVN_prec": lambda: D.MultivariateNormal(a, precision_matrix=_spd(L, a, b)),
        "Gamma": lambda: D.Gamma(b, b.flip(-1) + 0.5), "Chi2": lambda: D.Chi2(b * 2),
        "Beta": lambda: D.Beta(b, b.flip(-1) + 0.2), "StudentT": lambda: D.StudentT(b * 2, a, b),
        "Binomial": lambda: D.Binomial(5, probs=b / (b.max() + 0.1)), "BinomialL": lambda: D.Binomial(4, logits=a),
    }[name]()
def _values(rng, name, shape):
    if name in ("Poisson", "Geometric", "GeometricL", "Binomial", "BinomialL"):
        return rng.integers(0, 5 if name != "BinomialL" else 4, shape).astype(float)
    if name in ("HalfNormal", "Exponential", "LogNormal", "Gamma", "Chi2"):
        return np.abs(rng.standard_normal(shape)) + 0.1
    if name == "Beta":
        return rng.uniform(0.05, 0.95, shape)
    if name == "OneHot":
        return np.eye(shape[-1])[rng.integers(0, shape[-1], shape[:-1])]
    return rng.standard_normal(shape)


def _outcome(L, name, what, a0, b0, v0):
    a, b = L.tensor(a0, requires_grad=True), L.tensor(b0, requires_grad=True)
    try:
        d = _make(L, name, a, b)
        if what == "log_prob":
            out = d.log_prob(L.tensor(v0))
        elif what == "cdf":
            out = d.cdf(L.tensor(np.abs(v0) if name in ("Exponential", "HalfNormal", "LogNormal") else v0))
        elif what == "icdf":
            out = d.icdf(L.tensor(np.clip(np.abs(v0) % 1, 0.05, 0.95)))
        elif what == "entropy":
            out = d.entropy()
        elif what == "kl":
            out = L.distributions.kl_divergence(d, _make(L, name, L.tensor(b0) * 0.5, L.tensor(b0 * 1.3)))
        else:
            out = getattr(d, what)
        if out.requires_grad:
            (out * L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        return [out.detach().numpy()] + [None if t.grad is None else t.grad.numpy() for t in (a, b)]
    except (NotImplementedError, AttributeError):
        return "lacks"
    except ValueError:  # (PyTorch's transformed distributions check a value against their base's support)
        return "refuses"


def _same(x, y):
    for p, q in zip(x, y):
        if p is None or q is None:  # (no gradient on one side: none or zeros on the other)
            other = q if p is None else p
            if other is not None and not np.allclose(other, 0):
                return False
            continue
        if p.shape != q.shape or not np.allclose(p, q, rtol=1e-7, atol=1e-9, equal_nan=True):
            return False
    return True


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1])
def test_the_families_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    different, compared = [], 0
    for _ in range(13):
        shape = tuple(int(s) for s in rng.integers(1, 4, rng.integers(1, 3)))
        a0, b0 = rng.standard_normal(shape), rng.uniform(0.3, 2.0, shape)
        for name in NAMES:
            for what in WHAT:
                v0 = _values(rng, name, (2,) + shape)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours, theirs = _outcome(engine, name, what, a0, b0, v0), _outcome(torch, name, what, a0, b0, v0)
                if theirs in ("lacks", "refuses"):
                    continue
                compared += 1
                if ours == "lacks" or not _same(ours, theirs):
                    different.append((name, what, shape))
    assert different == []
    assert compared > 1800


@pytest.mark.parametrize(("make", "mean", "var"), [
    (lambda D: D.Exponential(engine.tensor(2.0, dtype=engine.float64)), 0.5, 0.25),
    (lambda D: D.Laplace(engine.tensor(1.0, dtype=engine.float64), engine.tensor(0.5, dtype=engine.float64)), 1.0,
     0.5),
    (lambda D: D.Gumbel(engine.tensor(0.0, dtype=engine.float64), engine.tensor(1.0, dtype=engine.float64)),
     0.5772156649, np.pi ** 2 / 6),
    (lambda D: D.HalfNormal(engine.tensor(2.0, dtype=engine.float64)), 2 * np.sqrt(2 / np.pi), 4 * (1 - 2 / np.pi)),
    (lambda D: D.LogNormal(engine.tensor(0.0, dtype=engine.float64), engine.tensor(0.5, dtype=engine.float64)),
     np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    (lambda D: D.Poisson(engine.tensor(3.0, dtype=engine.float64)), 3.0, 3.0),
    (lambda D: D.Geometric(probs=engine.tensor(0.25, dtype=engine.float64)), 3.0, 12.0),
    (lambda D: D.Gamma(engine.tensor(2.0, dtype=engine.float64), engine.tensor(4.0, dtype=engine.float64)), 0.5,
     0.125),
    (lambda D: D.Beta(engine.tensor(2.0, dtype=engine.float64), engine.tensor(3.0, dtype=engine.float64)), 0.4, 0.04),
    (lambda D: D.StudentT(engine.tensor(5.0, dtype=engine.float64), 1.0, 2.0), 1.0, 4 * 5 / 3),
    (lambda D: D.Binomial(10, probs=engine.tensor(0.3, dtype=engine.float64)), 3.0, 2.1),
    (lambda D: D.Chi2(engine.tensor(3.0, dtype=engine.float64)), 3.0, 6.0),
])
def test_draws_have_their_law_s_mean_and_variance(make, mean, var):
    engine.manual_seed(0)
    draws = make(engine.distributions).sample((200_000,)).double()
    assert float(draws.mean()) == pytest.approx(mean, rel=0.02, abs=0.01)
    assert float(draws.var()) == pytest.approx(var, rel=0.05)


def test_cauchy_draws_have_its_quartiles_and_a_multivariate_normal_its_covariance():
    engine.manual_seed(0)
    c = engine.distributions.Cauchy(engine.tensor(1.0, dtype=engine.float64), engine.tensor(2.0, dtype=engine.float64))
    q = np.quantile(c.sample((100_000,)).numpy(), [0.25, 0.5, 0.75])
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.06)
    cov = engine.tensor([[2.0, 0.6], [0.6, 1.0]], dtype=engine.float64)
    mvn = engine.distributions.MultivariateNormal(engine.tensor([1.0, -1.0], dtype=engine.float64),
                                                  covariance_matrix=cov)
    draws = mvn.sample((100_000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), [1.0, -1.0], atol=0.02)
    np.testing.assert_allclose(np.cov(draws.T), cov.numpy(), atol=0.03)


def test_a_vae_s_diagonal_gaussian_and_its_divergence():
    mu = engine.tensor([[0.5, -1.0]], requires_grad=True)
    log_var = engine.tensor([[0.0, 0.4]], requires_grad=True)
    q = engine.distributions.Independent(engine.distributions.Normal(mu, (0.5 * log_var).exp()), 1)
    p = engine.distributions.Independent(engine.distributions.Normal(engine.zeros(1, 2), engine.ones(1, 2)), 1)
    assert (q.batch_shape, q.event_shape) == ((1,), (2,))
    kl = engine.distributions.kl_divergence(q, p)
    closed = -0.5 * (1 + log_var - mu ** 2 - log_var.exp()).sum(-1)  # the VAE paper's closed form
    np.testing.assert_allclose(kl.detach().numpy(), closed.detach().numpy(), rtol=1e-6)
    z = q.rsample()
    (z.sum() + kl.sum()).backward()
    assert mu.grad is not None and log_var.grad is not None
    with pytest.raises(NotImplementedError, match="for p type Exponential and q type Cauchy"):
        engine.distributions.kl_divergence(engine.distributions.Exponential(engine.tensor(1.0)),
                                           engine.distributions.Cauchy(engine.tensor(0.0), engine.tensor(1.0)))


def test_the_families_drawn_on_the_host_repeat_their_draws_from_the_engines_seed():
    gamma = engine.distributions.Gamma(engine.tensor([2.0], requires_grad=True), engine.tensor([1.0]))
    assert gamma.rsample().requires_grad  # (reparameterised: test_reparameterized_gamma.py)
    engine.manual_seed(3)
    first = gamma.sample((4,))
    engine.manual_seed(3)
    assert engine.equal(gamma.sample((4,)), first) and not first.requires_grad  # (the engine's generator)
    binomial = engine.distributions.Binomial(3, probs=engine.tensor([0.5, 0.5]))
    assert binomial.enumerate_support().shape == (4, 2) and float(binomial.entropy()[0]) == pytest.approx(
        -sum(p * np.log(p) for p in (1 / 8, 3 / 8, 3 / 8, 1 / 8)))
