"""Opens the desktop app with the command line's options (``main.py`` calls :func:`launch` without --headless)."""

from __future__ import annotations

import math
import os
import signal
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.cli import DesktopOptions, fail
from app.config import ConfigError, RunConfig

from .main_window import RESOURCES, MainWindow, default_settings


def missing_display(environ=None, platform: str | None = None) -> str | None:
    """Why no window can open here, or None. On Linux and the BSDs Qt needs an X11 or Wayland display (or a
    platform chosen with QT_QPA_PLATFORM, such as offscreen); without one it aborts the process inside its
    plugin loader, so the launcher asks first."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen and not chosen.startswith(("xcb", "wayland")):
        return None
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    return ("there is no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
            "`python main.py --headless` trains without a window")


def launch(options: DesktopOptions) -> int:
    """Open the window, preset with ``options``; returns the exit code (2 for a preset that is not valid, or no
    display to open it on)."""
    why = None if QApplication.instance() else missing_display()
    if why:
        return fail(why)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("gradscope")
    app.setOrganizationName("gradscope")
    style = RESOURCES / "style.qss"
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    window = MainWindow(default_settings())
    base = window.controls.raw_config()  # the last session's settings, where they are valid
    preset = options.run.apply(base if math.isfinite(base.lr) else RunConfig())
    try:
        preset.validated()
    except ConfigError as exc:
        window.shutdown()
        return fail(str(exc))
    window.controls.set_config(preset)
    window.show()
    window.restore_session()  # the last session's runs come back (read in the log reader's thread)

    screenshot = options.screenshot
    exit_code = {"code": 0}

    def take_screenshot():
        window.plot.redraw(force=True)
        if not window.grab().save(str(screenshot)):
            print(f"main.py: error: could not write {screenshot}", file=sys.stderr)
            exit_code["code"] = 1
        window.close()
        app.exit(exit_code["code"])

    if options.script is not None:  # a learner's own script: it starts at once; the picture when it ends
        QTimer.singleShot(200, lambda: window.open_script(str(options.script)))
        if screenshot:
            window.on_run_finished.append(lambda result: QTimer.singleShot(400, take_screenshot))
    elif screenshot:
        if options.start:  # the run, then its gradient check (in a worker), then the picture
            window.on_run_finished.append(lambda result: window.check_gradients())
            window.gradients_done.connect(lambda report: QTimer.singleShot(400, take_screenshot))
        else:
            QTimer.singleShot(1200, take_screenshot)
    if options.start and options.script is None:
        QTimer.singleShot(200, window.start_run)
    # Ctrl+C in the terminal closes the window the normal way (stop, join, keep the log); Python only sees
    # the signal when it runs, so a timer wakes it a few times a second
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # SIGTERM and SIGHUP too: a logout must not lose the run's log
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda *_: window.close())
    wake = QTimer()
    wake.timeout.connect(lambda: None)
    wake.start(250)
    code = app.exec()
    wake.stop()
    return exit_code["code"] if screenshot else code
