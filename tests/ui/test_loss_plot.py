"""The loss plot: smoothing, NaN marks, read-out, and the redraw smoke test that guards the PySide6 pin."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication

from ui.loss_plot import LossPlot, smooth


def tensorboard_smooth(values, weight):
    """TensorBoard's reference loop (scalars dashboard), for comparison; at a non-finite value the plot leaves a
    gap where TensorBoard carries the last smoothed value (flat into a divergence, it reads as a plateau)."""
    last, count, out = 0.0, 0, []
    for v in values:
        if not math.isfinite(v):
            out.append(math.nan)
            continue
        last = last * weight + (1 - weight) * v
        count += 1
        out.append(last / (1 - weight**count))
    return np.array(out)


def test_smoothing_is_tensorboards_debiased_ema():
    rng = np.random.default_rng(0)
    values = np.exp(-np.arange(200) / 30) * 1e6 + rng.random(200)
    values[50] = np.nan
    for w in (0.0, 0.6, 0.99):
        got, _ = smooth(values, w)
        expected = values if w == 0 else tensorboard_smooth(values, w)
        np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    first, _ = smooth(values[:1], 0.9)
    assert first[0] == values[0]  # bias correction: the first point is not dragged to zero


def test_smoothing_continues_across_appends():
    values = np.linspace(10, 1, 100)
    whole, _ = smooth(values, 0.8)
    a, state = smooth(values[:37], 0.8)
    b, _ = smooth(values[37:], 0.8, state)
    np.testing.assert_allclose(np.concatenate([a, b]), whole, rtol=1e-14)


def test_buffers_grow_and_redraw_only_when_dirty(qtbot):
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.timer.stop()
    plot.add_series("r", "run")
    for k in range(5):
        steps = np.arange(k * 1000, (k + 1) * 1000)
        plot.append("r", steps, steps * 1e-3, 1e6 * np.exp(-steps / 500.0))
    assert plot.point_count("r") == 5000 and len(plot.series["r"].step) >= 5000
    plot.redraw()
    drawn = plot.redraws
    plot.redraw()
    assert plot.redraws == drawn  # nothing new: no redraw
    x, y = plot.series["r"].raw_item.getData()
    assert len(x) == 5000
    item = plot.series["r"].smooth_item
    assert item.opts["downsampleMethod"] == "peak" and item.opts["clipToView"] is True


def test_nan_steps_are_marked_and_log_axis_skips_them(qtbot):
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.timer.stop()
    plot.add_series("r", "run")
    loss = np.array([100.0, 10.0, 1.0, np.inf, np.nan])
    plot.append("r", np.arange(5), np.arange(5) * 0.1, loss)
    plot.redraw()
    marks = plot.series["r"].nan_item.data
    assert sorted(marks["x"].tolist()) == [3.0, 4.0]
    assert np.allclose(marks["y"], 0.0)  # log10 of the loss before them (1.0): on the curve, not up by the legend
    plot.log_y.setChecked(False)
    assert np.allclose(plot.series["r"].nan_item.data["y"], 1.0)
    smoothed = plot.series["r"].smoothed[:5]
    assert np.isfinite(smoothed[:3]).all() and np.isnan(smoothed[3:]).all()  # a gap, not a flat line into inf


def test_readout_names_step_and_loss(qtbot):
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.add_series("r", "run")
    plot.append("r", np.arange(10), np.arange(10) * 0.5, np.arange(10, 0, -1).astype(float))
    assert plot.readout_at(3.2) == "step 3: loss 7"
    plot.x_mode.setCurrentIndex(1)  # by time: step 3 is at 1.5 s
    assert plot.readout_at(1.6) == "step 3: loss 7"


def test_plot_survives_300_redraws(qtbot):
    """PySide6 6.12.0 + pyqtgraph 0.14.0 abort the interpreter ("Fatal Python error: none_dealloc" in
    AxisItem.drawPicture) after a few hundred redraws of a plain PlotWidget. This keeps the pin honest."""
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    curve = widget.plot(pen="b")
    widget.getPlotItem().setLogMode(y=True)
    ours = LossPlot()
    qtbot.addWidget(ours)
    ours.show()
    ours.add_series("r", "run")
    x = np.arange(1000.0)
    for i in range(300):
        curve.setData(x, np.exp(-x / (50 + i)) + 1e-3)
        widget.repaint()
        ours.append("r", np.array([i]), np.array([i * 0.01]), np.array([1e6 / (i + 1)]))
        ours.redraw()
        ours.plot_widget.repaint()
        QApplication.processEvents()
    assert widget.grab().width() == widget.width()
    assert ours.point_count("r") == 300


@pytest.mark.parametrize("log", [True, False])
def test_the_axes_never_carry_a_multiplier(qtbot, log):
    """pyqtgraph scales an axis's label ("loss (x1e+27)") once its values pass ~1e8 unless told not to: the ticks
    would then be off by decades for a diverging run, in exported pictures too."""
    plot = LossPlot(redraw_ms=10)
    qtbot.addWidget(plot)
    plot.show()
    plot.log_y.setChecked(log)
    plot.add_series(1, "#1 diverging")
    steps = np.arange(40)
    plot.append(1, steps * 1_000_000, steps * 1e3, 10.0 ** (steps.astype(float)))
    plot.redraw(force=True)
    qtbot.wait(50)
    for name in ("left", "bottom"):
        axis = plot.plot.getAxis(name)
        assert not axis.autoSIPrefix
        assert "x1e" not in axis.labelString() and "(x" not in axis.labelString(), axis.labelString()
    assert "loss" in plot.plot.getAxis("left").labelString()


def test_the_hover_card_names_each_visible_run_in_its_colour_and_goes_when_the_mouse_leaves(qtbot):
    from PySide6.QtCore import QEvent, QPointF

    plot = LossPlot(redraw_ms=10)
    qtbot.addWidget(plot)
    plot.resize(700, 400)
    plot.show()
    plot.add_series(1, "#1 tensor · cpu", "#1f77b4")
    plot.add_series(2, "#2 autograd · cpu", "#ff7f0e")
    plot.append(1, np.arange(10), np.arange(10) * 0.5, np.arange(10, 0, -1).astype(float))
    plot.append(2, np.arange(10), np.arange(10) * 0.5, np.arange(20, 10, -1).astype(float))
    plot.redraw(force=True)
    rows = plot.hover_rows(3.2)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [("#1f77b4", "#1 tensor · cpu", 3, 7.0),
                                                        ("#ff7f0e", "#2 autograd · cpu", 3, 17.0)]
    assert all(np.isfinite(r[4]) for r in rows)  # the smoothed value too
    card = plot.hover_html(rows)
    assert card.count("<br>") == 1 and "#1 tensor · cpu" in card and 'color:#ff7f0e' in card
    plot.set_visible(2, False)
    assert [r[1] for r in plot.hover_rows(3.2)] == ["#1 tensor · cpu"]  # hidden runs stay out of the card
    center = plot.plot.vb.sceneBoundingRect().center()
    plot._on_mouse_moved((QPointF(center),))
    assert plot.hover_card.isVisible() and plot.crosshair.isVisible()
    QApplication.sendEvent(plot.plot_widget, QEvent(QEvent.Leave))
    assert not plot.hover_card.isVisible() and not plot.crosshair.isVisible()  # nothing left behind


def test_on_a_log_axis_the_smoothing_is_done_in_log_space(qtbot):
    """A loss falling 8 decades, smoothed at 0.99: linearly the smoothed line sits decades above the data at the
    end (the early, huge values dominate the average); in log space it follows the curve, as the eye reads it."""
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.timer.stop()
    plot.smoothing.setValue(99)
    plot.add_series("r", "run")
    loss = 10.0 ** np.linspace(8, 0, 400)
    plot.append("r", np.arange(400), np.arange(400) * 0.01, loss)
    plot.redraw(force=True)
    on_log = plot.series["r"].smoothed[:400].copy()
    expected, _ = smooth(np.log10(loss), 0.99)
    np.testing.assert_allclose(on_log, 10.0 ** expected, rtol=1e-12)
    assert on_log[-1] / loss[-1] < 100  # an EMA of 0.99 lags ~100 steps: 2 decades of this slope, no more
    plot.log_y.setChecked(False)  # a linear axis: the linear average, smoothed again
    linear = plot.series["r"].smoothed[:400]
    np.testing.assert_allclose(linear, smooth(loss, 0.99)[0], rtol=1e-12)
    assert linear[-1] / loss[-1] > 1e5
