"""The distributions of ``engine.distributions`` (its package docstring says what they are for)."""

from __future__ import annotations

import math

import numpy as np

from .. import creation
from ..autograd import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size, Tensor

__all__ = ["Distribution", "Normal", "Categorical", "Bernoulli", "Uniform"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _tensor(value, like=None) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if like is not None:
        return creation.tensor(value, dtype=like.dtype, device=like.device)
    return creation.tensor(float(value))


def _broadcast(*values):
    tensors = [v for v in values if isinstance(v, Tensor)]
    like = tensors[0] if tensors else None
    out = [_tensor(v, like) for v in values]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in out))
    return [t.expand(*shape) if tuple(t.shape) != shape else t for t in out]


def _shape(sample_shape) -> tuple:
    return (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)


class Distribution:
    """The common part: ``batch_shape``, ``event_shape``, ``sample`` (no gradient) from ``rsample`` where there is
    one, and the check of a parameter against its constraint (PyTorch's ``validate_args``, on by default)."""

    has_rsample = False
    batch_shape: Size
    event_shape = Size(())

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self.batch_shape = Size(batch_shape)
        self.event_shape = Size(event_shape)
        self._validate = True if validate_args is None else bool(validate_args)

    def _check(self, name: str, value: Tensor, constraint: str, ok) -> None:
        if self._validate and not bool(ok(value.detach()).all()):
            raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to satisfy the constraint {constraint}, but found invalid "
                             f"values:\n{value}")

    def _extended(self, sample_shape) -> tuple:
        return _shape(sample_shape) + tuple(self.batch_shape) + tuple(self.event_shape)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sample (rsample)")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self):
        params = ", ".join(f"{name}: {getattr(self, name).shape if isinstance(getattr(self, name), Tensor) else ''}"
                           for name in self._params)
        return f"{type(self).__name__}({params})"


class Normal(Distribution):
    """The normal distribution of mean ``loc`` and standard deviation ``scale`` (> 0)."""

    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)
        self._check("scale", self.scale, "GreaterThan(lower_bound=0.0)", lambda s: s > 0)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        """``loc + scale * eps``, eps standard normal: the gradient reaches ``loc`` and ``scale``."""
        eps = creation.randn(*self._extended(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _LOG_SQRT_2PI

    def entropy(self) -> Tensor:
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    def cdf(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())


class Categorical(Distribution):
    """A choice among the last dimension's categories, by ``probs`` (normalised to sum to 1) or ``logits``
    (normalised by their logsumexp): a policy's distribution over actions."""

    _params = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = float(np.finfo(self.probs.dtype.np).eps)
            self.logits = self.probs.clamp(eps, 1 - eps).log()  # PyTorch's probs_to_logits
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        super().__init__(self.probs.shape[:-1], (), validate_args)
        if probs is not None:
            self._check("probs", probs, "Simplex()", lambda p: (p >= 0) & (p.sum(-1, keepdim=True) > 0))
        self._num_events = self.probs.shape[-1]

    @property
    def param_shape(self) -> Size:
        return self.probs.shape

    @property
    def mean(self) -> Tensor:
        return creation.full(tuple(self.batch_shape), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape=()) -> Tensor:
        """Category indices (int64), ``sample_shape + batch_shape``."""
        shape = _shape(sample_shape)
        n = int(np.prod(shape)) if shape else 1
        with no_grad():
            flat = self.probs.reshape(-1, self._num_events)
            drawn = flat.multinomial(n, replacement=True)  # (batch, n)
            return drawn.t().reshape(*shape, *self.batch_shape)

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, None).long() if not isinstance(value, Tensor) else value.long()
        if self._validate and not bool(((value >= 0) & (value < self._num_events)).all()):
            raise ValueError(f"Expected value argument to be within the support (IntegerInterval(lower_bound=0, "
                             f"upper_bound={self._num_events - 1})) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.batch_shape))
        logits = self.logits.expand(*shape, self._num_events)
        index = value.to(logits.device).expand(*shape).unsqueeze(-1)
        return logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        floor = float(np.finfo(self.logits.dtype.np).min)
        return -(self.probs * self.logits.clamp(min=floor)).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(self._num_events, device=self.probs.device).reshape(
            -1, *(1,) * len(self.batch_shape))
        return values.expand(self._num_events, *self.batch_shape) if expand else values


class Bernoulli(Distribution):
    """A coin that shows 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    _params = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _tensor(probs)
            eps = float(np.finfo(self.probs.dtype.np).eps)
            clamped = self.probs.clamp(eps, 1 - eps)
            self.logits = clamped.log() - (-clamped).log1p()
        else:
            self.logits = _tensor(logits)
            self.probs = self.logits.sigmoid()
        super().__init__(self.probs.shape, (), validate_args)
        if probs is not None:
            self._check("probs", self.probs, "Interval(lower_bound=0.0, upper_bound=1.0)",
                        lambda p: (p >= 0) & (p <= 1))

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            u = creation.rand(*self._extended(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
            return (u < self.probs).to(self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        logits, value = _broadcast(self.logits, _tensor(value, self.logits))
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``."""

    has_rsample = True
    _params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast(low, high)
        super().__init__(self.low.shape, (), validate_args)
        self._check("low", self.low, "LessThan(upper_bound=high)", lambda lo: lo < self.high.detach())

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()) -> Tensor:
        u = creation.rand(*self._extended(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.low)
        inside = (value >= self.low) & (value < self.high)
        return (-(self.high - self.low).log()).where(inside, float("-inf"))

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        value = _tensor(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)
