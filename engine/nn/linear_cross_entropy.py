"""``nn.LinearCrossEntropyLoss`` (PyTorch 2.13): a linear layer whose forward is the cross entropy of its logits
(``F.linear_cross_entropy``: engine/nn/functional.py; its chunked path and ``LinearCrossEntropyOptions``:
engine/nn/_chunked_ce.py)."""

from __future__ import annotations

import math

from . import functional as F
from ._chunked_ce import LinearCrossEntropyOptions
from .modules import Linear, _WeightedLoss

__all__ = ["LinearCrossEntropyOptions", "LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer of ``num_classes`` outputs (``out_features``: more class dimensions) whose forward is the
    cross entropy of its logits against ``target`` (:func:`linear_cross_entropy`): the logits are never returned,
    so with ``options`` they are never held whole. Its ``linear`` is an ``nn.Linear`` of ``num_classes *
    prod(out_features)`` outputs, as PyTorch's."""

    def __init__(self, in_features: int, num_classes: int, *, out_features=(), bias: bool = False, device=None,
                 dtype=None, reduction: str = "mean", weight=None, ignore_index=None, label_smoothing: float = 0.0,
                 options=None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):  # noqa: A002
        linear_weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
                                    reduction=self.reduction, ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
