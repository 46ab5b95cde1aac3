"""The mean squared error (``mse_loss``), one node as PyTorch's ``MseLossBackward0``; the negative log-likelihood
of picked classes (``nll_loss``, and so ``cross_entropy`` after a log-softmax): one node, as PyTorch's
``NllLossBackward0`` (``NllLoss2DBackward0`` for inputs with positions after the class dimension); and the CTC
loss (``ctc_loss``), one node, as PyTorch's ``CtcLossBackward0``."""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function, complex_words
from ..backend import xp_of
from ..dtypes import promote
from ..errors import complex_refusal


class MseLoss(Function):
    """``(input - target) ** 2`` reduced by 'mean', 'sum' or 'none', of two arrays of one shape (the caller
    broadcasts them). The gradient is PyTorch's, in its order: ``norm * (input - target) * grad`` for the input
    (``norm`` 2, or 2 over the count for 'mean') and its negation for the target. Both are kept, as PyTorch keeps
    them, so a write to either after the forward is refused at backward."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: complex_refusal(f"mse_{device}", dtype))
    backward_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, a, b, reduction="mean"):
        if a.__class__ is not b.__class__ or a.dtype is not b.dtype:
            a, b = promote(a, b)
        ctx.saved = (a, b)
        ctx.meta = reduction
        d = a - b
        loss = d * d
        if reduction == "mean":
            return loss.mean() if loss.size else xp_of(loss).asarray(np.nan, dtype=loss.dtype)  # (no warning)
        if reduction == "sum":
            return np.add.reduce(loss, axis=None) if loss.__class__ is np.ndarray else loss.sum()
        return loss

    @staticmethod
    def backward(ctx, gy):
        a, b = ctx.saved
        norm = 2.0 / max(a.size, 1) if ctx.meta == "mean" else 2.0  # (nothing to scale when empty)
        g = norm * (a - b) * gy
        need_a, need_b = ctx.needs_input_grad
        return (g if need_a else None), (-g if need_b else None)


def _reduced(loss, reduction):
    """A loss per element reduced as PyTorch's apply_loss_reduction: 'mean', 'sum' or 'none'."""
    if reduction == "mean":
        return loss.mean() if loss.size else xp_of(loss).asarray(np.nan, dtype=loss.dtype)  # (no warning)
    if reduction == "sum":
        return np.add.reduce(loss, axis=None) if loss.__class__ is np.ndarray else loss.sum()
    return loss


def scaled_loss_grads(grads, weight, reduction, x) -> tuple:
    """A loss node's gradients (None stays None), each times its ``weight`` and over the count for 'mean' (as
    PyTorch's, which divides), one per element of ``x``, in its dtype."""
    out = []
    for g in grads:
        if g is not None:
            if weight is not None:
                g = g * weight
            if reduction == "mean":
                g = g / max(x.size, 1)
            if g.shape != x.shape:  # (a reduced loss's 0-d gradient times no weight: one per element)
                g = xp_of(g).broadcast_to(g, x.shape).copy()
            g = g.astype(x.dtype, copy=False)
        out.append(g)
    return tuple(out)


def _norm(x, reduction):
    """The scale of an elementwise loss's gradient: 1 over the count for 'mean' (PyTorch's norm), else 1."""
    return 1.0 / max(x.size, 1) if reduction == "mean" else 1.0


class RegressionLoss(Function):
    """``smooth_l1_loss`` (``op='smooth_l1'``, ``param`` beta: ``0.5 z^2 / beta`` below beta, else ``z - beta / 2``)
    and ``huber_loss`` (``'huber'``, delta: ``0.5 z^2`` below delta, else ``delta (z - delta / 2)``) of ``z = |input -
    target|``, reduced inside the node as PyTorch's ``SmoothL1LossBackward0`` and ``HuberLossBackward0``, with their
    gradients: ``norm * grad`` times the sign past the threshold (times delta for huber), and inside it ``norm * x *
    grad`` (over beta for smooth L1), ``x = input - target``; the target's is the negation."""

    raw = True

    def backward_name(self):
        return "SmoothL1LossBackward0" if self.meta[0] == "smooth_l1" else "HuberLossBackward0"

    @staticmethod
    def forward(ctx, a, b, op="smooth_l1", param=1.0, reduction="mean"):
        if a.__class__ is not b.__class__ or a.dtype is not b.dtype:
            a, b = promote(a, b)
        xp = xp_of(a)
        ctx.saved = (a, b)
        ctx.meta = (op, param, reduction)
        ctx.op_label = "SmoothL1Loss" if op == "smooth_l1" else "HuberLoss"
        z = xp.abs(a - b)
        if op == "smooth_l1":
            loss = xp.where(z < param, 0.5 * z * z / param, z - 0.5 * param)
        else:
            loss = xp.where(z < param, 0.5 * z * z, param * (z - 0.5 * param))
        return _reduced(loss, reduction)

    @staticmethod
    def backward(ctx, gy):
        a, b = ctx.saved
        op, param, reduction = ctx.meta
        xp = xp_of(gy)
        norm = _norm(a, reduction)
        x = a - b
        if op == "smooth_l1":
            g = xp.where(x <= -param, -norm * gy, xp.where(x >= param, norm * gy, norm * x * gy / param))
        else:
            g = xp.where(x <= -param, -norm * gy * param, xp.where(x >= param, norm * gy * param, norm * x * gy))
        g = g.astype(x.dtype, copy=False)
        need_a, need_b = ctx.needs_input_grad
        return (g if need_a else None), (-g if need_b else None)


class BinaryCrossEntropyWithLogits(Function):
    """The binary cross-entropy of ``sigmoid(input)`` from the logits, one node as PyTorch's
    ``BinaryCrossEntropyWithLogitsBackward0`` (edges: input, target; ``weight`` and ``pos_weight`` are arrays,
    refused by the caller when they require a gradient, as PyTorch refuses them), ATen's formulas:
    ``(1 - y) x - log_weight * log_sigmoid(x)`` with ``log_weight = (pos_weight - 1) y + 1``; the input's gradient
    ``(sigmoid(x) - y)`` (with pos_weight: ``(pw y + 1 - y) sigmoid(x) - pw y``), the target's ``-x`` (with
    pos_weight: ``log_sigmoid(-x) - pw log_sigmoid(x)``), each times grad and weight, over the count for 'mean'."""

    raw = True
    backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, y, weight=None, pos_weight=None, reduction="mean"):
        if x.__class__ is not y.__class__ or x.dtype is not y.dtype:
            x, y = promote(x, y)
        xp = xp_of(x)
        ctx.saved = (x, y)
        ctx.meta = (weight, pos_weight, reduction)
        log_sig = _log_sigmoid(xp, x)
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight - 1) * y + 1)
        loss = (1 - y) * x - log_sig
        if weight is not None:
            loss = loss * weight
        return _reduced(loss, reduction)

    @staticmethod
    def backward(ctx, gy):
        x, y = ctx.saved
        weight, pos_weight, reduction = ctx.meta
        xp = xp_of(gy)
        need_x, need_y = ctx.needs_input_grad
        gx = gt = None
        if need_x:
            sig = 1 / (1 + xp.exp(-x))
            if pos_weight is not None:
                t = pos_weight * y
                gx = (t + 1 - y) * sig - t
            else:
                gx = sig - y
            gx = gx * gy
        if need_y:
            if pos_weight is not None:
                gt = (_log_sigmoid(xp, -x) - _log_sigmoid(xp, x) * pos_weight) * gy
            else:
                gt = -x * gy
        return scaled_loss_grads((gx, gt), weight, reduction, x)


def _log_sigmoid(xp, x):
    """log(sigmoid(x)) without overflow either side: min(x, 0) - log1p(exp(-|x|))."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-abs(x)))


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
        return _nll_grad(gy, rows, target, scale, shape, classes, dtype), None


def _nll_grad(gy, rows, target, scale, shape, classes, dtype):
    """NllLoss's gradient: ``-gy * scale`` at each row's target class, zeros elsewhere, in the input's layout."""
    xp = xp_of(gy)
    g = xp.zeros((rows.shape[0], classes), dtype=dtype)
    gy = gy.reshape(-1) if gy.ndim else gy
    g[rows, target] = -gy if scale is None else -(gy * scale)  # a 0-d value is broadcast down the rows
    if len(shape) == 1:
        return g.reshape(shape)
    if len(shape) > 2:
        return xp.moveaxis(g.reshape(shape[0], *shape[2:], shape[1]), -1, 1)
    return g


class NllLossGrad(Function):
    """NllLoss's gradient recorded (create_graph=True) as PyTorch records it: one ``NllLossBackwardBackward0``
    with an edge to the incoming gradient, whose own gradient is the loss of the gradient coming back (PyTorch's
    ``nll_loss(grad, target, ...)``), and one to the log-probabilities, whose gradient is zero (the result does
    not depend on them, but needs a gradient where they do, as PyTorch's)."""

    raw = True

    def backward_name(self):
        return "NllLoss2DBackwardBackward0" if self.spatial else "NllLossBackwardBackward0"

    @staticmethod
    def forward(ctx, gy, logp, rows, target, scale, shape, classes, dtype):
        ctx.spatial = len(shape) > 2
        ctx.saved = (rows, target, scale)
        ctx.meta = (shape, classes, gy.shape)
        return _nll_grad(gy, rows, target, scale, shape, classes, dtype)

    @staticmethod
    def backward(ctx, g):
        need_gy, need_logp = ctx.needs_input_grad[:2]
        rows, target, scale = ctx.saved
        shape, classes, gy_shape = ctx.meta
        xp = xp_of(g)
        ggy = None
        if need_gy:
            rows_g = (xp.moveaxis(g, 1, -1) if g.ndim > 2 else g).reshape(-1, classes)
            picked = rows_g[rows, target]
            values = -picked if scale is None else -(picked * scale)
            ggy = values.reshape(gy_shape) if len(gy_shape) else values.sum()
        return ggy, (xp.zeros(shape, dtype=g.dtype) if need_logp else None)  # (zeros, not none: PyTorch's)


def _logaddexp3(xp, a, b, c):
    """log(e^a + e^b + e^c), elementwise, -inf where all three are."""
    top = xp.maximum(xp.maximum(a, b), c)
    safe = xp.where(xp.isneginf(top), 0.0, top)
    with np.errstate(divide="ignore"):
        total = xp.log(xp.exp(a - safe) + xp.exp(b - safe) + xp.exp(c - safe)) + safe
    return xp.where(xp.isneginf(top), -np.inf, total)


def _shifted(xp, a, k, fill=-np.inf):
    """``a`` moved ``k`` places along its last dimension (right for k > 0), ``fill`` where nothing came."""
    n, s = a.shape
    pad = xp.full((n, abs(k)), fill, dtype=a.dtype)
    if k > 0:
        return xp.concatenate([pad, a], axis=1)[:, :s]
    return xp.concatenate([a, pad], axis=1)[:, -k:-k + s]


class CtcLoss(Function):
    """The connectionist temporal classification loss per sample, ``-log p(target | input)`` summed over every
    alignment by the forward (alpha) recursion in log space, as PyTorch's ``ctc_loss`` (reduction is the caller's).
    ``log_probs`` ``(T, N, C)``; ``targets`` ``(N, S)`` padded; the lengths as int arrays on the host.

    The backward is PyTorch's: ``exp(lp) - exp(log(sum of alpha beta over the positions of the class) + nll - lp)``,
    the gradient of the loss through a log-softmax, the form PyTorch gives for ``log_probs`` (a log-softmax's
    output, whose backward then leaves it as it is); 0 past a sample's input length, and for a sample whose loss
    ``zero_infinity`` set to 0."""

    raw = True
    backward_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        xp = xp_of(log_probs)
        lp = log_probs.astype(np.float64)
        t_max, n, _ = lp.shape
        s_max = 2 * int(target_lengths.max(initial=0)) + 1
        ext = np.full((n, s_max), blank, dtype=np.int64)
        host_targets = targets if targets.__class__ is np.ndarray else targets.get()
        for i in range(n):
            ext[i, 1:2 * int(target_lengths[i]):2] = host_targets[i, :int(target_lengths[i])]
        valid = np.arange(s_max)[None, :] < (2 * target_lengths[:, None] + 1)
        skip = np.zeros((n, s_max), dtype=bool)  # may come from s - 2: a label unlike the one two before
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        ext_d, valid_d, skip_d = xp.asarray(ext), xp.asarray(valid), xp.asarray(skip)
        rows = xp.arange(n)[:, None]
        emit = lp[:, rows, ext_d]  # (T, N, S): each position's label's log-probability at each time
        neg = -np.inf
        alpha = xp.full((t_max, n, s_max), neg)
        first = xp.full((n, s_max), neg)
        first[:, 0] = emit[0, :, 0]
        if s_max > 1:
            first[:, 1] = xp.where(xp.asarray(target_lengths) > 0, emit[0, :, 1], neg)
        alpha[0] = xp.where(valid_d, first, neg)
        for t in range(1, t_max):
            prev = alpha[t - 1]
            one = _shifted(xp, prev, 1)
            two = xp.where(skip_d, _shifted(xp, prev, 2), neg)
            alpha[t] = xp.where(valid_d, _logaddexp3(xp, prev, one, two) + emit[t], neg)
        last_t = xp.asarray(input_lengths - 1)
        end = xp.asarray(2 * target_lengths)
        final = alpha[last_t, xp.arange(n)]  # (N, S) at each sample's last time
        idx = xp.arange(n)
        a_end = final[idx, end]
        a_before = xp.where(end > 0, final[idx, xp.maximum(end - 1, 0)], neg)
        nll = -xp.logaddexp(a_end, a_before)
        inf = xp.isinf(nll)
        if zero_infinity:
            nll = xp.where(inf, 0.0, nll)
        ctx.saved = (lp, ext_d, valid_d, skip_d, alpha, emit, nll, inf)
        ctx.lengths = (input_lengths, target_lengths, blank, zero_infinity)
        return nll.astype(log_probs.dtype)

    @staticmethod
    def backward(ctx, g):
        lp, ext_d, valid_d, skip_d, alpha, emit, nll, inf = ctx.saved
        input_lengths, target_lengths, blank, zero_infinity = ctx.lengths
        xp = xp_of(lp)
        t_max, n, c = lp.shape
        s_max = ext_d.shape[1]
        neg = -np.inf
        skip_up = _shifted(xp, skip_d, -2, False)  # s + 2 may come back to s
        beta = xp.full((t_max, n, s_max), neg)
        lengths_d = xp.asarray(input_lengths)
        end = xp.asarray(2 * target_lengths)
        idx = xp.arange(n)
        for t in range(t_max - 1, -1, -1):
            last = lengths_d - 1 == t  # each sample's last time: its start of the recursion
            start = xp.full((n, s_max), neg)
            start[idx, end] = emit[t, idx, end]
            before = xp.where(end > 0, emit[t, idx, xp.maximum(end - 1, 0)], neg)
            start[idx, xp.maximum(end - 1, 0)] = xp.where(end > 0, before, start[idx, xp.maximum(end - 1, 0)])
            if t < t_max - 1:
                nxt = beta[t + 1]
                one = _shifted(xp, nxt, -1)
                two = xp.where(skip_up, _shifted(xp, nxt, -2), neg)
                step = _logaddexp3(xp, nxt, one, two) + emit[t]
            else:
                step = xp.full((n, s_max), neg)
            inside = (t < lengths_d)[:, None]
            beta[t] = xp.where(valid_d & inside, xp.where(last[:, None], start, step), neg)
        both = alpha + beta  # (T, N, S)
        top = both.max(axis=2, keepdims=True)
        top = xp.where(xp.isneginf(top), 0.0, top)
        onehot = (ext_d[:, :, None] == xp.arange(c)[None, None, :]) & valid_d[:, :, None]  # (N, S, C)
        with np.errstate(under="ignore", divide="ignore"):
            mass = xp.einsum("tns,nsc->tnc", xp.exp(both - top), onehot.astype(np.float64))
            lcab = xp.where(mass > 0, xp.log(xp.where(mass > 0, mass, 1.0)) + top, neg)
        grad = xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)
        grad = xp.where((xp.arange(t_max)[:, None] < lengths_d[None, :])[:, :, None], grad, 0.0)
        if zero_infinity:
            grad = xp.where(inf[None, :, None], 0.0, grad)
        return (grad * g[None, :, None]).astype(g.dtype)


def _times_grad_out(grad, gy, reduction):
    """ATen's last step of a margin loss's backward: the gradient worked out per unit output, times the output's
    gradient (one per sample for ``'none'``, else the one number)."""
    return grad * (gy.reshape(-1, 1) if reduction == "none" else gy)


def _as_matrix(x):
    """A vector as one row (the margin losses take either)."""
    return x.reshape(1, -1) if x.ndim == 1 else x


class SoftMarginLoss(Function):
    """``soft_margin_loss``: ``log1p(exp(-x y))``, reduced; one node as PyTorch's ``SoftMarginLossBackward0``
    (ATen's formulas: the loss overflows to inf where ``-x y`` is past exp's range, as PyTorch's), the target
    no edge (PyTorch refuses one that requires grad). The gradient is ATen's ``-y z / (1 + z)``, ``z = exp(-y x)``."""

    raw = True
    backward_name = "SoftMarginLossBackward0"
    nondiff = (1,)

    @staticmethod
    def forward(ctx, x, y, reduction):
        xp = xp_of(x)
        with np.errstate(over="ignore"):
            out = xp.log1p(xp.exp(-x * y))
        ctx.saved = (x, y)
        ctx.meta = reduction
        return _reduced(out, reduction)

    @staticmethod
    def backward(ctx, gy):
        x, y = ctx.saved
        xp = xp_of(gy)
        with np.errstate(over="ignore", invalid="ignore"):
            return soft_margin_grad(xp.exp, gy, x, y, ctx.meta, x.size), None


def soft_margin_grad(exp, gy, x, y, reduction, count):
    """ATen's soft_margin_loss_backward in the order it computes, ``-y z / (z + 1) g`` with ``z = exp(-y x)``
    (arrays, or Tensors: ``exp`` the function to use)."""
    norm = 1.0 / count if reduction == "mean" else 1.0
    z = exp(-y * x)
    return y * z * (-norm) / (z + 1) * gy


class MultiMarginLoss(Function):
    """``multi_margin_loss``: per sample ``sum_{j != y} max(0, margin - x[y] + x[j]) ** p`` (times the true
    class's ``weight``) over the classes, reduced; one node as PyTorch's ``MultiMarginLossBackward0``, ATen's
    gradient. Its own derivative is PyTorch's NotImplemented node (PyTorch has none)."""

    raw = True
    backward_name = "MultiMarginLossBackward0"
    nondiff = (1, 2)

    @staticmethod
    def forward(ctx, x, y, weight, p, margin, reduction):
        xp = xp_of(x)
        scalar = y.ndim == 0  # (a vector's 'none' loss keeps its one row, as PyTorch's; of a 0-d target, 0-d)
        y = y.reshape(-1)
        ctx.saved = (x, y, weight)
        ctx.meta = (p, margin, reduction)
        x = _as_matrix(x)
        rows = xp.arange(x.shape[0])
        z = margin - x[rows, y][:, None] + x
        h = xp.maximum(z, 0)
        if p == 2:
            h = h * h
        if weight is not None:
            h = h * weight[y][:, None]
        h[rows, y] = 0
        if reduction == "mean" and not x.shape[0]:  # (ATen's: the mean of no samples is 0 here)
            return xp.zeros((), dtype=x.dtype)
        out = _reduced(h.sum(axis=1) / x.shape[1], reduction)
        return out.reshape(()) if scalar and reduction == "none" else out

    @staticmethod
    def backward(ctx, gy):
        x, y, weight = ctx.saved
        if ctx.meta[2] == "none":
            gy = gy.reshape(-1)
        return multi_margin_grad(gy, x, y, weight, *ctx.meta), None, None


def multi_margin_grad(gy, x, y, weight, p, margin, reduction):
    """ATen's multi_margin_loss_backward: ``g`` (or ``2 g z`` for p = 2) to each wrong class inside the margin,
    minus their sum to the true class, ``g`` the output's gradient over the classes."""
    xp = xp_of(x)
    shape, x = x.shape, _as_matrix(x)
    n, c = x.shape
    rows = xp.arange(n)
    z = margin - x[rows, y][:, None] + x
    g = 1.0 / c / (n if reduction == "mean" and n else 1)
    h = (2 * g * z) if p == 2 else xp.full(x.shape, g, dtype=x.dtype)
    if weight is not None:
        h = h * weight[y][:, None]
    inside = z > 0
    inside[rows, y] = False
    h = xp.where(inside, h, x.dtype.type(0))
    h[rows, y] = 0 - h.sum(axis=1)  # (0 - 0 is +0, as ATen's running total that nothing was taken from)
    return _times_grad_out(h, gy, reduction).reshape(shape)


class MultilabelMarginLoss(Function):
    """``multilabel_margin_loss``: ``target`` lists each sample's classes (ended by the first -1); each pair of a
    listed class j and an unlisted one k adds ``max(0, 1 - x[j] + x[k])``, over the classes, reduced; one node
    as PyTorch's ``MultilabelMarginLossBackward0`` (a class listed twice counts twice, as ATen's loop). Its own
    derivative is PyTorch's NotImplemented node."""

    raw = True
    backward_name = "MultilabelMarginLossBackward0"
    nondiff = (1,)

    @staticmethod
    def forward(ctx, x, target, reduction):
        out = multilabel_pairs(_as_matrix(x), _as_matrix(target), None, reduction)
        ctx.saved = (x, target)
        ctx.meta = reduction
        out = _reduced(out, reduction)
        return out.reshape(()) if x.ndim == 1 else out  # (a vector's loss is one number, as PyTorch's)

    @staticmethod
    def backward(ctx, gy):
        x, target = ctx.saved
        grad = multilabel_pairs(_as_matrix(x), _as_matrix(target), gy, ctx.meta)
        return grad.reshape(x.shape), None


def multilabel_pairs(x, target, gy, reduction):
    """Per sample, the loss over the (listed, unlisted) pairs (``gy`` None), or the input's gradient: each pair
    inside the margin sends ``-g`` to the listed class and ``g`` to the unlisted one. One pass per target slot
    (as many as the longest list), each over all the samples at once."""
    xp = xp_of(x)
    n, c = x.shape
    rows = xp.arange(n)
    valid = (target >= 0).cumprod(axis=1).astype(bool)  # the slots before each sample's first -1
    listed = xp.zeros((n, c), dtype=bool)
    for s in range(c):
        listed[rows[valid[:, s]], target[valid[:, s], s]] = True
    out = xp.zeros(n, dtype=x.dtype) if gy is None else xp.zeros_like(x)
    g = 1.0 / c / (n if reduction == "mean" and n else 1)
    slots = int(valid.sum(axis=1).max()) if n else 0
    for s in range(slots):
        live = valid[:, s]
        j = xp.where(live, target[:, s], 0)
        z = 1 - x[rows, j][:, None] + x
        inside = (z > 0) & ~listed & live[:, None]
        if gy is None:
            out += xp.where(inside, z, x.dtype.type(0)).sum(axis=1)
        else:
            h = xp.where(inside, x.dtype.type(g), x.dtype.type(0))
            out += h
            out[rows, j] -= h.sum(axis=1)
    return out / c if gy is None else _times_grad_out(out, gy, reduction)
