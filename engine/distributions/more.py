"""More of ``torch.distributions``: ``MixtureSameFamily`` (a Gaussian mixture model), ``Multinomial``,
``NegativeBinomial``, ``FisherSnedecor``, ``LowRankMultivariateNormal`` and ``OneHotCategoricalStraightThrough``,
written from the engine's ops as PyTorch writes them."""

from __future__ import annotations

import math

import numpy as np

from .. import creation
from ..autograd import no_grad
from ..nn import functional as F
from ..tensor import Tensor
from . import constraints
from .families import (
    Binomial,
    Categorical,
    Distribution,
    Gamma,
    OneHotCategorical,
    _binary,
    _broadcast,
    _host_draws,
    _tensor,
)

__all__ = ["MixtureSameFamily", "Multinomial", "NegativeBinomial", "FisherSnedecor", "LowRankMultivariateNormal",
           "OneHotCategoricalStraightThrough"]


class MixtureSameFamily(Distribution):
    """A mixture of the components of ``component_distribution`` (its last batch dimension), weighted by
    ``mixture_distribution`` (a Categorical over them): ``log_prob`` is the log of the weighted sum of the
    components' densities; draws pick a component, then draw from it."""

    arg_constraints: dict = {}
    has_rsample = False
    _params = ()

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_distribution.batch_shape}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(*xs[:-1], *([1] * pad_ndims), *xs[-1:], *([1] * self._event_ndims))

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x) -> Tensor:
        log_prob_x = self.component_distribution.log_prob(self._pad(_tensor(x, self.mixture_distribution.logits)))
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            sample_shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(*mix_shape, *([1] * (len(es) + 1))).repeat(*([1] * len(mix_shape)), 1, *es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"


class Multinomial(Distribution):
    """The counts of each of the last dimension's categories in ``total_count`` draws of a Categorical of ``probs``
    (or ``logits``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _params = ("probs",)

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            sample_shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
            samples = self._categorical.sample((self.total_count,) + sample_shape)
            order = list(range(samples.dim()))
            order.append(order.pop(0))
            samples = samples.permute(*order)
            counts = creation.zeros(*self._extended(sample_shape), dtype=samples.dtype, device=samples.device)
            counts.scatter_add_(-1, samples, creation.ones_like(samples))
            return counts.to(self.probs.dtype)

    def entropy(self) -> Tensor:
        # (n a tensor of the default dtype, as PyTorch's torch.tensor(total_count) gives its lgamma: its precision)
        n = creation.tensor(float(self.total_count), device=self.probs.device)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value) -> Tensor:
        logits, value = _broadcast(self.logits, _tensor(value, self.logits))
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures, each trial a success with ``probs`` (or
    ``sigmoid(logits)``)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _params = ("total_count", "probs")

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self.total_count, self.probs, self.logits = _binary(probs, logits, total_count)
        self.total_count = self.total_count.to(self.probs.dtype)
        super().__init__(self.logits.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()) -> Tensor:
        rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
        r = rate.detach().cpu().numpy()
        return _host_draws(self, sample_shape, self.logits, lambda g, shape: g.poisson(np.broadcast_to(r, shape)))

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.logits)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization


class FisherSnedecor(Distribution):
    """The F distribution of ``df1`` and ``df2`` degrees of freedom: a ratio of two scaled chi-squared draws
    (reparameterised: the gradient reaches both)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _params = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _broadcast(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        df2 = self.df2.masked_fill(self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, math.nan)

    @property
    def variance(self) -> Tensor:
        df2 = self.df2.masked_fill(self.df2 <= 4, math.nan)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()) -> Tensor:
        tiny = float(np.finfo(self.df1.dtype.np).tiny)
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.df1)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(w, d):
    from .. import linalg

    m = w.shape[-1]
    k = (w.mT / d.unsqueeze(-2)) @ w + creation.eye(m, dtype=w.dtype, device=w.device)
    return linalg.cholesky(k)


class LowRankMultivariateNormal(Distribution):
    """The normal distribution over vectors of mean ``loc`` and covariance ``cov_factor cov_factor^T +
    diag(cov_diag)``: a low-rank factor plus a diagonal (a factor-analysis model), never forming the full matrix
    for ``log_prob`` (the Woodbury identity through the capacitance's Cholesky factor)."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _params = ("loc",)
    _unbatched = ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            shape = np.broadcast_shapes(tuple(loc.shape) + (1,), tuple(cov_factor.shape), tuple(cov_diag.shape) + (1,))
        except ValueError:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, cov_diag "
                             f"{cov_diag.shape}") from None
        self.loc = loc.unsqueeze(-1).expand(*shape[:-1], 1)[..., 0]
        self.cov_factor = cov_factor.expand(*shape)
        self.cov_diag = cov_diag.unsqueeze(-1).expand(*shape[:-1], 1)[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), event_shape, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            *self.batch_shape, *self.event_shape)

    @property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        cov = w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def precision_matrix(self) -> Tensor:
        from .. import linalg

        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance, wt_dinv, upper=False)
        precision = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        return precision.expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def scale_tril(self) -> Tensor:
        from .. import linalg

        n = self.event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        w = self._unbroadcasted_cov_factor / d_sqrt
        k = w @ w.mT + creation.eye(n, dtype=w.dtype, device=w.device)
        return (d_sqrt * linalg.cholesky(k)).expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = creation.randn(*w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = creation.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        return 2 * self._capacitance.diagonal(dim1=-2, dim2=-1).log().sum(-1) + self._unbroadcasted_cov_diag.log().sum(
            -1)

    def log_prob(self, value) -> Tensor:
        from .. import linalg

        diff = _tensor(value, self.loc) - self.loc
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), diff)
        term1 = (diff.pow(2) / d).sum(-1)
        # the capacitance's Mahalanobis term: |L^-1 (W^T D^-1 x)|^2
        batch = np.broadcast_shapes(tuple(self._capacitance.shape[:-2]), tuple(wt_dinv_x.shape[:-1]))
        m = self._capacitance.shape[-1]
        solved = linalg.solve_triangular(self._capacitance.expand(*batch, m, m), wt_dinv_x.expand(*batch, m)
                                         .unsqueeze(-1), upper=False).squeeze(-1)
        maha = term1 - solved.pow(2).sum(-1)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + self._log_det() + maha)

    def entropy(self) -> Tensor:
        h = 0.5 * (self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """:class:`OneHotCategorical` whose ``rsample`` is the one-hot draw with the probabilities' gradient passed
    straight through (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
