"""The distributions over matrices of ``torch.distributions``: ``Wishart`` (positive-definite matrices: the
covariance prior) and ``LKJCholesky`` (Cholesky factors of correlation matrices), with PyTorch's formulas and
samplers (Bartlett's decomposition; the onion method), written from the engine's ops."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import creation, functional, linalg
from ..autograd import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .families import Beta, Chi2, Distribution, ExponentialFamily, _scale_tril_of
from .utils import broadcast_all, lazy_property

__all__ = ["Wishart", "LKJCholesky"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma function of dimension ``p``."""
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = creation.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - halves.expand(*x.shape, -1)).digamma().sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=float(np.finfo(x.dtype.np).eps))


class Wishart(ExponentialFamily):
    """The Wishart distribution of ``df`` degrees of freedom (> dimension - 1) over positive-definite matrices, of
    one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``: the law of ``sum(x x^T)`` over ``df``
    normal vectors of that covariance. ``rsample`` is Bartlett's decomposition (its gradient reaches ``df``
    through the chi-squared draws, and the scale); a draw that comes out singular is drawn again (up to
    ``max_try_correction`` times) with a warning."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _checks_own_args = False

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Tensor):
            batch_shape = Size(np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(*batch_shape)
        else:
            batch_shape = Size(param.shape[:-2])
            self.df = creation.tensor(df, dtype=param.dtype, device=param.device)
        event_shape = Size(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        full = (*batch_shape, -1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(*full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*full)
        else:
            self.precision_matrix = param.expand(*full)
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self.batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape) -> Chi2:
        """The chi-squared laws of Bartlett's diagonal: ``df - i`` degrees of freedom for row ``i``."""
        p = self.event_shape[-1]
        steps = creation.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                                device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(*batch_shape, -1))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = (*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(*self.batch_shape, *self.event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return self._full(lower @ lower.mT)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        identity = creation.eye(self.event_shape[-1], dtype=lower.dtype, device=lower.device)
        return self._full(linalg.cholesky_solve(identity, lower))

    def _df_matrix(self, df: Tensor) -> Tensor:
        return df.view(*self.batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._df_matrix(factor.masked_fill(factor <= 0, math.nan)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (v.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()) -> Tensor:
        p = self.event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = functional.tril_indices(p, p, offset=-1)
        noise[..., i, j] = creation.randn(*Size(sample_shape), *self.batch_shape, p * (p - 1) // 2,
                                          dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def _singular(self, sample: Tensor) -> Tensor:
        singular = ~self.support.check(sample)
        if self.batch_shape:
            singular = singular.amax(self._batch_dims)
        return singular

    def rsample(self, sample_shape=(), max_try_correction=None) -> Tensor:
        """Bartlett's draws; one that is not positive definite (a low ``df`` makes them) is drawn again, up to
        ``max_try_correction`` (10) times, with a warning. (PyTorch 2.13 inverts that check: it warns "Singular
        sample detected." at every draw and draws the good ones again.)"""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size((sample_shape,) if isinstance(sample_shape, int) else sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(singular[singular].shape)
                sample[singular] = redrawn
                still = self._singular(redrawn)
                singular[singular.clone()] = still
                if not bool(singular.any()):
                    break
        return sample

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value) -> Tensor:
        nu, p = self.df, self.event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + lower.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - (nu / 2).mvlgamma(p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - linalg.cholesky_solve(value, lower).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self.event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + lower.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + (nu / 2).mvlgamma(p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        nu, p = self.df, self.event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self.event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p=p))


class LKJCholesky(Distribution):
    """The LKJ distribution over the lower Cholesky factors of ``dim`` x ``dim`` correlation matrices, of
    ``concentration`` eta (> 0; 1 is uniform over correlation matrices, larger favours the identity). Draws by the
    onion method (Lewandowski, Kurowicka and Joe, 2009), as PyTorch's; no reparameterised draw."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _checks_own_args = False

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = creation.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = creation.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = creation.randn(*self._extended(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            u_hypersphere[..., 0, :].fill_(0.0)  # (the first row is all zeros: its norm was 0)
            w = y.sqrt() * u_hypersphere
            tiny = float(np.finfo(w.dtype.np).tiny)
            diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value) -> Tensor:
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = creation.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        return unnormalized - (0.5 * dm1 * math.log(math.pi) + numerator - denominator)

