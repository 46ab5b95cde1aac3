"""``engine.nn.utils``: gradient clipping and parameter vectors, as ``torch.nn.utils``'s, for a training loop that
keeps its gradients in bounds (``clip_grad_norm_(model.parameters(), 1.0)`` between ``backward()`` and
``step()``). The gradients are scaled in place, on their device, with no copy to the host."""

from __future__ import annotations

import math

from ... import creation
from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "rnn"]


def _listed(parameters) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scales the gradients so that their total ``norm_type``-norm (of all of them as one vector) is at most
    ``max_norm``; returns the total norm before clipping (a 0-d tensor on the gradients' device)."""
    grads = [p.grad for p in _listed(parameters) if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return creation.tensor(0.0)
    with no_grad():
        norms = [g.norm(norm_type) for g in grads]
        total = norms[0] if len(norms) == 1 else creation.stack(norms).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.dtype))
    return total


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


from . import rnn  # noqa: E402  (torch.nn.utils.rnn: padded and packed sequences)
