"""Inside the step: the graph backward() walks, where the step's time goes, and how the weights move.

Three tabs. **Graph** draws the recorded graph of one step top to bottom (the loss at the top, the weights at the
bottom), with the hand-written backward lines of the manual recipes beside the nodes they stand for; a click on a
node shows its output's and its gradient's figures (norm, min, max, share of zeros: the ReLU's mask). **Time** is
the per-op profile of the step as bars (CPU time; on a GPU the GPU time beside it), with the totals by kind of
work. **Weights** plots the sampled weight norm, gradient norm and update-to-weight ratio per parameter, and the
histograms of the weights or of their gradients over the steps (TensorBoard's offset view).

It receives plain data (dicts of numbers and lists) and draws them; the work runs elsewhere.
"""

from __future__ import annotations

import html
import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .swatches import colour_key

KIND_COLORS = {"op": "#e3f2fd", "function": "#fff3e0", "leaf": "#e8f5e9"}
CATEGORY_COLORS = {"matrix product": "#1f77b4", "elementwise": "#ff7f0e", "update": "#2ca02c", "shape": "#9467bd",
                   "autograd walk": "#8c564b", "Python between ops": "#7f7f7f", "profiler's own": "#c7c7c7"}
PARAM_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"]
NODE_W, NODE_H, ROW_H, GAP = 150, 40, 70, 24
WEIGHTS_NOTE = "Start a run: its weights are sampled as it trains (a few percent of its time)."
SCRIPT_WEIGHTS_NOTE = ("Your script's weights are sampled in its own process between its backward() calls (its "
                       "parameters: the leaves of its loss's graph), within a few percent of its time.")
MIN_READABLE_SCALE = 0.7  # below this a node's text is too small to read: a big graph scrolls instead
WHOLE_UP_TO = 20  # nodes: a graph this small is always shown whole
REDRAW_MS = 1000  # the weights' curves are redrawn at most this often while a run sends samples
HIST_MS = 3000  # and the histograms at most this often
SYMBOLS_UP_TO = 40  # points drawn as dots too while a curve has no more (dots are the costly part to paint)


def _fmt(v) -> str:
    if v is None:
        return "—"
    if v == 0 or 1e-3 <= abs(v) < 1e5:
        return f"{v:.4g}"
    return f"{v:.3e}"


class _Note(QLabel):
    """A wrapped label that keeps the height its text needs at its width: a layout short of room otherwise
    squeezes it below that and cuts its last lines off (the Weights caption in a 1024x700 window)."""

    _held_for = None  # the (width, text) the minimum height was worked out for

    def _hold_height(self) -> None:
        if not self.isVisible():  # not laid out: its width says nothing yet (showEvent comes back here)
            return
        key = (self.width(), self.text())
        if key == self._held_for:  # a resize in height only (the one this causes, too): nothing to work out
            return
        self._held_for = key
        if self.minimumHeight():
            self.setMinimumHeight(0)  # (QLabel's heightForWidth is never under the minimum it is given)
        self.setMinimumHeight(max(self.heightForWidth(self.width()), 0))

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self._hold_height()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._hold_height()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._hold_height()


def _note(text: str) -> QLabel:
    """A small, wrapped, selectable label: the panels' captions and figures."""
    label = _Note(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setStyleSheet("font-size: 8pt;")
    return label


def _log_ticks(values) -> list | None:
    """Labelled ticks for a log axis: its decades, at most four of them (on a short plot pyqtgraph labels the
    minor ticks too, one on top of another), or three ticks across a range within one decade; None when there is
    nothing to mark (pyqtgraph's own)."""
    if len(values) == 0:
        return None
    lo, hi = math.log10(min(values)), math.log10(max(values))
    decades = list(range(math.ceil(lo), math.floor(hi) + 1))
    if len(decades) >= 2:
        step = math.ceil(len(decades) / 4)
        return [[(d, f"{10.0 ** d:g}") for d in decades[::step]], []]
    if hi == lo:
        lo, hi = lo - 0.1, hi + 0.1
    return [[(p, f"{10 ** p:.2g}") for p in (lo, (lo + hi) / 2, hi)], []]


def stats_text(stats: dict | None) -> str:
    if not stats:
        return "—"
    return (f"norm {_fmt(stats['norm'])}, min {_fmt(stats['min'])}, max {_fmt(stats['max'])}, "
            f"zeros {100 * stats['zeros']:.1f}% of {stats['size']:,}")


class _NodeItem(QGraphicsRectItem):
    def __init__(self, node: dict, panel: GraphView):
        super().__init__(0, 0, NODE_W, NODE_H)
        self.node, self.panel = node, panel
        self.setBrush(QBrush(QColor(KIND_COLORS.get(node["kind"], "#eeeeee"))))
        self.setPen(QPen(QColor("#607d8b"), 1))
        self.setAcceptedMouseButtons(Qt.LeftButton)
        self.setCursor(Qt.PointingHandCursor)
        title = node["name"] if node["kind"] == "leaf" and node["name"] else node["op"]
        shape = "×".join(str(n) for n in node["shape"]) or "scalar"
        sub = ("AccumulateGrad · " if node["kind"] == "leaf" else "") + shape
        bold = QFont()
        bold.setBold(True)
        t = QGraphicsSimpleTextItem(title, self)
        t.setFont(bold)
        t.setPos((NODE_W - t.boundingRect().width()) / 2, 3)
        s = QGraphicsSimpleTextItem(sub, self)
        s.setPos((NODE_W - s.boundingRect().width()) / 2, 21)
        tip = f"{node['op']} ({node['kind']}), {shape}, {node['dtype']} on {node['device']}"
        self.setToolTip(tip)

    def mousePressEvent(self, event):  # noqa: N802 - Qt's name
        self.panel.select(self.node["id"])
        event.accept()


class GraphView(QWidget):
    """The graph of one step, laid out by depth, with details of the node clicked."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.scene = QGraphicsScene(self)
        self.view = QGraphicsView(self.scene)
        self.view.setRenderHint(QPainter.Antialiasing)
        self.view.setMinimumHeight(150)
        self.caption = QLabel("No graph yet: press “Look inside”, or pause a run.")
        self.caption.setWordWrap(True)
        self.details = _note("")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.caption)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.details)
        self.data: dict | None = None
        self.items: dict = {}
        self.selected: int | None = None

    def show_graph(self, data: dict) -> None:
        """``data``: app.inspect_step.StepGraph.to_dict()."""
        self.data = data
        self.scene.clear()
        self.items = {}
        nodes = data["graph"]["nodes"]
        manual = {int(k): v for k, v in data.get("manual", {}).items()}
        rows: dict = {}
        for n in nodes:
            rows.setdefault(n["depth"], []).append(n)
        width = max(len(r) for r in rows.values()) * (NODE_W + GAP)
        pos = {}
        for depth, row in rows.items():
            x0 = (width - len(row) * (NODE_W + GAP)) / 2
            for i, n in enumerate(row):
                pos[n["id"]] = (x0 + i * (NODE_W + GAP), depth * ROW_H)
        pen = QPen(QColor("#90a4ae"), 1.2)
        for a, b in data["graph"]["edges"]:  # the output of a feeds b: a line from a's top to b's bottom
            (xa, ya), (xb, yb) = pos[a], pos[b]
            self.scene.addLine(xa + NODE_W / 2, ya, xb + NODE_W / 2, yb + NODE_H, pen)
        for n in nodes:
            item = _NodeItem(n, self)
            item.setPos(*pos[n["id"]])
            self.scene.addItem(item)
            self.items[n["id"]] = item
        mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        mono.setPointSizeF(8)
        text_y = -1e9  # the hand-written lines stack down the right-hand column, each level with its node or below
        for node_id in sorted(manual, key=lambda i: (pos[i][1], pos[i][0])):
            x, y = pos[node_id]
            label = QGraphicsSimpleTextItem(manual[node_id])
            label.setFont(mono)
            label.setBrush(QBrush(QColor("#6a1b9a")))
            top = max(y + 2, text_y)
            label.setPos(width + 10, top)
            self.scene.addItem(label)
            text_y = top + label.boundingRect().height() + 4
            self.scene.addLine(x + NODE_W, y + NODE_H / 2, width + 6, top + 7, QPen(QColor("#ce93d8"), 1, Qt.DashLine))
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-8, -8, 8, 8))
        count = sum(1 for n in nodes if n["kind"] != "leaf")
        self.caption.setText(f"<b>{data['recipe']}</b>: {count} recorded nodes, "
                             f"{len(nodes) - count} leaves; {data['source']}. Click a node for its figures.")
        self.select(self.selected if self.selected in self.items else nodes[0]["id"])
        self._fit()

    def _fit(self) -> None:
        """The whole graph in view, shrunk when the panel is small (never enlarged past its natural size); a big
        graph keeps a readable size and scrolls, its loss at the top."""
        rect = self.scene.sceneRect()
        if rect.isEmpty() or not self.view.isVisible():
            return
        port = self.view.maximumViewportSize()
        whole = min(port.width() / rect.width(), port.height() / rect.height())
        # a recipe's graph (about ten nodes) is shown whole, shrunk as the panel needs; a script's bigger one (a
        # CNN's thirty nodes, a GPT's two hundred) at a readable size at least, scrolled, its loss at the top centre
        big = len(self.items) > WHOLE_UP_TO
        scale = min(1.0, max(whole, MIN_READABLE_SCALE) if big else whole)
        self.view.resetTransform()
        self.view.scale(scale, scale)
        self.view.centerOn(rect.center().x(), rect.top() + port.height() / scale / 2)

    def showEvent(self, event):  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit()

    def resizeEvent(self, event):  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def select(self, node_id: int) -> None:
        if self.data is None or node_id not in self.items:
            return
        if self.selected in self.items:
            self.items[self.selected].setPen(QPen(QColor("#607d8b"), 1))
        self.selected = node_id
        self.items[node_id].setPen(QPen(QColor("#d81b60"), 2.5))
        n = self.data["graph"]["nodes"][node_id]
        manual = self.data.get("manual", {}).get(str(node_id))
        what = f"{n['name']} (a leaf: the gradient accumulates into its .grad)" if n["kind"] == "leaf" else \
            f"{n['op']}" + (" (your autograd.Function)" if n["kind"] == "function" else "")
        # the name a printed tensor shows for this node (print(loss) ends "grad_fn=<SumBackward0>")
        printed = f" · grad_fn=&lt;{html.escape(n['grad_fn'])}&gt;" if n.get("grad_fn") else ""
        lines = [f"<b>{html.escape(what)}</b>{printed} · {'×'.join(map(str, n['shape'])) or 'scalar'} {n['dtype']} "
                 f"on {n['device']}",
                 f"output: {stats_text(n.get('output'))}",
                 f"gradient of the loss with respect to it: {stats_text(n.get('grad'))}"]
        if manual:
            lines.append("written by hand: <code>" + manual.replace("\n", "; ") + "</code>")
        self.details.setText("<br>".join(lines))


class TimeView(QWidget):
    """The per-op profile as horizontal bars, the costliest at the top."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumHeight(150)
        self.plot.setLabel("bottom", "ms per step")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.summary = _note("No profile yet: press “Look inside”, or pause a run.")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.summary)
        self.data: dict | None = None
        self._rows: list = []

    def show_profile(self, data: dict) -> None:
        """``data``: app.inspect_step.StepProfile.to_dict()."""
        self.data = data
        self.plot.clear()
        rows = list(data["rows"])[:14]
        n = len(rows)
        gpu = any(r["gpu_ms"] is not None for r in rows)
        for i, r in enumerate(rows):
            y = n - 1 - i
            color = CATEGORY_COLORS.get(r["category"], "#999999")
            height = 0.4 if gpu else 0.7
            self.plot.addItem(pg.BarGraphItem(x0=[0], y=[y + (0.2 if gpu else 0)], width=[r["cpu_ms"]],
                                              height=height, brush=color, pen=None))
            if gpu and r["gpu_ms"] is not None:
                self.plot.addItem(pg.BarGraphItem(x0=[0], y=[y - 0.2], width=[r["gpu_ms"]], height=0.4,
                                                  brush="#000000", pen=None))
        self._rows = rows
        self._set_labels()
        self.plot.setYRange(-0.6, n - 0.4, padding=0)
        top = max((max(r["cpu_ms"], r["gpu_ms"] or 0) for r in rows), default=1.0)
        self.plot.setXRange(0, top * 1.05, padding=0)
        cats = sorted(data["categories_ms"].items(), key=lambda kv: -kv[1])
        step = data["profiled_step_ms"]
        parts = [f"<span style='color:{CATEGORY_COLORS.get(k, '#999')}'>■</span> {k} {v:.3f} ms "
                 f"({100 * v / step:.0f}%)" for k, v in cats if v > 0]
        text = (f"<b>{data['recipe']} on {data['device']}</b>, {data['steps']} step{'s' if data['steps'] != 1 else ''} "
                f"profiled: "
                f"{step:.3f} ms per step; unprofiled {data['plain_step_ms']:.3f} ms "
                f"(the rows without the profiler's own: {100 * (data['agreement'] - 1):+.1f}%). "
                "⟵ marks the backward pass." + ("<br>Bars: CPU time (colour), GPU time (black)." if gpu else "")
                + "<br>" + " · ".join(parts))
        if data.get("gpu_busy") is not None:
            text += (f"<br>The GPU is busy {100 * data['gpu_busy']:.0f}% of the step"
                     + ("; the rest of the time it waits for Python to launch the next kernel: at this size the "
                        "CPU is faster." if data["gpu_busy"] < 0.5 else "."))
        self.summary.setText(text)


    def _set_labels(self) -> None:
        """The ops' names beside their bars, shortened in a narrow panel so the bars keep room
        ("⟵ LegendrePolynomial3 backward" would take all of it)."""
        rows = self._rows
        width = self.plot.width()
        limit = None if width >= 420 else max(8, width // 16)
        labels = []
        for i, r in enumerate(rows):
            text = ("⟵ " if r["phase"] == "backward" else "") + r["op"]
            if limit and len(text) > limit:
                text = text[:limit - 1] + "…"
            labels.append((len(rows) - 1 - i, text))
        self.plot.getAxis("left").setTicks([labels])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._rows:
            self._set_labels()


class WeightsView(QWidget):
    """Sampled weight and gradient norms, update ratios, and histograms over the steps."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.norms = pg.PlotWidget(background="w")
        self.norms.setLogMode(y=True)
        self.norms.setLabel("left", "norm")  # (which curve is which: the caption's colour key, not a legend that
        # would cover the curves of a narrow panel)
        self.ratio = pg.PlotWidget(background="w")
        self.ratio.setLogMode(y=True)
        self.ratio.setLabel("left", "|Δw| / |w|")
        self.ratio.setLabel("bottom", "step")
        self.ratio.setXLink(self.norms)
        self.hist = pg.PlotWidget(background="w")
        self.hist.setLabel("left", "step")
        self.hist.hideButtons()
        for p in (self.norms, self.ratio):  # a log axis over a short range labels its minor ticks on top of each other
            p.getAxis("left").setStyle(hideOverlappingLabels=True)
        for p in (self.norms, self.ratio, self.hist):
            p.setMinimumHeight(70)  # three plots, the combos and the caption in a 1024x700 window
            p.getAxis("bottom").enableAutoSIPrefix(False)
            p.getAxis("left").enableAutoSIPrefix(False)
        self.param = QComboBox()
        self.kind = QComboBox()
        self.kind.addItems(["weight histograms", "gradient histograms"])
        self.param.setToolTip("The parameter whose histograms are drawn")
        for combo in (self.param, self.kind):  # narrow panels: the combos give way
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(5)
        self.caption = _note(WEIGHTS_NOTE)
        self.caption.setTextFormat(Qt.RichText)  # the colour key
        pick = QHBoxLayout()
        pick.addWidget(self.kind, 1)
        pick.addWidget(self.param, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.caption)
        lay.addWidget(self.norms, 2)
        lay.addWidget(self.ratio, 1)
        lay.addLayout(pick)
        lay.addWidget(self.hist, 2)
        self.samples: list = []
        self.names: list = []
        self._stale = self._hist_stale = False
        self._hist_drawn = 0.0
        self._curves: dict = {}  # (parameter, figure) -> its curve
        self._hist_steps: list = []  # the steps of the histograms drawn, bottom row first
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw)
        self.param.currentIndexChanged.connect(self._draw_hist)
        self.kind.currentIndexChanged.connect(self._draw_hist)

    def reset(self, names: list | None = None, note: str = WEIGHTS_NOTE) -> None:
        self.caption.setText(note)
        self.samples = []
        self.names = list(names or [])
        self.param.blockSignals(True)
        self.param.clear()
        self.param.addItems(self.names)
        self.param.blockSignals(False)
        self.norms.clear()
        self.ratio.clear()
        self._curves = {}
        for i, name in enumerate(self.names):
            color = PARAM_COLORS[i % len(PARAM_COLORS)]
            dots = dict(symbol="o", symbolSize=4, symbolBrush=color, symbolPen=None)
            for key, style in (("weight_norm", Qt.SolidLine), ("grad_norm", Qt.DashLine)):
                self._curves[(name, key)] = self.norms.plot(pen=pg.mkPen(color, width=1.5, style=style), **dots)
            self._curves[(name, "update_ratio")] = self.ratio.plot(pen=pg.mkPen(color, width=1.5), **dots)
        self._stale = self._hist_stale = True
        self._redraw()
        self._hist_drawn = 0.0  # an empty view does not count against the pace

    def add_samples(self, samples: list) -> None:
        """New samples from the run. They are drawn at most every REDRAW_MS and only while the tab is in view:
        a run sends a batch 20 times a second, and redrawing every curve on each would take the GUI thread (and
        with it the run: measured at 9% of the headless speed before this was paced)."""
        if not samples:
            return
        if not self.names:  # the first samples name the parameters (the caption stays until they are drawn)
            self.reset([k for k, v in samples[0].items() if isinstance(v, dict)], self.caption.text())
        self.samples.extend(samples)
        self._stale = True
        self._hist_stale |= any(s.get("full") for s in samples)
        if self.isVisible() and not self._timer.isActive():
            self._timer.start(REDRAW_MS)

    def showEvent(self, event):  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._hist_stale:  # brought into view: drawn now, whatever the pace while a run goes on
            self._draw_hist()
        if self._stale:
            self._redraw()

    def hideEvent(self, event):  # noqa: N802 - Qt's name
        self._timer.stop()
        super().hideEvent(event)

    def _series(self, name: str, key: str):
        xs, ys = [], []
        for s in self.samples:
            v = s.get(name, {}).get(key)
            if v is not None and v > 0 and math.isfinite(v):
                xs.append(s["step"])
                ys.append(v)
        return np.array(xs, dtype=float), np.array(ys, dtype=float)

    def _redraw(self) -> None:
        if self._hist_stale:
            wait = HIST_MS / 1e3 - (time.monotonic() - self._hist_drawn)
            if wait <= 0 or not self.isVisible():
                self._draw_hist()
            elif not self._timer.isActive():  # the filled histograms are the costly part: less often
                self._timer.start(int(wait * 1e3) + 1)
        if not self._stale:
            return
        self._stale = False
        spans: dict = {self.norms: [], self.ratio: []}
        for (name, key), item in self._curves.items():  # the items stay: only their data changes
            x, y = self._series(name, key)
            item.setData(x, y)
            item.setSymbol("o" if len(x) <= SYMBOLS_UP_TO else None)
            spans[self.ratio if key == "update_ratio" else self.norms].extend(y)
        for plot, ys in spans.items():
            plot.getAxis("left").setTicks(_log_ticks(ys))
        n = len(self.samples)
        if n:
            last = self.samples[-1]["step"]
            full = sum(1 for s in self.samples if s.get("full"))
            self.caption.setText(f"{n} samples up to step {last:,}, {full} with gradients and histograms (sampled "
                                 "within a few percent of the run's time). " + self.key() + ". Solid: weight norm; "
                                 "dashed: gradient norm; below: the update's size against the weight's.")

    def key(self) -> str:
        """Which colour is which parameter, as rich text (a line under each name, in its colour)."""
        return colour_key((PARAM_COLORS[i % len(PARAM_COLORS)], name) for i, name in enumerate(self.names))

    def _draw_hist(self) -> None:
        self._hist_stale = False
        self._hist_drawn = time.monotonic()
        self.hist.clear()
        name = self.param.currentText()
        kind = "weights" if self.kind.currentIndex() == 0 else "grads"
        shown = [s for s in self.samples if s.get(name, {}).get(kind) and s[name][kind]["lo"] is not None]
        if not shown:
            self._hist_steps = []
            self.hist.getAxis("left").setTicks(None)
            return
        shown = shown[-12:]  # the last ones, one row each, the newest at the top
        spacing = 1.0
        for row, s in enumerate(shown):
            h = s[name][kind]
            counts = np.asarray(h["counts"], dtype=float)
            edges = np.linspace(h["lo"], h["hi"], len(counts) + 1)
            centers = (edges[:-1] + edges[1:]) / 2
            top = counts.max() or 1.0
            y = row * spacing + 0.9 * counts / top
            shade = int(200 - 160 * (row + 1) / len(shown))
            color = QColor(shade, shade, 255)
            base = row * spacing
            fill = pg.PlotDataItem(centers, y, pen=pg.mkPen(color.darker(130), width=1), fillLevel=base,
                                   brush=QBrush(color))
            self.hist.addItem(fill)
        self._hist_steps = [s["step"] for s in shown]
        self._hist_ticks()
        self.hist.setLabel("bottom", f"{name} {'weight' if kind == 'weights' else 'gradient'} value")

    def _hist_ticks(self) -> None:
        """The rows' steps beside them, as many as the plot's height has room for (the newest, at the top, always):
        in a short plot twelve labels fell on top of each other."""
        steps = self._hist_steps
        if not steps:
            return
        room = max(2, int(self.hist.getViewBox().height() // (QFontMetrics(self.hist.font()).height() + 2)))
        every = -(-len(steps) // room)  # ceil
        top = len(steps) - 1
        self.hist.getAxis("left").setTicks([[(row, f"{steps[row]:,}") for row in range(len(steps))
                                             if (top - row) % every == 0]])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._hist_ticks()


class StepPanel(QWidget):
    look_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.look_button = QPushButton("Look inside")
        self.look_button.setToolTip("Describe the graph of one step and profile it, at the current weights (a "
                                    "running run pauses first; the run's weights do not move)")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.look_button)
        top.addWidget(self.status, 1)
        self.tabs = QTabWidget()
        self.graph = GraphView()
        self.time = TimeView()
        self.weights = WeightsView()
        self.tabs.addTab(self.graph, "Graph")
        self.tabs.addTab(self.time, "Time")
        self.tabs.addTab(self.weights, "Weights")
        self.tabs.currentChanged.connect(self._size_to_current)
        self._size_to_current(0)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.tabs, 1)
        self.look_button.clicked.connect(self.look_requested)

    def _size_to_current(self, index: int) -> None:
        """Only the tab in view counts for the panel's size: a hidden tab's long, narrow-wrapped text must not make
        the shown one tall (Qt sizes a QTabWidget by its largest page otherwise)."""
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            policy = QSizePolicy.Preferred if i == index else QSizePolicy.Ignored
            page.setSizePolicy(policy, policy)
        self.tabs.currentWidget().adjustSize()
        self.adjustSize()

    # intents of the window
    def show_busy(self, where: str) -> None:
        self.status.setText(f"Looking inside a step at {where}…")
        self.look_button.setEnabled(False)

    def show_inside(self, payload: dict) -> None:
        """``payload``: {"graph": StepGraph dict or None, "profile": StepProfile dict or None, "where": text,
        "problems": [text]}."""
        self.look_button.setEnabled(True)
        if payload.get("graph"):
            self.graph.show_graph(payload["graph"])
        if payload.get("profile"):
            self.time.show_profile(payload["profile"])
        problems = payload.get("problems") or []
        self.status.setText(f"At {payload.get('where', 'the current weights')}."
                            + ("".join(f" {p}" for p in problems)))

    def show_failed(self, text: str) -> None:
        self.look_button.setEnabled(True)
        self.status.setText(f"Could not look inside: {text}")

    def reset_weights(self, names=None, note: str = WEIGHTS_NOTE) -> None:
        self.weights.reset(names, note)

    def add_samples(self, samples: list) -> None:
        self.weights.add_samples(samples)
