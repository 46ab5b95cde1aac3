"""``torch.distributions.utils``: the helpers a distribution of one's own is written with, as PyTorch's families
are (``broadcast_all`` of its parameters, probabilities to logits and back, ``clamp_probs``, ``lazy_property``, a
lower triangle to a vector and back)."""

from __future__ import annotations

import functools

import numpy as np

from .. import creation
from ..tensor import Size, Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.5772156649015329


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or isinstance(value, np.number)


def broadcast_all(*values) -> tuple:
    """The values (Tensors or numbers) broadcast to one shape; a number becomes a tensor of the first Tensor's dtype
    and device (the default dtype where there is none), as PyTorch's."""
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = [v if isinstance(v, Tensor) else
               creation.tensor(float(v)) if like is None else creation.tensor(v, dtype=like.dtype, device=like.device)
               for v in values]
    from ..functional import broadcast_tensors

    return tuple(broadcast_tensors(*tensors))


def _sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.dim() - dim], -1).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """The sigmoid of ``logits`` (``is_binary``) or their softmax over the last dimension."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into ``[eps, 1 - eps]`` (the dtype's eps), so their logs are finite."""
    eps = float(np.finfo(probs.dtype.np).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """The logits of ``probs`` (clamped first): log-odds where ``is_binary``, else their logs."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed at its first use and then kept on the instance (so a parameter derived from another,
    such as ``logits`` from ``probs``, is made once), computed with gradients on as PyTorch's."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        from ..autograd import enable_grad

        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n: int, diag: int, device) -> Tensor:
    arange = creation.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The elements of the lower triangle of ``mat`` (from the ``diag``-th diagonal down), row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The lower triangular matrix (from the ``diag``-th diagonal down) whose elements, row by row, are ``vec``'s
    last dimension; refused where that length is no triangle's."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = float(np.finfo(vec.dtype.np).eps)
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(Size(tuple(vec.shape[:-1]) + (n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
