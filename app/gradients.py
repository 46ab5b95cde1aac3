"""Manual vs autograd vs numerical gradients of the tutorial's two-layer net at one state.

* manual: the tutorial's hand-written backprop, on the run's device and dtype;
* autograd: ``loss.backward()`` through the engine, same device and dtype;
* numerical: float64 central differences on the host. A perturbation of ``w1[i, j]`` only moves column
  ``j`` of ``h`` (and of ``w2[i, j]`` only column ``j`` of ``y_pred``), so each probe costs a small update,
  not a whole forward pass; large matrices are probed on a random sample of elements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import engine

from .config import RunConfig
from .recipes import TABLE, TrainState, fit_form, fit_gradients, fit_predict, host_draws, manual_backprop

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
    # max over the compared elements of |a - b| / (the error the two may have with nothing wrong): above 1, a
    # gradient is wrong. None where no estimate was made (then the fixed tolerances grade alone).
    bound_ratio: float | None = None
    kinks: int = 0  # elements left out: their finite difference crosses a ReLU's kink

    def thresholds(self, dtype: str) -> tuple[float, float]:
        """(good, acceptable) bounds on the relative error. Near convergence a float32 gradient is a small
        difference of large terms, so its own rounding can be large: a float64 reference may differ by that
        much with nothing wrong. Such a difference is graded acceptable ("within rounding"), not good."""
        good, ok = TOLERANCES[dtype]
        return good, max(ok, 3 * self.floor)

    def grade(self, dtype: str) -> str:
        """good: close in absolute terms; ok: further apart, but within the estimated error of the dtype and of
        finite differences (nothing wrong); bad: a difference no rounding explains."""
        good, ok = self.thresholds(dtype)
        if not np.isfinite(self.rel_error):
            return "bad"
        if self.bound_ratio is None:
            return "good" if self.rel_error <= good else "ok" if self.rel_error <= ok else "bad"
        if self.bound_ratio > 1:
            return "bad"
        return "good" if self.rel_error <= good else "ok"


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
    kinks: dict = field(default_factory=dict)  # param -> elements left out of the numerical comparison
    pairs: tuple = PAIRS  # the pairs compared (a script has no hand-written gradient: autograd - numerical)

    def worst_grade(self) -> str:
        order = {"good": 0, "ok": 1, "bad": 2}
        return max((s.grade(self.dtype) for s in self.stats.values()), key=order.__getitem__)

    def difference(self, param: str, a: str = "manual", b: str = "autograd") -> np.ndarray:
        return np.abs(self.grads[(a, param)] - self.grads[(b, param)])

    def table(self) -> str:
        width = max([12] + [len(p) for p in self.params])  # a script's leaves: "model.0.weight (32×32)"
        head = f"{'param':<{width}} {'pair':<21} {'max |a-b|':>11} {'rel error':>11} {'cosine':>12}  worst element"
        lines = [f"gradients at {self.source} ({self.device}, {self.dtype})", head, "-" * len(head)]
        for param in self.params:
            for a, b in self.pairs:
                s = self.stats[(param, (a, b))]
                lines.append(
                    f"{param:<{width}} {a + ' vs ' + b:<21} {s.max_abs:11.3e} {s.rel_error:11.3e} {s.cosine:12.9f}  "
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


def numerical_gradients(x, y, w1, w2, max_elements: int = 4096, eps: float = 1e-4, seed: int = 0,
                        details: dict | None = None):
    """Central differences in float64; returns (g_w1, g_w2, probed counts). Unprobed entries are NaN.

    The step for an element of w1 shrinks so that no row's hidden pre-activation crosses 0 (the ReLU's kink) within
    +-step: on each side of the kinks the loss is quadratic, so the central difference is then the derivative.
    ``details``, when given, receives per parameter ``kinks`` (elements of w1 sitting on a kink, where even a
    step of 1e-10 of the default would cross it: their difference is no derivative) and ``fd_error`` (each
    difference's rounding, from the two losses' size and the step)."""
    rng = np.random.default_rng(seed)
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2

    def loss_of(yp):
        return np.square(yp - y).sum()

    ay = np.abs(y)

    def loss_error(yp, loss):
        """The loss's rounding: y_pred - y cancels (near a fit, a small difference of numbers of size |y|), then
        a pairwise sum of squares."""
        return _EPS64 * (2.0 * float(np.sum(np.abs(yp - y) * (np.abs(yp) + ay))) + terms * loss)

    g1 = np.full(w1.shape, np.nan)
    g2 = np.full(w2.shape, np.nan)

    def probe_indices(shape):
        total = shape[0] * shape[1]
        if total <= max_elements:
            return np.arange(total)
        return np.sort(rng.choice(total, size=max_elements, replace=False))

    kinks = np.zeros(w1.shape, dtype=bool)
    fd1 = np.full(w1.shape, np.nan)
    fd2 = np.full(w2.shape, np.nan)
    terms = np.log2(max(y.size, 2)) + 4  # the loss's own rounding: a pairwise sum of y.size squares

    idx1 = probe_indices(w1.shape)
    for flat in idx1:
        i, j = divmod(int(flat), w1.shape[1])
        step = eps * max(1.0, abs(w1[i, j]))
        col = h[:, j]
        # the loss is quadratic in w1[i, j] between kinks: a step that stays on this side of every row's kink
        # gives the derivative exactly (up to rounding, counted in fd_error); only where that step would have to
        # be under 1e-10 of the default is the element left out as "at a kink"
        moving = np.abs(x[:, i]) > 0
        if moving.any():
            room = float(np.min(np.abs(col[moving]) / np.abs(x[moving, i])))
            if room < step:
                if room * 0.5 < step * 1e-10:
                    kinks[i, j] = True
                else:
                    step = room * 0.5
        outs, errors = [], 0.0
        for sign in (1.0, -1.0):
            hj = np.maximum(col + sign * step * x[:, i], 0)
            yp = y_pred + np.outer(hj - h_relu[:, j], w2[j])
            outs.append(loss_of(yp))
            errors += loss_error(yp, outs[-1])
        g1[i, j] = (outs[0] - outs[1]) / (2 * step)
        fd1[i, j] = errors / (2 * step)

    idx2 = probe_indices(w2.shape)
    for flat in idx2:
        i, j = divmod(int(flat), w2.shape[1])
        step = eps * max(1.0, abs(w2[i, j]))
        outs, errors = [], 0.0
        for sign in (1.0, -1.0):
            yp = y_pred.copy()
            yp[:, j] += sign * step * h_relu[:, i]
            outs.append(loss_of(yp))
            errors += loss_error(yp, outs[-1])
        g2[i, j] = (outs[0] - outs[1]) / (2 * step)
        fd2[i, j] = errors / (2 * step)
    if details is not None:
        details["kinks"] = {"w1": kinks, "w2": np.zeros(w2.shape, dtype=bool)}
        details["fd_error"] = {"w1": fd1, "w2": fd2}
    return g1, g2, {"w1": len(idx1), "w2": len(idx2)}


_EPS64 = float(np.finfo(np.float64).eps)


def rounding_scale(x, y, w1, w2) -> tuple[dict, dict]:
    """Per element of each gradient, the size of what its computation adds up (float64, from the weights):
    ``terms``, the products summed into it in the backward pass; ``residual``, the rounding of y_pred - y carried
    the same way (near a fit the residual is a small difference of large numbers, and its error is the forward
    pass's, shared by every gradient computed from it). Times a dtype's eps, the scale of its rounding."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    gyp = np.abs(2.0 * (y_pred - y))
    resid = 2.0 * (np.abs(y_pred) + np.abs(y) + np.abs(h_relu) @ np.abs(w2))
    active = h > 0
    ax, ah, aw2t = np.abs(x), np.abs(h_relu), np.abs(w2).T
    terms = {"w1": ax.T @ (gyp @ aw2t * active), "w2": ah.T @ gyp}
    residual = {"w1": ax.T @ (resid @ aw2t * active), "w2": ah.T @ resid}
    return terms, residual


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
    details: dict = {}
    n1, n2, sampled = numerical_gradients(x64, y64, w1_64, w2_64, max_elements=max_elements, details=details)

    def host(t):
        return engine.backend.to_host(t._data).astype(np.float64)

    grads = {("manual", "w1"): host(m1), ("manual", "w2"): host(m2), ("autograd", "w1"): host(a1),
             ("autograd", "w2"): host(a2), ("numerical", "w1"): n1, ("numerical", "w2"): n2}
    # What two correct gradients may differ by. Manual and autograd, in the run's dtype, compute the same sums from
    # the same forward pass: only the backward's own rounding (8 eps x its terms). Against float64 central
    # differences: the run's dtype's whole error (its measured distance from float64's autograd, and the forward
    # pass's residual rounding), and the differences' own rounding.
    exact = {"w1": host(r1), "w2": host(r2)} if config.dtype != "float64" else {"w1": grads[("autograd", "w1")],
                                                                                 "w2": grads[("autograd", "w2")]}
    eps_d = float(np.finfo(np.dtype(config.dtype)).eps)
    terms, residual = rounding_scale(x64, y64, w1_64, w2_64)
    stats = {}
    for param in PARAMS:
        same_pass = 8 * eps_d * terms[param]
        to_exact = (4 * np.abs(grads[("autograd", param)] - exact[param])
                    + 4 * eps_d * (terms[param] + residual[param]) + 4 * details["fd_error"][param])
        kinks = details["kinks"][param]
        for a, b in PAIRS:
            ga, gb = grads[(a, param)], grads[(b, param)]
            numerical = "numerical" in (a, b)
            if numerical:
                ga, gb = np.where(kinks, np.nan, ga), np.where(kinks, np.nan, gb)
            pair = compare_pair(ga, gb)
            if numerical:
                pair.floor = rounding[param]
                pair.kinks = int(kinks.sum())
            pair.bound_ratio = _bound_ratio(ga, gb, to_exact if numerical else same_pass)
            stats[(param, (a, b))] = pair
    report = GradientReport(config.dtype, device, source, grads, stats, sampled, rounding)
    report.kinks = details["kinks"]
    return report


def _bound_ratio(a: np.ndarray, b: np.ndarray, bound: np.ndarray) -> float:
    """max |a - b| / bound over the elements both have (0 where both agree exactly)."""
    mask = np.isfinite(a) & np.isfinite(b)
    if not mask.any():
        return 0.0
    diff, allowed = np.abs(a[mask] - b[mask]), bound[mask]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / allowed)
    return float(np.max(ratio))


# ----------------------------------------------------------------------------- the polynomial family

POLY_PARAMS = ("coefficients",)
POLY_NAMES = {"cubic": "abcd", "legendre": "abcd", "dynamic": "abcde"}


def _poly_basis(form, x, c):
    """d y_pred / d coefficient, per point (NumPy float64): what each coefficient's gradient sums, times 2r."""
    if form == "legendre":
        t = c[2] + c[3] * x
        dp3 = 1.5 * (5 * t ** 2 - 1)
        return [np.ones_like(x), 0.5 * (5 * t ** 3 - 3 * t), c[1] * dp3, c[1] * dp3 * x]
    basis = [np.ones_like(x), x, x ** 2, x ** 3]
    if form == "dynamic":
        basis.append(x ** 4 + x ** 5)
    return basis


def _poly_forward_magnitude(form, x, c):
    """The size of the terms the forward pass adds up, per point (its rounding scale)."""
    if form == "legendre":
        t = np.abs(c[2]) + np.abs(c[3] * x)
        return abs(c[0]) + abs(c[1]) * 0.5 * (5 * t ** 3 + 3 * t)
    return sum(abs(ck) * np.abs(bk) for ck, bk in zip(c, _poly_basis(form, x, c)))


def compare_poly(config: RunConfig, state: TrainState | None = None, source: str | None = None,
                 eps: float = 1e-6, forget_two: bool = False) -> GradientReport:
    """The fit's hand-written gradient of its coefficients against autograd and float64 central differences."""
    form = fit_form(config.recipe)
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
        manual = host(fit_gradients(form, x, y, coefficients(c64), forget_two)[1])

    def by_autograd(dt):
        cs = coefficients(c64, True, dt)
        xs, ys = (engine.tensor(a, dtype=dt, device=device) for a in (x64, y64))
        with engine.enable_grad():
            ((fit_predict(form, xs, cs) - ys) ** 2).sum().backward()
        return host([c.grad for c in cs])

    auto = by_autograd(dtype)
    rounding = {POLY_PARAMS[0]: 0.0}
    if config.dtype != "float64":
        rounding[POLY_PARAMS[0]] = compare_pair(auto, by_autograd(engine.float64)).rel_error
    numerical = np.empty((1, len(c64)))
    fd_error = np.empty((1, len(c64)))
    for i in range(len(c64)):
        step = eps * max(1.0, abs(c64[i]))
        def difference(h, i=i):
            outs = []
            for sign in (1.0, -1.0):
                c = c64.copy()
                c[i] += sign * h
                outs.append(float(((fit_predict(form, x64, c) - y64) ** 2).sum()))
            rounding_h = (np.log2(len(x64)) + 4) * _EPS64 * (abs(outs[0]) + abs(outs[1])) / (2 * h)
            return (outs[0] - outs[1]) / (2 * h), rounding_h

        numerical[0, i], rounding_i = difference(step)
        # the loss is not quadratic in every coefficient (Legendre's c and d): the truncation error, from the
        # difference at twice the step (Richardson: their gap is three times it)
        wider, _ = difference(2 * step)
        fd_error[0, i] = rounding_i + abs(wider - numerical[0, i]) / 3
    # the same error model as the two-layer net's (compare): the backward's own sums for manual vs autograd; the
    # dtype's whole error, the forward's residual rounding and the differences' own rounding against float64
    y_pred = fit_predict(form, x64, c64)
    basis = [np.abs(b) for b in _poly_basis(form, x64, c64)]
    magnitude = 2.0 * (np.abs(y_pred) + np.abs(y64) + _poly_forward_magnitude(form, x64, c64))
    terms = np.array([[float(np.abs(2.0 * (y_pred - y64)) @ b) for b in basis]])
    residual = np.array([[float(magnitude @ b) for b in basis]])
    eps_d = float(np.finfo(np.dtype(config.dtype)).eps)
    exact = by_autograd(engine.float64) if config.dtype != "float64" else auto
    param = POLY_PARAMS[0]
    grads = {("manual", param): manual, ("autograd", param): auto, ("numerical", param): numerical}
    same_pass = 8 * eps_d * terms
    to_exact = 4 * np.abs(auto - exact) + 4 * eps_d * (terms + residual) + 4 * fd_error
    stats = {}
    for a, b in PAIRS:
        pair = compare_pair(grads[(a, param)], grads[(b, param)])
        numerical_pair = "numerical" in (a, b)
        if numerical_pair:
            pair.floor = rounding[param]
        pair.bound_ratio = _bound_ratio(grads[(a, param)], grads[(b, param)], to_exact if numerical_pair else same_pass)
        stats[(param, (a, b))] = pair
    return GradientReport(config.dtype, device, f"{source} ({', '.join(POLY_NAMES[form])})", grads, stats,
                          {param: len(c64)}, rounding, params=POLY_PARAMS)


# ----------------------------------------------------------------------------- a learner's own script

SCRIPT_PAIRS = (("autograd", "numerical"),)


def script_report(event: dict, source: str) -> GradientReport:
    """The report of a script's gradient check (app/script_check.py sends ``event``): per leaf of the loss's
    graph, autograd in the run's dtype against float64 central differences, graded by the bound on what the
    dtype's rounding (autograd against float64 autograd) and the finite differences (their Richardson error and
    rounding) explain, as the recipes are."""
    dtype = event["dtype"] if event["dtype"] in TOLERANCES else "float32"
    eps = float(np.finfo(np.dtype(dtype)).eps)
    grads, stats, sampled, rounding, kinks, params = {}, {}, {}, {}, {}, []
    for leaf in event["leaves"]:
        name, shape = leaf["name"], tuple(leaf["shape"]) or (1,)
        auto = np.asarray(leaf["autograd"], dtype=np.float64).reshape(shape)
        auto64 = np.asarray(leaf["autograd64"], dtype=np.float64).reshape(shape)
        numerical = np.array([np.nan if v is None else v for v in leaf["numerical"]], dtype=np.float64).reshape(shape)
        fd = np.array([np.nan if v is None else v for v in leaf["bound"]], dtype=np.float64).reshape(shape)
        at_kink = np.zeros(auto.size, dtype=bool)
        at_kink[np.asarray(leaf["kinks"], dtype=np.int64)] = True
        at_kink = at_kink.reshape(shape)
        grads[("autograd", name)] = auto
        grads[("numerical", name)] = numerical
        scale = float(np.max(np.abs(auto64))) if auto64.size else 0.0
        norm64 = float(np.linalg.norm(auto64))
        rounding[name] = float(np.linalg.norm(auto - auto64)) / norm64 if norm64 > 0 else 0.0
        bound = 4 * np.abs(auto - auto64) + 4 * np.nan_to_num(fd, nan=np.inf) + 8 * eps * scale + 1e-300
        compared = np.where(at_kink, np.nan, numerical)
        pair = compare_pair(auto, compared)
        pair.floor = rounding[name]
        pair.kinks = int(at_kink.sum())
        pair.bound_ratio = _bound_ratio(auto, compared, bound)
        stats[(name, SCRIPT_PAIRS[0])] = pair
        sampled[name] = int(np.isfinite(numerical).sum())
        kinks[name] = at_kink
        params.append(name)
    return GradientReport(dtype, event.get("device", "cpu"), source, grads, stats, sampled, rounding,
                          params=tuple(params), kinks=kinks, pairs=SCRIPT_PAIRS)
