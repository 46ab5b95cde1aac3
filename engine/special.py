"""``torch.special``: the special functions, each a method of the engine's Tensor (``lgamma``, ``digamma``,
``polygamma``, ``erfc``, ``erfinv``: engine/functions/special.py) or written from them, so each has its gradient."""

from __future__ import annotations

import math

from .tensor import Tensor

__all__ = ["digamma", "psi", "polygamma", "gammaln", "multigammaln", "erf", "erfc", "erfinv", "ndtr", "ndtri",
           "log_ndtr", "entr", "expit", "logit", "exp2", "expm1", "log1p", "xlogy", "xlog1py", "sinc", "round",
           "softmax", "log_softmax", "logsumexp", "gammainc", "gammaincc"]

_SQRT_HALF = math.sqrt(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _checked(input, name):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def digamma(input):  # noqa: A002
    return _checked(input, "digamma").digamma()


psi = digamma


def polygamma(n, input):  # noqa: A002
    return _checked(input, "polygamma").polygamma(n)


def gammaln(input):  # noqa: A002
    return _checked(input, "gammaln").lgamma()


def multigammaln(input, p):  # noqa: A002
    return _checked(input, "multigammaln").mvlgamma(p)


def erf(input):  # noqa: A002
    return _checked(input, "erf").erf()


def erfc(input):  # noqa: A002
    return _checked(input, "erfc").erfc()


def erfinv(input):  # noqa: A002
    return _checked(input, "erfinv").erfinv()


def ndtr(input):  # noqa: A002
    """The standard normal's cumulative distribution: ``erfc(-x / sqrt(2)) / 2`` (no cancellation in the left
    tail)."""
    return (_checked(input, "ndtr")._floating() * -_SQRT_HALF).erfc() * 0.5


def ndtri(input):  # noqa: A002
    """The inverse of :func:`ndtr`: ``sqrt(2) erfinv(2p - 1)``, its tails kept (functions/special.py)."""
    from .functions import Unary

    return Unary.apply(_checked(input, "ndtri")._floating(), op="ndtri")


def log_ndtr(input):  # noqa: A002
    """log(ndtr(x)), finite far into the left tail and exact near 0 in the right one: past -37 (where ndtr nears
    the smallest float64) its asymptotic series ``-x^2 / 2 - log(-x) - log(2 pi) / 2 + log(1 - 1/x^2 + 3/x^4 - ...)``;
    above 0, ``log1p(-ndtr(-x))``. Each branch reads its own clamped copy of x, so none gives another a NaN
    gradient."""
    x = _checked(input, "log_ndtr")._floating()
    middle = ndtr(x.clamp(min=-37.0, max=0.0)).log()
    right = (-ndtr(-x.clamp(min=0.0))).log1p()
    t = x.clamp(max=-37.0)
    inv2 = 1 / (t * t)
    series = inv2 * (-1 + inv2 * (3 + inv2 * (-15 + inv2 * (105 - 945 * inv2))))
    far = -0.5 * t * t - (-t).log() - _HALF_LOG_2PI + series.log1p()
    return far.where(x < -37, middle.where(x <= 0, right))


def entr(input):  # noqa: A002
    """``-x log x`` elementwise: 0 at 0, -inf below it, as PyTorch's. Its gradient there is 0 (PyTorch's is inf at
    0 and NaN below, its formula -(1 + log x) read outside the domain)."""
    x = _checked(input, "entr")._floating()
    positive = x.clamp(min=1e-300 if x.dtype.itemsize == 8 else 1e-38)
    out = -x * positive.log()
    return out.where(x > 0, (x * 0).masked_fill(x < 0, -math.inf))


def expit(input):  # noqa: A002
    return _checked(input, "expit").sigmoid()


def logit(input, eps=None):  # noqa: A002
    return _checked(input, "logit").logit(eps)


def exp2(input):  # noqa: A002
    return _checked(input, "exp2").exp2()


def expm1(input):  # noqa: A002
    return _checked(input, "expm1").expm1()


def log1p(input):  # noqa: A002
    return _checked(input, "log1p").log1p()


def gammainc(input, other):  # noqa: A002
    """The regularized lower incomplete gamma function P(input, other) (``torch.igamma``)."""
    return _checked(input, "gammainc").igamma(other)


def gammaincc(input, other):  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (``torch.igammac``)."""
    return _checked(input, "gammaincc").igammac(other)


def xlogy(input, other):  # noqa: A002
    return _checked(input, "xlogy").xlogy(other)


def xlog1py(input, other):  # noqa: A002
    """``x * log1p(y)``, 0 where x is 0 (even where log1p(y) is not finite), as PyTorch's."""
    x = _checked(input, "xlog1py")
    y = other if isinstance(other, Tensor) else x.new_tensor(other)
    log1p = y.log1p()  # (where x is 0 and log1p(y) is not finite, 0: the product and both gradients, as PyTorch's)
    return x * log1p.masked_fill((x == 0) & (y <= -1), 0.0)


def sinc(input):  # noqa: A002
    return _checked(input, "sinc").sinc()


def round(input, decimals=0):  # noqa: A001, A002
    return _checked(input, "round").round(decimals=decimals)


def softmax(input, dim, dtype=None):  # noqa: A002
    return _checked(input, "softmax").softmax(dim, dtype)


def log_softmax(input, dim, dtype=None):  # noqa: A002
    return _checked(input, "log_softmax").log_softmax(dim, dtype)


def logsumexp(input, dim, keepdim=False):  # noqa: A002
    return _checked(input, "logsumexp").logsumexp(dim, keepdim)
