"""``engine.optim``: SGD (with momentum), Adam and RMSprop, with PyTorch's update formulas, and the learning-rate
schedules of ``engine.optim.lr_scheduler``.

Updates run on the raw arrays in place, outside the graph, like PyTorch's ``torch.no_grad`` steps.
"""

from __future__ import annotations

import math

from ..backend import to_device_array, xp_of
from ..tensor import Tensor, _wrap

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]


class Optimizer:
    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups = []
        self.state: dict = {}
        for g in groups:
            group = dict(defaults)
            group.update(g)
            group["params"] = list(group["params"])
            self._check(group)
            self.param_groups.append(group)

    def _check(self, group):
        lr = group.get("lr")
        if not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")

    def zero_grad(self, set_to_none: bool = True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.zero_()

    def _groups(self):
        """(group, [(p, its array, its gradient's array)]) for the parameters that have a gradient, with the
        gradient as PyTorch's update rules take it: negated for ``maximize``, then weight decay added."""
        for group in self.param_groups:
            wd, maximize = group.get("weight_decay", 0.0), group.get("maximize", False)
            params = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                w, g = p._data, p.grad._data
                if maximize:
                    g = -g
                if wd:
                    g = g + wd * w
                params.append((p, w, g))
            yield group, params

    def __repr__(self):
        """As PyTorch prints an optimizer: each parameter group's settings, one a line, by name."""
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def state_dict(self) -> dict:
        """As PyTorch's: ``{"state": {index: {name: tensor or number}}, "param_groups": [{settings, "params":
        [indices]}]}``, a parameter known by its position across the groups, its buffers copied as tensors, so
        ``engine.save`` can keep it and :meth:`load_state_dict` put it back into an optimizer of the same
        parameters (a checkpoint of model and optimizer resumes a run where it stopped)."""
        index, groups = {}, []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[key]: {name: _wrap(v.copy()) if hasattr(v, "shape") else v for name, v in s.items()}
                 for key, s in self.state.items() if key in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Settings and buffers from :meth:`state_dict` of an optimizer over the same parameters (the same groups
        of the same sizes), each buffer moved to its parameter's device and dtype."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        by_index = {}
        for saved, group in zip(saved_groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            by_index.update(zip(saved["params"], group["params"]))
        state = {}
        for key, buffers in state_dict["state"].items():
            p = by_index[key]
            state[id(p)] = {
                name: to_device_array(v._data, p.device, dtype=p._data.dtype if v.dtype.is_floating_point else None,
                                      copy=True) if isinstance(v, Tensor) else v
                for name, v in buffers.items()}
        self.state = state
        for saved, group in zip(saved_groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def step(self):
        raise NotImplementedError


class SGD(Optimizer):
    """``p -= lr * g`` (with momentum: ``buf = momentum * buf + (1 - dampening) * g``)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False):
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def step(self):
        for group, params in self._groups():
            lr, mom, damp, nesterov = group["lr"], group["momentum"], group["dampening"], group["nesterov"]
            for p, w, g in params:
                if mom:
                    state = self.state.setdefault(id(p), {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = g.copy()
                    else:
                        buf *= mom
                        buf += (1 - damp) * g
                    g = g + mom * buf if nesterov else buf
                w -= lr * g


class Adam(Optimizer):
    """Adam, computed as PyTorch computes it (bias corrections folded into the step size)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameters: {betas}")
        if eps < 0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self):
        for group, params in self._groups():
            lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
            for p, w, g in params:
                xp = xp_of(w)
                state = self.state.get(id(p))
                if state is None:
                    state = self.state[id(p)] = {"step": 0, "exp_avg": xp.zeros_like(w),
                                                 "exp_avg_sq": xp.zeros_like(w)}
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * (g * g)
                bias1 = 1 - b1**t
                bias2 = 1 - b2**t
                denom = xp.sqrt(v) / math.sqrt(bias2)
                denom += eps
                w -= (lr / bias1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as PyTorch's: each step first shrinks the weights
    by ``lr * weight_decay``, then takes Adam's step on the gradient alone."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _groups(self):
        for group in self.param_groups:
            decay, lr = group.get("weight_decay", 0.0), group["lr"]
            params = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                w, g = p._data, p.grad._data
                if group.get("maximize", False):
                    g = -g
                if decay:
                    w *= 1 - lr * decay
                params.append((p, w, g))
            yield group, params


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

    def step(self):
        for group, params in self._groups():
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            mom, centered = group["momentum"], group["centered"]
            for p, w, g in params:
                xp = xp_of(w)
                state = self.state.get(id(p))
                if state is None:
                    state = self.state[id(p)] = {"step": 0, "square_avg": xp.zeros_like(w)}
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
                    w -= lr * (g / avg)


from . import lr_scheduler  # noqa: E402 - it names Optimizer, defined above
