"""benchmarks.gpt_step: one library's figures from its child, the table, and its refusals (the timing itself is
benchmarks/results/cpu-gpt-step.txt)."""

from __future__ import annotations

import pytest

from benchmarks import gpt_step

SMALL = {"vocab": 11, "block": 8, "n_embd": 16, "n_head": 2, "n_layer": 1, "batch": 2}


def test_one_library_times_the_step_and_the_parts(monkeypatch):
    monkeypatch.setattr(gpt_step, "CPU_SIZE", SMALL)
    figures = gpt_step._one_library("engine", rounds=1, reps=1)
    assert set(figures) == {"step", "gelu", "layer_norm", "attention", "linear", "threads", "version"}
    assert all(figures[k] > 0 for k in ("step", "gelu", "layer_norm", "attention", "linear"))
    assert figures["threads"] >= 1


def test_the_table_has_a_ratio_per_row_when_torch_is_there(monkeypatch, tmp_path):
    monkeypatch.setattr(gpt_step, "measure", lambda rounds: ["title", "  step  engine 2.000 ms   torch 1.000 ms   "
                                                                      "engine/torch 2.00"])
    out = tmp_path / "t.txt"
    assert gpt_step.main(["--rounds", "1", "--out", str(out)]) == 0
    assert out.read_text() == "title\n  step  engine 2.000 ms   torch 1.000 ms   engine/torch 2.00\n"
    assert gpt_step.main(["--out", str(tmp_path / "missing" / "t.txt")]) == 1  # said, not a traceback


def test_rounds_below_one_are_refused():
    with pytest.raises(SystemExit) as stop:
        gpt_step.main(["--rounds", "0"])
    assert stop.value.code == 2
