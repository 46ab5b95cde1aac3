"""Manual vs autograd vs numerical gradients: a table coloured by what rounding and finite differences can
explain, a legend that says what the rows and colours mean, and a heat map of the difference the user picks
(manual − autograd, or autograd − numerical) for the chosen parameter. "Check now" works before, during (pausing),
and after a run."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gradients import PAIRS, PARAMS, TOLERANCES, GradientReport

GRADE_COLORS = {"good": "#c8e6c9", "ok": "#fff9c4", "bad": "#ffcdd2"}
COLUMNS = ["", "Compared", "Max |a−b|", "Rel. error", "Cosine", "Worst element"]
# the pairs the heat map can show: (a, b) of |a - b|, and the words of the chooser
HEAT_PAIRS = {"manual − autograd": ("manual", "autograd"), "autograd − numerical": ("autograd", "numerical"),
              "manual − numerical": ("manual", "numerical")}
LEGEND = (
    "Each row compares one parameter's gradient found two ways: <b>manual</b> is the hand-written backward pass, "
    "<b>autograd</b> is the engine's <code>backward()</code>, <b>numerical</b> is a central finite difference of "
    "the loss in float64. "
    f"<span style='background:{GRADE_COLORS['good']}'>&nbsp;Green&nbsp;</span> equal up to rounding; "
    f"<span style='background:{GRADE_COLORS['ok']}'>&nbsp;yellow&nbsp;</span> apart by no more than rounding and "
    "finite differences explain; "
    f"<span style='background:{GRADE_COLORS['bad']}'>&nbsp;red&nbsp;</span> apart by more: a gradient is wrong. "
    "A number in brackets, as “(4,096)”, is how many elements finite differences probed (a random sample: two "
    "losses per element)."
)


class GradientPanel(QWidget):
    check_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.report: GradientReport | None = None
        self.check_button = QPushButton("Check now")
        self.check_button.setToolTip("Compare the gradients at the current weights (before a run: the initial "
                                     "ones; during a run it pauses first)")
        self.plant_bug = QCheckBox("Plant a bug")
        self.plant_bug.setToolTip("Plant a bug in the manual gradient: the classic hand-written slips, to watch the "
                                  "check catch them. The two-layer net forgets the ReLU mask; the fit of sin(x) "
                                  "forgets the 2 of 2(y_pred - y)")
        self.summary = QLabel("Press “Check now” to compare the gradients.")
        self.summary.setWordWrap(True)
        self.legend = QLabel(LEGEND)
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.RichText)
        self.legend.setStyleSheet("color: #444; font-size: 8pt;")
        top = QHBoxLayout()
        top.addWidget(self.check_button)
        top.addWidget(self.plant_bug, 1)

        self.table = QTableWidget(len(PARAMS) * len(PAIRS), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setMinimumHeight(100)  # scrolls when the window is small
        self.table.setToolTip("Numbers in brackets: elements probed by finite differences (a sample)")
        self.table.setMinimumWidth(120)  # it scrolls sideways; the panel keeps to its column
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)

        self.param = QComboBox()
        self.param.addItems(list(PARAMS))
        self.param.setToolTip("The parameter whose gradients the heat map shows, element by element")
        self.pair = QComboBox()
        self.pair.addItems(list(HEAT_PAIRS))
        self.pair.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.pair.setMinimumContentsLength(10)
        self.pair.setToolTip("Which difference the heat map shows. Against numerical, only the probed elements have "
                             "a value; the others, and those whose finite difference crosses a kink, stay blank")
        self.heat_title = QLabel("|manual − autograd|")
        self.heat_title.setWordWrap(True)
        heat_bar = QHBoxLayout()
        heat_bar.addWidget(QLabel("Map"))
        heat_bar.addWidget(self.pair, 1)
        heat_bar.addWidget(QLabel("of"))
        heat_bar.addWidget(self.param)
        self.heat_widget = pg.GraphicsLayoutWidget()
        self.heat_widget.setBackground("w")
        self.heat_widget.setMinimumHeight(90)
        self.heat_plot = self.heat_widget.addPlot()
        self.heat_plot.setAspectLocked(False)
        self.heat_plot.invertY(True)
        self.heat_plot.setLabel("left", "row")
        self.heat_plot.setLabel("bottom", "column")
        self.heat_image = pg.ImageItem(axisOrder="row-major")
        self.heat_plot.addItem(self.heat_image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False, width=16,
                                        label="|a − b|")
        self.colorbar.setImageItem(self.heat_image, insert_in=self.heat_plot)
        for axis in ("left", "bottom"):  # element indices: no "(x0.001)" scaling of the tick labels
            self.heat_plot.getAxis(axis).enableAutoSIPrefix(False)
        self.colorbar.axis.enableAutoSIPrefix(False)  # the values themselves on the bar, never "(x1e-09)"
        self._show_heat_axes(False)  # nothing to map before the first check

        heat = QWidget()
        heat_layout = QVBoxLayout(heat)
        heat_layout.setContentsMargins(0, 0, 0, 0)
        heat_layout.addLayout(heat_bar)
        heat_layout.addWidget(self.heat_title)
        heat_layout.addWidget(self.heat_widget, 1)
        splitter = QSplitter(Qt.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(heat)
        splitter.setSizes([175, 300])  # the table's six rows first; the heat map takes what is left
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.legend)
        layout.addWidget(splitter, 1)

        self.check_button.clicked.connect(self.check_requested)
        self.param.currentIndexChanged.connect(self._show_heat)
        self.pair.currentIndexChanged.connect(self._show_heat)

    def show_report(self, report: GradientReport) -> None:
        self.report = report
        if self.table.rowCount() != len(report.params) * len(report.pairs):
            self.table.setRowCount(len(report.params) * len(report.pairs))
        offered = [text for text, pair in HEAT_PAIRS.items() if pair in report.pairs]
        if [self.pair.itemText(i) for i in range(self.pair.count())] != offered:  # a script has no manual
            self.pair.blockSignals(True)
            chosen = self.pair.currentText()
            self.pair.clear()
            self.pair.addItems(offered)
            if chosen in offered:
                self.pair.setCurrentText(chosen)
            self.pair.blockSignals(False)
        if [self.param.itemText(i) for i in range(self.param.count())] != list(report.params):
            self.param.blockSignals(True)
            self.param.clear()
            self.param.addItems(list(report.params))
            self.param.blockSignals(False)
        row = 0
        for param in report.params:
            for a, b in report.pairs:
                s = report.stats[(param, (a, b))]
                grade = s.grade(report.dtype)
                good, ok = s.thresholds(report.dtype)
                cells = [param, f"{a} – {b}", f"{s.max_abs:.3e}", f"{s.rel_error:.3e}", f"{s.cosine:.6f}",
                         f"{list(s.worst_index)}: {s.worst_a:.4g} / {s.worst_b:.4g}"]
                if "numerical" in (a, b) and s.compared < np.prod(report.grads[(a, param)].shape):
                    cells[1] += f" ({s.compared:,})"
                if s.kinks:
                    cells[1] += f", {s.kinks:,} at a kink"
                for col, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    item.setBackground(QBrush(QColor(GRADE_COLORS[grade])))
                    tip = f"{grade}: relative error {s.rel_error:.3e}"
                    if s.bound_ratio is not None:
                        tip += (f"; the largest difference is {s.bound_ratio:.2g}x what rounding in {report.dtype} and "
                                "finite differences can explain (above 1: a gradient is wrong)")
                    else:
                        tip += f" (good ≤ {good:.3g}, acceptable ≤ {ok:.3g} for {report.dtype})"
                    if s.kinks:
                        tip += (f"; {s.kinks:,} elements left out: their finite difference crosses a ReLU's kink, "
                                "where it is no derivative (this is where finite differences fail)")
                    if s.floor > TOLERANCES[report.dtype][0]:
                        tip += (f"; the {report.dtype} gradient itself is only good to {s.floor:.2g} here "
                                "(its rounding at these weights, measured against float64)")
                    item.setToolTip(tip)
                    self.table.setItem(row, col, item)
                row += 1
        worst = report.worst_grade()
        both = len(report.pairs) == 1  # a script: autograd and numerical only
        verdict = {"good": "Autograd and numerical agree." if both else "All three agree.",
                   "ok": "They agree to within what rounding and finite differences explain.",
                   "bad": "They DISAGREE: a gradient is wrong (see the red rows)."}[worst]
        kinks = sum(int(k.sum()) for k in report.kinks.values())
        if kinks:
            verdict += (f" {kinks:,} finite differences cross a ReLU's kink and are left out (see the tooltips).")
        self.summary.setText(f"Gradients at {report.source} on {report.device} ({report.dtype}). {verdict}")
        self.summary.setStyleSheet("color: #c62828; font-weight: bold;" if worst == "bad" else "")
        self._show_heat()

    def bug_planted(self) -> bool:
        return self.plant_bug.isChecked()

    def row_grades(self) -> list[str]:
        """Each row's grade (for tests and screen readers)."""
        out = []
        for row in range(self.table.rowCount()):
            tip = self.table.item(row, 0).toolTip() if self.table.item(row, 0) else ""
            out.append(tip.split(":")[0] if tip else "")
        return out

    def _show_heat_axes(self, shown: bool) -> None:
        for axis in ("left", "bottom"):
            self.heat_plot.showAxis(axis, shown)
        self.colorbar.setVisible(shown)

    def heat_values(self) -> tuple[np.ndarray, str]:
        """The chosen difference of the chosen parameter as a 2-D array (NaN: not compared), and its title."""
        param = self.param.currentText()
        a, b = HEAT_PAIRS[self.pair.currentText()]
        diff = np.atleast_2d(self.report.difference(param, a, b))
        kinks = self.report.kinks.get(param)
        left_out = 0
        if "numerical" in (a, b) and kinks is not None and kinks.any():
            diff = np.where(np.atleast_2d(kinks), np.nan, diff)
            left_out = int(kinks.sum())
        compared = int(np.isfinite(diff).sum())
        top = float(np.nanmax(diff)) if compared else float("nan")
        title = f"|{a} − {b}| of {param} ({diff.shape[0]}×{diff.shape[1]})"
        if compared < diff.size:
            title += f", {compared:,} elements compared"
            if left_out:
                title += f" ({left_out:,} at a kink left blank)"
        title += (": every difference is 0" if top == 0 else f", max {top:.3e}" if compared else ": none compared")
        return diff, title

    def _show_heat(self) -> None:
        if self.report is None:
            return
        diff, title = self.heat_values()
        self.heat_title.setText(title)
        finite = np.isfinite(diff)
        top = float(diff[finite].max()) if finite.any() else 0.0
        self.heat_image.setImage(diff, autoLevels=False)  # NaN (not compared) is drawn blank
        self.colorbar.setLevels((0.0, top if top > 0 else 1.0))
        self._show_heat_axes(True)
        self.heat_plot.autoRange()
