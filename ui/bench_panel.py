"""The latest benchmark results: step time against problem size, CPU and GPU, log-log, so a user sees where
the GPU starts to win. Reads what ``make bench`` wrote; says so when there is nothing yet."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.bench_results import load_latest, newest_per_device

from .swatches import colour_key

STYLE = {"engine": Qt.SolidLine, "graph": Qt.DashDotLine, "raw": Qt.DashLine, "torch": Qt.DotLine}
COLORS = {("cpu", "tensor"): "#1f77b4", ("cpu", "autograd"): "#2ca02c", ("cuda", "tensor"): "#d62728",
          ("cuda", "autograd"): "#ff7f0e"}


class BenchPanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.reload_button = QPushButton("Reload results")
        self.reload_button.setToolTip("Read benchmarks/results/ again (make bench writes it)")
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "work per step (FLOP)")
        self.plot.setLabel("left", "step time (ms)")
        for axis in ("bottom", "left"):  # log axes: plain powers of ten, not "(x1e+09)" on the label
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.plot_widget.setMinimumHeight(220)
        # which curve is which: a key in the summary, by colour and line style (a legend of one entry per curve,
        # twelve with GPU results, covered most of the plot in a narrow panel)
        self.summary.setTextFormat(Qt.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.reload_button)
        self.reload_button.clicked.connect(self.reload)
        self.curves = []
        self.reload()

    def reload(self) -> int:
        self.plot.clear()
        self.curves = []
        shown = newest_per_device(load_latest())
        if not shown:
            self.summary.setText("No benchmark results yet: run `make bench` (it writes benchmarks/results/).")
            return 0
        for part in shown:
            for c in part.curves:
                color = COLORS.get((c.device if c.device == "cpu" else "cuda", c.recipe), "#7f7f7f")
                pen = pg.mkPen(color, width=2 if c.impl == "engine" else 1, style=STYLE[c.impl])
                item = self.plot.plot(c.flops, c.ms, pen=pen, symbol="o" if c.impl == "engine" else None,
                                      symbolSize=5, symbolBrush=color)
                item.setToolTip(f"{c.label}: {part.results.source}")
                self.curves.append(item)
        sources = "; ".join(part.describe() for part in shown)
        self.summary.setText(html.escape(sources + ".") + " " + key([c for part in shown for c in part.curves]))
        return len(self.curves)


def key(curves) -> str:
    """What the colours and line styles of these curves mean, as rich text."""
    shown = {(c.device if c.device == "cpu" else "cuda", c.recipe) for c in curves}
    impls = {c.impl for c in curves}
    colours = colour_key((color, f"{recipe} ({'CPU' if device == 'cpu' else 'GPU'})")
                         for (device, recipe), color in COLORS.items() if (device, recipe) in shown)
    styles = "; ".join(text for impl, text in (("engine", "solid: the engine"), ("raw", "dashed: raw NumPy/CuPy"),
                                               ("torch", "dotted: PyTorch eager"),
                                               ("graph", "dash-dot: the engine's step replayed as a CUDA graph"))
                       if impl in impls)
    return f"{colours}. {styles[0].upper() + styles[1:]}." if colours and styles else ""
