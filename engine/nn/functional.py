"""``engine.nn.functional``: composites written from primitive ops (no backward code of their own)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .. import _deferred, creation, dtypes
from ..autograd import is_grad_enabled, no_grad
from ..backend import to_host, xp_of
from ..errors import broadcast_error, complex_refusal
from ..functions import (
    Addmm,
    BinaryCrossEntropy,
    BinaryCrossEntropyWithLogits,
    CtcLoss,
    Embedding,
    Gelu,
    MseLoss,
    MultilabelMarginLoss,
    MultiMarginLoss,
    NativeBatchNorm,
    NativeGroupNorm,
    NativeLayerNorm,
    NllLoss,
    RegressionLoss,
    ReLU,
    SoftMarginLoss,
    Softmax,
    Trilinear,
    Unary,
)
from ..functions.activation import Activation, Glu, Prelu, elu_params
from ..functions.attention import FlashAttentionCpu
from ..functions.conv import (
    AdaptiveAvgPool,
    AdaptiveMaxPool,
    AvgPool,
    Convolution,
    ConvTranspose,
    Im2Col,
    MaxPool,
    Resample,
    max_pool_indices,
    pool_geometry,
    resample_tap,
)
from ..functions.distance import Pdist
from ..functions.shape import AffineGrid, ConstantPad, MaxUnpool, Pad, Rearrange, pad_map
from ..tensor import Tensor, _check_same_device, _named, _scalar_node, _wrap

__all__ = ["relu", "sigmoid", "tanh", "linear", "mse_loss", "l1_loss", "log_softmax", "softmax", "nll_loss",
           "cross_entropy", "dropout", "one_hot", "leaky_relu", "layer_norm", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "silu", "elu", "softplus", "conv1d", "conv2d", "conv3d", "max_pool1d",
           "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "embedding", "gelu",
           "scaled_dot_product_attention"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(x, 0)``; with ``inplace``, written into ``input`` (PyTorch's ``relu_``, which keeps its result)."""
    if inplace:
        return input.relu_()
    return input.relu() if input._data.dtype == np.bool_ else ReLU.apply(input)  # (a bool's: refused there)


def _in_place_if(input, inplace, fn):  # noqa: A002
    """``fn(input)``, or with ``inplace`` written into ``input`` as PyTorch's ``inplace=True`` writes it (its
    callers then see the new values; a leaf that requires grad is refused, a value saved for backward is noted
    as written)."""
    return input._apply_in_place(fn) if inplace else fn(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return input.sigmoid()  # (an integer tensor's in the default float dtype, as Tensor.sigmoid's)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return input.tanh()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``negative_slope * x``; the gradient at 0 is the slope's, as PyTorch's."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="leaky_relu", params=(negative_slope,)))


def _check_normalized_shape(shape) -> None:
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {list(shape)}")


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Each sample normalised over its last ``len(normalized_shape)`` dimensions (mean 0, variance 1, the variance
    biased), then scaled by ``weight`` and shifted by ``bias``."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    _check_normalized_shape(shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(shape)}")
    return NativeLayerNorm.apply(input, weight, bias, nd=len(shape), eps=eps)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``, recorded as PyTorch's: with a bias, one ``AddmmBackward0`` on the rows (a 1-D
    or N-D input viewed as a matrix and the result viewed back: ``ViewBackward0``); without one, the product."""
    if bias is None:
        return input @ weight.t()
    x = input._data
    if x.ndim == 2:
        return Addmm.apply(bias, input, weight.t())
    if x.ndim == 0 or weight._data.ndim != 2:
        return input @ weight.t() + bias  # (the product's own refusals)
    rows = input.reshape(math.prod(x.shape[:-1]), x.shape[-1]) if x.ndim != 1 else input.view(1, -1)
    out = Addmm.apply(bias, rows, weight.t())
    return out.view(*x.shape[:-1], out.shape[-1])


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


def _warn_if_sizes_differ(input: Tensor, target: Tensor) -> None:  # noqa: A002
    """PyTorch's warning for a regression loss whose input and target differ in shape (``(N, 1)`` against
    ``(N,)``, a common slip): the two still broadcast, as in PyTorch, usually to a wrong ``(N, N)``."""
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def _weighted(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """PyTorch 2.13's weighted regression loss: each term times its weight; 'mean' is over the summed weights."""
    check_reduction(reduction)
    loss = loss * weight
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / weight.sum()


def _check_loss_weight(weight, input) -> None:  # noqa: A002
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple:  # noqa: A002
    """The two expanded to their broadcast shape, as PyTorch's ``broadcast_tensors`` before a loss (each one that
    grows recorded as an ``ExpandBackward0``); PyTorch's error where they do not broadcast."""
    if not isinstance(target, Tensor):
        target = creation.tensor(target, dtype=input.dtype, device=input.device)
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    err = broadcast_error(input, target)
    if err is not None:
        raise err
    shape = np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return (input if tuple(input.shape) == shape else input.expand(shape),
            target if tuple(target.shape) == shape else target.expand(shape))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight=None) -> Tensor:
    """The mean squared error, one ``MseLossBackward0`` as PyTorch's (operands of two shapes are broadcast first,
    each one expanded recorded as an ``ExpandBackward0``); with ``weight``, PyTorch 2.13's weighted sum, whose
    'mean' is over the summed weights."""
    _warn_if_sizes_differ(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not isinstance(target, Tensor) or not isinstance(input, Tensor):
        diff = input - target  # (a number: PyTorch refuses one; kept working as before)
        return _reduce(diff * diff, reduction)
    ex_input, ex_target = _broadcast_pair(input, target)
    if weight is not None:
        _check_loss_weight(weight, input)
        return _weighted((ex_input - ex_target).pow(2), weight, reduction)
    check_reduction(reduction)
    return MseLoss.apply(ex_input, ex_target, reduction=reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight=None) -> Tensor:
    _warn_if_sizes_differ(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        _check_loss_weight(weight, input)
        return _weighted((input - target).abs(), weight, reduction)
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
    if input.is_complex():  # (PyTorch draws its mask in the input's dtype, and has no complex Bernoulli)
        raise complex_refusal("bernoulli_scalar_cpu_" if input.is_cpu else "bernoulli_scalar_cuda_", input.dtype.np)
    if p == 1:
        scale = creation.zeros_like(input)
    else:
        scale = (creation.rand_like(input) >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return input.mul_(scale) if inplace else input * scale


def channel_dropout(input: Tensor, p: float, training: bool, nd: int) -> Tensor:  # noqa: A002
    """``dropout1d/2d/3d``: each channel of ``(N, C, *spatial)`` (or unbatched ``(C, *spatial)``) zeroed whole with
    probability ``p``, the others scaled by ``1 / (1 - p)``."""
    check_dropout_probability(p)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"dropout{nd}d: Expected {nd + 1}D or {nd + 2}D input, but received a {input.dim()}D "
                           f"input.")
    if not training or p == 0:
        return input
    lead = input.shape[: input.dim() - nd]
    keep = (creation.rand(*lead, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    scale = keep * (1.0 / (1.0 - p)) if p < 1 else keep * 0
    return input * scale.reshape(*lead, *(1,) * nd)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    return channel_dropout(input, p, training, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    return channel_dropout(input, p, training, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    return channel_dropout(input, p, training, 3)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices (int64) as rows of zeros with a one at the index: shape ``tensor.shape + (num_classes,)``,
    ``num_classes`` one more than the largest index unless given."""
    if tensor.dtype != dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == creation.arange(num_classes, device=tensor.device)).long()


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    return input.log_softmax(implicit_dim("log_softmax", input.dim()) if dim is None else dim, dtype)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    return input.softmax(implicit_dim("softmax", input.dim()) if dim is None else dim, dtype)


def implicit_dim(name: str, ndim: int) -> int:
    """PyTorch's legacy choice where a softmax is given no ``dim`` (deprecated, with its warning): 0 for 0, 1 and 3
    dimensions, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softplus(z: Tensor) -> Tensor:
    """``log(1 + exp(z))`` without overflow, each side of 0 on its own clamped copy of ``z`` (so the branch not
    taken gets a finite zero gradient), its gradient ``sigmoid(z)`` exactly, 0.5 at 0."""
    up, down = z.clamp(min=0), z.clamp(max=0)
    return (up + (1 + (-up).exp()).log()).where(z > 0, (1 + down.exp()).log())


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)``, Phi the standard normal's distribution function (GPT-2's activation), or its tanh
    approximation with ``approximate='tanh'``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"GeluKernelImpl" not implemented for \'{input.dtype.legacy_name[:-6]}\'')
    return Gelu.apply(input, approximate=approximate)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions (scale ``1/sqrt(E)`` unless
    given): ``is_causal`` lets each query see its own position and the ones before; a bool ``attn_mask`` says where
    a query may look, a float one is added; ``enable_gqa`` lets keys and values of fewer heads serve groups of query
    heads. A query that sees no key gives zeros. As PyTorch chooses on the CPU: one node
    (``ScaledDotProductFlashAttentionForCpuBackward0``) where its flash kernel applies (4-D inputs, no dropout, a 2-D
    or 4-D mask that needs no gradient, ...), else ATen's composite, node for node (the query and the key each
    scaled by ``sqrt(scale)``, the mask added in place, ``_safe_softmax``, dropout, the product with the values).
    On a GPU the composite runs (PyTorch's CUDA kernels are not the engine's)."""
    _check_attention(query, key, value, attn_mask)
    check_dropout_probability(dropout_p)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if _flash_on_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
        mask = None if attn_mask is None else _additive_mask(attn_mask, query.dtype)._data
        return FlashAttentionCpu.apply(query, key, value, mask=mask, causal=bool(is_causal), scale=scale)
    return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _check_attention(query, key, value, attn_mask) -> None:
    """ATen's validate_sdpa_input, in its words."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if not (query.device == key.device == value.device):
        raise RuntimeError(f"Expected query, key, and value to have the same device type, but got query.device: "
                           f"{query.device} key.device: {key.device} and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (dtypes.bool_, dtypes.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {attn_mask.dtype} and  query.dtype: {query.dtype} instead.")


def _flash_on_cpu(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """Whether PyTorch's CPU would take its flash kernel (sdp_utils_cpp's use_flash_attention_cpp): 4-D inputs on
    the CPU, no dropout, one batch size, the same heads (or, with enable_gqa, keys' and values' equal and dividing
    the queries'), one head size, non-empty sequences, a last dimension of stride 1, and a mask (if any) that needs
    no gradient, of 2 or 4 dimensions, each broadcastable to the attention's."""
    if query.device.type != "cpu" or dropout_p > 0 or not query.dtype.is_floating_point:
        return False
    q, k, v = query._data, key._data, value._data
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    (b, h, rows, e), (kb, kh, cols, ke), (vb, vh, _, ve) = q.shape, k.shape, v.shape
    if not (b == kb == vb) or not (e == ke == ve) or rows == 0 or cols == 0:
        return False
    if not (h == kh == vh) and not (enable_gqa and kh == vh and h % kh == 0):
        return False
    if any(a.strides[-1] != a.itemsize for a in (q, k, v)):
        return False
    if attn_mask is not None:
        m = attn_mask.shape
        if attn_mask.requires_grad or attn_mask.dim() not in (2, 4) or m[-2] not in (rows, 1) or m[-1] not in (cols, 1):
            return False
        if attn_mask.dim() == 4 and (m[0] not in (1, b) or m[1] not in (1, h)):
            return False
    return True


def _additive_mask(attn_mask: Tensor, dtype) -> Tensor:
    """ATen's convert_boolean_attn_mask: a bool mask as 0 where a query may look and -inf where not, in ``dtype``; a
    float mask as it is."""
    if attn_mask.dtype != dtypes.bool_:
        return attn_mask
    data = attn_mask._data
    xp = xp_of(data)
    kind = dtype.np.type
    return _wrap(xp.where(data, kind(0), kind(-np.inf)))


def _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) -> Tensor:
    """ATen's _scaled_dot_product_attention_math, node for node."""
    origin = query.dtype
    if origin == dtypes.float16:  # (kept in float32 for the sums, as PyTorch's)
        query, key, value = query.float(), key.float(), value.float()
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if negative else 1 / math.sqrt(query.shape[-1]) if scale is None else scale)
    q = _scalar_node(query * (-factor if negative else factor), "MulBackward1")
    if is_causal:
        rows, cols = q.shape[-2], key.shape[-2]
        attn_mask = creation.ones(rows, cols, dtype=dtypes.bool_, device=q.device).tril()
    if attn_mask is not None:
        attn_mask = _additive_mask(attn_mask, q.dtype)
    if enable_gqa:
        heads, key_heads, value_heads = q.shape[-3], key.shape[-3], value.shape[-3]
        if not (heads == key_heads == value_heads):
            if heads % key_heads or heads % value_heads:
                raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
            key = key.repeat_interleave(heads // key_heads, -3)
            value = value.repeat_interleave(heads // value_heads, -3)
    attn = q @ _scalar_node(key.transpose(-2, -1) * factor, "MulBackward1")
    if attn_mask is not None:
        attn.add_(attn_mask)
    attn = Softmax.apply(attn, attn.dim() - 1, safe=True)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p, training=True)
    out = attn @ value
    return out if out.dtype == origin else out.to(origin)


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)`` (the swish), one ``SiluBackward0``; of complex numbers too, but, as PyTorch's, without a
    gradient."""
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="silu"))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``; the exponential of a clamped copy, so a large ``x`` in
    the branch not taken cannot overflow into the gradient."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="elu", params=elu_params("elu", alpha)))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``, as PyTorch's (one
    ``SoftplusBackward0``)."""
    return Activation.apply(input, op="softplus", params=(beta, threshold))


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction: str = "mean") -> Tensor:
    """``-(y log x + (1 - y) log(1 - x))`` for probabilities ``x``, each log clamped at -100 as PyTorch's."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(input.shape)}) is deprecated. Please ensure they have the same size.")
    if input.device.type == "cpu" and input.numel() and (input.min().item() < 0 or input.max().item() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if input.device.type != "cpu" and input.numel():  # (on a GPU: raised at the next host read, engine/_deferred.py)
        data = input._data
        _deferred.check((data < 0) | (data > 1), RuntimeError, "all elements of input should be between 0 and 1")
    check_reduction(reduction)
    return BinaryCrossEntropy.apply(input, target, weight=_undifferentiable(weight, "binary_cross_entropy", "weight"),
                                    reduction=reduction)


def _undifferentiable(t, fn: str, name: str):
    """``t``'s array, for an argument PyTorch cannot differentiate: refused, in its words, when it requires a
    gradient while one is being recorded."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        return t
    if t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. This "
                           f"input cannot have requires_grad True.")
    return t._data


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction: str = "mean", pos_weight=None) -> Tensor:
    """The binary cross-entropy of ``sigmoid(input)``, computed from the logits without overflow: its gradient is
    ``sigmoid(x) - y`` (times the weights) everywhere, at a logit of exactly 0 too."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size ({list(input.shape)})")
    check_reduction(reduction)
    fn = "binary_cross_entropy_with_logits"
    return BinaryCrossEntropyWithLogits.apply(input, target, weight=_undifferentiable(weight, fn, "weight"),
                                              pos_weight=_undifferentiable(pos_weight, fn, "pos_weight"),
                                              reduction=reduction)


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction that PyTorch's old ``size_average``/``reduce`` flags stand for (either left out counts as
    True): both true 'mean', ``size_average=False`` 'sum', ``reduce=False`` 'none'; ``reduction`` when neither
    is given."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _check_weight(weight, classes: int) -> None:
    if weight is not None and (not isinstance(weight, Tensor) or tuple(weight.shape) != (classes,)):
        got = list(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                           f"weight tensor of shape: {got}")


def _check_classes(input: Tensor, target: Tensor, weight) -> tuple[int, Tensor]:  # noqa: A002
    """The number of classes and the target (a 1-D input's one-element target as 0-d), once ``input`` (``(C,)``,
    ``(N, C)`` or ``(N, C, d1, ...)``), ``target`` (class indices: 0-d, ``(N,)`` or ``(N, d1, ...)``) and
    ``weight`` (one per class, the input's dtype) are found to fit: ATen's checks, in its order and words."""
    if not isinstance(target, Tensor):
        raise TypeError(f"the target must be a tensor of class indices, not {type(target).__name__}")
    if input.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.dim() != 1 and (target.shape[0] if target.dim() else 0) != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.dim() else 0}).")
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.dim() == 1 and target.dim() == 1:
            if target.shape[0] != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
            target = target.reshape(())
    elif input.dim() == 4 and target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    elif tuple(target.shape[1:]) != tuple(input.shape[2:]):
        if input.dim() == 4:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
        raise RuntimeError(f"Expected target size {[input.shape[0], *input.shape[2:]]}, got {list(target.shape)}")
    if target.dtype not in (dtypes.int64, dtypes.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.legacy_name[:-6]}")
    classes = input.shape[0] if input.dim() == 1 else input.shape[1]
    if input.dim() > 2 and weight is not None and (not isinstance(weight, Tensor) or weight.numel() != classes):
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    _check_weight(weight, classes)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.scalar_name(input._data.dtype)} but found "
                           f"{dtypes.scalar_name(weight._data.dtype)}")
    return classes, target


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,  # noqa: A002
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """The mean (or sum, or each) of ``-input[i, target[i]]``, PyTorch's: a class weight per row with ``weight``
    (the mean then divides by the weights' sum), rows whose target is ``ignore_index`` left out (0 with 'none'; the
    mean of none is NaN), and targets out of range refused (on a GPU at the next host read: engine/_deferred.py)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    classes, target = _check_classes(input, target, weight)
    return _nll(input, target, weight, ignore_index, reduction, classes)


def _nll(input: Tensor, target: Tensor, weight, ignore_index: int, reduction: str, classes: int) -> Tensor:  # noqa: A002
    """nll_loss once its arguments are checked (cross_entropy checks them before its log-softmax)."""
    t = target._data
    masked = True
    if t.__class__ is np.ndarray:
        ignored = t == ignore_index
        bad = ~ignored & ((t < 0) | (t >= classes))
        if bad.any():
            raise IndexError(f"Target {int(t.reshape(-1)[bad.reshape(-1).argmax()])} is out of bounds.")
        masked = bool(ignored.any())
    elif t.size:
        _deferred.check((t != ignore_index) & _deferred.out_of_range(t, 0, classes), IndexError,
                        f"Target out of bounds: a class index below 0 or not below the {classes} classes")
    return NllLoss.apply(input, t, weight=None if weight is None else weight._data, ignore_index=ignore_index,
                         reduction=reduction, masked=masked)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,  # noqa: A002
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss`` of the log-softmax over the class dimension (1, or 0 for one unbatched row), PyTorch's:
    class indices or, as a float tensor of the input's shape, class probabilities; with ``label_smoothing`` the
    target mixed with the uniform distribution by that share."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    # (PyTorch's rule: a target of the input's shape is class probabilities, any other one class indices)
    probabilities = isinstance(target, Tensor) and tuple(target.shape) == tuple(input.shape)
    if not probabilities:  # class indices
        classes, target = _check_classes(input, target, weight)
    elif not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{dtypes.scalar_name(target._data.dtype)}")
    elif ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    elif input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    class_dim = 0 if input.dim() == 1 else 1
    if probabilities:
        classes = input.shape[class_dim]
        _check_weight(weight, classes)
    logp = log_softmax(input, class_dim)
    if not probabilities:
        loss = _nll(logp, target, weight, ignore_index, reduction, classes)
        if label_smoothing == 0:
            return loss
    spread = None if weight is None else weight.reshape(classes, *([1] * (input.dim() - class_dim - 1)))
    if probabilities:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        each = logp * target if spread is None else logp * target * spread
        if reduction == "none":
            return -each.sum(class_dim)
        return -each.sum() if reduction == "sum" else -each.sum() / (input.numel() // classes)
    keep = target != ignore_index
    smooth = (-(logp if spread is None else logp * spread).sum(class_dim)).masked_fill(~keep, 0.0)
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        kept = keep.sum() if weight is None else (weight[target.where(keep, 0)] * keep).sum()
        # every row ignored: kept is 0, and the loss NaN all the same (from nll_loss's mean), its gradients 0
        smooth = smooth.sum() / kept.clamp(min=1e-30 if weight is not None else 1)
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / classes)


# ---- convolution and pooling (engine/functions/conv.py does the work; here the arguments are checked)

def _ntuple(value, n: int, what: str, op: str) -> tuple:
    """``value`` as ``n`` integers: one integer for every dimension, or a list of ``n``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        if len(value) == n:
            return tuple(value)
        if len(value) == 1:
            return tuple(value) * n
    raise RuntimeError(f"{op}: expected {what} to be a single integer value or a list of {n} values to match the "
                       f"{n}-d input, but got {what}={value!r}")


def _check_batch_dims(input: Tensor, nd: int, op: str) -> bool:  # noqa: A002
    """Whether ``input`` is unbatched (``(C, *spatial)``); a wrong number of dimensions is refused by name."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input of "
                           f"size: {list(input.shape)}")
    return input.dim() == nd + 1


def _check_geometry(padding, stride, dilation, groups) -> None:
    """PyTorch's refusals of a convolution's settings, plain or transposed."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):  # noqa: A002
    op = f"conv{nd}d"
    if not isinstance(weight, Tensor) or weight.dim() != nd + 2:
        got = list(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise RuntimeError(f"{op}: expected a {nd + 2}-D weight (out_channels, in_channels / groups, "
                           f"{', '.join('k' + 'hwd'[i] if nd > 1 else 'k' for i in range(nd))}), but got weight of "
                           f"size {got}")
    unbatched = _check_batch_dims(input, nd, op)
    stride = _ntuple(stride, nd, "stride", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        # 'same': the output as large as the input; an odd total goes one more to the right, as PyTorch's
        totals = [d * (k - 1) if padding == "same" else 0 for d, k in zip(dilation, kernel)]
        pads = tuple((t // 2, t - t // 2) for t in totals)
    else:
        pads = tuple((p, p) for p in _ntuple(padding, nd, "padding", op))
    _check_geometry([lo for lo, _ in pads], stride, dilation, groups)
    x = input.unsqueeze(0) if unbatched else input
    out_channels = weight.shape[0]
    if out_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(weight.shape)} instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           f"channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    if any(p < d * (k - 1) + 1 for p, d, k in zip(padded, dilation, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))}). Kernel "
                           f"size can't be greater than actual input size")
    if x.dtype != weight.dtype:
        raise RuntimeError(f"{op}: input is {x.dtype} and weight is {weight.dtype}: they must be one dtype (convert "
                           f"the input with .to({weight.dtype}) or the model with .to({x.dtype}))")
    if bias is not None and bias.dtype != weight.dtype:
        raise RuntimeError(f"{op}: weight is {weight.dtype} and bias is {bias.dtype}: they must be one dtype")
    out = Convolution.apply(x, weight, bias, stride=stride, padding=pads, dilation=dilation, groups=groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """The cross-correlation of ``input`` ``(N, C, L)`` (or ``(C, L)``) with ``weight`` ``(O, C / groups, k)``, as
    PyTorch's: ``padding`` a number per side, ``'valid'`` (none) or ``'same'`` (the output as long as the input)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """The cross-correlation of ``input`` ``(N, C, H, W)`` (or ``(C, H, W)``) with ``weight``
    ``(O, C / groups, kH, kW)``, as PyTorch's ``conv2d``."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """``conv2d`` with a third spatial dimension: ``(N, C, D, H, W)``."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd):  # noqa: A002
    op = f"conv_transpose{nd}d"
    if not isinstance(weight, Tensor) or weight.dim() != nd + 2:
        got = list(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise RuntimeError(f"{op}: expected a {nd + 2}-D weight (in_channels, out_channels / groups, *kernel), but "
                           f"got weight of size {got}")
    unbatched = _check_batch_dims(input, nd, op)
    stride = _ntuple(stride, nd, "stride", op)
    padding = _ntuple(padding, nd, "padding", op)
    output_padding = _ntuple(output_padding, nd, "output_padding", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    _check_geometry(padding, stride, dilation, groups)
    if any(o < 0 or (o >= s and o >= d) for o, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got output_padding "
                           f"{list(output_padding)}, stride {list(stride)} and dilation {list(dilation)}")
    x = input.unsqueeze(0) if unbatched else input
    if x.shape[1] != weight.shape[0] or weight.shape[0] % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} to "
                           f"have {weight.shape[0]} channels, but got {x.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size {list(bias.shape)} "
                           f"instead")
    kernel = tuple(weight.shape[2:])
    sizes = [(i - 1) * s - 2 * p + d * (k - 1) + o + 1
             for i, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
    if any(n <= 0 for n in sizes):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, sizes))}). Output size is too small")
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != weight.dtype):
        raise RuntimeError(f"{op}: input, weight and bias must be one dtype (got {x.dtype}, {weight.dtype}"
                           f"{', ' + str(bias.dtype) if bias is not None else ''})")
    out = ConvTranspose.apply(x, weight, bias, stride=stride, padding=padding, output_padding=output_padding,
                              dilation=dilation, groups=groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """The transposed convolution ("deconvolution") of ``input`` ``(N, C_in, L)`` with ``weight``
    ``(C_in, C_out / groups, k)``: the gradient of ``conv1d`` with respect to its input, run forward."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """``conv_transpose1d`` over ``(N, C_in, H, W)``: a DCGAN's generator grows its images with it."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """The sliding ``kernel_size`` windows of an image batch ``(N, C, H, W)`` as columns ``(N, C * kh * kw, L)``
    (im2col: a convolution is ``weight.view(O, -1) @ unfold(x)``)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    args = [_ntuple(v, 2, name, "unfold") for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                           (padding, "padding"), (stride, "stride"))]
    out = Im2Col.apply(x, *args)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Columns ``(N, C * kh * kw, L)`` added back into images ``(N, C, *output_size)``, where windows overlap summed
    (col2im, ``unfold`` undone up to that sum)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
                           f"{input.dim()}D)")
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    kernel, dil, pad, st = (_ntuple(v, 2, name, "fold") for v, name in (
        (kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    size = _ntuple(output_size, 2, "output_size", "fold")
    if x.shape[1] % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={x.shape[1]} and kernel_size={kernel}")
    blocks = 1
    for o, p, d, k, s in zip(size, pad, dil, kernel, st):
        blocks *= (o + 2 * p - d * (k - 1) - 1) // s + 1
    if x.shape[2] != blocks:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dil}, padding={pad}, "
                           f"stride={st}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks}, but got input.size(2)={x.shape[2]}.")
    out = Im2Col.apply(x, kernel, dil, pad, st, fold=True, output_size=size)
    return out.squeeze(0) if unbatched else out


def _check_shuffle(name, input, factor, what):  # noqa: A002
    """PyTorch's first checks of pixel_shuffle and pixel_unshuffle, in its words."""
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           f"dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    """``(*, C r^2, H, W)`` rearranged to ``(*, C, H r, W r)``: sub-pixel convolution's upscaling."""
    r = upscale_factor
    _check_shuffle("pixel_shuffle", input, r, "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return Rearrange.apply(input, op="pixel_shuffle", args=(r,))  # (one PixelShuffleBackward0)


def pixel_unshuffle(input, downscale_factor: int):  # noqa: A002
    """``pixel_shuffle`` undone: ``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``."""
    r = downscale_factor
    _check_shuffle("pixel_unshuffle", input, r, "downscale_factor")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={input.shape[d]} is not divisible by {r}")
    return Rearrange.apply(input, op="pixel_unshuffle", args=(r,))  # (one PixelUnshuffleBackward0)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):  # noqa: A002
    return _adaptive_max_pool(input, output_size, 1, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):  # noqa: A002
    """The maximum of ``output_size`` windows spread over the last two dimensions (their starts and ends PyTorch's:
    ``floor(i n / out)`` to ``ceil((i + 1) n / out)``); the gradient goes to each window's first maximum."""
    return _adaptive_max_pool(input, output_size, 2, return_indices)


def _adaptive_max_pool(input, output_size, nd, return_indices):  # noqa: A002
    _list_with_default(output_size, input)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    sizes = tuple(input.shape[-nd:])
    given = output_size
    if isinstance(given, (tuple, list)) and any(o is None for o in given) and len(given) == nd:
        given = tuple(n if o is None else o for n, o in zip(sizes, given))  # (None: the input's size there)
    out = _ntuple(given, nd, "output_size", f"adaptive_max_pool{nd}d")
    if nd == 1:  # (PyTorch's: the 2-D pool of one row)
        pooled = _adaptive_max_pool(input.unsqueeze(-2), (1, out[0]), 2, return_indices)
        if return_indices:
            return pooled[0].squeeze(-2), pooled[1].squeeze(-2)
        return pooled.squeeze(-2)
    if input._records():
        values = AdaptiveMaxPool.apply(input, out=out)
        indices = values.grad_fn.indices
    else:  # (the op's own forward, for its indices: apply keeps no ctx where it records nothing)
        ctx = AdaptiveMaxPool.__new__(AdaptiveMaxPool)
        values = _wrap(AdaptiveMaxPool.forward(ctx, input._data, out))
        indices = ctx.indices
    return (values, _wrap(indices)) if return_indices else values


def _pool_args(input, kernel_size, stride, padding, dilation, nd, op, effective=True):  # noqa: A002
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input ({op}: got "
                           f"one of size {list(input.shape)})")
    if any(n == 0 for n in (input.shape[1:] if input.dim() == nd + 2 else input.shape)):  # (a batch may be empty)
        if nd == 3:
            raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, but input has "
                               f"a shape of {list(input.shape)}")
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None or stride == [] or stride == () else _ntuple(stride, nd, "stride", op)
    padding = _ntuple(padding, nd, "padding", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}: kernel size should be greater than zero, but got kernel_size={list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}: stride should be greater than zero, but got stride={list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}: dilation should be greater than zero, but got dilation={list(dilation)}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            kind = "effective kernel size" if effective else "kernel size"
            raise RuntimeError(f"pad should be at most half of {kind}, but got pad={p}, kernel_size={k}"
                               + (f" and dilation={d}" if effective else ""))
    return kernel, stride, padding, dilation


def _check_pool_output(input, out, nd):  # noqa: A002
    if any(o < 1 for o in out):
        lead = input.shape[-nd - 1] if input.dim() > nd else 1
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (lead,) + tuple(input.shape[-nd:])))}). "
                           f"Calculated output size: ({'x'.join(map(str, (lead,) + tuple(out)))}). Output size is too "
                           f"small")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):  # noqa: A002
    op = f"max_pool{nd}d"
    kernel, stride, padding, dilation = _pool_args(input, kernel_size, stride, padding, dilation, nd, op)
    out, _ = pool_geometry(input.shape[-nd:], kernel, stride, padding, dilation, ceil_mode)
    _check_pool_output(input, out, nd)
    values = MaxPool.apply(input, kernel=kernel, stride=stride, padding=padding, dilation=dilation,
                           ceil_mode=bool(ceil_mode))
    if not return_indices:
        return values
    indices = max_pool_indices(input._data, kernel, stride, padding, dilation, bool(ceil_mode))
    return values, _wrap(indices)


def _one_d(pool, input, op, *args):  # noqa: A002
    """A 1-D pooling as PyTorch's: the 2-D one over a height of 1 (its gradient's node a squeeze)."""
    if input.dim() not in (2, 3) or 0 in (input.shape[1:] if input.dim() == 3 else input.shape):
        raise RuntimeError(f"{op}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{list(input.shape)}")
    out = pool(input.unsqueeze(-2), *args)
    if isinstance(out, tuple):
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """The maximum of each window of ``kernel_size`` along the last dimension."""
    def pool(x, k, s, p, d):
        return _max_pool(x, (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices, 2)
    k, s, p, d = (_ntuple(v, 1, name, "max_pool1d")[0] for v, name in
                  ((kernel_size, "kernel_size"), (kernel_size if stride is None else stride, "stride"),
                   (padding, "padding"), (dilation, "dilation")))
    return _one_d(pool, input, "max_pool1d", k, s, p, d)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """The maximum of each ``kernel_size`` window of the last two dimensions (``stride`` defaults to the kernel);
    with ``return_indices`` also where each maximum lies (flat within its channel), as PyTorch's."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):  # noqa: A002
    op = f"avg_pool{nd}d"
    kernel, stride, padding, _ = _pool_args(input, kernel_size, stride, padding, 1, nd, op, effective=False)
    if input.is_complex() or (not input.dtype.is_floating_point and input.dtype != dtypes.int64):
        # (PyTorch's kernels: floating point and int64, whose mean is truncated towards zero)
        raise complex_refusal("avg_pool2d" if nd == 2 else "avg_pool3d_out_frame", input._data.dtype)
    if divisor_override is not None and (isinstance(divisor_override, bool) or not isinstance(divisor_override, int)
                                         or divisor_override == 0):
        raise RuntimeError(f"{op}: divisor must be not zero, got divisor_override={divisor_override!r}")
    out, _ = pool_geometry(input.shape[-nd:], kernel, stride, padding, (1,) * nd, ceil_mode)
    _check_pool_output(input, out, nd)
    return AvgPool.apply(input, kernel=kernel, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                         count_include_pad=bool(count_include_pad), divisor_override=divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """The mean of each window of ``kernel_size`` along the last dimension."""
    def pool(x, k, s, p):
        return _avg_pool(x, (1, k), (1, s), (0, p), ceil_mode, count_include_pad, None, 2)
    k, s, p = (_ntuple(v, 1, name, "avg_pool1d")[0] for v, name in
               ((kernel_size, "kernel_size"), (kernel_size if stride is None else stride, "stride"),
                (padding, "padding")))
    return _one_d(pool, input, "avg_pool1d", k, s, p)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """The mean of each ``kernel_size`` window of the last two dimensions; padding counted in the mean unless
    ``count_include_pad=False``, as PyTorch's."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _list_with_default(output_size, input):  # noqa: A002
    """PyTorch's Python check of an adaptive pool's output_size (a list) against the input's rank, and its refusal
    of a negative size in ATen's words."""
    if isinstance(output_size, (list, tuple)):
        if input.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        negative = [s for s in output_size if isinstance(s, int) and s < 0]
        if negative:
            shape = list(input.shape[:input.dim() - len(output_size)]) + list(output_size)
            raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {shape}")


def _adaptive_avg_pool(input, output_size, nd):  # noqa: A002
    op = f"adaptive_avg_pool{nd}d"
    if nd > 1 and isinstance(output_size, (list, tuple)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != nd:
        raise RuntimeError(f"{op}: output_size must be {nd} numbers, got {output_size!r}")
    sizes = tuple(input.shape[input.dim() - nd + i] if s is None else s for i, s in enumerate(sizes))
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in sizes):
        raise RuntimeError(f"{op}: output_size must be non-negative integers, got {output_size!r}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: the engine averages floating-point tensors, got {input.dtype} (use .float())")
    if all(s == 1 for s in sizes):  # PyTorch's shortcut: the mean of each channel (its node a MeanBackward1)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    return AdaptiveAvgPool.apply(input, output_size=sizes)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """The mean of ``output_size`` windows along the last dimension, their edges spread evenly over it."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    size = output_size[0] if isinstance(output_size, (tuple, list)) and len(output_size) == 1 else output_size
    return _adaptive_avg_pool(input.unsqueeze(-2), (1, size), 2).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """The mean of ``output_size`` windows (a number, or (height, width), None keeping a size) spread evenly over
    the last two dimensions: ``adaptive_avg_pool2d(x, 1)`` is each channel's mean."""
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    return _adaptive_avg_pool(input, output_size, 3)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,  # noqa: A002
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight`` picked by the integer tensor ``input``: output ``input.shape + (embedding_dim,)``. The
    row ``padding_idx`` gets no gradient; with ``max_norm`` each row picked is first scaled down in place to that
    norm (of order ``norm_type``) where it is longer, as PyTorch's."""
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for embedding)")
    if sparse:
        raise RuntimeError("embedding: sparse=True (sparse gradients) is PyTorch's but not the engine's")
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D, got weight of size {list(weight.shape)}")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError("Padding_idx must be within num_embeddings")
        padding_idx %= rows
    # checked at once on the CPU; on a GPU (where CuPy wraps an index past the end) at the next host read
    if input.device.type == "cpu" and input.numel() and (input.min().item() < 0 or input.max().item() >= rows):
        raise IndexError(f"index out of range in self (indices from {input.min().item()} to {input.max().item()} "
                         f"into {rows} rows)")
    if input.device.type != "cpu" and input.numel():
        _deferred.check(_deferred.out_of_range(input._data, 0, rows), IndexError,
                        f"index out of range in self (an index outside [0, {rows - 1}] into {rows} rows)")
    if max_norm is not None:
        with no_grad():
            picked = input.reshape(-1)
            norms = weight[picked].norm(norm_type, dim=1, keepdim=True)
            # only the rows past max_norm, as PyTorch's embedding_renorm_ (a row scaled once is then just under it,
            # and is left alone the next time)
            scale = (max_norm / (norms + 1e-7)).masked_fill(norms <= max_norm, 1.0)
            weight[picked] = weight[picked] * scale
    return Embedding.apply(weight, input._data, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq))


# ---------------------------------------------------------------------------------------------- resizing

_INTERPOLATING = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution constant


def _cubic_near(v):  # the cubic convolution's weight at a distance |v| <= 1
    return ((_CUBIC_A + 2) * v - (_CUBIC_A + 3)) * v * v + 1


def _cubic_far(v):  # ... at 1 < |v| < 2
    return ((_CUBIC_A * v - 5 * _CUBIC_A) * v + 8 * _CUBIC_A) * v - 4 * _CUBIC_A


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """``input`` ``(N, C, *spatial)`` resized to ``size`` (or ``scale_factor`` times its size, rounded down):
    ``'nearest'`` (and ``'nearest-exact'``) copy the nearest pixel, ``'linear'``/``'bilinear'``/``'trilinear'``
    weigh the two nearest along each dimension (pixel centres, or the corners with ``align_corners=True``),
    ``'bicubic'`` the four nearest with the cubic convolution's weights (Keys' A = -0.75, the taps past the edge
    clamped to it), ``'area'`` averages (adaptive average pooling). PyTorch's positions and weights; the gradient
    goes back to the pixels each output was made from."""
    nd = input.dim() - 2
    if nd < 1 or nd > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if mode in _INTERPOLATING and _INTERPOLATING[mode] != nd:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_INTERPOLATING[mode] + 2}D input")
    if mode not in ("nearest", "nearest-exact", "area", *_INTERPOLATING):
        raise NotImplementedError(f"interpolate(mode={mode!r}) is PyTorch's but not the engine's (it has nearest, "
                                  "nearest-exact, linear, bilinear, bicubic, trilinear and area)")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is PyTorch's but not the engine's")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    sizes_in = tuple(input.shape[2:])
    if size is not None:
        out = (size,) * nd if isinstance(size, int) else tuple(size)
        if len(out) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(sizes_in)} and output size of {list(out)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
        scales = [None] * nd
    else:
        factors = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        if len(factors) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(sizes_in)} and scale_factor of shape {list(factors)}.")
        out = tuple(int(math.floor(n * f)) for n, f in zip(sizes_in, factors))
        scales = [None if recompute_scale_factor else float(f) for f in factors]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input {list(sizes_in)} and "
                           f"output {list(out)}")
    if mode == "area":
        return _adaptive_avg_pool(input, out, nd)
    xp = xp_of(input._data)
    dtype = input._data.dtype if input._data.dtype.kind in "fc" else np.dtype(dtypes.get_default_dtype().np)
    corners = bool(align_corners)
    axes = []
    for i in reversed(range(nd)):  # the last dimension first: PyTorch's order of the sums
        axis, n, o, scale = 2 + i, sizes_in[i], out[i], scales[i]
        ratio = (1.0 / scale) if scale is not None else n / o  # PyTorch's area_pixel_compute_scale
        dst = np.arange(o, dtype=np.float64)
        shape = [1] * input.dim()
        shape[axis] = o
        if mode in ("nearest", "nearest-exact"):
            offset = 0.5 if mode == "nearest-exact" else 0.0
            src = np.minimum(np.floor((dst + offset) * ratio).astype(np.int64), n - 1)
            axes.append((axis, n, (resample_tap(xp, src),)))
            continue
        if corners:
            src = dst * ((n - 1) / (o - 1)) if o > 1 else np.zeros(o)
        elif mode == "bicubic":
            src = (dst + 0.5) * ratio - 0.5  # (not held at 0: the cubic's taps are clamped instead)
        else:
            src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
        if mode == "bicubic":  # four taps along each dimension, the cubic convolution's weights (Keys, A = -0.75)
            base = np.floor(src).astype(np.int64)
            t = src - base
            weights = (_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t))
            axes.append((axis, n, tuple(resample_tap(xp, np.clip(base - 1 + k, 0, n - 1), w, shape, dtype)
                                        for k, w in enumerate(weights))))
            continue
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        lo = np.minimum(lo, n - 1)
        w1 = (src - lo).astype(dtype)
        w0 = (1 - w1).astype(dtype)  # (in the tensor's dtype, as the composite this node replaced)
        axes.append((axis, n, (resample_tap(xp, lo, w0, shape, dtype), resample_tap(xp, hi, w1, shape, dtype))))
    name = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact", "linear": "UpsampleLinear",
            "bilinear": "UpsampleBilinear", "trilinear": "UpsampleTrilinear", "bicubic": "UpsampleBicubic"}[mode]
    if mode in ("nearest", "nearest-exact") or input._data.dtype.kind in "fc":
        return Resample.apply(input, axes=tuple(axes), name=f"{name}{nd}DBackward0")
    # integers (an image's uint8): weighed in floats, rounded back to the input's dtype, as PyTorch's
    out = Resample.apply(input.to(dtypes.get_default_dtype()), axes=tuple(axes), name=f"{name}{nd}DBackward0")
    return out.round().to(input.dtype)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", UserWarning,
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---------------------------------------------------------------------------------------------- more activations

def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, without overflow either side (one node, PyTorch's ``LogSigmoidBackward0``)."""
    return Unary.apply(input, op="log_sigmoid")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="hardtanh", params=(min_val, max_val)))


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="hardtanh", params=(0.0, 6.0)))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="hardsigmoid"))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6`` (MobileNetV3's)."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="hardswish"))


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="mish"))


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    return input / (input.abs() + 1)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    return (-input).softmax(implicit_dim("softmin", input.dim()) if dim is None else dim, dtype)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return Activation.apply(input, op="softshrink", params=(lambd,))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    return Activation.apply(input, op="hardshrink", params=(lambd,))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """``value`` where ``x <= threshold``, else ``x`` (a NaN stays, as PyTorch's)."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="threshold", params=(threshold, value)))


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """The gated linear unit: the first half of ``dim`` times the sigmoid of the second half."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = input._dim_of(dim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    return Glu.apply(input, dim)  # (one GluBackward0, as PyTorch's)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="celu", params=elu_params("celu", alpha)))


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with Klambauer et al.'s self-normalising constants."""
    return _in_place_if(input, inplace, lambda x: Activation.apply(x, op="elu", params=elu_params("selu")))


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` where positive, ``weight * x`` elsewhere; one weight, or one per channel (dimension 1). Two float
    dtypes are refused, in PyTorch's words (a float32 PReLU on a float64 input)."""
    if input.dtype != weight.dtype and input.is_floating_point() and weight.is_floating_point():
        raise RuntimeError(f"prelu: Type promoting not supported. Got {dtypes.scalar_name(input._data.dtype)} and "
                           f"{dtypes.scalar_name(weight._data.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dim() != weight.dim():  # (ATen's: the weight viewed to broadcast along dimension 1)
        weight = weight.reshape([weight.numel() if i == 1 else 1 for i in range(input.dim())])
    return Prelu.apply(input, weight)  # (one PreluKernelBackward0)


# ---------------------------------------------------------------------------------------------- distances

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:  # noqa: A002
    """Each vector along ``dim`` divided by its ``p``-norm (at least ``eps``)."""
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


def _clamped_below(t: Tensor, eps: float) -> Tensor:
    """``t`` held at ``eps`` or more, its gradient passing everywhere: a copy clamped in place under no_grad, as
    PyTorch clamps the norms of cosine_similarity (its graph: ``CloneBackward0``)."""
    held = t.clone()
    with no_grad():
        held.clamp_min_(eps)
    return held


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (|x1| |x2|)`` along ``dim``, each vector first divided by its norm (held at ``eps`` or more),
    as PyTorch computes it."""
    common = np.result_type(x1._data.dtype, x2._data.dtype)  # (of the dtypes: no array read, on either device)
    if common.kind not in "f":  # (PyTorch's: a floating-point common dtype only, complex refused)
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dtypes.scalar_name(common)}")
    x1, x2 = (x1, x2) if tuple(x1.shape) == tuple(x2.shape) else _broadcast(x1, x2)
    n1 = _clamped_below(x1.norm(2, dim, keepdim=True), eps)
    n2 = _clamped_below(x2.norm(2, dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _not_differentiable(fn: str, argument: str, t) -> None:
    """PyTorch's refusal of a tensor that requires grad where its op has no derivative for it."""
    if isinstance(t, Tensor) and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{argument}'. This "
                           f"input cannot have requires_grad True.")


def _target_as_input(input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
    """A target broadcast to the input's shape, in its dtype, unrecorded (PyTorch's losses that write into an
    output of the input's shape refuse a target that would grow it)."""
    error = broadcast_error(input._data, target._data)
    if error is not None:
        raise error
    shape = np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    t = target.detach()
    return (t if t.dtype == input.dtype else t.to(input.dtype)).expand(*shape)


def _broadcast(a: Tensor, b: Tensor):
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return a.expand(*shape), b.expand(*shape)


def _number_tensor(number, like: Tensor) -> Tensor:
    """``number`` as a 0-d tensor of ``like``'s dtype and device: ``number - x`` then records PyTorch's
    ``SubBackward0`` of two tensors (ATen's ``Scalar - Tensor``), not the ``RsubBackward1`` of Python's."""
    return creation.tensor(number, dtype=like.dtype, device=like.device)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (ATen's nodes: ``AddBackward1``, then
    ``NormBackward1``)."""
    return _named(_scalar_node(x1 - x2 + eps, "AddBackward1").norm(p, -1, keepdim), "NormBackward1")


# ---------------------------------------------------------------------------------------------- padding

def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pads the last ``len(pad) // 2`` dimensions, ``pad`` giving (before, after) for the last one first.
    ``'constant'`` fills with ``value`` (0 by default; a negative width crops); ``'reflect'`` mirrors without the
    edge, ``'replicate'`` repeats the edge, ``'circular'`` wraps round."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the input's dimensions; got "
                           f"{len(pad)} for a {input.dim()}-D input")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    widths = {input.dim() - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}
    if mode == "constant":
        return _pad_constant(input, widths, 0.0 if value is None else value)
    xp = xp_of(input._data)
    maps = []
    for d, (before, after) in sorted(widths.items()):
        n = input.shape[d]
        where = np.arange(-before, n + after)
        if mode == "reflect":
            if before >= n or after >= n:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                                   f"but got: padding ({before}, {after}) at dimension {d} of input "
                                   f"{list(input.shape)}")
            where = np.abs(where)
            where = np.where(where > n - 1, 2 * (n - 1) - where, where)
        elif mode == "replicate":
            where = np.clip(where, 0, n - 1)
        else:
            if before > n or after > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            # a negative width crops first; the rest wraps round what is left, as PyTorch's (it wrapped the input)
            low, kept = max(-before, 0), n - max(-before, 0) - max(-after, 0)
            where = low + (np.arange(kept + max(before, 0) + max(after, 0)) - max(before, 0)) % max(kept, 1)
        maps.append(pad_map(xp, d, n, where, before))
    if mode == "circular":  # (PyTorch copies slices into the output: its last node is a CopySlices, over more)
        name = "torch::autograd::CopySlices"
    else:
        name = f"{'ReflectionPad' if mode == 'reflect' else 'ReplicationPad'}{len(maps)}DBackward0"
    return Pad.apply(input, maps=tuple(maps), name=name)  # (one node, as PyTorch's for reflect and replicate)


def _pad_constant(input: Tensor, widths: dict, value) -> Tensor:  # noqa: A002
    """One ``ConstantPadNdBackward0`` node (functions/shape.py's ConstantPad)."""
    per_dim = tuple(widths.get(d, (0, 0)) for d in range(input.dim()))
    return ConstantPad.apply(input, per_dim, value=value)


# ---------------------------------------------------------------------------------------------- losses

def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",  # noqa: A002
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``)."""
    _warn_if_sizes_differ(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta == 0:  # PyTorch's: the L1 loss then
        return l1_loss(input, target, reduction=reduction)
    check_reduction(reduction)
    a, b = _broadcast_pair(input, target)
    return RegressionLoss.apply(a, b, op="smooth_l1", param=float(beta), reduction=reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight=None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _warn_if_sizes_differ(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        _check_loss_weight(weight, input)
    check_reduction(reduction)
    a, b = _broadcast_pair(input, target)
    if weight is None:
        return RegressionLoss.apply(a, b, op="huber", param=float(delta), reduction=reduction)
    return _reduce(RegressionLoss.apply(a, b, op="huber", param=float(delta), reduction="none") * weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",  # noqa: A002
           log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities): ``target (log target -
    input)`` per element (``0`` where the target is 0); ``reduction='batchmean'`` is the true divergence per
    sample."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    loss = target.exp() * (target - input) if log_target else target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------- normalisation

def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None, training: bool = False,  # noqa: A002
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Each channel normalised: in ``training`` by the batch's mean and biased variance over every dimension but
    the channels' (the running averages, if given, updated in place by ``momentum``, the variance's unbiased), else
    by ``running_mean`` and ``running_var``; then scaled and shifted per channel. One node, PyTorch's
    ``NativeBatchNormBackward0``, its gradients PyTorch's formulas."""
    if training and input.dim() and input.shape[0] * math.prod(input.shape[2:]) == 1:  # (_verify_batch_size)
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{list(input.shape)}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):  # noqa: A002
    """batch_norm once PyTorch's Python-level checks are made (instance_norm makes its own: ATen's has none of
    batch_norm's on eps)."""
    if input.dim() < 2:
        raise ValueError(f"expected 2D or more input (got {input.dim()}D input)")
    channels = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
        if t is not None and input.device.type == "cpu" and t.dtype != input.dtype and input.dtype != dtypes.float16:
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{dtypes.scalar_name(input._data.dtype)}")
    x = input._data
    axes = (0,) + tuple(range(2, x.ndim))
    n = math.prod(x.shape[i] for i in axes)  # the values per channel
    if input.numel() == 0:  # (ATen's: a copy in the graph, scaled and shifted by the first channel's weights)
        out = input.clone()
        out = out * weight[0] if weight is not None else out
        return out + bias[0] if bias is not None else out
    if training:
        mean = x.mean(axis=axes)
        centred = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
        var = (centred * centred).mean(axis=axes)
        del centred
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(_wrap(mean) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(_wrap(var) * (momentum * n / (n - 1)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean must be defined in evaluation mode" if running_mean is None
                               else "running_var must be defined in evaluation mode")
        mean, var = running_mean._data, running_var._data
    return NativeBatchNorm.apply(input, weight, bias, mean, var, training=bool(training), eps=eps)


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,  # noqa: A002
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Each sample's each channel normalised over its own positions (biased variance), then scaled and shifted
    per channel: ``batch_norm`` of the input viewed as one sample of ``N * C`` channels, the weights and running
    averages repeated per sample, as PyTorch's (one ``NativeBatchNormBackward0`` between two views). With running
    averages given (``InstanceNorm(track_running_stats=True)``), ``use_input_stats`` updates them in place by
    ``momentum`` with the samples' mean statistics (the variance's unbiased); without it, the running averages
    normalise instead."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if use_input_stats:
        positions = input.numel() // max(input.shape[0] * input.shape[1], 1)
        if positions <= 1 and input.numel():
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
    b, c = input.shape[0], input.shape[1]
    repeated = [t.repeat(b) if t is not None else None for t in (weight, bias, running_mean, running_var)]
    out = _batch_norm(input.contiguous().view((1, b * c) + tuple(input.shape[2:])), repeated[2], repeated[3],
                      repeated[0], repeated[1], use_input_stats, momentum, eps)
    with no_grad():  # (each sample's updated statistics averaged over the batch, as PyTorch's)
        for running, updated in ((running_mean, repeated[2]), (running_var, repeated[3])):
            if running is not None:
                running.copy_(updated.view(b, c).mean(0))
    return out.view(input.shape)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Each sample's channels in ``num_groups`` groups, each group normalised over its channels and positions (the
    variance biased), then scaled and shifted per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    if input.numel() == 0:  # (nothing to normalise: the composite's empty result; weight and bias zero gradients)
        per_channel = (1, c) + (1,) * (input.dim() - 2)
        out = input * 1 if weight is None else input * weight.reshape(per_channel)
        return out if bias is None else out + bias.reshape(per_channel)
    return NativeGroupNorm.apply(input, weight, bias, groups=num_groups, eps=eps)  # one NativeGroupNormBackward0


def rms_norm(input: Tensor, normalized_shape, weight=None, eps: float | None = None) -> Tensor:  # noqa: A002
    """Each sample divided by the root mean square over its last ``len(normalized_shape)`` dimensions (``eps``
    added to the mean square, by default the dtype's machine epsilon), then scaled by ``weight``."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    _check_normalized_shape(shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    eps = float(np.finfo(input.dtype.np).eps) if eps is None else eps
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    x = input.float() if input.dtype == dtypes.float16 else input  # (ATen's opmath: half in float32, rounded back)
    out = x * _scalar_node(x.pow(2).mean(dims, keepdim=True) + eps, "AddBackward1").rsqrt()  # (ATen's)
    out = out.to(input.dtype) if out.dtype != input.dtype else out
    return out * weight if weight is not None else out


__all__ += ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "interpolate", "upsample"]
__all__ += ["logsigmoid", "hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "softsign", "softmin", "tanhshrink",
            "softshrink", "hardshrink", "threshold", "glu", "celu", "selu", "prelu", "normalize", "cosine_similarity",
            "pairwise_distance", "pad", "smooth_l1_loss", "huber_loss", "kl_div", "group_norm", "rms_norm"]


# ---------------------------------------------------------------------------------------------- more losses

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``: x1 should rank above x2 where y is 1, below where -1 (ATen's nodes)."""
    loss = _scalar_node(-target * (input1 - input2) + margin, "AddBackward1").clamp_min(0)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean") -> Tensor:
    """``x`` where y is 1, ``max(0, margin - x)`` where y is -1 (x a distance); ATen's nodes, the margin a
    tensor's (``SubBackward0``)."""
    zeros = creation.zeros_like(input)
    margin_clamp = (_number_tensor(margin, input) - input).clamp_min(0)
    loss = margin_clamp.where(target != 1, zeros) + input.where(target != -1, zeros)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))``, the logistic loss of labels of +-1: one ``SoftMarginLossBackward0``, ATen's
    formulas (the target is no edge; PyTorch refuses one that requires grad)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    target = _target_as_input(input, target)
    return SoftMarginLoss.apply(input, target, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,  # noqa: A002
                                reduce=None, reduction: str = "mean") -> Tensor:
    """One binary cross-entropy per class from logits, averaged over the classes of each sample (summed, then
    divided by their count, as PyTorch's)."""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.sum(input.dim() - 1) / input.shape[-1], legacy_reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where y is 1, ``max(0, cos(x1, x2) - margin)`` where y is -1 (PyTorch's cosine: the
    squared norms each given 1e-12); ATen's nodes."""
    dim = input1.dim() - 1
    products = (input1 * input2).sum(dim)
    square1 = _scalar_node((input1 * input1).sum(dim) + 1e-12, "AddBackward1")
    square2 = _scalar_node((input2 * input2).sum(dim) + 1e-12, "AddBackward1")
    cos = products / (square1 * square2).sqrt()
    zeros = creation.zeros_like(cos)
    near = (_number_tensor(1, cos) - cos).where(target == 1, zeros)
    loss = near + _scalar_node(cos - margin, "SubBackward1").clamp_min(0).where(target == -1, zeros)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)``, d the ``p``-norm distance (``swap``: the nearer of d(a, n) and
    d(p, n))."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    loss = (_scalar_node(d_pos + margin, "AddBackward1") - d_neg).clamp_min(0)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average=None, eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` counts under Poisson rates ``exp(input)`` (``log_input``) or
    ``input``; ``full`` adds Stirling's term for counts above 1."""
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:  # (the target's gradient through it too, as PyTorch's: NaN at a target of 0, as there)
        t = target
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + stirling.masked_fill(t <= 1, 0.0)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Tensor:
    """``0.5 (log var + (input - target)^2 / var)`` (``full``: plus ``0.5 log 2 pi``), the variance held at ``eps``
    or more without stopping its gradient, as PyTorch's."""
    if not isinstance(var, Tensor):
        var = creation.full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    elif tuple(var.shape) != tuple(input.shape):  # PyTorch's checks of the variance's size
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim()  # (one size 1 where they differ: (4, 1, 32, 32) for (4, 3, 32, 32))
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()  # then held at eps or more in place, unrecorded: its gradient passes unclamped (PyTorch's)
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


__all__ += ["dropout1d", "dropout2d", "dropout3d", "batch_norm", "instance_norm", "unfold", "fold", "pixel_shuffle",
            "pixel_unshuffle", "adaptive_max_pool1d", "adaptive_max_pool2d"]
__all__ += ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
            "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss"]


# ---------------------------------------------------------------------------------------------- bags of embeddings

def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq=False,  # noqa: A002
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """The rows of ``weight`` each bag picks, summed, averaged or maxed into one row a bag (a text classifier's
    bag of words): bags are ``input``'s rows, or runs of a 1-D ``input`` starting at ``offsets``; ``padding_idx``
    entries count for nothing; ``per_sample_weights`` scale each pick (``mode='sum'``). An empty bag gives zeros."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    xp = xp_of(input._data)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
        bags, length = input.shape
        bag_of = np.repeat(np.arange(bags), length)
        flat = input.reshape(-1)
        weights = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif input.dim() == 1:
        if offsets is None or offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor but got None" if offsets is None else
                             f"offsets has to be a 1D Tensor but got {offsets.dim()}D")
        starts = to_host(offsets._data).astype(np.int64)
        if include_last_offset:
            starts = starts[:-1]
        bags = len(starts)
        if bags and starts[0] != 0:
            raise ValueError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                             f"position 0. However, got {starts[0]}")
        bag_of = np.searchsorted(starts, np.arange(input.shape[0]), side="right") - 1
        flat, weights = input, per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    keep = np.ones(len(bag_of), dtype=bool)
    if padding_idx is not None:
        keep = to_host(flat._data) != padding_idx % weight.shape[0]
    rows = embedding(flat, weight, max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq)
    if weights is not None:
        rows = rows * weights.unsqueeze(-1)
    picked = np.nonzero(keep)[0]
    rows = rows.index_select(0, _wrap(xp.asarray(picked)))
    bag_of = bag_of[picked]
    dim = weight.shape[1]
    if mode == "max":
        parts = [rows.index_select(0, _wrap(xp.asarray(np.nonzero(bag_of == b)[0]))).amax(0)
                 if (bag_of == b).any() else weight.new_zeros(dim) for b in range(bags)]
        return creation.stack(parts) if parts else weight.new_zeros(0, dim)
    total = weight.new_zeros(bags, dim).index_add(0, _wrap(xp.asarray(bag_of)), rows)
    if mode == "sum":
        return total
    counts = np.maximum(np.bincount(bag_of, minlength=bags), 1).astype(np.float64)
    return total / creation.tensor(counts[:, None], dtype=weight.dtype, device=weight.device)


__all__ += ["embedding_bag"]


# ---------------------------------------------------------------------------------------------- spatial transformers

def _default_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", UserWarning, stacklevel=3)
        return False
    return align_corners


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` of the 2-D affine maps ``theta`` ``(N, 2, 3)`` over an output of ``size``
    ``(N, C, H, W)`` (or ``(N, D, H, W, 3)`` of 3-D maps ``(N, 3, 4)`` for ``(N, C, D, H, W)``): each output point's
    coordinates in [-1, 1] (pixel centres, or the corners with ``align_corners=True``), mapped by theta;
    ``grid_sample`` reads the input there. One ``AffineGridGeneratorBackward0``, PyTorch's checks in its words."""
    align_corners = _default_corners(align_corners)
    given, size = size, [int(s) for s in size]
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:  # (PyTorch's batched product refuses it, in its words)
        k = len(spatial) + 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k}] but "
                           f"got: [{theta.shape[0]}, {k}].")
    return AffineGrid.apply(theta, tuple(spatial), bool(align_corners))



def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """``input`` ``(N, C, H, W)`` read at the points of ``grid`` ``(N, H_out, W_out, 2)`` (x, y in [-1, 1]), or
    ``(N, C, D, H, W)`` at ``(N, D_out, H_out, W_out, 3)`` (x, y, z): ``'bilinear'`` weighs the 4 (8) pixels
    around each point, ``'nearest'`` takes the closest (half to even), ``'bicubic'`` (2-D) weighs 16 with Keys'
    cubic (a = -0.75). A point off the image reads zeros (``padding_mode='zeros'``), the edge (``'border'``) or
    its mirror image in the edge (``'reflection'``). The gradient reaches the input and the grid (a zero one for
    nearest), as PyTorch's: what a spatial transformer learns through. ATen's formulas (GridSampler.h), in
    recorded ops; its checks in its words."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = bool(_default_corners(align_corners))
    _grid_sample_checks(input, grid, mode)
    n, c, sizes = input.shape[0], input.shape[1], tuple(input.shape[2:])  # ((D,) H, W)
    k, out_sizes = len(sizes), tuple(grid.shape[1:-1])
    widths = sizes[::-1]  # the size each of grid's coordinates (x, y, z) runs along: W, H, D
    xp = xp_of(input._data)
    flat = input.reshape(n, c, -1)
    count = int(np.prod(out_sizes, dtype=np.int64))

    def unnormalize(coord, size):
        return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2

    def read(points):
        """The pixels at integer ``points`` (arrays, one per coordinate, x first), zero off the image."""
        inside, index, stride = None, 0, 1
        for p, size in zip(points, widths):
            ok = (p >= 0) & (p <= size - 1)
            inside = ok if inside is None else inside & ok
            index = index + xp.clip(p, 0, size - 1).astype(np.int64) * stride
            stride *= size
        index = _wrap(xp.broadcast_to(index.reshape(n, 1, count), (n, c, count)))
        values = flat.gather(2, index).reshape(n, c, *out_sizes)
        return values.masked_fill(_wrap(~xp.broadcast_to(inside[:, None], values.shape)), 0)

    coords = [unnormalize(grid[..., d], widths[d]) for d in range(k)]  # (N, *out) each
    if mode == "bicubic":
        return _grid_sample_bicubic(coords, widths, read, padding_mode, align_corners, xp)
    coords = [_grid_source(ic, size, padding_mode, align_corners) for ic, size in zip(coords, widths)]
    if mode == "nearest":
        out = read([xp.round(ic._data) for ic in coords])  # (NumPy's and CuPy's round: half to even, nearbyint's)
        if grid.requires_grad and is_grad_enabled():  # (in the graph, as PyTorch's: a zero gradient to the grid)
            zero = grid.masked_fill(_wrap(xp.ones(grid.shape, dtype=bool)), 0).sum(-1)
            out = out + zero.unsqueeze(1)
        return out
    low = [xp.floor(ic._data) for ic in coords]
    # each corner's weight: the product of (high - x) or (x - low) along each coordinate (ATen's, x first)
    below = [_wrap(lo + 1) - ic for ic, lo in zip(coords, low)]
    above = [ic - _wrap(lo) for ic, lo in zip(coords, low)]
    out = None
    for corner in itertools.product((0, 1), repeat=k):  # (x fastest: nw, ne, sw, se; then the back face)
        bits = corner[::-1]
        weight = None
        for d in range(k):
            w = above[d] if bits[d] else below[d]
            weight = w if weight is None else weight * w
        term = read([lo + b for lo, b in zip(low, bits)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _grid_sample_checks(input, grid, mode):  # noqa: A002
    """ATen's checks of a grid sample (check_grid_sampler_common, then the 2-D or 3-D kernel's), in its order."""
    _check_same_device(input, grid)
    if input.shape[0] != grid.shape[0] if input.dim() and grid.dim() else False:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if not grid.dim() or grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    want = 4 if input.dim() == 4 else 5
    if input.dim() != want or grid.dim() != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and want == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    on_cpu = input._data.__class__ is np.ndarray
    if not input.is_floating_point():
        kernel = (("grid_sampler_2d_cpu_kernel_impl" if on_cpu else "grid_sampler_2d_cuda") if want == 4
                  else ("grid_sampler3d_cpu" if on_cpu else "grid_sampler_3d_cuda"))
        raise complex_refusal(kernel, input._data.dtype)
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.scalar_name(input._data.dtype)} but found "
                           f"{dtypes.scalar_name(grid._data.dtype)}")


def _grid_source(coord, size, padding_mode, align_corners):
    """ATen's grid_sampler_compute_source_index after unnormalising: ``coord`` as it is (zeros), clipped to the
    image (border), or reflected in its edges and clipped (reflection: about the corner pixels' centres with
    ``align_corners``, else about the image's edges, half a pixel further out)."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        return _reflect(coord, *_reflection_bounds(size, align_corners)).clamp(0, size - 1)
    return coord


def _reflection_bounds(size, align_corners):
    """The doubled bounds a coordinate is reflected in: the corner pixels' centres with ``align_corners``, else
    the image's edges, half a pixel further out."""
    return (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)


def _reflect_raw(xp, p, twice_low, twice_high):
    """ATen's reflect_coordinates on an array (the taps of a bicubic read)."""
    if twice_low == twice_high:
        return xp.zeros_like(p)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = xp.abs(p - low)
    extra = xp.fmod(distance, span)
    return xp.where(xp.floor(distance / span) % 2 == 0, extra + low, span - extra + low)


def _reflect(coord, twice_low, twice_high):
    """ATen's reflect_coordinates on a Tensor: ``coord`` folded into [low, high] (doubled bounds, so that half a
    pixel is an integer), the gradient's sign flipped on each odd fold."""
    xp = xp_of(coord._data)
    if twice_low == twice_high:  # (a size-1 image with align_corners: every point is the one pixel, 0)
        return coord.masked_fill(_wrap(xp.ones(coord.shape, dtype=bool)), 0)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    extra = distance.fmod(span)
    flips = xp.floor(distance._data / span)
    even = _wrap(flips % 2 == 0)
    return extra.add(low).where(even, extra.neg().add(span + low))


def _cubic_weights(t):
    """Keys' cubic convolution weights of the four taps around a point ``t`` past the second (A = -0.75, ATen's
    get_cubic_upsample_coefficients)."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((x * (a + 2)) - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _grid_sample_bicubic(coords, widths, read, padding_mode, align_corners, xp):
    """ATen's bicubic grid sample: four rows of four taps around each point, each tap's integer place put through
    the padding (clipped for border, reflected and clipped for reflection, then truncated; zeros off the image),
    the cubic in x of each row, then the cubic in y of the rows. The gradient reaches the grid through the
    weights."""
    ix, iy = coords
    x0, y0 = xp.floor(ix._data), xp.floor(iy._data)
    wx, wy = _cubic_weights(ix - _wrap(x0)), _cubic_weights(iy - _wrap(y0))

    def tap(p, size):
        if padding_mode == "border":
            p = xp.clip(p, 0, size - 1)
        elif padding_mode == "reflection":
            p = xp.clip(_reflect_raw(xp, p, *_reflection_bounds(size, align_corners)), 0, size - 1)
        return xp.trunc(p)

    out = None
    for j in range(4):
        row = None
        for i in range(4):
            term = read([tap(x0 - 1 + i, widths[0]), tap(y0 - 1 + j, widths[1])]) * wx[i].unsqueeze(1)
            row = term if row is None else row + term
        term = row * wy[j].unsqueeze(1)
        out = term if out is None else out + term
    return out


__all__ += ["affine_grid", "grid_sample"]


# ------------------------------------------------------------------------------- pdist, bilinear, rrelu, LRN

def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The ``p``-norm distance between each pair of rows ``i < j`` of a 2-D input, in that order (the upper
    triangle of the distance matrix, row by row), as PyTorch's."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return Pdist.apply(input, float(p))  # (one PdistBackward0)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``out[..., o] = input1[..., :] @ weight[o] @ input2[..., :] + bias[o]``: each output a bilinear form of the
    two inputs (``weight`` of shape (out, in1, in2)). ATen's: the batches flattened, one ``TrilinearBackward0``,
    the result reshaped and the bias added; its checks in its words."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got {weight.dim()}-D")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    for n, (x, k) in enumerate(((input1, 1), (input2, 2)), 1):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{n} size does not match weight size: got {x.shape[-1]} but "
                               f"expected {weight.shape[k]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    shape = (*input1.shape[:-1], weight.shape[0])
    out = Trilinear.apply(input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]))
    out = out.reshape(shape)
    return out + bias if bias is not None else out


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU (Xu et al.): in training each negative element is scaled by its own slope drawn
    uniformly from [lower, upper]; in evaluation by their mean, ``(lower + upper) / 2``."""
    if not training:  # (PyTorch's node: RreluWithNoiseBackward0, the slope the mean of the bounds)
        out = leaky_relu(input, (lower + upper) / 2, inplace)
        return out if inplace else _named(out, "RreluWithNoiseBackward0")
    with no_grad():
        slope = creation.empty_like(input).uniform_(lower, upper)
    return _in_place_if(input, inplace, lambda x: x.where(x >= 0, x * slope))


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Tensor:
    """Each element divided by ``(k + alpha * mean of the squares over a window of `size` channels around it) **
    beta`` (AlexNet's normalization), the window zero-padded at the ends: torch.nn.functional's own composite, op
    for op (the squares padded along the channels and average-pooled over ``size`` of them)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


__all__ += ["pdist", "bilinear", "rrelu", "local_response_norm"]


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):  # noqa: A002
    sizes = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    max_pool, avg_pool = ((max_pool1d, avg_pool1d), (max_pool2d, avg_pool2d), (max_pool3d, avg_pool3d))[nd - 1]
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(sizes)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """The ``norm_type``-norm of each window: ``(sum x^p)^(1/p)`` (+-inf: the largest or smallest |x|), as
    PyTorch's (through avg_pool1d: the same gradient)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """:func:`lp_pool1d` over 2-D windows."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """:func:`lp_pool1d` over 3-D windows."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


__all__ += ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


# ------------------------------------------------- the rest of PyTorch's nn.functional a script of one's own meets

def adaptive_max_pool3d(input, output_size, return_indices: bool = False):  # noqa: A002
    """:func:`adaptive_max_pool2d` over the last three dimensions."""
    return _adaptive_max_pool(input, output_size, 3, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
                            return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
                            return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
                            return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False):
    """The connectionist temporal classification loss (speech and handwriting recognition): ``-log`` of the
    probability of ``targets`` summed over every alignment of them to the ``T`` frames of ``log_probs``
    (``(T, N, C)``, or ``(T, C)`` unbatched; a log-softmax over C), ``blank`` the class of no label. ``targets``:
    ``(N, S)`` padded, or the N targets concatenated (1-D); ``input_lengths``/``target_lengths``: each sample's (a
    tensor, list or tuple). 'mean' divides each loss by its target's length, then averages; ``zero_infinity``
    gives an impossible alignment (an input too short) a loss and gradient of 0."""
    check_reduction(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if isinstance(targets, Tensor) and targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be 3-D (T, N, C) or 2-D (T, C), got {list(log_probs.shape)}")
    t_max, n, c = log_probs.shape

    def lengths(value, name):
        if isinstance(value, Tensor):
            value = value.detach().cpu().numpy()
        arr = np.asarray(value, dtype=np.int64).reshape(-1)
        if arr.size != n:
            raise RuntimeError(f"ctc_loss: {name} must have one length per sample ({n}), got {arr.size}")
        return arr

    input_lengths, target_lengths = lengths(input_lengths, "input_lengths"), lengths(target_lengths, "target_lengths")
    if (input_lengths > t_max).any() or (input_lengths < 0).any():
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value "
                           f"{int(input_lengths.max())} (while checking arguments for ctc_loss_cpu)")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    tgt = targets.detach().cpu().numpy() if isinstance(targets, Tensor) else np.asarray(targets)
    if tgt.ndim == 1:  # concatenated: padded here
        if tgt.size != target_lengths.sum():
            raise RuntimeError(f"Expected tensor to have size at least {int(target_lengths.sum())} at dimension 1, "
                               f"but got size {tgt.size} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_cpu)")
        padded = np.full((n, int(target_lengths.max(initial=0))), blank, dtype=np.int64)
        start = 0
        for i, k in enumerate(target_lengths):
            padded[i, :k] = tgt[start:start + k]
            start += k
        tgt = padded
    elif tgt.ndim == 2 and tgt.shape[1] < target_lengths.max(initial=0):
        raise RuntimeError(f"Expected tensor to have size at least {int(target_lengths.max())} at dimension 1, but "
                           f"got size {tgt.shape[1]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_cpu)")
    data = log_probs._data
    device_targets = tgt.astype(np.int64) if data.__class__ is np.ndarray else xp_of(data).asarray(tgt, np.int64)
    nll = CtcLoss.apply(log_probs, targets=device_targets, input_lengths=input_lengths,
                        target_lengths=target_lengths, blank=int(blank), zero_infinity=bool(zero_infinity))
    if reduction == "mean":
        divisor = creation.tensor(np.maximum(target_lengths, 1).astype(nll._data.dtype), device=nll.device)
        return (nll / divisor).mean()
    if reduction == "sum":
        return nll.sum()
    return nll[0] if unbatched else nll


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):  # noqa: A002
    return _adaptive_max_pool(input, output_size, 1, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):  # noqa: A002
    return _adaptive_max_pool(input, output_size, 2, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):  # noqa: A002
    return _adaptive_max_pool(input, output_size, 3, True)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):  # noqa: A002
    """Each value put back at the place its max pool took it from (``indices``, flat within its channel), zeros
    elsewhere; the gradient is the output's at those places."""
    op = f"max_unpool{nd}d"
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    stride = _ntuple(kernel_size if stride is None else stride, nd, "stride", op)
    padding = _ntuple(padding, nd, "padding", op)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected a {nd + 1}D or {nd + 2}D tensor, got {input.dim()}D")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    spatial = tuple(input.shape[-nd:])
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(spatial, stride, padding, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)[-nd:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(tuple(output_size))}'")
        for got, d, s in zip(size, default, stride):
            if not d - s < got < d + s:
                raise ValueError(f"invalid output_size \"{list(size)}\" (dim {size.index(got)} must be between "
                                 f"{d - s} and {d + s})")
    plane = math.prod(size)
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= plane):
        flat = to_host(indices._data).reshape(-1)
        bad = int(flat[(flat < 0) | (flat >= plane)][0])  # (the first, as PyTorch names it)
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    if nd == 1:  # PyTorch's: a 2-D unpool of the length with a unit width, squeezed back
        return MaxUnpool.apply(input.unsqueeze(-1), indices.unsqueeze(-1)._data, size + (1,)).squeeze(-1)
    return MaxUnpool.apply(input, indices._data, size)  # (one MaxUnpool2DBackward0 / 3D)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of :func:`max_pool1d` with ``return_indices``: each maximum back at its place, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of :func:`max_pool2d` with ``return_indices`` (SegNet's decoder)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def channel_shuffle(input, groups: int):  # noqa: A002
    """The channels in ``groups`` groups, interleaved (ShuffleNet's): channel ``g * (C / groups) + i`` goes to
    ``i * groups + g``."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return Rearrange.apply(input, op="channel_shuffle", args=(groups,))  # (one ChannelShuffleBackward0)


def native_channel_shuffle(input, groups: int):  # noqa: A002
    return channel_shuffle(input, groups)


_SELU_ALPHA_SCALED = 1.7580993408473766  # SELU's scale times its alpha: the value a dropped unit takes, negated


def _alpha_dropout(input, p, training, inplace, feature):  # noqa: A002
    name = "feature_alpha_dropout" if feature else "alpha_dropout"
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
    if feature and input.dim() < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input")
    keep = (creation.rand(*shape, device=input.device) >= p).to(input.dtype)  # (1 - p of them kept)
    a = 1.0 / math.sqrt((_SELU_ALPHA_SCALED ** 2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA_SCALED * a) + _SELU_ALPHA_SCALED * a * p
    if inplace:
        return input.mul_(keep * a).add_(b)
    return input * (keep * a) + b


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):  # noqa: A002
    """Dropout for SELU nets: a dropped unit takes SELU's negative saturation value, and the rest is scaled and
    shifted so that the mean and variance of a standard normal input are kept (PyTorch's formula)."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):  # noqa: A002
    """:func:`alpha_dropout` of whole channels."""
    return _alpha_dropout(input, p, training, inplace, True)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)``, g Gumbel noise; ``hard``
    gives the one-hot of its largest entry, with the soft sample's gradient (the straight-through estimator)."""
    gumbels = -creation.empty(*logits.shape, dtype=logits.dtype, device=logits.device).exponential_().log()
    # (a draw of exactly 0 gives +inf noise, as PyTorch's can)
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = creation.zeros(*logits.shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None,  # noqa: A002
                      reduce=None, reduction: str = "mean"):
    """The multi-class hinge loss: for each wrong class j, ``max(0, margin - x[y] + x[j]) ** p`` (times the true
    class's ``weight``), averaged over the classes. Its checks are PyTorch's, in its order."""
    check_reduction(legacy_reduction(size_average, reduce, reduction))
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (input.dim() == 1 and not input.numel()):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    n, c = (1, max(input.numel(), 1)) if input.dim() <= 1 else input.shape  # (a 0-d input: one sample, one class)
    if target.dtype != dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {dtypes.scalar_name(target._data.dtype)}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.scalar_name(input._data.dtype)} but found "
                           f"{dtypes.scalar_name(weight._data.dtype)}")
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if input.dim() == 0:  # (as a vector of one class; its 'none' loss 0-d, as PyTorch's)
        out = multi_margin_loss(input.reshape(1), target.reshape(1), p, margin, weight, size_average, reduce,
                                reduction)
        return out.reshape(()) if out.dim() else out
    x = input
    y = target.reshape(-1)
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= c):
        raise IndexError("target out of range")
    _not_differentiable("multi_margin_loss", "weight", weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    w = None if weight is None else weight.detach()._data
    # one MultiMarginLossBackward0, ATen's formulas
    return MultiMarginLoss.apply(x, (target if input.dim() == 1 else y).detach()._data, w, p, float(margin), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):  # noqa: A002
    """The multi-label hinge loss: ``target`` lists each sample's classes (ended by the first -1); each pair of a
    listed class j and an unlisted one k adds ``max(0, 1 - (x[j] - x[k]))``, averaged over the classes."""
    check_reduction(legacy_reduction(size_average, reduce, reduction))
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (input.dim() == 1 and not input.numel()):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    classes = max(input.numel(), 1) if input.dim() <= 1 else None  # (a 0-d input: one sample of one class)
    if (target.dim() > 1 or target.numel() != classes) if classes is not None else target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if input.dim() <= 1 and (input.dim() == 0 or target.dim() == 0):  # (as vectors; the loss 0-d)
        return multilabel_margin_loss(input.reshape(classes), target.reshape(classes), size_average, reduce,
                                      reduction)
    x = input
    t = target.detach()._data
    c = x.shape[-1]
    rows = t.reshape(1, -1) if t.ndim == 1 else t
    listed = (rows >= 0).cumprod(axis=1).astype(bool)
    if bool(((rows[listed] >= c) | (rows[listed] < -1)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    reduction = legacy_reduction(size_average, reduce, reduction)
    return MultilabelMarginLoss.apply(x, t, reduction)  # (one MultilabelMarginLossBackward0)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean"):
    """:func:`triplet_margin_loss` with any ``distance_function`` (``pairwise_distance`` by default)."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    dims = {anchor.dim(), positive.dim(), negative.dim()}
    if len(dims) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated in PyTorch for ``interpolate(..., mode='nearest')``, which it is."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated in PyTorch for ``interpolate(..., mode='bilinear', align_corners=True)``, which it is."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _in_place_form(fn):
    def in_place(input, *args, **kwargs):  # noqa: A002
        return fn(input, *args, inplace=True, **kwargs)
    in_place.__name__ = in_place.__qualname__ = fn.__name__ + "_"
    in_place.__doc__ = f"``{fn.__name__}(..., inplace=True)``: written into the input, as PyTorch's."
    return in_place


relu_, elu_, leaky_relu_, hardtanh_, celu_, selu_, threshold_ = (
    _in_place_form(f) for f in (relu, elu, leaky_relu, hardtanh, celu, selu, threshold))


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):  # noqa: A002
    return rrelu(input, lower, upper, training, inplace=True)


__all__ += ["adaptive_max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
            "ctc_loss",
            "max_unpool1d", "max_unpool2d", "max_unpool3d", "channel_shuffle", "native_channel_shuffle",
            "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax", "multi_margin_loss",
            "multilabel_margin_loss", "triplet_margin_with_distance_loss", "upsample_nearest", "upsample_bilinear",
            "relu_", "elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "threshold_", "rrelu_"]


# ------------------------------------------------- fractional max pooling (Graham, "Fractional Max-Pooling", 2014)

def _fractional_intervals(xp, sample, size, out, pool):
    """PyTorch's generate_intervals for every (batch, channel) at once: the window starts ``int((i + u) alpha) -
    int(u alpha)``, alpha = (size - pool) / (out - 1), in the samples' dtype, the last window at the end."""
    if out > 1:
        alpha = sample.dtype.type(size - pool) / sample.dtype.type(out - 1)
        i = xp.arange(out - 1, dtype=sample.dtype)
        starts = ((i + sample[..., None]) * alpha).astype(np.int64) - (sample * alpha).astype(np.int64)[..., None]
        last = xp.full(sample.shape + (1,), size - pool, dtype=np.int64)
        return xp.concatenate([starts, last], axis=-1)
    return xp.full(sample.shape + (out,), size - pool, dtype=np.int64)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, nd):  # noqa: A002
    op = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    sizes = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        if len(ratio) != nd:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
        out = tuple(int(n * r) for n, r in zip(sizes, ratio))
    else:
        out = _ntuple(output_size, nd, "output_size", op)
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for name, n, k, o in zip(names, sizes, kernel, out):
        # PyTorch's checks: the last window inside the input in 2-d; in 3-d a place to spare, and its op's name
        if o + k - 1 > n or (nd == 3 and o + k - 1 == n):
            raise RuntimeError(f"{op}{'' if nd == 2 else '_out'}(): pool {name} {k} too large relative to input "
                               f"{name} {n}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    batch, channels = x.shape[0], x.shape[1]
    if _random_samples is None:
        samples = creation.rand(batch, channels, nd, dtype=input.dtype, device=input.device)
    else:
        samples = _random_samples
        if samples.dtype != input.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if samples.dim() != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
        if samples.shape[0] < batch:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if samples.shape[1] != channels:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if samples.shape[2] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    u = samples._data[:batch]
    xp = xp_of(x._data)
    # PyTorch's order of the samples: in 2-d the width's first, then the height's; in 3-d time, height, width
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_fractional_intervals(xp, u[..., order[d]], n, o, k)
              for d, (n, o, k) in enumerate(zip(sizes, out, kernel))]
    # each window's places, flat over the last nd dimensions, in PyTorch's scan order (the last dimension fastest)
    strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
    flat = xp.zeros((batch, channels) + out + tuple(kernel), dtype=np.int64)
    for d in range(nd):
        places = starts[d][..., None] + xp.arange(kernel[d])  # (N, C, out_d, k_d)
        shape = [batch, channels] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], kernel[d]
        flat = flat + places.reshape(shape) * strides[d]
    flat = flat.reshape((batch, channels) + out + (-1,))
    values = xp.take_along_axis(x._data.reshape(batch, channels, -1), flat.reshape(batch, channels, -1),
                                axis=-1).reshape(flat.shape)
    # PyTorch's pick: the first maximum (a strictly greater value replaces it), and where NaNs are, the last NaN
    nan = xp.isnan(values) if values.dtype.kind == "f" else xp.zeros(values.shape, dtype=bool)
    window = values.shape[-1]
    last_nan = window - 1 - xp.argmax(nan[..., ::-1], axis=-1)
    pick = xp.where(nan.any(axis=-1), last_nan, xp.argmax(xp.where(nan, -np.inf, values), axis=-1)
                    if values.dtype.kind == "f" else xp.argmax(values, axis=-1))
    indices = xp.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    idx = _wrap(indices)
    output = x.reshape(batch, channels, -1).gather(2, idx.reshape(batch, channels, -1)).reshape(
        batch, channels, *out)
    if unbatched:
        output, idx = output.squeeze(0), idx.squeeze(0)
    return (output, idx) if return_indices else output


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,  # noqa: A002
                          _random_samples=None):
    """The maximum of windows of ``kernel_size`` placed at pseudo-random fractional strides so that the output is
    ``output_size`` (or ``output_ratio`` of the input): one draw per (batch, channel), ``_random_samples`` of shape
    (N, C, 2) in [0, 1) when given (PyTorch's intervals from them, exactly); the gradient goes to each window's
    maximum (its first; its last NaN where NaNs are), as PyTorch's."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,  # noqa: A002
                          _random_samples=None):
    """:func:`fractional_max_pool2d` over the last three dimensions (samples (N, C, 3))."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)


__all__ += ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d_with_indices"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,  # noqa: A002
                         reduction: str = "mean", ignore_index=None, label_smoothing: float = 0.0, options=None):
    """The cross entropy of ``input @ linear_weight.T (+ linear_bias)`` against ``target`` (``cross_entropy``'s
    arguments; PyTorch 2.13's checks and messages); with ``options`` (``nn.LinearCrossEntropyOptions``) chunk by
    chunk over the batch, never holding the logits whole (engine/nn/_chunked_ce.py)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    chunkable = (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0 and target.dtype == dtypes.int64
                 and not out_features)
    if options is not None and not chunkable:
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if options is not None and chunkable:
        from ._chunked_ce import chunked

        return chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
    w2 = linear_weight.reshape(math.prod(out_features) * num_classes, in_features) if out_features else linear_weight
    logits = input @ w2.mT
    if out_features:
        logits = logits.reshape(*num_batches, num_classes, *out_features)
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight=weight, ignore_index=ignore_index, reduction=reduction,
                           label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]


# the Tensor methods of two activations (Tensor.hardshrink, Tensor.prelu), PyTorch's
Tensor.hardshrink = lambda self, lambd=0.5: hardshrink(self, lambd)
Tensor.prelu = lambda self, weight: prelu(self, weight)


# ------------------------------------------------------------------------------------- multi-head attention

def _as_additive(mask, like: Tensor, what: str):
    """An attention module's mask as what is added to the scores: a bool one (True: not allowed) as 0 and -inf,
    a float one as it is; in the scores' dtype."""
    if mask is None:
        return None
    if mask.dtype == dtypes.bool_:
        return creation.zeros(mask.shape, dtype=like.dtype, device=like.device).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {what} are supported")
    return mask.to(like.dtype)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """``nn.MultiheadAttention``'s computation, as PyTorch's function of that name: query ``(L, N, E)``, key and
    value ``(S, N, E)`` (or unbatched, without N) projected by ``in_proj_weight`` (or the three separate weights),
    ``bias_k``/``bias_v`` appended to the keys and values and with ``add_zero_attn`` a zero key and value, the
    scores ``q k^T / sqrt(E / num_heads)`` per head plus ``attn_mask`` (2-D, or 3-D per batch and head) and
    ``key_padding_mask`` (a bool True, or -inf: not allowed), softmax, dropout while ``training``, the heads joined
    and projected out. ``static_k``/``static_v`` ``(N * num_heads, S, E / num_heads)`` replace the projected keys
    and values. Returns the output and, with ``need_weights``, the attention weights (averaged over the heads
    unless ``average_attn_weights=False``). PyTorch's checks in its words."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             f"query tensor")
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, e = query.shape
    src_len = key.shape[0]
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if e != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {e}")
    hd = e // num_heads
    if hd * num_heads != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    # (L, N, E) -> (N, heads, L, head_dim)
    q = linear(query, w_q, b_q).view(tgt_len, bsz * num_heads, hd).transpose(0, 1).view(bsz, num_heads, tgt_len, hd)
    extra = 0  # (keys appended: bias_k and bias_v, then zeros; the masks let every query see them)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None and (static_k is not None or static_v is not None):
        raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")

    def heads(t, static, name):
        if static is not None:
            if static.shape[0] != bsz * num_heads:
                raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}")
            if static.shape[2] != hd:
                raise AssertionError(f"expecting {name}.size(2) of {hd}, but got {static.shape[2]}")
            return static.reshape(bsz, num_heads, static.shape[1], hd)
        if bias is not None:
            t = creation.cat([t, bias.expand(1, bsz, e)])
        return t.reshape(t.shape[0], bsz * num_heads, hd).transpose(0, 1).reshape(bsz, num_heads, t.shape[0], hd)

    bias = bias_k
    k = heads(linear(key, w_k, b_k) if static_k is None else None, static_k, "static_k")
    bias = bias_v
    v = heads(linear(value, w_v, b_v) if static_v is None else None, static_v, "static_v")
    if bias_k is not None:
        extra += 1
    if add_zero_attn:
        zeros = creation.zeros(bsz, num_heads, 1, hd, dtype=k.dtype, device=k.device)
        k, v = creation.cat([k, zeros], dim=2), creation.cat([v, zeros], dim=2)
        extra += 1
    n_keys = k.shape[2]
    scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)
    mask = _as_additive(attn_mask, scores, "attn_mask")
    if mask is not None:
        if mask.dim() == 2:
            if tuple(mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
        elif mask.dim() == 3:
            if tuple(mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
            mask = mask.view(bsz, num_heads, tgt_len, src_len)
        else:
            raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
        scores = scores + (pad(mask, (0, n_keys - mask.shape[-1])) if n_keys != mask.shape[-1] else mask)
    padding = _as_additive(key_padding_mask, scores, "key_padding_mask")
    if padding is not None:
        if extra:
            padding = pad(padding, (0, extra))
        if tuple(padding.shape) != (bsz, n_keys):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, n_keys)}, but got "
                                 f"{tuple(padding.shape)}")
        scores = scores + padding.view(bsz, 1, 1, n_keys)
    weights = softmax(scores, dim=-1)
    dropped = dropout(weights, dropout_p, training=True) if training and dropout_p > 0 else weights
    out = (dropped @ v).permute(2, 0, 1, 3).reshape(tgt_len * bsz, e)  # (L, N, heads, hd) -> rows
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, e)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights


__all__ += ["multi_head_attention_forward"]
