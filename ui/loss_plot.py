"""The live loss plot: per-step loss of every run, log y by default, smoothing, NaN marks, hover read-out.

Data arrives in batches (``append``) into growing NumPy buffers that double when full; one QTimer redraws
at most ~30 times a second, only the curves that changed, with peak downsampling and clip-to-view.

A frame of a busy plot costs tens of milliseconds (setting the data, then software rendering), and while the
GUI thread works it holds the GIL the training thread needs. So the plot measures
what a frame costs (the view times its own paint events), and spaces the next redraw so painting takes at
most 1/``FRAME_BUDGET`` of the time.
"""

from __future__ import annotations

import html
import math
import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from app.export import write_atomic
from app.records import Columns

from . import plot_svg

FRAME_BUDGET = 20  # update and paint the plot at most 1/20 of the time
MAX_INTERVAL_MS = 500

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f"]


def smooth(values: np.ndarray, weight: float, state=None):
    """TensorBoard's bias-corrected exponential moving average. A non-finite value leaves a gap (NaN) and does not
    enter the average: carried over, as TensorBoard draws it, a diverging run's smoothed line would run flat into
    the inf step and read as a plateau.

    ``state`` = (last, count) continues a previous call, so appends cost only the new points.
    Returns (smoothed, state).
    """
    last, count = state if state is not None else (0.0, 0)
    out = np.empty(len(values), dtype=np.float64)
    if weight <= 0:
        return values.astype(np.float64, copy=True), (last, count)
    for i, v in enumerate(values.tolist()):
        if not math.isfinite(v):
            out[i] = math.nan
            continue
        last = last * weight + (1 - weight) * v
        count += 1
        out[i] = last / (1 - weight**count)
    return out, (last, count)


class SpacedLogAxis(pg.AxisItem):
    """pyqtgraph's axis, with a log scale's minor ticks (2..9 within a decade) thinned to at least ``MIN_GAP``
    pixels apart: they crowd at the top of each decade, and on a short plot (the loss above the fit of sin(x)
    in a narrow window) pyqtgraph labels them one on top of another."""

    MIN_GAP = 16  # pixels: about a label's height
    LINEAR_GAP = 40  # pixels between the evenly spaced ticks of a range too short for two of the log scale's

    _linear = False  # whether the ticks being drawn are the evenly spaced ones (labelled with more digits)

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802, N803 - pyqtgraph's names
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        self._linear = False
        if maxVal > minVal and size > 0:
            shown = [v for _, values in levels for v in values if minVal <= v <= maxVal]
            if len(shown) < 2:  # a loss that moves within a decade (600 to 560, say) got one label, or none
                linear = self._even_ticks(10.0**minVal, 10.0**maxVal, size)
                if len(linear) >= 2:
                    self._linear = True
                    return [(None, [math.log10(v) for v in linear])]
        if not levels or levels[-1][0] is not None or maxVal <= minVal or size <= 0:
            return levels
        per_unit = size / (maxVal - minVal)  # pixels per decade
        taken = [v for _, values in levels[:-1] for v in values]  # the decades, labelled already
        kept = []
        for v in sorted(levels[-1][1]):
            if all(abs(v - t) * per_unit >= self.MIN_GAP for t in taken + kept[-1:]):
                kept.append(v)
        return levels[:-1] + [(None, kept)]

    def _even_ticks(self, lo: float, hi: float, size: float) -> list:
        """Round values 1, 2, 2.5 or 5 times a power of ten apart, about LINEAR_GAP pixels, within [lo, hi]."""
        want = max(2, int(size // self.LINEAR_GAP))
        raw = (hi - lo) / want
        if not (raw > 0 and math.isfinite(raw)):
            return []
        magnitude = 10.0 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        first = math.ceil(lo / step)
        return [k * step for k in range(first, first + want + 2) if lo <= k * step <= hi and k * step > 0]

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        if not self._linear:
            return super().logTickStrings(values, scale, spacing)
        # evenly spaced ticks: as many digits as tell them apart (560, 580, 600; 0.0125, 0.015), 10ⁿ for the
        # very large and small as the log scale's own labels
        xs = [10.0**v * scale for v in values]
        step = min((b - a for a, b in zip(xs, xs[1:])), default=0.0)
        # significant digits down to the step's (1234560 to 1234620 by 20: 1.23456·10⁶, 1.23458·10⁶, ...), one more
        # for a step of 2.5 times a power of ten; at least 4 (560, not 5.6·10²)
        digits = 4
        if step > 0:
            power = math.floor(math.log10(step))
            digits = math.floor(math.log10(max(abs(x) for x in xs))) - power + 1
            digits = max(4, digits + (0 if abs(step / 10.0**power - round(step / 10.0**power)) < 1e-6 else 1))
        strings = []
        for x in xs:
            text = f"{x:.{min(digits, 15)}g}"
            if "e" in text:
                mantissa, exponent = text.split("e")
                power = str(int(exponent)).translate(_SUPERSCRIPT)
                text = f"{mantissa}·10{power}"
            strings.append(text)
        return strings


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class TimedPlotWidget(pg.PlotWidget):
    """A PlotWidget that adds up how long its paints take (a data update often costs two: pyqtgraph defers
    its range update to a second paint)."""

    paint_ms = 0.0

    def paintEvent(self, event):  # noqa: N802 - Qt override
        started = time.perf_counter()
        super().paintEvent(event)
        self.paint_ms += (time.perf_counter() - started) * 1e3

    def take_paint_ms(self) -> float:
        spent, self.paint_ms = self.paint_ms, 0.0
        return spent


class Series:
    """One run's curve: growing columns (app.records.Columns, as the run's own log) and its plot items."""

    def __init__(self, key, label: str, color: str, name: str | None = None):
        self.key = key
        self.label = label
        self.name = name or label.split(" ")[0]  # what other legend entries call it ("lies exactly on #1")
        self.color = color
        self._columns = Columns({"step": np.float64, "time": np.float64, "loss": np.float64,
                                 "smoothed": np.float64})
        self.smooth_state = None
        self.smoothed_n = 0
        self.dirty = True
        self.visible = True
        self.raw_item: pg.PlotDataItem | None = None
        self.smooth_item: pg.PlotDataItem | None = None
        self.nan_item: pg.ScatterPlotItem | None = None
        self.identical_to: list = []  # keys of the curves this one lies on exactly (LossPlot.mark_identical)

    @property
    def n(self) -> int:
        return len(self._columns)

    # the whole buffers (slice with [:n]); "smoothed" is filled behind the others by update_smoothing
    @property
    def step(self) -> np.ndarray:
        return self._columns.buffer("step")

    @property
    def time(self) -> np.ndarray:
        return self._columns.buffer("time")

    @property
    def loss(self) -> np.ndarray:
        return self._columns.buffer("loss")

    @property
    def smoothed(self) -> np.ndarray:
        return self._columns.buffer("smoothed")

    def append(self, step, elapsed, loss) -> None:
        self._columns.extend(step=step, time=elapsed, loss=loss)
        self.dirty = True

    def update_smoothing(self, weight: float, log: bool = False) -> None:
        """Smooth the new points; on a log axis in log space (the EMA of log10(loss)), as the eye reads a log
        plot: smoothed linearly, 0.99 would sit decades above a falling curve."""
        if self.smoothed_n < self.n:
            new = self.loss[self.smoothed_n : self.n]
            if log:
                with np.errstate(divide="ignore", invalid="ignore"):
                    logs = np.where(new > 0, np.log10(np.where(new > 0, new, 1.0)), np.nan)
                part, self.smooth_state = smooth(logs, weight, self.smooth_state)
                part = 10.0 ** part
            else:
                part, self.smooth_state = smooth(new, weight, self.smooth_state)
            self.smoothed[self.smoothed_n : self.n] = part
            self.smoothed_n = self.n

    def reset_smoothing(self) -> None:
        self.smooth_state = None
        self.smoothed_n = 0


class LossPlot(QWidget):
    """The plot with its toolbar: log axis toggle, x by step/time, smoothing slider, hover read-out."""

    hovered = Signal(str)
    log_scale_changed = Signal(bool)
    legend_shown = Signal(bool)
    hide_requested = Signal(object)  # a run's key: its legend sample was clicked (the runs list hides it)

    # The legend names the newest runs on show, at most this many, and says how many more there are: a session
    # keeps its runs between launches, and a legend of every one (eleven, after a morning) covered the middle of
    # the plot at 1024 x 700. The runs list names them all, each with its colour.
    LEGEND_MAX = 6

    def __init__(self, parent=None, redraw_ms: int = 33):
        super().__init__(parent)
        self.min_interval_ms = redraw_ms
        self.last_frame_ms = 0.0
        self.series: dict = {}
        self._color_index = 0
        self.redraws = 0

        self.log_y = QCheckBox("Log scale")
        self.log_y.setChecked(True)
        self.log_y.setToolTip("The tutorial's loss spans about 12 orders of magnitude: a log axis shows it all")
        self.x_mode = QComboBox()
        self.x_mode.addItems(["Step", "Time (s)"])
        self.x_mode.setToolTip("x axis: step number, or seconds since the run started")
        self.smoothing = QSlider(Qt.Horizontal)
        self.smoothing.setRange(0, 99)
        self.smoothing.setValue(60)
        self.smoothing.setMinimumWidth(50)
        self.smoothing.setToolTip("Exponential moving average, as TensorBoard computes it (bias-corrected)")
        self.smoothing_label = QLabel()
        self.readout = QLabel("Hover: step and loss")
        self.readout.setMinimumWidth(1)  # the hover card says it all where room is short
        self.readout.setTextInteractionFlags(Qt.TextSelectableByMouse)

        bar = QHBoxLayout()
        bar.addWidget(self.log_y)
        bar.addWidget(QLabel("x:"))
        bar.addWidget(self.x_mode)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Smoothing"))
        bar.addWidget(self.smoothing, 1)
        bar.addWidget(self.smoothing_label)
        bar.addSpacing(12)
        bar.addWidget(self.readout, 2)

        pg.setConfigOptions(antialias=True)
        self.plot_widget = TimedPlotWidget(background="w", axisItems={"left": SpacedLogAxis("left")})
        self.plot = self.plot_widget.getPlotItem()
        # a light line at every decade, drawn as one opaque path: pyqtgraph's own grid (translucent lines
        # drawn by the axes) cost ~60 ms a frame in software rendering, most of the plot's paint time
        decades = np.arange(-30, 31, dtype=float)
        self.decade_lines = pg.PlotCurveItem(np.tile([-1e12, 1e12], len(decades)), np.repeat(decades, 2),
                                             connect="pairs", pen=pg.mkPen("#e4e4e4", width=1), antialias=False)
        self.decade_lines.setZValue(-100)
        self.plot.getViewBox().addItem(self.decade_lines, ignoreBounds=True)
        self.plot.setLabel("left", "loss")
        self.plot.setLabel("bottom", "step")
        for axis in ("left", "bottom"):  # the ticks say the values: no "(x1e+27)" multiplier on the label
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        # a light background: an entry drawn over a curve stays readable
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 200))
        self._legend_keys: list = []  # the series the legend names, in its order
        self._legend_more = 0  # and how many more are on show
        self._legend_on = True
        self._more = pg.PlotDataItem(pen=None)  # the "+3 more" line's sample: nothing drawn (never in the plot)
        self._released = False  # (release)
        self.plot.setLogMode(y=True)
        self._show_empty_range()
        # applied by the PlotItem to every curve it holds (it overrides per-item settings on addItem)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setClipToView(True)
        self.plot.getViewBox().setMouseMode(pg.ViewBox.RectMode)
        self.crosshair = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#999", style=Qt.DashLine))
        self.crosshair.setVisible(False)
        self.plot.addItem(self.crosshair, ignoreBounds=True)
        # TensorBoard's hover card: one line per visible run, in its colour, with its name, raw and smoothed loss
        self.hover_card = pg.TextItem(color="#222", anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 235),
                                      border=pg.mkPen("#bbb"))
        self.hover_card.setZValue(1000)
        self.hover_card.setVisible(False)
        self.plot.addItem(self.hover_card, ignoreBounds=True)
        self.plot_widget.installEventFilter(self)  # the mouse leaving the plot takes the crosshair and card along

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.plot_widget, 1)

        self.log_y.toggled.connect(self._on_log_toggled)
        self.log_y.toggled.connect(self.log_scale_changed)
        self.x_mode.currentIndexChanged.connect(self._on_x_mode_changed)
        self.smoothing.valueChanged.connect(self._on_smoothing_changed)
        self._mouse_proxy = pg.SignalProxy(self.plot_widget.scene().sigMouseMoved, rateLimit=30,
                                           slot=self._on_mouse_moved)
        self._on_smoothing_changed(self.smoothing.value())

        # single-shot, armed by new data: an idle plot never wakes the GUI thread (each wake-up takes the
        # GIL from the training thread)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(redraw_ms)
        self.timer.timeout.connect(self.redraw)

    # ------------------------------------------------------------------ data
    @property
    def smoothing_weight(self) -> float:
        return self.smoothing.value() / 100.0

    def _show_empty_range(self) -> None:
        """Before any curve: decades 1e-2 to 1e8 over 500 steps (the tutorial's span), not an axis of 0.2 steps
        and unlabelled minor ticks; the first curve brings the range back to its data."""
        self.plot.setRange(xRange=(0, 500), yRange=(-2, 8) if self.log_y.isChecked() else (0, 1), padding=0.03)

    def add_series(self, key, label: str, color: str | None = None, name: str | None = None,
                   avoid=frozenset(), position: int | None = None) -> Series:
        """A curve, last in the plot's order (the legend's) or at ``position``."""
        if not self.series:
            self.plot.enableAutoRange()
        if color is None:  # the palette's next colour that no curve on show has and none of ``avoid`` (the colours
            taken = {s.color for s in self.series.values()} | set(avoid)  # of restored runs still to come)
            for _ in range(len(PALETTE)):
                color = PALETTE[self._color_index % len(PALETTE)]
                self._color_index += 1
                if color not in taken:
                    break
        s = Series(key, label, color, name)
        qcolor = pg.mkColor(color)
        faint = pg.mkColor(color)
        faint.setAlpha(70)
        s.raw_item = pg.PlotDataItem(pen=pg.mkPen(faint, width=1), connect="finite", antialias=False)
        # a 1 px pen: Qt's software rasterizer strokes a 2 px antialiased path at twice the cost of the frame
        # (no name: the plot would add every curve to the legend, which names the newest few, _sync_legend)
        s.smooth_item = pg.PlotDataItem(pen=pg.mkPen(qcolor, width=1), connect="finite")
        s.nan_item = pg.ScatterPlotItem(symbol="x", size=12, pen=pg.mkPen("#d62728", width=2), brush=None)
        self.plot.addItem(s.raw_item)
        self.plot.addItem(s.smooth_item)
        self.plot.addItem(s.nan_item)
        self.series[key] = s
        if position is not None and position < len(self.series) - 1:
            order = list(self.series.items())
            order.insert(position, order.pop())
            self.series = dict(order)
        self._sync_legend()
        return s

    def _sync_legend(self) -> None:
        """The legend names the newest :attr:`LEGEND_MAX` runs on show (oldest first, as they were added), then how
        many more are on show; nothing while it is switched off (:meth:`set_legend_visible`). Rebuilt only when
        that list changes."""
        shown = [k for k, s in self.series.items() if s.visible] if self._legend_on else []
        keys, more = shown[-self.LEGEND_MAX:], max(0, len(shown) - self.LEGEND_MAX)
        if keys == self._legend_keys and more == self._legend_more:
            return
        self.legend.clear()
        self._legend_keys, self._legend_more = keys, more
        for k in keys:
            self.legend.addItem(self.series[k].smooth_item, "")
            self._show_legend_entry(self.series[k])  # the label escaped
            self.legend.items[-1][0].sigClicked.connect(lambda _item, key=k: self._on_sample_clicked(key))
        if more:
            # (short: a legend wider than a 1024 px window's plot has its samples cut off at the left)
            self.legend.addItem(self._more, f"<i>+ {more} more in the Runs list</i>")
        self.legend.setVisible(bool(keys))

    def _on_sample_clicked(self, key) -> None:
        """pyqtgraph's legend hides a curve whose sample is clicked, and only that item: the smoothed line went and
        its faint raw line, its NaN marks and its box in the runs list stayed. The click is undone here and asks
        for the whole run to be hidden, as unticking it in the runs list does (after the click's own handler:
        hiding rebuilds the legend, the clicked sample with it)."""
        s = self.series.get(key)
        if s is None:
            return
        s.smooth_item.setVisible(s.visible)
        QTimer.singleShot(0, lambda: self._request_hide(key))

    def _request_hide(self, key) -> None:
        if key in self.series:  # (not deleted meanwhile)
            self.hide_requested.emit(key)

    def set_legend_visible(self, on: bool) -> None:
        """Show or hide the legend (View > Legend); the runs list names every run either way."""
        if on != self._legend_on:
            self._legend_on = on
            self._sync_legend()
            self.legend_shown.emit(on)

    def legend_visible(self) -> bool:
        return self._legend_on

    def legend_keys(self) -> list:
        """The runs the legend names, in its order."""
        return list(self._legend_keys)

    def mark_identical(self, key) -> list:
        """Name in ``key``'s legend entry the curves it lies on exactly (same steps, same losses bit for bit: the
        tensor and autograd recipes from one seed, say), which would otherwise hide one another. Returns their
        keys."""
        s = self.series[key]
        n = s.n
        same = [k for k, other in self.series.items()
                if k != key and other.n == n and n > 0 and np.array_equal(other.step[:n], s.step[:n])
                and np.array_equal(other.loss[:n], s.loss[:n], equal_nan=True)]
        s.identical_to = same
        self._show_legend_entry(s)
        return same

    def _show_legend_entry(self, s: Series) -> None:
        """The entry's text is HTML to the legend: the names (a user's, from the runs list) are escaped, and what
        the curve lies on goes on a line of its own, so that the legend stays as narrow as the plain labels (at
        1024 px wide it is otherwise wider than the plot, and the plot cuts off its start)."""
        entry = self.legend.getLabel(s.smooth_item) if s.smooth_item is not None else None
        if entry is not None:
            same = [self.series[k].name for k in s.identical_to if k in self.series]
            entry.setText(html.escape(s.label) + ("<br>— lies exactly on " + html.escape(", ".join(same)) if same
                                                  else ""))

    def append(self, key, step, elapsed, loss) -> None:
        self.series[key].append(step, elapsed, loss)
        if not self.timer.isActive():
            self.timer.start()

    def set_visible(self, key, visible: bool) -> None:
        s = self.series[key]
        s.visible = visible
        for item in (s.raw_item, s.smooth_item, s.nan_item):
            item.setVisible(visible)
        self._sync_legend()
        if visible:
            s.dirty = True
            self.redraw()

    def color(self, key) -> str:
        return self.series[key].color

    def release(self) -> None:
        """Before the window goes: the legend stops following its geometry. Qt deletes the plot's view box before
        the legend inside it, and a legend whose size changes as its entries go (one of two lines, "lies exactly
        on #1", say) would have pyqtgraph's anchor read the deleted box."""
        if not self._released:
            self._released = True
            self.legend.geometryChanged.disconnect()

    def has(self, key) -> bool:
        return key in self.series

    def view_settings(self) -> dict:
        """What the user chose for the view (remembered between launches)."""
        return {"log_y": self.log_y.isChecked(), "x_mode": self.x_mode.currentIndex(),
                "smoothing": self.smoothing.value(), "legend": self._legend_on}

    def apply_view_settings(self, log_y=None, x_mode=None, smoothing=None, legend=None) -> None:
        """Apply remembered choices; what is missing or out of range is left as it is."""
        if isinstance(legend, bool):
            self.set_legend_visible(legend)
        if isinstance(log_y, bool):
            self.log_y.setChecked(log_y)
        if isinstance(x_mode, int) and 0 <= x_mode < self.x_mode.count():
            self.x_mode.setCurrentIndex(x_mode)
        if isinstance(smoothing, int) and self.smoothing.minimum() <= smoothing <= self.smoothing.maximum():
            self.smoothing.setValue(smoothing)

    def set_log_scale(self, checked: bool) -> None:
        self.log_y.setChecked(checked)

    def stop(self) -> None:
        """No more redraws (the window is closing)."""
        self.timer.stop()

    def set_label(self, key, label: str, name: str) -> None:
        """Rename a curve: its legend entry, its hover line, and what the curves it lies on call it."""
        s = self.series[key]
        s.label, s.name = label, name
        for other in self.series.values():
            if other is s or key in other.identical_to:
                self._show_legend_entry(other)

    def set_color(self, key, color: str) -> None:
        """Recolour a curve: its smoothed line, its faint raw line and its legend sample."""
        s = self.series[key]
        s.color = color
        faint = pg.mkColor(color)
        faint.setAlpha(70)
        s.raw_item.setPen(pg.mkPen(faint, width=1))
        s.smooth_item.setPen(pg.mkPen(pg.mkColor(color), width=1))
        self.legend.update()

    def remove(self, key) -> None:
        s = self.series.pop(key)
        for item in (s.raw_item, s.smooth_item, s.nan_item):
            self.plot.removeItem(item)
        self._sync_legend()

    def clear(self) -> None:
        for key in list(self.series):
            self.remove(key)

    def point_count(self, key) -> int:
        return self.series[key].n

    # ------------------------------------------------------------------ drawing
    def redraw(self, force: bool = False) -> None:
        started = time.perf_counter()
        weight = self.smoothing_weight
        by_time = self.x_mode.currentIndex() == 1
        log = self.log_y.isChecked()
        drew = False
        for s in self.series.values():
            if not (s.dirty or force) or not s.visible:
                continue
            n = s.n
            x = (s.time if by_time else s.step)[:n]
            loss = s.loss[:n]
            s.update_smoothing(weight, log)
            shown_raw = self._displayable(loss, log)
            shown_smooth = self._displayable(s.smoothed[:n], log)
            if weight > 0:
                s.raw_item.setData(x, shown_raw)
                s.raw_item.setVisible(True)
            else:
                s.raw_item.setVisible(False)
            s.smooth_item.setData(x, shown_smooth)
            bad = ~np.isfinite(loss)
            if bad.any():
                # a NaN has no height of its own: each mark sits where the curve last was (the loss before it),
                # on the curve, not at the top of the plot where the legend is
                good = np.isfinite(shown_raw)
                idx = np.flatnonzero(good)
                if idx.size:
                    before = np.searchsorted(idx, np.flatnonzero(bad)) - 1
                    heights = shown_raw[idx[np.clip(before, 0, idx.size - 1)]]
                else:
                    heights = np.ones(int(bad.sum()))
                y_marks = np.log10(np.maximum(heights, 1e-300)) if log else heights
                s.nan_item.setData(x[bad], y_marks)
            else:
                s.nan_item.setData([], [])
            s.dirty = False
            drew = True
        if drew:
            # settle the auto-range and the view's transform now: left to the paint, a range change there
            # makes the clipped, downsampled curves recompute and asks for a second full paint
            self.plot.getViewBox().prepareForPaint()
            self.redraws += 1
            self._pace((time.perf_counter() - started) * 1e3)

    def _pace(self, update_ms: float) -> None:
        """Space redraws so that a frame (this data update, plus every paint since the last one, which the
        view times itself) stays within the budget."""
        self.last_frame_ms = update_ms + self.plot_widget.take_paint_ms()
        interval = int(min(MAX_INTERVAL_MS, max(self.min_interval_ms, self.last_frame_ms * FRAME_BUDGET)))
        if interval != self.timer.interval():
            self.timer.setInterval(interval)

    @staticmethod
    def _displayable(values: np.ndarray, log: bool) -> np.ndarray:
        if not log:
            return np.where(np.isfinite(values), values, np.nan)
        return np.where(np.isfinite(values) & (values > 0), values, np.nan)

    def _mark_all_dirty(self) -> None:
        for s in self.series.values():
            s.dirty = True

    # ------------------------------------------------------------------ slots
    def _on_log_toggled(self, checked: bool) -> None:
        for s in self.series.values():  # smoothed in log space on a log axis: smooth again
            s.reset_smoothing()
        self.plot.setLogMode(y=checked)
        self.decade_lines.setVisible(checked)
        self._mark_all_dirty()
        self.redraw()
        if self.series:
            self.plot.enableAutoRange()
        else:
            self._show_empty_range()

    def _on_x_mode_changed(self, index: int) -> None:
        self.plot.setLabel("bottom", "time (s)" if index == 1 else "step")
        self._mark_all_dirty()
        self.redraw()
        self.plot.enableAutoRange()

    def _on_smoothing_changed(self, value: int) -> None:
        self.smoothing_label.setText(f"{value / 100:.2f}")
        for s in self.series.values():
            s.reset_smoothing()
        self._mark_all_dirty()
        if hasattr(self, "timer") and not self.timer.isActive():
            self.timer.start()

    def eventFilter(self, watched, event):  # noqa: N802 - Qt override
        if watched is self.plot_widget and event.type() == QEvent.Leave:
            self.hide_hover()
        return super().eventFilter(watched, event)

    def hide_hover(self) -> None:
        self.crosshair.setVisible(False)
        self.hover_card.setVisible(False)

    def _on_mouse_moved(self, event) -> None:
        pos = event[0]
        if not self.plot.vb.sceneBoundingRect().contains(pos) or not self.series:
            self.hide_hover()
            return
        point = self.plot.getViewBox().mapSceneToView(pos)
        rows = self.hover_rows(point.x())
        if not rows:
            self.hide_hover()
            return
        self.readout.setText(f"Hover: step {rows[0][2]}" if len(rows) == 1 else f"Hover: {len(rows)} runs")
        self.crosshair.setPos(point.x())
        self.crosshair.setVisible(True)
        self.hover_card.setHtml(self.hover_html(rows))
        self._place_card(pos, point)
        self.hover_card.setVisible(True)

    def _place_card(self, pos, point) -> None:
        """Beside the pointer, on the side with room for the whole card (the other side, or flush with the plot's
        left edge where neither has room): never cut off by the plot's edge."""
        vb = self.plot.getViewBox()
        area = vb.sceneBoundingRect()
        width = self.hover_card.boundingRect().width()
        if pos.x() + width + 4 <= area.right():
            anchor, x = (0.0, 1.0), pos.x()
        elif pos.x() - width - 4 >= area.left():
            anchor, x = (1.0, 1.0), pos.x()
        else:
            anchor, x = (0.0, 1.0), area.left() + 2
        y = min(max(pos.y(), area.top() + self.hover_card.boundingRect().height() + 2), area.bottom())
        self.hover_card.setAnchor(anchor)
        at = vb.mapSceneToView(QPointF(x, y))
        self.hover_card.setPos(at.x(), at.y())

    def hover_rows(self, x: float) -> list:
        """(colour, name, step, loss, smoothed) of each visible run at its point nearest to x (step or seconds): the
        card names runs as the runs list does; the legend says what each is."""
        by_time = self.x_mode.currentIndex() == 1
        rows = []
        for s in self.series.values():
            if not s.visible or s.n == 0:
                continue
            xs = (s.time if by_time else s.step)[: s.n]
            i = int(np.clip(np.searchsorted(xs, x), 0, s.n - 1))
            if i > 0 and abs(xs[i - 1] - x) < abs(xs[i] - x):
                i -= 1
            smoothed = float(s.smoothed[i]) if i < s.smoothed_n else float("nan")
            rows.append((s.color, s.name, int(s.step[i]), float(s.loss[i]), smoothed))
        return rows

    @staticmethod
    def hover_html(rows) -> str:
        lines = []
        for color, label, step, loss, smoothed in rows:
            lines.append(f'<span style="color:{color}">&#9632;</span> <b>{html.escape(label)}</b>: step {step}, '
                         f"loss {loss:.4g}, smoothed {smoothed:.4g}")
        return '<div style="font-size:8pt">' + "<br>".join(lines) + "</div>"

    def readout_at(self, x: float) -> str:
        """'step k: loss v' for the visible runs nearest to x (step or seconds)."""
        return "   ".join(f"step {step}: loss {loss:.4g}" for _, _, step, loss, _ in self.hover_rows(x))

    def export_image(self, path: str) -> None:
        """The plot as PNG or SVG (drawn by Qt itself; pyqtgraph's SVG exporter fails on curves with gaps), drawn
        in memory and written atomically: a full disk leaves no partial picture and an old one as it was."""
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        suffix = Path(path).suffix.lower()
        if suffix not in (".png", ".svg"):
            raise ValueError(f"{path}: a picture of the plot is a .png or .svg file, not {suffix or '(none)'!r}")
        self.redraw(force=True)
        widget = self.plot_widget
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        if suffix == ".svg":
            # Qt draws the frame, axes and legend; plot_svg writes the curves in pixels, clipped (see there)
            # transparent, not hidden: a hidden item would leave the auto-range, and the axes would move
            hidden = [(item, item.opacity()) for item in plot_svg.hidden_for_qt(self)]
            for item, _ in hidden:
                item.setOpacity(0.0)
            generator = QSvgGenerator()
            generator.setOutputDevice(buffer)
            generator.setSize(widget.size())
            # the widget's own dots per inch: at the generator's default 72, the axes' cached drawings are replayed
            # at 0.75 of their size, and the picture's size in mm would not be the window's
            generator.setResolution(widget.logicalDpiX())
            generator.setViewBox(widget.rect())
            generator.setTitle("loss")
            painter = QPainter(generator)
            try:
                widget.render(painter)
            finally:
                painter.end()
                for item, opacity in hidden:
                    item.setOpacity(opacity)
            buffer.close()
            text = plot_svg.compose(bytes(data).decode("utf-8"), plot_svg.plot_layers(self))
            data = QByteArray(text.encode("utf-8"))
        elif not widget.grab().save(buffer, "PNG"):
            raise OSError(f"could not draw {path}")
        buffer.close()
        if data.isEmpty():
            raise OSError(f"could not draw {path}")
        write_atomic(path, bytes(data))
