"""Elementwise math: exp, log, abs, sqrt, clamp/relu, sigmoid, tanh, maximum, where, and the rounding family."""

from __future__ import annotations

import numpy as np

from .. import kernels as _kernels
from ..autograd.function import Function, check_complex, complex_words, holomorphic
from ..backend import xp_of
from ..dtypes import promote, result_type, scalar_name
from ..errors import complex_refusal, raise_broadcast_error
from . import bessel as _bessel
from . import special as _special
from .loss import scaled_loss_grads


class Exp(Function):
    raw = True
    complex_ok = True
    backward_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        out = xp_of(x).exp(x)
        ctx.saved = (out,)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        return gy * ctx.saved[0]


class Sin(Function):
    raw = True
    complex_ok = True
    backward_name = "SinBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.saved = (x,)
        return xp_of(x).sin(x)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        return gy * xp_of(gy).cos(ctx.saved[0])


class Cos(Function):
    raw = True
    complex_ok = True
    backward_name = "CosBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.saved = (x,)
        return xp_of(x).cos(x)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        return -gy * xp_of(gy).sin(ctx.saved[0])


class Log(Function):
    raw = True
    complex_ok = True
    backward_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.saved = (x,)
        return xp_of(x).log(x)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        return gy / ctx.saved[0]


class Abs(Function):
    """``|x|``; of a complex tensor the modulus (real), whose gradient is ``g sgn(z)`` (``z / |z|``, 0 at 0)."""

    raw = True
    complex_ok = True
    backward_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.saved = (x,)
        return abs(x)

    @staticmethod
    def backward(ctx, gy):
        x = ctx.saved[0]
        xp = xp_of(x)
        if x.dtype.kind == "c":
            m = abs(x)
            with np.errstate(divide="ignore", invalid="ignore"):
                return xp.where(m == 0, x.dtype.type(0), gy * (x / m)).astype(x.dtype, copy=False)
        return gy * xp.sign(x)


class Sqrt(Function):
    raw = True
    complex_ok = True
    backward_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        out = xp_of(x).sqrt(x)
        ctx.saved = (out,)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        return gy / (2 * ctx.saved[0])


class Sigmoid(Function):
    raw = True
    complex_ok = True
    backward_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        xp = xp_of(x)
        out = 1 / (1 + xp.exp(-x))
        ctx.saved = (out,)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        out = ctx.saved[0]
        return gy * out * (1 - out)


class Tanh(Function):
    raw = True
    complex_ok = True
    backward_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        out = xp_of(x).tanh(x)
        ctx.saved = (out,)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        out = ctx.saved[0]
        return gy * (1 - out * out)


# PyTorch's ReLU and hardtanh are clamps, and refuse complex numbers as one
_CLAMP_REFUSAL = complex_words(lambda dtype, kwargs, device: NotImplementedError(
    "clamp is not supported for complex types"))


class Clamp(Function):
    """``clamp(min, max)``; the gradient passes where ``min <= x <= max``, as in PyTorch."""

    raw = True
    complex_error = _CLAMP_REFUSAL

    def backward_name(self):  # PyTorch's overloads: tensor bounds (0), number bounds (1)
        lo, hi = self.bounds
        return "ClampBackward0" if hasattr(lo, "shape") or hasattr(hi, "shape") else "ClampBackward1"

    @staticmethod
    def forward(ctx, x, min=None, max=None):  # noqa: A002 - PyTorch's names
        xp = np if x.__class__ is np.ndarray else xp_of(x)
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.saved = (x,)
        ctx.bounds = (min, max)
        if max is None:
            return _kernels.clamp_min(x, min)
        if min is None:
            return xp.minimum(x, max)
        return xp.clip(x, min, max)

    @staticmethod
    def backward(ctx, gy):
        x = ctx.saved[0]
        lo, hi = ctx.bounds
        if hi is None:
            return _kernels.clamp_min_backward(gy, x, lo)  # the ReLU: one fused kernel on a GPU
        if lo is None:
            return _kernels.masked(gy, x <= hi)
        return _kernels.masked(gy, (x >= lo) & (x <= hi))


class ClampTensors(Function):
    """``clamp`` with a tensor bound (the other a tensor, a number or None): PyTorch's ClampBackward0, whose
    gradient goes to x where ``min <= x <= max``, to ``min`` where ``x < min`` and to ``max`` where ``x > max`` (so
    a learned bound learns). The result is in PyTorch's dtype of the three."""

    raw = True
    complex_error = _CLAMP_REFUSAL
    backward_name = "ClampBackward0"
    edge_args = 3  # x, min, max: PyTorch's three, a bound that is None or a number included

    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = xp_of(x)
        ctx.saved = (x, lo, hi)
        out = x
        if lo is not None:
            out, lo_ = promote(out, lo)
            out = xp.maximum(out, lo_)
        if hi is not None:
            out, hi_ = promote(out, hi)
            out = xp.minimum(out, hi_)
        return out

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        zero = gy.dtype.type(0)
        return tuple(None if mask is None else xp.where(mask, gy, zero)
                     for mask in clamp_masks(*ctx.saved, ctx.needs_input_grad))


def clamp_masks(x, lo, hi, needs):
    """Where the gradient of a clamp with tensor bounds goes: to x where ``lo <= x <= hi``, to ``lo`` where
    ``x < lo``, to ``hi`` where ``x > hi`` (boolean arrays; None for an input that needs none). Where ``lo > hi``
    the clamp is ``hi``: its gradient goes there (PyTorch's ``clamp_backward_min_max``)."""
    above = x >= lo if lo is not None else None
    below = x <= hi if hi is not None else None
    inside = above if below is None else below if above is None else above & below
    need_x, need_lo, need_hi = needs
    to_lo, to_hi = (~above if need_lo else None), (~below if need_hi else None)
    if lo is not None and hi is not None:
        crossed = hi < lo
        kept = (not crossed) if isinstance(crossed, (bool, np.bool_)) else ~crossed  # (two numbers: a Python bool)
        to_lo = to_lo & kept if need_lo else None
        to_hi = to_hi | crossed if need_hi else None
    return (inside if need_x else None, to_lo, to_hi)


class ReLU(Function):
    raw = True
    complex_error = _CLAMP_REFUSAL
    backward_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        out = _kernels.clamp_min(x, 0)
        ctx.saved = (out,)
        return out

    @staticmethod
    def backward(ctx, gy):
        return _kernels.pass_where(gy, ctx.saved[0], 0, strict=True)


class Maximum(Function):
    """Elementwise maximum (``mode='max'``) or minimum; ties share the gradient equally. The backward is PyTorch's:
    ``where(a == b, grad / 2, grad)`` with 0 where an input loses (so an infinite gradient gives a loser 0, not
    the NaN of ``grad * 0``, and where a NaN makes no comparison true both inputs get the gradient)."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: RuntimeError(
        f"{kwargs.get('mode', 'max')}imum not implemented for complex tensors."))

    def backward_name(self):
        return "MaximumBackward0" if self.mode == "max" else "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b, mode="max"):
        a, b = promote(a, b)
        xp = xp_of(a) if hasattr(a, "shape") else xp_of(b)
        ctx.saved = (a, b)
        ctx.mode = mode
        try:
            return xp.maximum(a, b) if mode == "max" else xp.minimum(a, b)
        except ValueError as error:
            raise_broadcast_error(a, b, error)

    @staticmethod
    def backward(ctx, gy):
        a, b = ctx.saved
        xp = xp_of(gy)
        shared = xp.where(a == b, gy / 2, gy)
        zero = gy.dtype.type(0)
        a_loses, b_loses = (a < b, a > b) if ctx.mode == "max" else (a > b, a < b)
        need_a, need_b = ctx.needs_input_grad
        return (xp.where(a_loses, zero, shared) if need_a else None), (xp.where(b_loses, zero, shared) if need_b
                                                                        else None)


class Where(Function):
    raw = True
    complex_ok = True
    backward_name = "WhereBackward0"
    nondiff = (0,)  # the condition is no edge of PyTorch's node; a number is (wrapped in a tensor)
    scalar_edges = True

    @staticmethod
    def forward(ctx, cond, a, b):
        xp = xp_of(cond)
        if getattr(cond, "dtype", None) != np.bool_:  # (PyTorch's: a 0/1 integer is no condition)
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{scalar_name(xp.asarray(cond).dtype)}")
        ctx.saved = (cond,)
        a, b = promote(a, b)  # PyTorch's result dtype (a 0-d float64 does not widen a float32 tensor; NumPy's would)
        if not hasattr(a, "dtype") and not hasattr(b, "dtype"):  # two Python numbers: their dtype, as PyTorch's
            a = xp.asarray(a, dtype=result_type(a, b))  # (where(c, 1.0, 2.0) is float32, not NumPy's float64)
        return xp.where(cond, a, b)

    @staticmethod
    def backward(ctx, gy):
        cond = ctx.saved[0]
        xp = xp_of(gy)
        _, need_a, need_b = ctx.needs_input_grad
        return (
            None,
            xp.where(cond, gy, 0) if need_a else None,
            xp.where(cond, 0, gy) if need_b else None,
        )


def _rounding_refusal(mode, dtype, device):
    """PyTorch's words where a rounding op meets complex numbers."""
    if mode == "sign":
        return NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                   "torch.sgn instead.")
    if mode == "round":
        return complex_refusal(f"round_vml_{device}", dtype)
    return NotImplementedError(f"{mode} is not supported for complex inputs")


_ROUNDING_NAMES = {"floor": "FloorBackward0", "ceil": "CeilBackward0", "round": "RoundBackward0",
                   "trunc": "TruncBackward0", "sign": "SignBackward0"}


class Rounding(Function):
    """``floor``, ``ceil``, ``round`` (half to even, to ``decimals`` places), ``trunc`` and ``sign``: piecewise
    constant, so the gradient is zero everywhere, as PyTorch defines it. Integer and bool tensors come back as
    they are (copied; ``sign`` of an integer is the integer's sign), in their own dtype."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: _rounding_refusal(kwargs.get("mode", "floor"), dtype,
                                                                              device))

    def backward_name(self):
        return _ROUNDING_NAMES[self.mode]

    @staticmethod
    def forward(ctx, x, mode="floor", decimals=0):
        ctx.mode = mode
        xp = xp_of(x)
        if x.dtype.kind == "b" or (x.dtype.kind in "iu" and mode != "sign"):
            return x.copy()
        if mode == "round":
            return xp.round(x, decimals)
        if mode == "sign" and x.dtype.kind == "f":  # (PyTorch's (0 < x) - (x < 0): 0 for a NaN, NumPy's NaN)
            return xp.where(xp.isnan(x), x.dtype.type(0), xp.sign(x))
        return getattr(xp, mode)(x)

    @staticmethod
    def backward(ctx, gy):
        return xp_of(gy).zeros_like(gy)


def _frexp_grad(gy, x):
    """``gy / 2 ** e``, ``e`` the exponent of ``x``'s elements (a constant: a power of two is exact in ``gy``'s
    dtype even for a subnormal ``x``); on arrays, or on Tensors where the walk records (``x`` the input)."""
    raw = getattr(x, "_data", x)
    xp = xp_of(raw)
    scale = xp.exp2(xp.frexp(raw)[1].astype(raw.dtype))
    if hasattr(gy, "_data"):
        return gy / _wrap_array(scale)
    return gy / scale


def _wrap_array(a):
    from ..tensor import _wrap

    return _wrap(a)


def _clamped_log(xp, a):
    """``max(log(a), -100)``: log(0) is -inf, held at -100 as PyTorch's binary cross-entropy holds it."""
    if xp is np:
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(a), -100)
    return xp.maximum(xp.log(a), -100)


_BCE_EPSILON = float(np.float32(1e-12))  # (PyTorch's EPSILON, a float: 9.9999999600419720e-13 in float64 too)


class BinaryCrossEntropy(Function):
    """``-(y log x + (1 - y) log(1 - x))`` per element, each log held at -100, with PyTorch's backward,
    ``(x - y) / max(x (1 - x), 1e-12)``: a probability of exactly 0 or 1 (a float32 sigmoid saturates to 1.0 past
    a logit of 17) gives a finite gradient, where the chain rule through the logs would give 0 / 0."""

    raw = True
    backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, y, weight=None, reduction="none"):
        """``weight`` (an array, no edge: PyTorch's is not differentiable) times each term; the reduction inside
        the node, as PyTorch's."""
        x, y = promote(x, y)
        xp = xp_of(x)
        ctx.saved = (x, y)
        ctx.meta = (weight, reduction)
        loss = -(y * _clamped_log(xp, x) + (1 - y) * _clamped_log(xp, 1 - x))
        if weight is not None:
            loss = loss * weight
        if reduction == "mean":
            return loss.mean() if loss.size else xp.asarray(np.nan, dtype=loss.dtype)
        return loss.sum() if reduction == "sum" else loss

    @staticmethod
    def backward(ctx, gy):
        x, y = ctx.saved
        weight, reduction = ctx.meta
        xp = xp_of(gy)
        need_x, need_y = ctx.needs_input_grad
        gx = gt = None
        if need_x:
            gx = gy * (x - y) / xp.maximum((1 - x) * x, x.dtype.type(_BCE_EPSILON))
        if need_y:  # PyTorch's: the logs unclamped (a target's gradient at a probability of 0 or 1 is infinite)
            with np.errstate(divide="ignore"):  # NumPy's warning; CuPy gives none
                gt = gy * (xp.log(1 - x) - xp.log(x))
        return scaled_loss_grads((gx, gt), weight, reduction, x)  # (loss.py's, shared with the logits' form)


class Gelu(Function):
    """``x * Phi(x)``, Phi the standard normal's distribution function (``approximate='none'``), or Hendrycks and
    Gimpel's ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (``'tanh'``); PyTorch's formulas, forward and
    backward, each one pass over the array (engine/kernels.py)."""

    raw = True
    complex_name = "GeluKernelImpl"
    backward_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate="none"):
        ctx.saved = (x,)
        ctx.approximate = approximate
        return _kernels.gelu(x, approximate)

    @staticmethod
    def backward(ctx, gy):
        return _kernels.gelu_backward(gy, ctx.saved[0], ctx.approximate)


_LN2, _LN10, _DEG = 0.6931471805599453, 2.302585092994046, 0.017453292519943295  # log 2, log 10, pi / 180


def _rsqrt(xp, x):
    rsqrt = getattr(x, "rsqrt", None)  # (a Tensor, in a recorded gradient formula: PyTorch's RsqrtBackward0)
    return rsqrt() if rsqrt is not None else 1 / xp.sqrt(x)


def _wrapped(xp, value, like):
    """``value`` as PyTorch's formulas write a number that is a Tensor operand (``1 - x.pow(2)``: SubBackward0 with an
    edge to nothing): a 0-d constant beside a Tensor, the number itself beside an array."""
    return like.new_tensor(value) if hasattr(like, "_data") else value


def _sinc(xp, x):
    """``sin(pi x) / (pi x)``, 1 at 0 (ATen's kernel)."""
    px = x * np.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(x == 0, 1, xp.sin(px) / px).astype(x.dtype, copy=False)


def _sinc_grad(xp, gy, x, out):
    """ATen's sinc_backward: ``g (pi x cos(pi x) - sin(pi x)) / (pi x^2)``, 0 where ``pi x^2`` is 0."""
    px, sq = x * np.pi, x * x * np.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(sq == 0, 0, gy * (px * xp.cos(px) - xp.sin(px)) / sq)


# One row per op: PyTorch's backward node, the forward, and the gradient from (xp, gy, x, out), PyTorch's own
# formula (derivatives.yaml). The tensor methods, their in-place forms and the torch.* functions all come through
# Unary.apply(x, op=name).
UNARY = {
    "log1p": ("Log1PBackward0", lambda xp, x: xp.log1p(x), lambda xp, gy, x, out: gy / (x + 1)),
    "expm1": ("Expm1Backward0", lambda xp, x: xp.expm1(x), lambda xp, gy, x, out: gy * (out + 1)),
    "log2": ("Log2Backward0", lambda xp, x: xp.log2(x), lambda xp, gy, x, out: gy / (x * _LN2)),
    "log10": ("Log10Backward0", lambda xp, x: xp.log10(x), lambda xp, gy, x, out: gy / (x * _LN10)),
    "exp2": ("Exp2Backward0", lambda xp, x: xp.exp2(x), lambda xp, gy, x, out: gy * out * _LN2),
    "rsqrt": ("RsqrtBackward0", _rsqrt, lambda xp, gy, x, out: -0.5 * gy * out ** 3),
    "reciprocal": ("ReciprocalBackward0", lambda xp, x: 1 / x, lambda xp, gy, x, out: -gy * (out * out)),
    "tan": ("TanBackward0", lambda xp, x: xp.tan(x), lambda xp, gy, x, out: gy * (1 + out ** 2)),
    "sinh": ("SinhBackward0", lambda xp, x: xp.sinh(x), lambda xp, gy, x, out: gy * xp.cosh(x)),
    "cosh": ("CoshBackward0", lambda xp, x: xp.cosh(x), lambda xp, gy, x, out: gy * xp.sinh(x)),
    "asin": ("AsinBackward0", lambda xp, x: xp.arcsin(x), lambda xp, gy, x, out: gy * _rsqrt(xp, -x * x + 1)),
    "acos": ("AcosBackward0", lambda xp, x: xp.arccos(x), lambda xp, gy, x, out: gy * -_rsqrt(xp, -x * x + 1)),
    "atan": ("AtanBackward0", lambda xp, x: xp.arctan(x), lambda xp, gy, x, out: gy / (x * x + 1)),
    "asinh": ("AsinhBackward0", lambda xp, x: xp.arcsinh(x), lambda xp, gy, x, out: gy * _rsqrt(xp, x ** 2 + 1)),
    "acosh": ("AcoshBackward0", lambda xp, x: xp.arccosh(x), lambda xp, gy, x, out: gy * _rsqrt(xp, x * x - 1)),
    "atanh": ("AtanhBackward0", lambda xp, x: xp.arctanh(x), lambda xp, gy, x, out: gy / (_wrapped(xp, 1, x) - x ** 2)),
    "frac": ("FracBackward0", lambda xp, x: x - xp.trunc(x), lambda xp, gy, x, out: gy),
    # the mantissa of frexp: x / 2 ** e for the exponent e of each element, a constant (PyTorch's g / exp2(e))
    "frexp": ("FrexpBackward0", lambda xp, x: xp.frexp(x)[0], lambda xp, gy, x, out: _frexp_grad(gy, x)),
    "deg2rad": ("Deg2RadBackward0", lambda xp, x: x * _DEG, lambda xp, gy, x, out: gy * _DEG),
    "rad2deg": ("Rad2DegBackward0", lambda xp, x: x / _DEG, lambda xp, gy, x, out: gy / _DEG),
    "erf": ("ErfBackward0", lambda xp, x: _kernels.erf(x),
            lambda xp, gy, x, out: _kernels.TWO_OVER_SQRT_PI * xp.exp(-(x ** 2)) * gy),
    # log(sigmoid(x)) without the overflow of exp(-x): min(x, 0) - log1p(exp(-|x|))
    "log_sigmoid": ("LogSigmoidBackward0",
                    lambda xp, x: xp.minimum(x, 0) - xp.log1p(xp.exp(-abs(x))),
                    lambda xp, gy, x, out: gy * _log_sigmoid_slope(xp, x)),
    # the special functions NumPy has not (functions/special.py)
    "lgamma": ("LgammaBackward0", lambda xp, x: _special.lgamma(xp, x),
               lambda xp, gy, x, out: gy * _polygamma_of(xp, 0, x)),
    "digamma": ("DigammaBackward0", lambda xp, x: _special.digamma(xp, x),
                lambda xp, gy, x, out: gy * _polygamma_of(xp, 1, x)),
    "erfc": ("ErfcBackward0", lambda xp, x: _special.erfc(xp, x, _kernels.erf),
             lambda xp, gy, x, out: -_kernels.TWO_OVER_SQRT_PI * xp.exp(-(x ** 2)) * gy),
    "erfinv": ("ErfinvBackward0", lambda xp, x: _special.erfinv(xp, x, _kernels.erf),
               lambda xp, gy, x, out: _HALF_SQRT_PI * xp.exp(out ** 2) * gy),
    "sinc": ("SincBackward0", _sinc, _sinc_grad),
    # the argument of a real number: pi below 0, else 0 (NaN stays NaN); piecewise constant, a zero gradient
    "angle": ("AngleBackward0", lambda xp, x: xp.where(x < 0, np.pi, xp.where(x != x, x, 0.0)).astype(x.dtype),
              lambda xp, gy, x, out: gy * 0),
    # log(x / (1 - x)), its gradient PyTorch's: 1 / (x (1 - x)), NaN outside [0, 1] (inf at 0 and 1; + 0.0 makes
    # -0.0's denominator +0.0, the limit from inside: PyTorch's sign there is its CPU's, -inf or inf)
    "logit": ("LogitBackward0", lambda xp, x: xp.log(x / (1 - x)),
              lambda xp, gy, x, out: gy / (x * (1 - x) + 0.0) * _one_inside_unit(x) + _nan_outside_unit(x)),
    "ndtri": ("SpecialNdtriBackward0", lambda xp, x: _special.ndtri(xp, x, _kernels.erf),
              lambda xp, gy, x, out: gy * (_SQRT_2PI * xp.exp(out * out * 0.5))),
    # the modified Bessel functions of the first kind and erfcx (functions/bessel.py, functions/special.py), their
    # gradients PyTorch's: I0' = I1; i0e' = i1e - sgn(x) i0e; I1' = I0 - I1/x and i1e' = i0e - i1e (sgn(x) + 1/x),
    # each 1/2 within machine epsilon of 0; erfcx' = 2x erfcx - 2/sqrt(pi)
    "i0": ("I0Backward0", lambda xp, x: _bessel.i0(xp, x), lambda xp, gy, x, out: gy * _of(xp, "i1", x)),
    "i0e": ("SpecialI0EBackward0", lambda xp, x: _bessel.i0e(xp, x),
            lambda xp, gy, x, out: gy * (_of(xp, "i1e", x) - _sign(xp, x) * _of(xp, "i0e", x))),
    "i1": ("SpecialI1Backward0", lambda xp, x: _bessel.i1(xp, x),
           lambda xp, gy, x, out: gy * _near_zero_half(x, lambda s: _of(xp, "i0", s) - _of(xp, "i1", x) / s)),
    "i1e": ("SpecialI1EBackward0", lambda xp, x: _bessel.i1e(xp, x),
            lambda xp, gy, x, out: gy * _near_zero_half(
                x, lambda s: _of(xp, "i0e", s) - _of(xp, "i1e", x) * (_sign(xp, s) + 1 / s))),
    "erfcx": ("SpecialErfcxBackward0", lambda xp, x: _special.erfcx(xp, x, _kernels.erf),
              lambda xp, gy, x, out: gy * (2 * x * _of(xp, "erfcx", x) - _kernels.TWO_OVER_SQRT_PI)),
}
_SQRT_2PI = 2.5066282746310002
_HALF_SQRT_PI = 0.8862269254527580


def _one_inside_unit(x):
    """1 on [0, 1], 0 elsewhere: outside, the gradient is a NaN constant, and its own derivative 0, as PyTorch's."""
    v = getattr(x, "_data", x)
    return ((v >= 0) & (v <= 1)).astype(v.dtype)


def _nan_outside_unit(x):
    """0 on [0, 1], NaN elsewhere: a constant array (of a Tensor's values, for the recorded second derivative)."""
    v = getattr(x, "_data", x)
    return xp_of(v).where((v < 0) | (v > 1), np.nan, 0.0).astype(v.dtype)


def _polygamma_of(xp, n, x):
    """polygamma(n, x) of an array, or of a Tensor (the gradient formulas run on both: recorded for a second
    derivative)."""
    if hasattr(x, "polygamma"):
        return x.digamma() if n == 0 else x.polygamma(n)
    return _special.digamma(xp, x) if n == 0 else _special.polygamma(xp, n, x)


def _of(xp, op, x):
    """The :data:`UNARY` function ``op`` of an array, or of a Tensor (recorded: a gradient formula's second
    derivative)."""
    if hasattr(x, "_data"):
        return Unary.apply(x, op=op)
    return UNARY[op][1](xp, x)


def _sign(xp, x):
    return x.sign() if hasattr(x, "_data") else xp.sign(x)


def _near_zero_half(x, formula):
    """``formula(s)``, s = x with the elements within machine epsilon of 0 read as epsilon, and 1/2 there
    (PyTorch's i1_backward and i1e_backward: the limit, where the formula's 0/0 would be NaN)."""
    v = getattr(x, "_data", x)
    eps = float(np.finfo(v.dtype).eps)
    far = abs(x) > eps
    if hasattr(x, "_data"):
        return formula(x.where(far, eps)).where(far, 0.5)
    xp = xp_of(v)
    return xp.where(far, formula(xp.where(far, x, v.dtype.type(eps))), v.dtype.type(0.5))


def polygamma_op(n: int) -> str:
    """The :data:`UNARY` row of polygamma(n, .) (made on first use): its op name."""
    name = f"polygamma{n}"
    if name not in UNARY:
        UNARY[name] = ("PolygammaBackward0", lambda xp, x: _special.polygamma(xp, n, x),
                       lambda xp, gy, x, out: gy * _polygamma_of(xp, n + 1, x))
    return name


# The ops whose gradient formula above reads the output, and those that read neither the input nor the output; the
# rest read the input. A node keeps only what its formula reads, as PyTorch's does (tan saves its result, sinh its
# input): less memory held, and an in-place write to the value it does not read leaves its backward free to run.
_READS_OUT = frozenset({"expm1", "exp2", "rsqrt", "reciprocal", "tan", "erfinv", "ndtri"})
_READS_NONE = frozenset({"frac", "deg2rad", "rad2deg", "angle"})


# the rows of UNARY that are complex-analytic where PyTorch takes complex tensors: their real formulas give the
# complex gradient (autograd.function.holomorphic)
_COMPLEX_UNARY = frozenset(("log1p", "expm1", "log2", "log10", "exp2", "rsqrt", "reciprocal", "tan", "sinh", "cosh",
                            "asin", "acos", "atan", "asinh", "acosh", "atanh", "sinc"))


def _unary_complex_refusal(op, x):
    """PyTorch's words where a row of UNARY meets complex numbers: its kernel's name (``erf_vml_cpu``)."""
    if op in ("deg2rad", "rad2deg"):
        return RuntimeError(f"{op} is not supported for complex tensors.")
    if op in ("digamma", "trigamma") or op.startswith("polygamma"):
        return complex_refusal("digamma" if op == "digamma" else "trigamma" if op == "polygamma1" else "polygamma",
                               x.dtype)
    name = _VML_KERNELS.get(op, op)
    return complex_refusal(f"{name}_{'cpu' if x.__class__ is np.ndarray else 'cuda'}", x.dtype)


_VML_KERNELS = {"erf": "erf_vml", "erfc": "erfc_vml", "erfinv": "erfinv_vml", "lgamma": "lgamma_vml",
                "i0": "i0_vml"}


class Unary(Function):
    """An elementwise function of one tensor from the :data:`UNARY` table (``op=`` its name)."""

    raw = True
    complex_ok = True  # (the rows in _COMPLEX_UNARY; the others refuse a complex tensor in forward)

    def backward_name(self):
        return UNARY[self.op][0]

    @staticmethod
    def forward(ctx, x, op):
        if x.dtype.kind == "c" and op not in _COMPLEX_UNARY:
            raise _unary_complex_refusal(op, x)
        ctx.op = op
        ctx.op_label = UNARY[op][0][:-len("Backward0")]  # the graph panel's name: Log1P, Rsqrt, LogSigmoid, ...
        out = UNARY[op][1](xp_of(x), x)
        if op in _READS_OUT:
            ctx.saved = (None, out)
        elif op in _READS_NONE:
            ctx.saved = (None, None)
        else:
            ctx.saved = (x, None)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x, out = ctx.saved
        return UNARY[ctx.op][2](xp_of(gy), gy, x, out)


def _atan2_grads(xp, gy, a, b, out):
    """``b / (a^2 + b^2)`` and ``-a / (a^2 + b^2)``; 0 at the origin, as PyTorch's (not 0 / 0)."""
    r = a * a + b * b
    with np.errstate(divide="ignore", invalid="ignore"):
        recip = xp.where(r == 0, 0, 1 / r)
    return gy * b * recip, -gy * a * recip


def _hypot_grads(xp, gy, a, b, out):
    return gy * a / out, gy * b / out


def _logaddexp_forward(xp, a, b):
    """``log(exp(a) + exp(b))``; of complex numbers PyTorch's ``_log_add_exp_helper``: the one of smaller real
    part shifted by the other, ``log1p(exp(min - max)) + max`` (NaN where either has a NaN part; two infinities
    of the same real part: -inf's own value, or the sum itself)."""
    if a.dtype.kind != "c":
        return xp.logaddexp(a, b)
    a, b = xp.broadcast_arrays(a, b)
    first = a.real < b.real
    low, high = xp.where(first, a, b), xp.where(first, b, a)
    with np.errstate(all="ignore"):
        out = xp.log1p(xp.exp(low - high)) + high
        infinite = ~xp.isfinite(low.real) & (low.real == high.real)
        out = xp.where(infinite & (low.real < 0), low, out)
        out = xp.where(infinite & (low.real > 0), xp.log(xp.exp(low) + xp.exp(high)), out)
    nan = xp.isnan(a.real) | xp.isnan(a.imag) | xp.isnan(b.real) | xp.isnan(b.imag)
    return xp.where(nan, a.dtype.type(complex(np.nan, np.nan)), out)


def _logaddexp_grads(xp, gy, a, b, out):  # (PyTorch's, of complex numbers too: g / conj(1 + exp(b - a)))
    da, db = 1 + xp.exp(b - a), 1 + xp.exp(a - b)
    return gy / da.conj(), gy / db.conj()  # (a real array's conj is itself)


def _xlogy_forward(xp, a, b):
    out = a * xp.log(b)
    return xp.where(a == 0, xp.where(xp.isnan(b), b, 0).astype(out.dtype), out)


def _xlogy_grads(xp, gy, a, b, out):  # PyTorch's: xlogy(gy, b), 0 where a == 0 and b <= 0; gy * a / b
    ga = xp.where((a == 0) & (b <= 0), gy.dtype.type(0), _xlogy_forward(xp, gy, b))
    return ga, gy * a / b


def _divided(xp, a, b, mode):
    """``a.div(b, rounding_mode=mode)``, as PyTorch's remainder and fmod gradients take it (floor: Python's floor
    division, 1.0 // 0.1 = 9), on arrays or recorded on Tensors (DivBackward2)."""
    if hasattr(a, "_data"):
        return a.div(b, rounding_mode=mode)
    if hasattr(b, "_data"):
        return b.new_tensor(a).div(b, rounding_mode=mode)
    return xp.floor_divide(a, b) if mode == "floor" else xp.trunc(a / b)


def _log_sigmoid_slope(xp, x):
    """ATen's log_sigmoid_backward: with z = exp(-|x|), 1 - z / (1 + z) below 0 and z / (1 + z) from 0 (the tiny
    slope far right is z itself, where 1 - exp(log_sigmoid(x)) rounds to 0)."""
    z = xp.exp(-abs(x))
    share = z / (z + 1)
    return xp.where(x < 0, 1 - share, share)


def remainder(xp, a, b):
    """``a % b`` with the divisor's sign, as PyTorch's: ``fmod``, moved by ``b`` where its sign differs; where
    that is 0 it keeps ``fmod``'s zero, the dividend's sign (NumPy's takes the divisor's: ``-2.5 % 2.5`` is 0.0
    there, -0.0 in PyTorch)."""
    out = xp.remainder(a, b)
    if out.dtype.kind == "f":
        out = xp.where(out == 0, xp.copysign(out, a), out)
    return out


def _remainder_grads(xp, gy, a, b, out):  # a - floor(a / b) * b
    return gy, -gy * _divided(xp, a, b, "floor")


def _fmod_grads(xp, gy, a, b, out):  # a - trunc(a / b) * b
    return gy, -gy * _divided(xp, a, b, "trunc")


def _igamma_grads(upper):
    """The gradient in x of P(a, x) (``upper``: of Q); PyTorch has none in a, and refuses it when asked."""
    def grads(xp, gy, a, b, out):
        if hasattr(b, "_data"):  # Tensors: recorded, for the second derivative (x^(a-1) e^-x / Gamma(a))
            dx = ((a - 1) * b.log() - b - a.lgamma()).exp()
        else:
            dx = _special.gammainc_grad_x(xp, a, b).astype(gy.dtype)
        return _IGAMMA_A[upper], gy * (-dx if upper else dx)

    return grads


class _RefusedGradient:
    """A gradient that PyTorch does not have: asking for it raises, with PyTorch's message."""

    def __init__(self, message):
        self.message = message


def _zeta_grads(xp, gy, x, q, out):
    """d/dq zeta(x, q) = -x zeta(x + 1, q); PyTorch has none in x, and refuses it when asked."""
    if hasattr(q, "_data") or hasattr(x, "_data"):
        return _ZETA_X, -gy * x * Binary.apply(x + 1, q, op="zeta")
    return _ZETA_X, -gy * x * _special.zeta(xp, x + 1, q).astype(gy.dtype)


def _nextafter_grads(xp, gy, a, b, out):
    if hasattr(gy, "_data"):
        return gy, _wrap_array(xp_of(gy._data).zeros_like(gy._data))
    return gy, xp.zeros_like(gy)


_ZETA_X = _RefusedGradient("the derivative for 'zeta' is not implemented.")

_IGAMMA_A = {False: _RefusedGradient("the derivative for 'igamma: input' is not implemented."),
             True: _RefusedGradient("the derivative for 'igammac: input' is not implemented.")}


def _nan_ignoring_grads(keep_self):
    """fmax's (fmin's) gradients, PyTorch's: to self where it was kept (``a >= b``, ``a <= b`` for fmin) or the
    other is NaN, to the other elsewhere."""
    def grads(xp, gy, a, b, out):
        mask = keep_self(a, b) | xp.isnan(b)
        return xp.where(mask, gy, 0), xp.where(mask, 0, gy)
    return grads


# One row per op of two tensors (or a tensor and a number): PyTorch's backward node, the forward (xp, a, b), and
# the two gradients from (xp, gy, a, b, out) before broadcasting is undone.
BINARY = {
    "atan2": ("Atan2Backward0", lambda xp, a, b: xp.arctan2(a, b), _atan2_grads),
    "hypot": ("HypotBackward0", lambda xp, a, b: xp.hypot(a, b), _hypot_grads),
    "logaddexp": ("LogaddexpBackward0", _logaddexp_forward, _logaddexp_grads),
    "xlogy": ("XlogyBackward0", _xlogy_forward, _xlogy_grads),
    "remainder": ("RemainderBackward0", remainder, _remainder_grads),
    "fmod": ("FmodBackward0", lambda xp, a, b: xp.fmod(a, b), _fmod_grads),
    "fmax": ("FmaxBackward0", lambda xp, a, b: xp.fmax(a, b), _nan_ignoring_grads(lambda a, b: a >= b)),
    "fmin": ("FminBackward0", lambda xp, a, b: xp.fmin(a, b), _nan_ignoring_grads(lambda a, b: a <= b)),
    "igamma": ("IgammaBackward0", lambda xp, a, b: _special.gammainc(xp, a, b), _igamma_grads(False)),
    "igammac": ("IgammacBackward0", lambda xp, a, b: _special.gammainc(xp, a, b, upper=True), _igamma_grads(True)),
    # the next float after a towards b: PyTorch's gradient passes to a as it is, none to b (a step of one ulp)
    "nextafter": ("NextafterBackward0", lambda xp, a, b: xp.nextafter(a, b), _nextafter_grads),
    "zeta": ("SpecialZetaBackward0", lambda xp, a, b: _special.zeta(xp, a, b).astype(a.dtype), _zeta_grads),
}
# (PyTorch names the node by which operand was a number: SpecialZetaBackward1 for x, 2 for q)
BINARY["zeta_number_x"] = ("SpecialZetaBackward1", *BINARY["zeta"][1:])
BINARY["zeta_number_q"] = ("SpecialZetaBackward2", *BINARY["zeta"][1:])


# the rows of BINARY that take complex numbers (the others refuse them in forward, in PyTorch's words)
_COMPLEX_BINARY = frozenset(("logaddexp",))


class Binary(Function):
    """An elementwise function of two operands from the :data:`BINARY` table (``op=`` its name)."""

    raw = True
    complex_ok = True  # (the rows in _COMPLEX_BINARY)
    complex_error = complex_words(lambda dtype, kwargs, device: RuntimeError(
        f"{kwargs['op']} not implemented for complex tensors.") if kwargs.get("op") in ("fmax", "fmin")
        else complex_refusal(f"{kwargs.get('op')}_{device}", dtype))

    def backward_name(self):
        return BINARY[self.op][0]

    @staticmethod
    def forward(ctx, a, b, op):
        if op not in _COMPLEX_BINARY:
            check_complex(Binary, a, b, {"op": op})
        a, b = promote(a, b)
        xp = xp_of(a) if hasattr(a, "shape") else xp_of(b)
        if not hasattr(b, "shape"):  # a number beside an array: an array of its dtype (xp.log(2) is a float64
            b = xp.asarray(b, dtype=a.dtype)  # scalar, which NumPy would let widen a float32 result)
        elif not hasattr(a, "shape"):
            a = xp.asarray(a, dtype=b.dtype)
        ctx.op = op
        ctx.op_label = BINARY[op][0][:-len("Backward0")]  # Atan2, Hypot, ...
        try:
            out = BINARY[op][1](xp, a, b)
        except ValueError as error:
            raise_broadcast_error(a, b, error)
        ctx.saved = (a, b, out if op == "hypot" else None)  # (only hypot's gradients read the output)
        return out

    @staticmethod
    def backward(ctx, gy):
        a, b, out = ctx.saved
        ga, gb = BINARY[ctx.op][2](xp_of(gy), gy, a, b, out)
        need_a, need_b = ctx.needs_input_grad
        if need_a and isinstance(ga, _RefusedGradient):
            raise NotImplementedError(ga.message)
        return (ga if need_a else None), (gb if need_b else None)
