"""``torch.optim.Muon``: momentum whose update is orthogonalized by a Newton-Schulz iteration before it is taken
(Keller Jordan's optimizer for the 2-D weights of hidden layers; biases and embeddings go to AdamW), as PyTorch
2.13 computes it.

PyTorch runs the iteration in bfloat16. NumPy and CuPy have no bfloat16, so the engine keeps the values in float32
and rounds each result to bfloat16's 8 bits of mantissa (to nearest, ties to even, as a cast to bfloat16 does):
the same values PyTorch's steps hold, up to the order in which a product's terms are summed."""

from __future__ import annotations

import math

import numpy as np

from ..autograd._writes import wrote as _wrote
from ..backend import xp_of
from ..tensor import Tensor
from .optimizer import Optimizer, _closure_loss

__all__ = ["Muon"]

EPS = 1e-07
DEFAULT_A = 3.4445
DEFAULT_B = -4.775
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(a):
    """``a`` (float32) rounded to the nearest bfloat16 (ties to even), kept in float32; NaN stays NaN."""
    xp = xp_of(a)
    a = xp.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32)
    rounded = (bits + ((bits >> 16) & 1) + np.uint32(0x7FFF)) & np.uint32(0xFFFF0000)
    return xp.where(xp.isnan(a), a, rounded.view(np.float32))


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """The orthogonal factor of ``grad`` (2-D) approximated by ``ns_steps`` of the quintic Newton-Schulz iteration
    ``X <- a X + (b G + c G^2) X``, ``G = X X^T``, from ``grad`` scaled to norm at most 1: PyTorch's, each result
    rounded to bfloat16 as PyTorch's bfloat16 tensors hold it."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    xp = xp_of(grad)
    a, b, c = ns_coefficients
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp.sqrt((x.astype(np.float64) ** 2).sum()).astype(np.float32))
    x = _bf16(x / xp.maximum(norm, _bf16(xp.asarray(eps, dtype=np.float32))))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(np.float32(b) * gram + np.float32(c) * (gram @ gram))
        x = _bf16(np.float32(a) * x + gram_update @ x)
    return x.T if tall else x


def _lerp(start, end, weight: float):
    """PyTorch's CPU lerp, bit for bit on float32: its two formulas (the one exact at the nearer end), the weight
    (and ``1 - weight``) in the arrays' dtype, and a fused multiply-add (here in float64, rounded once). Not the
    Adam family's in-place ``_lerp`` (engine/optim/__init__.py), which rounds twice: here the result is rounded to
    bfloat16 next, and a last-bit difference decides which way a tie goes."""
    dtype = start.dtype
    w = dtype.type(weight)
    diff = end - start
    wide = np.float64 if dtype == np.float32 else dtype.type
    if abs(weight) < 0.5:
        out = start.astype(wide) + wide(w) * diff.astype(wide)
    else:
        out = end.astype(wide) - diff.astype(wide) * wide(dtype.type(1) - w)
    return out.astype(dtype, copy=False)


def _lr_ratio(adjust_lr_fn, param_shape) -> float:
    """What ``adjust_lr_fn`` multiplies the learning rate by for a parameter of ``param_shape``."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


class Muon(Optimizer):
    """Muon for 2-D parameters: ``B = mu B + (1 - mu) g`` (PyTorch's lerp), the update ``g + mu (B - g)`` with
    ``nesterov`` (else ``B``) orthogonalized by Newton-Schulz, decoupled weight decay, and the step scaled by
    ``adjust_lr_fn`` (``'original'``: ``sqrt(max(1, rows / cols))``; ``'match_rms_adamw'``:
    ``0.2 sqrt(max(rows, cols))``)."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, wd, mom = float(group["lr"]), group["weight_decay"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                w, g = p._data, p.grad._data
                if g.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                xp = xp_of(w)
                state = self._states.setdefault(p, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = xp.zeros_like(g)
                buf[...] = _lerp(buf, g, 1 - mom)
                update = _lerp(g, buf, mom) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                     group["eps"])
                _wrote(w)
                ratio = _lr_ratio(group["adjust_lr_fn"], w.shape)
                adjusted, decay = lr * ratio, 1 - lr * wd
                if isinstance(group["lr"], Tensor):  # (PyTorch's arithmetic on a Tensor lr is in its dtype)
                    t = group["lr"]._data.dtype.type
                    adjusted, decay = float(t(lr) * t(ratio)), float(t(1) - t(lr) * t(wd))
                w *= decay
                # (param.add_(update, alpha=-lr'): PyTorch's CPU kernel fuses the multiply-add, rounded once)
                alpha = w.dtype.type(-adjusted)
                wide = np.float64 if w.dtype == np.float32 else w.dtype.type
                w[...] = (w.astype(wide) + wide(alpha) * update.astype(wide)).astype(w.dtype, copy=False)
        return loss
