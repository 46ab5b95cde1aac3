"""The last scalar families of ``torch.distributions``: ``ContinuousBernoulli`` (the [0, 1]-valued distribution a
VAE's pixel likelihood should be), ``VonMises`` (angles) and ``GeneralizedPareto`` (tails), written from the
engine's ops with PyTorch's formulas: the same numerically stable branches, so values and gradients agree."""

from __future__ import annotations

import math

from .. import creation
from ..autograd import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size, Tensor
from . import constraints
from .families import Distribution, ExponentialFamily
from .utils import _is_number, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli", "VonMises", "GeneralizedPareto"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham, 2019): density proportional to
    ``probs^x (1 - probs)^(1 - x)``, of ``probs`` in (0, 1) or real ``logits``; ``rsample`` through the inverse
    CDF. Near ``probs = 1/2`` (within ``lims``) its normalizer, mean and variance are Taylor series, as PyTorch's."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _checks_own_args = False  # (the base class's check, as PyTorch's: probs after clamping, logits where given)

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = _is_number(probs)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = _is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if is_scalar else self._param.shape, (), validate_args)

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return creation.where(self._outside_unstable_region(), self.probs,
                              self._lims[0] * creation.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log of the normalizing constant, of ``probs``."""
        cut = self._cut_probs()
        below = creation.where(cut <= 0.5, cut, creation.zeros_like(cut))
        above = creation.where(cut >= 0.5, cut, creation.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - creation.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return creation.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return creation.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return creation.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def sample(self, sample_shape=()) -> Tensor:
        u = creation.rand(*self._extended(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()) -> Tensor:
        u = creation.rand(*self._extended(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value) -> Tensor:
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value) -> Tensor:
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = creation.where(self._outside_unstable_region(), cdfs, value)
        return creation.where(value <= 0.0, creation.zeros_like(value),
                              creation.where(value >= 1.0, creation.ones_like(value), unbounded))

    def icdf(self, value) -> Tensor:
        cut = self._cut_probs()
        return creation.where(self._outside_unstable_region(),
                              ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                              / (cut.log() - (-cut).log1p()), value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizer of the natural parameter (a Taylor series near 0)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = creation.where(outside, x, (self._lims[0] - 0.5) * creation.ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return creation.where(outside, log_norm, taylor)


# The modified Bessel functions I0 and I1 of the von Mises normalizer, by Abramowitz and Stegun's polynomials (9.8.1
# to 9.8.4), as PyTorch evaluates them: below 3.75 in (x / 3.75)^2, above it in 3.75 / x.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
                  -0.01647633, 0.00392377]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
                  0.01787654, -0.00420059]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log(I_order(x))`` for ``x`` > 0, ``order`` 0 or 1."""
    y = (x / 3.75).pow(2)
    small = _eval_poly(y, (_I0_COEF_SMALL, _I1_COEF_SMALL)[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, (_I0_COEF_LARGE, _I1_COEF_LARGE)[order]).log()
    return creation.where(x < 3.75, small, large)


class VonMises(Distribution):
    """The von Mises distribution of angles around ``loc`` with ``concentration`` kappa (> 0): density
    ``exp(kappa cos(x - loc)) / (2 pi I0(kappa))``. Draws by Best and Fisher's rejection sampler in float64, as
    PyTorch's, within [-pi, pi); no reparameterised draw."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _checks_own_args = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value) -> Tensor:
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.double()

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.double()

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho.pow(2)) / (2 * rho)
        return creation.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            loc, concentration, proposal_r = self._loc, self._concentration, self._proposal_r
            shape = self._extended(sample_shape)
            x = creation.zeros(*shape, dtype=loc.dtype, device=loc.device)
            done = creation.zeros(*shape, dtype=bool, device=loc.device)
            while not bool(done.all()):
                u1, u2, u3 = creation.rand(3, *shape, dtype=loc.dtype, device=loc.device).unbind()
                z = (math.pi * u1).cos()
                f = (1 + proposal_r * z) / (proposal_r + z)
                c = concentration * (proposal_r - f)
                accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = creation.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                    done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(*batch_shape), self.concentration.expand(*batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """The circular mean: ``loc``."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance, ``1 - I1(kappa) / I0(kappa)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of ``loc``, ``scale`` (> 0) and real ``concentration`` xi: an
    exponential tail at xi = 0, heavier above, bounded below 0 (its support ends at ``loc - scale / xi``);
    ``rsample`` through the inverse CDF."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _checks_own_args = False

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = _is_number(loc) and _is_number(scale) and _is_number(concentration)
        super().__init__(() if scalar else self.loc.shape, (), validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        u = creation.rand(*self._extended(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        eq_zero = self.concentration.isclose(creation.zeros_like(self.concentration))
        return eq_zero, creation.where(eq_zero, creation.ones_like(self.concentration), self.concentration)

    def log_prob(self, value) -> Tensor:
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + creation.ones_like(z)
        where_nonzero = creation.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - creation.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return creation.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value) -> Tensor:
        eq_zero, safe = self._safe_concentration()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return creation.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = creation.where(valid, self.concentration, 0.5)
        return creation.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = creation.where(valid, self.concentration, 0.25)
        return creation.where(valid, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(*self.batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = creation.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)

