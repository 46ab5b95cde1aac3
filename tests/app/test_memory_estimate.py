"""The configuration's memory estimate against the measured peak of a run (tracemalloc sees NumPy's buffers)."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from app.config import RunConfig
from app.recipes import TABLE, make_state

SIZES = [(64, 1000, 100, 10), (256, 2048, 512, 64), (32, 4096, 32, 1024), (1024, 1024, 512, 16)]


def measured_peak(config: RunConfig, steps: int = 3) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        state = make_state(config)
        gen = TABLE[config.recipe].step(state)
        for _ in range(steps):
            next(gen)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# D_out of the order of N or more: the peak moves to the loss and its backward
WIDE = [(512, 512, 256, 512), (128, 256, 128, 512), (64, 128, 64, 2048)]


NET = [name for name, r in TABLE.items() if r.family == "two-layer"]
POLY = [name for name, r in TABLE.items() if r.family == "poly"]


@pytest.mark.parametrize("size", [*SIZES, *WIDE], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("recipe", NET)
def test_estimate_within_10_percent_of_the_measured_peak(recipe, size):
    n, d_in, h, d_out = size
    config = RunConfig(recipe=recipe, batch=n, d_in=d_in, hidden=h, d_out=d_out)
    peak = measured_peak(config)
    estimate = config.memory_estimate()
    assert abs(estimate - peak) <= 0.10 * peak, f"estimate {estimate:,} vs measured peak {peak:,}"


def test_float64_doubles_the_estimate_and_still_matches():
    config = RunConfig(recipe="autograd", dtype="float64", batch=128, d_in=1024, hidden=256, d_out=32)
    peak = measured_peak(config)
    assert abs(config.memory_estimate() - peak) <= 0.10 * peak


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("recipe", POLY)
def test_the_fits_estimate_within_10_percent_of_the_measured_peak(recipe, dtype):
    """At a million points the arrays dominate what tracemalloc sees (at the tutorial's 2000, Python objects)."""
    config = RunConfig(recipe=recipe, points=1_000_000, dtype=dtype, lr=1e-12)  # a loss over 10^6 points: tiny lr
    peak = measured_peak(config)
    estimate = config.memory_estimate()
    assert abs(estimate - peak) <= 0.10 * peak, f"estimate {estimate:,} vs measured peak {peak:,}"
