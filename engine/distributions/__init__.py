"""``engine.distributions``: the distributions a first reinforcement-learning or VAE script reaches for, as
``torch.distributions`` has them: ``Normal`` (``rsample``, the reparameterised draw a VAE backpropagates
through), ``Categorical`` (a policy's actions: ``sample``, ``log_prob`` for REINFORCE, ``entropy``), ``Bernoulli``,
``Uniform``, ``Exponential``, ``Laplace``, ``Cauchy``, ``Gumbel``, ``HalfNormal``, ``LogNormal``, ``Poisson``,
``Geometric``, ``OneHotCategorical``, ``Independent`` (a VAE's diagonal Gaussian over a vector),
``MultivariateNormal``, ``Gamma``, ``Chi2``, ``Beta``, ``StudentT``, ``Binomial``, ``Dirichlet``, and
``TransformedDistribution`` with the ``transforms`` (a tanh-squashed Gaussian policy) and the families PyTorch makes
from it (``Pareto``, ``Weibull``, ``HalfCauchy``, ``InverseGamma``, ``Kumaraswamy``, ``LogisticNormal``,
``RelaxedBernoulli``, ``RelaxedOneHotCategorical``); ``MixtureSameFamily`` (a Gaussian mixture),
``Multinomial``, ``NegativeBinomial``, ``FisherSnedecor``, ``LowRankMultivariateNormal``,
``OneHotCategoricalStraightThrough``; ``constraints`` (each family's ``arg_constraints`` and
``support``) and ``kl_divergence`` between two of a kind. Each is written from the engine's ops, so its
``log_prob``, ``entropy`` and ``rsample`` have gradients (the gamma family's ``rsample``, Beta's and Dirichlet's
too, by PyTorch's implicit reparameterisation: ``_reparam``); draws come from the engine's generator
(``manual_seed`` repeats them; the numbers differ from PyTorch's, the distributions are PyTorch's)."""

from . import constraint_registry, constraints, kl, transforms, utils
from .constraint_registry import biject_to, transform_to
from .continuous import ContinuousBernoulli, GeneralizedPareto, VonMises
from .families import (
    Bernoulli,
    Beta,
    Binomial,
    Categorical,
    Cauchy,
    Chi2,
    Distribution,
    Exponential,
    ExponentialFamily,
    Gamma,
    Geometric,
    Gumbel,
    HalfNormal,
    Independent,
    Laplace,
    LogNormal,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    Poisson,
    StudentT,
    Uniform,
)
from .kl import kl_divergence, register_kl
from .matrices import LKJCholesky, Wishart
from .more import (
    FisherSnedecor,
    LowRankMultivariateNormal,
    MixtureSameFamily,
    Multinomial,
    NegativeBinomial,
    OneHotCategoricalStraightThrough,
)
from .transformed import (
    Dirichlet,
    ExpRelaxedCategorical,
    HalfCauchy,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogitRelaxedBernoulli,
    Pareto,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
    Weibull,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

_c = constraints
_PROB = {"probs": _c.unit_interval, "logits": _c.real}
_SIMPLEX = {"probs": _c.simplex, "logits": _c.real_vector}
_LOC_SCALE = {"loc": _c.real, "scale": _c.positive}
for _family, _args, _support in [
        (Normal, _LOC_SCALE, _c.real), (Bernoulli, _PROB, _c.boolean), (Exponential, {"rate": _c.positive},
                                                                           _c.nonnegative),
        (Laplace, _LOC_SCALE, _c.real), (Cauchy, _LOC_SCALE, _c.real), (Gumbel, _LOC_SCALE, _c.real),
        (HalfNormal, {"scale": _c.positive}, _c.nonnegative), (LogNormal, _LOC_SCALE, _c.positive),
        (Poisson, {"rate": _c.nonnegative}, _c.nonnegative_integer), (Geometric, _PROB, _c.nonnegative_integer),
        (OneHotCategorical, _SIMPLEX, _c.one_hot), (Categorical, _SIMPLEX, None), (Independent, {}, None),
        (MultivariateNormal, {"loc": _c.real_vector, "covariance_matrix": _c.positive_definite,
                              "precision_matrix": _c.positive_definite, "scale_tril": _c.lower_cholesky},
         _c.real_vector),
        (Gamma, {"concentration": _c.positive, "rate": _c.positive}, _c.nonnegative),
        (Chi2, {"df": _c.positive}, _c.nonnegative),
        (Beta, {"concentration1": _c.positive, "concentration0": _c.positive}, _c.unit_interval),
        (StudentT, {"df": _c.positive, "loc": _c.real, "scale": _c.positive}, _c.real),
        (Binomial, {"total_count": _c.nonnegative_integer, **_PROB}, None), (Uniform, None, None)]:
    if _args is not None:
        _family.arg_constraints = _args
    if _support is not None:
        _family.support = _support
Categorical.support = property(lambda self: _c.integer_interval(0, self._num_events - 1))
Independent.support = property(lambda self: _c.independent(self.base_dist.support, self.reinterpreted_batch_ndims))
Binomial.support = property(lambda self: _c.integer_interval(0, self.total_count))
Uniform.arg_constraints = property(lambda self: {"low": _c.less_than(self.high), "high": _c.greater_than(self.low)})
Uniform.support = property(lambda self: _c.interval(self.low, self.high))
del _family, _args, _support

__all__ = ["Distribution", "Normal", "Categorical", "Bernoulli", "Uniform", "Exponential", "Laplace", "Cauchy",
           "Gumbel", "HalfNormal", "LogNormal", "Poisson", "Geometric", "OneHotCategorical", "Independent",
           "MultivariateNormal", "Gamma", "Chi2", "Beta", "StudentT", "Binomial", "kl_divergence", "kl",
           "constraints", "transforms", "TransformedDistribution", "Pareto", "Weibull", "HalfCauchy", "InverseGamma",
           "Kumaraswamy", "LogisticNormal", "LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical",
           "RelaxedOneHotCategorical", "Dirichlet", "Transform", "AbsTransform", "AffineTransform", "CatTransform",
           "ComposeTransform", "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "identity_transform",
           "MixtureSameFamily", "Multinomial", "NegativeBinomial", "FisherSnedecor", "LowRankMultivariateNormal",
           "OneHotCategoricalStraightThrough", "register_kl", "ExponentialFamily", "ContinuousBernoulli", "VonMises",
           "GeneralizedPareto", "Wishart", "LKJCholesky", "CorrCholeskyTransform", "PositiveDefiniteTransform",
           "biject_to", "transform_to", "constraint_registry", "utils"]
