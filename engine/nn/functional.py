"""``engine.nn.functional``: composites written from primitive ops (no backward code of their own)."""

from __future__ import annotations

from ..functions import ReLU, Sigmoid, Tanh
from ..tensor import Tensor

__all__ = ["relu", "sigmoid", "tanh", "linear", "mse_loss", "log_softmax", "softmax", "nll_loss",
           "cross_entropy"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return ReLU.apply(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return Tanh.apply(input)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    out = input @ weight.t()
    return out + bias if bias is not None else out


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or 'none')")


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"mse_loss: input shape {tuple(input.shape)} and target shape {tuple(target.shape)} differ"
        )
    diff = input - target
    return _reduce(diff * diff, reduction)


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    # subtract the (detached) max first so exp cannot overflow; it cancels in the result
    shifted = input - input.max(dim, keepdim=True).values.detach()
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


def softmax(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    return log_softmax(input, dim).exp()


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    picked = -input[range(input.shape[0]), target]
    return _reduce(picked, reduction)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    return nll_loss(log_softmax(input, 1), target, reduction)
