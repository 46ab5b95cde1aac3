"""The distributions of ``engine.distributions`` (its package docstring says what they are for)."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import creation
from ..autograd import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size, Tensor
from . import constraints as _constraints
from .utils import lazy_property as _lazy_property

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Categorical", "Bernoulli", "Uniform", "Exponential",
           "Laplace", "Cauchy", "Gumbel", "HalfNormal", "LogNormal", "Poisson", "Geometric", "OneHotCategorical",
           "Independent", "MultivariateNormal", "Gamma", "Chi2", "Beta", "StudentT", "Binomial"]

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


def _binary(probs, logits, *others):
    """``(others..., probs, logits)``, ``others`` broadcast with the one of ``probs``/``logits`` given (exactly one,
    or PyTorch's error), the other made from it: logits from probs clamped into (0, 1) by the dtype's eps
    (PyTorch's ``probs_to_logits(is_binary=True)``), probs as logits' sigmoid."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        *others, probs = _broadcast(*others, probs)
        eps = float(np.finfo(probs.dtype.np).eps)
        clamped = probs.clamp(eps, 1 - eps)
        return (*others, probs, clamped.log() - (-clamped).log1p())
    *others, logits = _broadcast(*others, logits)
    return (*others, logits.sigmoid(), logits)


def _shape(sample_shape) -> tuple:
    return (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)


def _validating(fn):
    """``fn`` (a family's ``log_prob`` or ``cdf``) after :meth:`Distribution._validate_sample` of its value."""

    @functools.wraps(fn)
    def method(self, value, *args, **kwargs):
        self._validate_sample(value)
        return fn(self, value, *args, **kwargs)

    method._validates = True
    return method


class Distribution:
    """The common part: ``batch_shape``, ``event_shape``, ``sample`` (no gradient) from ``rsample`` where there is
    one, ``expand``, and the checks of the parameters and of a value against their constraints (PyTorch's
    ``validate_args``: on by default, ``Distribution.set_default_validate_args(False)`` turns it off for every
    distribution made after, ``validate_args=`` for one). A distribution of one's own, written as PyTorch's
    documentation shows (``arg_constraints``, ``support``, ``super().__init__(batch_shape, ...)``,
    ``self._validate_sample(value)``, ``self._extended_shape(sample_shape)``), has its parameters checked here as
    PyTorch's base class checks them; the engine's families check their own (by name, in their ``__init__``)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True  # PyTorch's default (``__debug__``)
    _checks_own_args = True  # the engine's families; a subclass of one's own: False (__init_subclass__)
    _expand_owner = None  # the engine's family whose generic ``expand`` an instance inherits
    _unbatched: tuple = ()  # tensors ``expand`` keeps as they are (not of the batch's shape)
    _params = None  # the parameters __repr__ shows (None: those of arg_constraints the instance holds)
    batch_shape: Size
    event_shape = Size(())

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions made from now on check their parameters and values (PyTorch's switch)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self.batch_shape = Size(batch_shape)
        self.event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args and not self._checks_own_args:
            self._check_arg_constraints()

    def __init_subclass__(cls, **kwargs):
        """Each family's ``log_prob`` and ``cdf`` check their value first (:meth:`_validate_sample`), as PyTorch's
        do while ``validate_args`` is on (its default); a class of one's own has its parameters checked by
        :meth:`_check_arg_constraints` and inherits the ``expand`` of the engine's family it subclasses."""
        super().__init_subclass__(**kwargs)
        ours = cls.__module__.startswith(__package__ + ".")
        if "_checks_own_args" not in cls.__dict__:
            cls._checks_own_args = ours
        if ours:
            cls._expand_owner = cls
        for name in ("log_prob", "cdf"):
            fn = cls.__dict__.get(name)
            if ours and fn is not None and not getattr(fn, "_validates", False):
                setattr(cls, name, _validating(fn))

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    def _check_arg_constraints(self) -> None:
        """PyTorch's base class's check: each parameter of ``arg_constraints`` within its constraint (a dependent
        one, or a lazy parameter not made yet, is skipped)."""
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if _constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), _lazy_property):
                continue
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                 f"{constraint!r}, but found invalid values:\n{value}")

    def _validate_sample(self, value) -> None:
        """PyTorch's checks of a value given to ``log_prob``/``cdf``: a Tensor, its last dimensions the event's,
        the rest broadcastable with the batch, and every element within the support (a NaN is not)."""
        if not self._validate_args:
            return
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event, shape = tuple(self.event_shape), tuple(value.shape)
        if event and shape[len(shape) - len(event):] != event:
            raise ValueError(f"The right-most size of value must match event_shape: {Size(shape)} vs "
                             f"{Size(event)}.")
        expected = tuple(self.batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {Size(shape)} vs "
                                 f"{Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
            return
        if support is None or isinstance(support, _constraints._Dependent):
            return
        if not bool(support.check(value.detach()).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n"
                             f"{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """A blank instance for ``expand`` (PyTorch's): refused where a subclass with an ``__init__`` of its own
        has not written its own ``expand``."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__() method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def expand(self, batch_shape, _instance=None):
        """The same distribution over a larger batch: every parameter expanded (a view: no copy, gradients flow
        back) to ``batch_shape`` (which the current batch shape must broadcast to), as each of PyTorch's families
        does; the draws of the new one are independent across the new dimensions."""
        owner = self._expand_owner
        if owner is None:
            raise NotImplementedError
        new = self._get_checked_instance(owner, _instance)
        batch_shape = Size(batch_shape)
        old = tuple(self.batch_shape)
        for name, value in self.__dict__.items():
            if name in self._unbatched:
                pass
            elif isinstance(value, Tensor):
                value = value.expand(*batch_shape, *value.shape[len(old):])
            elif isinstance(value, Distribution):
                value = value.expand(tuple(batch_shape) + tuple(value.batch_shape)[len(old):])
            new.__dict__[name] = value
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _extended_shape(self, sample_shape=()) -> Size:
        """``sample_shape + batch_shape + event_shape``: the shape of a draw (PyTorch's helper)."""
        return Size(self._extended(sample_shape))

    def _check(self, name: str, value: Tensor, constraint: str, ok) -> None:
        if self._validate_args and not bool(ok(value.detach()).all()):
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

    # (what a family does not define, refused as PyTorch's base class refuses it)
    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement variance")

    def log_prob(self, value) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def cdf(self, value) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self):
        """PyTorch's: each parameter's value where it is one number, else its shape (the parameters: those of
        ``arg_constraints`` the instance holds, where the family names none in ``_params``)."""
        def shown(value):
            if not isinstance(value, Tensor):
                return ""
            if value.numel() != 1:
                return value.shape
            return value.item() if not value.ndim else value

        names = self._params
        if names is None:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        params = ", ".join(f"{name}: {shown(getattr(self, name))}" for name in names)
        return f"{type(self).__name__}({params})"


class ExponentialFamily(Distribution):
    """A family whose density is ``exp(<t(x), theta> - F(theta) + k(x))``: natural parameters ``theta``
    (``_natural_params``), log-normalizer ``F`` (``_log_normalizer``) and expected carrier measure
    (``_mean_carrier_measure``). Its entropy, and the divergence between two of one family
    (``kl_divergence``), follow from ``F`` and its gradient by autograd (Bregman divergences), as PyTorch's."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``, the gradient by autograd (kept in the graph)."""
        from ..autograd import grad

        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(*self.batch_shape, -1).sum(-1)
        return result


class _LocScale(Distribution):
    """A family of location ``loc`` and scale ``scale`` (> 0), broadcast together, drawn by ``rsample``."""

    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)
        self._check("scale", self.scale, "GreaterThan(lower_bound=0.0)", lambda s: s > 0)


class Normal(_LocScale, ExponentialFamily):
    """The normal distribution of mean ``loc`` and standard deviation ``scale`` (> 0)."""

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()


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

    def icdf(self, value) -> Tensor:
        return self.loc + self.scale * (2 * _tensor(value, self.loc) - 1).erfinv() * math.sqrt(2)


class Categorical(Distribution):
    """A choice among the last dimension's categories, by ``probs`` (normalised to sum to 1) or ``logits``
    (normalised by their logsumexp): a policy's distribution over actions."""

    _params = ("probs",)
    has_enumerate_support = True

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
        if self._validate_args and not bool(((value >= 0) & (value < self._num_events)).all()):
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


class Bernoulli(ExponentialFamily):
    """A coin that shows 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    _params = ("probs",)
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _binary(probs, logits)
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

    @property
    def mode(self) -> Tensor:
        """1 where ``probs`` > 1/2, 0 below, NaN at 1/2 (no one mode), as PyTorch's."""
        return (self.probs >= 0.5).to(self.probs.dtype).masked_fill(self.probs == 0.5, float("nan"))

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple:
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(2, dtype=self.probs.dtype, device=self.probs.device).reshape(
            -1, *(1,) * len(self.batch_shape))
        return values.expand(2, *self.batch_shape) if expand else values


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

    def icdf(self, value) -> Tensor:
        return _tensor(value, self.low) * (self.high - self.low) + self.low

    @property
    def mode(self) -> Tensor:
        """NaN: every value of the interval is as likely (PyTorch's answer)."""
        return self.high * float("nan")


# ------------------------------------------------------------------------------------- more of PyTorch's families

def _draws(d: Distribution, sample_shape, like: Tensor, kind: str = "rand") -> Tensor:
    make = creation.rand if kind == "rand" else creation.randn
    return make(*d._extended(sample_shape), dtype=like.dtype, device=like.device)


def _open_unit(u: Tensor) -> Tensor:
    """``u`` in (0, 1): its zeros moved to the dtype's smallest normal number (PyTorch's ``clamp_probs``-like
    guard against log(0) in an inverse-CDF draw)."""
    tiny = float(np.finfo(u.dtype.np).tiny)
    return u.clamp(min=tiny)


class Exponential(ExponentialFamily):
    """Waiting times of rate ``rate`` (> 0): mean ``1 / rate``."""

    has_rsample = True
    _params = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(self.rate.shape, (), validate_args)
        self._check("rate", self.rate, "GreaterThan(lower_bound=0.0)", lambda r: r > 0)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> Tensor:
        return -(1 - _draws(self, sample_shape, self.rate)).log() / self.rate

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.rate)
        return self.rate.log() - self.rate * value

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    def cdf(self, value) -> Tensor:
        return 1 - (-self.rate * _tensor(value, self.rate)).exp()

    def icdf(self, value) -> Tensor:
        return -(1 - _tensor(value, self.rate)).log() / self.rate

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class Laplace(_LocScale):
    """The double exponential around ``loc`` of scale ``scale`` (> 0)."""



    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        eps = float(np.finfo(self.loc.dtype.np).eps)
        u = _draws(self, sample_shape, self.loc) * 2 - 1
        u = u.clamp(-1 + eps, 1)  # (PyTorch's: open at -1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()

    def cdf(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value) -> Tensor:
        term = _tensor(value, self.loc) - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()


class Cauchy(_LocScale):
    """The Cauchy distribution around ``loc`` of half-width ``scale`` (> 0): no mean, no variance."""



    @property
    def mean(self) -> Tensor:
        return creation.full(tuple(self.loc.shape), float("nan"), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return creation.full(tuple(self.loc.shape), float("inf"), dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()) -> Tensor:
        u = _draws(self, sample_shape, self.loc)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()

    def cdf(self, value) -> Tensor:
        return ((_tensor(value, self.loc) - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value) -> Tensor:
        return (math.pi * (_tensor(value, self.loc) - 0.5)).tan() * self.scale + self.loc


class Gumbel(_LocScale):
    """The distribution of a maximum: location ``loc``, scale ``scale`` (> 0)."""

    _EULER = 0.57721566490153286060


    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * self._EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (math.pi ** 2 / 6) * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        u = _open_unit(_draws(self, sample_shape, self.loc))
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value) -> Tensor:
        z = (self.loc - _tensor(value, self.loc)) / self.scale
        return z - z.exp() - self.scale.log()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + self._EULER)

    def cdf(self, value) -> Tensor:
        return (-(-(_tensor(value, self.loc) - self.loc) / self.scale).exp()).exp()

    def icdf(self, value) -> Tensor:
        return self.loc - self.scale * (-_tensor(value, self.loc).log()).log()


class HalfNormal(Distribution):
    """``|X|`` of a normal X of mean 0 and standard deviation ``scale`` (> 0)."""

    has_rsample = True
    _params = ("scale",)

    def __init__(self, scale, validate_args=None):
        (self.scale,) = _broadcast(scale)
        super().__init__(self.scale.shape, (), validate_args)
        self._check("scale", self.scale, "GreaterThan(lower_bound=0.0)", lambda s: s > 0)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=()) -> Tensor:
        return (_draws(self, sample_shape, self.scale, "randn") * self.scale).abs()

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.scale)
        out = Normal(self.scale * 0, self.scale, validate_args=False).log_prob(value) + math.log(2)
        return out.where(value >= 0, float("-inf"))

    def entropy(self) -> Tensor:
        return Normal(self.scale * 0, self.scale, validate_args=False).entropy() - math.log(2)

    def cdf(self, value) -> Tensor:
        return 2 * Normal(self.scale * 0, self.scale, validate_args=False).cdf(_tensor(value, self.scale)) - 1

    def icdf(self, prob) -> Tensor:
        return Normal(self.scale * 0, self.scale, validate_args=False).icdf((_tensor(prob, self.scale) + 1) / 2)


class LogNormal(_LocScale):
    """``exp(X)`` of a normal X of mean ``loc`` and standard deviation ``scale`` (> 0)."""

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args)
        self.base_dist = Normal(self.loc, self.scale, validate_args=False)

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc

    def cdf(self, value) -> Tensor:
        return self.base_dist.cdf(_tensor(value, self.loc).log())

    def icdf(self, value) -> Tensor:
        return self.base_dist.icdf(value).exp()


class Poisson(ExponentialFamily):
    """Counts of events at rate ``rate`` (>= 0): ``log_prob`` of a count, draws without a gradient."""

    _params = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(self.rate.shape, (), validate_args)
        self._check("rate", self.rate, "GreaterThanEq(lower_bound=0.0)", lambda r: r >= 0)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        """Counts drawn on the host from the engine's generator (a copy to the device where the rate is)."""
        from .. import random as _random

        with no_grad():
            shape = self._extended(sample_shape)
            rate = np.broadcast_to(self.rate.detach().cpu().numpy(), shape)
            counts = _random.cpu_generator().poisson(rate).astype(self.rate.dtype.np)
            return creation.tensor(counts, device=self.rate.device)

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.rate)
        rate, value = _broadcast(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class Geometric(Distribution):
    """The number of failures before the first success, each trial a success with ``probs`` (or
    ``sigmoid(logits)``): 0, 1, 2, ..."""

    _params = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _binary(probs, logits)
        super().__init__(self.probs.shape, (), validate_args)
        if probs is not None:
            self._check("probs", self.probs, "Interval(lower_bound=0.0, upper_bound=1.0)",
                        lambda p: (p > 0) & (p <= 1))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs * 0

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            tiny = float(np.finfo(self.probs.dtype.np).tiny)
            u = _draws(self, sample_shape, self.probs).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value) -> Tensor:
        value, probs = _broadcast(_tensor(value, self.probs), self.probs)
        masked = probs.masked_fill((probs == 1) & (value == 0), 0.0)  # (PyTorch's: 0 * log(0) taken as 0)
        return value * (-masked).log1p() + probs.log()

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits as bce

        return bce(self.logits, self.probs, reduction="none") / self.probs


class OneHotCategorical(Distribution):
    """:class:`Categorical` with its draws one-hot along the last dimension."""

    _params = ("probs",)
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        index = self.probs.argmax(-1, keepdim=True)
        return creation.zeros(*self.probs.shape, dtype=self.probs.dtype, device=self.probs.device).scatter(
            -1, index, 1.0)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        index = self._categorical.sample(sample_shape).unsqueeze(-1)
        shape = tuple(index.shape[:-1]) + (self.probs.shape[-1],)
        return creation.zeros(*shape, dtype=self.probs.dtype, device=self.probs.device).scatter(-1, index, 1.0)

    def log_prob(self, value) -> Tensor:
        return self._categorical.log_prob(_tensor(value, self.probs).argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = creation.eye(n, dtype=self.probs.dtype, device=self.probs.device).reshape(
            n, *(1,) * len(self.batch_shape), n)
        return values.expand(n, *self.batch_shape, n) if expand else values


class Independent(Distribution):
    """``base_distribution`` with its last ``reinterpreted_batch_ndims`` batch dimensions read as one event: its
    ``log_prob`` and ``entropy`` summed over them (a VAE's diagonal Gaussian over a vector)."""

    _params = ()

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        k = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - k], shape[len(shape) - k:], validate_args)
        self.has_rsample = base_distribution.has_rsample

    def _summed(self, t: Tensor) -> Tensor:
        n = self.reinterpreted_batch_ndims
        return t.sum(tuple(range(-n, 0))) if n else t

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value) -> Tensor:
        return self._summed(self.base_dist.log_prob(value))

    def entropy(self) -> Tensor:
        return self._summed(self.base_dist.entropy())

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"

    @property
    def has_enumerate_support(self) -> bool:
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix) -> Tensor:
    """The lower Cholesky factor of the covariance, from whichever of the three was given."""
    from .. import linalg

    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of the covariance from the precision's Cholesky factor, without inverting the
    precision (PyTorch's)."""
    from .. import linalg

    lp = linalg.cholesky(precision.flip(-2, -1)).flip(-2, -1)
    eye = creation.eye(lp.shape[-1], dtype=lp.dtype, device=lp.device)
    return linalg.solve_triangular(lp, eye, upper=True).mT


class MultivariateNormal(Distribution):
    """The normal distribution over vectors: mean ``loc`` and one of ``covariance_matrix``, ``precision_matrix``
    or ``scale_tril`` (the lower Cholesky factor of the covariance); ``rsample`` is ``loc + L eps``."""

    has_rsample = True
    _params = ("loc",)
    _unbatched = ("_unbroadcasted_scale_tril",)

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (precision_matrix is not None) + (scale_tril is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if given.dim() < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)
        n = loc.shape[-1]
        batch = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(given.shape[:-2]))
        self.loc = loc.expand(*batch, n)
        super().__init__(batch, (n,), validate_args)

    @property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def precision_matrix(self) -> Tensor:
        from .. import linalg

        return linalg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            *self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self.batch_shape, *self.event_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = _draws(self, sample_shape, self.loc, "randn")
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value) -> Tensor:
        from .. import linalg

        diff = _tensor(value, self.loc) - self.loc
        lower = self._unbroadcasted_scale_tril
        shape = np.broadcast_shapes(tuple(diff.shape[:-1]), tuple(lower.shape[:-2]))
        n = self.event_shape[0]
        solved = linalg.solve_triangular(lower.expand(*shape, n, n), diff.expand(*shape, n).unsqueeze(-1),
                                         upper=False).squeeze(-1)
        maha = solved.pow(2).sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + maha) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self.event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h


def _host_draws(d: Distribution, sample_shape, like: Tensor, draw) -> Tensor:
    """Draws made on the host by ``draw(generator, shape)`` from the engine's generator (``manual_seed`` repeats
    them), then put where ``like`` is: for the families whose draws NumPy makes and the engine's ops do not."""
    from .. import random as _random

    with no_grad():
        values = draw(_random.cpu_generator(), d._extended(sample_shape))
        return creation.tensor(np.asarray(values, dtype=like.dtype.np), device=like.device)


class Gamma(ExponentialFamily):
    """The gamma distribution of shape ``concentration`` and ``rate`` (both > 0)."""

    has_rsample = True
    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast(concentration, rate)
        super().__init__(self.rate.shape, (), validate_args)
        self._check("concentration", self.concentration, "GreaterThan(lower_bound=0.0)", lambda c: c > 0)
        self._check("rate", self.rate, "GreaterThan(lower_bound=0.0)", lambda r: r > 0)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=()) -> Tensor:
        c = self.concentration.detach().cpu().numpy()
        r = self.rate.detach().cpu().numpy()
        return _host_draws(self, sample_shape, self.rate, lambda g, shape: g.gamma(np.broadcast_to(c, shape)) /
                           np.broadcast_to(r, shape))

    def rsample(self, sample_shape=()) -> Tensor:
        """Gamma draws whose gradient reaches ``concentration`` (PyTorch's implicit reparameterisation:
        engine/distributions/_reparam.py) and ``rate``."""
        from ._reparam import standard_gamma

        shape = self._extended(sample_shape)
        value = standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
        with no_grad():
            value.clamp_(min=float(np.finfo(value.dtype.np).tiny))
        return value

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.rate)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value) - self.rate * value
                - self.concentration.lgamma())

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    def cdf(self, value) -> Tensor:
        """The regularized lower incomplete gamma function of ``rate * value``, as PyTorch's."""
        return self.concentration.igamma(self.rate * _tensor(value, self.rate))

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """The chi-squared distribution of ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``."""

    _params = ("df",)

    def __init__(self, df, validate_args=None):
        (df,) = _broadcast(df)
        super().__init__(0.5 * df, df * 0 + 0.5, validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Beta(ExponentialFamily):
    """The beta distribution on (0, 1) of ``concentration1`` (alpha) and ``concentration0`` (beta), both > 0."""

    has_rsample = True
    _params = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)
        for name in self._params:
            self._check(name, getattr(self, name), "GreaterThan(lower_bound=0.0)", lambda c: c > 0)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """PyTorch's (its Dirichlet's): the concentrations less 1, clamped at 0, normalised; 1 where both are below
        1 (its one-hot of the first of two equal zeros)."""
        m1, m0 = (self.concentration1 - 1).clamp(min=0), (self.concentration0 - 1).clamp(min=0)
        both_below = (self.concentration1 < 1) & (self.concentration0 < 1)
        return (m1 / (m1 + m0)).masked_fill(both_below, 1.0)

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=()) -> Tensor:
        a = self.concentration1.detach().cpu().numpy()
        b = self.concentration0.detach().cpu().numpy()
        return _host_draws(self, sample_shape, self.concentration1,
                           lambda g, shape: g.beta(np.broadcast_to(a, shape), np.broadcast_to(b, shape)))

    def rsample(self, sample_shape=()) -> Tensor:
        """The first coordinate of a Dirichlet draw of ``(concentration1, concentration0)``, as PyTorch's: its
        gradient reaches both."""
        from ._reparam import dirichlet

        both = creation.stack([self.concentration1, self.concentration0], -1)
        shape = self._extended(sample_shape) + (2,)
        return dirichlet(both.expand(*shape)).select(-1, 0)

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return ((a - 1).xlogy(value) + (b - 1).xlogy(1 - value) + (a + b).lgamma() - a.lgamma() - b.lgamma())

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        log_beta = a.lgamma() + b.lgamma() - total.lgamma()
        return log_beta - (a - 1) * a.digamma() - (b - 1) * b.digamma() + (total - 2) * total.digamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()


class StudentT(Distribution):
    """Student's t of ``df`` degrees of freedom (> 0), around ``loc`` with scale ``scale`` (> 0)."""

    has_rsample = True
    _params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = _broadcast(df, loc, scale)
        super().__init__(self.df.shape, (), validate_args)
        self._check("df", self.df, "GreaterThan(lower_bound=0.0)", lambda d: d > 0)
        self._check("scale", self.scale, "GreaterThan(lower_bound=0.0)", lambda s: s > 0)

    @property
    def mean(self) -> Tensor:
        return self.loc.masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        var = (self.scale.pow(2) * df / (df - 2)).masked_fill(df <= 2, float("inf"))
        return var.masked_fill(df <= 1, float("nan"))

    def sample(self, sample_shape=()) -> Tensor:
        df = self.df.detach().cpu().numpy()
        t = _host_draws(self, sample_shape, self.df, lambda g, shape: g.standard_t(np.broadcast_to(df, shape)))
        with no_grad():
            return self.loc + self.scale * t

    def rsample(self, sample_shape=()) -> Tensor:
        """``loc + scale * X / sqrt(Z / df)``, X standard normal and Z a reparameterised chi-squared draw, as
        PyTorch's: the gradient reaches ``df``, ``loc`` and ``scale``."""
        x = creation.randn(*self._extended(sample_shape), dtype=self.df.dtype, device=self.df.device)
        z = Chi2(self.df).rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value) -> Tensor:
        y = (_tensor(value, self.loc) - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        log_beta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma())
                + 0.5 * df.log() + log_beta)


class Binomial(Distribution):
    """The number of successes in ``total_count`` trials, each a success with ``probs`` (or
    ``sigmoid(logits)``)."""

    _params = ("probs",)
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self.total_count, self.probs, self.logits = _binary(probs, logits, total_count)
        self.total_count = self.total_count.to(self.probs.dtype)
        super().__init__(self.probs.shape, (), validate_args)
        if probs is not None:
            self._check("probs", self.probs, "Interval(lower_bound=0.0, upper_bound=1.0)",
                        lambda p: (p >= 0) & (p <= 1))

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        n = self.total_count.detach().cpu().numpy().astype(np.int64)
        p = self.probs.detach().cpu().numpy()
        return _host_draws(self, sample_shape, self.probs,
                           lambda g, shape: g.binomial(np.broadcast_to(n, shape), np.broadcast_to(p, shape)))

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.probs)
        n, logits = self.total_count, self.logits
        normalize = n * logits.clamp(min=0) + n * (-logits.abs()).exp().log1p() - (n + 1).lgamma()
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize

    def enumerate_support(self, expand: bool = True) -> Tensor:
        counts = self.total_count.detach()
        n = int(counts.max().item()) if counts.numel() else 0
        if counts.numel() and not bool((counts == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = creation.arange(n + 1, dtype=self.probs.dtype, device=self.probs.device).reshape(
            -1, *(1,) * len(self.batch_shape))
        return values.expand(n + 1, *self.batch_shape) if expand else values

    def entropy(self) -> Tensor:
        values = self.enumerate_support(False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)
