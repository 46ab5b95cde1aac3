"""Higher-order gradients: the backward walk with ``create_graph=True``.

The first-order walk (:mod:`.graph`) runs each built-in's backward on raw arrays, which records nothing. With
``create_graph=True`` this walk runs instead: every gradient is a Tensor, and each node's backward is written here
again in Tensor ops, so the gradients are themselves recorded and can be differentiated (the gradient penalty of a
WGAN-GP, the derivatives a physics-informed network puts in its loss, MAML's inner step, a Hessian). A user's own
Function runs its ``backward`` with grad mode on, as PyTorch runs it: written in Tensor ops, it is differentiable.

Each entry of :data:`DOUBLE` is one built-in's backward in Tensor ops: the same formula as the raw one (PyTorch's
derivatives.yaml), reading the node's inputs as the Tensors they were (so that the gradient stays connected to
them) and what it saved as constants. Masks (ReLU's, clamp's, max's) are constants, as in PyTorch. An op without an
entry refuses by name; nothing falls back to a gradient that would silently not be differentiable.

Registered with :mod:`.graph` when imported (engine/__init__ imports it through :mod:`.functional`), so that the
walk's module does not import the ops it runs.
"""

from __future__ import annotations

import contextlib
import functools
import math
from heapq import heappop, heappush
from threading import get_ident

import numpy as np

from .. import functions as F
from .. import kernels as _kernels
from .. import tensor as _tensor
from ..backend import xp_of
from ..errors import FREED_GRAPH
from ..functions import attention as _attention
from ..functions import conv as _conv
from ..functions import spectral as _spectral
from ..functions.activation import ACTIVATIONS, ArrayMath
from ..functions.elementwise import BINARY, UNARY, _RefusedGradient
from ..functions.shape import _has_integer_arrays
from ..nn.functional import pad as _pad
from ..tensor import Tensor, _LazyZeros, _wrap
from . import _writes
from . import graph as _graph
from .function import Function, holomorphic
from .grad_mode import enable_grad

__all__ = ["run", "DOUBLE"]


def _const(value):
    """A saved value as a constant of the new graph: arrays as Tensors that need no gradient, numbers as they are."""
    if value is None or value.__class__ in (int, float, bool):
        return value
    if isinstance(value, np.generic):
        value = np.asarray(value)
    return _wrap(value)


def _operand(node, i, saved):
    """Input ``i`` of ``node`` as the Tensor it was, where it needs a gradient (so the new graph reaches it), in the
    dtype the forward computed in; else the value the forward saved, as a constant."""
    t = node._inputs[i] if i < len(node._inputs) else None
    if t is None:
        return _const(saved)
    dtype = getattr(saved, "dtype", None)
    if dtype is not None and t._data.dtype != dtype:
        return F.Cast.apply(t, dtype)  # promoted in the forward (float32 * float64)
    return t


def _where(mask, a, b):
    """``where(mask, a, b)`` with a constant mask (an array); ``a``, ``b`` Tensors or numbers."""
    return F.Where.apply(mask, a, b)


class _TensorMath:
    """The ``xp`` the elementwise tables' gradient formulas call (``xp.exp``, ``xp.cosh``, ...), on Tensors."""

    exp = staticmethod(lambda t: t.exp())
    log = staticmethod(lambda t: t.log())
    sqrt = staticmethod(lambda t: t.sqrt())
    sin = staticmethod(lambda t: t.sin())
    cos = staticmethod(lambda t: t.cos())
    sinh = staticmethod(lambda t: t.sinh())
    cosh = staticmethod(lambda t: t.cosh())
    floor = staticmethod(lambda t: t.floor())
    trunc = staticmethod(lambda t: t.trunc())
    isnan = staticmethod(lambda t: t.isnan())
    where = staticmethod(lambda cond, a, b: F.Where.apply(cond, a, b))


def _expand_back(gy, shape, axes, keepdim):
    """A reduction's gradient broadcast back to its input's ``shape`` (Tensor ops: the graph records it)."""
    if axes is None:
        gy = gy.reshape((1,) * len(shape))
    elif not keepdim:
        for a in sorted(axes):
            gy = gy.unsqueeze(a)
    return gy.expand(*shape) if tuple(gy.shape) != tuple(shape) else gy


# ---------------------------------------------------------------------------- one backward per built-in

def _add(node, gy):
    return gy, gy


def _sub(node, gy):
    return gy, (-gy if node.needs_input_grad[1] else None)


def _as_wrapped(v, like):
    """A number that was an operand as the tensor PyTorch wraps it in (a 0-d constant on ``like``'s device): its
    gradient's arithmetic records Tensor ops (MulBackward0, an edge to nothing), as PyTorch's mul/div formulas."""
    if v.__class__ in (int, float, bool):
        return _wrap(xp_of(like._data).asarray(v))
    return v


def _mul(node, gy):
    a, b = node.saved
    need_a, need_b = node.needs_input_grad
    return ((gy * _as_wrapped(_operand(node, 1, b), gy) if need_a else None),
            (gy * _as_wrapped(_operand(node, 0, a), gy) if need_b else None))


def _div(node, gy):
    a, b = node.saved
    need_a, need_b = node.needs_input_grad
    B = _as_wrapped(_operand(node, 1, b), gy)  # noqa: N806 - the formula's names
    ga = gy / B if need_a else None
    gb = -gy * ((_as_wrapped(_operand(node, 0, a), gy) / B) / B) if need_b else None
    return ga, gb


def _pow(node, gy):
    a, b, _ = node.saved
    need_a, need_b = node.needs_input_grad
    A, B = _operand(node, 0, a), _operand(node, 1, b)
    ga = gb = None
    if need_a:
        if not hasattr(b, "shape") and b == 0:  # (as the first derivative: 0 for a zero exponent)
            ga = _const(xp_of(gy._data).zeros_like(gy._data))  # (PyTorch's zeros_like: no graph behind it)
        else:
            ga = gy * (B * A ** (B - 1))
            if hasattr(b, "shape"):
                ga = _where(xp_of(ga._data).asarray(b == 0), 0.0, ga)
    if need_b:
        log_a = A.log() if isinstance(A, Tensor) else math.log(A) if A > 0 else -math.inf if A == 0 else math.nan
        gb = gy * (A ** B) * log_a
        zero_base = (a == 0) & (b >= 0)  # (as the first derivative: 0 there, not 0 * log 0)
        if hasattr(zero_base, "shape") or zero_base:
            gb = _where(xp_of(gb._data).asarray(zero_base), 0.0, gb)
    return ga, gb


def _neg(node, gy):
    return -gy


def _matmul(node, gy):
    a, b = node.saved
    need_a, need_b = node.needs_input_grad
    A, B = _operand(node, 0, a), _operand(node, 1, b)
    if a.ndim == 1 and b.ndim == 1:  # a dot product: gy is 0-d
        return (gy * B if need_a else None), (gy * A if need_b else None)
    a2 = A.unsqueeze(0) if a.ndim == 1 else A
    b2 = B.unsqueeze(-1) if b.ndim == 1 else B
    g2 = gy.unsqueeze(-1) if b.ndim == 1 else gy
    if a.ndim == 1:
        g2 = g2.unsqueeze(-2)
    ga = gb = None
    if need_a:  # (batch dimensions a did not have are summed by the walk)
        ga = g2 @ b2.transpose(-1, -2)
        if a.ndim == 1:
            ga = ga.squeeze(-2)
    if need_b:
        gb = a2.transpose(-1, -2) @ g2
        if b.ndim == 1:
            gb = gb.squeeze(-1)
    return ga, gb


def _addmm(node, gy):
    m1, m2 = node.saved
    beta, alpha = node.meta
    need_b, need_1, need_2 = node.needs_input_grad
    g = gy * alpha if alpha != 1 and (need_1 or need_2) else gy
    return ((gy * beta if beta != 1 else gy) if need_b else None,
            g @ _operand(node, 2, m2).t() if need_1 else None,
            _operand(node, 1, m1).t() @ g if need_2 else None)


def _add_product(node, gy):
    a, b = node.saved
    kind, beta, alpha = node.meta
    need_bias, need_a, need_b = node.needs_input_grad[:3]
    g = gy * alpha if alpha != 1 and (need_a or need_b) else gy
    A, B = _operand(node, 1, a), _operand(node, 2, b)
    ga = gb = None
    if kind == "mv":
        ga = g.outer(B) if need_a else None
        gb = A.t().mv(g) if need_b else None
    elif kind == "r":
        ga = g.mv(B) if need_a else None
        gb = g.t().mv(A) if need_b else None
    else:
        if kind == "addbmm":
            g = g.unsqueeze(0).expand(a.shape[0], *g.shape)
        ga = g.bmm(B.transpose(1, 2)) if need_a else None
        gb = A.transpose(1, 2).bmm(g) if need_b else None
    return ((gy * beta if beta != 1 else gy) if need_bias else None), ga, gb


def _add_scaled(node, gy):
    alpha, subtract = node.meta
    return gy, ((gy * (-alpha if subtract else alpha)) if node.needs_input_grad[1] else None)


def _mse_loss(node, gy):
    a, b = node.saved
    norm = 2.0 / max(a.size, 1) if node.meta == "mean" else 2.0
    g = norm * (_operand(node, 0, a) - _operand(node, 1, b)) * gy
    need_a, need_b = node.needs_input_grad
    return (g if need_a else None), (-g if need_b else None)


def _exp(node, gy):
    return gy * node._inputs[0].exp()


def _log(node, gy):
    return gy / node._inputs[0]


def _sin(node, gy):
    return gy * node._inputs[0].cos()


def _cos(node, gy):
    return gy * -node._inputs[0].sin()


def _abs(node, gy):
    x = node._inputs[0]
    if x is not None and x.requires_grad:  # PyTorch's grad * self.sgn(): connected (sgn's gradient is zeros; a
        return gy * x.sgn()  # complex z's, z / |z|, has one)
    saved = node.saved[0]
    if saved.dtype.kind == "c":
        return gy * _wrap(saved).sgn()
    return gy * _const(xp_of(saved).sign(saved))


def _sqrt(node, gy):
    return gy / (2 * node._inputs[0].sqrt())


def _output_of(node, array):
    """The output ``array`` of ``node`` as a Tensor made by it (its first output): an edge back to the op's own node,
    as PyTorch's double-backward nodes read the op's result."""
    t = _wrap(array, True)
    t.grad_fn, t._out_index = node, 0
    return t


def _sum_keep(a, dim):
    return a.sum(axis=dim, keepdims=True)


# (the gradient from (gy, y), the output's gradient from (g, gy, y)) in arrays, for OutputGrad
_OUTPUT_GRADS = {
    "tanh": (lambda gy, y, dim: gy * (1 - y * y), lambda g, gy, y, dim: g * (-2 * y * gy)),
    "sigmoid": (lambda gy, y, dim: gy * (1 - y) * y, lambda g, gy, y, dim: g * gy * (-2 * y + 1)),
    "softmax": (lambda gy, y, dim: y * (gy - _sum_keep(gy * y, dim)),
                lambda g, gy, y, dim: gy * g - _sum_keep(y * gy, dim) * g - gy * _sum_keep(y * g, dim)),
    "log_softmax": (lambda gy, y, dim: gy - xp_of(y).exp(y) * _sum_keep(gy, dim),
                    lambda g, gy, y, dim: -_sum_keep(gy, dim) * xp_of(y).exp(y) * g),
}
_OUTPUT_GRAD_LABELS = {"tanh": "TanhGrad", "sigmoid": "SigmoidGrad", "softmax": "SoftmaxGrad",
                       "log_softmax": "LogSoftmaxGrad"}
_OUTPUT_GRAD_NAMES = {"tanh": "TanhBackwardBackward0", "sigmoid": "SigmoidBackwardBackward0",
                      "softmax": "SoftmaxBackwardDataBackward0", "log_softmax": "LogSoftmaxBackwardDataBackward0"}


class OutputGrad(Function):
    """The gradient of tanh, sigmoid, softmax or log_softmax under create_graph as PyTorch records it: one node
    (``TanhBackwardBackward0``, ``SigmoidBackwardBackward0``, ``SoftmaxBackwardDataBackward0``,
    ``LogSoftmaxBackwardDataBackward0``) with an edge to the gradient and one to the op's output (its own node:
    these backwards read the result), and PyTorch's formulas for both (derivatives.yaml: ``tanh_backward``,
    ``sigmoid_backward``, ``softmax_double_backward``, ``_log_softmax_backward_data``). Complex-analytic in each
    (tanh's and sigmoid's: softmax takes no complex numbers)."""

    raw = True
    complex_ok = True

    @staticmethod
    def forward(ctx, gy, y, kind, dim=None):
        ctx.backward_name = _OUTPUT_GRAD_NAMES[kind]
        ctx.op_label = _OUTPUT_GRAD_LABELS[kind]  # (the graph panel's and the profile's name)
        ctx.meta = (kind, dim)
        ctx.saved = (gy, y)
        return _OUTPUT_GRADS[kind][0](gy, y, dim)

    @staticmethod
    @holomorphic
    def backward(ctx, g):
        gy, y = ctx.saved
        kind, dim = ctx.meta
        need_gy, need_y = ctx.needs_input_grad[:2]
        if not need_gy:
            ggy = None
        elif kind == "log_softmax":  # (not the same form: g - sum(g exp(y)))
            ggy = g - _sum_keep(g * xp_of(y).exp(y), dim)
        else:
            ggy = _OUTPUT_GRADS[kind][0](g, y, dim)
        return ggy, (_OUTPUT_GRADS[kind][1](g, gy, y, dim) if need_y else None)


def _output_grad(node, g):
    """OutputGrad's own backward in Tensor ops (third derivatives): PyTorch's, the node again for the gradient's
    edge (log_softmax's a composite), composites for the output's."""
    gy_saved, y_saved = node.saved
    kind, dim = node.meta
    need_gy, need_y = node.needs_input_grad[:2]
    GY, Y = _operand(node, 0, gy_saved), _operand(node, 1, y_saved)  # noqa: N806 - the formula's names
    ggy = gyy = None
    if need_gy:
        ggy = (g - (g * Y.exp()).sum(dim, keepdim=True) if kind == "log_softmax"
               else OutputGrad.apply(g, Y, kind=kind, dim=dim))
    if need_y:
        if kind == "tanh":
            gyy = g * (-2 * Y * GY)
        elif kind == "sigmoid":
            gyy = g * GY * (-2 * Y + 1)
        elif kind == "softmax":
            gyy = GY * g - (Y * GY).sum(dim, keepdim=True) * g - GY * (Y * g).sum(dim, keepdim=True)
        else:
            gyy = -GY.sum(dim, keepdim=True) * Y.exp() * g
    return ggy, gyy


def _by_output(node, gy, kind, dim=None):
    """``node``'s gradient as one OutputGrad node on ``gy`` and the node's output (saved first)."""
    x = node._inputs[0]
    y = node.saved[0]
    return OutputGrad.apply(gy, _output_of(node, y) if x is not None and x.requires_grad else _const(y), kind=kind,
                            dim=dim)


def _sigmoid(node, gy):
    return _by_output(node, gy, "sigmoid")


def _tanh(node, gy):
    return _by_output(node, gy, "tanh")


class PiecewiseGrad(Function):
    """The gradient of a piecewise-linear op (ReLU, leaky ReLU, hardtanh, the shrinks, threshold), ``grad(gy)``
    (linear in ``gy``, the pieces read from the input's values), recorded as PyTorch's ``<Op>BackwardBackward0``:
    an edge to the gradient and one to the input, whose gradient is zeros. So the gradient requires grad where the
    input does, and a second derivative through it is zeros, not a refusal ("does not require grad"), as PyTorch's."""

    raw = True

    @staticmethod
    def forward(ctx, gy, x, grad, name):
        ctx.meta = (grad, x.shape, x.dtype, name)
        ctx.backward_name = name
        return grad(gy)

    @staticmethod
    def backward(ctx, ggy):
        grad, shape, dtype, _ = ctx.meta
        need_gy, need_x = ctx.needs_input_grad[:2]
        return (grad(ggy) if need_gy else None), (xp_of(ggy).zeros(shape, dtype) if need_x else None)


def _piecewise_grad(node, gy):
    grad, shape, dtype, name = node.meta
    need_gy, need_x = node.needs_input_grad[:2]
    return ((PiecewiseGrad.apply(gy, node._inputs[1], grad=grad, name=name) if need_gy else None),
            (_const(xp_of(gy._data).zeros(shape, dtype)) if need_x else None))


def _relu(node, gy):
    keep = node.saved[0] > 0  # (the output: PyTorch's threshold_backward reads the result)
    x = node._inputs[0]
    if x is None or not x.requires_grad:
        return _where(keep, gy, 0)
    return PiecewiseGrad.apply(gy, _output_of(node, node.saved[0]), grad=lambda g: xp_of(g).where(keep, g, 0),
                               name="ThresholdBackwardBackward0")  # (an edge to the result, as PyTorch's)


def _clamp(node, gy):
    x = node.saved[0]
    lo, hi = node.bounds
    if hi is None:
        keep = x >= lo
    elif lo is None:
        keep = x <= hi
    else:
        keep = (x >= lo) & (x <= hi)
    return _where(keep, gy, 0)


def _clamp_tensors(node, gy):
    return tuple(None if mask is None else _where(mask, gy, 0)
                 for mask in F.elementwise.clamp_masks(*node.saved, node.needs_input_grad))


def _maximum(node, gy):
    a, b = node.saved
    shared = _where(a == b, gy / 2, gy)
    a_loses, b_loses = (a < b, a > b) if node.mode == "max" else (a > b, a < b)
    need_a, need_b = node.needs_input_grad
    return (_where(a_loses, 0, shared) if need_a else None), (_where(b_loses, 0, shared) if need_b else None)


def _where_backward(node, gy):
    cond = node.saved[0]
    _, need_a, need_b = node.needs_input_grad
    return None, (_where(cond, gy, 0) if need_a else None), (_where(cond, 0, gy) if need_b else None)


def _rounding(node, gy):
    return gy * 0  # piecewise constant: a zero gradient, itself with a zero gradient


def _div_rounded(node, gy):
    need_a, need_b = node.needs_input_grad
    zeros = _const(xp_of(gy._data).zeros_like(gy._data))  # (PyTorch's zeros_like: no NaN from a NaN gradient)
    return (zeros if need_a else None), (zeros if need_b else None)


def _not_implemented(node, gy):
    raise RuntimeError(f"derivative for {node.op} is not implemented")


def _gelu(node, gy):
    x = node._inputs[0]
    if x is not None and x.requires_grad:  # (PyTorch's GeluBackwardBackward0)
        return SmoothGrad.apply(gy, x, op="gelu", params=(node.approximate,))
    if node.approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = (k * (x + c * x * x * x)).tanh()
        return gy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))
    cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
    return gy * (cdf + x * pdf)


class _ActivationMath:
    """The math of :mod:`engine.functions.activation`'s gradient formulas, on Tensors (recorded)."""

    where = staticmethod(lambda cond, a, b: F.Where.apply(cond, a, b))
    exp = staticmethod(lambda t: t.exp())
    tanh = staticmethod(lambda t: t.tanh())
    log1p = staticmethod(lambda t: t.log1p())
    sigmoid = staticmethod(lambda t: t.sigmoid())
    nonpositive = staticmethod(lambda t: t.clamp(max=0))
    one_minus = staticmethod(lambda t: t.new_tensor(1) - t)  # (a wrapped 1: SubBackward0, as PyTorch's C++)


# the activations whose gradient is piecewise linear in the input: a PiecewiseGrad each, as PyTorch's
_PIECEWISE = frozenset({"leaky_relu", "hardtanh", "softshrink", "hardshrink", "threshold", "hardsigmoid"})


def _elu_second(m, gg, x, alpha, scale, input_scale):  # (ATen's: elu_backward(...) * (x < 0): 0 at x = 0)
    return m.where(x < 0, gg * (input_scale * input_scale * alpha * scale) * m.exp(m.nonpositive(x) * input_scale), 0)


def _softplus_second(m, gg, x, beta, threshold):
    z = m.exp(x * beta)
    return m.where(x * beta > threshold, 0, gg * beta * z / ((z + 1) * (z + 1)))


def _gelu_second(m, gg, x, approximate):
    if approximate == "tanh":  # u = k (x + c x^3), f = x (1 + tanh u) / 2
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = m.tanh((x + x * x * x * c) * k)
        sech2 = 1 - t * t
        du = (x * x * (3 * c) + 1) * k
        return gg * (sech2 * du + x * 0.5 * (x * (6 * k * c) * sech2 - t * sech2 * du * du * 2))
    pdf = m.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))  # f' = Phi + x phi, f'' = phi (2 - x^2)
    return gg * pdf * (2 - x * x)


# ``g * gy * f''(x)`` of the smooth activations whose gradient PyTorch records as one node (ATen's
# elu_double_backward, softplus_double_backward, gelu_double_backward, hardswish_backward's derivative), in
# either math
_SECOND = {"elu": _elu_second, "celu": _elu_second, "softplus": _softplus_second, "gelu": _gelu_second,
           "hardswish": lambda m, gg, x: m.where((x > -3) & (x < 3), gg / 3, 0),
           "log_sigmoid": lambda m, gg, x: gg * (m.sigmoid(x) - 1) * m.sigmoid(x)}
_SMOOTH_NAMES = {"elu": "EluBackwardBackward0", "celu": "EluBackwardBackward0", "gelu": "GeluBackwardBackward0",
                 "softplus": "SoftplusBackwardBackward0", "hardswish": "HardswishBackwardBackward0",
                 "log_sigmoid": "LogSigmoidBackwardBackward0"}


class SmoothGrad(Function):
    """The gradient of elu (celu, selu), softplus or hardswish under create_graph as PyTorch records it: one node
    (``EluBackwardBackward0``, ...) with an edge to the gradient and one to the input: ``gy f'(x)``, whose own
    gradients are ``g f'(x)`` and ``g gy f''(x)`` (ATen's double backwards)."""

    raw = True

    @staticmethod
    def forward(ctx, gy, x, op, params):
        ctx.backward_name = _SMOOTH_NAMES[op]
        ctx.op_label = _SMOOTH_NAMES[op][:-len("BackwardBackward0")] + "Grad"  # (EluGrad, ...)
        ctx.meta = (op, params)
        ctx.saved = (gy, x)
        return _smooth_first(ArrayMath(xp_of(gy)), op, gy, x, params)

    @staticmethod
    def backward(ctx, g):
        gy, x = ctx.saved
        op, params = ctx.meta
        need_gy, need_x = ctx.needs_input_grad[:2]
        m = ArrayMath(xp_of(g))
        return (_smooth_first(m, op, g, x, params) if need_gy else None,
                _in_dtype(_SECOND[op](m, g * gy, x, *params), g) if need_x else None)


def _smooth_first(m, op, gy, x, params):
    """``gy f'(x)`` of one of :data:`_SECOND`'s activations on arrays, in the gradient's dtype: the op's own
    first-order backward."""
    if op == "gelu":
        out = _kernels.gelu_backward(gy, x, *params)
    elif op == "log_sigmoid":  # (the Unary op's own gradient, from its output)
        _, forward, grad = UNARY[op]
        out = grad(m.xp, gy, x, forward(m.xp, x))
    else:
        out = ACTIVATIONS[op][2](m, gy, x, *params)
    return _in_dtype(out, gy)


def _in_dtype(out, like):
    return out.astype(like.dtype, copy=False) if out.dtype != like.dtype else out


def _smooth_grad(node, g):
    gy_saved, x_saved = node.saved
    op, params = node.meta
    need_gy, need_x = node.needs_input_grad[:2]
    GY, X = _operand(node, 0, gy_saved), _operand(node, 1, x_saved)  # noqa: N806 - the formula's names
    return (SmoothGrad.apply(g, X, op=op, params=params) if need_gy else None,
            _SECOND[op](_ActivationMath, g * GY, X, *params) if need_x else None)


def _activation(node, gy):
    x = node._inputs[0]
    if node.op in _SECOND and x is not None and x.requires_grad:
        return SmoothGrad.apply(gy, x, op=node.op, params=node.params)
    if node.op in _PIECEWISE and x is not None and x.requires_grad:
        formula, saved, params = ACTIVATIONS[node.op][2], node.saved[0], node.params
        name = node.name().replace("Backward0", "BackwardBackward0")  # (LeakyReluBackwardBackward0, ...)
        return PiecewiseGrad.apply(gy, x, grad=lambda g: formula(ArrayMath(xp_of(g)), g, saved, *params).astype(
            g.dtype, copy=False), name=name)
    return ACTIVATIONS[node.op][2](_ActivationMath, gy, node._inputs[0], *node.params)


def _glu(node, gy):
    a, b = node._inputs[0].chunk(2, node.dim)
    s = b.sigmoid()
    return F.Cat.apply(s * gy, (1 - s) * s * a * gy, dim=node.dim)


def _unary(node, gy):
    x = node._inputs[0]
    if node.op in _SECOND and x is not None and x.requires_grad:  # (log_sigmoid: PyTorch's one node)
        return SmoothGrad.apply(gy, x, op=node.op, params=())
    return UNARY[node.op][2](_TensorMath, gy, x, F.Unary.apply(x, op=node.op))


def _binary(node, gy):
    a, b, _ = node.saved
    A, B = _operand(node, 0, a), _operand(node, 1, b)
    if node.op == "xlogy":  # PyTorch's: d/da = xlogy(g, b), 0 where a == 0 and b <= 0; d/db = g a / b
        need_a, need_b = node.needs_input_grad
        ga = None
        if need_a:
            xp = xp_of(a)
            shape = xp.broadcast_shapes(a.shape, b.shape, gy._data.shape)
            zero = ((a == 0) & (b <= 0)) | ((gy._data == 0) & ~xp.isnan(b))
            ga = _where(_const(xp.broadcast_to(zero, shape)), 0, gy * B.log())
        return ga, (gy * A / B if need_b else None)
    ga, gb = BINARY[node.op][2](_TensorMath, gy, A, B, F.Binary.apply(A, B, op=node.op))
    need_a, need_b = node.needs_input_grad
    if need_a and isinstance(ga, _RefusedGradient):
        raise NotImplementedError(ga.message)
    return (ga if need_a else None), (gb if need_b else None)


def _sum(node, gy):
    shape, axes, keepdim = node.meta
    return _expand_back(gy, shape, axes, keepdim)


def _mean(node, gy):
    shape, axes, keepdim = node.meta
    return _expand_back(gy / node.count, shape, axes, keepdim)


def _max_min(node, gy):
    x, out = node.saved
    mask = F.reduction.tie_mask(x, out)
    return gy * _const((mask / mask.sum()).astype(x.dtype))


def _max_min_dim(node, gy):
    (idx_k,) = node.saved
    shape, axis, keepdim = node.meta
    xp = xp_of(idx_k)
    if not keepdim:
        gy = gy.unsqueeze(axis)
    positions = xp.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return gy * _const((positions == idx_k).astype(gy._data.dtype))


def _softmax(node, gy):
    x, dim = node._inputs[0], node.meta
    if x.dim() == 0:
        raise _refused(node)
    return _by_output(node, gy, "log_softmax" if node.log else "softmax", dim)


def _vector_norm(node, gy):
    x_saved, norm_saved = node.saved
    p, axes, keepdim = node.meta
    x = node._inputs[0]
    if p == 0:
        return None  # piecewise constant, as the first-order backward
    keep = tuple(range(x_saved.ndim)) if axes is None else axes
    if not keepdim:
        for a in sorted(keep):
            gy = gy.unsqueeze(a)
    # PyTorch's norm_backward for each order, in Tensor ops (sgn recorded: its gradient is zeros)
    if p == 1:
        return gy * x.sgn()
    xp = xp_of(x_saved)
    saved_norm = norm_saved if keepdim else xp.expand_dims(norm_saved, keep)
    if math.isinf(p):  # amax(|x|)'s: shared among the places that reach the norm (or are NaN)
        a = xp.abs(x_saved)
        mask = (a == saved_norm) | xp.isnan(a)
        return x.sgn() * ((gy / _const(mask.sum(axis=keep, keepdims=True).astype(x_saved.dtype)))
                          * _const(mask.astype(x_saved.dtype)))
    norm = F.VectorNorm.apply(x, ord=float(p), dim=axes, keepdim=True)
    zero = saved_norm == 0
    if p < 1:
        scaled = x.sgn() * _where(x_saved == 0, 0, x.abs() ** (p - 1))
        return scaled * gy * norm ** (1 - p)
    if p != 2:  # a zero vector's gradient is 0
        scaled = x.sgn() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
        return scaled * _where(zero, 0, gy / _where(zero, 1, norm) ** (p - 1))
    safe = _where(zero, 1, norm)  # a zero vector's gradient is 0, as PyTorch's: no 0 / 0 on either pass
    return _where(zero, 0, gy * x / safe)


def _reshape(node, gy):
    return gy.reshape(node.shape)


def _transpose(node, gy):
    return gy.transpose(*node.dims)


def _permute(node, gy):
    return gy.permute(*np.argsort(node.dims).tolist())


def _diagonal(node, gy):
    zeros = _wrap(xp_of(gy._data).zeros(node.shape, dtype=gy._data.dtype))
    return F.WriteView.apply(zeros, gy, steps=(("diagonal", node.args),))  # gy on the diagonal, zeros elsewhere


def _as_strided(node, gy):
    """AsStrided's backward, recorded: the output's gradient added up on the memory places, shared among the
    input's elements at each place (:func:`engine.functions.shape.strided_places`)."""
    xp = xp_of(gy._data)
    out_at, in_at, shared, n = F.shape.strided_places(xp, node.shape, node.x_stride, node.size, node.stride, node.rel)
    zeros = _wrap(xp.zeros(n + 1, dtype=gy._data.dtype))
    g = F.IndexAdd.apply(zeros, gy, index=out_at)[:n]
    if shared is not None:
        g = g / _wrap(shared.astype(gy._data.dtype))
    return g.reshape(node.shape) if in_at is None else g[_wrap(in_at)]


def _identity(node, gy):
    return gy


def _get_item(node, gy):
    shape, dtype, index = node.meta
    zeros = _wrap(xp_of(gy._data).zeros(shape, dtype=gy._data.dtype))
    if _has_integer_arrays(index):
        return F.IndexAdd.apply(zeros, gy, index=index)  # a repeated index adds up
    return F.SetItem.apply(zeros, gy, index=index)


def _uncropped(node, g):
    """The gradient of a value of which only the leading part (``node.crop``) was written: zeros past it."""
    crop = getattr(node, "crop", None)
    if crop is None:
        return g
    part, shape = crop
    return F.ConstantPad.apply(g, tuple((0, n - (p.stop - p.start)) for p, n in zip(part, shape)), value=0.0)


def _set_item(node, gy):
    need_x, need_value = node.needs_input_grad
    gx = F.SetItem.apply(gy, 0.0, index=node.index) if need_x else None
    return gx, (_uncropped(node, gy[node.index]) if need_value else None)


def _index_add(node, gy):
    need_x, need_value = node.needs_input_grad
    return (gy if need_x else None), (_uncropped(node, gy[node.index]) if need_value else None)


def _resample(node, gy):
    """interpolate's map transposed, recorded: per dimension (the first first), each tap's share of the gradient
    added back to its inputs (index_add, whose own gradient is the taps again)."""
    g = gy
    for axis, n, taps in reversed(node.axes):
        shape = list(g.shape)
        shape[axis] = n
        total = None
        for index, weight, _, _, _ in taps:
            share = g * _const(weight) if weight is not None else g
            part = _const(xp_of(g._data).zeros(shape, dtype=g._data.dtype)).index_add(axis, _wrap(index), share)
            total = part if total is None else total + part
        g = total
    return g


def _pad_map(node, gy):
    """reflect/replicate/circular padding transposed, recorded: each dimension's gradient added back to the input
    each output copied (index_add, whose own gradient is the copy again)."""
    g = gy
    for axis, n, index, _, _ in reversed(node.maps):
        shape = list(g.shape)
        shape[axis] = n
        g = _const(xp_of(g._data).zeros(shape, dtype=g._data.dtype)).index_add(axis, _wrap(index), g)
    return g


def _adaptive_max_pool(node, gy):
    """Each output's gradient added at its window's maximum, recorded (scatter_add, whose own gradient is a gather
    of the same places)."""
    (where,) = node.saved
    nd = len(node.out)
    rows, total = math.prod(node.shape[:-nd]), math.prod(node.shape[-nd:])
    zeros = _const(xp_of(gy._data).zeros((rows, total), dtype=gy._data.dtype))
    return zeros.scatter_add(1, _wrap(where.reshape(rows, -1)), gy.reshape(rows, -1)).reshape(node.shape)


def _var_mean(node, g_spread, g_mean):
    axes, _, keepdim, _, n = node.meta
    x = node._inputs[0]
    spread = _var_std(node, g_spread)
    return spread + _expand_back(g_mean / n, x._data.shape, axes, keepdim)


def _aminmax(node, g_low, g_high):
    low, high = node.parts  # (each a ctx of AMaxMin's: its rule reads what it saved)
    return _amax_min(low, g_low) + _amax_min(high, g_high)


def _take(node, gy):
    shape, index = node.meta
    zeros = _const(xp_of(gy._data).zeros(math.prod(shape), dtype=gy._data.dtype))
    return F.IndexAdd.apply(zeros, gy, index=index).reshape(shape)


def _diag_embed(node, gy):
    return gy.diagonal(*node.args)


def _to_dtype(piece, dtype):
    """A joined tensor's gradient piece back in its input's dtype (``cat``/``stack`` promote)."""
    return _in_dtype_of(piece, dtype)


def _cat(node, gy):
    out, start = [], 0
    lead = (slice(None),) * node.axis
    for size, dtype in zip(node.sizes, node.dtypes):
        if size is None:  # (an empty 1-D tensor, skipped)
            out.append(_const(xp_of(gy._data).zeros((0,), dtype=dtype)))
            continue
        out.append(_to_dtype(gy[lead + (slice(start, start + size),)], dtype))
        start += size
    return tuple(out)


def _stack(node, gy):
    lead = (slice(None),) * node.axis
    return tuple(_to_dtype(gy[lead + (i,)], dtype) for i, dtype in enumerate(node.dtypes))


def _split(node, *gys):
    """``split``'s and ``unbind``'s pieces' gradients joined (recorded: ``cat``, or ``stack`` for unbind)."""
    if node.op_name == "UnbindBackward0":
        return F.Stack.apply(*gys, dim=node.axis)
    return F.Cat.apply(*gys, dim=node.axis)


def _cast(node, gy):
    return _in_dtype_of(gy, node.src) if node.src.kind in "fc" else None


def _to_device(node, gy):
    dev, dtype = node.src
    return F.ToDevice.apply(_in_dtype_of(gy, dtype), dev) if dtype.kind in "fc" else None


def _in_dtype_of(g, dtype):
    """A recorded gradient in its input's ``dtype`` (:func:`engine.dtypes.cast_gradient` in Tensor ops): a complex
    gradient of a real input is its real part."""
    if g._data.dtype.kind == "c" and dtype.kind != "c":
        g = g.real
    return g if g._data.dtype == dtype else F.Cast.apply(g, dtype)


def _cumsum(node, gy):
    dim = node.meta
    return gy.flip(dim).cumsum(dim).flip(dim)


def _nansum(node, gy):
    shape, axes, keepdim = node.meta
    x = node.saved[0]
    return _expand_back(gy, shape, axes, keepdim) * _const(~xp_of(x).isnan(x))


def _logcumsumexp(node, gy):
    """PyTorch's logcumsumexp_backward in Tensor ops (its positive and negative parts in log space)."""
    dim = node.meta
    if gy.dim() == 0 or gy.numel() == 0:
        return gy
    x = _operand(node, 0, node.saved[0])
    out = F.LogCumSumExp.apply(x, dim)
    lowest = float(np.finfo(gy._data.dtype).min)
    log_abs = gy.abs().log()

    def part(log_grad):
        return (F.LogCumSumExp.apply((log_grad - out).flip(dim), dim).flip(dim) + x).exp()

    return part(_where(gy._data > 0, log_abs, lowest)) - part(_where(gy._data < 0, log_abs, lowest))


def _cross(node, gy):
    a, b = node.saved
    A, B = _operand(node, 0, a), _operand(node, 1, b)
    dim = node.meta
    need_a, need_b = node.needs_input_grad[:2]
    return (F.Cross.apply(B, gy, dim) if need_a else None), (F.Cross.apply(gy, A, dim) if need_b else None)


def _prelu(node, gy):
    x, w = node.saved
    X, W = _operand(node, 0, x), _operand(node, 1, w)
    need_x, need_w = node.needs_input_grad[:2]
    positive = x > 0
    if need_x and not need_w:  # (PyTorch's: connected to x, whose own gradient there is zeros)
        return PiecewiseGrad.apply(gy, X, grad=lambda g: xp_of(g).where(positive, g, w * g).astype(g.dtype, copy=False),
                                   name="PreluKernelBackwardBackward0"), None
    return (_where(positive, gy, W * gy) if need_x else None), (_where(positive, 0, X * gy) if need_w else None)


class _NormOf:
    """What :func:`_vector_norm` reads of a node, for the norm of a Tensor made here (a distance's differences)."""

    def __init__(self, x, norm, p, axes, keepdim=False):
        self.saved, self.meta, self._inputs = (x._data, norm), (p, axes, keepdim), [x]


def _dist(node, gy):
    a, b, out = node.saved
    p = node.meta
    if p == 0:
        return None, None
    g = _vector_norm(_NormOf(_operand(node, 0, a) - _operand(node, 1, b), out, p, None), gy)
    need_a, need_b = node.needs_input_grad[:2]
    return (g if need_a else None), (-g if need_b else None)


def _pairs_grad(gy, d, dist, p):
    """ATen's _cdist_backward per pair, in Tensor ops (the infinity norm's ties each get the whole gradient)."""
    if p == 0:
        return _const(xp_of(dist).zeros(d.shape, dtype=dist.dtype))
    if p == math.inf:
        mask = abs(d._data) == dist[..., None]
        return gy.unsqueeze(-1) * d.sgn() * _const(mask.astype(dist.dtype))
    return _vector_norm(_NormOf(d, dist, p, (d.dim() - 1,)), gy)


def _cdist(node, gy):
    x1, x2, out = node.saved
    A, B = _operand(node, 0, x1), _operand(node, 1, x2)
    need_1, need_2 = node.needs_input_grad[:2]
    if node.meta == 0:  # (piecewise constant: zeros for both)
        xp = xp_of(out)
        return (_const(xp.zeros_like(x1)) if need_1 else None), (_const(xp.zeros_like(x2)) if need_2 else None)
    g = _pairs_grad(gy, A.unsqueeze(-2) - B.unsqueeze(-3), out, node.meta)
    return (g.sum(-2) if need_1 else None), (-g.sum(-3) if need_2 else None)


def _euclidean_dist(node, gy):
    x1, x2, out = node.saved
    A, B = _operand(node, 0, x1), _operand(node, 1, x2)
    zero = out == 0
    ratio = _where(zero, 0, gy / _where(zero, 1, F.EuclideanDist.apply(A, B)))
    need_1, need_2 = node.needs_input_grad[:2]
    return ((A * ratio.sum(-1, keepdim=True) - ratio @ B) if need_1 else None,
            (B * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-1, -2) @ A) if need_2 else None)


def _pdist(node, gy):
    x, out = node.saved
    p, i, j = node.meta
    X = _operand(node, 0, x)
    xp = xp_of(x)
    rows_i, rows_j = _wrap(xp.asarray(i)), _wrap(xp.asarray(j))
    g = _pairs_grad(gy, X[rows_i] - X[rows_j], out, p)
    zeros = _wrap(xp.zeros(x.shape, dtype=out.dtype))
    return zeros.index_add(0, rows_i, g).index_add(0, rows_j, -g)


def _copy_from(node, gy):
    shape, dest_dtype = node.dest
    dev, dtype = node.src
    need_dest, need_src = node.needs_input_grad[:2]
    zeros = _const(xp_of(gy._data).zeros(shape, dtype=dest_dtype)) if need_dest else None
    if not need_src or dtype.kind not in "fc":
        return zeros, None
    moved = gy if (gy._data.dtype == dtype and gy.device == dev) else F.ToDevice.apply(_in_dtype_of(gy, dtype), dev)
    return zeros, moved


def _soft_margin_loss(node, gy):
    x, y = node.saved
    X = _operand(node, 0, x)
    return F.loss.soft_margin_grad(lambda t: t.exp(), gy, X, _const(y), node.meta, x.size), None


def _margin_loss_refused(op):
    """A margin loss's gradient as PyTorch records it under create_graph: its value, made by a NotImplemented
    node whose own backward refuses ("derivative for aten::multi_margin_loss_backward is not implemented")."""

    def rule(node, gy):
        raw = type(node).backward(node, gy._data)[0]
        return (F.NotImplementedDerivative.apply(node._inputs[0], gy, value=raw, op=op),) + (None,) * (
            len(node.needs_input_grad) - 1)

    return rule


def _renorm(node, gy):
    """ATen's renorm_backward in Tensor ops (the norm recomputed, connected to the input)."""
    (x,) = node.saved
    p, axes, maxnorm = node.meta
    X = _operand(node, 0, x)
    complex_x = X.is_complex()
    A = X.abs() if complex_x else X  # (a complex slice's norm: its moduli's, the gradient back through sgn)
    norm = F.VectorNorm.apply(A, ord=p, dim=axes, keepdim=True)
    inner = ((X.conj() * gy).real if complex_x else X * gy).sum(axes, keepdim=True)
    nb = _vector_norm(_NormOf(A, norm._data, p, axes, True), inner) if p != 0 else None
    if nb is not None and complex_x:
        nb = nb * X.sgn()
    inv = (norm + 1e-7).reciprocal()
    factor = inv * maxnorm
    scaled = factor * gy - (factor * inv) * nb if nb is not None else factor * gy
    return _where(norm._data > maxnorm, scaled, gy)


def _affine_grid(node, gy):
    spatial, align_corners = node.meta
    base = F.shape.affine_base_grid(spatial, align_corners, gy._data.dtype)
    xp = xp_of(gy._data)
    flat = _const(xp.asarray(base.reshape(-1, base.shape[-1])))
    return (flat.t() @ gy.reshape(gy.shape[0], -1, len(spatial))).transpose(1, 2)


def _max_unpool(node, gy):
    (flat_index,) = node.saved
    shape, size = node.meta
    rows = flat_index.shape[0]
    return gy.reshape(rows, -1).gather(1, _const(flat_index)).reshape(shape), None


def _trilinear(node, gy):
    x1, w, x2 = node.saved
    A, W, B = _operand(node, 0, x1), _operand(node, 1, w), _operand(node, 2, x2)
    o, i, j = w.shape
    b = x1.shape[0]
    need_1, need_w, need_2 = node.needs_input_grad[:3]
    g1 = ((gy.unsqueeze(2) * B.unsqueeze(1)).reshape(b, o * j) @ W.permute(0, 2, 1).reshape(o * j, i)
          if need_1 else None)
    gw = (gy.t() @ (A.unsqueeze(2) * B.unsqueeze(1)).reshape(b, i * j)).reshape(o, i, j) if need_w else None
    g2 = (gy.unsqueeze(2) * A.unsqueeze(1)).reshape(b, o * i) @ W.reshape(o * i, j) if need_2 else None
    return g1, gw, g2


def _masked_scatter(node, gy):
    (m,) = node.saved
    n, shape = node.meta
    need_x, _, need_s = node.needs_input_grad[:3]
    gs = None
    if need_s:
        picked = gy[_const(m)]
        rest = math.prod(shape) - n
        if rest:
            picked = F.Cat.apply(picked, _const(xp_of(m).zeros(rest, dtype=gy._data.dtype)), dim=0)
        gs = picked.reshape(shape)
    return (_where(m, 0, gy) if need_x else None), None, gs


def _put(node, gy):
    (flat,) = node.saved
    accumulate, shape = node.meta
    need_x, _, need_s = node.needs_input_grad[:3]
    gx = None
    if need_x:
        gx = gy if accumulate else F.Put.apply(gy, flat, _const(xp_of(flat).zeros(flat.shape[0], gy._data.dtype)),
                                                False)
    return gx, None, (gy.reshape(-1)[_const(flat)].reshape(shape) if need_s else None)


def _rearrange(node, gy):
    op, args = node.inverse
    return F.Rearrange.apply(gy, op=op, args=args)


def _block_diag(node, gy):
    return tuple(_cast_to(gy[r:r + rows, c:c + cols].reshape(shape), dtype)
                 for r, c, (rows, cols), shape, dtype in node.meta)


def _cast_to(t, dtype):
    return _in_dtype_of(t, dtype)


def _flip(node, gy):
    if node.shift is None:
        return F.Flip.apply(gy, node.axes)
    return F.Flip.apply(gy, node.axes, shift=tuple(-s for s in node.shift))


def _triangle(node, gy):
    return _where(node.meta[1], gy, 0)


def _take_along(node, gy):
    shape, repeats, squeezed = node.meta
    if squeezed is not None:
        gy = gy.unsqueeze(squeezed)
    zeros = _wrap(xp_of(gy._data).zeros(shape, dtype=gy._data.dtype))
    put = F.IndexAdd if repeats else F.SetItem  # (sort and topk pick each entry at most once)
    return put.apply(zeros, gy, index=node.saved), None


def _embedding(node, gy):
    shape, indices, padding_idx, scale = node.meta
    if scale:
        raise _refused(node, "scale_grad_by_freq")
    xp = xp_of(gy._data)
    flat = indices.reshape(-1)
    rows = gy.reshape(-1, shape[1])
    if padding_idx is not None:
        rows = rows * _const((flat != padding_idx).astype(gy._data.dtype).reshape(-1, 1))
    return F.IndexAdd.apply(_wrap(xp.zeros(shape, dtype=gy._data.dtype)), rows, index=(flat,)), None


def _nll_loss(node, gy):
    """NllLoss's gradient as one NllLossBackwardBackward0 (an edge to ``gy`` and one to the log-probabilities)."""
    shape, classes, dtype = node.meta
    rows, target, scale = node.saved
    logp = node._inputs[0] if node._inputs else None
    if logp is None:
        logp = _const(np.zeros((), dtype=dtype))
    return F.NllLossGrad.apply(gy, logp, rows=rows, target=target, scale=scale, shape=shape, classes=classes,
                               dtype=dtype), None


def _nll_loss_grad(node, g):
    """NllLossGrad's own backward in Tensor ops (third derivatives): the loss of ``g``, picked at the targets."""
    rows, target, scale = node.saved
    shape, classes, gy_shape = node.meta
    need_gy, need_logp = node.needs_input_grad[:2]
    ggy = None
    if need_gy:
        rows_g = (g.movedim(1, -1) if g.dim() > 2 else g).reshape(-1, classes)
        picked = rows_g[(_const(rows), _const(target))]
        values = -picked if scale is None else -(picked * _const(scale))
        ggy = values.reshape(*gy_shape) if len(gy_shape) else values.sum()
    return ggy, (_const(xp_of(g._data).zeros(shape, dtype=g._data.dtype)) if need_logp else None)


def _flash_attention(node, gy):
    """The CPU flash attention node's backward in Tensor ops (the weights recomputed from the inputs, so that the
    gradients reach them): where PyTorch 2.13 refuses a second derivative here, the engine gives it."""
    q, k, v, _ = node.saved
    groups, scale, dtype, mask, causal = node.meta
    need_q, need_k, need_v = node.needs_input_grad
    Q, K, V = _operand(node, 0, q), _operand(node, 1, k), _operand(node, 2, v)  # noqa: N806 - the formula's names
    if gy.dtype != Q.dtype:
        gy = gy.to(Q.dtype)
    if groups > 1:
        K, V = K.repeat_interleave(groups, 1), V.repeat_interleave(groups, 1)  # noqa: N806
    s = (Q @ K.transpose(-2, -1)) * scale
    if mask is not None:
        s = s + _const(mask)
    if causal:
        s = s.masked_fill(_const(xp_of(q).asarray(_attention.causal_hidden(s.shape[-2], s.shape[-1]))), -math.inf)
    p = F.Softmax.apply(s, 3, safe=True)

    def back(g):
        return None if g is None else g if g.dtype == dtype else g.to(dtype)

    gq = gk = gv = None
    if need_v:
        gv = _attention.sum_heads(p.transpose(-2, -1) @ gy, groups)
    if need_q or need_k:
        dp = gy @ V.transpose(-2, -1)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale
        gq = ds @ K if need_q else None
        gk = _attention.sum_heads(ds.transpose(-2, -1) @ Q, groups) if need_k else None
    return back(gq), back(gk), back(gv)


def _layer_norm(node, gy):
    xhat_saved, _, weight = node.saved
    axes, lead = node.meta
    need_x, need_w, need_b = node.needs_input_grad
    x = node._inputs[0]
    if x is not None:  # the normalised input again, from the input, so that its gradient reaches it
        centred = x - x.mean(axes, keepdim=True)
        rstd = ((centred * centred).mean(axes, keepdim=True) + node.eps).rsqrt()
        xhat = centred * rstd
    else:
        xhat = _const(xhat_saved)
    samples = tuple(range(lead))
    gx = gw = gb = None
    if need_x:
        g = gy if weight is None else gy * _operand(node, 1, weight)
        gx = rstd * (g - g.mean(axes, keepdim=True) - xhat * (g * xhat).mean(axes, keepdim=True))
    if need_w:
        gw = (gy * xhat).sum(samples) if samples else gy * xhat
    if need_b:
        gb = gy.sum(samples) if samples else gy
    return gx, gw, gb


def _lerp(node, gy):
    a, b, w = node.saved
    need_a, need_b, need_w = node.needs_input_grad
    A, B, W = _operand(node, 0, a), _operand(node, 1, b), _operand(node, 2, w)
    return (gy * (1 - W) if need_a else None, gy * W if need_b else None, gy * (B - A) if need_w else None)


def _addc_op(node, gy):
    t1, t2 = node.saved
    divide, value = node.meta
    need_a, need_1, need_2 = node.needs_input_grad
    T1, T2 = _operand(node, 1, t1), _operand(node, 2, t2)
    if divide:
        return (gy if need_a else None, gy * (value / T2) if need_1 else None,
                -gy * (value * T1 / (T2 * T2)) if need_2 else None)
    return (gy if need_a else None, gy * (T2 * value) if need_1 else None, gy * (T1 * value) if need_2 else None)


def _logsumexp(node, gy):
    x_saved, _ = node.saved
    axes, keepdim = node.meta
    x = _operand(node, 0, x_saved)
    out = x.logsumexp(axes, keepdim=True)  # the result again, from the input: a second derivative reaches it
    if not keepdim:
        for a in sorted(axes):
            gy = gy.unsqueeze(a)
    return gy * (x - out).exp()


def _constant_pad(node, gy):
    shape, crop, place = node.meta
    g = gy[place]
    back = tuple((c.start, n - c.stop) for c, n in zip(crop, shape))  # the cropped widths, padded back with 0
    return F.ConstantPad.apply(g, back, value=0.0) if any(b or a for b, a in back) else g


def _var_std(node, gy):
    """VarStd's gradient in Tensor ops, its statistics recomputed from the input (so a second derivative reaches
    it through them)."""
    x_saved, _ = node.saved
    axes, correction, keepdim, std, n = node.meta
    x = _operand(node, 0, x_saved)
    dims = tuple(range(x_saved.ndim)) if axes is None else axes
    g = gy
    if axes is not None and not keepdim:
        for a in sorted(axes):
            g = g.unsqueeze(a)
    mean = x.mean(dims, keepdim=True) if x_saved.ndim else x
    if std:
        result = x._var_std(axes, correction, True, True) if x_saved.ndim else x * 0 + _const(node.saved[1])
        zero = _const(result._data == 0)
        g = _where(zero, 0, g / (result * 2))
    dof = n - correction
    if dof <= 0 and axes is None:
        return g * _const(xp_of(x_saved).where(x_saved == x_saved.mean(), np.nan, np.inf).astype(x_saved.dtype))
    return (2.0 / dof if dof else math.inf) * g * (x - mean)


def _repeat(node, gy):
    x_shape, shape, sizes = node.meta
    split = tuple(n for r, s in zip(sizes, shape) for n in (r, s))
    return gy.reshape(split).sum(tuple(range(0, 2 * len(sizes), 2))).reshape(x_shape)


def _trace(node, gy):
    n, m = node.meta
    return gy * _const(np.eye(n, m, dtype=gy._data.dtype) if gy._data.__class__ is np.ndarray
                       else xp_of(gy._data).eye(n, m, dtype=gy._data.dtype))


def _group_norm(node, gy):
    """NativeGroupNorm's gradients in Tensor ops, the normalised input recomputed from the input (so a second
    derivative reaches it through the statistics)."""
    xhat_saved, _, weight = node.saved
    groups, eps = node.meta
    need_x, need_w, need_b = node.needs_input_grad
    n, c = xhat_saved.shape[0], xhat_saved.shape[1]
    per_channel = (1, c) + (1,) * (xhat_saved.ndim - 2)
    axes = (0,) + tuple(range(2, xhat_saved.ndim))
    x = node._inputs[0]
    if x is not None:
        xg = x.reshape(n, groups, -1)
        centred = xg - xg.mean(-1, keepdim=True)
        rstd = ((centred * centred).mean(-1, keepdim=True) + eps).rsqrt()
        xg_hat = centred * rstd
    else:
        xg_hat, rstd = _const(xhat_saved.reshape(n, groups, -1)), _const(node.saved[1])
    gx = gw = gb = None
    if need_x:
        w = None if weight is None else _operand(node, 1, weight).reshape(per_channel)
        g = (gy if w is None else gy * w).reshape(n, groups, -1)
        gx = (rstd * (g - g.mean(-1, keepdim=True) - xg_hat * (g * xg_hat).mean(-1, keepdim=True))).reshape(
            *xhat_saved.shape)
    xhat = xg_hat.reshape(*xhat_saved.shape)
    if need_w:
        gw = (gy * xhat).sum(axes)
    if need_b:
        gb = gy.sum(axes)
    return gx, gw, gb


def _batch_norm(node, gy):
    """NativeBatchNorm's gradients in Tensor ops: in training from the input's own statistics, recomputed from it
    so that the second derivative reaches it through them; else with the running ones, constants."""
    x_saved, weight = node.saved
    mean_c, invstd_c, training, eps = node.meta
    need_x, need_w, need_b = node.needs_input_grad[:3]
    shape = (1, -1) + (1,) * (x_saved.ndim - 2)
    axes = (0,) + tuple(range(2, x_saved.ndim))
    x = _operand(node, 0, x_saved)
    if training:
        centred = x - x.mean(axes, keepdim=True)
        invstd = ((centred * centred).mean(axes, keepdim=True) + eps).rsqrt()
    else:
        centred = x - _const(mean_c.reshape(shape))
        invstd = _const(invstd_c.reshape(shape))
    w = None if weight is None else _operand(node, 1, weight).reshape(shape)
    gx = gw = gb = None
    if need_x:
        g = gy if w is None else gy * w
        if training:
            gx = invstd * (g - g.mean(axes, keepdim=True)
                           - centred * invstd * invstd * (g * centred).mean(axes, keepdim=True))
        else:
            gx = g * invstd
    if need_w:
        gw = (gy * centred * invstd).sum(axes)
    if need_b:
        gb = gy.sum(axes)
    return gx, gw, gb, None, None


def _convolution(node, gy):
    cols, w2, _ = node.saved
    x_shape, pad_shape, padding, stride, dilation, kernel, out, w_shape = node.meta
    need_x, need_w, need_b = node.needs_input_grad
    groups, n, positions = w2.shape[0], x_shape[0], math.prod(out)
    gx = gw = gb = None
    if need_x:  # the transposed convolution of the gradient, then the padding cut away
        full = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in zip(out, stride, dilation, kernel))
        gpad = F.ConvTranspose.apply(gy, _operand(node, 1, w2.reshape(w_shape)), None, stride=stride,
                                     padding=(0,) * len(kernel), dilation=dilation, groups=groups,
                                     output_padding=tuple(p - f for p, f in zip(pad_shape[2:], full)))
        gx = gpad[(slice(None), slice(None)) + tuple(slice(lo, lo + size) for (lo, _), size in zip(padding,
                                                                                               x_shape[2:]))]
    if need_w:  # each output position's gradient times the window of the input it saw (im2col)
        x = node._inputs[0]
        if x is None:
            windows = _const(cols).reshape(groups, -1, n, positions).permute(2, 0, 3, 1)  # (N, g, L, C / g * K)
        else:
            even = all(lo == hi for lo, hi in padding)
            if not even:  # padding="same" with an even kernel: more on one side, padded here first
                x = _pad(x, [p for pair in reversed(padding) for p in pair])
            windows = F.Im2Col.apply(x, kernel, dilation, tuple(lo if even else 0 for lo, _ in padding),
                                     stride)  # (N, C K, L)
            windows = windows.reshape(n, groups, -1, positions).transpose(-1, -2)
        gw = (gy.reshape(n, groups, -1, positions) @ windows).sum(0).reshape(w_shape)
    if need_b:
        gb = gy.sum((0,) + tuple(range(2, gy.dim())))
    return gx, gw, gb


def _conv_transpose(node, gy):
    x2, w2, _ = node.saved
    x_shape, w_shape, pads, stride, dilation, kernel, size = node.meta
    need_x, need_w, need_b = node.needs_input_grad
    groups, n = w2.shape[0], x_shape[0]
    gx = gw = gb = None
    if need_x:  # the convolution of the gradient: a transposed convolution's input gradient
        gx = F.Convolution.apply(gy, _operand(node, 1, w2.reshape(w_shape)), None, stride=stride, padding=pads,
                                 dilation=dilation, groups=groups)
    if need_w:  # each input position times the window of the gradient it spread into
        x = node._inputs[0]
        x = _const(x2).reshape(groups, -1, n, math.prod(size)).transpose(0, 1) if x is None else \
            x.reshape(n, groups, x_shape[1] // groups, -1)  # (N, g, C_in / g, S)
        windows = F.Im2Col.apply(gy, kernel, dilation, tuple(lo for lo, _ in pads), stride)  # (N, C_out K, S)
        windows = windows.reshape(n, groups, -1, windows.shape[-1]).transpose(-1, -2)
        gw = (x @ windows).sum(0).reshape(w_shape)
    if need_b:
        gb = gy.sum((0,) + tuple(range(2, gy.dim())))
    return gx, gw, gb


class _PoolGradient(Function):
    """A pooling's gradient as a node of its own (max or average pooling's backward is linear in the gradient,
    with the windows and the places of the maxima fixed): its backward is the pooling again, at those places. A max
    pooling's also has an edge to the pooled input, whose gradient is zeros, as PyTorch's: the gradient requires
    grad where the input does, and a second derivative through it is zeros, not a refusal."""

    raw = True

    def backward_name(self):
        return self.name_of_pool[:-len("0")] + "Backward0"  # PyTorch's: MaxPool2DWithIndicesBackwardBackward0

    @staticmethod
    def forward(ctx, gy, pool, x=None):
        ctx.x_meta = None if x is None else (x.shape, x.dtype)
        ctx.name_of_pool = pool.name()
        ctx.op_label = type(pool).__name__ + "Backward"
        ctx.arg = pool.saved[0] if isinstance(pool, F.MaxPool) else None  # (kept: the pool's own may be freed)
        ctx.meta = pool.meta
        return pool.backward(pool, gy)

    @staticmethod
    def backward(ctx, ggx):
        kernel, stride, dilation, out, pads = ctx.meta[:5]
        xp = xp_of(ggx)
        padded = _conv._pad(xp, ggx, pads, 0)
        total = None
        for i, offset in enumerate(_conv._offsets(kernel)):
            v = padded[(Ellipsis,) + _conv._window(offset, dilation, stride, out)]
            if ctx.arg is not None:
                v = xp.where(ctx.arg == i, v, ggx.dtype.type(0))
            total = v.copy() if total is None else total.__iadd__(v)
        if ctx.arg is None:
            divisor = ctx.meta[6]
            total = total / (ggx.dtype.type(divisor) if isinstance(divisor, int) else divisor)
        if ctx.x_meta is None:
            return total, None
        need_x = len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]
        return total, None, (xp.zeros(*ctx.x_meta) if need_x else None)


def _pool(node, gy):
    x = node._inputs[0] if isinstance(node, F.MaxPool) else None
    if x is not None and x.requires_grad:
        return _PoolGradient.apply(gy, node, x)
    return _PoolGradient.apply(gy, node)


def _amax_min(node, gy):
    x, out = node.saved
    axes, keepdim = node.meta
    xp = xp_of(x)
    if not keepdim:
        keep = tuple(range(x.ndim)) if axes is None else axes
        out = xp.expand_dims(out, keep)
        for a in sorted(keep):
            gy = gy.unsqueeze(a)
    mask = x == out
    return gy * _const((mask / mask.sum(axis=axes, keepdims=True)).astype(x.dtype))  # ties share, as PyTorch's


def _adaptive_avg_pool(node, gy):
    nd = len(node.meta)
    g = gy
    for i, (m, lengths) in enumerate(node.meta):
        axis = gy.dim() - nd + i
        g = ((g.movedim(axis, -1) / _const(lengths)) @ _const(m)).movedim(-1, axis)
    return g


def _im2col(node, gy):
    shape, pad_shape, pads, kernel, dilation, stride, out = node.meta
    padding = tuple(lo for lo, _ in pads)
    if node.fold:  # fold's gradient is unfold's forward, and unfold's is fold's
        return F.Im2Col.apply(gy, kernel, dilation, padding, stride)
    return F.Im2Col.apply(gy, kernel, dilation, padding, stride, fold=True, output_size=tuple(shape[2:]))


def _weighted_mean(g, weight, reduction, count, shape):
    """A loss node's gradient times its weight (a constant), over the count for 'mean', one per element."""
    if g is None:
        return None
    if weight is not None:
        g = g * _const(weight)
    if reduction == "mean":
        g = g / max(count, 1)
    return g.expand(*shape) if tuple(g.shape) != tuple(shape) else g


def _binary_cross_entropy(node, gy):
    x_saved, y_saved = node.saved
    weight, reduction = node.meta
    need_x, need_y = node.needs_input_grad
    x, y = _operand(node, 0, x_saved), _operand(node, 1, y_saved)
    gx = gy * (x - y) / ((1 - x) * x).clamp(min=float(np.float32(1e-12))) if need_x else None  # PyTorch's
    gt = gy * ((1 - x).log() - x.log()) if need_y else None
    n, shape = x_saved.size, x_saved.shape
    return _weighted_mean(gx, weight, reduction, n, shape), _weighted_mean(gt, weight, reduction, n, shape)


def _bce_with_logits(node, gy):
    x_saved, y_saved = node.saved
    weight, pos_weight, reduction = node.meta
    need_x, need_y = node.needs_input_grad
    x, y = _operand(node, 0, x_saved), _operand(node, 1, y_saved)
    gx = gt = None
    if need_x:
        if pos_weight is not None:
            t = _const(pos_weight) * y
            gx = ((t + 1 - y) * x.sigmoid() - t) * gy
        else:
            gx = (x.sigmoid() - y) * gy
    if need_y:
        if pos_weight is not None:
            log_sig = functools.partial(F.Unary.apply, op="log_sigmoid")
            gt = (log_sig(-x) - log_sig(x) * _const(pos_weight)) * gy
        else:
            gt = -x * gy
    n, shape = x_saved.size, x_saved.shape
    return _weighted_mean(gx, weight, reduction, n, shape), _weighted_mean(gt, weight, reduction, n, shape)


def _regression_loss(node, gy):
    a_saved, b_saved = node.saved
    op, param, reduction = node.meta
    need_a, need_b = node.needs_input_grad
    x = _operand(node, 0, a_saved) - _operand(node, 1, b_saved)
    norm = 1.0 / max(a_saved.size, 1) if reduction == "mean" else 1.0
    lo, hi = _const(x._data <= -param), _const(x._data >= param)
    inner = norm * x * gy / param if op == "smooth_l1" else norm * x * gy
    edge = norm * gy if op == "smooth_l1" else norm * gy * param
    g = _where(lo, -edge, _where(hi, edge, inner))
    return (g if need_a else None), (-g if need_b else None)


def _einsum(node, gy):
    arrays = node.saved
    lhs, out = node.meta.split("->")
    subs = lhs.split(",")
    operands = [_operand(node, i, a) for i, a in enumerate(arrays)]
    grads = []
    for k, (a, sub) in enumerate(zip(arrays, subs)):
        if not node.needs_input_grad[k]:
            grads.append(None)
            continue
        others = [(s, operands[i]) for i, s in enumerate(subs) if i != k]
        seen = set(out).union(*(set(s) for s, _ in others))
        unique = "".join(dict.fromkeys(sub))
        kept = "".join(c for c in unique if c in seen)
        g = F.Einsum.apply(gy, *[t for _, t in others], equation=",".join([out] + [s for s, _ in others]) + "->" + kept)
        size = {c: n for c, n in zip(sub, a.shape)}
        if kept != unique:  # summed within this operand alone: the same gradient along those subscripts
            g = g.reshape([size[c] if c in kept else 1 for c in unique]).expand(*[size[c] for c in unique])
        if unique != sub:  # a repeated subscript: on that diagonal, zero off it
            g = g.reshape([size[c] if sub.index(c) == p else 1 for p, c in enumerate(sub)]).expand(*a.shape)
            xp = xp_of(a)
            for p, c in enumerate(sub):
                first = sub.index(c)
                if first != p:
                    g = g * _const(xp.eye(size[c], dtype=a.dtype).reshape(
                        [size[c] if q in (first, p) else 1 for q in range(len(sub))]))
        grads.append(g)
    return tuple(grads)


def _write_view(node, gy):
    """The write of an in-place op into a view (PyTorch's CopySlices): the region's gradient to the op's result,
    the rest to the base as it was; the region by position, a constant."""
    xp = xp_of(gy._data)
    where = F.shape.written_places(gy._data.shape, node.steps, xp)
    keep = xp.ones(gy._data.size, dtype=bool)
    keep[where.reshape(-1)] = False
    return _where(keep.reshape(gy._data.shape), gy, 0.0), gy.reshape(-1)[_wrap(where)]


def _prod(node, gy):
    """Each element's gradient, the product of the others along the axis, as a product of the new graph: the
    elements in ``n`` rows, each with its own place set to 1 (exact where one is 0; the rows are n x n, so an axis
    past 2048 elements is refused)."""
    x = node._inputs[0]
    dim, keepdim = node.dim, node.keepdim
    if x._data.size == 0 or x._data.ndim == 0:
        return gy * _const(xp_of(x._data).ones_like(x._data))
    moved = x.reshape(-1) if dim is None else x.movedim(dim, -1)
    n = moved.shape[-1]
    if n > 2048:
        raise _refused(node, f"a product over {n} elements")
    xp = xp_of(x._data)
    rows = moved.unsqueeze(-2).expand(*moved.shape[:-1], n, n)
    others = rows.where(_const(~xp.eye(n, dtype=bool)), 1.0).prod(-1)
    if dim is None:
        return (gy * others).reshape(*x.shape)
    if not keepdim:
        gy = gy.unsqueeze(dim)
    return gy * others.movedim(-1, dim)


def _cumprod(node, gy):
    """The first-order recurrence (``prod(x[:i]) * S_i``, ``S_i = g_i + x_{i+1} S_{i+1}``: exact through zeros) in
    the new graph's ops, one step an element along the axis."""
    dim = node.meta
    x = node._inputs[0].movedim(dim, -1)
    g = gy.movedim(dim, -1)
    n = x.shape[-1]
    if n == 0:
        return gy * 0
    before = F.Cat.apply(x.new_ones(*x.shape[:-1], 1), x[..., :-1].cumprod(-1), dim=-1)
    s = [g[..., n - 1]]
    for i in range(n - 2, -1, -1):
        s.append(g[..., i] + x[..., i + 1] * s[-1])
    return (before * F.Stack.apply(*s[::-1], dim=-1)).movedim(-1, dim)


def _inverse(node, gy):
    """``-A^-T G A^-T``, the inverse recomputed as a node of the new graph."""
    inv_t = F.Inverse.apply(node._inputs[0]).mT
    return -(inv_t @ gy @ inv_t)


def _det(node, gy):
    """``g det(A) A^-T`` (an invertible A: the adjugate of a singular one is refused, where the first-order pass
    takes it from the SVD)."""
    a = node._inputs[0]
    det = F.Det.apply(a)
    return (gy * det)[..., None, None] * F.Inverse.apply(a).mT


def _log_abs_det(node, g_sign, g_logabs):
    """``g A^-H``, a complex A's sign adding ``-i Im(conj(g_sign) sign)`` to g (LogAbsDet.backward's)."""
    a = node._inputs[0]
    g = g_logabs
    if a.is_complex() and g_sign is not None:
        sign = F.LogAbsDet.apply(a)[0]
        g = g - 1j * (g_sign.conj() * sign).imag
    return g[..., None, None] * F.Inverse.apply(a).mT.conj()


def _solve(node, gy):
    """``gB = A^-T G``, ``gA = -gB X^T``, in solves of the new graph."""
    a, b = node._inputs[0], node._inputs[1]
    vector = node.vector
    x = F.Solve.apply(a, b, vector=vector)
    gb = F.Solve.apply(a.mT, gy, vector=vector)
    need_a, need_b = node.needs_input_grad
    ga = None
    if need_a:
        ga = -(gb.unsqueeze(-1) @ x.unsqueeze(-2)) if vector else -(gb @ x.mT)
    return ga, (gb if need_b else None)


# ---------------------------------------------------------------------------- complex numbers' own ops

def _view_as_real(node, gy):
    return F.complex_ops.ViewAsComplex.apply(gy.contiguous())


def _view_as_complex(node, gy):
    return F.complex_ops.ViewAsReal.apply(gy)


def _complex(node, gy):
    need_re, need_im = node.needs_input_grad
    return (gy.real if need_re else None), (gy.imag if need_im else None)


def _polar(node, gy):
    theta = node._inputs[1]
    cos, sin = (theta.cos(), theta.sin()) if theta is not None else (_wrap(a) for a in node.saved[:2])
    rr = _operand(node, 0, node.saved[3])
    need_r, need_theta = node.needs_input_grad
    g_r = gy.real * cos + gy.imag * sin if need_r else None
    g_theta = (gy.imag * (rr * cos) - gy.real * (rr * sin)) if need_theta else None
    return g_r, g_theta


def _conj_rule(node, gy):
    return _conj(gy)


def _angle(node, gy):
    z = _operand(node, 0, node.saved[0])
    zero = _const(node.saved[0] == 0)
    m2 = z.abs() ** 2
    return _where(zero, 0, (gy / _where(zero, 1, m2)) * (z * 1j))


def _sgn(node, gy):
    z = _operand(node, 0, None) if node._inputs[0] is not None else None
    a, s = node.saved
    zero = _const(a == 0)
    if z is not None:
        s, a = z.sgn(), z.abs()
    else:
        s, a = _wrap(s), _wrap(a)
    return _where(zero, 0, (gy - _conj(gy) * (s * s)) / (2 * _where(zero, 1, a)))


def _fft(node, gy):
    """A transform's adjoint, recorded: the same transforms as the first walk's (functions/spectral.py), on
    Tensors."""
    axes, norm = node.axes, _spectral.DUAL_NORM[node.norm]
    if node.kind == "c2c":
        g = F.FFT.apply(gy, kind="c2c", sizes=None, axes=axes, norm=norm, forward=not node.forward)
    elif node.kind == "r2c":
        last = axes[-1]
        full = list(gy.shape)
        full[last] = node.last if node.last is not None else node.in_shape[last]
        g = F.FFT.apply(_resized(gy, full, (last,)), kind="c2c", sizes=None, axes=axes, norm=norm,
                        forward=False).real
    else:
        g = F.FFT.apply(gy, kind="r2c", sizes=None, axes=axes, norm=norm)
        last, n = axes[-1], gy.shape[axes[-1]]
        doubled = n - g.shape[last]
        if doubled > 0:
            weights = xp_of(g._data).ones(g.shape[last], dtype=gy._data.dtype)
            weights[1:1 + doubled] = 2
            g = g * _const(weights.reshape((-1,) + (1,) * (g.dim() - 1 - last)))
    return _resized(g, node.in_shape, axes)


def _resized(g, shape, axes):
    """:func:`engine.functions.spectral.resized` in recorded ops: cut (a slice) or padded with zeros (a cat)."""
    for axis in axes:
        have, want = g.shape[axis], shape[axis]
        if have > want:
            g = g[(slice(None),) * axis + (slice(0, want),)]
        elif have < want:
            zeros = list(g.shape)
            zeros[axis] = want - have
            g = F.Cat.apply(g, _const(xp_of(g._data).zeros(tuple(zeros), dtype=g._data.dtype)), dim=axis)
    return g


DOUBLE = {
    F.Activation: _activation, F.Glu: _glu, F.NativeBatchNorm: _batch_norm, F.VarStd: _var_std, F.Add: _add,
    F.ConstantPad: _constant_pad, F.Logsumexp: _logsumexp, F.Lerp: _lerp, F.AddcOp: _addc_op,
    F.NativeGroupNorm: _group_norm, F.Repeat: _repeat, F.Trace: _trace,
    F.AddScaled: _add_scaled, F.Addmm: _addmm, F.MseLoss: _mse_loss, F.RegressionLoss: _regression_loss,
    F.BinaryCrossEntropyWithLogits: _bce_with_logits,
    F.Sub: _sub, F.Mul: _mul, F.Div: _div, F.Pow: _pow, F.Neg: _neg, F.MatMul: _matmul,
    F.Exp: _exp, F.Log: _log, F.Sin: _sin, F.Cos: _cos, F.Abs: _abs, F.Sqrt: _sqrt, F.Sigmoid: _sigmoid,
    F.Tanh: _tanh, F.ReLU: _relu, F.Clamp: _clamp, F.ClampTensors: _clamp_tensors, F.Maximum: _maximum,
    F.Where: _where_backward,
    F.Rounding: _rounding, F.DivRounded: _div_rounded, F.NotImplementedDerivative: _not_implemented,
    F.Gelu: _gelu, F.Unary: _unary, F.Binary: _binary,
    F.Sum: _sum, F.Mean: _mean, F.MaxMin: _max_min, F.MaxMinDim: _max_min_dim, F.Softmax: _softmax,
    F.VectorNorm: _vector_norm,
    F.Reshape: _reshape, F.Transpose: _transpose, F.Permute: _permute, F.Diagonal: _diagonal, F.Expand: _identity,
    F.Clone: _identity, F.AsStrided: _as_strided,
    F.GetItem: _get_item, F.SetItem: _set_item, F.IndexAdd: _index_add, F.Cat: _cat, F.Stack: _stack, F.Split: _split,
    F.Resample: _resample, F.Pad: _pad_map,
    F.Cast: _cast, F.ToDevice: _to_device, F.Cumsum: _cumsum, F.Flip: _flip, F.Triangle: _triangle,
    F.TakeAlong: _take_along, F.Embedding: _embedding, F.NllLoss: _nll_loss, F.NllLossGrad: _nll_loss_grad,
    F.NativeLayerNorm: _layer_norm, F.Convolution: _convolution, F.ConvTranspose: _conv_transpose,
    F.MaxPool: _pool, F.AvgPool: _pool, F.AdaptiveAvgPool: _adaptive_avg_pool, F.Im2Col: _im2col,
    F.AdaptiveMaxPool: _adaptive_max_pool, F.VarMean: _var_mean, F.AMinMax: _aminmax, F.DiagEmbed: _diag_embed,
    F.Take: _take,
    F.AMaxMin: _amax_min, F.BinaryCrossEntropy: _binary_cross_entropy, F.Einsum: _einsum, F.WriteView: _write_view,
    F.Inverse: _inverse, F.Det: _det, F.LogAbsDet: _log_abs_det, F.Solve: _solve, F.Prod: _prod,
    F.Cumprod: _cumprod, PiecewiseGrad: _piecewise_grad, F.Nansum: _nansum, F.LogCumSumExp: _logcumsumexp,
    F.Cross: _cross, F.AddProduct: _add_product, F.Rearrange: _rearrange, F.BlockDiag: _block_diag,
    F.Prelu: _prelu, F.Dist: _dist, F.Cdist: _cdist, F.EuclideanDist: _euclidean_dist, F.Pdist: _pdist,
    F.CopyFrom: _copy_from, F.SoftMarginLoss: _soft_margin_loss,
    F.MultiMarginLoss: _margin_loss_refused("aten::multi_margin_loss_backward"),
    F.MultilabelMarginLoss: _margin_loss_refused("aten::multilabel_margin_loss_backward"), F.Renorm: _renorm,
    F.AffineGrid: _affine_grid, F.MaxUnpool: _max_unpool, F.Trilinear: _trilinear,
    F.MaskedScatter: _masked_scatter, F.Put: _put, F.FlashAttentionCpu: _flash_attention, OutputGrad: _output_grad,
    SmoothGrad: _smooth_grad,
    F.complex_ops.ViewAsReal: _view_as_real, F.complex_ops.ViewAsComplex: _view_as_complex,
    F.complex_ops.Complex: _complex, F.complex_ops.Polar: _polar, F.complex_ops.Conj: _conj_rule,
    F.complex_ops.Angle: _angle, F.complex_ops.Sgn: _sgn, F.FFT: _fft,
}


# The entries above whose formula reads the node's inputs as the Tensors they are now (to stay connected to them),
# not only what the node saved: an in-place op since the forward (x += 1 rebinds x) would change what they read
_READS_INPUTS = frozenset({
    F.Mul, F.Div, F.Pow, F.MatMul, F.Exp, F.Log, F.Sin, F.Cos, F.Sqrt, F.Sigmoid, F.Tanh, F.Gelu, F.Unary, F.Binary,
    F.Softmax, F.VectorNorm, F.NativeLayerNorm, F.Convolution, F.ConvTranspose, F.BinaryCrossEntropy, F.Einsum,
    F.Activation, F.Addmm, F.MseLoss, F.NativeBatchNorm, F.RegressionLoss, F.BinaryCrossEntropyWithLogits, F.VarStd,
    F.VarMean,
    F.Logsumexp, F.Lerp, F.AddcOp, F.NativeGroupNorm, F.Abs, F.LogCumSumExp, F.Cross,
    F.AddProduct, F.Prelu, F.Dist, F.Cdist, F.EuclideanDist, F.Pdist, F.Renorm, F.Trilinear, F.FlashAttentionCpu,
    F.complex_ops.Polar, F.complex_ops.Angle, F.complex_ops.Sgn,
})


def _check_writes(node):
    """As the first-order walk refuses a node whose saved values were written in place since its forward; and,
    since this walk reads a node's inputs again, one whose inputs were (PyTorch's double backward reads saved
    values instead, so it refuses less, but a value read here after a write would be silently wrong)."""
    _graph._check_writes(node)
    if type(node) not in _READS_INPUTS:
        return
    seq = node._seq
    for t in node._inputs:
        if t is not None and (t._rebound_at > seq or _writes.written_after(t._data, seq)):
            raise RuntimeError(_graph.modified_message(node, t._data, "reads again for create_graph=True"))


def _refused(node, what: str | None = None) -> NotImplementedError:
    covered = ", ".join(sorted({fn.__name__.lstrip("_") for fn in DOUBLE.values()}))
    part = f"{node.name()} ({what})" if what else node.name()
    return NotImplementedError(
        f"create_graph=True: the engine has no differentiable backward for {part}; higher-order gradients cover "
        f"{covered}, and a user's own Function whose backward is written in Tensor ops")


# ---------------------------------------------------------------------------- the walk

_constants_seen: dict = {}  # thread id -> the lists of its open constants_from_user_functions() blocks


@contextlib.contextmanager
def constants_from_user_functions():
    """A list, filled while the block runs, of the user Functions whose backward gave a gradient that is a constant
    of the recorded graph though a gradient it was given is not (a backward that computes in NumPy, or under
    no_grad): that gradient is right, but differentiating it again misses that Function's part. (PyTorch treats it
    as a constant too; autograd.functional.jvp's double-backward trick asks, and takes the Jacobian instead.)"""
    seen: list = []
    me = get_ident()
    _constants_seen.setdefault(me, []).append(seen)
    try:
        yield seen
    finally:
        blocks = _constants_seen[me]
        blocks.pop()  # (this block's: blocks nest)
        if not blocks:
            del _constants_seen[me]


def _node_backward(node, gouts):
    """One node's backward in Tensor ops: a tuple of Tensors (or None), one per input."""
    if node._freed:
        raise RuntimeError(FREED_GRAPH)
    if not node.raw:  # a user's Function: its backward, with grad mode on (this walk runs under enable_grad)
        gins = node.backward(node, *gouts)
        if not isinstance(gins, tuple):
            gins = (gins,)
        n = len(node._inputs)
        if len(gins) > n and all(g is None for g in gins[n:]):
            gins = gins[:n]
        if len(gins) != n:
            raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(gins)})")
        gins = tuple(g if g is None or isinstance(g, Tensor) else _const(g) for g in gins)
        if _constants_seen and any(g is not None and not g._rg for g in gins) and any(
                g is not None and g._rg for g in gouts):
            for seen in _constants_seen.get(get_ident(), ()):  # (see constants_from_user_functions)
                seen.append(node)
        return gins
    rule = DOUBLE.get(type(node))
    if rule is None:
        raise _refused(node)
    # a complex gradient through a complex-analytic op: its real rule on the conjugate, conjugated (as the first
    # walk's autograd.function.holomorphic, here in recorded ops)
    conjugated = getattr(type(node).backward, "holomorphic", False) and any(
        g is not None and g._data.dtype.kind == "c" for g in gouts)
    if conjugated:
        gouts = [_conj(g) for g in gouts]
    me = get_ident()
    nested = me in _tensor._aten_scalars
    _tensor._aten_scalars.add(me)  # (a number in the rule's arithmetic is a Scalar, as in derivatives.yaml)
    try:
        gins = rule(node, *gouts)
    finally:
        if not nested:
            _tensor._aten_scalars.discard(me)
    gins = gins if gins.__class__ is tuple else (gins,)
    return tuple(_conj(g) for g in gins) if conjugated else gins


def _conj(g):
    return F.complex_ops.Conj.apply(g) if g is not None and g._data.dtype.kind == "c" else g


def _post_hooked(node, gins, gouts):
    """The node's register_hook() hooks on (grad_inputs, grad_outputs), each gradient of its input's shape."""
    edges = _graph.edge_gradients(node, gins)
    grads = []
    for _, inp, g in edges:
        if inp is not None and g is not None and tuple(g.shape) != tuple(inp._data.shape):
            g = _graph.unbroadcast(g, inp._data.shape)
        grads.append(None if inp is None else g)
    grads = tuple(grads)
    for hook in list(node._post_hooks.values()):
        result = hook(grads, tuple(gouts))
        if result is not None:
            grads = _graph.hook_result(hook, result, len(grads))
    return _graph.by_position(node, edges, grads, gins)


def _add_to(table, key, g):
    prev = table.get(key)
    table[key] = g if prev is None else prev + g


def run(roots, root_grads, retain_graph, capture=None):
    """The walk of :func:`engine.autograd.graph._run` with Tensor gradients, recorded: into the leaves' ``.grad``
    (which then have a ``grad_fn``) or, with ``capture`` (id -> None of the wanted tensors, and ``"__targets__"``),
    into ``capture`` as Tensors."""
    with enable_grad():
        _walk(roots, root_grads, retain_graph, capture)


def _walk(roots, root_grads, retain_graph, capture):
    pending: dict = {}
    heap: list = []
    leaves: dict = {}  # id -> (leaf, summed gradient): hooks see the sum, then it goes to .grad
    wanted_nodes: dict = {}
    if capture is not None:
        for t in capture.pop("__targets__", ()):
            wanted_nodes.setdefault(t.grad_fn, []).append(t)

    def arrive(t, g):
        node = t.grad_fn
        if node is None:
            if capture is not None:
                if id(t) in capture:
                    _add_to(capture, id(t), g)
            elif t._rg:
                prev = leaves.get(id(t))
                leaves[id(t)] = (t, g if prev is None else prev[1] + g)
            return
        if node not in pending:
            heappush(heap, (-node._seq, node))
            pending[node] = [None] * node._n_out
        slots = pending[node]
        i = t._out_index
        slots[i] = g if slots[i] is None else slots[i] + g

    for t, g in zip(roots, root_grads):
        arrive(t, g)
    masks = _graph.edge_masks(roots, capture, wanted_nodes) if capture is not None else None
    while heap:
        node = heappop(heap)[1]
        gouts = pending.pop(node)
        if masks is not None:
            mask = masks.get(node)
            if mask is None:  # no wanted tensor lies behind it
                continue
        if node._hooks:
            for index, table in node._hooks.items():
                if table and gouts[index] is not None:
                    gouts[index] = _graph.run_hooks(table, gouts[index])
        if node._retained is not None and capture is None:
            for index, ref in node._retained.items():
                t = ref()
                if t is not None and gouts[index] is not None:
                    t.grad = gouts[index] if t.grad is None else t.grad + gouts[index]
        for t in wanted_nodes.get(node, ()):
            if gouts[t._out_index] is not None:
                _add_to(capture, id(t), gouts[t._out_index])
        if masks is not None and not mask:
            continue  # (a wanted non-leaf's node, with nothing wanted behind it)
        for i, g in enumerate(gouts):
            if g is None:  # an output no path used: zeros of its shape
                shape, np_dtype, xp = node._out_meta[i]
                gouts[i] = _wrap(xp.zeros(shape, dtype=np_dtype))
        if node._seq < _writes.last:
            _check_writes(node)
        observer = _graph._observer  # a profile() block's recorder: the node's recorded backward is one row
        anomaly = _graph._anomaly  # (anomaly detection's check, while it is on: engine.autograd.anomaly_mode)
        run = _node_backward if anomaly is None else functools.partial(anomaly, run=_node_backward)
        if masks is not None:
            run = functools.partial(_graph.with_mask, mask=mask, run=run)
        if node._pre_hooks:  # the node's own hooks, on Tensors that record
            for hook in list(node._pre_hooks.values()):
                result = hook(tuple(gouts))
                if result is not None:
                    gouts = list(_graph.hook_result(hook, result, len(gouts)))
        if observer is None:
            gins = run(node, gouts)
        else:
            token = observer.node_begin(node)
            try:
                gins = run(node, gouts)
            finally:
                observer.node_end(node, token)
        if node._post_hooks:
            gins = _post_hooked(node, gins, gouts)
        for k, (inp, g) in enumerate(zip(node._inputs, gins)):
            if inp is None or g is None or (masks is not None and not mask[k]):
                continue
            inp = inp._as_it_was(node._seq)  # where an in-place op has rebound it since, as it was then
            if tuple(g.shape) != tuple(inp._data.shape):
                g = _graph.unbroadcast(g, inp._data.shape)  # the walk's one, on a Tensor: recorded
            if g._data.dtype != inp._data.dtype:
                g = _in_dtype_of(g, inp._data.dtype)
            arrive(inp, g)
        if not retain_graph:
            if node.saved is not None:
                node._freed = True
                node.saved = None
            if not node.raw and node._saved:
                node._freed = True
                node._saved = ()
    given = {id(g) for g in root_grads}
    for leaf, g in leaves.values():
        table = leaf.__dict__.get("_grad_hooks")
        if table:
            g = _graph.run_hooks(table, g)
        existing = leaf._grad
        if existing is None or existing.__class__ is _LazyZeros:
            # .grad is a tensor of its own: not a root's gradient, nor the one another leaf got (Add gives both
            # of its inputs the same gradient), whatever is later done to it in place
            leaf._grad = g.clone() if id(g) in given else g
            given.add(id(g))
        else:
            leaf._grad = existing + g  # out of place, as PyTorch accumulates a recorded gradient
        _graph.run_post_accumulate(leaf)


_graph._create_walk = run
