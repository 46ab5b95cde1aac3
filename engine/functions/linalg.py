"""Linear algebra of (batches of) square matrices: the inverse, the determinant, log |det| and linear solves, with
PyTorch's gradients (engine/linalg.py is their door, as torch.linalg)."""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function, apply_several, holomorphic
from ..backend import xp_of


def _mT(a):  # noqa: N802 - the matrix transpose of a batch
    return a.swapaxes(-1, -2)


def check_square(a, fn: str) -> None:
    """PyTorch's refusals of ``a`` (a Tensor) as (a batch of) square floating-point matrices, for ``linalg.<fn>``."""
    if a.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    check_floating(a, fn)


def check_floating(a, fn: str) -> None:
    """PyTorch's refusal of an integer ``a`` (a Tensor) for ``linalg.<fn>``; floating-point and complex matrices are
    taken (each op has its complex form, PyTorch's)."""
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{a.dtype.legacy_name[:-6]}")


def _lapack(fn, name):
    """``fn()``, NumPy's LinAlgError said as PyTorch says it."""
    try:
        return fn()
    except np.linalg.LinAlgError:
        raise RuntimeError(f"linalg.{name}: The diagonal element of the LU decomposition is zero: the matrix is "
                           "singular (not invertible).") from None


class Inverse(Function):
    raw = True
    complex_ok = True
    backward_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        out = _lapack(lambda: xp_of(a).linalg.inv(a), "inv")
        ctx.saved = (out,)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        inv_t = _mT(ctx.saved[0])
        return -(inv_t @ gy @ inv_t)


class Det(Function):
    """The determinant; its gradient ``g adj(A)^T``, the adjugate made from the SVD (``det(U) det(V) V diag(the
    product of the other singular values) U^T``), so a singular matrix gets its true gradient too (``det(A)
    A^-T`` has no inverse to use there)."""

    raw = True
    complex_ok = True
    backward_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.saved = (a,)
        return xp_of(a).linalg.det(a)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a = ctx.saved[0]
        xp = xp_of(gy)
        if a.dtype.kind == "c":  # (the adjugate as det(A) A^-1: the SVD's form below is a real matrix's)
            return gy[..., None, None] * _mT(xp.linalg.det(a)[..., None, None] * _lapack(lambda: xp.linalg.inv(a),
                                                                                         "det"))
        if a.shape[-1] == 0:  # (a 0 x 0 matrix: det 1 whatever it holds, no entries to differentiate)
            return xp.zeros(a.shape, dtype=gy.dtype)
        u, s, vt = xp.linalg.svd(a)
        n = s.shape[-1]
        others = xp.stack([xp.prod(s[..., [j for j in range(n) if j != i]], axis=-1) for i in range(n)], axis=-1)
        signs = xp.linalg.det(u) * xp.linalg.det(vt)
        adjugate = signs[..., None, None] * ((_mT(vt) * others[..., None, :]) @ _mT(u))
        return gy[..., None, None] * _mT(adjugate)


class LogAbsDet(Function):
    """``slogdet``: ``(sign, log |det A|)``, two outputs of one ``LinalgSlogdetBackward0``, as PyTorch's. The
    gradient ``g A^-H``, where for a complex A the sign's phase adds to g: ``g_logabs - i Im(conj(g_sign) sign)``
    (PyTorch's ``slogdet_backward``; a real sign has no gradient)."""

    raw = True
    complex_ok = True
    apply = classmethod(apply_several)
    backward_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        sign, logabs = xp_of(a).linalg.slogdet(a)
        ctx.saved = (a, sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, g_sign, g_logabs):
        a, sign = ctx.saved
        g = g_logabs
        if a.dtype.kind == "c" and g_sign is not None:
            g = g - 1j * (g_sign.conj() * sign).imag
        inv = _lapack(lambda: xp_of(a).linalg.inv(a), "slogdet")
        return g[..., None, None] * _mT(inv.conj() if inv.dtype.kind == "c" else inv)


class Solve(Function):
    """``X`` with ``A X = B`` (``B`` a batch of vectors or matrices); ``gB = A^-T G``, ``gA = -gB X^T``."""

    raw = True
    complex_ok = True
    backward_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b, vector=False):
        xp = xp_of(a)
        rhs = b[..., None] if vector else b
        batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
        if a.shape[:-2] != batch or rhs.shape[:-2] != batch:  # (CuPy's solve broadcasts no batch dimensions; the
            # gradients are summed back to each input's shape when they are handed on)
            a = xp.ascontiguousarray(xp.broadcast_to(a, (*batch, *a.shape[-2:])))
            rhs = xp.ascontiguousarray(xp.broadcast_to(rhs, (*batch, *rhs.shape[-2:])))
        out = _lapack(lambda: xp.linalg.solve(a, rhs), "solve")
        ctx.saved = (a, out)
        ctx.vector = vector
        return out[..., 0] if vector else out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        a, x = ctx.saved
        xp = xp_of(gy)
        g = gy[..., None] if ctx.vector else gy
        gb = xp.linalg.solve(_mT(a), g)
        need_a, need_b = ctx.needs_input_grad
        ga = -(gb @ _mT(x)) if need_a else None
        return ga, ((gb[..., 0] if ctx.vector else gb) if need_b else None)
