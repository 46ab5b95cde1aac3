"""``torch.special``: the special functions, each a method of the engine's Tensor (``lgamma``, ``digamma``,
``polygamma``, ``erfc``, ``erfinv``: engine/functions/special.py) or written from them, so each has its gradient;
the Bessel functions (engine/functions/bessel.py), ``erfcx`` and Hurwitz's ``zeta``, with PyTorch's gradients
where PyTorch has them (``i0``, ``i0e``, ``i1``, ``i1e``, ``erfcx``; ``zeta`` in its second argument). The other
Bessel functions, ``airy_ai`` and the orthogonal polynomials (engine/functions/polynomials.py) are not
differentiable in PyTorch: their results need no gradient, as PyTorch's."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dtypes
from .backend import xp_of
from .functions import bessel as _bessel
from .functions import polynomials as _polynomials
from .tensor import Tensor, _check_same_device, _wrap

__all__ = ["digamma", "psi", "polygamma", "gammaln", "multigammaln", "erf", "erfc", "erfinv", "ndtr", "ndtri",
           "log_ndtr", "entr", "expit", "logit", "exp2", "expm1", "log1p", "xlogy", "xlog1py", "sinc", "round",
           "softmax", "log_softmax", "logsumexp", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e", "erfcx", "zeta",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

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


# ------------------------------------------------------------------ Bessel functions, erfcx, zeta


def i0(input):  # noqa: A002
    """The modified Bessel function of the first kind, order 0 (``torch.i0``); its gradient is i1."""
    return _checked(input, "i0").i0()


def _unary(input, name, op):  # noqa: A002
    from .functions import Unary

    return Unary.apply(_checked(input, name)._floating(), op=op)


def i0e(input):  # noqa: A002
    """exp(-|x|) i0(x), finite where i0 overflows."""
    return _unary(input, "i0e", "i0e")


def i1(input):  # noqa: A002
    """The modified Bessel function of the first kind, order 1."""
    return _unary(input, "i1", "i1")


def i1e(input):  # noqa: A002
    """exp(-|x|) i1(x)."""
    return _unary(input, "i1e", "i1e")


def erfcx(input):  # noqa: A002
    """The scaled complementary error function exp(x^2) erfc(x), finite far into the right tail (1/(x sqrt(pi)))
    where erfc underflows."""
    return _unary(input, "erfcx", "erfcx")


def zeta(input, other):  # noqa: A002
    """Hurwitz's zeta function, sum over k >= 0 of (k + other)^-input; differentiable in ``other``
    (-input zeta(input + 1, other)), not in ``input``, as PyTorch's. Either may be a number, not both."""
    from .functions import Binary

    x, q = _operands("zeta", input, other, ("input", "other"))
    op = "zeta" if isinstance(input, Tensor) and isinstance(other, Tensor) else \
        "zeta_number_x" if isinstance(other, Tensor) else "zeta_number_q"
    return Binary.apply(x, q, op=op)


def _operands(name, a, b, names):
    """Two operands of a function of two (a tensor and a tensor or a number, either way round) in their float
    result dtype, as PyTorch's (integers in the default float dtype); two numbers are refused in PyTorch's
    words."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                        f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
                        f" * (Tensor {names[0]}, Tensor {names[1]})\n * (Number {names[0]}, Tensor {names[1]})\n"
                        f" * (Tensor {names[0]}, Number {names[1]})")
    _check_same_device(a, b)
    want = _dtypes.result_type(a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
    if want.kind != "f":
        want = np.dtype(_dtypes.get_default_dtype().np)
    ref = a if isinstance(a, Tensor) else b
    engine_dtype = _dtypes.from_numpy_dtype(want)

    def as_tensor(v):
        if isinstance(v, Tensor):
            return v if v._data.dtype == want else v.to(engine_dtype)
        return ref.new_full((), v, dtype=engine_dtype)

    return as_tensor(a), as_tensor(b)


def _unrecorded(input, name, fn):  # noqa: A002
    """``fn`` of the input's values (integers in the default float dtype): a result that needs no gradient, as
    PyTorch's for the functions it has no derivative of."""
    data = _checked(input, name)._floating()._data
    return _wrap(fn(xp_of(data), data))


def bessel_j0(input):  # noqa: A002
    """The Bessel function of the first kind, order 0 (not differentiable, as PyTorch's)."""
    return _unrecorded(input, "bessel_j0", _bessel.j0)


def bessel_j1(input):  # noqa: A002
    """The Bessel function of the first kind, order 1 (not differentiable, as PyTorch's)."""
    return _unrecorded(input, "bessel_j1", _bessel.j1)


def bessel_y0(input):  # noqa: A002
    """The Bessel function of the second kind, order 0: -inf at 0, NaN below it (not differentiable)."""
    return _unrecorded(input, "bessel_y0", _bessel.y0)


def bessel_y1(input):  # noqa: A002
    """The Bessel function of the second kind, order 1: -inf at 0, NaN below it (not differentiable)."""
    return _unrecorded(input, "bessel_y1", _bessel.y1)


def modified_bessel_i0(input):  # noqa: A002
    """I0, as :func:`i0` but not differentiable (PyTorch's)."""
    return _unrecorded(input, "modified_bessel_i0", _bessel.i0)


def modified_bessel_i1(input):  # noqa: A002
    """I1, as :func:`i1` but not differentiable (PyTorch's)."""
    return _unrecorded(input, "modified_bessel_i1", _bessel.i1)


def modified_bessel_k0(input):  # noqa: A002
    """The modified Bessel function of the second kind, order 0: inf at 0, NaN below it (not differentiable)."""
    return _unrecorded(input, "modified_bessel_k0", _bessel.k0)


def modified_bessel_k1(input):  # noqa: A002
    """The modified Bessel function of the second kind, order 1: inf at 0, NaN below it (not differentiable)."""
    return _unrecorded(input, "modified_bessel_k1", _bessel.k1)


def scaled_modified_bessel_k0(input):  # noqa: A002
    """exp(x) K0(x), finite where K0 underflows (not differentiable)."""
    return _unrecorded(input, "scaled_modified_bessel_k0", _bessel.k0e)


def scaled_modified_bessel_k1(input):  # noqa: A002
    """exp(x) K1(x), finite where K1 underflows (not differentiable)."""
    return _unrecorded(input, "scaled_modified_bessel_k1", _bessel.k1e)


def spherical_bessel_j0(input):  # noqa: A002
    """sin(x) / x, 1 at 0 (not differentiable, as PyTorch's)."""
    return _unrecorded(input, "spherical_bessel_j0", _bessel.spherical_j0)


def airy_ai(input):  # noqa: A002
    """Airy's function Ai: NaN at +-inf, as PyTorch's (not differentiable)."""
    return _unrecorded(input, "airy_ai", _bessel.airy_ai)


# ------------------------------------------------------------------ orthogonal polynomials


def _polynomial(name, x, n, fn):
    """``fn(xp, x, degrees)`` of ``x`` at the degrees ``n`` (either may be a number, not both), computed in their
    float result dtype; the degrees truncated to integers as PyTorch's. Not differentiable, as PyTorch's."""
    xt, nt = _operands(name, x, n, ("x", "n"))
    xa, na = xt._data, nt._data
    xp = xp_of(xa)
    dtype = xa.dtype
    compute = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)  # (half precision: in float32)
    xa, na = xp.broadcast_arrays(xa.astype(compute, copy=False), na.astype(compute, copy=False))
    shape = xa.shape  # (ascontiguousarray gives a 0-dimensional array one dimension, on either device)
    out = fn(xp, xp.ascontiguousarray(xa), _polynomials.degrees(xp, xp.ascontiguousarray(na)))
    return _wrap(out.astype(dtype, copy=False).reshape(shape))


def chebyshev_polynomial_t(input, n):  # noqa: A002
    """Chebyshev's polynomial of the first kind T_n(x)."""
    return _polynomial("chebyshev_polynomial_t", input, n, lambda xp, x, k: _polynomials.chebyshev(xp, "t", x, k))


def chebyshev_polynomial_u(input, n):  # noqa: A002
    """Chebyshev's polynomial of the second kind U_n(x)."""
    return _polynomial("chebyshev_polynomial_u", input, n, lambda xp, x, k: _polynomials.chebyshev(xp, "u", x, k))


def chebyshev_polynomial_v(input, n):  # noqa: A002
    """Chebyshev's polynomial of the third kind V_n(x)."""
    return _polynomial("chebyshev_polynomial_v", input, n, lambda xp, x, k: _polynomials.chebyshev(xp, "v", x, k))


def chebyshev_polynomial_w(input, n):  # noqa: A002
    """Chebyshev's polynomial of the fourth kind W_n(x)."""
    return _polynomial("chebyshev_polynomial_w", input, n, lambda xp, x, k: _polynomials.chebyshev(xp, "w", x, k))


def shifted_chebyshev_polynomial_t(input, n):  # noqa: A002
    """T_n(2x - 1), orthogonal on [0, 1]."""
    return _polynomial("shifted_chebyshev_polynomial_t", input, n,
                       lambda xp, x, k: _polynomials.chebyshev(xp, "t", x, k, shifted=True))


def shifted_chebyshev_polynomial_u(input, n):  # noqa: A002
    """U_n(2x - 1), orthogonal on [0, 1]."""
    return _polynomial("shifted_chebyshev_polynomial_u", input, n,
                       lambda xp, x, k: _polynomials.chebyshev(xp, "u", x, k, shifted=True))


def shifted_chebyshev_polynomial_v(input, n):  # noqa: A002
    """V_n(2x - 1), orthogonal on [0, 1]."""
    return _polynomial("shifted_chebyshev_polynomial_v", input, n,
                       lambda xp, x, k: _polynomials.chebyshev(xp, "v", x, k, shifted=True))


def shifted_chebyshev_polynomial_w(input, n):  # noqa: A002
    """W_n(2x - 1), orthogonal on [0, 1]."""
    return _polynomial("shifted_chebyshev_polynomial_w", input, n,
                       lambda xp, x, k: _polynomials.chebyshev(xp, "w", x, k, shifted=True))


def hermite_polynomial_h(input, n):  # noqa: A002
    """The physicists' Hermite polynomial H_n(x): NaN past degree 512 (128 in float32), as PyTorch's."""
    return _polynomial("hermite_polynomial_h", input, n, lambda xp, x, k: _polynomials.hermite(xp, x, k))


def hermite_polynomial_he(input, n):  # noqa: A002
    """The probabilists' Hermite polynomial He_n(x): NaN past degree 512 (128 in float32), as PyTorch's."""
    return _polynomial("hermite_polynomial_he", input, n,
                       lambda xp, x, k: _polynomials.hermite(xp, x, k, physicists=False))


def laguerre_polynomial_l(input, n):  # noqa: A002
    """Laguerre's polynomial L_n(x)."""
    return _polynomial("laguerre_polynomial_l", input, n, lambda xp, x, k: _polynomials.laguerre(xp, x, k))


def legendre_polynomial_p(input, n):  # noqa: A002
    """Legendre's polynomial P_n(x)."""
    return _polynomial("legendre_polynomial_p", input, n, lambda xp, x, k: _polynomials.legendre(xp, x, k))
