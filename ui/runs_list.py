"""Every run of this session (and every opened log): settings, status, final loss, speed, device.
The checkbox shows or hides its curve; a double click on a name renames it; the context menu renames, recolours
and deletes runs (Delete too); the buttons export logs and the plot, or open a log to overlay."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
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

from app.config import format_rate

COLUMNS = ["Run", "Settings", "Status", "Final loss", "Steps/s", "Device"]
STATUS_COLORS = {"done": "#2e7d32", "running": "#1565c0", "paused": "#6a1b9a", "stopped": "#555555",
                 "diverged": "#c62828", "out of memory": "#c62828", "failed": "#c62828", "loaded": "#555555"}


class RunsList(QWidget):
    visibility_changed = Signal(object, bool)
    renamed = Signal(object, str)  # key, the new name (edited in place)
    recolour_requested = Signal(object)  # key
    delete_requested = Signal(list)  # keys
    export_logs_requested = Signal()
    export_plot_requested = Signal()
    open_log_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.DoubleClicked | QAbstractItemView.EditKeyPressed)
        self.table.setContextMenuPolicy(Qt.ActionsContextMenu)
        self.rename_action = self._action("Rename…", self._rename_current, "F2")
        self.recolour_action = self._action("Colour…", self._recolour_current)
        self.delete_action = self._action("Delete", self._delete_selected, QKeySequence.Delete)
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

    def _action(self, text: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self.table)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.WidgetShortcut)
        action.triggered.connect(slot)
        self.table.addAction(action)
        return action

    @property
    def rows(self) -> dict:
        """key -> row, as the table now stands (rows move up when one is deleted)."""
        return {self.table.item(r, 0).data(Qt.UserRole): r for r in range(self.table.rowCount())
                if self.table.item(r, 0) is not None}

    def keys(self) -> list:
        return list(self.rows)

    def add(self, key, name: str, settings: str, device: str, color: str, status: str = "running",
            row: int | None = None) -> None:
        """A run's row, at the end or at ``row`` (a run of the last session read back after one started now)."""
        row = self.table.rowCount() if row is None else max(0, min(row, self.table.rowCount()))
        self.table.insertRow(row)
        first = QTableWidgetItem(name)
        first.setFlags(first.flags() | Qt.ItemIsUserCheckable | Qt.ItemIsEditable)
        first.setCheckState(Qt.Checked)
        first.setData(Qt.UserRole, key)
        first.setData(Qt.UserRole + 1, True)  # shown: what the checkbox said last (a rename is not a toggle)
        first.setData(Qt.UserRole + 2, name)  # the name as last accepted
        first.setForeground(QBrush(QColor(color)))
        first.setToolTip("Show or hide this run's curve; double-click to rename it; right-click for its colour, "
                         "or to delete it")
        self.table.blockSignals(True)
        self.table.setItem(row, 0, first)
        for col, text in ((1, settings), (5, device)):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemIsEditable)
            self.table.setItem(row, col, item)
        self.table.item(row, 1).setToolTip(settings)
        self.table.blockSignals(False)
        self.update(key, status)
        self.table.scrollToBottom()

    def name(self, key) -> str:
        return self.table.item(self.rows[key], 0).text()

    def set_name(self, key, name: str) -> None:
        item = self.table.item(self.rows[key], 0)
        self.table.blockSignals(True)
        item.setText(name)
        item.setData(Qt.UserRole + 2, name)
        self.table.blockSignals(False)

    def color(self, key) -> str:
        return self.table.item(self.rows[key], 0).foreground().color().name()

    def set_color(self, key, color: str) -> None:
        self.table.blockSignals(True)
        self.table.item(self.rows[key], 0).setForeground(QBrush(QColor(color)))
        self.table.blockSignals(False)

    def is_checked(self, key) -> bool:
        return self.table.item(self.rows[key], 0).checkState() == Qt.Checked

    def remove(self, key) -> None:
        self.table.removeRow(self.rows[key])

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
            text = format_rate(steps_per_s)
            self.table.setItem(row, 4, QTableWidgetItem(text))
        self.table.blockSignals(False)

    def set_device(self, key, device: str) -> None:
        """The device a run turned out to use (a script chooses its own)."""
        self.table.blockSignals(True)
        item = QTableWidgetItem(device)
        item.setFlags(item.flags() & ~Qt.ItemIsEditable)
        self.table.setItem(self.rows[key], 5, item)
        self.table.blockSignals(False)

    def device(self, key) -> str:
        return self.table.item(self.rows[key], 5).text()

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

    def _current_key(self):
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        return item.data(Qt.UserRole) if item is not None else None

    def _rename_current(self) -> None:
        row = self.table.currentRow()
        if row >= 0:
            self.table.editItem(self.table.item(row, 0))

    def _recolour_current(self) -> None:
        key = self._current_key()
        if key is not None:
            self.recolour_requested.emit(key)

    def _delete_selected(self) -> None:
        keys = self.selected_keys() or ([self._current_key()] if self._current_key() is not None else [])
        if keys:
            self.delete_requested.emit(keys)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != 0:
            return
        key = item.data(Qt.UserRole)
        checked = item.checkState() == Qt.Checked
        if item.data(Qt.UserRole + 1) != checked:
            item.setData(Qt.UserRole + 1, checked)
            self.visibility_changed.emit(key, checked)
        if item.text() != item.data(Qt.UserRole + 2):
            name = item.text().strip()
            if not name:  # an empty name is refused: the old one comes back
                self.table.blockSignals(True)
                item.setText(item.data(Qt.UserRole + 2) or "")
                self.table.blockSignals(False)
                return
            self.set_name(key, name)  # stripped of spaces
            self.renamed.emit(key, name)
