"""``engine.distributions``: the distributions a first reinforcement-learning or VAE script reaches for, as
``torch.distributions`` has them: ``Normal`` (``rsample``, the reparameterised draw a VAE backpropagates
through), ``Categorical`` (a policy's actions: ``sample``, ``log_prob`` for REINFORCE, ``entropy``), ``Bernoulli``,
``Uniform``, ``Exponential``, ``Laplace``, ``Cauchy``, ``Gumbel``, ``HalfNormal``, ``LogNormal``, ``Poisson``,
``Geometric``, ``OneHotCategorical``, ``Independent`` (a VAE's diagonal Gaussian over a vector),
``MultivariateNormal``, ``Gamma``, ``Chi2``, ``Beta``, ``StudentT``, ``Binomial``, and ``kl_divergence`` between two of
a kind. Each is written from the engine's ops, so its
``log_prob``, ``entropy`` and ``rsample`` have gradients; draws come from the engine's generator
(``manual_seed`` repeats them; the numbers differ from PyTorch's, the distributions are PyTorch's)."""

from . import kl
from .families import (
    Bernoulli,
    Beta,
    Binomial,
    Categorical,
    Cauchy,
    Chi2,
    Distribution,
    Exponential,
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
from .kl import kl_divergence

__all__ = ["Distribution", "Normal", "Categorical", "Bernoulli", "Uniform", "Exponential", "Laplace", "Cauchy",
           "Gumbel", "HalfNormal", "LogNormal", "Poisson", "Geometric", "OneHotCategorical", "Independent",
           "MultivariateNormal", "Gamma", "Chi2", "Beta", "StudentT", "Binomial", "kl_divergence", "kl"]
