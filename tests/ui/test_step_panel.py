"""The step panel's small pieces: log-axis ticks and the figures' text."""

from __future__ import annotations

import math

import pytest

from ui.step_panel import _log_ticks, stats_text


def test_log_ticks_label_decades_or_three_points_within_one():
    assert _log_ticks([]) is None
    major, minor = _log_ticks([1e-8, 3e-3, 0.5])
    assert [p for p, _ in major] == [-8, -6, -4, -2] and minor == []  # 8 decades: every other one
    assert major[0][1] == "1e-08"
    major, _ = _log_ticks([0.004, 0.09])  # within 1.4 decades, one decade line: three ticks across
    assert [label for _, label in major] == ["0.004", "0.019", "0.09"]
    assert major[0][0] == pytest.approx(math.log10(0.004))
    major, _ = _log_ticks([2.0, 2.0])
    assert len(major) == 3 and major[1][1] == "2"


def test_stats_text():
    assert stats_text(None) == "—"
    text = stats_text({"norm": 5.0, "min": -4.0, "max": 3.0, "mean": -0.25, "zeros": 0.5, "size": 4096})
    assert text == "norm 5, min -4, max 3, zeros 50.0% of 4,096"
