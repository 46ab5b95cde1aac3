"""GUI test fixtures: offscreen Qt, a window with throw-away settings, and a guard that fails any test
leaving a run thread or a timer running (after napari's conftest)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, QStandardPaths, QTimer  # noqa: E402

from app.config import RunConfig  # noqa: E402
from app.worker import running_threads  # noqa: E402

SMALL = RunConfig(recipe="autograd", batch=16, d_in=40, hidden=20, d_out=4, iters=60, lr=1e-4)


@pytest.fixture(autouse=True)
def _no_threads_left(qapp):
    QStandardPaths.setTestModeEnabled(True)
    yield
    left = running_threads()
    for t in left:
        t.join(5000)
    assert not left, f"{len(left)} run thread(s) left running"


@pytest.fixture
def window(qtbot, tmp_path):
    from ui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings, preset=SMALL)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.close()
    active = [t for t in w.findChildren(QTimer) if t.isActive()]
    assert not active, f"timers still running after close: {[t.parent() for t in active]}"
    assert not w.session.running
