"""``engine.nn.init``: PyTorch's weight initialisers, in place and outside the graph (``model.apply(fn)`` with
``nn.init.xavier_uniform_(m.weight)`` works as in PyTorch). The draws come from the engine's generator, so
``manual_seed`` repeats them; the numbers differ from PyTorch's, the distributions and bounds are PyTorch's."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import creation
from ..autograd import no_grad
from ..dtypes import float64

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "orthogonal_", "eye_", "dirac_",
           "sparse_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The gain PyTorch recommends for a nonlinearity: 1 for linear and sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + slope**2)) for leaky_relu (slope ``param``, 0.01 by default), 3/4 for selu."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for n in tuple(tensor.shape)[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans  # (PyTorch's private name, which scripts' own reset_parameters call)


def _fan(tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot's uniform: bound ``gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He's uniform: bound ``gain * sqrt(3 / fan)`` (``nn.Linear`` starts this way with ``a = sqrt(5)``)."""
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def _erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on (-1, 1), float64: Giles's approximation, then two Newton steps on the engine's erf."""
    from .. import kernels

    w = -np.log((1 - y) * (1 + y))
    small, big = w - 2.5, np.sqrt(np.maximum(w, 5)) - 3
    p_small = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                          -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], small)
    p_big = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                        -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], big)
    x = np.where(w < 5, p_small, p_big) * y
    inside = np.abs(y) < 1
    for _ in range(2):
        step = (kernels.erf(x) - y) / (kernels.TWO_OVER_SQRT_PI * np.exp(-x * x))
        x = np.where(inside, x - step, x)
    return np.where(inside, x, np.copysign(np.inf, y))  # erf's ends: +-inf


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """A normal distribution of ``mean`` and ``std`` cut to ``[a, b]`` (absolute bounds, as PyTorch's: GPT and
    ViT initialise with ``std=0.02``, which the default bounds do not cut), drawn as PyTorch draws it: uniform
    between the bounds' places in the normal's distribution function, then through its inverse."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)

    def cdf(z):
        return (1.0 + math.erf(z / math.sqrt(2.0))) / 2.0

    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    with no_grad():
        u = creation.empty(*tensor.shape, dtype=float64).uniform_(2 * lo - 1, 2 * hi - 1, generator=generator).numpy()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # an end of (-1, 1) drawn: +-inf,
            values = np.clip(_erfinv(u) * (std * math.sqrt(2.0)) + mean, a, b)  # clamped to its bound here
        return tensor.copy_(creation.tensor(values, dtype=tensor.dtype))


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix of the tensor's first dimension by the rest (Saxe et al.), times ``gain``: the
    Q of a normal matrix's QR, its columns' signs made those of R's diagonal, as PyTorch's."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
    flat = creation.randn(rows, cols, dtype=tensor.dtype, generator=generator).numpy().astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        return tensor.copy_(creation.tensor(q * gain, dtype=tensor.dtype).reshape(tuple(tensor.shape)))


def eye_(tensor):
    """The identity matrix (of a 2-D tensor), keeping a Linear layer's inputs as they are."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(creation.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups: int = 1):
    """The Dirac delta of a convolution's weight (3-, 4- or 5-D): each output channel of a group passes its input
    channel through unchanged, as far as there are as many of one as of the other."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d) + tuple(k // 2 for k in shape[2:])] = 1
    with no_grad():
        return tensor.copy_(creation.tensor(values, dtype=tensor.dtype))


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """A 2-D tensor of normal draws (``std``), ``sparsity`` of each column's entries set to zero (Martens)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            tensor[creation.randperm(rows, generator=generator)[:zeros], c] = 0
        return tensor


def _deprecated(new, old_name: str):
    """PyTorch's old name of an initialiser (without the trailing underscore): the same, with its FutureWarning."""

    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = old_name
    old.__doc__ = f"Deprecated: :func:`{new.__name__}` (PyTorch's old name, kept with its warning)."
    return old


uniform = _deprecated(uniform_, "uniform")
normal = _deprecated(normal_, "normal")
constant = _deprecated(constant_, "constant")
eye = _deprecated(eye_, "eye")
dirac = _deprecated(dirac_, "dirac")
xavier_uniform = _deprecated(xavier_uniform_, "xavier_uniform")
xavier_normal = _deprecated(xavier_normal_, "xavier_normal")
kaiming_uniform = _deprecated(kaiming_uniform_, "kaiming_uniform")
kaiming_normal = _deprecated(kaiming_normal_, "kaiming_normal")
orthogonal = _deprecated(orthogonal_, "orthogonal")
sparse = _deprecated(sparse_, "sparse")
