"""Reductions: sum, mean, max/min (whole tensor, or along a dimension)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import kernels
from ..autograd.function import Function, apply_several, complex_words, holomorphic
from ..backend import fill, xp_of
from ..errors import complex_refusal


def _axes(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    elif not len(dim):  # PyTorch's reductions read an empty list of dimensions as all of them
        return tuple(range(ndim))
    out, seen = [], set()
    for d in dim:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        if d % max(ndim, 1) in seen:
            raise RuntimeError(f"dim {d % max(ndim, 1)} appears multiple times in the list of dims")
        seen.add(d % max(ndim, 1))
        if ndim:  # (a 0-d tensor takes dim 0 or -1, as PyTorch's: reduced over no axis, it stays itself)
            out.append(d % ndim)
    return tuple(out)


def _nonempty(shape, axes, fn):
    """PyTorch's refusal of a max/min-like reduction over an empty dimension (which has no identity)."""
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {a} to have non-zero size.")


_NO_DIM = ("(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
           "'dim' argument.")


def _expand_back(gy, shape, axes, keepdim):
    """``gy`` of a reduction, broadcast back to the input's shape."""
    if axes is None and keepdim:
        gy = gy.reshape(())  # x.sum(keepdim=True): one element, kept with a dimension of 1 per input dimension
    if axes is None and gy.__class__ is np.ndarray:  # loss.sum(): the common case, without the calls below
        out = np.empty(shape, dtype=gy.dtype)
        out.fill(gy)
        return out
    xp = xp_of(gy)
    if axes is None:
        return fill(xp.empty(shape, dtype=gy.dtype), gy)  # empty + fill: half of full()'s time, and writable
    if not keepdim and len(shape):
        gy = xp.expand_dims(gy, axes)
    return xp.broadcast_to(gy, shape)


class Sum(Function):
    raw = True
    complex_ok = True

    def backward_name(self):
        return "SumBackward0" if self.meta[1] is None else "SumBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        """``dtype``: the sum's own, where NumPy's would differ (an int32 sum asked for as int32: NumPy's is int64)."""
        if dim is None and not keepdim:
            ctx.meta = (x.shape, None, False)
            # np.add.reduce: ndarray.sum() without the Python function NumPy's method goes through (same dtypes)
            return np.add.reduce(x, axis=None, dtype=dtype) if x.__class__ is np.ndarray else x.sum(dtype=dtype)
        axes = _axes(dim, x.ndim)
        ctx.meta = (x.shape, axes, keepdim)
        return x.sum(axis=axes, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, gy):
        shape, axes, keepdim = ctx.meta
        return _expand_back(gy, shape, axes, keepdim)


class Nansum(Function):
    """The sum of the elements that are not NaN (over ``dim``, or all), one node as PyTorch's
    ``NansumBackward0``; the gradient of a NaN element is 0, the others' the sum's."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: RuntimeError(
        f"nansum on {device.upper()} does not support complex inputs"))
    backward_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        axes = _axes(dim, x.ndim)
        ctx.meta = (x.shape, axes, keepdim)
        ctx.saved = (x,)
        xp = xp_of(x)
        return xp.where(xp.isnan(x), 0, x).sum(axis=axes, keepdims=keepdim)  # (NumPy's nansum; CuPy's too)

    @staticmethod
    def backward(ctx, gy):
        shape, axes, keepdim = ctx.meta
        x = ctx.saved[0]
        xp = xp_of(gy)
        return _expand_back(gy, shape, axes, keepdim) * ~xp.isnan(x)  # (PyTorch's product: -0 where g < 0)


class Mean(Function):
    raw = True
    complex_ok = True

    def backward_name(self):
        return "MeanBackward0" if self.meta[1] is None else "MeanBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        axes = _axes(dim, x.ndim)
        ctx.meta = (x.shape, axes, keepdim)
        if axes is None:
            ctx.count = x.size
        else:
            count = 1
            for a in axes:
                count *= x.shape[a]
            ctx.count = count
        if not ctx.count:  # NaN, as PyTorch's, without NumPy's warning of an empty mean
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return x.mean(axis=axes, keepdims=keepdim)
        return x.mean(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, gy):
        shape, axes, keepdim = ctx.meta
        return _expand_back(gy / ctx.count, shape, axes, keepdim)


_EVENLY_NAMES = {"max": "MaxBackward1", "min": "MinBackward1", "median": "MedianBackward0",
                 "nanmedian": "NanmedianBackward0"}


def tie_mask(x, out):
    """Where ``x`` equals the reduction's result ``out`` (where ``x`` is NaN, for a NaN result: PyTorch's
    ``evenly_distribute_backward``), worked out on the device, without a branch on the result."""
    xp = xp_of(x)
    if x.dtype.kind != "f":
        return x == out
    return xp.where(xp.isnan(out), xp.isnan(x), x == out)


class MaxMin(Function):
    """Max, min, median or nanmedian of all elements (``value``: the median, worked out by the caller); ties share
    the gradient evenly, and a NaN result's gradient goes evenly to the NaNs, as in PyTorch."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: complex_refusal(f"{kwargs.get('mode', 'max')}_all",
                                                                                dtype))

    def backward_name(self):  # all elements: PyTorch's second overload
        return _EVENLY_NAMES[self.mode]

    @staticmethod
    def forward(ctx, x, mode="max", value=None):
        if value is not None:
            out = value
        else:
            if x.size == 0:
                raise RuntimeError(mode + _NO_DIM)
            out = x.max() if mode == "max" else x.min()
        ctx.saved = (x, out)
        ctx.mode = mode
        return out

    @staticmethod
    def backward(ctx, gy):
        x, out = ctx.saved
        mask = tie_mask(x, out)
        return mask * (gy / mask.sum())


class MaxMinDim(Function):
    """Values of max (or min) along ``dim``; the gradient goes to the index that was picked."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: RuntimeError(
        f"{kwargs.get('mode', 'max')}(): does not support complex input"))

    def backward_name(self):
        return "MaxBackward0" if self.mode == "max" else "MinBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim=False, mode="max"):
        xp = xp_of(x)
        (axis,) = _axes(dim, x.ndim)
        _nonempty(x.shape, (axis,), mode)
        idx = (x.argmax if mode == "max" else x.argmin)(axis=axis)
        idx_k = xp.expand_dims(idx, axis)
        values = xp.take_along_axis(x, idx_k, axis=axis)
        ctx.saved = (idx_k,)
        ctx.meta = (x.shape, axis, keepdim)
        ctx.indices = idx_k if keepdim else idx
        ctx.mode = mode
        return values if keepdim else values.squeeze(axis)

    @staticmethod
    def backward(ctx, gy):
        (idx_k,) = ctx.saved
        shape, axis, keepdim = ctx.meta
        xp = xp_of(gy)
        if not keepdim:
            gy = xp.expand_dims(gy, axis)
        positions = xp.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        return (positions == idx_k) * gy


class Softmax(Function):
    """``softmax`` (``log=False``) or ``log_softmax`` along one dimension, as PyTorch's single nodes: the row's
    maximum taken out first, so that ``exp`` cannot overflow (it cancels in the result), then
    ``e / sum(e)`` or ``shifted - log(sum(e))``. The backward reads only the output:
    ``out * (gy - sum(gy * out))``, or ``gy - exp(out) * sum(gy)``."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: complex_refusal(
        "log_softmax_kernel_impl" if kwargs.get("log") else "softmax_kernel_impl", dtype))

    def backward_name(self):
        return "LogSoftmaxBackward0" if self.log else "SafeSoftmaxBackward0" if self.safe else "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, log=False, safe=False):
        xp = xp_of(x)
        ctx.log, ctx.meta, ctx.safe = log, dim, safe
        ctx.op_label = "LogSoftmax" if log else "Softmax"  # what the graph panel calls the node
        scalar = x.ndim == 0
        if scalar:  # one element: the dimension PyTorch takes is the element itself
            x = x.reshape(1)
        half = x.dtype == np.float16  # (in float32, rounded once, as PyTorch's CPU kernel: float16 sums drift)
        if half:
            x = x.astype(np.float32)
        if x.size == 0:
            out = x.copy()
        else:  # a row of -inf only: NaN, as PyTorch's, without NumPy's warning
            with np.errstate(invalid="ignore"):
                shifted = x - x.max(axis=dim, keepdims=True)
                e = xp.exp(shifted)
                total = e.sum(axis=dim, keepdims=True)
                out = shifted - xp.log(total) if log else e / total
            if safe:  # ATen's _safe_softmax (attention's): a row of -inf only gives zeros, not NaN
                out = xp.where((x == -np.inf).all(axis=dim, keepdims=True), out.dtype.type(0), out)
        if half:
            out = out.astype(np.float16)
        ctx.saved = (out,)
        return out.reshape(()) if scalar else out

    @staticmethod
    def backward(ctx, gy):
        (out,) = ctx.saved
        dim = ctx.meta
        shape = gy.shape
        gy = gy.reshape(out.shape)
        half = gy.dtype == np.float16  # (in float32 too, as the forward)
        if half:
            gy, out = gy.astype(np.float32), out.astype(np.float32)
        if ctx.log:
            gx = gy - xp_of(out).exp(out) * gy.sum(axis=dim, keepdims=True)
        else:
            gx = out * (gy - (gy * out).sum(axis=dim, keepdims=True))
        return (gx.astype(np.float16) if half else gx).reshape(shape)


class NativeLayerNorm(Function):
    """``layer_norm`` as one node, PyTorch's ``NativeLayerNormBackward0``: each sample normalised over its last
    ``nd`` dimensions (``(x - mean) * rstd``, ``rstd = 1 / sqrt(biased variance + eps)``), then scaled by ``weight``
    and shifted by ``bias`` where given. The backward reads the normalised values and ``rstd``:
    ``rstd * (g - mean(g) - xhat * mean(g * xhat))`` with ``g = gy * weight``, and the weight's and bias's
    gradients summed over the samples."""

    raw = True
    complex_name = "LayerNormKernelImpl"
    edge_args = 3  # input, weight, bias: PyTorch's three, an absent one an empty edge
    backward_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, nd=1, eps=1e-5):
        xp = xp_of(x)
        ctx.op_label = "LayerNorm"
        axes = tuple(range(x.ndim - nd, x.ndim))
        cols = math.prod(x.shape[x.ndim - nd:])
        fused = kernels.layer_norm(x, weight, bias, cols, eps)  # (C, where built: one pass, rows across threads)
        if fused is not None:
            out, xhat, rstd = fused
            rstd = rstd.reshape(x.shape[:x.ndim - nd] + (1,) * nd)
        else:
            mean = x.mean(axis=axes, keepdims=True)
            centred = x - mean
            rstd = 1 / xp.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
            xhat = centred * rstd
            if weight is None:  # (a copy where there is no affine part: the output is the caller's to write in
                out = xhat.copy() if bias is None else xhat + bias  # place, and PyTorch's saves no output)
            else:
                out = xhat * weight if bias is None else xhat * weight + bias
        ctx.saved = (xhat, rstd, weight)
        ctx.meta = (axes, x.ndim - nd)
        ctx.eps = eps  # (for the recorded backward of create_graph=True: engine.autograd.higher)
        return out

    @staticmethod
    def backward(ctx, gy):
        xhat, rstd, weight = ctx.saved
        axes, lead = ctx.meta
        need_x, need_w, need_b = ctx.needs_input_grad
        shape = xhat.shape[lead:]
        fused = kernels.layer_norm_backward(gy, xhat, rstd, weight, math.prod(shape), need_x, need_w, need_b)
        if fused is not None:  # (C, where built: one pass, the parameters' sums in double)
            gx, gw, gb = fused
            return gx, None if gw is None else gw.reshape(shape), None if gb is None else gb.reshape(shape)
        gx = None
        if need_x:
            g = gy if weight is None else gy * weight
            gx = rstd * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True))
        samples = tuple(range(lead))
        gw = (gy * xhat).sum(axis=samples) if need_w else None
        gb = gy.sum(axis=samples) if need_b else None
        return gx, gw, gb


class Logsumexp(Function):
    """``log(sum(exp(x)))`` over ``axes``, shifted by the maximum (0 where that is infinite) so that it neither
    overflows nor underflows, one node as PyTorch's ``LogsumexpBackward0``, whose gradient is ``grad * exp(x -
    result)``. Keeps the input and the result, as PyTorch's does."""

    raw = True
    complex_ok = True  # (shifted by the largest real part, as PyTorch's; the gradient complex-analytic)
    backward_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim=False):
        xp = xp_of(x)
        if x.size == 0:
            m = xp.zeros([1 if i in axes else n for i, n in enumerate(x.shape)], dtype=x.dtype)
        else:
            m = (x.real if x.dtype.kind == "c" else x).max(axis=axes, keepdims=True)
            m = xp.where(xp.isinf(m), m.dtype.type(0), m)
        with np.errstate(divide="ignore"):  # (log(0) = -inf: an empty sum, or every element -inf)
            out = xp.log(xp.exp(x - m).sum(axis=axes, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))
        ctx.saved = (x, out)
        ctx.meta = (axes, keepdim)
        return out

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x, out = ctx.saved
        axes, keepdim = ctx.meta
        xp = xp_of(gy)
        if not keepdim:
            gy, out = xp.expand_dims(gy, axes), xp.expand_dims(out, axes)
        return gy * xp.exp(x - out)


class VarStd(Function):
    """The variance (``std=False``) or standard deviation over ``axes`` (None: every element), divided by ``n -
    correction`` (NaN where that is not positive), one node as PyTorch's ``VarBackward0`` / ``StdBackward0``, with
    its gradients: ``2 / (n - correction) * grad * (x - mean)``, the standard deviation's through ``grad / (2 std)``
    held at 0 where the deviation is 0. Keeps the input, as PyTorch's does (and the result, for the deviation)."""

    raw = True

    def backward_name(self):
        return "StdBackward0" if self.meta[3] else "VarBackward0"

    @staticmethod
    def forward(ctx, x, axes=None, correction=1, keepdim=False, std=False):
        xp = xp_of(x)
        n = x.size if axes is None else math.prod(x.shape[a] for a in axes)
        if n:
            centred = x - x.mean(axis=axes, keepdims=True)
            total = (centred * centred).sum(axis=axes, keepdims=keepdim)
        else:  # (no element to take the mean of: NaN, without NumPy's warning about an empty mean)
            total = fill(xp.empty(x.sum(axis=axes, keepdims=keepdim).shape, dtype=x.dtype), np.nan)
        out = xp.asarray(total * (1.0 / (n - correction) if n > correction else float("nan")), dtype=x.dtype)
        if x.size // max(out.size, 1) <= correction:  # PyTorch's warning, with its reduction factor
            warnings.warn(f"{'std' if std else 'var'}(): degrees of freedom is <= 0. Correction should be strictly "
                          "less than the reduction factor (input numel divided by output numel).", UserWarning,
                          stacklevel=2)
        if std:
            out = xp.sqrt(out)
        ctx.saved = (x, out if std else None)
        ctx.meta = (axes, correction, keepdim, std, n)
        ctx.op_label = "Std" if std else "Var"
        return out

    @staticmethod
    def backward(ctx, gy):
        x, result = ctx.saved
        axes, correction, keepdim, std, n = ctx.meta
        xp = xp_of(gy)
        if axes is not None and not keepdim:
            gy = xp.expand_dims(gy, axes)
            result = xp.expand_dims(result, axes) if result is not None else None
        if std:  # grad / (2 std), 0 where std is 0
            gy = xp.where(result == 0, gy.dtype.type(0), gy / (result * 2))
        mean = x.mean(axis=axes, keepdims=True)
        dof = n - correction
        if dof <= 0 and axes is None:  # PyTorch's: NaN where x is its mean (inf * 0), else inf
            return gy * xp.where(x == mean, np.nan, np.inf).astype(x.dtype)
        norm = 2.0 / dof if dof else math.inf
        return (norm * gy * (x - mean)).astype(x.dtype, copy=False)


class VarMean(Function):
    """``var_mean`` and ``std_mean``: the variance (or standard deviation) and the mean over the same dimensions,
    two outputs of one node, as PyTorch's ``VarMeanBackward0`` / ``StdMeanBackward0``; the input's gradient is the
    sum of :class:`VarStd`'s and :class:`Mean`'s (zeros for an output no path used)."""

    raw = True
    apply = classmethod(apply_several)

    def backward_name(self):
        return "StdMeanBackward0" if self.meta[3] else "VarMeanBackward0"

    @staticmethod
    def forward(ctx, x, axes=None, correction=1, keepdim=False, std=False):
        spread = VarStd.forward(ctx, x, axes, correction, keepdim, std)
        mean = Mean.forward(ctx.__class__.__new__(Mean), x, axes, keepdim)
        ctx.op_label = "StdMean" if std else "VarMean"
        return spread, np.asarray(mean) if isinstance(mean, np.generic) else mean

    @staticmethod
    def backward(ctx, g_spread, g_mean):
        gx = VarStd.backward(ctx, g_spread)
        axes, _, keepdim, _, n = ctx.meta
        return gx + _expand_back(g_mean / n, gx.shape, axes, keepdim)


class AMinMax(Function):
    """``aminmax``: the minimum and the maximum over ``dim`` (None: every element), two outputs of one node, as
    PyTorch's ``AminmaxBackward0``; each output's gradient shared evenly among the elements equal to it, as
    :class:`AMaxMin`'s (zeros for an output no path used)."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: complex_refusal(f"aminmax_{device}", dtype))
    apply = classmethod(apply_several)
    backward_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        if x.size == 0 and dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if x.size == 0 and x.ndim and x.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        ctx.parts = (AMaxMin.__new__(AMaxMin), AMaxMin.__new__(AMaxMin))
        ctx.op_label = "Aminmax"
        low = AMaxMin.forward(ctx.parts[0], x, dim, keepdim, "min")
        high = AMaxMin.forward(ctx.parts[1], x, dim, keepdim, "max")
        return tuple(np.asarray(v) if isinstance(v, np.generic) else v for v in (low, high))

    @staticmethod
    def backward(ctx, g_low, g_high):
        low, high = ctx.parts
        return AMaxMin.backward(low, g_low) + AMaxMin.backward(high, g_high)


class NativeGroupNorm(Function):
    """``group_norm`` as one node, PyTorch's ``NativeGroupNormBackward0`` (edges: input, weight, bias): each sample's
    channels in ``groups`` groups, each group normalised by its mean and biased variance (``rstd = 1 / sqrt(var +
    eps)``), then scaled and shifted per channel. The backward is layer norm's over each group, with the channel's
    weight in ``g = grad * weight``: ``rstd * (g - mean(g) - xhat * mean(g * xhat))``; the weight's and bias's
    gradients summed over the samples and positions."""

    raw = True
    edge_args = 3
    backward_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, groups=1, eps=1e-5):
        xp = xp_of(x)
        ctx.op_label = "GroupNorm"
        ctx.dtypes = (x.dtype, None if weight is None else weight.dtype, None if bias is None else bias.dtype)
        if x.dtype == np.float16:  # (ATen's opmath: half computed in float32, each result rounded once)
            x, weight, bias = (None if a is None else a.astype(np.float32) for a in (x, weight, bias))
        n, c = x.shape[0], x.shape[1]
        xg = x.reshape(n, groups, -1)
        mean = xg.mean(axis=-1, keepdims=True)
        centred = xg - mean
        rstd = 1 / xp.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
        xhat = (centred * rstd).reshape(x.shape)
        per_channel = (1, c) + (1,) * (x.ndim - 2)
        out = xhat * weight.reshape(per_channel) if weight is not None else xhat.copy()
        if bias is not None:
            out += bias.reshape(per_channel)
        ctx.saved = (xhat, rstd, weight)
        ctx.meta = (groups, eps)
        return out.astype(ctx.dtypes[0], copy=False)

    @staticmethod
    def backward(ctx, gy):
        xhat, rstd, weight = ctx.saved
        groups, _ = ctx.meta
        gy = gy.astype(xhat.dtype, copy=False)
        need_x, need_w, need_b = ctx.needs_input_grad
        n, c = gy.shape[0], gy.shape[1]
        per_channel = (1, c) + (1,) * (gy.ndim - 2)
        axes = (0,) + tuple(range(2, gy.ndim))
        gx = None
        if need_x:
            g = (gy if weight is None else gy * weight.reshape(per_channel)).reshape(n, groups, -1)
            xg = xhat.reshape(n, groups, -1)
            gx = (rstd * (g - g.mean(axis=-1, keepdims=True) - xg * (g * xg).mean(axis=-1, keepdims=True))
                  ).reshape(gy.shape)
        gw = (gy * xhat).sum(axis=axes) if need_w else None
        gb = gy.sum(axis=axes) if need_b else None
        return tuple(None if g is None else g.astype(d, copy=False) for g, d in zip((gx, gw, gb), ctx.dtypes))


class NativeBatchNorm(Function):
    """``batch_norm`` as one node, PyTorch's ``NativeBatchNormBackward0`` (edges: input, weight, bias): each channel
    (dimension 1) normalised by ``mean`` and ``var`` (the caller's: the batch's in training, the running averages
    else), then scaled and shifted, as ATen's CPU kernel writes it: ``x * alpha + beta`` with ``alpha = invstd *
    weight`` and ``beta = bias - mean * alpha``. The backward is PyTorch's: in training the statistics depend on
    the input, ``(g - mean(g) - (x - mean) * dotp * invstd^2 / n) * invstd * weight`` with ``dotp = sum(g (x -
    mean))``; else ``g * invstd * weight``. The input is kept, as PyTorch keeps it."""

    raw = True
    edge_args = 3
    backward_name = "NativeBatchNormBackward0"
    saved_uses = ((1, 2), None)  # the input is read for the weight's gradient (and the input's own in training)

    @staticmethod
    def forward(ctx, x, weight, bias, mean, var, training=True, eps=1e-5):
        xp = xp_of(x)
        ctx.op_label = "BatchNorm"
        shape = (1, -1) + (1,) * (x.ndim - 2)
        invstd = 1 / xp.sqrt(var + eps)
        alpha = invstd if weight is None else invstd * weight
        beta = -mean * alpha if bias is None else bias - mean * alpha
        out = x * alpha.reshape(shape)
        out += beta.reshape(shape)
        ctx.saved = (x, weight)
        ctx.meta = (mean, invstd, training, eps)
        return out

    @staticmethod
    def backward(ctx, gy):
        x, weight = ctx.saved
        mean, invstd, training, _ = ctx.meta
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        fused = kernels.batch_norm_backward(gy, x, mean, invstd, weight, training, need_x)
        if fused is not None:  # (C, where built: the channels' sums in double, then gx, in two passes)
            gx, sum_gy, dotp = fused
            gw = (dotp * invstd).astype(x.dtype) if need_w else None
            return gx, gw, sum_gy.astype(x.dtype) if need_b else None, None, None
        shape = (1, -1) + (1,) * (x.ndim - 2)
        axes = (0,) + tuple(range(2, x.ndim))
        sum_gy = gy.sum(axis=axes)
        centred = x - mean.reshape(shape)
        dotp = (gy * centred).sum(axis=axes) if (need_w or (need_x and training)) else None
        gx = None
        if need_x:
            scale = invstd if weight is None else invstd * weight
            if training:
                n = x.size // x.shape[1] if x.shape[1] else 0
                k = dotp * invstd * invstd / max(n, 1)
                gx = (gy - (sum_gy / max(n, 1)).reshape(shape) - centred * k.reshape(shape)) * scale.reshape(shape)
            else:
                gx = gy * scale.reshape(shape)
        gw = dotp * invstd if need_w else None
        gb = sum_gy if need_b else None
        return gx, gw, gb, None, None


class Prod(Function):
    """The product over ``dim`` (every element when None). Each element's gradient is the product of the others,
    made from the products before it and after it (exclusive running products), so a zero among the inputs gives
    the exact gradient where ``out / x`` would divide by it."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return "ProdBackward0" if self.dim is None else "ProdBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.saved = (x,)
        ctx.dim, ctx.keepdim = dim, keepdim
        # (in the input's dtype, as PyTorch's: NumPy's product of an int8 is int64, of a float16 in float32;
        # the ufunc itself, so that an overflow's warning is the engine's, which it leaves unsaid)
        if x.__class__ is np.ndarray:
            return np.multiply.reduce(x, axis=dim, keepdims=keepdim, dtype=x.dtype)
        return x.prod(axis=dim, keepdims=keepdim, dtype=x.dtype)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x = ctx.saved[0]
        xp = xp_of(gy)
        dim = ctx.dim
        if x.size == 0:  # (an empty product is 1: no element, no gradient)
            return xp.zeros_like(x)
        if x.ndim == 0:  # (a 0-d tensor along dim 0 or -1: itself)
            return xp.ones_like(x) * gy
        if dim is None:
            flat = x.reshape(-1)
            return (gy * _others_product(xp, flat)).reshape(x.shape)
        if not ctx.keepdim:
            gy = xp.expand_dims(gy, dim)
        moved = xp.moveaxis(x, dim, -1)
        return gy * xp.moveaxis(_others_product(xp, moved), -1, dim)


def _others_product(xp, x):
    """For each element along the last axis, the product of the others there."""
    ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    before = xp.concatenate([ones, xp.cumprod(x[..., :-1], axis=-1)], axis=-1)
    after = xp.concatenate([xp.cumprod(x[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    return before * after


def vector_norm(x, p, axes, keepdim):
    """The ``p``-norm of ``x`` over ``axes`` (all when None), raw arrays (VectorNorm's forward, and the
    distances'); a complex x's is its moduli's."""
    xp = xp_of(x)
    if x.dtype == np.float16:  # (summed in float32 and rounded once, as PyTorch's: squares overflow float16)
        return vector_norm(x.astype(np.float32), p, axes, keepdim).astype(np.float16)
    a = abs(x)
    if x.dtype.kind == "c":
        return vector_norm(a, p, axes, keepdim)
    if p == 2:
        return xp.sqrt((x * x).sum(axis=axes, keepdims=keepdim))
    if p == 1:
        return a.sum(axis=axes, keepdims=keepdim)
    if p == np.inf:
        return a.max(axis=axes, keepdims=keepdim)
    if p == -np.inf:
        return a.min(axis=axes, keepdims=keepdim)
    if p == 0:
        return (x != 0).sum(axis=axes, keepdims=keepdim).astype(x.dtype)
    return (a ** p).sum(axis=axes, keepdims=keepdim) ** (1.0 / p)


def vector_norm_grad(gy, x, norm, p, axes, keepdim):
    """PyTorch's norm_backward on raw arrays: a zero vector's gradient is 0, the infinity norm's ties share it;
    None for the 0-"norm" (piecewise constant). A complex x: its moduli's times sgn(x) (0 at 0)."""
    xp = xp_of(gy)
    if x.dtype == np.float16:
        g = vector_norm_grad(gy.astype(np.float32), x.astype(np.float32), norm.astype(np.float32), p, axes, keepdim)
        return None if g is None else g.astype(np.float16)
    if x.dtype.kind == "c":
        a = abs(x)
        g = vector_norm_grad(gy, a, norm, p, axes, keepdim)
        with np.errstate(divide="ignore", invalid="ignore"):
            return None if g is None else g * xp.where(a == 0, x.dtype.type(0), x / a)
    if not keepdim:
        keep = tuple(range(x.ndim)) if axes is None else axes
        gy, norm = xp.expand_dims(gy, keep), xp.expand_dims(norm, keep)
    zero = gy.dtype.type(0)
    if p == 0:
        return None  # piecewise constant: no gradient at all, as PyTorch's (x.grad stays None)
    if p == 1:
        return xp.sign(x) * gy
    if p == 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            return gy * xp.where(norm == 0, zero, x / norm)
    a = abs(x)
    if p in (np.inf, -np.inf):
        mask = (a == norm) | xp.isnan(a)
        return xp.sign(x) * (gy / mask.sum(axis=axes, keepdims=True) * mask)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p < 1:
            scaled = xp.sign(x) * xp.where(x == 0, zero, a ** (p - 1))
            return scaled * gy * norm ** (1 - p)
        scaled = xp.sign(x) * a ** (p - 1) if p < 2 else x * a ** (p - 2)
        return scaled * xp.where(norm == 0, zero, gy / norm ** (p - 1))


class VectorNorm(Function):
    """The ``ord``-norm of the elements over ``dim`` (all when None): 2 (the default), 1, +-inf, 0 (the count of
    nonzeros) or any other order, with PyTorch's backward: a zero vector's norm gets a zero gradient, not the NaN
    of the chain rule through ``sqrt(0)``, and the infinity norm's ties share theirs."""

    raw = True
    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, ord=2.0, dim=None, keepdim=False):  # noqa: A002 - PyTorch's name
        axes = _axes(dim, x.ndim)
        if x.size == 0 and (ord < 0 or ord == np.inf):  # (a maximum, a minimum or 1/0 of nothing: no identity)
            p = str(int(ord)) if math.isfinite(ord) and ord == int(ord) else f"{ord:g}"
            if axes is None or (not x.ndim and axes == ()):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because the "
                                   "operation does not have an identity")
            empty = [a for a in axes if x.shape[a] == 0]
            if empty:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on the dimension {empty[0]} "
                                   "because this dimension is empty and the operation does not have an identity")
        out = vector_norm(x, ord, axes, keepdim)
        ctx.saved = (x, out)
        ctx.meta = (ord, axes, keepdim)
        ctx.op_label = "Norm"
        return out

    @staticmethod
    def backward(ctx, gy):
        x, norm = ctx.saved
        p, axes, keepdim = ctx.meta
        return vector_norm_grad(gy, x, norm, p, axes, keepdim)


class AMaxMin(Function):
    """``amax``/``amin`` over ``dim`` (an int, a tuple, or every dimension): ties share the gradient evenly, as
    PyTorch's (``max(dim)``'s gradient goes to the one index it returns)."""

    raw = True
    complex_error = complex_words(lambda dtype, kwargs, device: complex_refusal(
        f"{kwargs.get('mode', 'max')}_values_{device}", dtype))

    def backward_name(self):
        return "AmaxBackward0" if self.mode == "max" else "AminBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, mode="max"):
        axes = _axes(dim, x.ndim) if dim is not None and dim != () else None
        if x.size == 0:
            if axes is None:
                raise RuntimeError(f"a{mode}" + _NO_DIM)
            _nonempty(x.shape, axes, f"a{mode}")
        out = (x.max if mode == "max" else x.min)(axis=axes, keepdims=keepdim)
        ctx.saved = (x, out)
        ctx.meta = (axes, keepdim)
        ctx.mode = mode
        ctx.op_label = "Amax" if mode == "max" else "Amin"
        return out

    @staticmethod
    def backward(ctx, gy):
        x, out = ctx.saved
        axes, keepdim = ctx.meta
        xp = xp_of(gy)
        if not keepdim:
            keep = tuple(range(x.ndim)) if axes is None else axes
            out, gy = xp.expand_dims(out, keep), xp.expand_dims(gy, keep)
        mask = x == out
        return mask * (gy / mask.sum(axis=axes, keepdims=True))


class Renorm(Function):
    """``renorm``: each slice along ``dim`` whose ``p``-norm is over ``maxnorm`` scaled by ATen's factor,
    ``maxnorm / (norm + 1e-7)`` (in the input's dtype), one node as PyTorch's ``RenormBackward0``, whose gradient is
    ATen's renorm_backward: the factor's own derivative through the norm where the slice was scaled."""

    raw = True
    complex_ok = True  # (a complex slice's norm is its moduli's; the factor is real)
    backward_name = "RenormBackward0"

    @staticmethod
    def forward(ctx, x, p, dim, maxnorm):
        xp = xp_of(x)
        axes = tuple(i for i in range(x.ndim) if i != dim)
        norm = vector_norm(x, p, axes, True)
        t = norm.dtype.type
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = xp.where(norm > t(maxnorm), t(maxnorm) / (norm + t(1e-7)), t(1))
        ctx.saved = (x,)
        ctx.meta = (p, axes, maxnorm)
        return x * factor

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved
        p, axes, maxnorm = ctx.meta
        xp = xp_of(gy)
        norm = vector_norm(x, p, axes, True)
        inner = (x.conj() * gy).real if x.dtype.kind == "c" else x * gy  # (PyTorch's: the real part, for a norm)
        inner = inner.sum(axis=axes, keepdims=True)
        nb = vector_norm_grad(inner, x, norm, p, axes, True)
        if nb is None:
            nb = xp.zeros_like(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1 / (norm + 1e-7)
            factor = inv * maxnorm
            return xp.where(norm > maxnorm, factor * gy - (factor * inv) * nb, gy)
