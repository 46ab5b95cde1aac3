"""Every run of this session (and every opened log): settings, status, final loss, speed, device.
The checkbox shows or hides its curve; the buttons export logs and the plot, or open a log to overlay."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ["Run", "Settings", "Status", "Final loss", "Steps/s", "Device"]
STATUS_COLORS = {"done": "#2e7d32", "running": "#1565c0", "paused": "#6a1b9a", "stopped": "#555555",
                 "diverged": "#c62828", "out of memory": "#c62828", "failed": "#c62828", "loaded": "#555555"}


class RunsList(QWidget):
    visibility_changed = Signal(object, bool)
    export_logs_requested = Signal()
    export_plot_requested = Signal()
    open_log_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: dict = {}  # key -> row
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        self.export_logs = QPushButton("Export logs…")
        self.export_logs.setToolTip("Write the selected runs' loss logs as CSV or JSON (Ctrl+E)")
        self.export_plot = QPushButton("Export plot…")
        self.export_plot.setToolTip("Save the plot as PNG or SVG")
        self.open_log = QPushButton("Open log…")
        self.open_log.setToolTip("Overlay an exported loss log on the plot")
        buttons = QHBoxLayout()
        buttons.addWidget(self.export_logs)
        buttons.addWidget(self.export_plot)
        buttons.addWidget(self.open_log)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.table.itemChanged.connect(self._on_item_changed)
        self.export_logs.clicked.connect(self.export_logs_requested)
        self.export_plot.clicked.connect(self.export_plot_requested)
        self.open_log.clicked.connect(self.open_log_requested)

    def add(self, key, name: str, settings: str, device: str, color: str, status: str = "running") -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.rows[key] = row
        first = QTableWidgetItem(name)
        first.setFlags(first.flags() | Qt.ItemIsUserCheckable)
        first.setCheckState(Qt.Checked)
        first.setData(Qt.UserRole, key)
        first.setForeground(QBrush(QColor(color)))
        first.setToolTip("Show or hide this run's curve")
        self.table.blockSignals(True)
        self.table.setItem(row, 0, first)
        for col, text in ((1, settings), (5, device)):
            self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.item(row, 1).setToolTip(settings)
        self.table.blockSignals(False)
        self.update(key, status)
        self.table.scrollToBottom()

    def update(self, key, status: str, final_loss: float | None = None, steps_per_s: float | None = None,
               message: str = "") -> None:
        row = self.rows[key]
        self.table.blockSignals(True)
        item = QTableWidgetItem(status)
        item.setForeground(QBrush(QColor(STATUS_COLORS.get(status, "#000"))))
        if message:
            item.setToolTip(message)
        self.table.setItem(row, 2, item)
        if final_loss is not None:
            self.table.setItem(row, 3, QTableWidgetItem(f"{final_loss:.4g}"))
        if steps_per_s is not None:
            text = f"{steps_per_s:,.0f}" if math.isfinite(steps_per_s) else "n/a"
            self.table.setItem(row, 4, QTableWidgetItem(text))
        self.table.blockSignals(False)

    def status(self, key) -> str:
        return self.table.item(self.rows[key], 2).text()

    def selected_keys(self) -> list:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return [self.table.item(r, 0).data(Qt.UserRole) for r in rows]

    def select(self, keys) -> None:
        self.table.clearSelection()
        for key in keys:
            self.table.selectRow(self.rows[key])

    def set_checked(self, key, checked: bool) -> None:
        self.table.item(self.rows[key], 0).setCheckState(Qt.Checked if checked else Qt.Unchecked)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 0:
            self.visibility_changed.emit(item.data(Qt.UserRole), item.checkState() == Qt.Checked)
