"""The console pane: what a learner's own script prints (its stdout, and its stderr in red: a traceback shows
here, not on the terminal)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

MAX_LINES = 20_000  # older lines go: a script printing every step for hours must not fill the memory


class Console(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(MAX_LINES)
        # the system's fixed-pitch font: a tensor's printed columns line up (a family named "monospace" is an alias
        # on Linux only; elsewhere Qt would fall back to a proportional font)
        mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        mono.setPointSizeF(9)
        self.text.setFont(mono)
        self.text.setPlaceholderText("What your script prints shows here (File -> Open script…, or File -> "
                                     "Examples)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)

    def begin(self, title: str) -> None:
        """A heading for the next script's output."""
        if self.text.document().characterCount() > 1:
            self._append("\n")
        self._append(f"── {title} ──\n", bold=True)

    def write(self, text: str, error: bool = False) -> None:
        self._append(text, color="#c62828" if error else None)

    def _append(self, text: str, color: str | None = None, bold: bool = False) -> None:
        bar = self.text.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        fmt = QTextCharFormat()
        if color:
            fmt.setForeground(QColor(color))
        if bold:
            fmt.setFontWeight(QFont.Bold)
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.End)
        cursor.insertText(text, fmt)
        if at_end:  # follow the output unless the learner scrolled up to read
            bar.setValue(bar.maximum())

    def plain_text(self) -> str:
        return self.text.toPlainText()
