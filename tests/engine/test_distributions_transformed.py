"""``distributions.transforms``, ``constraints``, ``TransformedDistribution`` and the families made from it (and
``Dirichlet``) against PyTorch 2.13: each transform's values, inverse and log-Jacobian with their gradients, each
family's ``log_prob`` (and its gradient to every parameter), ``entropy``, moments, ``cdf``/``icdf``, and every
family's ``arg_constraints``/``support``; the draws by their statistics."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.distributions as D

RNG = np.random.default_rng(0)


def _t(lib, a, rg=False):
    t = lib.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_() if rg else t


TRANSFORMS = {
    "exp": (lambda L, p: L.distributions.ExpTransform(), RNG.standard_normal((3, 4)), []),
    "affine": (lambda L, p: L.distributions.AffineTransform(p[0], p[1]), RNG.standard_normal((3, 4)),
               [RNG.standard_normal(4), RNG.uniform(0.5, 2, 4) * np.array([1, -1, 1, -1])]),
    "affine, event_dim 1": (lambda L, p: L.distributions.AffineTransform(p[0], p[1], event_dim=1),
                            RNG.standard_normal((3, 4)), [RNG.standard_normal(4), RNG.uniform(0.5, 2, 4)]),
    "affine by numbers": (lambda L, p: L.distributions.AffineTransform(1.5, -2.0), RNG.standard_normal((3, 4)), []),
    "sigmoid": (lambda L, p: L.distributions.SigmoidTransform(), RNG.standard_normal((3, 4)), []),
    "tanh": (lambda L, p: L.distributions.TanhTransform(), RNG.standard_normal((3, 4)), []),
    "softplus": (lambda L, p: L.distributions.SoftplusTransform(), RNG.standard_normal((3, 4)), []),
    "power": (lambda L, p: L.distributions.PowerTransform(p[0]), RNG.uniform(0.2, 3, (3, 4)),
              [RNG.uniform(0.3, 2, 4)]),
    "stick-breaking": (lambda L, p: L.distributions.StickBreakingTransform(), RNG.standard_normal((3, 4)), []),
    "lower Cholesky": (lambda L, p: L.distributions.LowerCholeskyTransform(), RNG.standard_normal((2, 3, 3)), []),
    "compose": (lambda L, p: L.distributions.ComposeTransform([L.distributions.AffineTransform(p[0], 2.0),
                                                               L.distributions.TanhTransform(),
                                                               L.distributions.AffineTransform(0.5, p[1])]),
                RNG.standard_normal((3, 4)), [RNG.standard_normal(4), RNG.uniform(0.5, 2, 4)]),
    "compose with stick-breaking": (lambda L, p: L.distributions.ComposeTransform([
        L.distributions.ExpTransform().inv.inv, L.distributions.AffineTransform(p[0], 1.0),
        L.distributions.StickBreakingTransform()]), RNG.standard_normal((3, 4)), [RNG.standard_normal(4)]),
    "independent": (lambda L, p: L.distributions.IndependentTransform(L.distributions.SigmoidTransform(), 1),
                    RNG.standard_normal((3, 4)), []),
    "reshape": (lambda L, p: L.distributions.ReshapeTransform((4,), (2, 2)), RNG.standard_normal((3, 4)), []),
    "inverse of exp": (lambda L, p: L.distributions.ExpTransform().inv, RNG.uniform(0.2, 3, (3, 4)), []),
    "cat": (lambda L, p: L.distributions.CatTransform([L.distributions.ExpTransform(),
                                                       L.distributions.AffineTransform(1.0, p[0])], dim=1,
                                                      lengths=[1, 3]), RNG.standard_normal((3, 4)), [2.5]),
    "stack": (lambda L, p: L.distributions.StackTransform([L.distributions.TanhTransform(),
                                                           L.distributions.ExpTransform()], dim=0),
              RNG.standard_normal((2, 4)), []),
}


def _run_transform(lib, name):
    make, x0, params = TRANSFORMS[name]
    ps = [_t(lib, p, True) if isinstance(p, np.ndarray) else p for p in params]
    t = make(lib, ps)
    x = _t(lib, x0, True)
    y = t(x)
    try:
        ladj = t.log_abs_det_jacobian(x, y)
    except NotImplementedError:  # (LowerCholeskyTransform has none, in PyTorch either)
        ladj = x.sum() * 0
    back = t.inv(y)
    (y.sum() + ladj.sum() * 0.7 + back.sum() * 0.3).backward()
    grads = [x.grad] + [p.grad for p in ps if isinstance(p, type(x))]
    shapes = (tuple(t.forward_shape(tuple(x.shape))), tuple(t.inverse_shape(tuple(y.shape))),
              t.domain.event_dim, t.codomain.event_dim, bool(t.bijective))
    return shapes, [y, ladj, back, *grads]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    (s1, theirs), (s2, ours) = _run_transform(torch, name), _run_transform(engine, name)
    assert s1 == s2
    for a, b in zip(theirs, ours):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_a_cached_transform_gives_back_its_own_input():
    t = D.TanhTransform(cache_size=1)
    x = engine.tensor([30.0, -30.0, 0.5], dtype=engine.float64)  # tanh rounds to ±1: atanh would be infinite
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert bool(D.TanhTransform().inv(y).isinf()[:2].all())
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


def _families(L):  # noqa: N803 - the library
    d = L.distributions
    loc, scale = _t(L, RNG.standard_normal(3), True), _t(L, RNG.uniform(0.5, 2, 3), True)
    a, b = _t(L, RNG.uniform(0.5, 3, 3), True), _t(L, RNG.uniform(0.5, 3, 3), True)
    conc = _t(L, RNG.uniform(0.5, 3, (2, 4)), True)
    temp = _t(L, 0.7, True)
    logits = _t(L, RNG.standard_normal((2, 4)), True)
    return {
        "tanh-squashed normal": (d.TransformedDistribution(d.Normal(loc, scale), [d.TanhTransform()]),
                                 RNG.uniform(-0.9, 0.9, (5, 3)), [loc, scale]),
        "log-normal by Exp and Affine": (
            d.TransformedDistribution(d.Normal(loc, scale), [d.ExpTransform(), d.AffineTransform(1.0, scale)]),
            RNG.uniform(1.2, 4, (5, 3)), [loc, scale]),
        "Pareto": (d.Pareto(scale, a), RNG.uniform(2.1, 5, (5, 3)), [scale, a]),
        "Weibull": (d.Weibull(scale, a), RNG.uniform(0.2, 3, (5, 3)), [scale, a]),
        "HalfCauchy": (d.HalfCauchy(scale), RNG.uniform(0.0, 3, (5, 3)), [scale]),
        "InverseGamma": (d.InverseGamma(a, b), RNG.uniform(0.2, 3, (5, 3)), [a, b]),
        "Kumaraswamy": (d.Kumaraswamy(a, b), RNG.uniform(0.05, 0.95, (5, 3)), [a, b]),
        "LogisticNormal": (d.LogisticNormal(loc, scale), RNG.dirichlet(np.ones(4), (5,)), [loc, scale]),
        "RelaxedBernoulli": (d.RelaxedBernoulli(temp, logits=logits), RNG.uniform(0.05, 0.95, (5, 2, 4)),
                             [temp, logits]),
        "RelaxedOneHotCategorical": (d.RelaxedOneHotCategorical(temp, logits=logits), RNG.dirichlet(np.ones(4),
                                                                                                   (5, 2)),
                                     [temp, logits]),
        "Dirichlet": (d.Dirichlet(conc), RNG.dirichlet(np.ones(4), (5, 2)), [conc]),
    }


_MOMENTS = ("mean", "mode", "variance")


def _run_family(lib, name):
    dist, value, params = _families(lib)[name]
    v = _t(lib, value)
    lp = dist.log_prob(v)
    lp.sum().backward()
    out = {"log_prob": lp, "grads": [p.grad for p in params],
           "shapes": (tuple(dist.batch_shape), tuple(dist.event_shape), bool(dist.has_rsample), repr(dist.support))}
    for what in ("entropy", "cdf", "icdf", *_MOMENTS):
        try:
            if what == "cdf":
                got = dist.cdf(v)
            elif what == "icdf":
                got = dist.icdf(_t(lib, RNG.uniform(0.1, 0.9, tuple(v.shape))))
            elif what == "entropy":
                got = dist.entropy()
            else:
                got = getattr(dist, what)
        except NotImplementedError:
            got = "not implemented"
        out[what] = got
    return out


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_families(engine)))
def test_families_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    state = RNG.bit_generator.state
    theirs = _run_family(torch, name)
    RNG.bit_generator.state = state
    ours = _run_family(engine, name)
    assert theirs["shapes"][:3] == ours["shapes"][:3]
    for key in ("log_prob", "entropy", "cdf", "icdf", *_MOMENTS):
        a, b = theirs[key], ours[key]
        if isinstance(a, str) or isinstance(b, str):
            assert isinstance(b, str), (key, "PyTorch has none; the engine gives one")
            continue
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=key)
    for a, b in zip(theirs["grads"], ours["grads"]):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.torch
def test_every_familys_constraints_are_pytorchs():
    torch = pytest.importorskip("torch")
    names = ["Normal", "Bernoulli", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "LogNormal",
             "Poisson", "Geometric", "OneHotCategorical", "MultivariateNormal", "Gamma", "Chi2", "Beta", "StudentT",
             "Binomial", "Categorical", "Pareto", "Weibull", "HalfCauchy", "InverseGamma", "Kumaraswamy",
             "LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical", "Dirichlet", "MixtureSameFamily",
             "Multinomial", "NegativeBinomial", "FisherSnedecor", "LowRankMultivariateNormal",
             "OneHotCategoricalStraightThrough"]
    for name in names:
        theirs, ours = getattr(torch.distributions, name), getattr(D, name)
        assert {k: repr(v) for k, v in theirs.arg_constraints.items()} == {
            k: repr(v) for k, v in ours.arg_constraints.items()}, name
        if not isinstance(theirs.support, property):  # (a support that depends on the parameters: below)
            assert repr(theirs.support) == repr(ours.support), name
    assert repr(D.Categorical(logits=engine.zeros(4)).support) == "IntegerInterval(lower_bound=0, upper_bound=3)"
    x = RNG.standard_normal((6, 3))
    x[0, 0] = np.nan
    for make in (lambda c: c.real, lambda c: c.positive, lambda c: c.unit_interval, lambda c: c.simplex,
                 lambda c: c.independent(c.positive, 1), lambda c: c.lower_cholesky, lambda c: c.greater_than(0.5),
                 lambda c: c.half_open_interval(-1, 1), lambda c: c.boolean, lambda c: c.nonnegative_integer,
                 lambda c: c.real_vector):
        a = make(torch.distributions.constraints).check(torch.tensor(x if "Cholesky" not in repr(
            make(torch.distributions.constraints)) else x[:3]))
        b = make(D.constraints).check(engine.tensor(x if "Cholesky" not in repr(make(D.constraints)) else x[:3]))
        assert a.tolist() == b.tolist(), make(D.constraints)


def test_draws_follow_their_laws():
    engine.manual_seed(0)
    conc = engine.tensor([2.0, 3.0, 5.0], dtype=engine.float64)
    draws = D.Dirichlet(conc).sample((20_000,))
    assert draws.sum(-1).numpy() == pytest.approx(np.ones(20_000))
    assert draws.mean(0).tolist() == pytest.approx([0.2, 0.3, 0.5], abs=0.01)
    pareto = D.Pareto(engine.tensor(2.0, dtype=engine.float64), engine.tensor(3.0, dtype=engine.float64))
    assert float(pareto.sample((40_000,)).mean()) == pytest.approx(3.0, rel=0.03)
    assert float(pareto.sample((1000,)).min()) >= 2.0
    relaxed = D.RelaxedOneHotCategorical(engine.tensor(0.05), probs=engine.tensor([0.2, 0.8]))
    hard = relaxed.rsample((20_000,))
    assert float(hard.argmax(-1).float().mean()) == pytest.approx(0.8, abs=0.015)  # (near one-hot at a low temperature)
    loc = engine.zeros(3, requires_grad=True)
    squashed = D.TransformedDistribution(D.Normal(loc, 1.0), [D.TanhTransform(cache_size=1)])
    action = squashed.rsample((4,))
    assert bool(action.abs().lt(1).all()) and bool(squashed.log_prob(action).isfinite().all())
    squashed.log_prob(action).sum().backward()
    assert loc.grad is not None and bool(loc.grad.isfinite().all())
    assert D.Dirichlet(conc.requires_grad_()).rsample((2,)).sum(-1).detach().numpy() == pytest.approx([1.0, 1.0])
