"""``engine.optim``: SGD (with momentum), Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop,
ASGD, Adafactor, Muon (:mod:`.muon`) and L-BFGS (:mod:`.lbfgs`), with PyTorch's update formulas, and the
learning-rate schedules of ``engine.optim.lr_scheduler``. Each ``step`` takes PyTorch's optional ``closure``
(L-BFGS needs it).

Updates run on the raw arrays in place, outside the graph, like PyTorch's ``torch.no_grad`` steps.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd._writes import wrote as _wrote
from ..backend import xp_of
from ..tensor import Tensor
from .optimizer import Optimizer, _closure_loss, _scalar

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler", "swa_utils", "Adafactor", "Muon"]


class SGD(Optimizer):
    """``p -= lr * g`` (with momentum: ``buf = momentum * buf + (1 - dampening) * g``)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, mom, damp, nesterov = float(group["lr"]), group["momentum"], group["dampening"], group["nesterov"]
            for p, w, g in params:
                if mom:
                    state = self._states.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = g.copy()
                    else:
                        buf *= mom
                        buf += (1 - damp) * g
                    g = g + mom * buf if nesterov else buf
                w -= lr * g
        return loss


class Adam(Optimizer):
    """Adam, computed as PyTorch computes it (bias corrections folded into the step size); ``amsgrad`` divides by
    the largest second moment so far, ``maximize`` ascends. ``foreach``, ``capturable`` and ``fused`` choose how
    PyTorch launches its kernels, not what it computes: accepted, and the same step is taken."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):  # (PyTorch's checks, in its order and words)
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if not isinstance(weight_decay, (int, float)) or not weight_decay >= 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() else b for b in betas)  # (PyTorch's)
        if differentiable:
            raise NotImplementedError(f"{type(self).__name__}(differentiable=True): the engine's optimizers step "
                                      "outside the graph")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, (b1, b2), eps = float(group["lr"]), map(float, group["betas"]), group["eps"]
            amsgrad = group.get("amsgrad", False)
            for p, w, g in params:
                xp = xp_of(w)
                state = self._states.get(p)
                if state is None:
                    state = self._states[p] = {"step": 0, "exp_avg": xp.zeros_like(w),
                                                 "exp_avg_sq": xp.zeros_like(w)}
                if amsgrad and "max_exp_avg_sq" not in state:  # (or a state loaded from a run without it)
                    state["max_exp_avg_sq"] = xp.zeros_like(w)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * (g * g)
                if amsgrad:
                    xp.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
                    v = state["max_exp_avg_sq"]
                bias1 = 1 - b1**t
                bias2 = 1 - b2**t
                denom = xp.sqrt(v) / math.sqrt(bias2)
                denom += eps
                w -= (lr / bias1) * (m / denom)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as PyTorch's: each step first shrinks the weights
    by ``lr * weight_decay``, then takes Adam's step on the gradient alone."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


class RMSprop(Optimizer):
    """RMSprop, computed as PyTorch computes it: ``v = alpha v + (1 - alpha) g^2``, then
    ``p -= lr g / (sqrt(v) + eps)``; ``centered`` subtracts the squared running mean of g under the root,
    ``momentum`` keeps a buffer of ``g / (sqrt(v) + eps)``, ``maximize`` ascends."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        for name, value in (("epsilon", eps), ("momentum", momentum), ("weight_decay", weight_decay),
                            ("alpha", alpha)):
            if not isinstance(value, (int, float)) or not value >= 0:  # NaN fails too
                raise ValueError(f"Invalid {name} value: {value}")
        if differentiable:
            raise NotImplementedError("RMSprop(differentiable=True): the engine's optimizers step outside the graph")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, alpha, eps = float(group["lr"]), group["alpha"], group["eps"]
            mom, centered = group["momentum"], group["centered"]
            for p, w, g in params:
                xp = xp_of(w)
                state = self._states.get(p)
                if state is None:
                    state = self._states[p] = {"step": 0, "square_avg": xp.zeros_like(w)}
                    if mom > 0:
                        state["momentum_buffer"] = xp.zeros_like(w)
                    if centered:
                        state["grad_avg"] = xp.zeros_like(w)
                state["step"] += 1
                v = state["square_avg"]
                v *= alpha
                v += (1 - alpha) * g * g
                if centered:
                    m = state["grad_avg"]
                    m += (1 - alpha) * (g - m)  # lerp
                    avg = xp.sqrt(v - m * m)
                else:
                    avg = xp.sqrt(v)
                avg += eps
                if mom > 0:
                    buf = state["momentum_buffer"]
                    buf *= mom
                    buf += g / avg
                    w -= lr * buf
                else:
                    w -= lr * g / avg  # ((lr g) / avg: PyTorch's addcdiv_ order)
        return loss


def _check_settings(**values) -> None:
    """PyTorch's refusals of a negative (or NaN) setting, by its name."""
    for name, value in values.items():
        if not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def _moments(state, g, b1, b2):
    """NAdam's and RAdam's first and second moments moved by ``g`` in place (``exp_avg.lerp_(g, 1 - b1)``,
    ``exp_avg_sq * b2 + (1 - b2) g^2``), as PyTorch's; returns them."""
    m, v = state["exp_avg"], state["exp_avg_sq"]
    _lerp(m, g, 1 - b1)
    v *= b2
    v += (1 - b2) * (g * g)
    return m, v


def _lerp(m, g, weight) -> None:
    """``m.lerp_(g, weight)`` as PyTorch computes it on the CPU: ``m + weight (g - m)`` below one half, else
    ``g - (g - m)(1 - weight)``."""
    if weight < 0.5:
        m += weight * (g - m)
    else:
        m[...] = g - (g - m) * (1 - weight)


class Adagrad(Optimizer):
    """Each weight's step divided by the root of the sum of its squared gradients so far (Duchi et al.):
    ``sum += g^2``, ``p -= lr / (1 + (step - 1) lr_decay) * g / (sqrt(sum) + eps)``, as PyTorch's."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_settings(lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, decay, eps = float(group["lr"]), group["lr_decay"], group["eps"]
            start = group["initial_accumulator_value"]
            for p, w, g in params:
                xp = xp_of(w)
                state, t = self._advance(p, w, sum=lambda w, start=start: xp_of(w).full_like(w, start))
                clr = lr / (1 + (t - 1) * decay)
                total = state["sum"]
                total += g * g
                std = xp.sqrt(total)
                std += eps
                w += -clr * (g / std)
        return loss


class Adamax(Optimizer):
    """Adam with the infinity norm (Kingma and Ba): ``u = max(beta2 u, |g| + eps)``, ``p -= lr / (1 - beta1^t) *
    m / u``, as PyTorch's."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_settings(epsilon=eps, weight_decay=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, (b1, b2), eps = float(group["lr"]), group["betas"], group["eps"]
            for p, w, g in params:
                xp = xp_of(w)
                state, t = self._advance(p, w, "exp_avg", "exp_inf")
                m, u = state["exp_avg"], state["exp_inf"]
                _lerp(m, g, 1 - b1)
                u *= b2
                xp.maximum(u, abs(g) + eps, out=u)
                clr = lr / (1 - b1 ** t)
                w += -clr * (m / u)
        return loss


def _factored_rows(w):
    return xp_of(w).zeros(w.shape[:-1] + (1,), dtype=w.dtype)


def _factored_columns(w):
    return xp_of(w).zeros(w.shape[:-2] + (1,) + w.shape[-1:], dtype=w.dtype)


class Adafactor(Optimizer):
    """Adam's second moment kept factored (Shazeer and Stern, 2018): for a matrix, a running mean of each row's and
    each column's squared gradients instead of every element's (memory of m + n, not m n), their outer product
    normalised as the estimate; no first moment; the step size relative to the weights' scale (``lr`` capped by
    1/sqrt(step)) and the update's RMS clipped at ``d``. As PyTorch's ``optim.Adafactor``, line for line."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, decay, d, wd = float(group["lr"]), group["beta2_decay"], group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                w, g = p._data, p.grad._data
                if group["maximize"]:
                    g = -g
                _wrote(w)
                xp = xp_of(w)
                if g.ndim > 1:
                    state, t = self._advance(p, w, row_var=_factored_rows, col_var=_factored_columns)
                else:
                    state, t = self._advance(p, w, "variance")
                if eps1 is None:  # (the first parameter's dtype sets it for the group, as PyTorch's loop does)
                    eps1 = float(np.finfo(w.dtype).eps)
                one_minus_beta2 = t ** decay
                rho = min(lr, 1 / (t ** 0.5))
                alpha = max(eps2, float(xp.sqrt((w * w).sum())) / (w.size ** 0.5)) * rho
                if wd != 0:
                    w *= 1 - lr * wd
                if g.ndim > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    _lerp(row_var, xp.sqrt((g * g).sum(-1, keepdims=True)) ** 2 / g.shape[-1], one_minus_beta2)
                    _lerp(col_var, xp.sqrt((g * g).sum(-2, keepdims=True)) ** 2 / g.shape[-2], one_minus_beta2)
                    estimate = row_var @ col_var
                    estimate /= xp.maximum(row_var.mean(-2, keepdims=True), eps1)
                else:
                    _lerp(state["variance"], g * g, one_minus_beta2)
                    estimate = state["variance"].copy()
                update = 1 / xp.sqrt(xp.maximum(estimate, eps1 * eps1))
                update *= g
                denom = max(1.0, float(xp.sqrt((update * update).sum())) / ((update.size ** 0.5) * d))
                w += update * (-alpha / denom)
        return loss


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), its momentum warmed up by ``momentum_decay``, as PyTorch's."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_settings(epsilon=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, (b1, b2), eps, psi = float(group["lr"]), group["betas"], group["eps"], group["momentum_decay"]
            for p, w, g in params:
                xp = xp_of(w)
                state, t = self._advance(p, w, "exp_avg", "exp_avg_sq", mu_product=1.0)
                mu = b1 * (1.0 - 0.5 * (0.96 ** (t * psi)))
                mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * psi)))
                state["mu_product"] = product = _scalar(state["mu_product"] * _scalar(mu))
                m, v = _moments(state, g, b1, b2)
                denom = xp.sqrt(v / (1 - b2 ** t))
                denom += eps
                w += (-lr * (1.0 - mu) / (1.0 - product)) * (g / denom)
                w += ((-lr * mu_next) / (1.0 - product * mu_next)) * (m / denom)
        return loss


class RAdam(Optimizer):
    """Adam with its variance rectified (Liu et al.): plain momentum SGD while the second moment is too young to
    trust (``rho_t <= 5``), then Adam's step scaled by the rectification, as PyTorch's."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_settings(epsilon=eps, weight_decay=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, (b1, b2), eps = float(group["lr"]), group["betas"], group["eps"]
            for p, w, g in params:
                xp = xp_of(w)
                state, t = self._advance(p, w, "exp_avg", "exp_avg_sq")
                m, v = _moments(state, g, b1, b2)
                bias1, bias2 = 1 - b1 ** t, 1 - b2 ** t
                corrected = m / bias1
                rho_inf = 2 / (1 - b2) - 1
                rho_t = rho_inf - 2 * t * (b2 ** t) / bias2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    root = xp.sqrt(v)
                    root += eps
                    w -= corrected * lr * ((bias2 ** 0.5) / root) * rect
                else:
                    w -= corrected * lr
        return loss


class Adadelta(Optimizer):
    """Zeiler's Adadelta, as PyTorch's: ``v = rho v + (1 - rho) g^2``, ``d = sqrt(u + eps) / sqrt(v + eps) * g``,
    ``u = rho u + (1 - rho) d^2``, ``p -= lr d``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_settings(epsilon=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      capturable=capturable, maximize=maximize, differentiable=differentiable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, rho, eps = float(group["lr"]), group["rho"], group["eps"]
            for p, w, g in params:
                xp = xp_of(w)
                state, _ = self._advance(p, w, "square_avg", "acc_delta")
                v, u = state["square_avg"], state["acc_delta"]
                v *= rho
                v += (1 - rho) * (g * g)
                delta = xp.sqrt(u + eps) / xp.sqrt(v + eps) * g
                u *= rho
                u += (1 - rho) * (delta * delta)
                w -= lr * delta
        return loss


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller and Braun), as PyTorch's: each weight keeps its own step size, grown by
    ``etas[1]`` while its gradient keeps its sign and cut by ``etas[0]`` when it flips (that step then skipped),
    within ``step_sizes``; the weight moves by its step size against the gradient's sign."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            (minus, plus), (low, high), lr = group["etas"], group["step_sizes"], float(group["lr"])
            for p, w, g in params:
                xp = xp_of(w)
                state, _ = self._advance(p, w, "prev", step_size=lambda w, lr=lr: xp_of(w).full_like(w, lr))
                prev, size = state["prev"], state["step_size"]
                sign = xp.sign(g * prev)
                factor = xp.where(sign > 0, plus, xp.where(sign < 0, minus, 1.0)).astype(w.dtype)
                size *= factor
                xp.clip(size, low, high, out=size)
                g = g.copy()
                g[factor == factor.dtype.type(minus)] = 0  # (the sign flipped: no step, and no memory of it)
                w -= xp.sign(g) * size
                prev[...] = g
        return loss


class ASGD(Optimizer):
    """Averaged SGD (Polyak and Juditsky), as PyTorch's: ``p *= 1 - lambd eta``, ``p -= eta g``, with ``eta``
    decaying as ``lr / (1 + lambd lr t)^alpha``; from step ``t0`` on, ``state["ax"]`` holds the running average
    of the weights (before, the weights themselves)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_settings(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params in self._groups():
            lr, lambd, alpha, t0 = float(group["lr"]), group["lambd"], group["alpha"], group["t0"]
            for p, w, g in params:
                state, t = self._advance(p, w, "ax", eta=_scalar(lr), mu=1.0)
                eta, mu, ax = state["eta"], state["mu"], state["ax"]
                w *= 1 - lambd * eta
                w -= eta * g
                if mu != 1:
                    ax += (w - ax) * mu
                else:
                    ax[...] = w
                state["eta"] = _scalar(lr / ((1 + lambd * lr * t) ** alpha))
                state["mu"] = _scalar(1 / max(1, t - t0))
        return loss


from . import lr_scheduler, swa_utils  # noqa: E402 - they name Optimizer, defined above
from .lbfgs import LBFGS  # noqa: E402 - it is an Optimizer
from .muon import Muon  # noqa: E402 - it is an Optimizer
