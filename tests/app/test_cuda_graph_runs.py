"""Runs with ``cuda_graph``: the captured run's losses and weights equal the plain run's; what cannot be captured
runs uncaptured and says why; bad requests are refused with the field named."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app import recipes as recipes_mod
from app.config import ConfigError, RunConfig
from app.recipes import graph_recipes
from app.runner import DONE, GRAPH_WARMUP, STOPPED, Runner
from main import main
from tests.fake_cupy import assert_same_numbers

SMALL = dict(batch=8, d_in=20, hidden=10, d_out=3)


@pytest.mark.parametrize("recipe", graph_recipes())
def test_a_captured_run_equals_the_plain_run(recipe, cuda_device):
    cfg = RunConfig(recipe=recipe, device=cuda_device, dtype="float64", lr=1e-3, iters=100, **SMALL)
    plain = Runner(cfg)
    a = plain.run()
    captured = Runner(cfg.with_(cuda_graph=True))
    b = captured.run()
    assert a.status == b.status == DONE and len(b.log) == 100
    assert_same_numbers(b.log.loss, a.log.loss)
    for wa, wb in zip(plain.state.weights_host(), captured.state.weights_host()):
        assert_same_numbers(wb, wa)
    info = b.extra["cuda_graph"]
    assert info["captured"] and info["captured_at"] == GRAPH_WARMUP
    assert info["replays"] == 100 - GRAPH_WARMUP
    assert "captured as a CUDA graph" in info["note"]
    assert a.extra == {}


def test_a_step_that_reads_the_loss_runs_uncaptured_and_says_why(cuda_device, monkeypatch):
    def reading(state):
        for loss in recipes_mod.tensor_recipe(state):
            float(loss)  # a host read in the step: no graph can hold it
            yield loss

    monkeypatch.setitem(recipes_mod.TABLE, "tensor", dataclasses.replace(recipes_mod.TABLE["tensor"], step=reading))
    cfg = RunConfig(recipe="tensor", device=cuda_device, dtype="float64", lr=1e-3, iters=20, **SMALL)
    plain = Runner(cfg).run()
    tried = Runner(cfg.with_(cuda_graph=True)).run()
    assert tried.status == DONE and len(tried.log) == 20
    assert_same_numbers(tried.log.loss, plain.log.loss)  # the failed capture ran nothing and lost no step
    info = tried.extra["cuda_graph"]
    assert not info["captured"]
    assert "not captured" in info["note"] and "reads a value back to the host" in info["note"]


def test_a_run_shorter_than_the_warm_up_says_so(cuda_device):
    cfg = RunConfig(recipe="autograd", device=cuda_device, iters=GRAPH_WARMUP, cuda_graph=True, **SMALL)
    result = Runner(cfg).run()
    assert result.status == DONE
    assert result.extra["cuda_graph"] == {"captured": False, "note": "not used: the run ended within its "
                                                                     f"{GRAPH_WARMUP} uncaptured warm-up steps"}


def test_stop_during_a_captured_run_keeps_the_log(cuda_device):
    cfg = RunConfig(recipe="autograd", device=cuda_device, iters=100_000, cuda_graph=True, **SMALL)
    runner = Runner(cfg, readback_steps=8)

    def on_batch(batch):
        if batch.step[-1] >= 50:
            runner.stop()

    result = runner.run(on_batch, emit_s=0)
    assert result.status == STOPPED
    assert 50 < len(result.log) < 100_000
    assert np.isfinite(result.log.loss).all()
    assert np.array_equal(result.log.step, np.arange(len(result.log)))


def test_the_headless_command_reports_the_graph(cuda_device, capsys):
    code = main(["--headless", "--device", "cuda", "--recipe", "autograd", "--iters", "30", "--cuda-graph",
                 "--batch", "8", "--d-in", "20", "--hidden", "10", "--d-out", "3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "done: 30 steps" in out
    assert f"CUDA graph: step {GRAPH_WARMUP} captured as a CUDA graph; the later steps replay it" in out


def test_cuda_graphs_are_refused_where_they_cannot_work(capsys):
    with pytest.raises(ConfigError, match="cuda_graph: CUDA graphs need a CUDA device"):
        RunConfig(cuda_graph=True).validated(check_device=False)
    with pytest.raises(ConfigError, match="cuda_graph: the optim recipe cannot be replayed"):
        RunConfig(recipe="optim", device="cuda", cuda_graph=True).validated(check_device=False)
    with pytest.raises(ConfigError, match="cuda_graph: must be true or false"):
        RunConfig(device="cuda", cuda_graph="yes").validated(check_device=False)
    assert main(["--headless", "--cuda-graph", "--iters", "5"]) == 2
    assert "error: cuda_graph: CUDA graphs need a CUDA device" in capsys.readouterr().err


def test_a_saved_config_without_the_field_still_loads():
    cfg = RunConfig.from_dict({"recipe": "autograd", "device": "cpu"})
    assert cfg.cuda_graph is False
    assert RunConfig.from_json(cfg.with_(device="cuda", cuda_graph=True).to_json()).cuda_graph is True
