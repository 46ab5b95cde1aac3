"""``engine.nn.utils``: gradient clipping and parameter vectors, as ``torch.nn.utils``'s, for a training loop that
keeps its gradients in bounds (``clip_grad_norm_(model.parameters(), 1.0)`` between ``backward()`` and
``step()``). The gradients are scaled in place, on their device, with no copy to the host."""

from __future__ import annotations

import math
import warnings

from ... import creation
from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "rnn",
           "get_total_norm", "clip_grads_with_norm_", "clip_grad_norm", "parametrize", "parametrizations",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "stateless", "skip_init",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "fusion",
           "clip_grad", "convert_parameters", "memory_format", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]


def _listed(parameters) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all of ``tensors`` as one vector (a 0-d tensor on their device; 0 for none)."""
    tensors = [t for t in _listed(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    with no_grad():
        norms = [t.norm(norm_type) for t in tensors]
        total = norms[0] if len(norms) == 1 else creation.stack([n.to(norms[0].device) for n in norms]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scales the parameters' gradients by ``max_norm / total_norm`` where that is under 1 (``total_norm`` from
    :func:`get_total_norm` of the gradients: the second half of :func:`clip_grad_norm_`)."""
    grads = [p.grad for p in _listed(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        scale = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scales the gradients so that their total ``norm_type``-norm (of all of them as one vector) is at most
    ``max_norm``; returns the total norm before clipping (a 0-d tensor on the gradients' device)."""
    parameters = _listed(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """PyTorch's deprecated name of :func:`clip_grad_norm_` (with its FutureWarning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps each gradient element to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _listed(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters) -> Tensor:
    """The parameters' values, flattened and joined into one vector."""
    return creation.cat([p.reshape(-1) for p in _listed(parameters)])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copies ``vec``'s values into the parameters, in order (the inverse of :func:`parameters_to_vector`)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _listed(parameters)
    if vec.numel() != sum(p.numel() for p in params):
        raise RuntimeError(f"vector_to_parameters: the vector has {vec.numel()} elements, the parameters "
                           f"{sum(p.numel() for p in params)}")
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[start:start + n].view(p.shape))
            start += n


from . import fusion, memory_format, parametrizations, parametrize, rnn, stateless  # noqa: E402  (rnn: padded, packed)
from ._hooked_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: E402
from .fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: E402


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` made on ``device`` (PyTorch's: on the meta device, then given uninitialized
    memory there, so no initialization is paid for; its values promise nothing). The engine has no meta device:
    the module is made where asked, with its usual initialization, which is one of the values PyTorch may leave."""
    import inspect

    from ..modules import Module

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    return module_cls(*args, **kwargs)


def __getattr__(name: str):
    """``clip_grad`` and ``convert_parameters``, PyTorch's submodules where older scripts import from, loaded when
    first named (they import from this module: loading them here would make an import cycle)."""
    if name in ("clip_grad", "convert_parameters"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
