"""Arithmetic: + - * / ** neg and the matrix product. Scalars may stand on either side."""

from __future__ import annotations

from math import prod as _prod

import numpy as np

from .. import _capture, _cublas
from .. import kernels as _kernels
from .. import threads as _threads
from ..autograd.function import Function, holomorphic
from ..backend import xp_of
from ..dtypes import from_numpy_dtype, promote
from ..errors import expanded_shape, product_dtypes_error, raise_broadcast_error, same_dtype_error, shapes_error


class Add(Function):
    raw = True
    complex_ok = True
    backward_name = "AddBackward0"
    scalar_edges = True  # a number is an edge: PyTorch wraps it in a tensor (Function.nondiff)

    @staticmethod
    def forward(ctx, a, b):
        if a.__class__ is not b.__class__ or a.dtype is not b.dtype:  # else promote would keep them as they are
            a, b = promote(a, b)
        return a + b

    @staticmethod
    def backward(ctx, gy):
        return gy, gy


class Sub(Function):
    raw = True
    complex_ok = True
    backward_name = "SubBackward0"
    scalar_edges = True

    @staticmethod
    def forward(ctx, a, b):
        if a.__class__ is not b.__class__ or a.dtype is not b.dtype:  # else promote would keep them as they are
            a, b = promote(a, b)
        return a - b

    @staticmethod
    def backward(ctx, gy):
        return gy, (-gy if ctx.needs_input_grad[1] else None)


class Mul(Function):
    raw = True
    complex_ok = True
    backward_name = "MulBackward0"
    scalar_edges = True
    saved_uses = ((1,), (0,))  # a is read for b's gradient, b for a's

    @staticmethod
    def forward(ctx, a, b):
        if a.__class__ is not b.__class__ or a.dtype is not b.dtype:  # else promote would keep them as they are
            a, b = promote(a, b)
        ctx.saved = (a, b)
        return a * b

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        return (gy * b if need_a else None), (gy * a if need_b else None)


class Div(Function):
    raw = True
    complex_ok = True
    backward_name = "DivBackward0"
    scalar_edges = True
    saved_uses = ((1,), None)  # a is read for b's gradient only

    @staticmethod
    def forward(ctx, a, b):
        a, b = promote(a, b, true_divide=True)
        ctx.saved = (a, b)
        return a / b

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        ga = gy / b if need_a else None
        gb = -gy * ((a / b) / b) if need_b else None  # (derivatives.yaml's order: PyTorch's bits)
        return ga, gb


class DivRounded(Function):
    """``div`` of floats with ``rounding_mode`` (``"trunc"``: the quotient truncated; ``"floor"``: Python's floor
    division, ``1.0 // 0.1`` is 9, where ``floor(1.0 / 0.1)`` is 10), one node as PyTorch's ``DivBackward2``: the
    result is piecewise constant, so both gradients are zeros, as PyTorch's."""

    raw = True
    backward_name = "DivBackward2"
    scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, mode):
        a, b = promote(a, b, true_divide=True)
        xp = xp_of(a) if hasattr(a, "dtype") else xp_of(b)
        ctx.saved = None
        if mode == "trunc":
            return xp.trunc(a / b)
        return xp.floor_divide(a, b)

    @staticmethod
    def backward(ctx, gy):
        zeros = xp_of(gy).zeros_like(gy)
        need_a, need_b = ctx.needs_input_grad
        return (zeros if need_a else None), (zeros if need_b else None)


class NotImplementedDerivative(Function):
    """An op PyTorch records without a derivative (``//`` of floats that require grad): its result, ``value``,
    made by one node named as PyTorch's (``torch::autograd::NotImplemented``), an edge for each input that requires
    grad, whose backward refuses in PyTorch's words ("derivative for aten::floor_divide is not implemented")."""

    raw = True
    backward_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, b, value, op):
        ctx.op = op
        ctx.saved = None
        return value

    @staticmethod
    def backward(ctx, gy):
        raise RuntimeError(f"derivative for {ctx.op} is not implemented")

    def _edge_positions(self):
        return tuple(i for i, t in enumerate(self._inputs) if t is not None)


class AddScaled(Function):
    """``a.add(b, alpha=k)`` and ``a.sub(b, alpha=k)``: ``a + k * b`` (``a - k * b``), one node as PyTorch's
    ``AddBackward0`` (``SubBackward0``) with the two operands as its edges; ``b``'s gradient is ``k`` times (minus
    ``k`` times) the output's. The values are those of ``b * k`` then the sum, in their result dtypes."""

    raw = True
    complex_ok = True
    edge_args = 2  # a and b (a number b included); alpha is a Scalar argument of PyTorch's schema

    def backward_name(self):
        return "SubBackward0" if self.meta[1] else "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha, subtract=False):
        if hasattr(b, "dtype"):
            b = Mul.forward(ctx, b, alpha)
        else:
            b = b * alpha
        ctx.saved = None
        ctx.meta = (alpha, subtract)
        ctx.op_label = "Sub" if subtract else "Add"
        return Sub.forward(ctx, a, b) if subtract else Add.forward(ctx, a, b)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        alpha, subtract = ctx.meta
        need_b = ctx.needs_input_grad[1]
        return gy, ((gy * -alpha if subtract else gy * alpha) if need_b else None)


def _promote3(a, b, c):
    """Three operands in their result dtype (numbers stay numbers), as PyTorch's ternary ops promote."""
    a, b = promote(a, b)
    if hasattr(c, "dtype"):
        a, c = promote(a, c)
        b, c = promote(b, c)
        a, b = promote(a, b)
    return a, b, c


class Lerp(Function):
    """``lerp(self, end, weight)``, one node as PyTorch's (``LerpBackward0`` with a number weight, ``...1`` with a
    tensor one, an edge of its own), ATen's formula: ``self + weight * (end - self)`` where ``|weight| < 0.5``,
    else ``end - (end - self) * (1 - weight)`` (exact at weight 1); gradients ``grad * (1 - weight)``, ``grad *
    weight`` and ``grad * (end - self)``."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return "LerpBackward1" if self.meta else "LerpBackward0"

    @staticmethod
    def forward(ctx, a, b, w):
        a, b, w = _promote3(a, b, w)
        xp = xp_of(a if hasattr(a, "dtype") else b)
        ctx.meta = hasattr(w, "dtype")
        ctx.saved = (a, b, w)
        diff = b - a
        if ctx.meta:
            return xp.where(abs(w) < 0.5, a + w * diff, b - diff * (1 - w))
        return a + w * diff if abs(w) < 0.5 else b - diff * (1 - w)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b, w = ctx.saved
        need_a, need_b, need_w = ctx.needs_input_grad
        return (gy * (1 - w) if need_a else None, gy * w if need_b else None,
                gy * (b - a) if need_w else None)


class AddcOp(Function):
    """``addcmul`` (``self + value * t1 * t2``) and ``addcdiv`` (``self + value * t1 / t2``), one node each as
    PyTorch's ``AddcmulBackward0`` / ``AddcdivBackward0``, in ATen's order of operations, with its gradients:
    ``grad``; ``grad * (t2 * value)`` and ``grad * (t1 * value)``; ``grad * (value / t2)`` and ``-grad * (value * t1
    / (t2 * t2))``."""

    raw = True
    complex_ok = True
    edge_args = 3

    def backward_name(self):
        return "AddcdivBackward0" if self.meta[0] else "AddcmulBackward0"

    @staticmethod
    def forward(ctx, a, t1, t2, value=1, divide=False):
        a, t1, t2 = _promote3(a, t1, t2)
        ctx.saved = (t1, t2)
        ctx.meta = (divide, value)
        ctx.op_label = "Addcdiv" if divide else "Addcmul"  # the graph panel's and the profile's name
        return a + value * t1 / t2 if divide else a + value * t1 * t2

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        t1, t2 = ctx.saved
        divide, value = ctx.meta
        need_a, need_1, need_2 = ctx.needs_input_grad
        if divide:
            return (gy if need_a else None, gy * (value / t2) if need_1 else None,
                    -gy * (value * t1 / (t2 * t2)) if need_2 else None)
        return (gy if need_a else None, gy * (t2 * value) if need_1 else None, gy * (t1 * value) if need_2 else None)


def power(a, b):
    """``a ** b`` of arrays or numbers in their result dtype, as PyTorch's: an integer base to a negative integer
    power in an array is C's (1 for a base of 1, -1 or 1 for -1, else 0), where NumPy refuses; to a negative Python
    int, refused as PyTorch refuses it."""
    db = getattr(b, "dtype", None)
    if (db == np.bool_ or b.__class__ is bool) and (getattr(a, "dtype", None) == np.bool_ or a.__class__ is bool):
        if db is not None or a.__class__ is bool:  # (a bool tensor to a Python bool's power stays bool; PyTorch
            raise NotImplementedError('"pow" not implemented for \'Bool\'')  # has no kernel for the others)
        return a.copy() if b else xp_of(a).ones_like(a)
    if db is not None and db.kind == "i" and getattr(a, "dtype", np.dtype(np.int64)).kind in "iu":
        xp = xp_of(b)
        negative = b < 0
        out = a ** xp.where(negative, 0, b)
        odd = (b % 2).astype(bool)
        at_negative = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0)).astype(out.dtype)
        return xp.where(negative, at_negative, out)
    if b.__class__ is int and b < 0 and getattr(a, "dtype", np.dtype(np.float64)).kind in "iu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return a ** b


class Pow(Function):
    raw = True
    complex_ok = True
    saved_uses = (None, (0,), (1,))  # the output is read for the exponent's gradient only
    number_exponent = True  # False where the exponent is an array (the name must outlive .saved, freed by backward)

    def backward_name(self):  # a Python number as the exponent; else a tensor (Tensor.__rpow__ names a number base)
        return "PowBackward0" if self.number_exponent else "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        if b.__class__ not in (int, float):
            ctx.number_exponent = False
        # a float array to a Python number's power keeps its dtype, as promote would say
        if not (a.__class__ is np.ndarray and b.__class__ in (int, float) and a.dtype.kind == "f"):
            a, b = promote(a, b)
        try:
            out = a * a if (b.__class__ in (int, float) and b == 2) else power(a, b)
        except ValueError as error:
            raise_broadcast_error(a, b, error)
        ctx.saved = (a, b, out)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b, out = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        ga = gb = None
        if need_a:  # (0 where the exponent is 0, as PyTorch's: not 0 * 0 ** -1, a NaN at a zero base)
            if b.__class__ in (int, float):
                # a + a: 2 * a exactly, and faster; one fused kernel on a GPU
                ga = (_kernels.pow2_backward(gy, a) if b == 2 else xp_of(gy).zeros_like(gy) if b == 0 else
                      gy * (b * a ** (b - 1)))
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    ga = xp_of(gy).where(b == 0, gy.dtype.type(0), gy * b * a ** (b - 1))
        if need_b:  # (0 where the base is 0 and the exponent not negative, as PyTorch's: not 0 * log 0)
            xp = xp_of(out)
            with np.errstate(divide="ignore", invalid="ignore"):
                gb = gy * out * xp.log(a)
            gb = xp.where((a == 0) & (b >= 0), gy.dtype.type(0), gb)
        return ga, gb


class Neg(Function):
    raw = True
    complex_ok = True
    backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, gy):
        return -gy


def dot2(a, b):
    """The 2-D product ``a.dot(b)``; on a GPU while a CUDA graph captures, cuBLAS called so that it is captured
    (CuPy's own product refuses to run then; engine/cuda_graphs.py)."""
    if _capture.count and a.__class__ is b.__class__ and a.__class__ is not np.ndarray:
        return _cublas.matmul(a, b)
    return a.dot(b)


# the product a MatMul node is (Tensor._matmul records matmul's other dimensions as PyTorch's views and these)
_PRODUCT_NAMES = {(2, 2): "MmBackward0", (1, 1): "DotBackward0", (2, 1): "MvBackward0", (3, 3): "BmmBackward0"}


class MatMul(Function):
    """``a @ b`` with NumPy's rules: 1-D operands, and broadcast batch dimensions."""

    raw = True
    complex_ok = True
    dims = (2, 2)  # the operands' dimensions where they are not both 2 (the name must outlive .saved)
    saved_uses = ((1,), (0,))  # a is read for b's gradient, b for a's

    def backward_name(self):
        """The product PyTorch's node names for these dimensions: ``mm``, ``dot``, ``mv`` or ``bmm``."""
        return _PRODUCT_NAMES.get(self.dims, "MatMulBackward")

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype != b.dtype:  # (PyTorch's mm refuses the shapes first)
            if a.ndim == 2 and b.ndim == 2 and a.shape[1] != b.shape[0]:
                raise shapes_error(a, b)
            raise product_dtypes_error(a, b)
        try:
            # 2-D on the CPU: the engine's product (engine.threads.dot: ndarray.dot or np.matmul by size)
            if a.ndim == 2 and b.ndim == 2:
                if a.__class__ is np.ndarray:
                    out = _threads.dot(a, b)
                else:
                    out = dot2(a, b)
            elif a.ndim > 2 and b.ndim == 2:  # (..., n, k) @ (k, m): one product of all the rows, as PyTorch folds it
                ctx.dims = (a.ndim, 2)
                rows = a.reshape(_prod(a.shape[:-1]), a.shape[-1])  # (no -1: a size may be 0)
                if a.shape[-1] != b.shape[0]:
                    raise shapes_error(rows, b)  # in the folded shapes, as PyTorch's
                out = (_threads.dot(rows, b) if a.__class__ is np.ndarray else dot2(rows, b)).reshape(
                    a.shape[:-1] + b.shape[1:])
            else:
                ctx.dims = (a.ndim, b.ndim)
                out = a @ b
        except ValueError:
            raise shapes_error(a, b) from None
        ctx.saved = (a, b)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        if a.ndim == 2 and b.ndim == 2:
            if gy.__class__ is np.ndarray:
                dot = _threads.dot
                return (dot(gy, b.T) if need_a else None), (dot(a.T, gy) if need_b else None)
            return (dot2(gy, b.T) if need_a else None), (dot2(a.T, gy) if need_b else None)
        if a.ndim > 2 and b.ndim == 2 and gy.shape == a.shape[:-1] + b.shape[1:]:  # the rows folded, as forward
            dot = _threads.dot if gy.__class__ is np.ndarray else dot2
            n = _prod(a.shape[:-1])
            g2 = gy.reshape(n, gy.shape[-1])
            return ((dot(g2, b.T).reshape(a.shape) if need_a else None),
                    (dot(a.reshape(n, a.shape[-1]).T, g2) if need_b else None))
        xp = xp_of(gy)
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g2 = gy  # back to the shape of a2 @ b2: b's dimension first (v @ v's gradient is 0-D)
        if b.ndim == 1:
            g2 = xp.expand_dims(g2, -1)
        if a.ndim == 1:
            g2 = xp.expand_dims(g2, -2)
        ga = gb = None
        if need_a:
            ga = g2 @ xp.swapaxes(b2, -1, -2)
            if a.ndim == 1:
                ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:]).sum(axis=tuple(range(ga.ndim - 2)))
        if need_b:
            gb = xp.swapaxes(a2, -1, -2) @ g2
            if b.ndim == 1:
                gb = gb.reshape(gb.shape[:-1]).sum(axis=tuple(range(gb.ndim - 2)))
        return ga, gb


class Addmm(Function):
    """``beta * bias + alpha * (m1 @ m2)``, one node as PyTorch's ``AddmmBackward0``: ``torch.addmm`` and
    ``nn.Linear`` (``F.linear(x, w, b)`` is ``addmm(b, x, w.t())`` for a matrix ``x``, as in PyTorch). The product
    is the engine's 2-D one and the bias is added into it, with the values of ``m1 @ m2`` then ``+ bias``; with
    ``beta=0`` the bias is not read (its NaN do not pass). The three must share a dtype (PyTorch's refusals)."""

    raw = True
    complex_ok = True
    backward_name = "AddmmBackward0"
    saved_uses = ((2,), (1,))  # m1 is read for m2's gradient, m2 for m1's

    @staticmethod
    def forward(ctx, bias, m1, m2, beta=1, alpha=1):
        if bias.dtype != m2.dtype:
            raise same_dtype_error("self", bias, m2)
        if m1.dtype != m2.dtype:
            raise same_dtype_error("mat1", m1, m2)
        if m1.ndim != 2 or m2.ndim != 2:
            name, m = ("mat1", m1) if m1.ndim != 2 else ("mat2", m2)
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
        if m1.shape[1] != m2.shape[0]:
            raise shapes_error(m1, m2)
        target = (m1.shape[0], m2.shape[1])
        if bias.shape != target and bias.shape != target[1:]:  # (nn.Linear's (n,): it expands) refuse a bias
            # that does not expand to the product, in PyTorch's words
            legacy = ("torch." if bias.__class__ is np.ndarray else "torch.cuda.") + from_numpy_dtype(
                bias.dtype).legacy_name
            expanded_shape(bias.shape, target, legacy)
        if m1.__class__ is np.ndarray:
            out = _threads.dot(m1, m2)
        else:
            out = dot2(m1, m2)
        if out.dtype.kind not in "fc":  # integers (never recorded): the sum in their dtype, as PyTorch's
            return (out * alpha + (bias * beta if beta != 0 else 0)).astype(out.dtype, copy=False)
        if alpha != 1:
            out *= alpha
        if beta != 0:
            out += bias * beta if beta != 1 else bias
        ctx.saved = (m1, m2)
        ctx.meta = (beta, alpha)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        m1, m2 = ctx.saved
        beta, alpha = ctx.meta
        need_b, need_1, need_2 = ctx.needs_input_grad
        dot = _threads.dot if gy.__class__ is np.ndarray else dot2
        g = gy * alpha if alpha != 1 and (need_1 or need_2) else gy
        return ((gy * beta if beta != 1 else gy) if need_b else None,
                dot(g, m2.T) if need_1 else None,
                dot(m1.T, g) if need_2 else None)


_ADD_PRODUCT_NAMES = {"mv": "AddmvBackward0", "r": "AddrBackward0", "baddbmm": "BaddbmmBackward0",
                      "addbmm": "AddbmmBackward0"}


def _product_of(kind, a, b):
    """The product each of addmm's siblings adds: ``a @ b`` (matrix times vector), ``outer(a, b)``, the batch of
    products (``bmm``) or its sum over the batch."""
    if kind == "mv":
        return a.dot(b) if a.__class__ is np.ndarray else dot2(a, b)
    if kind == "r":
        return a[:, None] * b[None, :]
    out = a @ b  # (the batch of products; NumPy's and CuPy's operator)
    return out.sum(axis=0, dtype=out.dtype) if kind == "addbmm" else out  # (an int32 sum stays int32, as ATen's)


class AddProduct(Function):
    """``beta * input + alpha * product``, one node as PyTorch's for ``addmv`` (``mat @ vec``), ``addr``
    (``outer(vec1, vec2)``), ``baddbmm`` (``bmm``) and ``addbmm`` (``bmm`` summed over the batch): ``kind`` says
    which; ``input`` broadcasts to the product's shape; with ``beta=0`` it is not read (its NaN do not pass). The
    gradients are PyTorch's formulas (derivatives.yaml); the walk sums ``input``'s back to its shape."""

    raw = True
    complex_ok = True
    saved_uses = ((2,), (1,))  # each factor is read for the other's gradient

    def backward_name(self):
        return _ADD_PRODUCT_NAMES[self.meta[0]]

    @staticmethod
    def forward(ctx, bias, a, b, kind, beta=1, alpha=1):
        out = _product_of(kind, a, b)
        if out.dtype.kind not in "fc":  # integers (never recorded): the sum in their dtype, as PyTorch's
            return (out * alpha + (bias * beta if beta != 0 else 0)).astype(out.dtype, copy=False)
        if alpha != 1:
            out = out * alpha
        if beta != 0:
            out = out + (bias * beta if beta != 1 else bias)
        ctx.saved = (a, b)
        ctx.meta = (kind, beta, alpha)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b = ctx.saved
        kind, beta, alpha = ctx.meta
        need_bias, need_a, need_b = ctx.needs_input_grad[:3]
        g = gy * alpha if alpha != 1 and (need_a or need_b) else gy
        ga = gb = None
        xp = xp_of(gy)
        if kind == "mv":
            ga = g[:, None] * b[None, :] if need_a else None
            gb = (a.T.dot(g) if a.__class__ is np.ndarray else dot2(a.T, g)) if need_b else None
        elif kind == "r":
            ga = (g.dot(b) if g.__class__ is np.ndarray else dot2(g, b[:, None])[:, 0]) if need_a else None
            gb = (g.T.dot(a) if g.__class__ is np.ndarray else dot2(g.T, a[:, None])[:, 0]) if need_b else None
        else:
            if kind == "addbmm":
                g = xp.broadcast_to(g, (a.shape[0],) + g.shape)
            ga = g @ b.swapaxes(1, 2) if need_a else None
            gb = a.swapaxes(1, 2) @ g if need_b else None
        return (gy * beta if beta != 1 else gy) if need_bias else None, ga, gb


def _einsum(xp, equation, arrays):
    """``einsum`` of NumPy (products through BLAS: ``optimize``) or CuPy (whose ``optimize`` takes no True)."""
    if xp is np:
        return np.einsum(equation, *arrays, optimize=len(arrays) > 1)
    return xp.einsum(equation, *arrays)


class Einsum(Function):
    """``einsum`` of one explicit equation (``'ij,jk->ik'``: no ellipsis, every subscript a letter; the caller,
    engine.functional.einsum, writes it so). The gradient of each operand is the einsum of the output's gradient
    with the other operands, to that operand's subscripts: broadcast along a subscript only it has (summed away in
    the forward), and put on the diagonal where it repeats one (``'ii->i'``)."""

    raw = True
    complex_ok = True
    backward_name = "EinsumBackward0"  # PyTorch's einsum records the nodes of what it is made of; this is one

    @staticmethod
    def forward(ctx, *arrays, equation):
        ctx.saved = arrays
        # each operand is read for the others' gradients
        ctx.saved_uses = tuple(tuple(j for j in range(len(arrays)) if j != k) for k in range(len(arrays)))
        ctx.meta = equation
        return _einsum(xp_of(arrays[0]), equation, arrays)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        arrays = ctx.saved
        lhs, out = ctx.meta.split("->")
        subs = lhs.split(",")
        xp = xp_of(gy)
        grads = []
        for k, (a, sub) in enumerate(zip(arrays, subs)):
            if not ctx.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [(s, arrays[i]) for i, s in enumerate(subs) if i != k]
            seen = set(out).union(*(set(s) for s, _ in others))
            unique = "".join(dict.fromkeys(sub))  # the operand's subscripts once each, in order
            kept = "".join(c for c in unique if c in seen)
            g = _einsum(xp, ",".join([out] + [s for s, _ in others]) + "->" + kept, [gy] + [x for _, x in others])
            size = {c: n for c, n in zip(sub, a.shape)}
            if kept != unique:  # subscripts summed within this operand alone: the gradient is the same along them
                g = xp.broadcast_to(g.reshape([size[c] if c in kept else 1 for c in unique]),
                                    [size[c] for c in unique])
            if unique != sub:  # a repeated subscript: the gradient lies on that diagonal, zero off it
                full = g.reshape([size[c] if sub.index(c) == p else 1 for p, c in enumerate(sub)])
                full = xp.broadcast_to(full, a.shape)
                for p, c in enumerate(sub):
                    first = sub.index(c)
                    if first != p:
                        eye = xp.eye(size[c], dtype=gy.dtype).reshape(
                            [size[c] if q in (first, p) else 1 for q in range(len(sub))])
                        full = full * eye
                g = full
            grads.append(g)
        return tuple(grads)


def cross3(a, b, axis):
    """The cross product of the 3-vectors along ``axis`` of ``a`` and ``b`` (broadcast), in PyTorch's order of
    operations: ``a1 b2 - a2 b1``, ``a2 b0 - a0 b2``, ``a0 b1 - a1 b0``."""
    xp = xp_of(a)
    a, b = xp.broadcast_arrays(a, b)
    out = xp.empty(a.shape, dtype=promote(a, b)[0].dtype if a.dtype != b.dtype else a.dtype)
    lead = (slice(None),) * (axis % a.ndim)
    def part(arr, i):
        return arr[lead + (i,)]

    for i, (j, k) in enumerate(((1, 2), (2, 0), (0, 1))):
        out[lead + (i,)] = part(a, j) * part(b, k) - part(a, k) * part(b, j)
    return out


class Cross(Function):
    """``linalg.cross`` (and ``torch.cross`` with a dim): the cross product along ``dim`` of two broadcast
    tensors, one node as PyTorch's ``LinalgCrossBackward0``; the gradients are ``cross(b, g)`` and ``cross(g, a)``
    (PyTorch's formulas; the walk sums each back over what was broadcast)."""

    raw = True
    complex_ok = True
    backward_name = "LinalgCrossBackward0"
    saved_uses = ((1,), (0,))

    @staticmethod
    def forward(ctx, a, b, dim):
        if a.dtype != b.dtype:
            a, b = promote(a, b)
        ctx.saved = (a, b)
        ctx.meta = dim
        return cross3(a, b, dim)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, b = ctx.saved
        dim = ctx.meta
        need_a, need_b = ctx.needs_input_grad[:2]
        return (cross3(b, gy, dim) if need_a else None), (cross3(gy, a, dim) if need_b else None)


class Trilinear(Function):
    """ATen's ``_trilinear`` as ``bilinear`` calls it: ``out[b, o] = sum_ij x1[b, i] w[o, i, j] x2[b, j]`` for
    ``x1`` (B, I), ``w`` (O, I, J), ``x2`` (B, J), one node as PyTorch's ``TrilinearBackward0``: first ``x1``
    contracted with ``w`` (as ATen's first product), then with ``x2``. Each gradient is the other two contracted
    with the output's."""

    raw = True
    backward_name = "TrilinearBackward0"

    @staticmethod
    def forward(ctx, x1, w, x2):
        o, i, j = w.shape
        b = x1.shape[0]
        left = (x1 @ w.transpose(1, 0, 2).reshape(i, o * j)).reshape(b, o, j)
        ctx.saved = (x1, w, x2)
        return (left * x2[:, None, :]).sum(axis=2, dtype=left.dtype)  # (in its dtype: int32 stays int32)

    @staticmethod
    def backward(ctx, gy):
        x1, w, x2 = ctx.saved
        o, i, j = w.shape
        b = x1.shape[0]
        need_1, need_w, need_2 = ctx.needs_input_grad[:3]
        g1 = ((gy[:, :, None] * x2[:, None, :]).reshape(b, o * j) @ w.transpose(0, 2, 1).reshape(o * j, i)
              if need_1 else None)
        gw = ((gy.T @ (x1[:, :, None] * x2[:, None, :]).reshape(b, i * j)).reshape(o, i, j) if need_w else None)
        g2 = ((gy[:, :, None] * x1[:, None, :]).reshape(b, o * i) @ w.reshape(o * i, j) if need_2 else None)
        return g1, gw, g2
