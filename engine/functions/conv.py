"""Convolution and pooling over the last one, two or three dimensions (``(N, C, *spatial)``).

Each kernel offset is one strided slice of the (padded) input, so the same code runs on NumPy and CuPy: the
convolution gathers the slices into columns (im2col) and makes one matrix product per group; pooling takes the
maximum or the sum slice by slice. Every backward adds its slices back, so overlapping windows sum their
gradients. Geometry (sizes, padding, strides) is checked and resolved in ``engine.nn.functional``; these take it
as tuples, one entry per spatial dimension.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import kernels as _kernels
from .. import threads as _threads
from ..autograd.function import Function, holomorphic
from ..backend import add_at, xp_of
from .arithmetic import dot2


def _offsets(kernel):
    return itertools.product(*(range(k) for k in kernel))


def _window(offset, dilation, stride, out):
    """The slices of the padded input that kernel ``offset`` meets, one per output position."""
    return tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in zip(offset, dilation, stride, out))


def _pad(xp, x, pads, value):
    """``x`` with ``pads`` ((lo, hi) per spatial dimension) of ``value`` around its last dimensions."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = x.shape[: x.ndim - len(pads)]
    size = x.shape[x.ndim - len(pads):]
    out = xp.full(lead + tuple(n + lo + hi for n, (lo, hi) in zip(size, pads)), value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, pads))] = x
    return out


def _unpad(g, pads):
    """The part of a padded gradient that lies over the input."""
    if not any(lo or hi for lo, hi in pads):
        return g
    return g[(Ellipsis,) + tuple(slice(lo, g.shape[g.ndim - len(pads) + i] - hi) for i, (lo, hi) in enumerate(pads))]


def _columns(xp, xpad, kernel, dilation, stride, out):
    """im2col: ``(C, *K, N, *out)``, one row per input channel and kernel offset, one column per output position,
    from the padded input ``(N, C, *S)``."""
    n, c = xpad.shape[:2]
    cols = xp.empty((c,) + tuple(kernel) + (n,) + tuple(out), dtype=xpad.dtype)
    for offset in _offsets(kernel):
        cols[(slice(None),) + offset] = xpad[(slice(None), slice(None)) + _window(offset, dilation, stride, out)
                                             ].swapaxes(0, 1)
    return cols


def _add_columns(xp, cols, pad_shape, kernel, dilation, stride, out):
    """col2im, :func:`_columns` undone: each column added back where it was taken from, so overlapping windows
    sum (``(C, *K, N, *out)`` into zeros of the padded input's shape)."""
    gpad = xp.zeros(pad_shape, dtype=cols.dtype)
    for offset in _offsets(kernel):
        gpad[(slice(None), slice(None)) + _window(offset, dilation, stride, out)] += \
            cols[(slice(None),) + offset].swapaxes(0, 1)
    return gpad


def _im2col(xp, x, pads, kernel, dilation, stride, out):
    """:func:`_columns` of ``x`` padded by ``pads`` with zeros (in one C pass where :func:`engine.kernels.im2col`
    applies)."""
    cols = _kernels.im2col(x, pads, kernel, dilation, stride, out)
    return _columns(xp, _pad(xp, x, pads, 0), kernel, dilation, stride, out) if cols is None else cols


def _col2im(xp, cols, shape, pads, kernel, dilation, stride, out):
    """:func:`_add_columns` less the padding: the gradient of the input of ``shape`` that :func:`_im2col` read (in
    one C pass where :func:`engine.kernels.col2im` applies)."""
    gx = _kernels.col2im(cols, shape, pads, kernel, dilation, stride, out)
    if gx is not None:
        return gx
    return _unpad(_add_columns(xp, cols, _padded(shape, pads), kernel, dilation, stride, out), pads)


def _padded(shape, pads):
    """The shape ``(N, C, *S)`` with ``pads`` ((lo, hi) per spatial dimension) added."""
    return tuple(shape[:2]) + tuple(n + lo + hi for n, (lo, hi) in zip(shape[2:], pads))


def _mm(a, b):
    """A 2-D matrix product: the engine's threaded one on the CPU, cuBLAS (capturable) on a GPU."""
    return _threads.dot(a, b) if a.__class__ is np.ndarray else dot2(a, b)


class Convolution(Function):
    """``conv1d/2d/3d``: input ``(N, C, *S)``, weight ``(O, C / groups, *K)``, bias ``(O,)`` or None."""

    raw = True
    complex_ok = True  # (bilinear: a complex input and weight's gradients are the real formulas' conjugated)
    edge_args = 3  # input, weight, bias (an edge even when None, as in PyTorch's ConvolutionBackward0)
    # the input's columns are read for the weight's gradient; the weight is checked always and the input itself,
    # kept by reference, for the weight's gradient: a write into either before backward is refused as PyTorch's
    # convolution refuses it
    saved_uses = ((1,), None, (1,))
    backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, groups):
        xp = xp_of(x)
        n, c = x.shape[:2]
        o, kernel = w.shape[0], w.shape[2:]
        pad_shape = _padded(x.shape, padding)
        out = tuple((size - d * (k - 1) - 1) // s + 1
                    for size, k, d, s in zip(pad_shape[2:], kernel, dilation, stride))
        cols = _im2col(xp, x, padding, kernel, dilation, stride, out)
        g = groups
        # (the sizes spelled out: an empty batch leaves -1 undecidable)
        cols = cols.reshape(g, (c // g) * math.prod(kernel), n * math.prod(out))
        w2 = w.reshape(g, o // g, (c // g) * math.prod(kernel))
        y = _mm(w2[0], cols[0])[None] if g == 1 else w2 @ cols  # (g, O / g, N * out)
        y = xp.ascontiguousarray(y.reshape((o, n) + out).swapaxes(0, 1))
        if b is not None:
            y += b.reshape((1, o) + (1,) * len(out))
        ctx.saved = (cols, w2, x)
        ctx.meta = (x.shape, pad_shape, padding, stride, dilation, kernel, out, w.shape)
        return y

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        cols, w2, _ = ctx.saved
        x_shape, pad_shape, padding, stride, dilation, kernel, out, w_shape = ctx.meta
        need_x, need_w, need_b = ctx.needs_input_grad
        xp = xp_of(gy)
        g, og = w2.shape[:2]
        n, c = x_shape[:2]
        gy2 = xp.ascontiguousarray(gy.swapaxes(0, 1)).reshape(g, og, n * math.prod(out))  # (g, O / g, N * out)
        gx = gw = gb = None
        if need_w:
            if g == 1:  # (as the transpose of columns x gradient: OpenBLAS makes that one in 2/3 of the time)
                gw = _mm(cols[0], gy2[0].T).T.reshape(w_shape)
            else:
                gw = (gy2 @ cols.swapaxes(1, 2)).reshape(w_shape)
        if need_b:
            gb = gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
        if need_x:
            if g == 1:
                gcols = _mm(w2[0].T, gy2[0])
            else:
                gcols = w2.swapaxes(1, 2) @ gy2
            gcols = gcols.reshape((c,) + kernel + (n,) + out)
            gx = _col2im(xp, gcols, x_shape, padding, kernel, dilation, stride, out)
        return gx, gw, gb


class ConvTranspose(Function):
    """``conv_transpose1d/2d/3d``, the convolution's gradient with respect to its input run forward (a "deconvolution":
    each input position spreads its kernel over the output, at ``stride`` apart): input ``(N, C_in, *S)``, weight
    ``(C_in, C_out / groups, *K)``, bias ``(C_out,)`` or None; ``padding`` trims the output each side and
    ``output_padding`` adds to its far side. The backward is the convolution's forward (for the input) and its
    weight gradient."""

    raw = True
    complex_ok = True
    edge_args = 3  # input, weight, bias (an edge even when None, as in PyTorch's ConvolutionBackward0)
    saved_uses = ((1,), None, (1,))  # as Convolution's: a copy of the input, the weight, the input itself
    backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, output_padding, dilation, groups):
        xp = xp_of(x)
        n, c_in = x.shape[:2]
        kernel, g = w.shape[2:], groups
        c_out = w.shape[1] * g
        size = x.shape[2:]
        full = tuple((i - 1) * s + d * (k - 1) + 1 + op
                     for i, s, d, k, op in zip(size, stride, dilation, kernel, output_padding))
        w2 = w.reshape(g, c_in // g, (c_out // g) * math.prod(kernel))  # (g, C_in / g, C_out / g * K)
        x2 = xp.ascontiguousarray(x.swapaxes(0, 1)).reshape(g, c_in // g, n * math.prod(size))  # (g, C_in / g, N * S)
        cols = _mm(w2[0].T, x2[0])[None] if g == 1 else w2.swapaxes(1, 2) @ x2
        cols = cols.reshape((c_out,) + kernel + (n,) + size)
        pads = tuple((p, p) for p in padding)
        y = xp.ascontiguousarray(_col2im(xp, cols, (n, c_out) + tuple(f - 2 * p for f, p in zip(full, padding)),
                                         pads, kernel, dilation, stride, size))
        if b is not None:
            y += b.reshape((1, c_out) + (1,) * len(size))
        ctx.saved = (x2, w2, x)
        ctx.meta = (x.shape, w.shape, pads, stride, dilation, kernel, size)
        return y

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x2, w2, _ = ctx.saved
        x_shape, w_shape, pads, stride, dilation, kernel, size = ctx.meta
        need_x, need_w, need_b = ctx.needs_input_grad
        xp = xp_of(gy)
        g = w2.shape[0]
        n = x_shape[0]
        gx = gw = gb = None
        if need_x or need_w:
            cols = _im2col(xp, gy, pads, kernel, dilation, stride, size)
            cols = cols.reshape(g, w2.shape[2], n * math.prod(size))  # (g, C_out / g * K, N * S)
            if need_x:
                gx = _mm(w2[0], cols[0])[None] if g == 1 else w2 @ cols  # (g, C_in / g, N * S)
                gx = xp.ascontiguousarray(gx.reshape((x_shape[1], n) + tuple(size)).swapaxes(0, 1))
            if need_w:
                gw = (_mm(cols[0], x2[0].T).T[None] if g == 1 else x2 @ cols.swapaxes(1, 2)).reshape(w_shape)
        if need_b:
            gb = gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
        return gx, gw, gb


def pool_geometry(size, kernel, stride, padding, dilation, ceil_mode):
    """Output sizes of a pooling and the padding each side (the right side grown for ``ceil_mode``'s last window),
    by PyTorch's rule: with ``ceil_mode`` a last window that would start past the input and its left padding is
    dropped."""
    outs, pads = [], []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        o = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        outs.append(o)
        pads.append((p, max(p, (o - 1) * s + d * (k - 1) + 1 - n - p)))
    return tuple(outs), tuple(pads)


def _max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    """The maxima of each window and the offset (row-major in the kernel) each came from: the first maximum, or
    a NaN where the window holds one (PyTorch's rule)."""
    xp = xp_of(x)
    nd = len(kernel)
    out, pads = pool_geometry(x.shape[-nd:], kernel, stride, padding, dilation, ceil_mode)
    if nd == 2:  # (in C where it was built: the same picks in one pass; None for its backward's padded shape)
        picked = _kernels.max_pool2d(x, out, kernel, stride, pads, dilation)
        if picked is not None:
            return picked[0], picked[1], out, pads, None
    xpad = _pad(xp, x, pads, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min)
    best = arg = None
    for i, offset in enumerate(_offsets(kernel)):
        v = xpad[(Ellipsis,) + _window(offset, dilation, stride, out)]
        if best is None:
            best = v.copy()
            arg = xp.zeros(v.shape, dtype=np.int32)
            continue
        take = v > best
        if v.dtype.kind == "f":
            take |= v != v
        best = xp.where(take, v, best)
        arg = xp.where(take, np.int32(i), arg)
    return best, arg, out, pads, xpad.shape


def max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """Where each maximum lies in the input, as PyTorch's ``return_indices`` gives it: the flat index within each
    channel's spatial dimensions."""
    xp = xp_of(x)
    nd = len(kernel)
    _, arg, out, pads, _ = _max_pool(x, kernel, stride, padding, dilation, ceil_mode)
    flat = xp.zeros(arg.shape, dtype=np.int64)
    rest = arg.astype(np.int64)
    for i in reversed(range(nd)):
        k = rest % kernel[i]
        rest //= kernel[i]
        shape = [1] * arg.ndim
        shape[arg.ndim - nd + i] = out[i]
        start = (xp.arange(out[i], dtype=np.int64) * stride[i] - padding[i]).reshape(shape)
        place = math.prod(x.shape[x.ndim - nd + i + 1:])
        flat += (start + k * dilation[i]) * place
    return flat


class MaxPool(Function):
    """``max_pool2d/3d`` over the last two or three dimensions; the gradient goes to each window's maximum."""

    raw = True

    def backward_name(self):
        return f"MaxPool{len(self.meta[0])}DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, ceil_mode=False):
        best, arg, out, pads, pad_shape = _max_pool(x, kernel, stride, padding, dilation, ceil_mode)
        ctx.saved = (arg,)
        ctx.meta = (kernel, stride, dilation, out, pads, pad_shape)
        ctx.shape = x.shape
        return best

    @staticmethod
    def backward(ctx, gy):
        (arg,) = ctx.saved
        kernel, stride, dilation, out, pads, pad_shape = ctx.meta
        if pad_shape is None:  # (picked in C: its backward too)
            return _kernels.max_pool2d_backward(gy, arg, ctx.shape, kernel, stride, pads, dilation)
        xp = xp_of(gy)
        gpad = xp.zeros(pad_shape, dtype=gy.dtype)
        zero = gy.dtype.type(0)
        for i, offset in enumerate(_offsets(kernel)):
            gpad[(Ellipsis,) + _window(offset, dilation, stride, out)] += xp.where(arg == i, gy, zero)
        return _unpad(gpad, pads)


def _divisors(size, kernel, stride, padding, out, count_include_pad, xp=np):
    """Per spatial dimension, how many elements each window averages: the window clipped to the padded input
    (``count_include_pad``) or to the input itself, as PyTorch's average pooling counts them."""
    counts = []
    for n, k, s, p, o in zip(size, kernel, stride, padding, out):
        start = xp.arange(o) * s - p
        end = xp.minimum(start + k, n + p)
        counts.append(end - start if count_include_pad else xp.minimum(end, n) - xp.maximum(start, 0))
    return counts


def _truncated_quotient(xp, a, b):
    """``a / b`` of integers rounded towards zero (C's division; Python's ``//`` floors)."""
    q = xp.floor_divide(a, b)
    inexact = (a - q * b) != 0
    return q + (inexact & ((a < 0) != (xp.asarray(b) < 0))).astype(q.dtype)


class AvgPool(Function):
    """``avg_pool2d/3d``: the mean of each window (its sum over a divisor: the window's count, or the one given)."""

    raw = True

    def backward_name(self):
        return f"AvgPool{len(self.meta[0])}DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, ceil_mode=False, count_include_pad=True, divisor_override=None):
        xp = xp_of(x)
        nd = len(kernel)
        dilation = (1,) * nd
        size = x.shape[-nd:]
        out, pads = pool_geometry(size, kernel, stride, padding, dilation, ceil_mode)
        if divisor_override is not None:
            divisor = divisor_override
        else:
            counts = _divisors(size, kernel, stride, padding, out, count_include_pad)
            if all((c == c[0]).all() for c in counts):  # geometry only, on the host: one number for every window
                divisor = math.prod(int(c[0]) for c in counts)
            else:  # made where the data is, with no copy from the host
                divisor = None
                for i, c in enumerate(_divisors(size, kernel, stride, padding, out, count_include_pad, xp=xp)):
                    c = c.reshape([-1 if j == i else 1 for j in range(nd)]).astype(x.dtype)
                    divisor = c if divisor is None else divisor * c
        xpad = _pad(xp, x, pads, 0)
        total = None
        for offset in _offsets(kernel):
            v = xpad[(Ellipsis,) + _window(offset, dilation, stride, out)]
            total = v.copy() if total is None else total.__iadd__(v)
        ctx.meta = (kernel, stride, dilation, out, pads, xpad.shape, divisor)
        if x.dtype.kind in "iu":  # (int64: the sum over the divisor truncated towards zero, in integers, as ATen's)
            return _truncated_quotient(xp, total, divisor)
        if isinstance(divisor, int):
            return total / x.dtype.type(divisor)
        return total / divisor

    @staticmethod
    def backward(ctx, gy):
        kernel, stride, dilation, out, pads, pad_shape, divisor = ctx.meta
        xp = xp_of(gy)
        g = gy / (gy.dtype.type(divisor) if isinstance(divisor, int) else divisor)
        gpad = xp.zeros(pad_shape, dtype=gy.dtype)
        for offset in _offsets(kernel):
            gpad[(Ellipsis,) + _window(offset, dilation, stride, out)] += g
        return _unpad(gpad, pads)


def _adaptive_matrix(xp, size, out, dtype):
    """``(out, size)``: row ``i`` is 1 over the ``i``-th adaptive window (from ``floor(i * size / out)`` to
    ``ceil((i + 1) * size / out)``), 0 elsewhere; and each window's length."""
    i = xp.arange(out).reshape(-1, 1)
    start = (i * size) // out
    end = ((i + 1) * size + out - 1) // out
    j = xp.arange(size).reshape(1, -1)
    return ((j >= start) & (j < end)).astype(dtype), (end - start).reshape(-1).astype(dtype)


class AdaptiveAvgPool(Function):
    """``adaptive_avg_pool2d/3d``: the output size is given and the windows follow (they may overlap, and differ
    in length by one): the sum of each window over its length, one spatial dimension at a time."""

    raw = True

    def backward_name(self):
        return f"AdaptiveAvgPool{len(self.meta)}DBackward0"

    @staticmethod
    def forward(ctx, x, output_size):
        xp = xp_of(x)
        nd = len(output_size)
        mats = []
        y = x
        for i, o in enumerate(output_size):
            axis = x.ndim - nd + i
            m, lengths = _adaptive_matrix(xp, x.shape[axis], o, x.dtype)
            mats.append((m, lengths))
            y = xp.moveaxis(xp.moveaxis(y, axis, -1) @ m.T / lengths, -1, axis)
        ctx.meta = tuple(mats)
        return xp.ascontiguousarray(y)

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        nd = len(ctx.meta)
        g = gy
        for i, (m, lengths) in enumerate(ctx.meta):
            axis = gy.ndim - nd + i
            g = xp.moveaxis((xp.moveaxis(g, axis, -1) / lengths) @ m, -1, axis)
        return xp.ascontiguousarray(g)


class Im2Col(Function):
    """``F.unfold`` (``fold=False``): the sliding windows of ``(N, C, *S)`` as columns ``(N, C * prod(K), L)``; or
    ``F.fold`` (``fold=True``): such columns added back into ``(N, C, *output_size)``. Each is the other's
    backward."""

    raw = True
    complex_ok = True  # (a rearrangement and its sums: the gradient goes back as it is, complex or not)

    def backward_name(self):
        return "Col2ImBackward0" if self.fold else "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride, fold=False, output_size=None):
        xp = xp_of(x)
        ctx.fold = fold
        ctx.op_label = "Fold" if fold else "Unfold"
        pads = tuple((p, p) for p in padding)
        if not fold:
            n, c = x.shape[:2]
            pad_shape = _padded(x.shape, pads)
            out = tuple((size - d * (k - 1) - 1) // s + 1
                        for size, k, d, s in zip(pad_shape[2:], kernel, dilation, stride))
            ctx.meta = (x.shape, pad_shape, pads, kernel, dilation, stride, out)
            cols = _im2col(xp, x, pads, kernel, dilation, stride, out)  # (C, *K, N, *out)
            cols = cols.reshape((c * math.prod(kernel), n, math.prod(out)))
            return xp.ascontiguousarray(cols.swapaxes(0, 1))
        n, ck, _ = x.shape
        c = ck // math.prod(kernel)
        pad_shape = (n, c) + tuple(o + 2 * p for o, p in zip(output_size, padding))
        out = tuple((size - d * (k - 1) - 1) // s + 1 for size, k, d, s in zip(pad_shape[2:], kernel, dilation, stride))
        ctx.meta = ((n, c) + tuple(output_size), pad_shape, pads, kernel, dilation, stride, out)
        cols = x.swapaxes(0, 1).reshape((c,) + tuple(kernel) + (n,) + out)
        return xp.ascontiguousarray(_col2im(xp, cols, ctx.meta[0], pads, kernel, dilation, stride, out))

    @staticmethod
    def backward(ctx, gy):
        shape, pad_shape, pads, kernel, dilation, stride, out = ctx.meta
        xp = xp_of(gy)
        n, c = shape[:2]
        if not ctx.fold:
            cols = gy.swapaxes(0, 1).reshape((c,) + tuple(kernel) + (n,) + out)
            return _col2im(xp, xp.ascontiguousarray(cols), shape, pads, kernel, dilation, stride, out)
        cols = _im2col(xp, gy, pads, kernel, dilation, stride, out)
        return xp.ascontiguousarray(cols.reshape((c * math.prod(kernel), n, math.prod(out))).swapaxes(0, 1))


class Resample(Function):
    """``interpolate``'s nearest, linear and cubic modes as one node, as PyTorch's (``UpsampleNearest2DBackward0``,
    ``UpsampleBilinear2DBackward0``, ...; ``name``): along each resized dimension in turn (``axes``: ``(axis, input
    size, taps)``, the last dimension first), each output the sum of its taps (:func:`resample_tap`: indices that
    never decrease, and weights, None for nearest, shaped to broadcast along the axis).

    Backward takes the transpose of each dimension's map, the first dimension first: on the CPU, a product with the
    map as a dense (outputs x inputs) matrix, where it has at most :data:`DENSE_LIMIT` entries and the gradient is
    finite (a product would spread a NaN along the whole row, where PyTorch's stays at its taps); else per tap one
    sum over each run of outputs that read the same input (``reduceat``). The composite it replaced recorded an
    index_select, a product and a sum per tap; at (8, 32, 32, 32) to twice the size its step took 36 ms (bilinear),
    17 ms (nearest)."""

    raw = True

    def backward_name(self):
        return self.op_name

    @staticmethod
    def forward(ctx, x, axes, name):
        ctx.axes = axes
        ctx.op_name = name
        ctx.dense = None
        xp = xp_of(x)
        for axis, _, taps in axes:
            total = None
            for tap in taps:
                term = xp.take(x, tap[0], axis=axis)
                if tap[1] is not None:
                    term = term * tap[1]
                total = term if total is None else total + term
            x = total
        return x

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        g = gy
        # (on a GPU, where asking would wait for the device, always the runs: their speed there is unmeasured)
        finite = xp is np and bool(np.isfinite(gy).all())
        for k in range(len(ctx.axes) - 1, -1, -1):
            axis, n, taps = ctx.axes[k]
            o = g.shape[axis]
            if finite and n * o <= DENSE_LIMIT:
                m = _dense_map(ctx, k, xp, g.dtype)  # (o, n)
                if axis == g.ndim - 1:
                    g = g @ m
                elif axis == g.ndim - 2:
                    g = m.T @ g
                else:
                    g = xp.moveaxis(m.T @ xp.moveaxis(g, axis, -2), -2, axis)
                continue
            shape = list(g.shape)
            shape[axis] = n
            gx = xp.zeros(shape, dtype=g.dtype)
            into = [slice(None)] * g.ndim
            for _, weight, (starts, firsts), _, _ in taps:
                into[axis] = firsts
                gx[tuple(into)] += xp.add.reduceat(g * weight if weight is not None else g, starts, axis=axis)
            g = gx
        return g


DENSE_LIMIT = 1 << 21  # entries of a dimension's map (8 MB in float32) past which backward sums runs of taps instead


def _dense_map(ctx, k, xp, dtype):
    """The map of ``ctx.axes[k]`` as a dense (outputs x inputs) matrix, made once per node."""
    if ctx.dense is None:
        ctx.dense = {}
    key = (k, dtype)
    m = ctx.dense.get(key)
    if m is None:
        _, n, taps = ctx.axes[k]
        o = taps[0][3].size
        dense = np.zeros((o, n), dtype=np.float64)
        rows = np.arange(o)
        for _, _, _, index, weight in taps:
            np.add.at(dense, (rows, index), 1.0 if weight is None else weight)
        m = ctx.dense[key] = xp.asarray(dense.astype(dtype))
    return m


def resample_tap(xp, index, weight=None, shape=None, dtype=None):
    """A :class:`Resample` tap: the indices (non-decreasing) on ``xp``; the weights (a host array, one per output),
    on ``xp`` in ``dtype`` and ``shape`` (to broadcast along the axis); where each run of equal indices starts, with
    its index; and the host indices and weights (for the dense map)."""
    index = np.asarray(index, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]]) if index.size else index
    on_device = None if weight is None else xp.asarray(weight.reshape(shape).astype(dtype))
    return (xp.asarray(index), on_device, (xp.asarray(starts), xp.asarray(index[starts])), index,
            None if weight is None else weight.astype(dtype).astype(np.float64))


def _adaptive_max_windows(xp, x, sizes, out, lead, cells):
    """(values, flat places) of adaptive max pooling, a window at a time: its slice, its first maximum (the first
    NaN, as PyTorch's) and that place as a flat index of the input's last dimensions."""
    windows = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(sizes, out)]
    values = xp.empty(lead + (cells,), dtype=x.dtype)
    where = xp.empty(lead + (cells,), dtype=np.int64)
    for j, spans in enumerate(itertools.product(*windows)):
        part = x[(Ellipsis,) + tuple(slice(a, b) for a, b in spans)]
        flat = part.reshape(lead + (-1,))
        local = flat.argmax(-1)  # (the first maximum; the first NaN, as PyTorch's)
        values[..., j] = xp.take_along_axis(flat, local[..., None], -1)[..., 0]
        index = 0
        for k, ((a, b), n) in enumerate(zip(spans, sizes)):  # the window's place as a flat index of the input's
            inner = math.prod(b2 - a2 for a2, b2 in spans[k + 1:])
            index = index * n + (local // inner) % (b - a) + a
        where[..., j] = index
    return values, where


class AdaptiveMaxPool(Function):
    """``adaptive_max_pool2d/3d``: the maximum of each of ``out`` windows spread over the last dimensions (their
    starts and ends PyTorch's: ``floor(i n / o)`` to ``ceil((i + 1) n / o)``), one node as PyTorch's
    ``AdaptiveMaxPool2DBackward0``, which keeps each window's first maximum (``ctx.indices``, flat over the last
    dimensions, as PyTorch's indices; a NaN is the maximum). Backward adds each output's gradient at its maximum (a
    place two windows share gets both), where a slice, a max and a stack per window were recorded before."""

    raw = True

    def backward_name(self):
        return f"AdaptiveMaxPool{len(self.out)}DBackward0"

    @staticmethod
    def forward(ctx, x, out):
        xp = xp_of(x)
        nd = len(out)
        sizes, lead = x.shape[-nd:], x.shape[:-nd]
        cells = math.prod(out)
        fused = _kernels.adaptive_max_pool(x, out)  # (C, where built: one pass over the planes or volumes)
        if fused is not None:
            values, where = fused
        else:
            values, where = _adaptive_max_windows(xp, x, sizes, out, lead, cells)
        ctx.out = tuple(out)
        ctx.shape = x.shape
        ctx.indices = where.reshape(lead + tuple(out))
        ctx.saved = (where,)
        return values.reshape(lead + tuple(out))

    @staticmethod
    def backward(ctx, gy):
        (where,) = ctx.saved
        xp = xp_of(gy)
        nd = len(ctx.out)
        lead, total = ctx.shape[:-nd], math.prod(ctx.shape[-nd:])
        rows = math.prod(lead)
        g = gy.reshape(rows, -1)
        places = where.reshape(rows, -1)
        if xp is np:  # (one bincount over every row's places, offset per row: no Python loop, no add.at)
            offsets = (np.arange(rows, dtype=np.int64) * total)[:, None]
            gx = np.bincount((places + offsets).ravel(), weights=g.ravel(), minlength=rows * total)
            return gx.astype(gy.dtype, copy=False).reshape(ctx.shape)
        gx = xp.zeros((rows, total), dtype=gy.dtype)
        add_at(gx, (xp.arange(rows)[:, None], places), g)  # (atomic adds on the device: no host sync)
        return gx.reshape(ctx.shape)
