"""The functional forms of the Tensor methods: ``torch.mm(a, b)``, ``torch.exp(x)``, ... (``engine`` re-exports
them). Each calls the method, so there is one door per op."""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from . import creation
from . import dtypes as _dtypes
from ._out import written as _written
from .backend import resolve as _resolve
from .functions import BlockDiag, Cdist, Einsum, EuclideanDist
from .tensor import Tensor, _scalar_node
from .tensor_math import tensordot as _tensordot

_into = _written  # (result, out, name, inputs=(), exact=False): out= with PyTorch's checks (engine/_out.py)


def _two_tensors_or_refuse(name, input, other, second="other"):  # noqa: A002
    """PyTorch's refusal of a Python number where its op takes only tensors (``torch.maximum(t, 2)``)."""
    for position, (arg, value) in enumerate((("input", input), (second, other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _tensor_first(name, input, other):  # noqa: A002
    """PyTorch's refusal of a Python number first where a comparison takes a Tensor and a Tensor or a number (pow:
    of two numbers; pow(2, t) is PyTorch's too)."""
    if not isinstance(input, Tensor) and (name != "pow" or not isinstance(other, Tensor)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of: (Tensor input, Tensor other), (Tensor input, "
                        "Number other)")


def eq(input, other):  # noqa: A002
    _tensor_first("eq", input, other)
    return input == other


def ne(input, other):  # noqa: A002
    _tensor_first("ne", input, other)
    return input != other


def lt(input, other):  # noqa: A002
    _tensor_first("lt", input, other)
    return input < other


def le(input, other):  # noqa: A002
    _tensor_first("le", input, other)
    return input <= other


def gt(input, other):  # noqa: A002
    _tensor_first("gt", input, other)
    return input > other


def ge(input, other):  # noqa: A002
    _tensor_first("ge", input, other)
    return input >= other


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Samples of normal distributions: ``normal(0.0, 1.0, (3, 2))``, or one per element of ``mean`` and/or
    ``std`` tensors (broadcast together), as PyTorch's; drawn from the engine's generator (``manual_seed``)."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() with a number mean and std needs size=")
        if not std >= 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        out = creation.randn(*((size,) if isinstance(size, int) else tuple(size)), dtype=dtype, device=device,
                             generator=generator)
        out = out * std + mean if std != 1.0 or mean != 0.0 else out
    else:
        if size is not None:
            raise TypeError("normal(): size= goes with a number mean and std, not with tensors")
        if (std < 0 if not isinstance(std, Tensor) else std.numel() and std.min().item() < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
        like = tensors[0].detach().expand(shape)
        noise = creation.randn(*shape, dtype=like.dtype, device=like.device, generator=generator)
        out = noise * (std.detach() if isinstance(std, Tensor) else std) + (
            mean.detach() if isinstance(mean, Tensor) else mean)
    return out.requires_grad_(True) if requires_grad else out


def add(input, other, *, alpha=1, out=None):  # noqa: A002
    """``input + alpha * other`` (one AddBackward0, as ``Tensor.add``'s)."""
    if isinstance(input, Tensor):
        return _into(input.add(other, alpha=alpha), out, "add")
    return _into(input + (other * alpha if alpha != 1 else other), out, "add")


def sub(input, other, *, alpha=1, out=None):  # noqa: A002
    """``input - alpha * other`` (one SubBackward0, as ``Tensor.sub``'s)."""
    if isinstance(input, Tensor):
        return _into(input.sub(other, alpha=alpha), out, "sub")
    return _into(input - (other * alpha if alpha != 1 else other), out, "sub")


def rsub(input, other, *, alpha=1):  # noqa: A002
    """``other - alpha * input`` (``input`` a Tensor), as PyTorch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return other - (input * alpha if alpha != 1 else input)


def mul(input, other, *, out=None):  # noqa: A002
    return _into(input * other, out, "mul")


def div(input, other, *, rounding_mode=None, out=None):  # noqa: A002
    """``input / other`` (true division, as PyTorch's: integers give a float); ``rounding_mode='trunc'`` or
    ``'floor'`` rounds the quotient, and keeps integer inputs integer (``Tensor.div``)."""
    if not isinstance(input, Tensor):  # (a number: a 0-d tensor, which promotes as the number would)
        input = (_number_as_tensor(input, other, rounding_mode is None) if isinstance(other, Tensor)  # noqa: A001
                 else creation.as_tensor(input))
    return _into(input.div(other, rounding_mode=rounding_mode), out, "div")


def _number_as_tensor(number, other, in_float: bool = False):
    """A Python number before a Tensor in a function form (``remainder(2, t)``) as the 0-d tensor that gives the
    op PyTorch's result dtype: in the dtype of the two (a 0-d int64 would make ``2 // uint8_0d`` int64, not uint8),
    an int wrapped into it as PyTorch casts a Scalar; ``in_float``: an op computed in a float dtype (true division,
    ``xlogy``, ``float_power``), the default one for two integers (``-1 / uint8`` is -1 over it, not 255)."""
    want = _dtypes.result_type(number, other._data)
    if in_float and want.kind not in "fc":
        want = np.dtype(_dtypes.get_default_dtype().np)
    if number.__class__ is int:
        number = _dtypes.wrapped_int(number, want)
    return creation.full((), number, dtype=_dtypes.from_numpy_dtype(want), device=other.device)


subtract = sub
multiply = mul
divide = div
true_divide = div


def neg(input):  # noqa: A002
    return -input


negative = neg


def square(input):  # noqa: A002
    return input.square()


def floor(input):  # noqa: A002
    return input.floor()


def ceil(input):  # noqa: A002
    return input.ceil()


def round(input, *, decimals=0):  # noqa: A001, A002
    return input.round(decimals)


def trunc(input):  # noqa: A002
    return input.trunc()


def sign(input):  # noqa: A002
    return input.sign()


def dot(input, tensor):  # noqa: A002
    return input.dot(tensor)


def outer(input, vec2):  # noqa: A002
    return input.outer(vec2)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    return input.argmin(dim, keepdim, axis=axis, keepdims=keepdims)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):  # noqa: A002
    return input.var(dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):  # noqa: A002
    return input.std(dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)


def softmax(input, dim=None, dtype=None, *, axis=None):  # noqa: A002
    return input.softmax(dim, dtype, axis=axis)


def log_softmax(input, dim=None, dtype=None, *, axis=None):  # noqa: A002
    return input.log_softmax(dim, dtype, axis=axis)


def permute(input, dims):  # noqa: A002
    return input.permute(dims)


def broadcast_to(input, size):  # noqa: A002
    return input.expand(size)


def chunk(input, chunks, dim=0):  # noqa: A002
    return input.chunk(chunks, dim)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def unbind(input, dim=0):  # noqa: A002
    return input.unbind(dim)


def detach(input):  # noqa: A002
    return input.detach()


def any(input, dim=None, keepdim=False, *, out=None):  # noqa: A001, A002
    return _into(input.any(dim, keepdim), out, "any")


def all(input, dim=None, keepdim=False, *, out=None):  # noqa: A001, A002
    return _into(input.all(dim, keepdim), out, "all")

__all__ = [
    "tril",
    "triu",
    "cumsum",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "normal",
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "true_divide",
    "neg",
    "negative",
    "square",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "dot",
    "outer",
    "argmin",
    "var",
    "std",
    "softmax",
    "log_softmax",
    "permute",
    "broadcast_to",
    "chunk",
    "split",
    "unbind",
    "detach",
    "clip",
    "any",
    "all",
    "mm",
    "matmul",
    "exp",
    "log",
    "sin",
    "cos",
    "abs",
    "sqrt",
    "sigmoid",
    "tanh",
    "erf",
    "einsum",
    "sort",
    "argsort",
    "msort",
    "topk",
    "gather",
    "relu",
    "clamp",
    "pow",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "maximum",
    "minimum",
    "t",
    "transpose",
    "reshape",
    "unsqueeze",
    "squeeze",
    "flatten",
    "clone",
    "allclose",
    "equal",
    "numel",
    "isnan",
    "isfinite",
]


def mm(input, mat2):  # noqa: A002
    return input.mm(mat2)


def matmul(input, other):  # noqa: A002
    return input @ other


def exp(input):  # noqa: A002
    return input.exp()


def log(input):  # noqa: A002
    return input.log()


def sin(input):  # noqa: A002
    return input.sin()


def cos(input):  # noqa: A002
    return input.cos()


def abs(input):  # noqa: A001, A002
    return input.abs()


def sqrt(input):  # noqa: A002
    return input.sqrt()


def sigmoid(input):  # noqa: A002
    return input.sigmoid()


def tanh(input):  # noqa: A002
    return input.tanh()


def erf(input):  # noqa: A002
    return input.erf()


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(equation, *operands):
    """PyTorch's ``einsum``: operands named by subscript letters, the products and sums they say in one call
    (``'bhid,bhjd->bhij'``: attention's scores). Without ``->`` the output is the letters that appear once, in
    alphabetical order (capitals first); ``...`` stands for the dimensions the letters leave, lined up from the
    right across operands. The operands may also come as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a string, not {type(equation).__name__}")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(subs) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for part in subs + ([rhs] if arrow else []):
        bad = [c for c in part.replace("...", "") if c not in _LETTERS]
        if bad:
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad[0])} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
    free = [c for c in _LETTERS if c not in eq]  # letters for the dimensions an ellipsis stands for
    widest = 0
    explicit = []
    for i, (sub, t) in enumerate(zip(subs, operands)):
        nd = t.dim()
        named = len(sub.replace("...", ""))
        if "..." in sub:
            if nd < named:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the "
                                   f"number of dimensions ({nd}) for operand {i}")
            widest = builtins.max(widest, nd - named)
        elif named != nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the "
                               f"number of dimensions ({nd}) for operand {i} and no ellipsis was given")
    ell = "".join(free[:widest])
    for sub, t in zip(subs, operands):
        if "..." in sub:
            n = t.dim() - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[widest - n:])
        explicit.append(sub)
    counts: dict = {}
    for sub in explicit:
        for c in sub:
            counts[c] = counts.get(c, 0) + 1
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    else:
        out = ell + "".join(builtins.sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    sizes: dict = {}
    for i, (sub, t) in enumerate(zip(explicit, operands)):
        for c, n in zip(sub, t.shape):
            if sizes.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
    # (ATen sums each operand over its own letters (in no other operand, not in the output) first, with sum's
    # promotion: an integer or bool operand that has one comes out int64, as PyTorch's einsum('ij->j') does)
    operands = tuple(t.long() if t.dtype.is_floating_point is False and not t.is_complex() and builtins.any(
        c not in out and builtins.sum(c in other for other in explicit) == 1 for c in sub) else t
        for sub, t in zip(explicit, operands))
    return Einsum.apply(*operands, equation=",".join(explicit) + "->" + out)


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return input.sort(dim, descending, stable)


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return input.argsort(dim, descending, stable)


def msort(input):  # noqa: A002
    return input.msort()


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A001, A002
    return input.topk(k, dim, largest, sorted)


def gather(input, dim, index, *, sparse_grad=False, out=None):  # noqa: A002
    return _into(input.gather(dim, index, sparse_grad=sparse_grad), out, "gather", (input, index), exact=True)


def relu(input):  # noqa: A002
    return input.relu()


def clamp(input, min=None, max=None):  # noqa: A001, A002
    return input.clamp(min, max)


clip = clamp


def pow(input, exponent):  # noqa: A001, A002
    _tensor_first("pow", input, exponent)
    if isinstance(input, Tensor):
        return input.pow(exponent)
    out = exponent.__rpow__(input)
    if out is NotImplemented:  # (a list, a string, None: no operand, as PyTorch's refuses it)
        raise TypeError(f"pow(): argument 'self' must be Number, not {type(input).__name__}")
    return out


def sum(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001, A002
    return input.sum(dim, keepdim, axis=axis, keepdims=keepdims)


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):  # noqa: A002
    return input.mean(dim, keepdim, dtype, axis=axis, keepdims=keepdims)


def tril(input, diagonal=0):  # noqa: A002
    return input.tril(diagonal)


def triu(input, diagonal=0):  # noqa: A002
    return input.triu(diagonal)


def cumsum(input, dim=None, dtype=None, *, axis=None):  # noqa: A002
    return input.cumsum(dim, dtype=dtype, axis=axis)


def max(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001, A002
    return input.max(dim, keepdim, axis=axis, keepdims=keepdims)


def min(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001, A002
    return input.min(dim, keepdim, axis=axis, keepdims=keepdims)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    return input.argmax(dim, keepdim, axis=axis, keepdims=keepdims)


def maximum(input, other):  # noqa: A002
    _two_tensors_or_refuse("maximum", input, other)
    return input.maximum(other)


def minimum(input, other):  # noqa: A002
    _two_tensors_or_refuse("minimum", input, other)
    return input.minimum(other)


def t(input):  # noqa: A002
    return input.t()


def transpose(input, dim0, dim1):  # noqa: A002
    return input.transpose(dim0, dim1)


def reshape(input, shape):  # noqa: A002
    return input.reshape(shape)


def unsqueeze(input, dim=None, *, axis=None):  # noqa: A002
    return input.unsqueeze(dim, axis=axis)


def squeeze(input, dim=None, *, axis=None):  # noqa: A002
    return input.squeeze(dim, axis=axis)


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    return input.flatten(start_dim, end_dim)


def clone(input):  # noqa: A002
    return input.clone()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return input.allclose(other, rtol, atol, equal_nan)


def equal(input, other):  # noqa: A002
    return input.equal(other)


def numel(input):  # noqa: A002
    return input.numel()


def isnan(input):  # noqa: A002
    return input.isnan()


def isfinite(input):  # noqa: A002
    return input.isfinite()


def _method_form(name):
    """``torch.<name>(input, ...)``: ``input.<name>(...)`` (engine/tensor_math.py), with ``out=``."""

    def form(input, *args, out=None, **kwargs):  # noqa: A002
        if name in _TENSOR_OTHER:
            second = "values" if name == "heaviside" else "other"
            _two_tensors_or_refuse(name, input, args[0] if args else kwargs.get(second), second)
        if not isinstance(input, Tensor):
            if name in _NUMBER_FIRST and isinstance(input, (bool, int, float, np.number)) and args and isinstance(
                    args[0], Tensor):  # PyTorch's overload of a Python number and a Tensor (remainder(2, t))
                input = _number_as_tensor(input, args[0], name in ("xlogy", "float_power"))  # noqa: A001
            else:
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                                f"{type(input).__name__}")
        return _into(getattr(input, name)(*args, **kwargs), out, name, (input, *args), name in _EXACT_OUT)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``input.{name}(...)``: see :meth:`engine.Tensor.{name}`."
    form.checks_input = True  # (its own TypeError: _refusing_non_tensors leaves it as it is)
    return form


# the ones whose out= PyTorch asks to be of the result's dtype exactly
_EXACT_OUT = frozenset({"aminmax", "kthvalue", "amax", "amin"})
# the ones PyTorch takes only tensors for, its second argument too
_TENSOR_OTHER = frozenset({"atan2", "arctan2", "fmax", "fmin", "ldexp", "logaddexp", "logaddexp2", "logical_and",
                           "logical_or", "logical_xor", "heaviside", "lcm", "gcd", "hypot", "isclose"})
# the ones PyTorch also takes with a Python number first (its Scalar-self overloads)
_NUMBER_FIRST = frozenset({"xlogy", "remainder", "floor_divide", "float_power", "bitwise_and", "bitwise_or",
                           "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"})

_METHOD_FORMS = (
    "log1p", "expm1", "log2", "log10", "exp2", "rsqrt", "reciprocal", "tan", "sinh", "cosh", "asin", "acos", "atan",
    "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "frac", "fix",
    "deg2rad", "rad2deg", "atan2", "arctan2", "hypot", "logaddexp", "xlogy", "remainder", "fmod", "floor_divide",
    "sgn", "positive", "absolute", "clamp_min", "clamp_max", "lerp", "float_power", "nan_to_num", "isinf",
    "isposinf", "isneginf", "isreal", "signbit", "isclose", "logical_not", "logical_and", "logical_or",
    "logical_xor", "count_nonzero", "prod", "amax", "amin", "aminmax", "logsumexp", "nansum", "nanmean", "median",
    "flip", "fliplr", "flipud", "roll", "movedim", "moveaxis", "swapaxes", "swapdims", "tile", "narrow", "select",
    "tensor_split", "ravel",
    "index_select", "masked_select", "masked_fill", "take", "nonzero", "argwhere", "scatter", "scatter_add",
    "scatter_reduce", "index_reduce", "select_scatter", "slice_scatter", "diagonal_scatter", "mode", "nanmedian",
    "nanquantile", "index_add", "index_copy", "index_fill", "diagonal", "diag", "trace", "diff",
    "bmm", "mv", "addmm", "addmv",
    "baddbmm", "exp_", "sigmoid_", "tanh_", "relu_", "is_floating_point", "inverse", "det", "logdet", "slogdet",
    "unique", "bincount", "repeat_interleave", "kthvalue", "quantile", "cross", "cumprod",
    "bernoulli", "index_put", "addcmul", "addcdiv", "addr", "addbmm", "inner", "ger", "kron", "rot90", "matrix_power",
    "diag_embed", "diagflat", "logit", "sinc", "heaviside", "copysign", "fmax", "fmin", "logaddexp2", "cummax",
    "cummin", "take_along_dim", "hsplit", "vsplit", "dsplit", "dist", "renorm", "cov", "corrcoef", "greater",
    "greater_equal", "less", "less_equal", "not_equal", "adjoint", "is_nonzero", "is_same_size",
    "is_signed", "is_complex", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "ldexp", "histc", "unique_consecutive", "gcd", "lcm", "masked_scatter",
    # in place, and more: torch.sin_(t) is t.sin_()
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "exp2_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "lcm_",
    "index_put_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "trunc_",
    "xlogy_", "zero_", "frexp", "nextafter", "is_neg", "is_conj", "resolve_conj", "resolve_neg", "norm",
    "lgamma", "digamma", "erfc", "erfinv", "mvlgamma", "lgamma_", "digamma_", "erfc_", "erfinv_", "mvlgamma_",
    "angle", "as_strided", "as_strided_scatter", "igamma", "igammac", "i0", "i0_", "addmv_", "conj_physical_",
    "resize_as_",
)
for _name in _METHOD_FORMS:
    globals()[_name] = _method_form(_name)
del _name


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(std, mean)`` over ``dim``, two outputs of one ``StdMeanBackward0`` node, as PyTorch's."""
    return _spread_mean(input, dim, unbiased, keepdim, correction, True)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(var, mean)`` over ``dim``, two outputs of one ``VarMeanBackward0`` node, as PyTorch's."""
    return _spread_mean(input, dim, unbiased, keepdim, correction, False)


def _spread_mean(input, dim, unbiased, keepdim, correction, std):  # noqa: A002
    if isinstance(dim, bool):  # (the legacy var_mean(x, unbiased))
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return input._var_std(dim, correction, keepdim, std, with_mean=True)


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to, as a ``Size``; PyTorch's error where they do not."""
    from .tensor import Size

    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: {shapes}") from None


def broadcast_tensors(*tensors):
    """Each tensor expanded to the shape they broadcast to (views; the gradients sum back)."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: ``indexing='ij'`` (PyTorch's default; it warns without it, as PyTorch
    does) or ``'xy'`` (the first two swapped, NumPy's default)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings

        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    flat = list(tensors)  # (each viewed straight to its grid's shape, then expanded, as ATen's)
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.numel() for t in flat)
    grids = [t.reshape(*[-1 if i == k else 1 for i in range(len(flat))]).expand(*shape) for k, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _triangle_indices(row, col, offset, lower, dtype, device):
    rows, cols = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return creation.tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype or _dtypes.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) coordinates of a ``row`` x ``col`` matrix's lower triangle, row by row, as a 2 x N
    tensor."""
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) coordinates of the upper triangle, as :func:`tril_indices`."""
    return _triangle_indices(row, col, offset, False, dtype, device)


def _at_least(tensors, ndim):
    def grow(t):
        t = t if isinstance(t, Tensor) else creation.tensor(t)
        if t.ndim >= ndim:
            return t
        if t.ndim == 0:  # (ATen's: a reshape; a vector and a matrix are unsqueezed)
            return t.reshape((1,) * ndim)
        if t.ndim == 1:
            t = t.unsqueeze(0)
            return t.unsqueeze(-1) if ndim == 3 else t
        return t.unsqueeze(-1)

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = tuple(grow(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors):
    return _at_least(tensors, 1)


def atleast_2d(*tensors):
    return _at_least(tensors, 2)


def atleast_3d(*tensors):
    return _at_least(tensors, 3)


def hstack(tensors):
    if not len(tensors):
        raise RuntimeError("hstack expects a non-empty TensorList")
    """Side by side: along dim 1, or dim 0 for 1-D tensors."""
    tensors = atleast_1d(*tensors) if len(tensors) > 1 else (atleast_1d(*tensors),)
    return creation.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    if not len(tensors):
        raise RuntimeError("vstack expects a non-empty TensorList")
    """One under another: along dim 0, 1-D tensors as rows."""
    tensors = atleast_2d(*tensors) if len(tensors) > 1 else (atleast_2d(*tensors),)
    return creation.cat(tensors, 0)


row_stack = vstack


def column_stack(tensors):
    """As columns: 0-D and 1-D tensors made columns, then joined along dim 1."""
    cols = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors]
    return creation.cat(cols, 1)


def dstack(tensors):
    if not len(tensors):
        raise RuntimeError("dstack expects a non-empty TensorList")
    """Along the third dimension (depth)."""
    tensors = atleast_3d(*tensors) if len(tensors) > 1 else (atleast_3d(*tensors),)
    return creation.cat(tensors, 2)


concat = concatenate = creation.cat


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements``."""
    elements = elements if isinstance(elements, Tensor) else creation.tensor(elements)
    return elements.isin(test_elements, assume_unique=assume_unique, invert=invert)


def poisson(input, generator=None):  # noqa: A002
    """A Poisson draw for each rate in ``input``, from the engine's CPU generator (or ``generator``); a GPU tensor's
    rates are read to the host for it and the draws copied back (a wait for the device)."""
    from .backend import to_host
    from .random import Generator, cpu_generator

    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"generator must be an engine.Generator, not {type(generator).__name__}")
    rates = to_host(input.detach()._data)
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    source = generator._np if generator is not None else cpu_generator()
    return creation.tensor(source.poisson(rates).astype(rates.dtype), dtype=input.dtype, device=input.device)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):  # noqa: A002
    """Where each of ``input`` would go in ``sorted_sequence`` (along its last dimension) to keep it sorted."""
    return sorted_sequence.searchsorted(input, out_int32=out_int32, right=right, side=side, sorter=sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """The bucket of each element among 1-D ``boundaries``: ``boundaries[i - 1] < x <= boundaries[i]`` (with
    ``right``: ``boundaries[i - 1] <= x < boundaries[i]``)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return boundaries.searchsorted(input, out_int32=out_int32, right=right)


def tensordot(a, b, dims=2):
    """The sum of products over ``dims`` of ``a`` and of ``b``: the last ``dims`` of ``a`` with the first of ``b``
    (a number), or the two lists' dimensions; one matrix product, so the gradient is the product's."""
    return _tensordot(a, b, dims)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (``(..., P, M)``) and each of ``x2`` (``(..., R, M)``):
    ``(..., P, R)``, as PyTorch's: from the differences (one ``CdistBackward0``), or for the Euclidean distance
    with more than 25 rows on either side (``compute_mode``'s default; ``'use_mm_for_euclid_dist'`` always,
    ``'donot_use_mm_for_euclid_dist'`` never) from one matrix product (``EuclideanDistBackward0``: faster, less
    exact for near points). A zero distance has a zero gradient."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D" if x1.dim() < 2 else
                           f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    modes = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1, "donot_use_mm_for_euclid_dist": 2}
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode, r1, r2 = modes[compute_mode], x1.shape[-2], x2.shape[-2]
    if p == 2 and x1.numel() and x2.numel() and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        # ATen's: the batches expanded to one and folded, one matrix product, the result viewed to its shape
        batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
        shape = (*batch, r1, r2)
        if math.prod(batch) == 1:
            return EuclideanDist.apply(x1, x2).view(shape)
        a = x1.expand(*batch, r1, x1.shape[-1]).contiguous().view(-1, r1, x1.shape[-1])
        b = x2.expand(*batch, r2, x2.shape[-1]).contiguous().view(-1, r2, x2.shape[-1])
        return EuclideanDist.apply(a, b).view(shape)
    return Cdist.apply(x1, x2, float(p))  # (one CdistBackward0, from the differences)

__all__ += [*_METHOD_FORMS, "std_mean", "var_mean", "broadcast_shapes", "broadcast_tensors", "meshgrid",
            "tril_indices", "triu_indices", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
            "row_stack", "column_stack", "dstack", "concat", "concatenate", "searchsorted", "bucketize", "tensordot",
            "cdist", "isin", "poisson"]


# ----------------------------------------------------------------------------------- more of torch's namespace
# Each written from recorded ops, so that each has its gradient (where PyTorch's has one) with nothing new to check.

def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) down the diagonal of one matrix, zeros elsewhere."""
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    if not tensors:
        return creation.empty(1, 0)
    for t in tensors[1:]:
        if t.device != tensors[0].device:
            raise RuntimeError(f"block_diag: input tensors must all be on the same device. Input 0 is on "
                               f"device {tensors[0].device} and input {tensors.index(t)} is on device {t.device}.")
    return BlockDiag.apply(*tensors)  # (one BlockDiagBackward0)


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, as rows (``itertools.product``'s order)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return creation.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The length-``r`` combinations of a 1-D tensor's elements, as rows (``itertools.combinations``' order, or
    ``combinations_with_replacement``')."""
    import itertools

    if input.dim() != 1:
        raise ValueError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    # (more picks than elements: no rows of r, as PyTorch's, still in the graph: an empty gradient)
    return input[creation.tensor(index, device=input.device)]


def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of a 1-D tensor: columns ``x ** (N-1), ..., x, 1`` (or rising with ``increasing``)."""
    n = x.shape[0] if N is None else N
    powers = creation.arange(n, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.dtype.is_floating_point or x.dtype.is_complex else x.to(_dtypes.int64)
    return base.unsqueeze(-1) ** powers.to(base.dtype)


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of ``s``, of the default float dtype unless ``dtype`` says otherwise (an int too)."""
    return creation.tensor(float(s) if dtype is None else s, dtype=dtype, device=device, requires_grad=requires_grad)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoid rule, at points ``x`` (or spaced ``dx``, 1 by
    default). ATen's formulas: equal spacing ``(sum(y) - (y[0] + y[-1]) * 0.5) * dx``; points
    ``sum((x[i+1] - x[i]) * (y[i] + y[i+1])) / 2``."""
    if x is not None and dx is not None:
        raise RuntimeError("torch.trapezoid: cannot pass both x and dx")
    if x is None:
        if y.shape[dim] == 0:  # (PyTorch's zeros, unrecorded)
            return y.detach().sum(dim) * 0
        ends = _scalar_op(y.select(dim, 0) + y.select(dim, -1), "mul", 0.5)
        return _scalar_op(y.sum(dim) - ends, "mul", 1.0 if dx is None else dx)
    return _scalar_op((_heights(y, dim) * _widths(x, y, dim)).sum(dim), "div", 2.0)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoid rule (one element fewer): ATen's
    ``cumsum((y[i] + y[i+1]) * dx / 2)``, or with points ``cumsum((y[i] + y[i+1]) * (x[i+1] - x[i])) / 2``."""
    if x is not None and dx is not None:
        raise RuntimeError("torch.cumulative_trapezoid: cannot pass both x and dx")
    if x is None:
        return _scalar_op(_heights(y, dim), "mul", (1.0 if dx is None else dx) / 2).cumsum(dim)
    return _scalar_op((_heights(y, dim) * _widths(x, y, dim)).cumsum(dim), "div", 2.0)


def _heights(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1) if n else y


def _widths(x, y, dim):
    return x.diff(dim=dim if x.dim() == y.dim() else -1)


def _scalar_op(t, op: str, number):
    """``t * number`` or ``t / number`` recorded as PyTorch's op of a tensor and a Scalar (``MulBackward1``,
    ``DivBackward1``: one edge), as ATen's formulas call them."""
    out = t * number if op == "mul" else t / number
    return _scalar_node(out, "MulBackward1" if op == "mul" else "DivBackward1")


trapz = trapezoid


def unravel_index(indices, shape):
    """The coordinates, one tensor per dimension of ``shape``, of each flat index in ``indices``."""
    if isinstance(shape, int):
        shape = (shape,)
    flat = indices if isinstance(indices, Tensor) else creation.tensor(indices)
    if flat.dtype.is_floating_point or flat.dtype is _dtypes.bool_:
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(flat.dtype))
    size = int(np.prod(shape))
    if bool(((flat < -size) | (flat >= size)).any()):
        raise RuntimeError("index out of bounds in unravel_index")
    flat = flat.to(_dtypes.int64) % size
    out = []
    for extent in reversed(shape):
        out.append(flat % extent)
        flat = flat // extent
    return tuple(reversed(out))


def logcumsumexp(input, dim):  # noqa: A002
    return input.logcumsumexp(dim)


def chain_matmul(*matrices):
    """The product of the matrices, left to right (PyTorch's deprecated name for ``linalg.multi_dot``)."""
    import warnings

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead.", UserWarning, stacklevel=3)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    from .linalg import multi_dot

    return multi_dot(matrices)


def vdot(input, other):  # noqa: A002
    return input.vdot(other)


def unflatten(input, dim, sizes):  # noqa: A002
    return input.unflatten(dim, sizes)


def narrow_copy(input, dim, start, length):  # noqa: A002
    return input.narrow_copy(dim, start, length)


def pinverse(input, rcond=1e-15):  # noqa: A002
    """PyTorch's older name for ``linalg.pinv`` (``rcond``: its ``rtol``)."""
    from . import linalg

    return linalg.pinv(input, rtol=rcond)


def cholesky(input, upper=False):  # noqa: A002
    """PyTorch's older name for ``linalg.cholesky`` (its ``upper`` gives the transposed factor)."""
    from . import linalg

    return linalg.cholesky(input, upper=upper)


def svd(input, some=True, compute_uv=True):  # noqa: A002
    """PyTorch's older ``torch.svd``: ``(U, S, V)``, V not transposed (``linalg.old_svd``)."""
    from . import linalg

    return linalg.old_svd(input, some, compute_uv)


def qr(input, some=True):  # noqa: A002
    from . import linalg

    return linalg.old_qr(input, some)


def cholesky_solve(input, input2, upper=False):  # noqa: A002
    from . import linalg

    return linalg.cholesky_solve(input, input2, upper)


def cholesky_inverse(input, upper=False):  # noqa: A002
    from . import linalg

    return linalg.cholesky_inverse(input, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):  # noqa: N803 - PyTorch's name
    from . import linalg

    return linalg.triangular_solve(b, A, upper, transpose, unitriangular)


def matrix_exp(A):  # noqa: N803 - PyTorch's name
    from . import linalg

    return linalg.matrix_exp(A)


def geqrf(input):  # noqa: A002
    from . import linalg

    return linalg.geqrf(input)


def orgqr(input, tau):  # noqa: A002
    from . import linalg

    return linalg.householder_product(input, tau)


def ormqr(input, input2, input3, left=True, transpose=False):  # noqa: A002
    from . import linalg

    return linalg.ormqr(input, input2, input3, left, transpose)


def lu(A, pivot=True, get_infos=False):  # noqa: N803 - PyTorch's name
    """PyTorch's deprecated ``torch.lu`` (``linalg.lu_factor``), with its warning."""
    from . import linalg

    return linalg._lu_old(A, pivot, get_infos)


def lu_solve(b, LU_data, LU_pivots):  # noqa: N803
    from . import linalg

    return linalg._lu_solve_old(b, LU_data, LU_pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803
    from . import linalg

    return linalg.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


__all__ += ["svd", "qr", "cholesky_solve", "cholesky_inverse", "triangular_solve", "matrix_exp", "geqrf", "orgqr",
            "ormqr", "lu", "lu_solve", "lu_unpack"]


def _copy_form(view_op):
    """PyTorch's ``torch.<view>_copy``: the view op's result, copied into memory of its own (a tuple of copies for
    the ops that give several views)."""

    def form(input, *args, **kwargs):  # noqa: A002
        out = view_op(input, *args, **kwargs)
        if isinstance(out, tuple):
            return tuple(t.clone() for t in out)
        return out.clone()

    return form


def _slice(input, dim=0, start=None, end=None, step=1):  # noqa: A002
    return input[(slice(None),) * (dim % builtins.max(input.dim(), 1)) + (slice(start, end, step),)]


_COPY_FORMS = {
    "alias_copy": lambda t: t.view_as(t), "as_strided_copy": Tensor.as_strided, "detach_copy": Tensor.detach,
    "diagonal_copy": Tensor.diagonal, "expand_copy": Tensor.expand, "permute_copy": Tensor.permute,
    "select_copy": Tensor.select, "slice_copy": _slice, "split_copy": Tensor.split,
    "split_with_sizes_copy": Tensor.split, "squeeze_copy": Tensor.squeeze, "t_copy": Tensor.t,
    "transpose_copy": Tensor.transpose, "unbind_copy": Tensor.unbind, "unfold_copy": Tensor.unfold,
    "unsqueeze_copy": Tensor.unsqueeze, "view_copy": Tensor.reshape,  # (a copy: any strides will do, as PyTorch)
}
for _name, _op in _COPY_FORMS.items():
    globals()[_name] = _copy_form(_op)
    globals()[_name].__name__ = _name
del _name, _op


def split_with_sizes(input, split_sizes, dim=0):  # noqa: A002
    return input.split(list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):  # noqa: A002
    return input.unsafe_chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):  # noqa: A002
    return input.unsafe_split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):  # noqa: A002
    return input.unsafe_split_with_sizes(split_sizes, dim)


__all__ += [*_COPY_FORMS, "split_with_sizes", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]

__all__ += ["block_diag", "cartesian_prod", "combinations", "vander", "scalar_tensor", "trapezoid", "trapz",
            "cumulative_trapezoid", "unravel_index", "logcumsumexp", "chain_matmul", "vdot", "unflatten",
            "narrow_copy", "cholesky", "rsub", "pinverse"]


# ---------------------------------------------------------------------------- PyTorch's top-level forms of
# nn.functional's ops (torch.conv2d, torch.max_pool2d, torch.selu, ...: the same arguments in the same places)
# (the forms of more methods, torch.sin_(t) and torch.norm(t), are among _METHOD_FORMS above)

_FUNCTIONAL_FORMS = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d",
    "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle",
    "cosine_similarity", "pairwise_distance", "celu", "selu", "threshold", "prelu", "hardshrink", "rrelu",
    "bilinear", "group_norm", "layer_norm", "dropout", "alpha_dropout", "feature_alpha_dropout",
)


def _functional_form(name, inplace=False):
    """``torch.<name>``: ``nn.functional.<name>`` (``inplace``: ``torch.selu_(t)``, its ``inplace=True``)."""
    stem = name.rstrip("_")

    def form(input, *args, **kwargs):  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        from .nn import functional as F  # (nn imports this module)

        if inplace:
            kwargs["inplace"] = True
        return getattr(F, stem)(input, *args, **kwargs)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``nn.functional.{stem}(input, ...{', inplace=True' if inplace else ''})``, as PyTorch's."
    form.checks_input = True
    return form


for _name in _FUNCTIONAL_FORMS:
    globals()[_name] = _functional_form(_name)
_FUNCTIONAL_IN_PLACE_FORMS = ("celu_", "selu_", "rrelu_", "threshold_", "dropout_", "alpha_dropout_",
                              "feature_alpha_dropout_")
for _name in _FUNCTIONAL_IN_PLACE_FORMS:
    globals()[_name] = _functional_form(_name, inplace=True)
del _name



def polygamma(n, input):  # noqa: A002
    """The ``n``-th derivative of digamma of ``input`` (PyTorch's order: ``n`` first)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    return input.polygamma(n)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, as PyTorch's: a tensor itself, or sharing a NumPy array's memory, where the dtype and
    device allow it and ``copy`` is not True (``copy=False`` refuses where it cannot share); ``requires_grad``
    set on the tensor returned (``obj`` itself where it is shared, as PyTorch's)."""
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None and _dtypes.to_dtype(dtype).np != obj._data.dtype:
            t = t.to(dtype)
        if device is not None and _resolve(device) != obj.device:
            t = t.to(device)
        shares = t is obj
    elif isinstance(obj, np.ndarray) and device is None:
        t = creation.as_tensor(obj, dtype=dtype)
        shares = t._data is obj
    else:
        t, shares = creation.tensor(obj, dtype=dtype, device=device), False
    if copy is False and not shares:
        raise ValueError("can't alias the given object without a copy (copy=False)")
    if copy and shares:
        t = t.detach().clone()
    return t.requires_grad_(True) if requires_grad else t


__all__ += [*_FUNCTIONAL_FORMS, *_FUNCTIONAL_IN_PLACE_FORMS, "asarray", "polygamma"]


def _first_parameter(fn) -> tuple[str | None, bool]:
    """The name of ``fn``'s first parameter, and whether it is ``*args`` (from its code: ``inspect.signature`` of
    the ~100 functions below cost ~2 ms of ``import engine``)."""
    code = fn.__code__
    if code.co_argcount:
        return code.co_varnames[0], False
    if code.co_flags & _CO_VARARGS:
        return code.co_varnames[code.co_argcount + code.co_kwonlyargcount], True
    return None, False


_CO_VARARGS = 0x04
_TENSOR_FIRST = ("input", "tensor", "tensors", "matrices", "sorted_sequence", "a", "x", "x1", "y")


def _refusing_non_tensors(fn):
    """``fn``, whose first argument must be a Tensor (or, for ``*tensors``, each argument), saying so as PyTorch's
    TypeError where it is not: ``torch.exp(2.5)`` raised "'float' object has no attribute 'exp'". Checked only
    once the call has failed with an AttributeError (no cost to a call that runs)."""
    first_name, elements = _first_parameter(fn)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError:
            if not args:
                raise
            first = args[0]
            items = args if elements else first if isinstance(first, (list, tuple)) else None
            if items is not None:
                for i, item in enumerate(items):
                    if not isinstance(item, Tensor):
                        raise TypeError(f"{fn.__name__}(): expected Tensor as element {i} in argument 0, but got "
                                        f"{type(item).__name__}") from None
            elif not isinstance(first, Tensor):
                raise TypeError(f"{fn.__name__}(): argument '{first_name}' (position 1) must be Tensor, not "
                                f"{type(first).__name__}") from None
            raise

    return checked


_wrapped: dict = {}  # (an alias, true_divide = div, stays the same function)
for _name in __all__:
    _fn_ = globals()[_name]
    if (getattr(_fn_, "__module__", None) != __name__ or not hasattr(_fn_, "__code__")
            or getattr(_fn_, "checks_input", False)):
        continue
    if _first_parameter(_fn_)[0] not in _TENSOR_FIRST:
        continue  # (a number, a string or shapes first: normal, einsum, scalar_tensor, tril_indices, isin, ...)
    if _fn_ not in _wrapped:
        _wrapped[_fn_] = _refusing_non_tensors(_fn_)
    globals()[_name] = _wrapped[_fn_]
del _name, _fn_, _wrapped
