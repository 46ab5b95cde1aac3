"""``engine.nn.functional``: composites written from primitive ops (no backward code of their own)."""

from __future__ import annotations

from .. import creation, dtypes
from ..functions import BinaryCrossEntropy, ReLU, Sigmoid, Tanh
from ..tensor import Tensor

__all__ = ["relu", "sigmoid", "tanh", "linear", "mse_loss", "l1_loss", "log_softmax", "softmax", "nll_loss",
           "cross_entropy", "dropout", "one_hot", "leaky_relu", "layer_norm", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "silu", "elu", "softplus"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return ReLU.apply(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return Tanh.apply(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``negative_slope * x``; the gradient at 0 is the slope's, as PyTorch's."""
    return input.where(input > 0, input * negative_slope)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Each sample normalised over its last ``len(normalized_shape)`` dimensions (mean 0, variance 1, the variance
    biased), then scaled by ``weight`` and shifted by ``bias``."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    mean = input.mean(dims, keepdim=True)
    centred = input - mean
    var = (centred * centred).mean(dims, keepdim=True)
    out = centred / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    return out + bias if bias is not None else out


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    out = input @ weight.t()
    return out + bias if bias is not None else out


def check_reduction(reduction) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or 'none')")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"mse_loss: input shape {tuple(input.shape)} and target shape {tuple(target.shape)} differ"
        )
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"l1_loss: input shape {tuple(input.shape)} and target shape {tuple(target.shape)} differ"
        )
    return _reduce((input - target).abs(), reduction)


def check_dropout_probability(p) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zeroes each element with probability ``p`` (drawn from the engine's generator, so ``manual_seed`` repeats
    it) and scales the others by ``1 / (1 - p)``; the identity when not ``training``."""
    check_dropout_probability(p)
    if not training or p == 0:
        return input
    if p == 1:
        scale = creation.zeros_like(input)
    else:
        scale = (creation.rand_like(input) >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return input.mul_(scale) if inplace else input * scale


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices (int64) as rows of zeros with a one at the index: shape ``tensor.shape + (num_classes,)``,
    ``num_classes`` one more than the largest index unless given."""
    if tensor.dtype != dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    elif tensor.numel() and tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == creation.arange(num_classes, device=tensor.device)).long()


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    return input.log_softmax(dim)


def softmax(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    return input.softmax(dim)


def _softplus(z: Tensor) -> Tensor:
    """``log(1 + exp(z))`` without overflow, each side of 0 on its own clamped copy of ``z`` (so the branch not
    taken gets a finite zero gradient), its gradient ``sigmoid(z)`` exactly, 0.5 at 0."""
    up, down = z.clamp(min=0), z.clamp(max=0)
    return (up + (1 + (-up).exp()).log()).where(z > 0, (1 + down.exp()).log())


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)`` (the swish)."""
    return input * input.sigmoid()


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``; the exponential of a clamped copy, so a large ``x`` in
    the branch not taken cannot overflow into the gradient."""
    return input.where(input > 0, ((input.clamp(max=0)).exp() - 1) * alpha)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``, as PyTorch's."""
    scaled = input * beta if beta != 1 else input
    soft = _softplus(scaled) / beta if beta != 1 else _softplus(scaled)
    return input.where(scaled > threshold, soft)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """``-(y log x + (1 - y) log(1 - x))`` for probabilities ``x``, each log clamped at -100 as PyTorch's."""
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(input.shape)}) is deprecated. Please ensure they have the same size.")
    if input.device.type == "cpu" and input.numel() and (input.min().item() < 0 or input.max().item() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = BinaryCrossEntropy.apply(input, target)
    return _reduce(loss * weight if weight is not None else loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,  # noqa: A002
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """The binary cross-entropy of ``sigmoid(input)``, computed from the logits without overflow: its gradient is
    ``sigmoid(x) - y`` (times the weights) everywhere, at a logit of exactly 0 too."""
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size ({list(input.shape)})")
    scale = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * input + scale * _softplus(-input)
    return _reduce(loss * weight if weight is not None else loss, reduction)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    picked = -input[range(input.shape[0]), target]
    return _reduce(picked, reduction)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    return nll_loss(log_softmax(input, 1), target, reduction)
