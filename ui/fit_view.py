"""The fit view of today's tutorial: sin(x) and the current polynomial over [-pi, pi], redrawn as the run's
coefficients arrive, with the fit written out as the tutorial prints it."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.recipes import poly_curve, poly_formula

X = np.linspace(-math.pi, math.pi, 400)


class FitView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.recipe: str | None = None
        self.coefficients: list | None = None
        self.widget = pg.PlotWidget(background="w")
        self.plot = self.widget.getPlotItem()
        self.plot.setTitle("sin(x) and the fit")
        self.plot.setLabel("bottom", "x")
        self.plot.setLabel("left", "y")
        for axis in ("left", "bottom"):  # never a "(x1e+03)" multiplier on the axis label
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.addLegend(offset=(8, 8))
        self.target = self.plot.plot(X, np.sin(X), pen=pg.mkPen("#888", width=2, style=pg.QtCore.Qt.DashLine),
                                     name="sin(x)")
        self.curve = self.plot.plot([], [], pen=pg.mkPen("#1f77b4", width=2), name="fit")
        self.plot.setXRange(-math.pi, math.pi, padding=0.02)
        self.plot.setYRange(-1.6, 1.6, padding=0)
        self.formula = QLabel("Start a run of a “Fit sin(x)” recipe to see the polynomial learn.")
        self.formula.setWordWrap(True)
        self.formula.setStyleSheet("font-family: monospace;")
        # under the loss plot in a narrow window (MainWindow._orient_center); beside it only from 1400 pixels, so a
        # small minimum width never holds a narrowing window wider than a 1024 screen before it turns
        self.setMinimumSize(80, 160)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.formula)

    def show_fit(self, recipe: str, coefficients, step: int | None = None, color: str | None = None) -> None:
        """Draw ``recipe``'s fit for these coefficients (floats)."""
        self.recipe, self.coefficients = recipe, list(coefficients)
        y = poly_curve(recipe, self.coefficients, X)
        finite = np.isfinite(y).all()
        self.curve.setData(X, np.where(np.isfinite(y), y, np.nan), connect="finite")
        if color:
            self.curve.setPen(pg.mkPen(color, width=2))
        where = f"step {step}: " if step is not None else ""
        self.formula.setText(where + poly_formula(recipe, self.coefficients)
                             + ("" if finite else "  (not finite: the run diverged)"))
        # keep sin(x) in view, and the fit where it stays near it
        top = float(np.nanmax(np.abs(y))) if finite else 1.0
        self.plot.setYRange(-max(1.6, min(top, 10.0)), max(1.6, min(top, 10.0)), padding=0)

    def clear(self) -> None:
        self.recipe = self.coefficients = None
        self.curve.setData([], [])
        self.formula.setText("Start a run of a “Fit sin(x)” recipe to see the polynomial learn.")
