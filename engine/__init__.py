"""The engine: PyTorch's Tensor and autograd API over NumPy (CPU) and CuPy (CUDA GPU).

The tutorial's programs run with one changed line, ``import engine as torch``.
"""

from . import autograd, cuda, nn, optim
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .backend import CudaUnavailableError, device
from .creation import (
    arange,
    as_tensor,
    cat,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from .dtypes import bool_ as bool  # noqa: A001 - PyTorch's name
from .dtypes import dtype, float16, float32, float64, get_default_dtype, int32, int64, set_default_dtype, uint8
from .gradcheck import GradcheckError, gradcheck
from .legacy import CPU_TYPES as _CPU_TYPES
from .random import initial_seed, manual_seed
from .tensor import Size, Tensor, is_tensor

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001

FloatTensor = _CPU_TYPES["FloatTensor"]
DoubleTensor = _CPU_TYPES["DoubleTensor"]
HalfTensor = _CPU_TYPES["HalfTensor"]
LongTensor = _CPU_TYPES["LongTensor"]
IntTensor = _CPU_TYPES["IntTensor"]
ByteTensor = _CPU_TYPES["ByteTensor"]
BoolTensor = _CPU_TYPES["BoolTensor"]

__version__ = "0.1.0"


# ---- functional forms of the Tensor methods (torch.mm(a, b), torch.exp(x), ...)
def mm(input, mat2):  # noqa: A002
    return input.mm(mat2)


def matmul(input, other):  # noqa: A002
    return input @ other


def exp(input):  # noqa: A002
    return input.exp()


def log(input):  # noqa: A002
    return input.log()


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


__all__ = [
    "Tensor", "Size", "tensor", "as_tensor", "from_numpy", "randn", "rand", "randint", "randperm", "zeros",
    "ones", "empty", "full", "arange", "linspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
    "randn_like", "rand_like", "stack", "cat", "where", "dtype", "float", "float32", "double", "float64",
    "half", "float16", "long", "int64", "int", "int32", "uint8", "bool", "device", "manual_seed",
    "initial_seed", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "autograd", "cuda", "nn", "optim", "gradcheck", "GradcheckError", "CudaUnavailableError", "is_tensor",
    "get_default_dtype", "set_default_dtype", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ByteTensor", "BoolTensor",
]
