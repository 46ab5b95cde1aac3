"""The divergence warning: its edge against real runs on both sides of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.config import RunConfig
from app.recipes import TABLE, make_state
from app.stability import GRAM_CHUNK, cubic_gram, estimate


def final_loss(config: RunConfig, steps: int) -> float:
    """The loss after ``steps`` steps in float64 (inf once it overflows)."""
    config = config.with_(dtype="float64", iters=steps)
    steps_iter = TABLE[config.recipe].step(make_state(config))
    loss = math.nan
    with np.errstate(all="ignore"):
        for _ in range(steps):
            value = next(steps_iter)
            loss = float(value.item() if hasattr(value, "item") else value)
            if not math.isfinite(loss):
                return math.inf
    return loss


def first_loss(config: RunConfig) -> float:
    return final_loss(config, 1)


@pytest.mark.parametrize("recipe", ["poly-numpy", "poly-tensor"])
def test_the_cubic_fits_edge_is_exact(recipe):
    config = RunConfig(recipe=recipe, points=500)
    stability = estimate(config)
    assert stability.margin == 1
    below = final_loss(config.with_(lr=0.97 * stability.edge), 3000)
    above = final_loss(config.with_(lr=1.03 * stability.edge), 3000)
    assert below < first_loss(config.with_(lr=0.97 * stability.edge))
    assert above > 1e6 * first_loss(config.with_(lr=1.03 * stability.edge))
    assert stability.advice(0.97 * stability.edge) == ""
    assert "will diverge" in stability.advice(1.03 * stability.edge)


@pytest.mark.parametrize("n", [2, 3, 2000, 100_003])
def test_the_cubic_fits_gram_matrix_is_taken_in_slices_as_forming_the_basis_gives_it(n):
    x = np.linspace(-np.pi, np.pi, n)
    basis = np.stack([np.ones_like(x), x, x**2, x**3], axis=1)
    expected = basis.T @ basis
    scale = np.abs(expected).max()  # the odd power sums are 0 up to rounding: held to the matrix's scale
    for chunk in (7, 1000, GRAM_CHUNK):  # a slice boundary anywhere, the last slice short
        np.testing.assert_allclose(cubic_gram(n, chunk), expected, rtol=1e-12, atol=1e-13 * scale)


def test_the_largest_fit_is_estimated_in_megabytes():
    """The largest --points (2^28) formed a 2^28 x 4 basis: 8.6 GB and half a minute before the run began."""
    import tracemalloc

    tracemalloc.start()  # NumPy reports its allocations to it
    try:
        cubic_gram(10_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the basis would be 320 MB here


@pytest.mark.parametrize("recipe,sizes", [("tensor", (16, 64, 32, 4)), ("autograd", (32, 500, 50, 5)),
                                          ("nn", (32, 500, 50, 5)), ("numpy", (24, 200, 40, 6))])
def test_the_two_layer_nets_warning_sits_below_where_it_diverges(recipe, sizes):
    n, d_in, h, d_out = sizes
    config = RunConfig(recipe=recipe, batch=n, d_in=d_in, hidden=h, d_out=d_out)
    stability = estimate(config)
    start = first_loss(config.with_(lr=stability.limit))
    assert final_loss(config.with_(lr=stability.limit), 200) < start  # at the warning's line: converges
    assert final_loss(config.with_(lr=stability.suggested_lr()), 200) < start
    assert final_loss(config.with_(lr=8 * stability.edge), 200) == math.inf  # well past it: diverges
    assert stability.advice(stability.limit * 0.99) == ""
    assert "is likely to diverge" in stability.advice(stability.limit * 1.01)


def test_the_tutorial_defaults_draw_no_warning_and_larger_sizes_do():
    tutorial = RunConfig(recipe="tensor")
    assert estimate(tutorial).advice(tutorial.lr) == ""
    larger = RunConfig(recipe="autograd", batch=128, d_in=2000, hidden=200, d_out=20, lr=1e-6)
    stability = estimate(larger)
    advice = stability.advice(larger.lr)
    assert "is likely to diverge" in advice and f"Try {stability.suggested_lr():g}" in advice
    assert final_loss(larger, 100) == math.inf  # the warning was right
    assert final_loss(larger.with_(lr=stability.suggested_lr()), 100) < first_loss(larger)


def test_the_suggestion_is_a_round_rate_at_most_half_the_edge():
    stability = estimate(RunConfig(recipe="tensor"))
    suggested = stability.suggested_lr()
    assert suggested <= stability.edge / 2 < 2.5 * suggested
    assert f"{suggested:g}"[0] in "125" and len(f"{suggested:g}".split("e")[0]) == 1


@pytest.mark.parametrize("recipe", ["optim", "poly-optim", "poly-dynamic", "poly-function"])
def test_no_estimate_where_the_quadratic_edge_says_nothing(recipe):
    assert estimate(RunConfig(recipe=recipe)) is None
