"""The app against the headless runner: steps per second of the same run, and how long the GUI's event loop
waits while a run goes on (a 5 ms timer measures its own lateness). Offscreen Qt; no window is shown.

One window serves every round. A round runs the configuration headless (the runner in this thread, the
window idle), then in the app (Start, the worker's QThread, the live plot), and keeps the ratio of the two.
On a small shared machine the speed drifts by ±20% over seconds; the ratio of neighbours cancels most of
that drift, and the median of many rounds the rest. The window has settled (first layout and paint) before
the first Start, as it has when a user clicks it, and each app run is the only curve on the plot."""

from __future__ import annotations

import os
import statistics
import time

from app.config import RunConfig
from app.runner import Runner


def headless_rate(config: RunConfig) -> float:
    result = Runner(config, dynamics=True).run(lambda batch: None)  # as main.py --headless and the app run it
    return result.steps_done / result.log.elapsed_s[-1]


class AppHarness:
    """The real main window, offscreen, with a way to run one configuration in it and wait for the end."""

    def __init__(self, config: RunConfig):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")  # the offscreen plugin's size-hint notices
        from PySide6.QtCore import QSettings, QTemporaryDir, qInstallMessageHandler
        from PySide6.QtWidgets import QApplication

        from ui.main_window import MainWindow

        qInstallMessageHandler(lambda mode, context, text: None if "propagateSizeHints" in text else print(text))
        QApplication.instance() or QApplication([])  # the window needs one; run() below runs its loop
        self.folder = QTemporaryDir()
        self.window = MainWindow(QSettings(self.folder.filePath("bench.ini"), QSettings.IniFormat), preset=config)
        self.window.show()
        self.wait(500)

    @staticmethod
    def wait(ms: int) -> None:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def run(self, probe: bool = False) -> tuple[float, list[float]]:
        """Start, then the app's own event loop until the run ends. Returns steps/s and, with ``probe``, the
        event loop's lateness (a 5 ms timer, which itself wakes the GUI thread 200 times a second and so
        costs the worker some speed: speed is measured without it)."""
        from PySide6.QtCore import QEventLoop, QTimer

        window = self.window
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

        def finished(result):
            done["result"] = result
            loop.quit()

        window.on_run_finished.append(finished)
        if probe:
            timer.start()
        window.start_run()
        loop.exec()
        timer.stop()
        window.on_run_finished.remove(finished)
        window.delete_runs([window.session.run_key])  # the next run is again the only curve
        result = done["result"]
        return result.steps_done / result.log.elapsed_s[-1], lateness

    def close(self) -> None:
        self.window.shutdown()
        self.window.close()


def measure(quick: bool = False) -> dict:
    config = RunConfig(recipe="autograd", iters=200 if quick else 1500)
    harness = AppHarness(config)
    try:
        rates_headless, rates_app, ratios, lateness = [], [], [], []
        for _ in range(1 if quick else 15):
            rates_headless.append(headless_rate(config))
            rates_app.append(harness.run()[0])
            ratios.append(rates_app[-1] / rates_headless[-1])
        for _ in range(1 if quick else 3):
            lateness.extend(harness.run(probe=True)[1])
    finally:
        harness.close()
    lateness.sort()
    ratios.sort()
    return {
        "config": config.to_dict(),
        "headless_steps_per_s": statistics.median(rates_headless),
        "app_steps_per_s": statistics.median(rates_app),
        "app_vs_headless": statistics.median(ratios),  # the median of the rounds' ratios
        "app_vs_headless_rounds": ratios,
        "event_loop_lateness_ms": {
            "median": lateness[len(lateness) // 2] if lateness else None,
            "p99": lateness[int(len(lateness) * 0.99)] if lateness else None,
            "max": lateness[-1] if lateness else None,
            "ticks": len(lateness),
        },
    }
