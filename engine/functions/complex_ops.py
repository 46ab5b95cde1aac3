"""Complex numbers: the parts of a complex tensor and the ops that are not complex-analytic.

PyTorch's gradient of a real loss L with respect to a complex z = x + iy is ``dL/dx + i dL/dy`` (the conjugate
Wirtinger derivative, doubled): the direction in which L grows fastest, so that ``z -= lr * z.grad`` descends. An
op whose derivative is complex-analytic (``z * w``, ``exp``, the matrix product) gets it from its real formula
(:func:`engine.autograd.function.holomorphic`); the ops here are not analytic (the parts, the modulus, the
argument, the conjugate), and each has the gradient its real partial derivatives give, as PyTorch's
``derivatives.yaml`` writes it. A real input's gradient is the real part of what reaches it
(:func:`engine.dtypes.cast_gradient`).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..backend import complex_parts, xp_of
from ..errors import broadcast_error

__all__ = ["ViewAsReal", "ViewAsComplex", "Complex", "Polar", "Conj", "Angle", "Sgn", "as_real", "as_complex"]


def as_real(x):
    """A complex array's real and imaginary parts as a real array of one more dimension, of size 2: a view of the same
    memory, as PyTorch's ``view_as_real`` (strided where the array is strided along its last dimension)."""
    return complex_parts(x)


def as_complex(x):
    """A real array whose last dimension holds (real, imaginary) pairs as the complex array they make (a view)."""
    out = x.view(dtypes.complex_of(x.dtype))
    return out.reshape(out.shape[:-1])


class ViewAsReal(Function):
    """``view_as_real(z)``: the parts of each element along a new last dimension of size 2; its gradient back as
    complex numbers."""

    raw = True
    complex_ok = True
    backward_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            raise RuntimeError("view_as_real is only supported for complex tensors")
        ctx.saved = None
        return as_real(x)

    @staticmethod
    def backward(ctx, gy):
        return as_complex(xp_of(gy).ascontiguousarray(gy))


class ViewAsComplex(Function):
    """``view_as_complex(x)``: a float tensor whose last dimension (of size 2, contiguous) holds the parts."""

    raw = True
    complex_ok = True
    backward_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype not in (np.float32, np.float64):
            raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                               f"of scalar type: {dtypes.scalar_name(x.dtype)}")
        if x.ndim == 0 or x.shape[-1] != 2:
            raise RuntimeError("Tensor must have a last dimension of size 2")
        if x.strides[-1] != x.itemsize:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * x.itemsize) for s, n in zip(x.strides[:-1], x.shape[:-1]) if n > 1):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
        ctx.saved = None
        return as_complex(x)

    @staticmethod
    def backward(ctx, gy):
        return as_real(gy)


def _check_parts(name, first, second, a, b):
    """PyTorch's checks of ``complex(real, imag)`` and ``polar(abs, angle)``: two float tensors of one dtype."""
    for x in (a, b):
        if x.dtype not in (np.float32, np.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{dtypes.scalar_name(a.dtype)} and {dtypes.scalar_name(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {dtypes.scalar_name(a.dtype)} but got scalar type "
                           f"{dtypes.scalar_name(b.dtype)} for second argument")
    refusal = broadcast_error(a, b)
    if refusal is not None:
        raise refusal


class Complex(Function):
    """``complex(real, imag)``: each gradient the matching part of the output's."""

    raw = True
    complex_ok = True
    backward_name = "ComplexBackward0"

    @staticmethod
    def forward(ctx, re, im):
        _check_parts("complex", "real", "imag", re, im)
        xp = xp_of(re)
        out = xp.empty(np.broadcast_shapes(re.shape, im.shape), dtype=dtypes.complex_of(re.dtype))
        out.real = re
        out.imag = im
        ctx.saved = None
        return out

    @staticmethod
    def backward(ctx, gy):
        need_re, need_im = ctx.needs_input_grad
        return (gy.real.copy() if need_re else None), (gy.imag.copy() if need_im else None)


class Polar(Function):
    """``polar(abs, angle)``: ``abs (cos angle + i sin angle)``. Each input is real, so its gradient is
    ``Re(g conj(dz/dinput))`` with ``dz/dabs = e^(i angle)`` and ``dz/dangle = i z``: no division by the modulus,
    which may be 0."""

    raw = True
    complex_ok = True
    backward_name = "PolarBackward0"

    @staticmethod
    def forward(ctx, r, theta):
        _check_parts("polar", "abs", "angle", r, theta)
        xp = xp_of(r)
        cos, sin = xp.cos(theta), xp.sin(theta)
        out = xp.empty(np.broadcast_shapes(r.shape, theta.shape), dtype=dtypes.complex_of(r.dtype))
        out.real = r * cos
        out.imag = r * sin
        ctx.saved = (cos, sin, out, r)
        return out

    @staticmethod
    def backward(ctx, gy):
        cos, sin, z, _ = ctx.saved
        need_r, need_theta = ctx.needs_input_grad
        # dz/dr = e^{i theta}, dz/dtheta = i z: a real input's gradient is Re(g conj(dz/dinput))
        g_r = gy.real * cos + gy.imag * sin if need_r else None
        g_theta = gy.imag * z.real - gy.real * z.imag if need_theta else None
        return g_r, g_theta


class Conj(Function):
    """``conj()`` and ``conj_physical()`` of a complex tensor (a copy: the engine keeps no lazy conjugate bit);
    the gradient is the conjugate of the output's."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return "ConjPhysicalBackward0" if self.physical else "ConjBackward0"

    @staticmethod
    def forward(ctx, x, physical=False):
        ctx.physical = physical
        ctx.saved = None
        return xp_of(x).conj(x)

    @staticmethod
    def backward(ctx, gy):
        return xp_of(gy).conj(gy)


class Angle(Function):
    """The argument of complex numbers (real); its gradient ``g i z / |z|^2``, 0 at 0, as PyTorch's."""

    raw = True
    complex_ok = True
    backward_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, z):
        ctx.saved = (z,)
        return xp_of(z).angle(z)

    @staticmethod
    def backward(ctx, gy):
        z = ctx.saved[0]
        xp = xp_of(gy)
        m2 = z.real * z.real + z.imag * z.imag
        with np.errstate(divide="ignore", invalid="ignore"):
            g = (gy / m2) * (1j * z)
        return xp.where(m2 == 0, z.dtype.type(0), g).astype(z.dtype, copy=False)


class Sgn(Function):
    """``sgn(z)``: ``z / |z|``, 0 at 0. Its gradient, from the Wirtinger derivatives of z (z z*)^(-1/2):
    ``(g - conj(g) sgn(z)^2) / (2 |z|)``, 0 at 0, as PyTorch's ``sgn_backward``."""

    raw = True
    complex_ok = True
    backward_name = "SgnBackward0"

    @staticmethod
    def forward(ctx, z):
        xp = xp_of(z)
        a = xp.abs(z)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xp.where(a == 0, z.dtype.type(0), z / a).astype(z.dtype, copy=False)
        ctx.saved = (a, out)
        return out

    @staticmethod
    def backward(ctx, gy):
        a, s = ctx.saved
        xp = xp_of(gy)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = (gy - xp.conj(gy) * (s * s)) / (2 * a)
        return xp.where(a == 0, gy.dtype.type(0), g).astype(gy.dtype, copy=False)
