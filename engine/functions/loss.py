"""The negative log-likelihood of picked classes (``nll_loss``, and so ``cross_entropy`` after a log-softmax):
one node, as PyTorch's ``NllLossBackward0`` (``NllLoss2DBackward0`` for inputs with positions after the class
dimension)."""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..backend import xp_of


class NllLoss(Function):
    """``-logp[i, target[i]] * weight[target[i]]`` per row, rows whose target is ``ignore_index`` counting 0;
    reduced by 'none' (in the target's shape), 'sum' or 'mean' (the sum over the summed weights of the rows not
    ignored: NaN when every row is, with gradients of 0). The gradient is that weight, negated, at the picked class
    of each row.

    ``logp`` is ``(C,)`` with a 0-d target, ``(N, C)`` with ``(N,)``, or ``(N, C, d1, ...)`` with ``(N, d1, ...)``
    (each position a row): the shapes are the caller's to check. ``masked`` says whether a row may be ignored (the
    caller knows on the CPU, where it checked the targets; on a GPU it would have to wait for the device to know,
    so it always masks): without it the forward is one pick, a multiply and a sum."""

    raw = True

    def backward_name(self):
        return "NllLoss2DBackward0" if self.spatial else "NllLossBackward0"

    @staticmethod
    def forward(ctx, logp, target, weight=None, ignore_index=-100, reduction="mean", masked=True):
        xp = xp_of(logp)
        shape, classes = logp.shape, logp.shape[0 if logp.ndim == 1 else 1]
        ctx.spatial = logp.ndim > 2  # (for the node's name, which is asked for after backward too)
        if logp.ndim != 2:  # one row per position, classes last
            logp = (xp.moveaxis(logp, 1, -1) if logp.ndim > 2 else logp).reshape(-1, classes)
        each_shape, target = target.shape, target.reshape(-1)
        rows = xp.arange(logp.shape[0])
        if masked:
            keep = target != ignore_index
            target = xp.where(keep, target, 0)
            w = keep.astype(logp.dtype) if weight is None else weight[target] * keep
        else:
            w = None if weight is None else weight[target]
        picked = logp[rows, target]
        losses = -picked if w is None else -(picked * w)
        if reduction == "none":
            out, scale = losses.reshape(each_shape), w
        elif reduction == "sum":
            out, scale = losses.sum(), w
        else:
            total = logp.dtype.type(logp.shape[0]) if w is None else w.sum()
            with np.errstate(divide="ignore", invalid="ignore"):  # every row ignored: 0 / 0, NaN as PyTorch's
                out = losses.sum() / total
            # and then every gradient 0, as PyTorch's (its weights are all 0 then: divided by 1, not by 0)
            scale = (1 / total) if w is None else w / (total + (total == 0))
        ctx.meta = (shape, classes, logp.dtype)
        ctx.saved = (rows, target, scale)
        return out

    @staticmethod
    def backward(ctx, gy):
        shape, classes, dtype = ctx.meta
        rows, target, scale = ctx.saved
        xp = xp_of(gy)
        g = xp.zeros((rows.shape[0], classes), dtype=dtype)
        gy = gy.reshape(-1) if gy.ndim else gy
        g[rows, target] = -gy if scale is None else -(gy * scale)  # a 0-d value is broadcast down the rows
        if len(shape) == 1:
            return g.reshape(shape), None
        if len(shape) > 2:
            return xp.moveaxis(g.reshape(shape[0], *shape[2:], shape[1]), -1, 1), None
        return g, None
