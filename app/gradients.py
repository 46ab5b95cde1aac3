"""Manual vs autograd vs numerical gradients of the tutorial's two-layer net at one state.

* manual: the tutorial's hand-written backprop, on the run's device and dtype;
* autograd: ``loss.backward()`` through the engine, same device and dtype;
* numerical: float64 central differences on the host. A perturbation of ``w1[i, j]`` only moves column
  ``j`` of ``h`` (and of ``w2[i, j]`` only column ``j`` of ``y_pred``), so each probe costs a small update,
  not a whole forward pass; large matrices are probed on a random sample of elements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import engine

from .config import RunConfig
from .recipes import TABLE, TrainState, host_draws, manual_backprop

PARAMS = ("w1", "w2")
PAIRS = (("manual", "autograd"), ("manual", "numerical"), ("autograd", "numerical"))

# (good, acceptable) relative error per dtype: below good is green, below acceptable yellow, else red
TOLERANCES = {"float32": (1e-4, 1e-2), "float64": (1e-9, 1e-6)}


@dataclass
class PairStats:
    max_abs: float
    rel_error: float  # ||a - b|| / max(||a||, ||b||)
    cosine: float
    worst_index: tuple
    worst_a: float
    worst_b: float
    compared: int  # elements compared (a sample, for numerical pairs on large matrices)
    floor: float = 0.0  # rounding of the run's dtype at these weights, when one side is float64 numerical

    def thresholds(self, dtype: str) -> tuple[float, float]:
        """(good, acceptable) bounds on the relative error. Near convergence a float32 gradient is a small
        difference of large terms, so its own rounding can be large: a float64 reference may differ by that
        much with nothing wrong. Such a difference is graded acceptable ("within rounding"), not good."""
        good, ok = TOLERANCES[dtype]
        return good, max(ok, 3 * self.floor)

    def grade(self, dtype: str) -> str:
        good, ok = self.thresholds(dtype)
        if not np.isfinite(self.rel_error):
            return "bad"
        return "good" if self.rel_error <= good else "ok" if self.rel_error <= ok else "bad"


@dataclass
class GradientReport:
    dtype: str
    device: str
    source: str  # "initial weights" or "step k"
    grads: dict  # (method, param) -> float64 host array (numerical: NaN where not probed)
    stats: dict  # (param, pair) -> PairStats
    sampled: dict  # param -> number of elements probed numerically
    rounding: dict  # param -> relative difference of autograd in the run's dtype vs in float64
    params: tuple = PARAMS  # what was compared: the net's w1 and w2, or the fit's coefficients

    def worst_grade(self) -> str:
        order = {"good": 0, "ok": 1, "bad": 2}
        return max((s.grade(self.dtype) for s in self.stats.values()), key=order.__getitem__)

    def difference(self, param: str, a: str = "manual", b: str = "autograd") -> np.ndarray:
        return np.abs(self.grads[(a, param)] - self.grads[(b, param)])

    def table(self) -> str:
        head = f"{'param':<12} {'pair':<21} {'max |a-b|':>11} {'rel error':>11} {'cosine':>12}  worst element"
        lines = [f"gradients at {self.source} ({self.device}, {self.dtype})", head, "-" * len(head)]
        for param in self.params:
            for a, b in PAIRS:
                s = self.stats[(param, (a, b))]
                lines.append(
                    f"{param:<12} {a + ' vs ' + b:<21} {s.max_abs:11.3e} {s.rel_error:11.3e} {s.cosine:12.9f}  "
                    f"{list(s.worst_index)}: {s.worst_a:.6g} vs {s.worst_b:.6g}  [{s.grade(self.dtype)}]"
                )
        return "\n".join(lines)


def compare_pair(a: np.ndarray, b: np.ndarray) -> PairStats:
    mask = np.isfinite(a) & np.isfinite(b)
    compared = int(mask.sum())
    if compared == 0:
        return PairStats(np.nan, np.nan, np.nan, (), np.nan, np.nan, 0)
    av, bv = a[mask], b[mask]
    diff = np.abs(av - bv)
    k = int(np.argmax(diff))
    flat_index = np.flatnonzero(mask)[k]
    worst = tuple(int(i) for i in np.unravel_index(flat_index, a.shape))
    na, nb = np.linalg.norm(av), np.linalg.norm(bv)
    denom = max(na, nb)
    rel = float(np.linalg.norm(av - bv) / denom) if denom > 0 else 0.0
    cos = float(av @ bv / (na * nb)) if na > 0 and nb > 0 else (1.0 if na == nb else 0.0)
    return PairStats(float(diff[k]), rel, cos, worst, float(a[worst]), float(b[worst]), compared)


def manual_gradients(x, y, w1, w2, forget_relu_mask: bool = False):
    """The tutorial's hand-written backprop (engine tensors): (grad_w1, grad_w2)."""
    return manual_backprop(x, y, w1, w2, forget_relu_mask)[1:]


def autograd_gradients(x, y, w1, w2):
    w1 = w1.detach().requires_grad_()
    w2 = w2.detach().requires_grad_()
    with engine.enable_grad():
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
    return w1.grad, w2.grad


def numerical_gradients(x, y, w1, w2, max_elements: int = 4096, eps: float = 1e-4, seed: int = 0):
    """Central differences in float64; returns (g_w1, g_w2, probed counts). Unprobed entries are NaN."""
    rng = np.random.default_rng(seed)
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2

    def loss_of(yp):
        return np.square(yp - y).sum()

    g1 = np.full(w1.shape, np.nan)
    g2 = np.full(w2.shape, np.nan)

    def probe_indices(shape):
        total = shape[0] * shape[1]
        if total <= max_elements:
            return np.arange(total)
        return np.sort(rng.choice(total, size=max_elements, replace=False))

    idx1 = probe_indices(w1.shape)
    for flat in idx1:
        i, j = divmod(int(flat), w1.shape[1])
        step = eps * max(1.0, abs(w1[i, j]))
        col = h[:, j]
        outs = []
        for sign in (1.0, -1.0):
            hj = np.maximum(col + sign * step * x[:, i], 0)
            yp = y_pred + np.outer(hj - h_relu[:, j], w2[j])
            outs.append(loss_of(yp))
        g1[i, j] = (outs[0] - outs[1]) / (2 * step)

    idx2 = probe_indices(w2.shape)
    for flat in idx2:
        i, j = divmod(int(flat), w2.shape[1])
        step = eps * max(1.0, abs(w2[i, j]))
        outs = []
        for sign in (1.0, -1.0):
            yp = y_pred.copy()
            yp[:, j] += sign * step * h_relu[:, i]
            outs.append(loss_of(yp))
        g2[i, j] = (outs[0] - outs[1]) / (2 * step)
    return g1, g2, {"w1": len(idx1), "w2": len(idx2)}


def compare(config: RunConfig, state: TrainState | None = None, source: str | None = None,
            forget_relu_mask: bool = False, max_elements: int = 4096,
            manual: Callable | None = None) -> GradientReport:
    """Compare the three gradients at ``state``'s current weights, or at the config's initial weights."""
    if TABLE[config.recipe].family == "poly":
        return compare_poly(config, state, source, forget_two=forget_relu_mask)
    if state is not None and state.weights_host() is not None:
        x64, y64 = state.data_host()
        w1_64, w2_64 = state.weights_host()
        source = source or "current weights"
        if state.model is not None:
            source += " (the model's two weight matrices, without its biases: the hand-written backprop is the " \
                      "tutorial's bias-free net)"
    else:
        draws = host_draws(config.with_(recipe="tensor"))
        x64, y64, w1_64, w2_64 = draws["x"], draws["y"], draws["w1"], draws["w2"]
        source = source or "initial weights"
    dtype = getattr(engine, config.dtype)
    device = "cpu" if TABLE[config.recipe].cpu_only else config.device

    def put(a):
        return engine.tensor(a, dtype=dtype, device=device)

    x, y, w1, w2 = put(x64), put(y64), put(w1_64), put(w2_64)
    with engine.no_grad():
        if manual is not None:
            m1, m2 = manual(x, y, w1, w2)
        else:
            m1, m2 = manual_gradients(x, y, w1, w2, forget_relu_mask)
    a1, a2 = autograd_gradients(x, y, w1, w2)
    rounding = {"w1": 0.0, "w2": 0.0}
    if config.dtype != "float64":
        r1, r2 = autograd_gradients(*(engine.tensor(a, dtype=engine.float64, device=device)
                                      for a in (x64, y64, w1_64, w2_64)))
        for name, low, high in (("w1", a1, r1), ("w2", a2, r2)):
            rounding[name] = compare_pair(engine.backend.to_host(low._data).astype(np.float64),
                                          engine.backend.to_host(high._data)).rel_error
    n1, n2, sampled = numerical_gradients(x64, y64, w1_64, w2_64, max_elements=max_elements)

    def host(t):
        return engine.backend.to_host(t._data).astype(np.float64)

    grads = {("manual", "w1"): host(m1), ("manual", "w2"): host(m2), ("autograd", "w1"): host(a1),
             ("autograd", "w2"): host(a2), ("numerical", "w1"): n1, ("numerical", "w2"): n2}
    stats = {}
    for param in PARAMS:
        for a, b in PAIRS:
            pair = compare_pair(grads[(a, param)], grads[(b, param)])
            if "numerical" in (a, b):
                pair.floor = rounding[param]
            stats[(param, (a, b))] = pair
    return GradientReport(config.dtype, device, source, grads, stats, sampled, rounding)


# ----------------------------------------------------------------------------- the polynomial family

POLY_PARAMS = ("coefficients",)
POLY_NAMES = {"cubic": "abcd", "legendre": "abcd", "dynamic": "abcde"}


def poly_form(recipe: str) -> str:
    return "legendre" if recipe == "poly-function" else "dynamic" if recipe == "poly-dynamic" else "cubic"


def _poly_predict(form, x, c):
    if form == "legendre":
        t = c[2] + c[3] * x
        return c[0] + c[1] * (0.5 * (5 * t ** 3 - 3 * t))
    y = c[0] + c[1] * x + c[2] * x ** 2 + c[3] * x ** 3
    if form == "dynamic":  # the net's largest form: both extra terms, one shared e
        y = y + c[4] * x ** 4 + c[4] * x ** 5
    return y


def poly_manual_gradients(form, x, y, c, forget_two: bool = False):
    """The fit's gradient written by hand (engine tensors or NumPy arrays): one value per coefficient.
    ``forget_two`` plants the classic slip, d(r^2)/dr taken as r."""
    g = (1.0 if forget_two else 2.0) * (_poly_predict(form, x, c) - y)
    if form == "legendre":
        t = c[2] + c[3] * x
        dp3 = 1.5 * (5 * t ** 2 - 1)
        return [g.sum(), (g * (0.5 * (5 * t ** 3 - 3 * t))).sum(), (g * c[1] * dp3).sum(),
                (g * c[1] * dp3 * x).sum()]
    grads = [g.sum(), (g * x).sum(), (g * x ** 2).sum(), (g * x ** 3).sum()]
    if form == "dynamic":
        grads.append((g * (x ** 4 + x ** 5)).sum())
    return grads


def compare_poly(config: RunConfig, state: TrainState | None = None, source: str | None = None,
                 eps: float = 1e-6, forget_two: bool = False) -> GradientReport:
    """The fit's hand-written gradient of its coefficients against autograd and float64 central differences."""
    form = poly_form(config.recipe)
    draws = host_draws(config)
    x64, y64 = draws["x"], draws["y"]
    if state is not None and state.coefficients_host() is not None:
        c64 = np.array(state.coefficients_host(), dtype=np.float64)
        source = source or "current coefficients"
    else:
        c64 = np.asarray(draws["coefficients"], dtype=np.float64)
        source = source or "initial coefficients"
    dtype = getattr(engine, config.dtype)
    device = "cpu" if TABLE[config.recipe].cpu_only else config.device
    x, y = (engine.tensor(a, dtype=dtype, device=device) for a in (x64, y64))

    def coefficients(values, grad=False, dt=dtype):
        return [engine.tensor(v, dtype=dt, device=device, requires_grad=grad) for v in values]

    def host(values):
        return np.array([[float(engine.backend.to_host(v._data)) for v in values]])

    with engine.no_grad():
        manual = host(poly_manual_gradients(form, x, y, coefficients(c64), forget_two))

    def by_autograd(dt):
        cs = coefficients(c64, True, dt)
        xs, ys = (engine.tensor(a, dtype=dt, device=device) for a in (x64, y64))
        with engine.enable_grad():
            ((_poly_predict(form, xs, cs) - ys) ** 2).sum().backward()
        return host([c.grad for c in cs])

    auto = by_autograd(dtype)
    rounding = {POLY_PARAMS[0]: 0.0}
    if config.dtype != "float64":
        rounding[POLY_PARAMS[0]] = compare_pair(auto, by_autograd(engine.float64)).rel_error
    numerical = np.empty((1, len(c64)))
    for i in range(len(c64)):
        step = eps * max(1.0, abs(c64[i]))
        outs = []
        for sign in (1.0, -1.0):
            c = c64.copy()
            c[i] += sign * step
            outs.append(float(((_poly_predict(form, x64, c) - y64) ** 2).sum()))
        numerical[0, i] = (outs[0] - outs[1]) / (2 * step)
    param = POLY_PARAMS[0]
    grads = {("manual", param): manual, ("autograd", param): auto, ("numerical", param): numerical}
    stats = {}
    for a, b in PAIRS:
        pair = compare_pair(grads[(a, param)], grads[(b, param)])
        if "numerical" in (a, b):
            pair.floor = rounding[param]
        stats[(param, (a, b))] = pair
    return GradientReport(config.dtype, device, f"{source} ({', '.join(POLY_NAMES[form])})", grads, stats,
                          {param: len(c64)}, rounding, params=POLY_PARAMS)
