"""``kl_divergence`` between distributions of two kinds: PyTorch's registered pairs (normal and Laplace, gamma and
Gumbel, uniform and beta, ... and the infinite ones, where q has no mass where p has some), their values and
gradients against PyTorch's, and the registry holding every pair PyTorch has among the engine's distributions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine

NAMES = ["Normal", "Laplace", "Gumbel", "Exponential", "Gamma", "Beta", "Uniform", "Pareto", "Poisson", "Bernoulli",
         "Binomial", "LowRankMultivariateNormal", "MultivariateNormal", "ContinuousBernoulli"]


def _make(L, name, rng, leaves):
    D = L.distributions

    def r(lo, hi, shape=(6,)):
        leaves.append(L.tensor(rng.uniform(lo, hi, shape), dtype=L.float64, requires_grad=True))
        return leaves[-1]

    if name == "Pareto":
        return D.Pareto(r(0.05, 0.5), r(0.5, 4.0))  # alpha below 1 and 2 too: the infinite means
    if name == "Uniform":
        return D.Uniform(r(-0.2, 0.3), r(0.6, 1.2))  # inside [0, 1] for some, past it for others
    if name == "LowRankMultivariateNormal":
        return D.LowRankMultivariateNormal(r(-1, 1, (2, 3)), r(-0.5, 0.5, (2, 3, 2)), r(0.5, 1.5, (2, 3)))
    if name == "MultivariateNormal":
        a = rng.standard_normal((3, 3))
        return D.MultivariateNormal(r(-1, 1, (2, 3)), covariance_matrix=L.tensor(a @ a.T + np.eye(3)))
    return {"Normal": lambda: D.Normal(r(-1, 1), r(0.5, 2)), "Laplace": lambda: D.Laplace(r(-1, 1), r(0.5, 2)),
            "Gumbel": lambda: D.Gumbel(r(-1, 1), r(0.5, 2)), "Exponential": lambda: D.Exponential(r(0.5, 2)),
            "Gamma": lambda: D.Gamma(r(0.5, 3), r(0.5, 2)), "Beta": lambda: D.Beta(r(0.5, 3), r(0.5, 3)),
            "Poisson": lambda: D.Poisson(r(0.5, 3)), "Bernoulli": lambda: D.Bernoulli(r(0.1, 0.9)),
            "Binomial": lambda: D.Binomial(10, r(0.1, 0.9)),
            "ContinuousBernoulli": lambda: D.ContinuousBernoulli(r(0.05, 0.95))}[name]()


@pytest.mark.torch
def test_every_pair_pytorch_registers_is_registered_and_gives_its_values_and_gradients():
    torch = pytest.importorskip("torch")
    from torch.distributions.kl import _KL_REGISTRY as theirs

    from engine.distributions.kl import _KL_REGISTRY as ours

    ours_names = {(p.__name__, q.__name__) for p, q in ours}
    checked = 0
    for pn, qn in itertools.product(NAMES, NAMES):
        registered = (getattr(torch.distributions, pn), getattr(torch.distributions, qn)) in theirs
        if not registered:
            continue
        assert (pn, qn) in ours_names or pn == qn, (pn, qn)
        for seed in range(3):
            results = []
            for L in (engine, torch):
                rng = np.random.default_rng(seed)
                leaves = []
                p, q = _make(L, pn, rng, leaves), _make(L, qn, rng, leaves)
                kl = L.distributions.kl_divergence(p, q)
                finite = np.isfinite(kl.detach().numpy())
                grads = []
                if finite.any() and kl.requires_grad:
                    got = L.autograd.grad(kl[L.tensor(finite)].sum(), leaves, allow_unused=True)
                    grads = [None if g is None else g.numpy() for g in got]
                results.append((kl.detach().numpy(), grads))
            (ours_kl, our_grads), (their_kl, their_grads) = results
            np.testing.assert_array_equal(np.isinf(ours_kl), np.isinf(their_kl), err_msg=f"{pn} {qn}")
            np.testing.assert_allclose(ours_kl, their_kl, rtol=1e-10, atol=1e-12, err_msg=f"{pn} {qn}")
            assert len(our_grads) == len(their_grads), (pn, qn)
            for a, b in zip(our_grads, their_grads):
                if b is None:
                    assert a is None or not a.any(), (pn, qn)
                else:
                    # (terms of a few units cancel in some: digamma and trigamma to ~1e-10 of PyTorch's)
                    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"{pn} {qn}")
            checked += 1
    assert checked >= 3 * 74


def test_a_pair_nobody_registered_is_refused_in_pytorchs_words():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Cauchy and q "
                                                  "type Normal"):
        engine.distributions.kl_divergence(engine.distributions.Cauchy(0.0, 1.0),
                                           engine.distributions.Normal(0.0, 1.0))
