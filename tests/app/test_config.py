from __future__ import annotations

import math
import re

import pytest

from app.config import ConfigError, RunConfig


def test_defaults_follow_the_tutorial():
    c = RunConfig()
    assert (c.batch, c.d_in, c.hidden, c.d_out, c.iters, c.lr) == (64, 1000, 100, 10, 500, 1e-6)
    assert c.validated() is c


@pytest.mark.parametrize("changes, field, words", [
    ({"batch": 0}, "batch", "between 1 and"),
    ({"d_in": -5}, "d_in", "between 1 and"),
    ({"hidden": 2.5}, "hidden", "whole number"),
    ({"d_out": 10**9}, "d_out", "between 1 and"),
    ({"lr": math.nan}, "lr", "finite number above 0"),
    ({"lr": math.inf}, "lr", "finite"),
    ({"lr": 0.0}, "lr", "above 0"),
    ({"lr": -1e-3}, "lr", "above 0"),
    ({"iters": 0}, "iters", "between 1"),
    ({"seed": -1}, "seed", "between 0"),
    ({"recipe": "keras"}, "recipe", "unknown recipe"),
    ({"dtype": "float16"}, "dtype", "float32 or float64"),
    ({"device": "tpu"}, "device", "Expected one of cpu, cuda"),
    ({"device": "cuda:0", "recipe": "numpy"}, "device", "CPU only"),
])
def test_bad_values_are_refused_naming_the_field(changes, field, words):
    with pytest.raises(ConfigError) as info:
        RunConfig().with_(**changes).validated()
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ") and words in str(info.value)


def test_cuda_refused_with_the_engines_reason_when_absent():
    import engine

    if engine.cuda.is_available():
        pytest.skip("this machine has a GPU")
    reason = engine.cuda.unavailable_reason()
    assert reason
    with pytest.raises(ConfigError, match=re.escape(f"device: cuda is not usable: {reason}")):
        RunConfig(device="cuda").validated()


def test_memory_estimate_refuses_what_cannot_fit(monkeypatch):
    import app.config as config_mod

    monkeypatch.setattr(config_mod, "available_memory", lambda device: 100 * 2**20)
    small = RunConfig()
    assert small.memory_estimate() < 2 * 2**20
    small.validated()
    big = RunConfig(batch=4096, d_in=8192, hidden=4096, d_out=1024)
    with pytest.raises(ConfigError, match=r"needs about 864.0 MiB on cpu, but only 100.0 MiB is free"):
        big.validated()


def test_memory_estimate_counts_the_big_tensors():
    """x, y, the weights, and at manual_backprop's last product both steps' gradients, 4 N*H, 2 N*D_out."""
    c = RunConfig(batch=1024, d_in=8192, hidden=4096, d_out=1024, dtype="float32")
    n, d_in, h, d_out = 1024, 8192, 4096, 1024
    step = 2 * d_in * h + 2 * h * d_out + 4 * n * h + 2 * n * d_out
    elements = (n * d_in + n * d_out) + (d_in * h + h * d_out) + step
    assert c.memory_estimate() == 4 * elements
    assert RunConfig(dtype="float64").memory_estimate() == 2 * RunConfig(dtype="float32").memory_estimate()
    # on a GPU the float64 host draws of set-up are not device memory
    wide = RunConfig(batch=8, d_in=100_000, hidden=4, d_out=2)
    assert wide.memory_estimate() > wide.with_(device="cuda").memory_estimate()


def test_json_round_trip_and_errors():
    c = RunConfig(recipe="optim", dtype="float64", batch=8, lr=3e-4, seed=42)
    assert RunConfig.from_json(c.to_json()) == c
    with pytest.raises(ConfigError, match="colour: unknown setting"):
        RunConfig.from_dict({"colour": "red"})
    with pytest.raises(ConfigError, match="not valid JSON"):
        RunConfig.from_json("{")


def test_a_rate_reads_as_a_person_reads_it():
    from app.config import format_rate

    assert [format_rate(r) for r in (1641.4, 12.4, 9.96, 5.64, 1.0, 0.456, 0.049, 0.0)] == [
        "1,641", "12", "10", "5.6", "1", "0.5", "0.05", "0"]  # a one-step run of the largest fit said "0 steps/s"
    assert format_rate(float("nan")) == format_rate(float("inf")) == format_rate(-1.0) == "n/a"
