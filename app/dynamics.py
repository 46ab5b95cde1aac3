"""How the weights move: per parameter, at sampled steps, the weight norm, the gradient norm, the size of the
update against the weight, and histograms of the weights and of their gradients (TensorBoard's histogram view).

A sample reads the parameters before a step and after it (and the gradient the step used), on the host. Samples
are spaced so that their cost (the sampling itself and the slower step after it) stays within ``BUDGET`` (2.5%)
of the run's time, so at any size the tracking costs a few percent of the step: many samples for a slow step,
fewer for a fast one. Whole 2000-step tutorial-size runs take 2-5% longer with it (``python -m
benchmarks.inside_step``; the timing test in ``tests/app/test_inside_step.py`` holds it under 5%).

Between full samples, light ones (norms and the update ratio only: two copies of the weights) fill the curves,
within a third of the budget.

The gradient is the one the step used: for the recipes that leave it in ``.grad`` (the nn and optim ones: their
``zero_grad`` comes first) it is read there after the step; for the others (the hand-written recipes and those that
zero ``.grad`` after their update) it is computed at the weights before the step, by autograd for the two-layer
net and by the fit's hand-written gradient for the polynomial family: the same numbers the step computes.
"""

from __future__ import annotations

import time

import numpy as np

import engine

from .gradients import autograd_gradients
from .recipes import TABLE, TrainState, fit_form, fit_gradients

__all__ = ["Dynamics", "ScriptDynamics", "parameters", "BINS", "BUDGET"]

BINS = 30
BUDGET = 0.025  # the share of the run's time sampling may take (the first and last samples come on top)
FULL_SHARE = 2 / 3  # of it, what the full samples (gradients, histograms) may take; the light ones the rest


def _host(value) -> np.ndarray:
    """A host copy in the array's own floating dtype (a float32 copy is half the work of a float64 one); of a
    complex array, its real and imaginary parts side by side (so its norm is the norm of the moduli, and its
    histogram that of the parts)."""
    data = value._data if isinstance(value, engine.Tensor) else value
    a = np.array(engine.backend.to_host(data), copy=True)
    if a.dtype.kind == "c":
        return np.stack((a.real, a.imag), axis=-1)
    return a if a.dtype.kind == "f" else a.astype(np.float64)


def _norm(a: np.ndarray) -> float:
    a = a.ravel()
    return float(np.sqrt(np.dot(a.astype(np.float64, copy=False), a))) if a.dtype != np.float32 else \
        float(np.linalg.norm(a))


def parameters(state: TrainState) -> list[tuple[str, list]]:
    """The run's parameters as (name, [the objects holding it]): w1 and w2; a model's parameters by name; the
    polynomial family's scalar coefficients together as one "coefficients" vector."""
    if state.model is not None:
        named = list(state.model.named_parameters())
        if all(p._data.size == 1 for _, p in named):
            return [("coefficients", [p for _, p in named])]
        return [(name, [p]) for name, p in named]
    if state.w1 is not None:
        return [("w1", [state.w1]), ("w2", [state.w2])]
    return [("coefficients", list(range(len(state.coefficients))))]  # indices: poly-numpy rebinds its floats


def _values(state: TrainState, holders: list) -> np.ndarray:
    if holders and isinstance(holders[0], int):
        return np.array([float(np.asarray(engine.backend.to_host(
            c._data if isinstance(c, engine.Tensor) else c))) for c in (state.coefficients[i] for i in holders)])
    if len(holders) == 1:
        return _host(holders[0]).ravel()
    return np.concatenate([_host(p).ravel() for p in holders])


def _histogram(values: np.ndarray, bins: int) -> dict:
    """Counts of ``values`` in ``bins`` equal bins from their min to their max (the last bin holds the max), as
    np.histogram counts them; by bin index and bincount, several times faster than np.histogram at 100k values."""
    lo, hi = float(values.min()), float(values.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        values = values[np.isfinite(values)]
        if values.size == 0:
            return {"lo": None, "hi": None, "counts": [0] * bins}
        lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    # float32 to int32: NumPy's float64 -> intp cast alone costs more than the rest (measured at 100k)
    index = ((values - lo) * (bins / (hi - lo))).astype(np.float32).astype(np.int32)
    np.minimum(index, bins - 1, out=index)
    return {"lo": lo, "hi": hi, "counts": np.bincount(index, minlength=bins).tolist()}


class Dynamics:
    """Sampled weight, gradient and update figures of one run. The runner calls :meth:`before` and :meth:`after`
    around each step (in the run's thread); the window reads :meth:`take_new`; the log keeps :meth:`to_dict`."""

    def __init__(self, state: TrainState, budget: float = BUDGET, bins: int = BINS):
        self.state = state
        self.recipe = TABLE[state.config.recipe]
        self._start(parameters(state), budget, bins)

    def _start(self, params: list, budget: float, bins: int) -> None:
        self.budget, self.bins = budget, bins
        self.params = params
        self.names = [name for name, _ in self.params]
        self.samples: list[dict] = []
        self._spent = {True: 0.0, False: 0.0}  # seconds spent on full and on light samples
        self._costs: dict = {True: [], False: []}  # what each sample of each kind cost
        self._typical = {True: 0.0, False: 0.0}  # and the median of those costs
        self._in_last_step = 0.0  # what sampling added to the step just run
        self._last_kind = True  # and which kind of sample it was
        self._last_step = {True: 0, False: 0}  # and the step it was taken at
        self._step_avg = 0.0  # the typical step's seconds (a moving average)
        self.run_s = 0.0
        self._pending = None
        self._given = 0

    def _reads_grad_after(self) -> bool:
        return self.state.model is not None  # nn/optim recipes: zero_grad, backward, update: .grad stays

    def _grads_before(self) -> list[np.ndarray]:
        state = self.state
        if self.recipe.family == "poly":
            x, y = _host(state.x), _host(state.y)
            c = [float(_host(v)) for v in state.coefficients]
            _, grads = fit_gradients(fit_form(state.config.recipe), x, y, c)
            return [np.array([float(g) for g in grads])]
        x, y, w1, w2 = (v if isinstance(v, engine.Tensor) else engine.from_numpy(v)
                        for v in (state.x, state.y, state.w1, state.w2))
        g1, g2 = autograd_gradients(x, y, w1, w2)
        return [_host(g1).ravel(), _host(g2).ravel()]

    def _grads_after(self) -> list[np.ndarray]:
        out = []
        for _, holders in self.params:
            grads = [p.grad for p in holders]
            if any(g is None for g in grads):
                out.append(None)
            else:
                out.append(np.concatenate([_host(g).ravel() for g in grads]))
        return out

    def before(self, step: int, step_s: float) -> None:
        """Before step ``step``; ``step_s``: the time of the step before it (the run's time so far grows by it).

        Two kinds of sample share the budget: a full one (the gradient and the histograms too) may spend two
        thirds of it, a light one (norms and the update ratio: two copies of the weights) the rest, so the curves
        have points between the full samples. The first step always gets a full sample (the weights as they
        start); a later one when the steps since the last of its kind have earned its cost (:meth:`_due`)."""
        self.run_s += step_s
        # a typical step, without the sampling it held: a stall of the thread (the window drawing) buys no burst
        plain = step_s - self._in_last_step
        if self._in_last_step and self._step_avg:
            # a step that held a sample also ran slower (the copies took its data out of the caches): what it ran
            # over the typical step is the sample's cost too
            excess = max(plain - self._step_avg, 0.0)
            kind = self._last_kind
            self._spent[kind] += excess
            self._costs[kind][-1] += excess
            self._typical[kind] = sorted(self._costs[kind])[len(self._costs[kind]) // 2]
        elif plain > 0:
            self._step_avg = plain if self._step_avg == 0 else 0.9 * self._step_avg + 0.1 * plain
        self._in_last_step = 0.0
        full = not self.samples or self._due(True, step)
        if not full and not self._due(False, step):
            return
        t0 = time.perf_counter()
        weights = [_values(self.state, holders) for _, holders in self.params]
        grads = None if not full or self._reads_grad_after() else self._grads_before()
        self._pending = (step, full, weights, grads, time.perf_counter() - t0)

    def after(self) -> None:
        """After the step :meth:`before` sampled (nothing when it did not)."""
        if self._pending is None:
            return
        t0 = time.perf_counter()
        step, full, before, grads, cost = self._pending
        self._pending = None
        if full and grads is None:
            grads = self._grads_after()
        sample = {"step": step, "full": full}
        for i, ((name, holders), w0) in enumerate(zip(self.params, before)):
            g = grads[i] if full else None
            w1 = _values(self.state, holders)
            w_norm = _norm(w0)
            sample[name] = {"weight_norm": w_norm,
                            "grad_norm": _norm(g) if g is not None else None,
                            "update_ratio": _norm(w1 - w0) / w_norm if w_norm > 0 else None,
                            "weights": _histogram(w0, self.bins) if full else None,
                            "grads": _histogram(g, self.bins) if full and g is not None else None}
        self.samples.append(sample)
        cost += time.perf_counter() - t0
        costs = self._costs[full]
        costs.append(cost)
        self._typical[full] = sorted(costs)[len(costs) // 2]  # the median: a sample that stalled is not the rule
        self._spent[full] += cost
        self._last_step[full] = step
        self._in_last_step, self._last_kind = cost, full

    def final(self, step: int) -> None:
        """A full sample of the weights the run ends with (no update: the ratio is None), unless the last step
        had one. The gradient is the one at those weights (the nn and optim recipes: their last step's)."""
        if self.samples and self.samples[-1]["step"] >= step - 1 and self.samples[-1]["full"]:
            return
        t0 = time.perf_counter()
        weights = [_values(self.state, holders) for _, holders in self.params]
        grads = self._grads_after() if self._reads_grad_after() else self._grads_before()
        sample = {"step": step, "full": True}
        for (name, _), w, g in zip(self.params, weights, grads):
            sample[name] = {"weight_norm": _norm(w), "grad_norm": _norm(g) if g is not None else None,
                            "update_ratio": None, "weights": _histogram(w, self.bins),
                            "grads": _histogram(g, self.bins) if g is not None else None}
        self.samples.append(sample)
        self._spent[True] += time.perf_counter() - t0

    def _due(self, full: bool, step: int) -> bool:
        """Whether a sample of this kind, costing what its last one did, fits its share of the budget over the
        steps since that one (evenly spaced: every last cost / (share x budget x the typical step) steps)."""
        share = FULL_SHARE if full else 1 - FULL_SHARE
        since = step - self._last_step[full]
        return since * self._step_avg * share * self.budget >= self._typical[full]

    @property
    def spent_s(self) -> float:
        return self._spent[True] + self._spent[False]

    def take_new(self) -> list[dict]:
        """The samples taken since the last call (plain dicts of floats and lists: safe for another thread)."""
        new = self.samples[self._given:]
        self._given = len(self.samples)
        return new

    @property
    def cost(self) -> float:
        """Time spent sampling over the run's time."""
        return self.spent_s / self.run_s if self.run_s else 0.0

    def to_dict(self) -> dict:
        return {"params": self.names, "bins": self.bins, "budget": self.budget, "cost": self.cost,
                "samples": self.samples}


class ScriptDynamics(Dynamics):
    """The same samples of a learner's own script (app.script_child), whose steps the engine does not run: its
    parameters are the leaves of its first loss's graph that require a gradient (named as the script names them),
    and a sample's step is the update between two ``backward()`` calls: :meth:`before` at the end of one (the
    weights before the update, the gradient it just computed, in ``.grad``), :meth:`after` at the start of the
    next (the weights the update left, whatever made it: an optimizer or the script's own lines)."""

    def __init__(self, named: list, budget: float = BUDGET, bins: int = BINS):
        self.state = None
        self.recipe = None
        self._start([(name, [t]) for name, t in named], budget, bins)

    def _reads_grad_after(self) -> bool:
        return False  # .grad is read at before(): a zero_grad() may clear it before the next backward()

    def _grads_before(self) -> list:
        out = []
        for _, (t,) in self.params:
            g = t.grad
            out.append(None if g is None else _host(g).ravel())
        return out
