"""The rest of ``torch.distributions``: ``ContinuousBernoulli``, ``VonMises``, ``GeneralizedPareto``, ``Wishart``,
``LKJCholesky``, ``ExponentialFamily`` (entropy and divergences by Bregman divergences), ``CorrCholeskyTransform``,
``PositiveDefiniteTransform``, ``biject_to``/``transform_to``, ``utils``, and the base class's API that a
distribution of one's own is written with (``expand`` on every family, ``set_default_validate_args``,
``_validate_sample``, ``_extended_shape``, the parameter check of ``arg_constraints``, ``has_enumerate_support``):
values and gradients against PyTorch 2.13, draws by their statistics."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
import engine.distributions as D

RNG = np.random.default_rng(0)


def _corr_cholesky(rng, shape, d):
    m = rng.standard_normal((*shape, d, d + 2))
    c = m @ np.swapaxes(m, -1, -2)
    s = np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return np.linalg.cholesky(c / s[..., :, None] / s[..., None, :])


_A = RNG.standard_normal((2, 3, 3))
_B = RNG.standard_normal((4, 2, 3, 3))
P = {
    # probs and logits on both sides of 1/2 and inside PyTorch's Taylor window (0.499, 0.501)
    "cb_p": np.r_[RNG.uniform(0.02, 0.98, 6), 0.4995, 0.5, 0.5005],
    "cb_l": np.r_[RNG.standard_normal(6), 0.0, 1e-4, -3e-4], "cb_x": RNG.uniform(0, 1, (4, 9)),
    "vm_loc": RNG.uniform(-3, 3, 5), "vm_k": np.r_[RNG.uniform(0.1, 8, 4), 1e-6], "vm_x": RNG.uniform(-3, 3, (4, 5)),
    "gp_loc": RNG.uniform(-1, 1, 6), "gp_scale": RNG.uniform(0.5, 2, 6),
    "gp_c": np.r_[RNG.uniform(-0.4, 0.8, 4), 0.0, 1e-9], "gp_x": RNG.uniform(0.05, 1.5, (4, 6)),
    "w_df": RNG.uniform(3.5, 7, 2), "spd": _A @ _A.transpose(0, 2, 1) + 2 * np.eye(3),
    "w_x": _B @ _B.transpose(0, 1, 3, 2) + np.eye(3),
    "lkj_c": RNG.uniform(0.5, 3, 2), "lkj_x": _corr_cholesky(RNG, (4, 2), 3),
}


def _t(L, name, dtype="float64", rg=True):  # noqa: N803
    return L.tensor(P[name], dtype=getattr(L, dtype)).requires_grad_(rg)


def _families(L, name):  # noqa: N803
    """(distribution, a value, its parameters) of one case, for the library L."""
    d = L.distributions
    if name.startswith("ContinuousBernoulli"):
        kind = name.split()[-1]
        param = _t(L, "cb_l" if kind != "probs" else "cb_p")
        dist = (d.ContinuousBernoulli(probs=param) if kind == "probs" else
                d.ContinuousBernoulli(logits=param, lims=(0.2, 0.8)) if kind == "lims" else
                d.ContinuousBernoulli(logits=param))
        return dist, _t(L, "cb_x", rg=False), [param]
    if name == "VonMises":
        loc, k = _t(L, "vm_loc"), _t(L, "vm_k")
        return d.VonMises(loc, k), _t(L, "vm_x", rg=False), [loc, k]
    if name == "GeneralizedPareto":  # (float32: PyTorch 2.13's log_prob of float64 ones mixes in a float32 zero)
        loc, scale, c = (_t(L, n, "float32") for n in ("gp_loc", "gp_scale", "gp_c"))
        return d.GeneralizedPareto(loc, scale, c), L.tensor(P["gp_x"] + P["gp_loc"], dtype=L.float32), [loc, scale, c]
    if name.startswith("Wishart"):
        df, kind = _t(L, "w_df"), name.split()[-1]
        spd = P["spd"] if kind != "scale_tril" else np.linalg.cholesky(P["spd"])
        matrix = L.tensor(spd, dtype=L.float64, requires_grad=True)
        return d.Wishart(df, **{kind: matrix}), L.tensor(P["w_x"], dtype=L.float64), [df, matrix]
    if name == "LKJCholesky":
        c = _t(L, "lkj_c")
        return d.LKJCholesky(3, c), _t(L, "lkj_x", rg=False), [c]
    raise KeyError(name)


NAMES = ["ContinuousBernoulli probs", "ContinuousBernoulli logits", "ContinuousBernoulli lims", "VonMises",
         "GeneralizedPareto", "Wishart covariance_matrix", "Wishart precision_matrix", "Wishart scale_tril",
         "LKJCholesky"]
WHAT = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "mode", "stddev"]


def _outcome(L, name, what):  # noqa: N803
    dist, value, params = _families(L, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (Wishart's low df)
            if what in ("log_prob", "cdf"):
                out = getattr(dist, what)(value)
            elif what == "icdf":
                out = dist.icdf(L.tensor(np.clip(np.abs(value.detach().numpy()) % 1, 0.05, 0.95),
                                         dtype=value.dtype))
            elif what == "entropy":
                out = dist.entropy()
            else:
                out = getattr(dist, what)
    except NotImplementedError:
        return "NotImplementedError"
    grads = []
    if out.requires_grad:
        finite = np.isfinite(out.detach().numpy())
        weights = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=out.dtype)
        (out * weights).masked_fill(L.tensor(~finite), 0.0).sum().backward()
        grads = [None if p.grad is None else p.grad.numpy() for p in params]
    return out.detach().numpy(), grads


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_the_last_families_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    rtol = 2e-5 if name == "GeneralizedPareto" else 1e-9
    for what in WHAT:
        theirs, ours = _outcome(torch, name, what), _outcome(engine, name, what)
        if isinstance(theirs, str):
            assert ours == theirs, (what, "PyTorch has none")
            continue
        assert not isinstance(ours, str), (what, ours)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=1e-10 if rtol < 1e-6 else 1e-6,
                                   err_msg=what)
        assert len(ours[1]) == len(theirs[1]), what
        for mine, other in zip(ours[1], theirs[1]):
            if other is None:
                assert mine is None or not mine.any(), what
                continue
            np.testing.assert_allclose(mine, other, rtol=max(rtol, 1e-8), atol=1e-8, err_msg=f"{what} gradient")
    (ours, _, _), (theirs, _, _) = _families(engine, name), _families(torch, name)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape), ours.has_rsample, ours.has_enumerate_support) == (
        tuple(theirs.batch_shape), tuple(theirs.event_shape), theirs.has_rsample, theirs.has_enumerate_support)
    assert repr(ours).replace("engine.", "torch.") == repr(theirs)
    assert type(ours.support).__name__ == type(theirs.support).__name__


def test_values_a_learner_can_check_by_hand():
    # the continuous Bernoulli's density at x: C(p) p^x (1 - p)^(1 - x), C(p) = 2 atanh(1 - 2p) / (1 - 2p)
    p, x = 0.2, engine.tensor([0.0, 0.3, 1.0], dtype=engine.float64)
    c = 2 * np.arctanh(1 - 2 * p) / (1 - 2 * p)
    density = c * p ** x.numpy() * (1 - p) ** (1 - x.numpy())
    np.testing.assert_allclose(D.ContinuousBernoulli(p).log_prob(x).exp().numpy(), density, rtol=1e-6)
    assert D.ContinuousBernoulli(0.5).log_prob(engine.tensor(0.7)).item() == pytest.approx(0.0, abs=1e-6)
    # von Mises: exp(k cos(x - mu)) / (2 pi I0(k)); I0(1) = 1.2660658777520082
    vm = D.VonMises(engine.tensor(0.5, dtype=engine.float64), engine.tensor(1.0, dtype=engine.float64))
    assert vm.log_prob(engine.tensor(0.5, dtype=engine.float64)).exp().item() == pytest.approx(
        np.exp(1.0) / (2 * np.pi * 1.2660658777520082), rel=1e-6)
    # generalized Pareto with xi = 0 is the exponential of rate 1 / scale, shifted to loc
    gp = D.GeneralizedPareto(1.0, 2.0, 0.0)
    assert gp.log_prob(engine.tensor(3.0)).item() == pytest.approx(-np.log(2.0) - 1.0)
    assert gp.cdf(engine.tensor(3.0)).item() == pytest.approx(1 - np.exp(-1.0))
    assert D.GeneralizedPareto(0.0, 1.0, -0.5).support.upper_bound.item() == 2.0  # loc - scale / xi
    # Wishart's mean is df times the covariance
    cov = engine.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=engine.float64)
    np.testing.assert_allclose(D.Wishart(engine.tensor(5.0, dtype=engine.float64), covariance_matrix=cov).mean
                               .numpy(), 5 * cov.numpy())
    # LKJ(2, eta = 1) is uniform over the correlation r in (-1, 1), the factor's L21: density 1/2 at every r;
    # LKJ(2, eta) in general: (1 - r^2)^(eta - 1) / B(eta, eta) / 2^(2 eta - 1)
    for r in (0.3, -0.8):
        factor = engine.tensor([[1.0, 0.0], [r, np.sqrt(1 - r * r)]], dtype=engine.float64)
        assert D.LKJCholesky(2, 1.0).log_prob(factor).exp().item() == pytest.approx(0.5)
        beta = math.gamma(3.0) ** 2 / math.gamma(6.0)
        assert D.LKJCholesky(2, 3.0).log_prob(factor).exp().item() == pytest.approx(
            (1 - r * r) ** 2 / beta / 2 ** 5)


@pytest.mark.torch
def test_exponential_families_entropy_and_divergence_by_bregman_are_pytorchs():
    torch = pytest.importorskip("torch")
    results = []
    for L in (engine, torch):
        d = L.distributions
        f64 = {"dtype": L.float64}
        fams = [d.Normal(L.tensor([0.3, -1.0], **f64), L.tensor([1.5, 0.5], **f64)),
                d.Gamma(L.tensor([0.7, 3.0], **f64), L.tensor([1.5, 0.5], **f64)),
                d.Exponential(L.tensor([0.7, 3.0], **f64)), d.Bernoulli(L.tensor([0.2, 0.7], **f64)),
                d.Beta(L.tensor([0.7, 3.0], **f64), L.tensor([1.5, 0.5], **f64)),
                d.Dirichlet(L.tensor([[0.7, 3.0, 1.0]], **f64)),
                d.ContinuousBernoulli(L.tensor([0.2, 0.7], **f64)),
                d.Wishart(L.tensor([4.0, 6.0], **f64), covariance_matrix=L.tensor(P["spd"], **f64))]
        out = []
        for fam in fams:
            assert isinstance(fam, d.ExponentialFamily)
            if not isinstance(fam, (d.Beta, d.Dirichlet)):  # (their expected carrier measure is not given)
                by_bregman = d.ExponentialFamily.entropy(fam).detach().numpy()
                np.testing.assert_allclose(by_bregman, fam.entropy().detach().numpy(), rtol=1e-9)
                out.append(by_bregman)
        # (no direct formula for two Wisharts: the Bregman divergence; p's natural parameters are detached in it, as
        # in PyTorch's, so the gradient reaches q's)
        df_q = L.tensor(P["w_df"] + 1, **f64, requires_grad=True)
        p = d.Wishart(L.tensor(P["w_df"], **f64), covariance_matrix=L.tensor(P["spd"], **f64))
        q = d.Wishart(df_q, covariance_matrix=L.tensor(P["spd"][::-1].copy(), **f64))
        kl = d.kl_divergence(p, q)
        kl.sum().backward()
        out += [kl.detach().numpy(), df_q.grad.numpy()]
        with pytest.raises(NotImplementedError, match="The cross KL-divergence between different exponential "
                                                      "families cannot"):
            d.kl_divergence(d.Bernoulli(L.tensor(0.3)), d.Beta(L.tensor(1.0), L.tensor(2.0)))
        results.append(out)
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9)


def test_draws_follow_their_laws():
    engine.manual_seed(0)
    n = 20000
    cb = D.ContinuousBernoulli(engine.tensor([0.2, 0.5, 0.9], dtype=engine.float64))
    draws = cb.sample((n,))
    assert 0 <= draws.min().item() and draws.max().item() <= 1
    np.testing.assert_allclose(draws.mean(0).numpy(), cb.mean.numpy(), atol=0.01)
    np.testing.assert_allclose(draws.var(0).numpy(), cb.variance.numpy(), rtol=0.05)
    vm = D.VonMises(engine.tensor([0.5, -2.0], dtype=engine.float64), engine.tensor([4.0, 0.5], dtype=engine.float64))
    angles = vm.sample((n,))
    assert angles.shape == (n, 2) and angles.dtype == engine.float64
    assert -np.pi <= angles.min().item() and angles.max().item() < np.pi
    circular_mean = np.arctan2(angles.sin().mean(0).numpy(), angles.cos().mean(0).numpy())
    np.testing.assert_allclose(circular_mean, [0.5, -2.0], atol=0.05)
    resultant = np.hypot(angles.sin().mean(0).numpy(), angles.cos().mean(0).numpy())
    np.testing.assert_allclose(1 - resultant, vm.variance.numpy(), atol=0.01)  # the circular variance
    gp = D.GeneralizedPareto(engine.tensor(1.0, dtype=engine.float64), engine.tensor(2.0, dtype=engine.float64),
                             engine.tensor(0.2, dtype=engine.float64))
    np.testing.assert_allclose(gp.rsample((n,)).mean().item(), gp.mean.item(), rtol=0.05)
    cov = engine.tensor(P["spd"][0], dtype=engine.float64)
    w = D.Wishart(engine.tensor(6.0, dtype=engine.float64), covariance_matrix=cov)
    matrices = w.sample((4000,))
    np.testing.assert_allclose(matrices.mean(0).numpy(), w.mean.numpy(), rtol=0.1, atol=0.3)
    assert bool(D.constraints.positive_definite.check(matrices).all())
    lkj = D.LKJCholesky(4, engine.tensor([0.5, 4.0], dtype=engine.float64))
    factors = lkj.sample((3000,))
    assert factors.shape == (3000, 2, 4, 4) and bool(D.constraints.corr_cholesky.check(factors).all())
    correlations = factors @ factors.mT
    off_diagonal = correlations[..., 1, 0].numpy()
    # a larger concentration pulls the correlations to 0: Var r = 1 / (2 eta + d - 1) for LKJ(d, eta)
    np.testing.assert_allclose(off_diagonal.var(0), [1 / (2 * 0.5 + 3), 1 / (2 * 4.0 + 3)], rtol=0.1)


def test_reparameterised_draws_carry_gradients_to_the_parameters():
    engine.manual_seed(1)
    probs = engine.tensor([0.2, 0.7], requires_grad=True)
    D.ContinuousBernoulli(probs).rsample((50,)).sum().backward()
    assert probs.grad is not None and bool((probs.grad > 0).all())  # a larger probs moves every draw up
    df = engine.tensor(5.0, dtype=engine.float64, requires_grad=True)
    cov = engine.eye(3, dtype=engine.float64).requires_grad_()
    sample = D.Wishart(df, covariance_matrix=cov).rsample((20,))
    (sample.diagonal(dim1=-2, dim2=-1).sum()).backward()
    assert df.grad.item() > 0 and cov.grad is not None
    scale = engine.tensor(2.0, requires_grad=True)
    D.GeneralizedPareto(0.0, scale, 0.1).rsample((10,)).sum().backward()
    assert scale.grad.item() > 0
    assert not D.VonMises(0.0, 1.0).has_rsample and not D.LKJCholesky(3).has_rsample


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.ContinuousBernoulli()
    with pytest.raises(ValueError, match=r"Expected parameter concentration .* to satisfy the constraint "
                                         r"GreaterThan\(lower_bound=0.0\)"):
        D.VonMises(0.0, -1.0)
    with pytest.raises(ValueError, match=r"Expected parameter scale .* GreaterThan\(lower_bound=0.0\)"):
        D.GeneralizedPareto(0.0, -1.0, 0.1)
    with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to 2. Found dim=1."):
        D.LKJCholesky(1)
    with pytest.raises(ValueError, match=r"Value of df=1.5 expected to be greater than ndim - 1 = 2."):
        D.Wishart(1.5, covariance_matrix=engine.eye(3))
    with pytest.raises(AssertionError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.Wishart(4.0)
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(2.5, covariance_matrix=engine.eye(3))
    with pytest.raises(ValueError, match=r"Expected value argument .* to be within the support "
                                         r"\(Interval\(lower_bound=0.0, upper_bound=1.0\)\)"):
        D.ContinuousBernoulli(0.3).log_prob(engine.tensor(1.5))
    with pytest.raises(ValueError, match=r"within the support \(CorrCholesky\(\)\)"):
        D.LKJCholesky(2).log_prob(engine.eye(2) * 2)


# ----------------------------------------------------------------------------- expand, on every family


def _all_families(L):  # noqa: N803
    rng = np.random.default_rng(0)
    d = L.distributions

    def t(lo, hi, shape=(3,)):
        return L.tensor(rng.uniform(lo, hi, shape), dtype=L.float64, requires_grad=True)

    a = rng.standard_normal((3, 3))
    spd = L.tensor(a @ a.T + 3 * np.eye(3), dtype=L.float64)
    half = L.tensor(0.5, dtype=L.float64)
    return {
        "Normal": lambda: d.Normal(t(-1, 1), t(0.5, 2)), "Laplace": lambda: d.Laplace(t(-1, 1), t(0.5, 2)),
        "Cauchy": lambda: d.Cauchy(t(-1, 1), t(0.5, 2)), "Gumbel": lambda: d.Gumbel(t(-1, 1), t(0.5, 2)),
        "LogNormal": lambda: d.LogNormal(t(-1, 1), t(0.5, 2)), "HalfNormal": lambda: d.HalfNormal(t(0.5, 2)),
        "HalfCauchy": lambda: d.HalfCauchy(t(0.5, 2)), "Exponential": lambda: d.Exponential(t(0.5, 2)),
        "Uniform": lambda: d.Uniform(t(-1, 0), t(1, 2)), "Bernoulli": lambda: d.Bernoulli(t(0.1, 0.9)),
        "Bernoulli logits": lambda: d.Bernoulli(logits=t(-1, 1)), "Geometric": lambda: d.Geometric(t(0.1, 0.9)),
        "Poisson": lambda: d.Poisson(t(0.5, 3)), "Binomial": lambda: d.Binomial(5, t(0.1, 0.9)),
        "Categorical": lambda: d.Categorical(logits=t(-1, 1, (3, 4))),
        "OneHotCategorical": lambda: d.OneHotCategorical(logits=t(-1, 1, (3, 4))),
        "OneHotCategoricalStraightThrough": lambda: d.OneHotCategoricalStraightThrough(logits=t(-1, 1, (3, 4))),
        "Gamma": lambda: d.Gamma(t(0.5, 3), t(0.5, 2)), "Chi2": lambda: d.Chi2(t(0.5, 3)),
        "Beta": lambda: d.Beta(t(0.5, 3), t(0.5, 3)), "StudentT": lambda: d.StudentT(t(2.5, 5), t(-1, 1), t(0.5, 2)),
        "Dirichlet": lambda: d.Dirichlet(t(0.5, 3, (3, 4))),
        "FisherSnedecor": lambda: d.FisherSnedecor(t(1, 5), t(5, 9)),
        "NegativeBinomial": lambda: d.NegativeBinomial(t(1, 5), logits=t(-1, 1)),
        "Pareto": lambda: d.Pareto(t(0.5, 2), t(2.5, 4)), "Weibull": lambda: d.Weibull(t(0.5, 2), t(0.5, 2)),
        "InverseGamma": lambda: d.InverseGamma(t(2.5, 4), t(0.5, 2)),
        "Kumaraswamy": lambda: d.Kumaraswamy(t(0.5, 2), t(0.5, 2)),
        "LogisticNormal": lambda: d.LogisticNormal(t(-1, 1, (3, 2)), t(0.5, 2, (3, 2))),
        "RelaxedBernoulli": lambda: d.RelaxedBernoulli(half, t(0.1, 0.9)),
        "RelaxedBernoulli, one": lambda: d.RelaxedBernoulli(half, L.tensor(0.3, dtype=L.float64)),
        "RelaxedOneHotCategorical": lambda: d.RelaxedOneHotCategorical(half, logits=t(-1, 1, (3, 4))),
        "Independent": lambda: d.Independent(d.Normal(t(-1, 1, (3, 2)), t(0.5, 2, (3, 2))), 1),
        "MultivariateNormal": lambda: d.MultivariateNormal(t(-1, 1, (3, 3)), covariance_matrix=spd),
        "MultivariateNormal, one": lambda: d.MultivariateNormal(t(-1, 1, (3,)), scale_tril=L.linalg.cholesky(spd)),
        "LowRankMultivariateNormal": lambda: d.LowRankMultivariateNormal(t(-1, 1, (3, 3)), t(-0.5, 0.5, (3, 2)),
                                                                         t(0.5, 1.5, (3,))),
        "MixtureSameFamily": lambda: d.MixtureSameFamily(d.Categorical(logits=t(-1, 1, (3, 2))),
                                                         d.Normal(t(-1, 1, (3, 2)), t(0.5, 2, (3, 2)))),
        "TransformedDistribution": lambda: d.TransformedDistribution(
            d.Normal(t(-1, 1), t(0.5, 2)), [d.transforms.ExpTransform(), d.transforms.AffineTransform(1.0, 2.0)]),
        "Normal, numbers": lambda: d.Normal(0.0, 1.0),
        "ContinuousBernoulli": lambda: d.ContinuousBernoulli(t(0.1, 0.9)), "VonMises": lambda: d.VonMises(
            t(-1, 1), t(0.5, 3)),
        "GeneralizedPareto": lambda: d.GeneralizedPareto(*(x.float() for x in (t(-1, 1), t(0.5, 2), t(-0.2, 0.3)))),
        "Wishart": lambda: d.Wishart(t(4, 6), covariance_matrix=spd), "LKJCholesky": lambda: d.LKJCholesky(
            3, t(0.5, 2)),
    }


def _expanded(L, name, value):  # noqa: N803
    base = _all_families(L)[name]()
    wider = base.expand((2, *base.batch_shape))
    out = {"type": type(wider).__name__, "shapes": (tuple(wider.batch_shape), tuple(wider.event_shape))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["sample"] = tuple(wider.sample().shape)
    out["log_prob"] = wider.log_prob(L.tensor(value)).detach().numpy()
    for what in ("mean", "variance", "entropy"):
        try:
            out[what] = (wider.entropy() if what == "entropy" else getattr(wider, what)).detach().numpy()
        except (NotImplementedError, AttributeError):
            out[what] = None
    return out


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_all_families(engine)))
def test_expand_widens_every_family_as_pytorchs(name):
    torch = pytest.importorskip("torch")
    engine.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = _all_families(engine)[name]().sample((2,)).numpy()  # (one value, in the support, for both)
    ours, theirs = _expanded(engine, name, value), _expanded(torch, name, value)
    assert ours.keys() == theirs.keys()
    for key in ours:
        if isinstance(theirs[key], np.ndarray):
            assert ours[key].shape == theirs[key].shape, key
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-9 if ours[key].dtype == np.float64 else 1e-6,
                                       equal_nan=True, err_msg=key)
        elif theirs[key] is not None:  # (PyTorch 2.13's expanded Multinomial has lost what its entropy needs)
            assert ours[key] == theirs[key], key


def test_expand_is_a_view_the_gradient_flows_back_through():
    loc = engine.tensor([0.0, 1.0], requires_grad=True)
    wide = D.Normal(loc, 1.0).expand((3, 2))
    assert wide.batch_shape == (3, 2) and wide.loc.shape == (3, 2)
    wide.log_prob(engine.zeros(3, 2)).sum().backward()
    assert loc.grad.tolist() == [0.0, -3.0]  # d/dloc of -(0 - loc)^2 / 2, summed over the three copies
    with pytest.raises(RuntimeError, match="expand"):
        D.Normal(engine.zeros(2), 1.0).expand((3,))


# ----------------------------------------------------------------------------- transforms and the registries


@pytest.mark.torch
def test_corr_cholesky_and_positive_definite_transforms_are_pytorchs():
    torch = pytest.importorskip("torch")
    x6 = np.random.default_rng(2).standard_normal((2, 6))
    square = np.random.default_rng(3).standard_normal((2, 3, 3))
    results = []
    for L in (engine, torch):
        t = L.distributions.transforms
        x = L.tensor(x6, requires_grad=True)
        corr = t.CorrCholeskyTransform()
        y = corr(x)
        back = corr.inv(y)
        jac = corr.log_abs_det_jacobian(x, y)
        (y.sum() + jac.sum()).backward()
        pd = t.PositiveDefiniteTransform()
        m = pd(L.tensor(square))
        results.append([y.detach().numpy(), back.detach().numpy(), jac.detach().numpy(), x.grad.numpy(),
                        m.numpy(), pd.inv(m).numpy(), corr.forward_shape((5, 6)), corr.inverse_shape((5, 4, 4))])
        assert bool(L.distributions.constraints.corr_cholesky.check(y).all())
        assert bool(L.distributions.constraints.positive_definite.check(m).all())
    for mine, theirs in zip(*results, strict=True):
        if isinstance(theirs, np.ndarray):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
        else:
            assert tuple(mine) == tuple(theirs)
    np.testing.assert_allclose(results[0][1], x6, rtol=1e-9)  # the inverse gives the input back


def _constraints(L):  # noqa: N803
    c = L.distributions.constraints
    return {"real": c.real, "positive": c.positive, "nonnegative": c.nonnegative, "greater_than": c.greater_than(2.0),
            "greater_than_eq": c.greater_than_eq(-1.0), "less_than": c.less_than(3.0),
            "unit_interval": c.unit_interval, "interval": c.interval(-2.0, 5.0),
            "half_open_interval": c.half_open_interval(1.0, 2.0), "simplex": c.simplex,
            "lower_cholesky": c.lower_cholesky, "positive_definite": c.positive_definite,
            "positive_semidefinite": c.positive_semidefinite, "corr_cholesky": c.corr_cholesky,
            "real_vector": c.real_vector, "independent positive": c.independent(c.positive, 1),
            "cat": c.cat([c.positive, c.interval(0.0, 1.0)], dim=-1, lengths=[2, 2]),
            "stack": c.stack([c.positive, c.real, c.unit_interval, c.less_than(0.0)], dim=-1)}


def _through(L, registry_name, name):  # noqa: N803
    constraint = _constraints(L)[name]
    registry = getattr(L.distributions, registry_name)
    try:
        transform = registry(constraint)
    except NotImplementedError as error:
        return str(error)
    u = np.random.default_rng(4).standard_normal((2, 3, 3) if name in (
        "lower_cholesky", "positive_definite", "positive_semidefinite") else (2, 3) if name == "corr_cholesky"
        else (2, 4))
    y = transform(L.tensor(u))
    return y.numpy(), bool(constraint.check(y).all()), repr(transform)


@pytest.mark.torch
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to_map_onto_each_constraint_as_pytorchs(registry):
    torch = pytest.importorskip("torch")
    for name in _constraints(engine):
        ours, theirs = _through(engine, registry, name), _through(torch, registry, name)
        if isinstance(theirs, str):
            assert ours == theirs, name
            continue
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, err_msg=name)
        assert ours[1] and theirs[1], name
        assert ours[2] == theirs[2], name


def test_a_constraint_of_ones_own_registers_its_transform():
    class Above3(D.constraints.Constraint):
        def check(self, value):
            return value > 3

    registry = D.constraint_registry.ConstraintRegistry()
    registry.register(Above3, lambda c: D.transforms.ComposeTransform(
        [D.transforms.ExpTransform(), D.transforms.AffineTransform(3.0, 1.0)]))
    assert registry(Above3())(engine.tensor([-50.0, 0.0])).tolist() == [3.0, 4.0]
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        registry(D.constraints.real)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        registry.register(int, lambda c: None)


# ----------------------------------------------------------------------------- a distribution of one's own


class _Triangle(D.Distribution):
    """The triangular distribution on (0, 2 * peak): what PyTorch's documentation shows a subclass needs."""

    arg_constraints = {"peak": D.constraints.positive}
    support = D.constraints.positive
    has_rsample = True

    def __init__(self, peak, validate_args=None):
        (self.peak,) = D.utils.broadcast_all(peak)
        super().__init__(self.peak.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = engine.rand(shape, dtype=self.peak.dtype) + engine.rand(shape, dtype=self.peak.dtype)
        return u * self.peak

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (1 - (value / self.peak - 1).abs()).log() - self.peak.log()


def test_a_distribution_of_ones_own_gets_pytorchs_checks_and_shapes():
    tri = _Triangle(engine.tensor([1.0, 2.0]))
    assert tri._extended_shape((5,)) == (5, 2) and tri.rsample((5,)).shape == (5, 2)
    assert repr(tri) == "_Triangle(peak: engine.Size([2]))"
    assert tri.log_prob(engine.tensor([1.0, 2.0])).tolist() == pytest.approx([0.0, -np.log(2.0)])
    with pytest.raises(ValueError, match=r"Expected parameter peak \(Tensor of shape \(2,\)\) of distribution "
                                         r"_Triangle\(peak: engine.Size\(\[2\]\)\) to satisfy the constraint "
                                         r"GreaterThan\(lower_bound=0.0\)"):
        _Triangle(engine.tensor([1.0, -2.0]))
    with pytest.raises(ValueError, match=r"to be within the support \(GreaterThan\(lower_bound=0.0\)\)"):
        tri.log_prob(engine.tensor([-1.0, 1.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        tri.log_prob(1.0)
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(engine.ones(3)).log_prob(engine.ones(2) / 2)
    assert _Triangle(engine.tensor([-1.0]), validate_args=False).peak.item() == -1.0
    # a subclass with an __init__ of its own must write its own expand (PyTorch's rule)
    with pytest.raises(NotImplementedError):
        tri.expand((3, 2))

    class Shifted(D.Normal):
        def __init__(self, loc):
            super().__init__(loc + 1.0, 1.0)

    with pytest.raises(NotImplementedError, match="Subclass Shifted of Normal that defines a custom __init__\\(\\) "
                                                  "method must also define a custom .expand\\(\\) method."):
        Shifted(engine.zeros(2)).expand((3, 2))

    class Unconstrained(D.Distribution):
        def __init__(self):
            super().__init__(())

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        Unconstrained()


def test_set_default_validate_args_turns_the_checks_off_and_on():
    try:
        D.Distribution.set_default_validate_args(False)
        assert D.Normal(0.0, -1.0).scale.item() == -1.0  # no check
        assert D.Uniform(0.0, 1.0).log_prob(engine.tensor(2.0)).item() == -np.inf
        assert D.Normal(0.0, 1.0, validate_args=True)._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


@pytest.mark.torch
def test_utils_are_pytorchs():
    torch = pytest.importorskip("torch")
    out = []
    for L in (engine, torch):
        u = L.distributions.utils
        vec = L.tensor(np.arange(1.0, 7.0))
        probs = L.tensor([0.0, 0.25, 1.0])
        a, b = u.broadcast_all(L.tensor([1.0, 2.0]), 3)
        out.append([u.vec_to_tril_matrix(vec).numpy(), u.vec_to_tril_matrix(vec, diag=-1).numpy(),
                    u.tril_matrix_to_vec(u.vec_to_tril_matrix(vec)).numpy(), u.probs_to_logits(probs).numpy(),
                    u.probs_to_logits(probs, is_binary=True).numpy(), u.clamp_probs(probs).numpy(),
                    u.logits_to_probs(L.tensor([0.0, 1.0])).numpy(), a.numpy(), b.numpy()])
        with pytest.raises(ValueError, match="The size of last dimension is 5 which cannot be expressed as the "
                                             "lower triangular part"):
            u.vec_to_tril_matrix(L.zeros(5))
    for mine, theirs in zip(*out, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=2e-7)


def test_lazy_property_is_computed_once_and_kept():
    calls = []

    class Thing:
        @D.utils.lazy_property
        def value(self):
            calls.append(1)
            return engine.tensor(2.0)

    thing = Thing()
    assert thing.value.item() == 2.0 and thing.value.item() == 2.0 and len(calls) == 1
    with engine.no_grad():  # (computed with gradients on, as PyTorch's)
        x = engine.tensor(1.0, requires_grad=True)

        class Derived:
            @D.utils.lazy_property
            def y(self):
                return x * 2

        assert Derived().y.requires_grad


def test_enumerate_support_of_the_discrete_families():
    b = D.Bernoulli(engine.tensor([0.3, 0.6]))
    assert b.has_enumerate_support and b.enumerate_support().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert b.enumerate_support(expand=False).shape == (2, 1)
    onehot = D.OneHotCategorical(logits=engine.zeros(2, 3))
    assert onehot.enumerate_support().shape == (3, 2, 3)
    assert onehot.enumerate_support(expand=False)[:, 0].tolist() == np.eye(3).tolist()
    independent = D.Independent(b, 1)
    assert not independent.has_enumerate_support
    with pytest.raises(NotImplementedError, match="Enumeration over cartesian product is not implemented"):
        independent.enumerate_support()
    assert D.Independent(b, 0).enumerate_support().shape == (2, 2)
    assert not D.Normal(0.0, 1.0).has_enumerate_support
    # the Bernoulli's log-likelihood summed over its support is 1 in probability
    support = b.enumerate_support()
    np.testing.assert_allclose(b.log_prob(support).exp().sum(0).numpy(), [1.0, 1.0])
