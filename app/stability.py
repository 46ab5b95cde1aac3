"""Will this learning rate diverge? An estimate from the loss's curvature at the starting weights, made before
the run (the controls, the headless run) so the learner is warned with a rate that works.

Gradient descent on a quadratic diverges once the rate passes 2 / (the Hessian's largest eigenvalue). The
tutorial's losses are sums of squares, whose Hessian at the start is dominated by the Gauss-Newton matrix
G = 2 J^T J (J: the outputs' Jacobian in the parameters). Its largest eigenvalue comes from power iteration on
G v = 2 J^T (J v), with J v and J^T u written out for the net (a few matrix products each, no Hessian is formed).

- The fit of sin(x) by a cubic is linear in its coefficients: there G is the Hessian, and the edge is exact.
- The two-layer net is not: after a first step past the edge, ReLU units switch off and the curvature drops.
  Measured by bisection over 200 steps (seven size sets from 16x64x32x4 to 256x1000x512x64, the randn
  weights of the tensor recipes, and the nn recipe's Linear layers), such runs diverge from 1.9x (nn) to 4x
  the quadratic edge: the warning stands at 1.5x (the tutorial's own 1e-6 at its sizes is 1.15x, and
  converges). tests/app/test_stability.py holds both sides of the line.

Recipes that are not plain gradient descent on these parameters (Adam, RMSprop, momentum, the Legendre fit's
nonlinear form) get no estimate: the quadratic edge says nothing about them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .config import RunConfig
from .recipes import TABLE, host_draws

# two-layer recipes trained by plain gradient descent on the drawn weights, and cubic fits likewise
TWO_LAYER_GD = ("numpy", "tensor", "autograd", "function", "nn")
CUBIC_GD = ("poly-numpy", "poly-tensor", "poly-autograd", "poly-nn", "poly-module")
NONLINEAR_MARGIN = 1.5  # the two-layer net diverges from 1.9x the quadratic edge on (see above)
POWER_ITERATIONS = 40
TOLERANCE = 1e-3
GRAM_CHUNK = 1 << 18  # points per slice of the cubic fit's power sums (2 MiB of float64)


@dataclass(frozen=True)
class Stability:
    recipe: str
    edge: float  # 2 / the largest curvature at the starting weights: where a quadratic loss starts to diverge
    margin: float  # the warning stands at margin * edge (1: exact, a linear fit)

    @property
    def limit(self) -> float:
        return self.margin * self.edge

    def likely_to_diverge(self, lr: float) -> bool:
        return lr > self.limit

    def suggested_lr(self) -> float:
        """A round rate (1, 2 or 5 times a power of ten) at most half the quadratic edge."""
        target = self.edge / 2
        exponent = math.floor(math.log10(target))
        for mantissa in (5, 2, 1):
            if mantissa * 10.0**exponent <= target:
                return float(f"{mantissa}e{exponent}")
        return float(f"1e{exponent - 1}")

    def advice(self, lr: float) -> str:
        """What to tell the learner ("" when the rate is fine)."""
        if not self.likely_to_diverge(lr):
            return ""
        if self.margin == 1:
            return (f"Learning rate {lr:g} will diverge at these settings: the fit is stable below "
                    f"{self.edge:.2g} (the loss's curvature). Try {self.suggested_lr():g}.")
        return (f"Learning rate {lr:g} is likely to diverge at these settings: it is past {self.limit:.2g}, the "
                f"edge the loss's curvature at the starting weights puts it at. Try {self.suggested_lr():g}.")


def cubic_gram(n: int, chunk: int = GRAM_CHUNK) -> np.ndarray:
    """B^T B for B = [1, x, x^2, x^3] over x = linspace(-pi, pi, n): entry (i, j) is the sum of x^(i+j), so seven
    power sums, taken over ``chunk`` points at a time. Forming B took 32 bytes a point, 8.6 GB for the largest
    fit the settings allow (and half a minute); this takes a few megabytes."""
    step = 2 * np.pi / (n - 1) if n > 1 else 0.0
    sums = np.zeros(7)
    for begin in range(0, n, chunk):
        end = min(begin + chunk, n)
        x = np.arange(begin, end, dtype=np.float64) * step - np.pi  # linspace's own arithmetic
        if end == n:
            x[-1] = np.pi
        power = np.ones_like(x)
        for k in range(7):
            sums[k] += power.sum()
            if k < 6:
                power *= x
    return np.array([[sums[i + j] for j in range(4)] for i in range(4)])


def estimate(config: RunConfig) -> Stability | None:
    """The divergence edge for ``config``'s recipe, sizes and seed; None where the estimate does not apply."""
    if config.recipe in CUBIC_GD:
        curvature = 2 * float(np.linalg.eigvalsh(cubic_gram(config.points))[-1])  # sum((basis c - y)^2)'s Hessian
        return Stability(config.recipe, 2 / curvature, 1.0)
    if config.recipe not in TWO_LAYER_GD:
        return None
    draws = host_draws(config)
    f32 = np.float32
    x = draws["x"].astype(f32)
    if TABLE[config.recipe].uses_model:  # Linear layers: a bias is a weight on a constant input of 1
        w1 = np.vstack([draws["lin1_w"].T, draws["lin1_b"][None, :]]).astype(f32)
        w2 = draws["lin2_w"].T.astype(f32)
        bias = True
    else:
        w1, w2, bias = draws["w1"].astype(f32), draws["w2"].astype(f32), False
    del draws
    ones = np.ones((x.shape[0], 1), dtype=f32)
    if bias:
        x = np.hstack([x, ones])
    h = x @ w1
    mask = (h > 0).astype(f32)
    hidden = h * mask
    if bias:
        hidden = np.hstack([hidden, ones])
    rng = np.random.default_rng(0)
    v1 = rng.standard_normal(w1.shape).astype(f32)
    v2 = rng.standard_normal((hidden.shape[1], w2.shape[1])).astype(f32)
    top = 0.0
    for _ in range(POWER_ITERATIONS):
        norm = math.sqrt(float((v1 * v1).sum() + (v2 * v2).sum()))
        v1 /= norm
        v2 /= norm
        jv = ((x @ v1) * mask) @ w2 + hidden @ v2  # J v: how the outputs move along v
        g2 = hidden.T @ jv  # J^T (J v)
        g1 = x.T @ ((jv @ w2.T) * mask)
        rayleigh = float((v1 * g1).sum() + (v2 * g2).sum())
        v1, v2 = g1, g2
        if abs(rayleigh - top) <= TOLERANCE * rayleigh:
            top = rayleigh
            break
        top = rayleigh
    if not top > 0:
        return None
    return Stability(config.recipe, 2 / (2 * top), NONLINEAR_MARGIN)
