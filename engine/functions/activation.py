"""The activations PyTorch records as one node each (``SiluBackward0``, ``EluBackward0``, ``LeakyReluBackward0``,
``SoftplusBackward0``, ``HardtanhBackward0``, ...): one :class:`Activation` Function over the :data:`ACTIVATIONS`
table, each row PyTorch's forward and its backward formula as ATen's CPU kernels write them (the order of their
products included, so a gradient has PyTorch's bits), each node keeping only its input, as PyTorch's does.

A gradient formula is written once for arrays and for Tensors (``m``: :class:`ArrayMath` over NumPy or CuPy, or
the recording math of :mod:`engine.autograd.higher`), so its second derivative is the same formula recorded.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function, holomorphic
from ..backend import xp_of
from ..dtypes import scalar_name
from ..errors import complex_refusal

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_ONE_SIXTH = 0.1666666716337204  # PyTorch's hardsigmoid gradient multiplies by 1/6 as a float32, in float64 too


class ArrayMath:
    """What a gradient formula calls, on arrays of ``xp``."""

    def __init__(self, xp):
        self.xp = xp

    def where(self, cond, a, b):
        return self.xp.where(cond, a, b)

    def exp(self, x):
        return self.xp.exp(x)

    def tanh(self, x):
        return self.xp.tanh(x)

    def log1p(self, x):
        return self.xp.log1p(x)

    def sigmoid(self, x):
        return 1 / (1 + self.xp.exp(-x))

    def nonpositive(self, x):
        """``min(x, 0)``: an exponential of it cannot overflow in a branch ``where`` does not take."""
        return self.xp.minimum(x, 0)

    @staticmethod
    def one_minus(x):
        """``1 - x`` (on Tensors, recorded as PyTorch's C++ ``1 - t``: SubBackward0 with an edge to nothing)."""
        return 1 - x


def _elu_forward(xp, x, alpha, scale, input_scale):
    neg = xp.expm1(xp.minimum(x, 0) * input_scale) * (alpha * scale)
    return xp.where(x > 0, x * scale if scale != 1 else x, neg)


def _elu_grad(m, gy, x, alpha, scale, input_scale):  # x <= 0: grad * negiptcoef * negcoef * exp(x * negiptcoef)
    return m.where(x <= 0, gy * input_scale * (alpha * scale) * m.exp(m.nonpositive(x) * input_scale),
                   gy * scale if scale != 1 else gy)  # (a NaN input passes the gradient, as PyTorch's)


def _softplus_forward(xp, x, beta, threshold):
    z = x * beta
    return xp.where(z > threshold, x, xp.log1p(xp.exp(z)) / beta)


def _softplus_grad(m, gy, x, beta, threshold):  # z = exp(x * beta); grad * z / (z + 1)
    z = m.exp(x * beta)
    return m.where(x * beta > threshold, gy, gy * z / (z + 1))


def _silu_grad(m, gy, x):  # grad * sigmoid * (1 + x * (1 - sigmoid))
    s = m.sigmoid(x)
    return gy * s * (1 + x * m.one_minus(s))


def _mish_grad(m, gy, x):
    s = m.sigmoid(x)
    t = m.tanh(m.log1p(m.exp(x)))
    return gy * (t + x * s * m.one_minus(t * t))


def _inside(x, lo, hi):
    return (x >= lo) & (x <= hi)


# name -> (PyTorch's node, forward(xp, x, *params), gradient(m, gy, x, *params))
ACTIVATIONS = {
    "silu": ("SiluBackward0", lambda xp, x: x / (1 + xp.exp(-x)), _silu_grad),
    "elu": ("EluBackward0", _elu_forward, _elu_grad),  # params: alpha, scale, input_scale (selu: its constants)
    "celu": ("CeluBackward0", _elu_forward, _elu_grad),  # elu with input_scale 1 / alpha
    "leaky_relu": ("LeakyReluBackward0", lambda xp, x, slope: xp.where(x > 0, x, x * slope),
                   lambda m, gy, x, slope: m.where(x > 0, gy, gy * slope)),
    "softplus": ("SoftplusBackward0", _softplus_forward, _softplus_grad),
    "hardtanh": ("HardtanhBackward0", lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi),
                 lambda m, gy, x, lo, hi: m.where((x <= lo) | (x >= hi), 0, gy)),
    "hardsigmoid": ("HardsigmoidBackward0", lambda xp, x: xp.minimum(xp.maximum(x + 3, 0), 6) / 6,
                    lambda m, gy, x: m.where((x > -3) & (x < 3), gy * _ONE_SIXTH, 0)),
    "hardswish": ("HardswishBackward0", lambda xp, x: x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6,
                  lambda m, gy, x: m.where(x <= -3, 0, m.where(x < 3, gy * (x / 3 + 0.5), gy))),
    "mish": ("MishBackward0", lambda xp, x: x * xp.tanh(xp.log1p(xp.exp(x))), _mish_grad),
    "softshrink": ("SoftshrinkBackward0",
                   lambda xp, x, lambd: xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0)),
                   lambda m, gy, x, lambd: m.where(_inside(x, -lambd, lambd), 0, gy)),
    "hardshrink": ("HardshrinkBackward0", lambda xp, x, lambd: xp.where(_inside(x, -lambd, lambd), 0, x),
                   lambda m, gy, x, lambd: m.where(_inside(x, -lambd, lambd), 0, gy)),
    # NaN, +inf and -inf replaced; the gradient passes where the input was finite (PyTorch's grad * isfinite(x))
    "nan_to_num": ("NanToNumBackward0",
                   lambda xp, x, nan, posinf, neginf: xp.where(x != x, nan, xp.where(
                       x == float("inf"), posinf, xp.where(x == float("-inf"), neginf, x))),
                   lambda m, gy, x, nan, posinf, neginf: m.where((x == x) & (abs(x) != float("inf")), gy, 0)),
    "threshold": ("ThresholdBackward0", lambda xp, x, threshold, value: xp.where(x <= threshold, value, x),
                  lambda m, gy, x, threshold, value: m.where(x <= threshold, 0, gy)),
}


# the ops PyTorch computes on integers too, and the names of its kernels where it refuses them
_INTEGER_OK = frozenset({"hardtanh", "threshold"})
_KERNELS = {"celu": "elu_{}", "softshrink": "softshrink_check"}


def elu_params(kind: str, alpha: float = 1.0) -> tuple:
    """(alpha, scale, input_scale) of PyTorch's elu kernel for ``elu``, ``celu`` and ``selu``."""
    if kind == "selu":
        return (_SELU_ALPHA, _SELU_SCALE, 1.0)
    if kind == "celu":
        return (alpha, 1.0, 1.0 / alpha)
    return (alpha, 1.0, 1.0)


_COMPLEX_OK = frozenset({"silu"})  # (F.silu refuses its gradient, as PyTorch's)
_COMPLEX_KERNELS = {"hardtanh": None, "hardsigmoid": "hardsigmoid_{}", "nan_to_num": "nan_to_num"}


class Activation(Function):
    """An activation of the :data:`ACTIVATIONS` table (``op=`` its name, ``params=`` its numbers)."""

    raw = True
    complex_ok = True  # (the rows in _COMPLEX_OK; the others refuse a complex tensor, in PyTorch's words)

    def backward_name(self):
        return ACTIVATIONS[self.op][0]

    @classmethod
    def complex_error(cls, dtype, kwargs, device):
        op = kwargs.get("op")
        kernel = _COMPLEX_KERNELS.get(op, _KERNELS.get(op, f"{op}_{{}}"))
        if kernel is None:  # (PyTorch's hardtanh is a clamp)
            return NotImplementedError("clamp is not supported for complex types")
        return complex_refusal(kernel.format(device), dtype)

    @staticmethod
    def forward(ctx, x, op, params=()):
        if x.dtype.kind not in "fc" and op not in _INTEGER_OK:  # PyTorch has no integer kernel for it
            kernel = _KERNELS.get(op, op + "_{}").format("cpu" if x.__class__ is np.ndarray else "cuda")
            raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(x.dtype)}\'')
        if x.dtype.kind == "c" and op not in _COMPLEX_OK:
            raise Activation.complex_error(x.dtype, {"op": op}, "cpu" if x.__class__ is np.ndarray else "cuda")
        ctx.op = op
        ctx.params = params
        ctx.op_label = ACTIVATIONS[op][0][:-len("Backward0")]  # the graph panel's name: Silu, LeakyRelu, ...
        ctx.saved = (x,)
        out = ACTIVATIONS[op][1](xp_of(x), x, *params)
        if out.dtype != x.dtype:  # (a number in a where: the input's dtype, as PyTorch's)
            out = out.astype(x.dtype)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x = ctx.saved[0]
        g = ACTIVATIONS[ctx.op][2](ArrayMath(xp_of(gy)), gy, x, *ctx.params)
        return g.astype(gy.dtype, copy=False) if g.dtype != gy.dtype else g


class Prelu(Function):
    """ATen's ``_prelu_kernel``: ``x`` where positive, ``w * x`` elsewhere, ``w`` broadcast (F.prelu views it
    along dimension 1), one node as PyTorch's ``PreluKernelBackward0``; the gradients are ``g`` or ``w * g`` for
    ``x`` and ``x * g`` where ``x <= 0`` for ``w`` (the walk sums it to the weight's shape)."""

    raw = True
    backward_name = "PreluKernelBackward0"
    saved_uses = ((0, 1), (0,))

    @staticmethod
    def forward(ctx, x, w):
        ctx.saved = (x, w)
        out = xp_of(x).where(x > 0, x, w * x)
        return out.astype(x.dtype, copy=False) if out.dtype != x.dtype else out

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved
        xp = xp_of(gy)
        need_x, need_w = ctx.needs_input_grad[:2]
        positive = x > 0
        return (xp.where(positive, gy, w * gy) if need_x else None,
                xp.where(positive, gy.dtype.type(0), x * gy) if need_w else None)


class Glu(Function):
    """The gated linear unit, ``a * sigmoid(b)`` of the two halves of ``dim``, as one node (PyTorch's
    ``GluBackward0``), with ATen's CPU formulas: the gradient of ``a`` is ``sigmoid(b) * g``, that of ``b``
    ``(1 - sigmoid(b)) * sigmoid(b) * a * g``, written into one array. The node keeps its input, as PyTorch's."""

    raw = True
    backward_name = "GluBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        if x.dtype.kind not in "fc":  # PyTorch has no integer kernel for it
            kernel = "glu_cpu" if x.__class__ is np.ndarray else "glu_cuda"
            raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(x.dtype)}\'')
        ctx.dim = dim
        ctx.saved = (x,)
        a, b = _halves(x, dim)
        return a * (1 / (1 + xp_of(x).exp(-b)))

    @staticmethod
    def backward(ctx, gy):
        x = ctx.saved[0]
        xp = xp_of(gy)
        a, b = _halves(x, ctx.dim)
        gx = xp.empty(x.shape, dtype=gy.dtype)
        ga, gb = _halves(gx, ctx.dim)
        s = 1 / (1 + xp.exp(-b))
        xp.multiply((1 - s) * s * a, gy, out=gb)
        xp.multiply(s, gy, out=ga)
        return gx


def _halves(x, dim):
    """The two halves of ``x`` along ``dim``, views."""
    n = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(None, n),)], x[lead + (slice(n, None),)]
