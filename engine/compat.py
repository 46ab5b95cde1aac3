"""More of PyTorch's top-level functions, for scripts written against ``torch`` beyond the tutorial: the top-level
forms of ``nn.functional`` ops whose arguments differ from the functional ones (``torch.batch_norm``,
``torch.embedding(weight, indices)``, the losses with an integer ``reduction``), ``real``/``imag``/``conj``,
``fill``, ``range``, ``gradient`` (finite differences, as ``numpy.gradient``), the signal windows, ``histogram``,
``frobenius_norm``/``nuclear_norm``, ``empty_strided``, ``frombuffer``, DLPack exchange (``from_dlpack`` of a
PyTorch or NumPy tensor shares its memory, and ``torch.from_dlpack(t)`` of an engine tensor shares the engine's),
and PyTorch's refusals of the functions it removed in 1.9 (``torch.solve``, ``torch.eig``, ...), with its
messages, which say what replaces them."""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from . import creation
from . import dtypes as _dtypes
from . import functions as _fn
from .autograd import enable_grad, no_grad
from .backend import add_at, to_host, xp_of
from .errors import complex_refusal
from .nn import functional as F
from .tensor import Tensor, _check_same_device, _fill_recorded, _viewed, _wrap

__all__ = ["batch_norm", "instance_norm", "embedding", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
           "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
           "rms_norm", "pdist", "channel_shuffle", "constant_pad_nd", "adaptive_max_pool1d", "max_pool1d_with_indices",
           "real", "imag", "conj", "conj_physical", "view_as_real", "view_as_complex", "complex", "polar", "fill",
           "range", "gradient", "histogramdd", "svd_lowrank", "pca_lowrank", "hann_window", "hamming_window",
           "bartlett_window", "blackman_window", "kaiser_window", "histogram", "frobenius_norm", "nuclear_norm",
           "empty_strided", "empty_permuted", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "native_layer_norm", "native_group_norm", "native_batch_norm", "frombuffer", "from_dlpack", "to_dlpack",
           "solve", "eig", "lstsq", "matrix_rank", "symeig",
           "get_device", "is_inference", "typename", "is_storage", "is_warn_always_enabled", "set_warn_always",
           "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal"]

# (PyTorch's top-level losses take the reduction as its enum's number, and, called without one, reduce nothing)
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum"}


def _reduction(value):
    try:
        return _REDUCTIONS[value]
    except (KeyError, TypeError):
        raise ValueError(f"{value} is not a valid value for reduction") from None


# ------------------------------------------------------------------ nn.functional's ops in PyTorch's top-level order

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):  # noqa: A002
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,  # noqa: A002
                  cudnn_enabled=True):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding``: the table first (``F.embedding`` takes the indices first); ``padding_idx=-1``: none."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):  # noqa: A002
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):  # noqa: A002
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):  # noqa: A002
    """``torch.kl_div``: its ``reduction`` 'mean' (1) averages over every element (``F.kl_div`` warns of that)."""
    reduction = _reduction(reduction)
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):  # noqa: A002
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    return F.rms_norm(input, normalized_shape, weight, eps)


def pdist(input, p=2):  # noqa: A002
    return F.pdist(input, p)


def channel_shuffle(input, groups):  # noqa: A002
    return F.channel_shuffle(input, groups)


def constant_pad_nd(input, pad, value=0):  # noqa: A002
    return F.pad(input, list(pad), mode="constant", value=value)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """``torch.adaptive_max_pool1d``: the values and their indices (as ``return_indices=True``)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):  # noqa: A002
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)


# ------------------------------------------------------------------ tensors

def real(input):  # noqa: A002
    return input.real


def imag(input):  # noqa: A002
    return input.imag


def conj(input):  # noqa: A002
    return input.conj()


def conj_physical(input):  # noqa: A002
    return input.conj_physical()


def _tensor_argument(fn, name, position, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def view_as_real(input):  # noqa: A002
    """A complex tensor's parts along a new last dimension of size 2 (``[..., 0]`` real, ``[..., 1]`` imaginary),
    sharing its memory."""
    _tensor_argument("view_as_real", "input", 1, input)
    return _viewed(input, _fn.complex_ops.ViewAsReal.apply(input))


def view_as_complex(input):  # noqa: A002
    """A float tensor whose last dimension (of size 2, contiguous) holds (real, imaginary) pairs, as a complex
    tensor sharing its memory."""
    _tensor_argument("view_as_complex", "input", 1, input)
    return _viewed(input, _fn.complex_ops.ViewAsComplex.apply(input))


def complex(real, imag, *, out=None):  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + i imag`` (two float tensors of one dtype, broadcast)."""
    from ._out import written

    _tensor_argument("complex", "real", 1, real)
    _tensor_argument("complex", "imag", 2, imag)
    result = _fn.complex_ops.Complex.apply(real, imag)
    if out is not None and out.dtype != result.dtype:  # (ATen's words for complex's out)
        raise RuntimeError(f"Expected object of scalar type {_dtypes.scalar_name(result._data.dtype)} but got scalar "
                           f"type {_dtypes.scalar_name(out._data.dtype)} for argument 'out'")
    return written(result, out, "complex", (real, imag))


def polar(abs, angle):  # noqa: A002 - PyTorch's names
    """The complex tensor ``abs (cos angle + i sin angle)``."""
    _tensor_argument("polar", "abs", 1, abs)
    _tensor_argument("polar", "angle", 2, angle)
    return _fn.complex_ops.Polar.apply(abs, angle)


def fill(input, value):  # noqa: A002
    """A new tensor of ``input``'s shape, dtype and device, every element ``value`` (a number or a 0-d tensor,
    whose gradient it carries). Where ``input`` or the value requires a gradient, the result is in the graph as
    PyTorch's: one ``FillBackward0`` (``FillBackward1`` for a tensor value), ``input``'s gradient zeros."""
    tensor_value = isinstance(value, Tensor)
    if not (input._records(value) and (input.dtype.is_floating_point or input.is_complex())):
        return creation.zeros_like(input).fill_(value)
    if tensor_value and value.dim():
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                           f"dimensions.")
    if tensor_value and value._data.__class__ is not input._data.__class__:
        _check_same_device(input, value)
    return _fill_recorded(input if input.requires_grad else input.detach(), value, "FillBackward1", "FillBackward0")


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """``[start, end]`` by ``step``, the end included (PyTorch's deprecated ``torch.range``, with its warning), in
    the default float dtype unless ``dtype`` is given."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    count = builtins.max(int(math.floor((end - start) / step)) + 1, 0)
    dtype = dtype or _dtypes.get_default_dtype()
    values = creation.arange(count, dtype=_dtypes.float64, device=device) * step + start
    return values.to(dtype).requires_grad_(requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **_):
    """An uninitialised tensor of ``size`` with ``stride`` (the memory it needs allocated, as PyTorch's)."""
    size, stride = tuple(size), tuple(stride)
    need = 0 if 0 in size else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    base = creation.empty(need, dtype=dtype, device=device)
    out = base.as_strided(size, stride, 0)
    return out.requires_grad_(requires_grad) if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of ``size`` laid out in memory in the order ``physical_layout`` (a permutation of
    its dimensions, the outermost first): ``empty_permuted((2, 3, 4), (0, 2, 1))`` has strides (12, 1, 3)."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got {d} "
                               f"at index {i}).  NB: negative dims not currently supported; file an issue if you "
                               f"want it.")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    base = creation.empty(*[size[d] for d in order], dtype=dtype, device=device)
    out = base.permute(*np.argsort(order).tolist())
    return out.requires_grad_(requires_grad) if requires_grad else out


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):  # noqa: A002
    """``F.grid_sample`` with its modes as ATen's numbers: interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection (``grid_sampler_2d``/``_3d`` of a 4-D or 5-D input)."""
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise ValueError(f"grid_sampler: interpolation_mode must be 0, 1 or 2 and padding_mode 0, 1 or 2, got "
                         f"{interpolation_mode!r} and {padding_mode!r}")
    return F.grid_sample(input, grid, mode=_GRID_MODES[interpolation_mode], padding_mode=_GRID_PADDINGS[padding_mode],
                         align_corners=bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):  # noqa: A002
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):  # noqa: A002
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _statistics(x, dims, eps, recorded=False):
    """The mean and ``1 / sqrt(biased variance + eps)`` of ``x`` over ``dims`` (kept): what ATen's native norms save
    for their backward; not recorded (outputs without a gradient) unless ``recorded``."""
    with enable_grad() if recorded else no_grad():
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, correction=0)
        return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):  # noqa: A002
    """``(out, mean, rstd)``: ``F.layer_norm``'s output and the statistics of each normalised slice (shaped as the
    input with the normalised dimensions 1), as ATen's ``native_layer_norm``."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    n = len((normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape))
    mean, rstd = _statistics(input, tuple(builtins.range(input.dim() - n, input.dim())), eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):  # noqa: A002, N803 - ATen's names
    """``(out, mean, rstd)``: ``F.group_norm``'s output and each sample's and group's statistics ``(N, group)``, as
    ATen's ``native_group_norm`` (whose statistics, unlike the layer and batch norms', have their gradient)."""
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _statistics(input.reshape(N, group, C // group * HxW), 2, eps, recorded=True)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):  # noqa: A002
    """``(out, save_mean, save_invstd)``: ``F.batch_norm``'s output (the running statistics updated in training)
    and, in training, the batch's per-channel mean and ``1 / sqrt(biased variance + eps)``; empty in evaluation,
    as ATen's ``native_batch_norm``."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = creation.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = (0, *builtins.range(2, input.dim()))
    mean, rstd = _statistics(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of a Python object with the buffer protocol (``bytearray``, ``array``,
    ``mmap``), shared with it, as PyTorch's."""
    arr = np.frombuffer(buffer, dtype=_dtypes.to_dtype(dtype).np, count=count, offset=offset)
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to a "
                      "tensor.", UserWarning, stacklevel=2)
        arr.flags.writeable = False
    return _wrap(arr).requires_grad_(requires_grad) if requires_grad else _wrap(arr)


# ------------------------------------------------------------------ numerical gradient

def gradient(input, *, spacing=1, dim=None, edge_order=1):  # noqa: A002
    """The derivative of the samples ``input`` along each of ``dim`` (all by default) by second-order central
    differences inside and first- or second-order (``edge_order``) one-sided ones at the ends, as
    ``numpy.gradient``; ``spacing``: the samples' distance (a number, one per dimension), or their coordinates (a
    1-D tensor per dimension). One tensor per dimension, as a tuple; differentiable."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    nd = input.dim()
    spacing = 1 if spacing is None else spacing  # (None, as PyTorch's: unit spacing)
    dims = list(builtins.range(nd)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    for d in dims:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    dims = [d % nd for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    spacings = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(spacings) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"{len(dims)} but got a list of length {len(spacings)}")
    out = []
    for d, h in zip(dims, spacings):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        out.append(_gradient_along(input, d, h, edge_order))
    return tuple(out)


def _gradient_along(f, d, h, edge_order):
    def part(a, b):
        return f.narrow(d, a, b - a)

    n = f.shape[d]
    if isinstance(h, Tensor):
        x = h.to(f.dtype)
        shape = [1] * f.dim()
        shape[d] = -1
        dx = (x[1:] - x[:-1]).reshape(*shape[:d], -1, *shape[d + 1:])
        dx1, dx2 = dx.narrow(d, 0, n - 2), dx.narrow(d, 1, n - 2)
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = a * part(0, n - 2) + b * part(1, n - 1) + c * part(2, n)
        first_dx, last_dx = dx.narrow(d, 0, 1), dx.narrow(d, n - 2, 1)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / first_dx
            last = (part(n - 1, n) - part(n - 2, n - 1)) / last_dx
        else:
            d1, d2 = dx.narrow(d, 0, 1), dx.narrow(d, 1, 1)
            a0, b0, c0 = -(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2))
            first = a0 * part(0, 1) + b0 * part(1, 2) + c0 * part(2, 3)
            e1, e2 = dx.narrow(d, n - 3, 1), dx.narrow(d, n - 2, 1)
            a1, b1, c1 = e2 / (e1 * (e1 + e2)), -(e2 + e1) / (e1 * e2), (2.0 * e2 + e1) / (e2 * (e1 + e2))
            last = a1 * part(n - 3, n - 2) + b1 * part(n - 2, n - 1) + c1 * part(n - 1, n)
    else:
        h = float(h)
        inner = (part(2, n) - part(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(n - 1, n) - part(n - 2, n - 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2.0 * part(1, 2) - 0.5 * part(2, 3)) / h
            last = (0.5 * part(n - 3, n - 2) - 2.0 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
    return creation.cat([first, inner, last], dim=d)


# ------------------------------------------------------------------ signal windows

def _window(name, length, periodic, dtype, device, requires_grad, values):
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    dtype = dtype or _dtypes.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if length == 0:
        return creation.empty(0, dtype=dtype, device=device)
    if length == 1:
        return creation.ones(1, dtype=dtype, device=device)
    n = length + 1 if periodic else length
    w = values(np.arange(n, dtype=np.float64), n)[:length]
    return creation.tensor(w, dtype=dtype, device=device).requires_grad_(requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: 0.5 - 0.5 * np.cos(2 * np.pi * i / (n - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: alpha - beta * np.cos(2 * np.pi * i / (n - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: 1 - np.abs(2 * i / (n - 1) - 1))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: 0.42 - 0.5 * np.cos(2 * np.pi * i / (n - 1)) + 0.08 * np.cos(4 * np.pi * i / (n - 1)))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: np.i0(beta * np.sqrt(np.clip(1 - ((i - (n - 1) / 2) / ((n - 1) / 2)) ** 2, 0, None)))
                   / np.i0(beta))


# ------------------------------------------------------------------ histogram, norms

_Histogram = namedtuple("histogram", ["hist", "bin_edges"])


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)``: counts (or ``weight`` sums) of ``input``'s elements in ``bins`` equal bins over
    ``range`` (the data's by default) or between the given edges (a 1-D tensor), as ``numpy.histogram``."""
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {input.dtype}")
    xp = xp_of(input._data)
    data = input.detach()._data.reshape(-1)
    edges = bins.detach()._data if isinstance(bins, Tensor) else int(bins)
    w = None if weight is None else weight.detach()._data.reshape(-1)
    hist, bin_edges = xp.histogram(data, bins=edges, range=range, weights=w, density=density)
    return _Histogram(_wrap(hist.astype(input._data.dtype)), _wrap(bin_edges.astype(input._data.dtype)))


_Histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002, A001 - PyTorch's names
    """``(hist, bin_edges)``: the D-dimensional histogram of the points in ``input`` ``(..., D)``, as PyTorch's:
    ``bins`` a count for every dimension, one per dimension, or each dimension's edges (1-D tensors); ``range`` the
    outer edges ``[min_0, max_0, min_1, ...]`` (the data's by default, widened by 0.5 each way where they meet; a
    point outside is not counted); a point on an inner edge falls in the bin to its right, on the last edge in the
    last bin; ``weight`` (one per point) sums instead of counting; ``density`` divides by the total and the bins'
    volumes. One scatter-add on the device (the default range is read back to the host, as PyTorch reads it)."""
    if not input.is_floating_point():
        raise complex_refusal("histogramdd", input._data.dtype)
    d = input.shape[-1] if input.dim() else 1
    xp = xp_of(input._data)
    points = input.detach()._data.reshape(-1, d)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(per_dim) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} elements, "
                           f"but got {len(range)}")
    edges = []
    for i, b in enumerate(per_dim):
        if isinstance(b, Tensor):
            edges.append(b.detach().to(input.dtype))
            continue
        count = int(b)
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {i}")
        if range is not None:
            low, high = float(range[2 * i]), float(range[2 * i + 1])
            if low > high:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low} max {high} for "
                                   f"dimension {i}")
        elif points.shape[0] == 0:
            low, high = 0.0, 1.0
        else:
            low, high = (float(v) for v in to_host(xp.stack([points[:, i].min(), points[:, i].max()])))
            if not (math.isfinite(low) and math.isfinite(high)):
                raise RuntimeError(f"torch.histogramdd: dimension {i}'s range [{low}, {high}] is not finite")
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges.append(creation.linspace(low, high, count + 1, dtype=input.dtype, device=input.device))
    sizes = tuple(max(int(e.shape[0]) - 1, 0) for e in edges)
    flat = xp.zeros(points.shape[0], dtype=np.int64)
    inside = xp.ones(points.shape[0], dtype=bool)
    stride = 1
    for i in builtins.range(d - 1, -1, -1):  # (the last dimension fastest, as the histogram's C order)
        e, x = edges[i]._data, points[:, i]
        if sizes[i] == 0:
            inside &= False
            continue
        pos = xp.searchsorted(e, x, side="right") - 1
        pos = xp.where(x == e[-1], sizes[i] - 1, pos)  # (the last edge closes the last bin)
        inside &= (x >= e[0]) & (x <= e[-1]) & (pos >= 0) & (pos < sizes[i])
        flat += xp.clip(pos, 0, max(sizes[i] - 1, 0)) * stride
        stride *= sizes[i]
    values = (xp.ones(points.shape[0], dtype=points.dtype) if weight is None
              else weight.detach()._data.reshape(-1).astype(points.dtype))
    hist = xp.zeros(math.prod(sizes), dtype=points.dtype)
    if hist.size:
        add_at(hist, xp.where(inside, flat, 0), xp.where(inside, values, points.dtype.type(0)))
    hist = hist.reshape(sizes)
    if density and hist.size:
        volume = None
        for i, e in enumerate(edges):
            width = xp.diff(e._data).reshape([-1 if j == i else 1 for j in builtins.range(d)])
            volume = width if volume is None else volume * width
        hist = hist / hist.sum() / volume
    return _Histogramdd(_wrap(hist), tuple(edges))


def _approximate_basis(A, q, niter, M):  # noqa: N803 - Halko's names
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M: a random projection, then
    ``niter`` subspace iterations, each orthonormalised by QR (Halko, Martinsson and Tropp 2009, algorithm 4.4;
    PyTorch's ``get_approximate_basis``)."""
    from . import linalg

    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() or A.dtype in (_dtypes.float16, _dtypes.float32, _dtypes.float64) else \
        _dtypes.float32
    R = creation.randn(A.shape[-1], q, dtype=dtype, device=A.device)  # noqa: N806
    X = A @ R if M is None else A @ R - M @ R  # noqa: N806
    Q = linalg.qr(X).Q  # noqa: N806
    for _ in builtins.range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q  # noqa: N806
        Q = linalg.qr(X).Q  # noqa: N806
        X = A @ Q if M is None else A @ Q - M @ Q  # noqa: N806
        Q = linalg.qr(X).Q  # noqa: N806
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):  # noqa: N803 - PyTorch's names
    """``(U, S, V)`` with ``A - M ~ U diag(S) V^H`` of rank ``q``, by a randomised range finder and the SVD of the
    small projected matrix (Halko et al. 2009, algorithm 5.1; PyTorch's ``svd_lowrank``, random as its is: set the
    seed to repeat a result). Differentiable through its matrix products, QR and SVD."""
    from . import linalg

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)  # noqa: N806
    if m < n:
        A = A.mH  # noqa: N806
        M = None if M is None else M.mH  # noqa: N806
    Q = _approximate_basis(A, q, niter, M)  # noqa: N806
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M  # noqa: N806
    U, S, Vh = linalg.svd(B, full_matrices=False)  # noqa: N806
    U, V = Q @ U, Vh.mH  # noqa: N806
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):  # noqa: N803
    """``(U, S, V)`` of :func:`svd_lowrank` of ``A`` with its column means taken away (``center``): V's columns the
    principal directions, ``S ** 2 / (m - 1)`` the covariance's eigenvalues; ``q`` by default ``min(6, m, n)``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)


def frobenius_norm(input, dim=(-2, -1), keepdim=False):  # noqa: A002
    from . import linalg

    return linalg.vector_norm(input, 2, dim=dim, keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False):  # noqa: A002
    from . import linalg

    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else tuple(dim), keepdim=keepdim)


# ------------------------------------------------------------------ DLPack

def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory (``torch.utils.dlpack.to_dlpack``)."""
    return tensor._data.__dlpack__()


class _Capsule:
    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of ``ext_tensor``: any object with ``__dlpack__`` (a PyTorch, NumPy, CuPy or JAX
    array), or a DLPack capsule (of the host)."""
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    device_type = source.__dlpack_device__()[0]
    if device_type == 1:
        return _wrap(np.from_dlpack(source))
    from . import backend

    cupy = backend.get_cupy()
    if cupy is None:
        raise RuntimeError("from_dlpack: the tensor is on a GPU, and the engine has no CUDA device here")
    return _wrap(cupy.from_dlpack(source))


# ------------------------------------------------------------------ what PyTorch removed in 1.9: its refusals

def _removed(message):
    def refuse(*args, **kwargs):
        raise RuntimeError(message)

    return refuse


solve = _removed(
    "This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in favor of "
    "`torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU "
    "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
eig = _removed(
    "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns complex tensors "
    "of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) "
    "should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
lstsq = _removed(
    "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is deprecated in favor of "
    "`torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
    "in the returned tuple (although it returns other information about the problem).\n\nTo get the QR "
    "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals "
    "of the solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
    "residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
matrix_rank = _removed(
    "This function was deprecated since version 1.9 and is now removed.\nPlease use the `torch.linalg.matrix_rank` "
    "function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")
symeig = _removed(
    "This function was deprecated since version 1.9 and is now removed. The default behavior has changed from using "
    "the upper triangular portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
    "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
    "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, "
    "UPLO='U' if upper else 'L')")


# ------------------------------------------------------------------ small answers

def get_device(input) -> int:  # noqa: A002
    return input.get_device()


def is_inference(input) -> bool:  # noqa: A002
    return input.is_inference()


def typename(obj) -> str:
    """``torch.typename``: ``'torch.FloatTensor'`` for a tensor (its legacy type name), else the object's class."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def is_storage(obj) -> bool:
    return False


_warn_always = [False]
_interop_threads = [1]


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def set_warn_always(b: bool) -> None:
    _warn_always[0] = bool(b)


def get_num_interop_threads() -> int:
    return _interop_threads[0]


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop_threads[0] = num


def set_flush_denormal(mode: bool) -> bool:
    """``False``: the engine cannot make NumPy flush denormal numbers to zero (PyTorch answers False too where the
    CPU cannot)."""
    return False


# ------------------------------------------------------------------ their Tensor methods


def _new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False, layout=None,
                       pin_memory=False):
    """``empty_strided`` of this tensor's dtype and device unless given."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device, requires_grad=requires_grad)


def _histogram(self, bins, *, range=None, weight=None, density=False):  # noqa: A001, A002
    return histogram(self, bins, range=range, weight=weight, density=density)


Tensor.new_empty_strided = _new_empty_strided
Tensor.histogram = _histogram
