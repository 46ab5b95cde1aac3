"""benchmarks.cnn_step: one library's figures from its child, the table, and its refusals (the timing itself is
benchmarks/results/cpu-cnn-step.txt)."""

from __future__ import annotations

import pytest

from benchmarks import cnn_step


def test_one_library_times_the_step_and_the_parts(monkeypatch):
    monkeypatch.setattr(cnn_step, "BATCH", 2)
    figures = cnn_step._one_library("engine", rounds=1, reps=1)
    assert set(figures) == {"step", "maxpool", "upsample", "reflect", "threads", "version"}
    assert all(figures[k] > 0 for k in ("step", "maxpool", "upsample", "reflect")) and figures["threads"] >= 1


def test_the_table_is_written_and_a_bad_path_is_said(monkeypatch, tmp_path):
    monkeypatch.setattr(cnn_step, "measure", lambda rounds: ["title", "  step  engine 2.000 ms"])
    out = tmp_path / "t.txt"
    assert cnn_step.main(["--rounds", "1", "--out", str(out)]) == 0
    assert out.read_text() == "title\n  step  engine 2.000 ms\n"
    assert cnn_step.main(["--out", str(tmp_path / "missing" / "t.txt")]) == 1  # said, not a traceback


def test_rounds_below_one_are_refused():
    with pytest.raises(SystemExit) as stop:
        cnn_step.main(["--rounds", "0"])
    assert stop.value.code == 2
