"""The loss plot: smoothing, NaN marks, read-out, and the redraw smoke test that guards the PySide6 pin."""

from __future__ import annotations

import math
import shutil
import subprocess

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
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [("#1f77b4", "#1", 3, 7.0), ("#ff7f0e", "#2", 3, 17.0)]
    assert all(np.isfinite(r[4]) for r in rows)  # the smoothed value too
    card = plot.hover_html(rows)
    assert card.count("<br>") == 1 and "<b>#1</b>" in card and 'color:#ff7f0e' in card
    plot.set_visible(2, False)
    assert [r[1] for r in plot.hover_rows(3.2)] == ["#1"]  # hidden runs stay out of the card
    center = plot.plot.vb.sceneBoundingRect().center()
    plot._on_mouse_moved((QPointF(center),))
    assert plot.hover_card.isVisible() and plot.crosshair.isVisible()
    area = plot.plot.vb.sceneBoundingRect()
    for x in (area.left() + 3, area.center().x(), area.right() - 3):  # near either edge: the whole card shows
        plot._on_mouse_moved((QPointF(x, area.center().y()),))
        card = plot.hover_card.sceneBoundingRect()
        assert area.left() - 1 <= card.left() and card.right() <= area.right() + 1
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


# ---------------------------------------------------------------------------- the SVG other programs draw


def test_clip_segments_cuts_each_segment_at_the_edges_and_leaves_gaps():
    from ui.plot_svg import clip_segments

    rect = (0.0, 0.0, 100.0, 50.0)
    # in, out through the top, back in; a NaN gap; a segment wholly outside
    d = clip_segments([10, 60, 90, np.nan, 20, 30, 200, 300], [40, -50, 40, 0, 10, 20, 20, 20], rect)
    assert d == ("M10.00,40.00L32.22,0.00"  # leaves through the top edge (y = 0 at t = 4/9)
                 "M76.67,0.00L90.00,40.00"  # comes back in (y = 0 at t = 5/9 of the next segment)
                 "M20.00,10.00L30.00,20.00L100.00,20.00")  # after the gap; cut at the right edge
    assert clip_segments([1], [1], rect) == ""


def _diverging_plot(qtbot):
    plot = LossPlot(redraw_ms=1)
    qtbot.addWidget(plot)
    plot.resize(800, 500)
    plot.show()
    steps = np.arange(500.0)
    plot.add_series(1, "#1 converging")
    plot.append(1, steps, steps * 0.01, 1e7 * np.exp(-steps / 30) + 1e-2)
    plot.add_series(2, "#2 diverging")
    loss = 1e4 * np.exp(steps[:80] / 5)
    loss[-1] = np.inf
    plot.append(2, steps[:80], steps[:80] * 0.01, loss)
    plot.redraw(force=True)
    plot.plot.setXRange(50, 300, padding=0)  # zoomed: both curves run out of the plot area
    plot.plot.setYRange(2, 11, padding=0)
    QApplication.processEvents()
    return plot


def test_the_svg_draws_curves_in_pixels_clipped_to_the_plot_area(qtbot, tmp_path):
    import re
    import xml.etree.ElementTree as ET

    plot = _diverging_plot(qtbot)
    plot.export_image(str(tmp_path / "plot.svg"))
    text = (tmp_path / "plot.svg").read_text()
    root = ET.fromstring(text)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    width_mm = float(root.get("width").removesuffix("mm"))  # the window's size, at the window's dots per inch
    assert width_mm == pytest.approx(plot.plot_widget.width() * 25.4 / plot.plot_widget.logicalDpiX(), abs=0.01)
    curves = root.find(".//svg:g[@id='curves']", ns)
    assert curves is not None and curves.get("clip-path") == "url(#plot-area)" and curves.get("transform") is None
    clip = curves.find("svg:clipPath/svg:rect", ns)
    left, top = float(clip.get("x")), float(clip.get("y"))
    right, bottom = left + float(clip.get("width")), top + float(clip.get("height"))
    paths = curves.findall("svg:path", ns)
    strokes = {p.get("stroke") for p in paths}
    assert {"#1f77b4", "#ff7f0e", "#d62728", "#e4e4e4"} <= strokes  # both runs, the NaN mark, the decades
    for p in paths:
        assert p.get("stroke-width") in ("1", "2")
        if p.get("stroke") in ("#d62728", "#e4e4e4"):
            continue  # the X mark is drawn around its point; the decade lines run edge to edge (M x,y H x)
        numbers = [float(v) for v in re.findall(r"-?\d+\.\d+", p.get("d"))]
        xs, ys = numbers[0::2], numbers[1::2]
        assert min(xs) >= left - 0.01 and max(xs) <= right + 0.01
        assert min(ys) >= top - 0.01 and max(ys) <= bottom + 0.01
    # Qt's part draws no curve of its own: in a run's colour it draws only the legend's short sample line
    begin = text.index('<g id="curves"')
    qt_part = text[:begin] + text[text.index("</g>", begin) + 4:]
    for colour in ("#1f77b4", "#ff7f0e"):
        groups = re.findall(r'<g [^>]*stroke="' + colour + r'"[^>]*>(.*?)</g>', qt_part, flags=re.S)
        assert groups and max(len(re.findall(r"-?\d+(?:\.\d+)?", g)) for g in groups) < 20


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="librsvg's rsvg-convert is not installed")
def test_librsvg_draws_the_svg_as_the_app_draws_the_plot(qtbot, tmp_path):
    from PySide6.QtGui import QImage

    plot = _diverging_plot(qtbot)
    plot.export_image(str(tmp_path / "plot.svg"))
    plot.export_image(str(tmp_path / "plot.png"))
    subprocess.run(["rsvg-convert", str(tmp_path / "plot.svg"), "-o", str(tmp_path / "rsvg.png")], check=True)

    def blue(path):
        """The image's size and where the first run's colour is: a mask of its pixels."""
        image = QImage(str(path)).convertToFormat(QImage.Format_RGB888)
        a = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        a = a[:, : image.width() * 3].reshape(image.height(), image.width(), 3).astype(int)
        return a[..., 2] - a[..., 0] > 50  # blue over red: the first run's line, anti-aliased or not

    app, svg = blue(tmp_path / "plot.png"), blue(tmp_path / "rsvg.png")
    assert abs(svg.shape[1] - app.shape[1]) <= 1 and abs(svg.shape[0] - app.shape[0]) <= 1  # mm to pixels
    h, w = min(app.shape[0], svg.shape[0]), min(app.shape[1], svg.shape[1])
    app, svg = app[:h, :w], svg[:h, :w]
    rows = np.arange(h)[:, None]
    columns = [c for c in range(100, 600) if app[:, c].any() and svg[:, c].any()]  # the curve, not the legend
    assert len(columns) > 400  # drawn across the plot by both
    app_y = [float((rows[:, 0] * app[:, c]).sum() / app[:, c].sum()) for c in columns]
    svg_y = [float((rows[:, 0] * svg[:, c]).sum() / svg[:, c].sum()) for c in columns]
    assert np.median(np.abs(np.subtract(app_y, svg_y))) < 1.0  # the same line, within a pixel
    assert 0.5 < svg.sum() / app.sum() < 2  # a 1 px line, not a band
    # cut where the app cuts it: its rightmost and topmost pixels where the app's are
    for axis in (0, 1):
        assert abs(int(np.nonzero(svg.any(axis=axis))[0].max()) - int(np.nonzero(app.any(axis=axis))[0].max())) <= 3


def test_the_log_axis_keeps_minor_tick_labels_a_label_apart_on_a_short_plot(qtbot):
    from ui.loss_plot import SpacedLogAxis

    axis = SpacedLogAxis("left")
    std = [(1.0, [2.0, 3.0, 4.0])]
    tall = axis.logTickValues(2.0, 4.3, 2000, std)
    assert tall[0] == (1.0, [2.0, 3.0, 4.0]) and len(tall[1][1]) == 8 + 8  # 2..9 in each of two decades
    short = axis.logTickValues(2.0, 4.3, 150, std)
    per_decade = 150 / 2.3
    kept = short[1][1]
    assert 0 < len(kept) < len(tall[1][1])
    marks = sorted(kept + [2.0, 3.0, 4.0])
    assert min(b - a for a, b in zip(marks, marks[1:])) * per_decade >= SpacedLogAxis.MIN_GAP
    assert math.log10(2) + 2 in kept  # 200, the first minor tick, is far enough from 100


def test_legend_entries_are_escaped_and_stay_inside_a_narrow_plot(qtbot):
    """A run's name is the user's (the runs list renames it): shown as text, not read as HTML. What a curve lies on
    goes on a line of its own, so that at the 1024 px window's plot width the legend still fits: wider, the plot
    cut off its start (the line samples and the run numbers)."""
    plot = LossPlot(redraw_ms=10)
    qtbot.addWidget(plot)
    plot.resize(380, 400)  # the plot's width in a 1024 x 700 window
    plot.show()
    label = "#1 autograd · cpu · float32 · lr 1e-06"
    plot.add_series(1, label, "#1f77b4")
    plot.add_series(2, "#2 a<b> & co · cpu · float32 · lr 1e-06", "#ff7f0e", name="a<b> & co")
    plot.add_series(3, "#3 autograd · cpu · float32 · lr 1e-06", "#2ca02c")
    for key in (1, 2, 3):
        plot.append(key, np.arange(10), np.arange(10) * 0.5, np.arange(10, 0, -1).astype(float))
    assert plot.mark_identical(3) == [1, 2]
    plot.redraw(force=True)
    entry = plot.legend.getLabel(plot.series[2].smooth_item)
    assert entry.text == "#2 a&lt;b&gt; &amp; co · cpu · float32 · lr 1e-06"
    assert entry.item.toPlainText() == "#2 a<b> & co · cpu · float32 · lr 1e-06"
    third = plot.legend.getLabel(plot.series[3].smooth_item)
    assert third.item.toPlainText() == "#3 autograd · cpu · float32 · lr 1e-06\n— lies exactly on #1, a<b> & co"
    qtbot.waitUntil(lambda: plot.legend.sceneBoundingRect().width() > 0)
    area, legend = plot.plot.vb.sceneBoundingRect(), plot.legend.sceneBoundingRect()
    assert area.left() <= legend.left() and legend.right() <= area.right()


def test_the_legend_names_the_newest_runs_on_show_and_counts_the_rest(qtbot):
    """A session keeps its runs between launches: a legend of all eleven covered the plot at 1024 x 700. It names
    the newest six on show (a run hidden in the runs list leaves it, the next older one comes in) and says how many
    more there are."""
    plot = LossPlot(redraw_ms=10)
    qtbot.addWidget(plot)
    for k in range(1, 10):
        plot.add_series(k, f"#{k} autograd", "#1f77b4")

    def lines():
        return [label.item.toPlainText() for _, label in plot.legend.items]

    assert plot.legend_keys() == [4, 5, 6, 7, 8, 9]
    assert lines() == [f"#{k} autograd" for k in range(4, 10)] + ["+ 3 more in the Runs list"]
    plot.set_visible(8, False)
    assert plot.legend_keys() == [3, 4, 5, 6, 7, 9] and lines()[-1] == "+ 2 more in the Runs list"
    plot.set_visible(1, False)
    plot.set_visible(2, False)
    assert plot.legend_keys() == [3, 4, 5, 6, 7, 9] and len(lines()) == 6  # no "more" line once all fit
    plot.remove(9)
    plot.set_visible(8, True)
    assert plot.legend_keys() == [3, 4, 5, 6, 7, 8]
    plot.set_visible(3, False)
    plot.set_visible(1, True)
    assert plot.legend_keys() == [1, 4, 5, 6, 7, 8]  # (in the order the runs were made)
    plot.set_legend_visible(False)
    assert plot.legend_keys() == [] and plot.legend.items == [] and plot.view_settings()["legend"] is False
    plot.apply_view_settings(legend=True)
    assert plot.legend_keys() == [1, 4, 5, 6, 7, 8]
    plot.clear()
    assert plot.legend.items == [] and not plot.legend.isVisibleTo(plot.plot)


@pytest.mark.parametrize("lo, hi, size, labels", [
    (559, 620, 300, ["560", "570", "580", "590", "600", "610", "620"]),  # within a decade: 6·10² alone before
    (550, 650, 300, ["560", "580", "600", "620", "640"]),
    (0.0121, 0.0158, 200, ["0.013", "0.014", "0.015"]),
    (1.2e6, 1.9e6, 300, ["1.3·10⁶", "1.4·10⁶", "1.5·10⁶", "1.6·10⁶", "1.7·10⁶", "1.8·10⁶"]),
    (559, 620, 60, ["6·10²"]),  # too short for two even ticks: the log scale's own
    (1234550, 1234625, 200, ["1.23456·10⁶", "1.23458·10⁶", "1.2346·10⁶", "1.23462·10⁶"]),  # digits to tell apart
])
def test_a_log_axis_over_less_than_a_decade_gets_evenly_spaced_labels(qtbot, lo, hi, size, labels):
    from ui.loss_plot import SpacedLogAxis

    axis = SpacedLogAxis("left")
    axis.setLogMode(False, True)
    levels = axis.tickValues(math.log10(lo), math.log10(hi), size)
    assert [s for spacing, values in levels for s in axis.tickStrings(values, 1, spacing)] == labels


def test_a_log_axis_over_decades_keeps_its_own_labels(qtbot):
    from ui.loss_plot import SpacedLogAxis

    axis = SpacedLogAxis("left")
    axis.setLogMode(False, True)
    levels = axis.tickValues(-2, 8, 400)
    assert axis.tickStrings(levels[0][1], 1, levels[0][0]) == ["0.01", "1", "10²", "10⁴", "10⁶", "10⁸"]
