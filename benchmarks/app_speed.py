"""The app against the headless runner: steps per second of the same run, and how long the GUI's event loop
waits while a run goes on (a 5 ms timer measures its own lateness). Offscreen Qt; no window is shown."""

from __future__ import annotations

import os
import statistics
import time

from app.config import RunConfig
from app.runner import Runner


def headless_rate(config: RunConfig) -> float:
    result = Runner(config).run(lambda batch: None)
    return result.steps_done / result.log.elapsed_s[-1]


def app_rate_and_latency(config: RunConfig, probe: bool = True) -> tuple[float, list[float]]:
    """Steps/s of the run in the app and, with ``probe``, the event loop's lateness (a 5 ms timer; it wakes
    the GUI thread 200 times a second, which itself costs the worker some speed: measure speed without it)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")  # the offscreen plugin's size-hint notices
    from PySide6.QtCore import QEventLoop, QSettings, QTemporaryDir, QTimer, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from ui.main_window import MainWindow

    # the offscreen platform notes every window it cannot size-hint; not news here
    qInstallMessageHandler(lambda mode, context, text: None if "propagateSizeHints" in text else print(text))
    QApplication.instance() or QApplication([])  # the window needs one; the loop below runs it
    folder = QTemporaryDir()
    window = MainWindow(QSettings(folder.filePath("bench.ini"), QSettings.IniFormat), preset=config)
    window.show()
    lateness: list[float] = []
    tick = {"t": None}
    timer = QTimer()
    timer.setInterval(5)

    def on_tick():
        now = time.perf_counter()
        if tick["t"] is not None:
            lateness.append((now - tick["t"]) * 1e3 - 5.0)
        tick["t"] = now

    timer.timeout.connect(on_tick)
    done = {}
    loop = QEventLoop()
    window.on_run_finished.append(lambda result: (done.setdefault("result", result), loop.quit()))
    if probe:
        timer.start()
    window.start_run()
    loop.exec()  # the app's own event loop, as a user runs it
    timer.stop()
    result = done["result"]
    window.shutdown()
    window.close()
    return result.steps_done / result.log.elapsed_s[-1], lateness


def measure(quick: bool = False) -> dict:
    iters = 200 if quick else 3000
    config = RunConfig(recipe="autograd", iters=iters)
    rates_headless, rates_app, lateness = [], [], []
    for _ in range(1 if quick else 5):  # interleaved; this measure is noisy on a small machine
        rates_headless.append(headless_rate(config))
        rates_app.append(app_rate_and_latency(config, probe=False)[0])
        lateness.extend(app_rate_and_latency(config, probe=True)[1])
    lateness.sort()
    headless, in_app = statistics.median(rates_headless), statistics.median(rates_app)
    return {
        "config": config.to_dict(),
        "headless_steps_per_s": headless,
        "app_steps_per_s": in_app,
        "app_vs_headless": in_app / headless,
        "event_loop_lateness_ms": {
            "median": lateness[len(lateness) // 2] if lateness else None,
            "p99": lateness[int(len(lateness) * 0.99)] if lateness else None,
            "max": lateness[-1] if lateness else None,
            "ticks": len(lateness),
        },
    }
