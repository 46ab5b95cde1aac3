"""More of ``torch.nn``'s layers: group and RMS normalisation, padding, distances, the losses past the
tutorial's, and ParameterList/ParameterDict. Each forward is its ``engine.nn.functional`` form."""

from __future__ import annotations

import math
from collections import OrderedDict

from .. import creation
from ..autograd import no_grad
from ..backend import target
from . import functional as F
from .modules import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    Linear,
    Module,
    Parameter,
    _Loss,
)

__all__ = ["GroupNorm", "RMSNorm", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
           "CosineSimilarity", "PairwiseDistance", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "ParameterList",
           "ParameterDict", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "MarginRankingLoss",
           "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "Dropout1d", "Dropout2d", "Dropout3d", "Unfold",
           "Fold", "PixelShuffle", "PixelUnshuffle", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LazyLinear",
           "EmbeddingBag", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
           "MaxUnpool3d", "ChannelShuffle", "AlphaDropout", "FeatureAlphaDropout", "Softmax2d", "MultiMarginLoss",
           "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]


class GroupNorm(Module):
    """Normalises each sample's channels in ``num_groups`` groups, with a learned scale and shift per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.has_bias = affine and bias
        dev = target(device)
        self.weight = Parameter(creation.ones(num_channels, dtype=dtype, device=dev)) if affine else None
        self.bias = Parameter(creation.zeros(num_channels, dtype=dtype, device=dev)) if self.has_bias else None

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.has_bias}"


class RMSNorm(Module):
    """Divides each sample by its root mean square over the last dimensions (LLaMA's norm), with a learned scale."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = (Parameter(creation.ones(shape, dtype=dtype, device=target(device))) if elementwise_affine
                       else None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _PadNd(Module):
    _mode, _nd = "constant", 1

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        self.padding = (padding,) * (2 * self._nd) if isinstance(padding, int) else tuple(padding)
        # (a constant pad takes any padding F.pad takes, as PyTorch's does: ConstantPad2d((1, 2)) pads the last
        # dimension only; F.pad refuses an odd count)
        if len(self.padding) != 2 * self._nd and self._mode != "constant":
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self._nd} ints, got "
                             f"{padding!r}")
        self.value = value

    def forward(self, input):  # noqa: A002
        if self._mode == "circular" and input.dim() not in (self._nd + 1, self._nd + 2):  # (PyTorch's check)
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, self._mode, self.value if self._mode == "constant" else None)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}" if self._mode == "constant" else str(self.padding)


def _pad_class(name, mode, nd, zero=False):
    attrs = {"_mode": mode, "_nd": nd, "__doc__": f"``F.pad(input, padding, '{mode}')`` over the last {nd} "
                                                  f"dimension{'s' if nd > 1 else ''}."}
    if zero:
        attrs["__init__"] = lambda self, padding: _PadNd.__init__(self, padding, 0.0)
        attrs["extra_repr"] = lambda self: str(self.padding)
    return type(name, (_PadNd,), attrs)


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad_class(f"ZeroPad{n}d", "constant", n, zero=True) for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_pad_class(f"ConstantPad{n}d", "constant", n) for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_pad_class(f"ReflectionPad{n}d", "reflect", n) for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_pad_class(f"ReplicationPad{n}d", "replicate", n)
                                                        for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_pad_class(f"CircularPad{n}d", "circular", n) for n in (1, 2, 3))


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction = F.legacy_reduction(size_average, reduce, reduction)
        if self.reduction not in ("mean", "sum", "none", "batchmean"):
            raise ValueError(f"{self.reduction} is not a valid value for reduction")
        self.log_target = log_target

    def forward(self, input, target):  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


def _checked_parameter(value, where: str):
    if value is not None and not isinstance(value, Parameter):
        from ..tensor import Tensor

        if isinstance(value, Tensor):
            return Parameter(value)  # as PyTorch's containers do: a plain tensor becomes a parameter
        raise TypeError(f"{where} holds Parameters, not {type(value).__name__}")
    return value


class ParameterList(Module):
    """Parameters in a list, registered as ``0``, ``1``, ... so that ``parameters()`` finds them."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _index(self, index: int) -> int:
        n = len(self._parameters)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range")
        return index % n

    def __getitem__(self, index):
        values = list(self._parameters.values())
        return ParameterList(values[index]) if isinstance(index, slice) else values[self._index(index)]

    def __setitem__(self, index, value):
        self._parameters[str(self._index(index))] = _checked_parameter(value, "ParameterList")

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        self._parameters[str(len(self._parameters))] = _checked_parameter(value, "ParameterList")
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({i}): Parameter containing: [torch.{p.dtype.name} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self._parameters.values()))


class ParameterDict(Module):
    """Parameters by name, in the order they were put in, registered under their names."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        if not isinstance(key, str) or not key or "." in key:
            raise KeyError(f"parameter name must be a non-empty string without '.', got {key!r}")
        self._parameters[key] = _checked_parameter(value, "ParameterDict")

    def __delitem__(self, key):
        del self._parameters[key]

    def __contains__(self, key):
        return key in self._parameters

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def pop(self, key):
        return self._parameters.pop(key)

    def update(self, parameters):
        """From an OrderedDict or a ParameterDict in its order, a plain dict in the order of its sorted keys, or
        (key, parameter) pairs in theirs, as PyTorch's."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif hasattr(parameters, "items"):
            items = sorted(parameters.items())
        else:
            items = list(parameters)
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        return "\n".join(f"  ({k}): Parameter containing: [{p.type()} of size {'x'.join(map(str, p.shape))}]"
                         for k, p in self._parameters.items())


class Upsample(Module):
    """``F.interpolate`` as a layer: to ``size``, or ``scale_factor`` times the size, by ``mode``."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input):  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _MarginLoss(_Loss):
    _fn = ""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return getattr(F, self._fn)(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    _fn = "margin_ranking_loss"


class CosineEmbeddingLoss(_MarginLoss):
    _fn = "cosine_embedding_loss"


class HingeEmbeddingLoss(_MarginLoss):
    _fn = "hinge_embedding_loss"

    def forward(self, input, target):  # noqa: A002
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)


class SoftMarginLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class _ChannelDropout(Module):
    """Dropout1d/2d/3d: whole channels (each of ``(N, C)``'s feature maps) zeroed with probability ``p`` in
    training, the others scaled by ``1 / (1 - p)``; the identity in eval mode."""

    _nd = 1

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        F.check_dropout_probability(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return F.channel_dropout(input, self.p, self.training, self._nd)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_ChannelDropout):
    _nd = 1


class Dropout2d(_ChannelDropout):
    _nd = 2


class Dropout3d(_ChannelDropout):
    _nd = 3


class Unfold(Module):
    """``F.unfold`` as a layer: an image batch's sliding windows as columns."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    """``F.fold`` as a layer: columns added back into images of ``output_size``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):  # noqa: A002
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):  # noqa: A002
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class _AdaptiveMaxPoolNd(Module):
    _nd = 1

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):  # noqa: A002
        pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._nd - 1]
        return pool(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _nd = 3


class _MaxUnpoolNd(Module):
    """MaxUnpool1d/2d/3d: a max pool's maxima put back where its ``return_indices`` says they were, zeros
    elsewhere (SegNet's decoder); ``forward(input, indices, output_size=None)``."""

    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
        stride = kernel_size if stride is None else stride
        self.stride = (stride,) * nd if isinstance(stride, int) else tuple(stride)
        self.padding = (padding,) * nd if isinstance(padding, int) else tuple(padding)

    def forward(self, input, indices, output_size=None):  # noqa: A002
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nd = 3


class ChannelShuffle(Module):
    """``F.channel_shuffle``: the channels in ``groups`` groups, interleaved (ShuffleNet's)."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):  # noqa: A002
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class AlphaDropout(Module):
    """``F.alpha_dropout`` in training (for SELU nets: the mean and variance of its input kept); the identity in eval
    mode."""

    _fn = "alpha_dropout"

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        F.check_dropout_probability(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    """:class:`AlphaDropout` of whole channels."""

    _fn = "feature_alpha_dropout"


class Softmax2d(Module):
    """Softmax over the channels of each position: dimension -3 of a ``(C, H, W)`` or ``(N, C, H, W)`` input."""

    def forward(self, input):  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (:func:`functional.ctc_loss`): ``forward(log_probs, targets,
    input_lengths, target_lengths)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class MultiMarginLoss(_Loss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input, target):  # noqa: A002
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        # (PyTorch's default: a PairwiseDistance module, so it prints as a submodule)
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class LazyLinear(Linear):
    """A Linear layer whose ``in_features`` is found from its first input; its weight and bias are made then (as
    PyTorch's, initialised as a Linear of that size) and it becomes a plain ``Linear``. Make the optimizer after a
    first forward, as PyTorch asks."""

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self._lazy = {"bias": bias, "device": device, "dtype": dtype}
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        if self.weight is None:
            made = Linear(input.shape[-1], self.out_features, bias=self._lazy["bias"],
                          device=self._lazy["device"] or input.device, dtype=self._lazy["dtype"] or input.dtype)
            self.in_features = made.in_features
            self.weight = made.weight
            if made.bias is not None:
                self.bias = made.bias
            self.__class__ = Linear  # as PyTorch's (cls_to_become)
        return Linear.forward(self, input)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self._lazy['bias']}"


class _Lazy:
    """What the lazy convolutions and norms share (the d2l book builds its nets of them): made as their layer with a
    stand-in channel count, holding no parameters or buffers and printing a 0 for it, as PyTorch's; the first
    input's channel count (dimension 1, or 0 of an unbatched input) then makes the layer's own weights, bias and
    running statistics (initialised as that layer's, on the input's device and in its dtype where none was given),
    and the module becomes a plain instance of its layer (PyTorch's ``cls_to_become``). Make the optimizer after a
    first forward, as PyTorch asks."""

    _first = "in_channels"  # the setting the first input gives
    _spatial = 1  # the dimensions after the channels' (None: no unbatched form, as BatchNorm's)

    def _lazy_init(self, settings, bias=None):
        becomes = type(self).__mro__[2]  # (LazyConv2d(_Lazy, Conv2d): Conv2d)
        becomes.__init__(self, settings.pop("_stand_in"), **settings)
        self._lazy = (becomes, settings, bias)
        setattr(self, self._first, 0)
        for name in list(self._parameters):
            self.register_parameter(name, None)
        for name in list(self._buffers):
            self.register_buffer(name, None)

    def forward(self, input, *args, **kwargs):  # noqa: A002
        if self.__dict__.get("_lazy") is not None:
            becomes, settings, _ = self._lazy
            unbatched = self._spatial is not None and input.dim() == self._spatial + 1
            settings = dict(settings, device=settings.get("device") or input.device,
                            dtype=settings.get("dtype") or input.dtype)
            made = becomes(input.shape[0] if unbatched else input.shape[1], **settings)
            for name, p in made._parameters.items():
                self.register_parameter(name, p)
            for name, b in made._buffers.items():
                self.register_buffer(name, b)
            setattr(self, self._first, getattr(made, self._first))
            del self._lazy
            self.__class__ = becomes
        return type(self).forward(self, input, *args, **kwargs)

    def extra_repr(self):
        s = type(self).__mro__[2].extra_repr(self)
        return s.replace(", bias=False", "") if self.__dict__.get("_lazy") and self._lazy[2] else s


def _lazy_conv(name, conv, transposed=False):
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            self._lazy_init(dict(_stand_in=groups, out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                                 padding=padding, output_padding=output_padding, groups=groups, bias=bias,
                                 dilation=dilation, padding_mode=padding_mode, device=device, dtype=dtype), bias)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            self._lazy_init(dict(_stand_in=groups, out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                                 padding=padding, dilation=dilation, groups=groups, bias=bias,
                                 padding_mode=padding_mode, device=device, dtype=dtype), bias)
    doc = f"A {conv.__name__} whose ``in_channels`` is found from its first input (:class:`_Lazy`)."
    return type(name, (_Lazy, conv), {"__init__": __init__, "_spatial": conv._nd, "__doc__": doc})


def _lazy_norm(name, norm, spatial):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        self._lazy_init(dict(_stand_in=1, eps=eps, momentum=momentum, affine=affine,
                             track_running_stats=track_running_stats, device=device, dtype=dtype, bias=bias))
    doc = (f"A {norm.__name__} whose ``num_features`` is found from its first input (:class:`_Lazy`); affine and "
           "tracking running statistics unless told, as PyTorch's.")
    return type(name, (_Lazy, norm), {"__init__": __init__, "_first": "num_features", "_spatial": spatial,
                                      "__doc__": doc})


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(f"LazyConv{n}d", c) for n, c in
                                      ((1, Conv1d), (2, Conv2d), (3, Conv3d)))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv(f"LazyConvTranspose{n}d", c, transposed=True)
    for n, c in ((1, ConvTranspose1d), (2, ConvTranspose2d), (3, ConvTranspose3d)))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_norm(f"LazyBatchNorm{n}d", c, spatial) for n, c, spatial in
    ((1, BatchNorm1d, None), (2, BatchNorm2d, None), (3, BatchNorm3d, None)))
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm(f"LazyInstanceNorm{n}d", c, n)
    for n, c in ((1, InstanceNorm1d), (2, InstanceNorm2d), (3, InstanceNorm3d)))


class EmbeddingBag(Module):
    """An embedding table whose lookups come in bags, each bag's rows summed, averaged or maxed into one (the
    text-classification tutorial's bag of words): the weights start normal(0, 1), as PyTorch's."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, _weight=None,
                 include_last_offset: bool = False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.sparse, self.include_last_offset, self.padding_idx = sparse, include_last_offset, padding_idx
        weight = _weight if _weight is not None else creation.randn(num_embeddings, embedding_dim, dtype=dtype,
                                                                    device=target(device))
        if padding_idx is not None and _weight is None:
            from ..autograd import no_grad

            with no_grad():
                weight[padding_idx] = 0.0
        self.weight = Parameter(weight)

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class Bilinear(Module):
    """``y = x1 @ weight[o] @ x2 + bias[o]`` for each output ``o``; weight (out, in1, in2) and bias start uniform in
    ±1/sqrt(in1_features), as in PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        for label, n in (("in1_features", in1_features), ("in2_features", in2_features),
                         ("out_features", out_features)):
            if not isinstance(n, int) or n <= 0:
                raise ValueError(f"Bilinear: {label} must be a positive integer, got {n!r}")
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1.0 / math.sqrt(in1_features)
        dev = target(device)
        self.weight = Parameter(creation.rand(out_features, in1_features, in2_features, dtype=dtype, device=dev)
                                * (2 * bound) - bound)
        if bias:
            self.bias = Parameter(creation.rand(out_features, dtype=dtype, device=dev) * (2 * bound) - bound)
        else:
            self.register_parameter("bias", None)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ += ["Bilinear", "RReLU", "LocalResponseNorm"]


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple_of(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple_of(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple_of(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{nd}d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):  # noqa: A002
        pool = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


def _ntuple_of(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (H, W) (:func:`functional.fractional_max_pool2d`)."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (T, H, W) (:func:`functional.fractional_max_pool3d`)."""

    _nd = 3


__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d"]
