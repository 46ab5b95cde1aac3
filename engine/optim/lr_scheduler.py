"""``engine.optim.lr_scheduler``: learning-rate schedules, with PyTorch's formulas and calling convention.

A scheduler sets each parameter group's ``lr`` when made (epoch 0) and again at each ``step()``, which a training
loop calls after ``optimizer.step()`` (once an epoch, or once a step). Each new rate is computed from the group's
current one, as PyTorch's are, so the rates are PyTorch's to the last bit; ``get_last_lr()`` gives them.
"""

from __future__ import annotations

import functools
import math
import warnings
from bisect import bisect_right
from collections import Counter

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "SequentialLR",
           "ChainedScheduler", "OneCycleLR", "CyclicLR", "ReduceLROnPlateau"]


class LRScheduler:
    def __init__(self, optimizer, last_epoch: int = -1):
        if not (hasattr(optimizer, "param_groups") and hasattr(optimizer, "step")):  # engine.optim's optimizers
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:  # (a Tensor lr's start copied, as PyTorch's)
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if hasattr(lr, "clone") else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                                   "scheduler with last_epoch >= 0 (load the optimizer's state_dict first)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _track_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The scheduler's first rates, set as it is made (and by SequentialLR when it takes over)."""
        self._step_count = 0
        self._initial = True
        try:
            self.step()
        finally:
            self._initial = False

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The rates the last ``step()`` (or the scheduler's making) set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        if self._step_count == 1 and not getattr(self.optimizer, "_stepped", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`: call them in the "
                          "opposite order, `optimizer.step()` before `lr_scheduler.step()`, or the schedule's "
                          "first rate is skipped.", UserWarning, stacklevel=2)
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_lr(group, lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def _current(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]


def _set_lr(group, lr) -> None:
    """A group's learning rate set: a Tensor one (PyTorch's ``lr=torch.tensor(...)``) written in place, as
    PyTorch's schedules write it."""
    if hasattr(group["lr"], "fill_"):
        group["lr"].fill_(float(lr))
    else:
        group["lr"] = lr


def _track_steps(optimizer) -> None:
    """Marks the optimizer when its ``step()`` has run, for the warning of a scheduler stepped before it."""
    if getattr(optimizer.step, "_tracked", False):
        return
    step = optimizer.step

    @functools.wraps(step)
    def tracked(*args, **kwargs):
        optimizer._stepped = True
        return step(*args, **kwargs)

    tracked._tracked = True
    optimizer.step = tracked


class LambdaLR(LRScheduler):
    """``base_lr * lr_lambda(epoch)`` (one function, or one per parameter group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        # the functions themselves cannot be saved (as in PyTorch, a lambda's state is left out)
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class StepLR(LRScheduler):
    """The rate times ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """The rate times ``gamma`` at each of the ``milestones`` (epochs)."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]

    def _closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """The rate times ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the base rate down to ``eta_min`` over ``T_max`` epochs (then back up, and so on)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if isinstance(T_max, bool) or not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive integer, got {T_max!r}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        t, T, low = self.last_epoch, self.T_max, self.eta_min  # noqa: N806
        if self._initial:
            return self._current()
        if self._step_count == 1 and t > 0:
            return [low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._current())]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (lr - low) + low
                for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


def _lambdas(optimizer, lr_lambda, what: str = "lr_lambdas") -> list:
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} {what}, but got {len(lr_lambda)}")
        lambdas = list(lr_lambda)
    else:
        lambdas = [lr_lambda] * len(optimizer.param_groups)
    for fn in lambdas:
        if not callable(fn):
            raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
    return lambdas


class MultiplicativeLR(LRScheduler):
    """The rate times ``lr_lambda(epoch)`` at each step (one function, or one per parameter group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._initial:
            return self._current()
        return [lr * f(self.last_epoch) for f, lr in zip(self.lr_lambdas, self._current())]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class ConstantLR(LRScheduler):
    """The rate times ``factor`` for the first ``total_iters`` epochs, then the base rate."""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr * (1.0 / self.factor) for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The rate's factor going in a straight line from ``start_factor`` to ``end_factor`` over ``total_iters``
    epochs (a warm-up), then held."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current()]
        if self._initial or self.last_epoch > self.total_iters:
            return self._current()
        span = self.end_factor - self.start_factor
        return [lr * (1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span))
                for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """The rate decayed as ``(1 - epoch / total_iters) ** power`` down to 0 at ``total_iters``."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._initial or self.last_epoch > self.total_iters:
            return self._current()
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in self._current()]

    def _closed_form_lr(self) -> list:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Half a cosine from the base rate to ``eta_min`` over ``T_0`` epochs, then a restart at the base rate, each
    period ``T_mult`` times the last (SGDR, Loshchilov and Hutter)."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = self.T_i = T_0  # noqa: N815
        self.T_mult, self.eta_min, self.T_cur = T_mult, eta_min, last_epoch  # noqa: N815
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        """One epoch on, or to ``epoch`` (a fraction of one too: ``scheduler.step(epoch + i / iters)``)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            _set_lr(group, lr)
        self._last_lr = self._current()


class _OfSchedulers(LRScheduler):
    """A scheduler made of others (SequentialLR, ChainedScheduler): its state holds each one's."""

    _schedulers: list

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)


class SequentialLR(_OfSchedulers):
    """Each of ``schedulers`` in turn, the next taking over at each of the ``milestones`` (epochs): a warm-up,
    then a decay."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"SequentialLR at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError("SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires "
                                 "additional kwargs to be specified when calling `step`, but got one at index "
                                 f"{i} in the given schedulers sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"SequentialLR expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                                 f"which is different from {type(optimizer).__name__}.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers, self._milestones = schedulers, list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        self._step_count = 0
        for group in optimizer.param_groups:
            _set_lr(group, group["initial_lr"])
        for scheduler in schedulers:  # each was made (a step) already: undone
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Several schedulers stepped together, each changing the rate the one before it set."""

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                                 f"which is different from {type(optimizer).__name__}.")
        self._schedulers, self.optimizer = schedulers, optimizer
        self._last_lr = [g["lr"] for g in schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


def _per_group(name: str, optimizer, value) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"expected {len(optimizer.param_groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _start_momentum_cycle(scheduler, optimizer, max_momentum, base_momentum, last_epoch):
    """OneCycleLR's and CyclicLR's start of the momentum's cycle (or Adam's beta1's): each group at its top, with
    both ends noted in the group; the (tops, bases)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    tops = _per_group("max_momentum", optimizer, max_momentum)
    bases = _per_group("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for top, base, group in zip(tops, bases, optimizer.param_groups):
            _set_momentum(group, top, scheduler.use_beta1)
            group["max_momentum"], group["base_momentum"] = top, base
    return tops, bases


def _set_momentum(group, value, use_beta1):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class OneCycleLR(LRScheduler):
    """Smith's one-cycle policy, stepped once per batch: the rate rises from ``max_lr / div_factor`` to ``max_lr``
    over ``pct_start`` of the ``total_steps``, then anneals to ``max_lr / div_factor / final_div_factor`` (cosine or
    linear), the momentum (or Adam's beta1) cycling the other way."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is not None:
            if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if three_phase:
            self._phases = [
                (float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                 "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal = self._annealing_cos if anneal_strategy == "cos" else self._annealing_linear
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _start_momentum_cycle(self, optimizer, max_momentum, base_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        rates = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, mom_from, mom_to) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    rate = self._anneal(group[lr_from], group[lr_to], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[mom_from], group[mom_to], pct)
                    break
                start = end
            rates.append(rate)
            if self.cycle_momentum:
                _set_momentum(group, momentum, self.use_beta1)
        return rates


class CyclicLR(LRScheduler):
    """Smith's cyclical learning rate, stepped once per batch: the rate runs from ``base_lr`` up to ``max_lr`` over
    ``step_size_up`` steps and back down over ``step_size_down``, its height kept (``triangular``), halved each
    cycle (``triangular2``) or shrunk by ``gamma`` each step (``exp_range``), or scaled by your ``scale_fn``; the
    momentum (or Adam's beta1) cycles the other way. PyTorch's formulas."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not (hasattr(optimizer, "param_groups") and hasattr(optimizer, "step")):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_lr(group, lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        if scale_fn is not None:
            self.scale_mode = scale_mode
        else:  # (each mode has its own unit: triangular and triangular2 scale by cycle, exp_range by step)
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.max_momentums, self.base_momentums = _start_momentum_cycle(self, optimizer, max_momentum,
                                                                            base_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        rates = [base + ((top - base) * scale_factor) * self.scale_fn(at) for base, top in zip(self.base_lrs,
                                                                                               self.max_lrs)]
        if self.cycle_momentum:
            for base, top, group in zip(self.base_momentums, self.max_momentums, self.optimizer.param_groups):
                _set_momentum(group, top - ((top - base) * scale_factor) * self.scale_fn(at), self.use_beta1)
        return rates


class ReduceLROnPlateau(LRScheduler):
    """The rate times ``factor`` once the metric given to ``step(metric)`` has not improved for ``patience``
    epochs (by ``threshold``, relative or absolute), then ``cooldown`` epochs of rest; never below ``min_lr``."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not (hasattr(optimizer, "param_groups") and hasattr(optimizer, "step")):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.factor, self.optimizer = factor, optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        if mode not in ("min", "max"):
            raise ValueError("mode " + str(mode) + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + str(threshold_mode) + " is unknown!")
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._step_count = 0
        self._last_lr = self._current()
        self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    def step(self, metrics, epoch=None) -> None:  # noqa: D417 - PyTorch's signature
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible.", UserWarning, stacklevel=2)
        self.last_epoch = epoch
        self._step_count += 1
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            if len(self.optimizer.param_groups) != len(self.min_lrs):
                if self.default_min_lr is None:
                    raise RuntimeError(f"The number of param groups in the `optimizer` "
                                       f"({len(self.optimizer.param_groups)}) differs from when `ReduceLROnPlateau` "
                                       f"was initialized ({len(self.min_lrs)})")
                self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
            for group, low in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, low)
                if old - new > self.eps:
                    _set_lr(group, new)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current()
