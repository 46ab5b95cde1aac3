"""The latest benchmark results: step time against problem size, CPU and GPU, log-log, so a user sees where
the GPU starts to win. Reads what ``make bench`` wrote; says so when there is nothing yet."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.bench_results import load_latest

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
        # bottom right: more work never takes less time, so the curves leave that corner empty
        self.legend = self.plot.addLegend(offset=(-5, -5), labelTextSize="7pt", brush=pg.mkBrush(255, 255, 255, 200))
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.reload_button)
        self.reload_button.clicked.connect(self.reload)
        self.curves = []
        self.reload()

    def reload(self) -> int:
        self.plot.clear()
        self.legend.clear()
        self.curves = []
        results = load_latest()
        if not results:
            self.summary.setText("No benchmark results yet: run `make bench` (it writes benchmarks/results/).")
            return 0
        for res in results:
            for c in res.curves:
                color = COLORS.get((c.device if c.device == "cpu" else "cuda", c.recipe), "#7f7f7f")
                pen = pg.mkPen(color, width=2 if c.impl == "engine" else 1, style=STYLE[c.impl])
                item = self.plot.plot(c.flops, c.ms, pen=pen, symbol="o" if c.impl == "engine" else None,
                                      symbolSize=5, symbolBrush=color, name=c.label)
                self.curves.append(item)
        newest = results[0]
        machine = newest.machine
        gpu = f", GPU {machine['gpu']}" if machine.get("gpu") else ", no GPU"
        self.summary.setText(f"Latest: {newest.source} ({newest.when}), CPU {machine.get('cpu', '?')}{gpu}. "
                             "Solid: the engine; dashed: raw NumPy/CuPy; dotted: PyTorch eager.")
        return len(self.curves)
