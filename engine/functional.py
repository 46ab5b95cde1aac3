"""The functional forms of the Tensor methods: ``torch.mm(a, b)``, ``torch.exp(x)``, ... (``engine`` re-exports
them). Each calls the method, so there is one door per op."""

from __future__ import annotations

from .tensor import Tensor

__all__ = [
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


def relu(input):  # noqa: A002
    return input.relu()


def clamp(input, min=None, max=None):  # noqa: A001, A002
    return input.clamp(min, max)


def pow(input, exponent):  # noqa: A001, A002
    return input.pow(exponent) if isinstance(input, Tensor) else exponent.__rpow__(input)


def sum(input, dim=None, keepdim=False):  # noqa: A001, A002
    return input.sum(dim, keepdim)


def mean(input, dim=None, keepdim=False):  # noqa: A002
    return input.mean(dim, keepdim)


def max(input, dim=None, keepdim=False):  # noqa: A001, A002
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):  # noqa: A001, A002
    return input.min(dim, keepdim)


def argmax(input, dim=None, keepdim=False):  # noqa: A002
    return input.argmax(dim, keepdim)


def maximum(input, other):  # noqa: A002
    return input.maximum(other)


def minimum(input, other):  # noqa: A002
    return input.minimum(other)


def t(input):  # noqa: A002
    return input.t()


def transpose(input, dim0, dim1):  # noqa: A002
    return input.transpose(dim0, dim1)


def reshape(input, shape):  # noqa: A002
    return input.reshape(shape)


def unsqueeze(input, dim):  # noqa: A002
    return input.unsqueeze(dim)


def squeeze(input, dim=None):  # noqa: A002
    return input.squeeze(dim)


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
