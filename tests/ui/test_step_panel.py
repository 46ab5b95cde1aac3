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


def test_a_caption_keeps_the_height_its_text_needs_in_a_layout_short_of_room(qtbot):
    """At 1024x700 the Weights caption was squeezed under three plots and lost its last line."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from ui.step_panel import _note

    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    note = _note("word " * 60)
    filler = QWidget()
    filler.setMinimumHeight(150)
    lay.addWidget(note)
    lay.addWidget(filler, 1)
    box.resize(260, 200)
    box.show()
    qtbot.waitUntil(lambda: note.width() > 0 and note.height() >= note.heightForWidth(note.width()), timeout=2000)
    assert note.heightForWidth(note.width()) > 3 * note.fontMetrics().height()  # several lines, all of them shown
    note.setText("short")  # a shorter text gives the room back
    qtbot.waitUntil(lambda: note.minimumHeight() == note.heightForWidth(note.width()), timeout=2000)
    assert note.minimumHeight() < 2 * note.fontMetrics().height() + 8


def _hist_samples(n):
    counts = [0, 1, 3, 1, 0]
    return [{"step": 50 * i, "full": True, "w": {"weights": {"counts": counts, "lo": -1.0, "hi": 1.0}}}
            for i in range(n)]


def test_the_histograms_steps_are_labelled_as_the_plots_height_has_room_for(qtbot):
    from ui.step_panel import WeightsView

    view = WeightsView()
    qtbot.addWidget(view)
    view.resize(300, 900)
    view.show()
    view.reset(["w"])
    view.samples = _hist_samples(12)
    view._draw_hist()
    ticks = lambda: [label for _, label in view.hist.getAxis("left")._tickLevels[0]]  # noqa: E731
    qtbot.waitUntil(lambda: len(ticks()) == 12, timeout=2000)  # tall: every row
    assert ticks()[-1] == "550"
    view.resize(300, 330)  # short: the plot has room for a few; the newest keeps its label
    qtbot.waitUntil(lambda: len(ticks()) < 12, timeout=2000)
    room = view.hist.getViewBox().height() / view.hist.fontMetrics().height()
    assert 2 <= len(ticks()) <= max(2, room) and ticks()[-1] == "550"
    view.samples = []
    view._draw_hist()
    assert view._hist_steps == []


def _chain(n: int) -> dict:
    """A graph of ``n`` nodes one above the other (the loss at the top), as app.inspect_step describes one."""
    nodes = [{"id": i, "op": "Add", "kind": "op", "shape": [4, 4], "dtype": "float32", "device": "cpu",
              "inputs": [i + 1] if i + 1 < n else [], "name": None, "depth": i, "output": None, "grad": None,
              "grad_fn": "AddBackward0"} for i in range(n)]
    return {"recipe": "test", "source": "a chain", "graph": {"nodes": nodes, "edges": [[i + 1, i] for i in
                                                                                       range(n - 1)]}, "manual": {}}


def test_a_small_graph_is_shown_whole_and_a_big_one_readable_and_scrolled_from_its_loss(qtbot):
    from ui.step_panel import MIN_READABLE_SCALE, GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(300, 300)
    view.show()
    qtbot.waitExposed(view)
    view.show_graph(_chain(8))  # a recipe's size: shrunk to fit the panel
    scale = view.view.transform().m11()
    assert scale < MIN_READABLE_SCALE
    rect = view.scene.sceneRect()
    assert rect.height() * scale <= view.view.maximumViewportSize().height() + 1
    view.show_graph(_chain(60))  # a script's: a readable size, the loss's node in view
    assert view.view.transform().m11() == pytest.approx(MIN_READABLE_SCALE)
    top = view.view.mapToScene(view.view.viewport().rect()).boundingRect()
    assert top.top() <= view.items[0].scenePos().y() <= top.bottom()
