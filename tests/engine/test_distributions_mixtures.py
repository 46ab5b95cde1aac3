"""``MixtureSameFamily``, ``Multinomial``, ``NegativeBinomial``, ``FisherSnedecor``, ``LowRankMultivariateNormal``
and ``OneHotCategoricalStraightThrough`` against PyTorch 2.13: ``log_prob`` and its gradient to every parameter,
``entropy``, moments, ``cdf``, the constraints; the draws by their statistics."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.distributions as D

RNG = np.random.default_rng(0)
P = {
    "weights": RNG.standard_normal((2, 3)), "locs": RNG.standard_normal((2, 3)), "scales": RNG.uniform(0.5, 2, (2, 3)),
    "mv_locs": RNG.standard_normal((2, 3, 4)), "mv_scales": RNG.uniform(0.5, 2, (2, 3, 4)),
    "x1": RNG.standard_normal((5, 2)), "x4": RNG.standard_normal((5, 2, 4)),
    "logits": RNG.standard_normal((2, 4)), "counts": np.array([[[1, 0, 2, 3], [0, 6, 0, 0]]] * 3, dtype=float),
    "nb_total": RNG.uniform(0.5, 5, 3), "nb_logits": RNG.standard_normal(3), "nb_x": RNG.integers(0, 9, (4, 3)),
    "df1": RNG.uniform(0.5, 9, 3), "df2": RNG.uniform(4.5, 9, 3), "f_x": RNG.uniform(0.1, 4, (4, 3)),
    "lr_loc": RNG.standard_normal((2, 5)), "lr_w": RNG.standard_normal((2, 5, 2)), "lr_d": RNG.uniform(0.5, 2, (2, 5)),
    "lr_x": RNG.standard_normal((3, 2, 5)),
}


def _t(L, name, rg=True):  # noqa: N803
    return L.tensor(P[name], dtype=L.float64).requires_grad_(rg)


def _families(L):  # noqa: N803
    d = L.distributions
    w, loc, scale = _t(L, "weights"), _t(L, "locs"), _t(L, "scales")
    mv_loc, mv_scale = _t(L, "mv_locs"), _t(L, "mv_scales")
    logits = _t(L, "logits")
    total, nb_logits = _t(L, "nb_total"), _t(L, "nb_logits")
    df1, df2 = _t(L, "df1"), _t(L, "df2")
    lr_loc, lr_w, lr_d = _t(L, "lr_loc"), _t(L, "lr_w"), _t(L, "lr_d")
    return {
        "Gaussian mixture": (d.MixtureSameFamily(d.Categorical(logits=w), d.Normal(loc, scale)), _t(L, "x1", False),
                             [w, loc, scale]),
        "mixture of diagonal Gaussians over vectors": (
            d.MixtureSameFamily(d.Categorical(logits=w), d.Independent(d.Normal(mv_loc, mv_scale), 1)),
            _t(L, "x4", False), [w, mv_loc, mv_scale]),
        "Multinomial": (d.Multinomial(6, logits=logits), _t(L, "counts", False), [logits]),
        "NegativeBinomial": (d.NegativeBinomial(total, logits=nb_logits), L.tensor(P["nb_x"], dtype=L.float64),
                             [total, nb_logits]),
        "FisherSnedecor": (d.FisherSnedecor(df1, df2), _t(L, "f_x", False), [df1, df2]),
        "LowRankMultivariateNormal": (d.LowRankMultivariateNormal(lr_loc, lr_w, lr_d), _t(L, "lr_x", False),
                                      [lr_loc, lr_w, lr_d]),
    }


def _run(L, name):  # noqa: N803
    dist, value, params = _families(L)[name]
    lp = dist.log_prob(value)
    lp.sum().backward()
    out = [lp, *(p.grad for p in params)]
    for what in ("mean", "variance", "entropy", "cdf", "covariance_matrix", "precision_matrix", "scale_tril"):
        try:
            got = dist.entropy() if what == "entropy" else dist.cdf(value) if what == "cdf" else getattr(dist, what)
        except (NotImplementedError, AttributeError):
            got = None
        out.append(got)
    return out, (tuple(dist.batch_shape), tuple(dist.event_shape), dist.has_rsample)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_families(engine)))
def test_the_families_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    (theirs, s1), (ours, s2) = _run(torch, name), _run(engine, name)
    assert s1 == s2
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a is None:
            assert b is None, (i, "PyTorch has none")
            continue
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=str(i))


def test_draws_follow_their_laws():
    engine.manual_seed(0)
    mix = D.MixtureSameFamily(D.Categorical(probs=engine.tensor([0.25, 0.75])),
                              D.Normal(engine.tensor([-5.0, 5.0]), engine.tensor([0.5, 0.5])))
    x = mix.sample((20_000,))
    assert float((x > 0).float().mean()) == pytest.approx(0.75, abs=0.015)
    assert float(x.mean()) == pytest.approx(float(mix.mean), abs=0.1) and float(mix.mean) == pytest.approx(2.5)
    counts = D.Multinomial(10, probs=engine.tensor([0.2, 0.3, 0.5])).sample((5000,))
    assert bool((counts.sum(-1) == 10).all()) and counts.mean(0).tolist() == pytest.approx([2, 3, 5], abs=0.1)
    nb = D.NegativeBinomial(engine.tensor(3.0), probs=engine.tensor(0.4))
    assert float(nb.sample((40_000,)).mean()) == pytest.approx(float(nb.mean), rel=0.03)
    f = D.FisherSnedecor(engine.tensor(5.0, dtype=engine.float64, requires_grad=True), 10.0)
    draws = f.rsample((40_000,))
    assert float(draws.mean()) == pytest.approx(10 / 8, rel=0.03)
    lr = D.LowRankMultivariateNormal(engine.zeros(3), engine.tensor([[1.0], [2.0], [0.0]]), engine.ones(3))
    samples = lr.rsample((40_000,))
    cov = np.cov(samples.numpy().T)
    np.testing.assert_allclose(cov, lr.covariance_matrix.numpy(), atol=0.1)
    probs = engine.tensor([0.1, 0.9], requires_grad=True)
    st = D.OneHotCategoricalStraightThrough(probs=probs)
    hard = st.rsample((3,))
    assert set(hard.sum(-1).tolist()) == {1.0}
    (hard * engine.tensor([1.0, 2.0])).sum().backward()
    assert probs.grad is not None and float(probs.grad.abs().sum()) > 0  # (the probabilities' gradient passed through)


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="does not equal `component_distribution.batch_shape\\[-1\\]`"):
        D.MixtureSameFamily(D.Categorical(logits=engine.zeros(3)), D.Normal(engine.zeros(2), engine.ones(2)))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(engine.tensor(3), probs=engine.ones(2))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(engine.zeros(3), engine.ones(2, 1), engine.ones(3))


def _kl_pairs(L):  # noqa: N803
    d = L.distributions
    c1, c2 = L.tensor([[0.5, 2.0, 3.0]], dtype=L.float64), L.tensor([[1.5, 1.0, 0.7]], dtype=L.float64)
    s = L.tensor([1.0, 2.0], dtype=L.float64)
    return [
        (d.Dirichlet(c1), d.Dirichlet(c2)),
        (d.Pareto(s, L.tensor([2.0, 3.0], dtype=L.float64)), d.Pareto(s * 0.5, L.tensor([1.0, 4.0], dtype=L.float64))),
        (d.Pareto(s, s), d.Pareto(s * 2, s)),  # (q's support starts later: infinite)
        (d.TransformedDistribution(d.Normal(s, s), [d.TanhTransform()]),
         d.TransformedDistribution(d.Normal(s * 0, s * 3), [d.TanhTransform()])),
        (d.LogisticNormal(c1[0, :2], s), d.LogisticNormal(c2[0, :2], s * 2)),
        (d.Chi2(s), d.Gamma(s, s)),  # (Gamma's pair, by subclass)
        (d.OneHotCategoricalStraightThrough(logits=c1), d.OneHotCategorical(logits=c2)),
    ]


@pytest.mark.torch
def test_kl_divergences_of_the_new_families_are_pytorchs():
    torch = pytest.importorskip("torch")
    for (p1, q1), (p2, q2) in zip(_kl_pairs(engine), _kl_pairs(torch)):
        ours, theirs = D.kl_divergence(p1, q1), torch.distributions.kl_divergence(p2, q2)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=type(p1).__name__)


def test_register_kl_takes_a_distribution_of_ones_own_and_the_most_specific_pair():
    class Mine(D.Normal):
        pass

    @D.register_kl(Mine, D.Normal)
    def _mine(p, q):
        return p.loc * 0 + 42.0

    p, q = Mine(engine.tensor(0.0), engine.tensor(1.0)), D.Normal(engine.tensor(1.0), engine.tensor(2.0))
    assert D.kl_divergence(p, q).item() == 42.0  # (its own, over Normal's pair)
    assert D.kl_divergence(q, q).item() == 0.0
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
    with pytest.raises(NotImplementedError, match="is implemented for p type Dirichlet and q type Cauchy"):
        D.kl_divergence(D.Dirichlet(engine.ones(2)), D.Cauchy(0.0, 1.0))
    # two exponential families of two kinds reach the Bregman divergence's pair, which refuses (PyTorch's words)
    with pytest.raises(NotImplementedError, match="The cross KL-divergence between different exponential families"):
        D.kl_divergence(D.Dirichlet(engine.ones(2)), q)
