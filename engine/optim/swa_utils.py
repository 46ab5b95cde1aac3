"""``engine.optim.swa_utils``, as ``torch.optim.swa_utils``: stochastic weight averaging and exponential moving
averages of a model's weights (``AveragedModel``), the SWA learning-rate schedule (``SWALR``) and ``update_bn``,
which recomputes BatchNorm's running statistics for the averaged weights with one pass over the data."""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import creation
from ..autograd import no_grad
from ..nn.modules import Module, _BatchNorm
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """The exponential moving average, ``ema = decay * ema + (1 - decay) * current``, over lists of tensors in
    place (``AveragedModel(model, multi_avg_fn=...)``)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                if p_ema.is_floating_point() or p_ema.is_complex():
                    p_ema.lerp_(p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The running mean of the weights seen, over lists of tensors in place."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            n = float(num_averaged)
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                if p_avg.is_floating_point() or p_avg.is_complex():
                    p_avg.lerp_(p_model, 1 / (n + 1))
                else:
                    p_avg.add_((p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor: ``averaged + (current - averaged) / (num_averaged + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose weights are an average of ``model``'s over the calls of
    :meth:`update_parameters`: their running mean (SWA) by default, or what ``avg_fn``/``multi_avg_fn`` computes
    (``get_ema_multi_avg_fn(0.999)``: an exponential moving average). ``use_buffers`` averages the buffers too
    (else they are copied from ``model``). Calling it runs the copy; ``n_averaged`` counts the updates."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", creation.tensor(0, device=device))  # (int64, as PyTorch's)
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """One more of ``model``'s weights into the average (the first one copied)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if first:
                    p_averaged.detach().copy_(p_model_)
            if not first:
                n = self.n_averaged
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged, current, n)
                elif self.avg_fn is not None:
                    for p_averaged, p_model in zip(averaged, current, strict=True):
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, n.to(p_averaged.device)))
                else:
                    avg_fn = get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged, current, strict=True):
                        p_averaged.copy_(avg_fn(p_averaged, p_model, n.to(p_averaged.device)))
            if not self.use_buffers:  # the buffers follow the model's
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """BatchNorm's running statistics of ``model`` recomputed from one pass over ``loader`` (its batches, or the
    first item of each where they are tuples or lists), as a cumulative average, with no gradient: after training
    an :class:`AveragedModel`, whose averaged weights the running statistics of no single model fit."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:  # noqa: A001
            if isinstance(input, (list, tuple)):
                input = input[0]  # noqa: A001
            if device is not None:
                input = input.to(device)  # noqa: A001
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _format_param(name, optimizer, param):
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


class SWALR(LRScheduler):
    """The learning rate annealed from each group's to ``swa_lr`` over ``anneal_epochs`` steps (``"cos"`` or
    ``"linear"``), then held there: the schedule of the SWA phase of training."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
