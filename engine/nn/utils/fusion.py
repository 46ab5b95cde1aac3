"""``torch.nn.utils.fusion``: a convolution (or a Linear) followed by a batch norm in eval mode folded into one
layer, the batch norm's running statistics and affine parameters moved into its weight and bias (what a deployed
model does to save the batch norm's pass), as PyTorch's formulas."""

from __future__ import annotations

import copy

from ... import creation
from ..modules import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode) in one convolution."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b, transpose: bool = False):
    """The fused convolution's ``(weight, bias)`` as Parameters: the weight scaled per output channel by
    ``bn_w / sqrt(bn_rv + eps)``, the bias ``(conv_b - bn_rm) * that + bn_b``."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = creation.zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (len(conv_w.shape) - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode) in one Linear; the batch norm's
    features must be the Linear's outputs (or one)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b):
    """The fused Linear's ``(weight, bias)`` as Parameters (each output row scaled by ``bn_w / sqrt(bn_rv +
    eps)``)."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = creation.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
