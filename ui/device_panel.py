"""The device panel: every CUDA device with what can be read of it, or, without a usable GPU, the reason
and the CPU. Fields that cannot be read show "n/a". Refreshed on a timer while a run is going."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from app import devices
from app.config import format_bytes

NA = "n/a"


def _bytes(v) -> str:
    return NA if v is None else format_bytes(v)


def _num(v, fmt: str) -> str:
    return NA if v is None else format(v, fmt)


class DevicePanel(QWidget):
    cache_emptied = Signal(int)

    def __init__(self, parent=None, refresh_ms: int = 2000):
        super().__init__(parent)
        self.fields: dict[str, QLabel] = {}
        self._content = QWidget()
        self._layout = QVBoxLayout(self._content)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

        self.empty_cache_button = QPushButton("Empty cache")
        self.empty_cache_button.setToolTip("Give the engine's cached GPU memory back to the driver")
        self.empty_cache_button.clicked.connect(self._on_empty_cache)
        self.cache_result = QLabel()
        self.timer = QTimer(self)
        self.timer.setInterval(refresh_ms)
        self.timer.timeout.connect(self.refresh)
        self._built_for = None
        self.refresh()

    def _label(self, key: str) -> QLabel:
        label = self.fields.get(key)
        if label is None:
            label = self.fields[key] = QLabel(NA)
            label.setWordWrap(True)
        return label

    def _build(self, snap: devices.DeviceSnapshot) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item.widget() is not None:
                item.widget().setParent(None)
        self.fields.clear()
        if snap.cuda_available:
            for info in snap.cuda:
                box = QGroupBox(f"cuda:{info.index}")
                form = QFormLayout(box)
                for key, title in (("name", "Name"), ("capability", "Compute capability"),
                                   ("sms", "Multiprocessors"), ("total", "Total memory"), ("free", "Free memory"),
                                   ("engine", "Held by the engine"), ("versions", "Driver / runtime"),
                                   ("util", "Utilization"), ("temp", "Temperature"), ("power", "Power")):
                    form.addRow(title, self._label(f"{info.index}.{key}"))
                self._layout.addWidget(box)
            self._layout.addWidget(self.empty_cache_button)
            self._layout.addWidget(self.cache_result)
        else:
            box = QGroupBox("No usable GPU")
            form = QFormLayout(box)
            form.addRow("Why", self._label("reason"))
            self._layout.addWidget(box)
        cpu_box = QGroupBox("CPU")
        form = QFormLayout(cpu_box)
        for key, title in (("cpu.name", "Name"), ("cpu.cores", "Cores"), ("cpu.blas", "BLAS (NumPy)"),
                           ("cpu.numpy", "NumPy")):
            form.addRow(title, self._label(key))
        self._layout.addWidget(cpu_box)
        self._layout.addStretch(1)
        self._built_for = (snap.cuda_available, len(snap.cuda))

    def refresh(self) -> devices.DeviceSnapshot:
        snap = devices.snapshot()
        if self._built_for != (snap.cuda_available, len(snap.cuda)):
            self._build(snap)
        if not snap.cuda_available:
            self.fields["reason"].setText(snap.reason)
        for info in snap.cuda:
            i = info.index
            self.fields[f"{i}.name"].setText(info.name)
            self.fields[f"{i}.capability"].setText(info.capability or NA)
            self.fields[f"{i}.sms"].setText(_num(info.multiprocessors, "d"))
            self.fields[f"{i}.total"].setText(_bytes(info.total_bytes))
            self.fields[f"{i}.free"].setText(_bytes(info.free_bytes))
            self.fields[f"{i}.engine"].setText(f"{_bytes(info.allocated_bytes)} allocated / "
                                               f"{_bytes(info.reserved_bytes)} reserved")
            self.fields[f"{i}.versions"].setText(f"{info.driver or NA} / {info.runtime or NA}")
            self.fields[f"{i}.util"].setText(NA if info.utilization_pct is None else f"{info.utilization_pct:.0f} %")
            self.fields[f"{i}.temp"].setText(NA if info.temperature_c is None else f"{info.temperature_c:.0f} °C")
            power = NA if info.power_w is None else f"{info.power_w:.0f} W"
            if info.power_w is not None and info.power_limit_w is not None:
                power += f" of {info.power_limit_w:.0f} W"
            self.fields[f"{i}.power"].setText(power)
            if info.nvml_note:
                for key in ("util", "temp", "power"):
                    self.fields[f"{i}.{key}"].setToolTip(info.nvml_note)
        cpu = snap.cpu
        self.fields["cpu.name"].setText(cpu.name)
        self.fields["cpu.cores"].setText(_num(cpu.cores, "d"))
        self.fields["cpu.blas"].setText(cpu.blas)
        self.fields["cpu.numpy"].setText(f"{cpu.numpy} (Python {cpu.python})")
        return snap

    def set_running(self, running: bool) -> None:
        if running and self._built_for and self._built_for[0]:  # only a GPU has figures that move during a run
            self.timer.start()
        else:
            self.timer.stop()
            self.refresh()

    def stop(self) -> None:
        """No more refreshes (the window is closing)."""
        self.timer.stop()

    def _on_empty_cache(self) -> None:
        freed = devices.empty_cache()
        self.cache_result.setText(f"Gave back {format_bytes(freed)}")
        self.cache_emptied.emit(freed)
        self.refresh()
