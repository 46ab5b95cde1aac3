"""Distances, one node each as PyTorch's: ``dist`` (``DistBackward0``), ``cdist`` (``CdistBackward0``, from the
differences; or, for the Euclidean distance of more than 25 rows, ``EuclideanDistBackward0`` from one matrix
product, as ATen's ``_euclidean_dist``) and ``pdist`` (``PdistBackward0``). The gradients are ATen's formulas."""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function, complex_words
from ..backend import add_at, xp_of
from ..dtypes import scalar_name
from .reduction import vector_norm, vector_norm_grad


class Dist(Function):
    """``dist(a, b, p)``: the ``p``-norm of ``a - b`` (broadcast) over every element; the gradient is the norm's,
    ``-`` that for ``b`` (the walk sums each back to its shape)."""

    raw = True
    backward_name = "DistBackward0"

    @staticmethod
    def forward(ctx, a, b, p):
        out = vector_norm(a - b, p, None, False)
        ctx.saved = (a, b, out)
        ctx.meta = p
        return out

    @staticmethod
    def backward(ctx, gy):
        a, b, out = ctx.saved
        diff = a - b
        g = vector_norm_grad(gy, diff, out, ctx.meta, None, False)
        if g is None:
            g = xp_of(diff).zeros_like(diff)
        need_a, need_b = ctx.needs_input_grad[:2]
        return (g if need_a else None), (-g if need_b else None)


def _differences(x1, x2):
    """``x1[..., i, :] - x2[..., j, :]`` for every i, j: (..., P, R, M)."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _pair_grad(gy, diff, dist, p):
    """ATen's ``_cdist_backward`` per pair (the gradient of each ``x1`` row's difference): the norm's, except the
    infinity norm's, which goes to every coordinate that reaches it (ties not shared)."""
    xp = xp_of(gy)
    if p == 0:
        return xp.zeros_like(diff)
    if p == np.inf:
        return gy[..., None] * xp.sign(diff) * (abs(diff) == dist[..., None])
    return vector_norm_grad(gy, diff, dist, p, (diff.ndim - 1,), False)


class Cdist(Function):
    """``cdist`` from the differences: ``(..., P, M)`` and ``(..., R, M)`` to the ``(..., P, R)`` ``p``-norms of
    every pair (batch dimensions broadcast); one ``CdistBackward0``."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: RuntimeError(
        f"cdist only supports floating-point dtypes, X1 got: {scalar_name(dtype)}"))
    backward_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p):
        diff = _differences(x1, x2)
        out = vector_norm(diff, p, (diff.ndim - 1,), False)
        ctx.saved = (x1, x2, out)
        ctx.meta = p
        return out

    @staticmethod
    def backward(ctx, gy):
        x1, x2, out = ctx.saved
        need_1, need_2 = ctx.needs_input_grad[:2]
        if ctx.meta == 0:  # (the count of nonzeros: piecewise constant, zeros for both)
            xp = xp_of(gy)
            return (xp.zeros_like(x1) if need_1 else None), (xp.zeros_like(x2) if need_2 else None)
        g = _pair_grad(gy, _differences(x1, x2), out, ctx.meta)
        return (g.sum(axis=-2) if need_1 else None), (-g.sum(axis=-3) if need_2 else None)


class EuclideanDist(Function):
    """ATen's ``_euclidean_dist``: ``sqrt(max(|x1|^2 - 2 x1 . x2 + |x2|^2, 0))`` from one product of padded
    matrices (what PyTorch's cdist does for the Euclidean distance of more than 25 rows: faster, less exact for
    near points); one ``EuclideanDistBackward0``, whose gradient is ATen's ``_euclidean_dist_backward``."""

    raw = True
    backward_name = "EuclideanDistBackward0"

    @staticmethod
    def forward(ctx, x1, x2):
        xp = xp_of(x1)
        n1 = (x1 * x1).sum(axis=-1, keepdims=True)
        n2 = (x2 * x2).sum(axis=-1, keepdims=True)
        a = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], axis=-1)
        b = xp.concatenate([x2, xp.ones_like(n2), n2], axis=-1)
        out = xp.sqrt(xp.maximum(a @ b.swapaxes(-1, -2), 0))
        ctx.saved = (x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, gy):
        x1, x2, out = ctx.saved
        xp = xp_of(gy)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = xp.where(out == 0, gy.dtype.type(0), gy / out)
        need_1, need_2 = ctx.needs_input_grad[:2]
        return ((x1 * ratio.sum(axis=-1, keepdims=True) - ratio @ x2) if need_1 else None,
                (x2 * ratio.sum(axis=-2)[..., None] - ratio.swapaxes(-1, -2) @ x1) if need_2 else None)


class Pdist(Function):
    """``pdist``: the ``p``-norm distance of each pair of rows ``i < j`` of a matrix, in that order; one
    ``PdistBackward0``."""

    raw = True
    backward_name = "PdistBackward0"

    @staticmethod
    def forward(ctx, x, p):
        i, j = np.triu_indices(x.shape[0], 1)
        xp = xp_of(x)
        if xp is not np:
            i, j = xp.asarray(i), xp.asarray(j)
        diff = x[i] - x[j]
        out = vector_norm(diff, p, (1,), False)
        ctx.saved = (x, out)
        ctx.meta = (p, i, j)
        return out

    @staticmethod
    def backward(ctx, gy):
        x, out = ctx.saved
        p, i, j = ctx.meta
        xp = xp_of(gy)
        g = _pair_grad(gy, x[i] - x[j], out, p)
        gx = xp.zeros_like(x)
        if g.shape[0]:
            scatter_rows(gx, i, g)
            scatter_rows(gx, j, -g)
        return gx


def scatter_rows(target, rows, values):
    """``target[rows] += values`` with repeated rows summed (NumPy's ``add.at``; CuPy's on a GPU)."""
    add_at(target, rows, values)
