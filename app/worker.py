"""The one Qt adapter of ``app``: runs a :class:`~app.runner.Runner` in a QThread.

Signals (past tense, superqt style) carry host data only: ``yielded`` a :class:`~app.runner.Batch` of
NumPy arrays (at most 20 a second: each delivery wakes the GUI thread, which then holds the GIL the run
needs), ``finished`` the :class:`~app.runner.RunResult`, ``errored`` a text.
No CuPy array ever crosses a signal. The worker selects its CUDA device in its own thread.
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QObject, QThread, Signal, Slot

from .config import RunConfig
from .runner import Runner


class RunWorker(QObject):
    started = Signal()
    yielded = Signal(object)  # Batch
    finished = Signal(object)  # RunResult
    errored = Signal(str)

    def __init__(self, config: RunConfig, emit_s: float = 1 / 20, start_paused: bool = False):
        super().__init__()
        self.config = config
        self.emit_s = emit_s
        self.runner = Runner(config)
        self.result = None
        if start_paused:
            self.runner.pause()

    @Slot()
    def run(self) -> None:
        self.started.emit()
        try:
            if self.config.device.startswith("cuda"):
                import engine

                engine.cuda.set_device(self.config.device)  # per thread: this worker's own device
            self.result = self.runner.run(self.yielded.emit, self.emit_s)
        except Exception as exc:  # the runner reports its own failures; this is a last resort
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.finished.emit(self.result)

    # controls, callable from the GUI thread (the runner's flags are thread-safe)
    def pause(self) -> None:
        self.runner.pause()

    def resume(self) -> None:
        self.runner.resume()

    def step(self) -> None:
        self.runner.step_once()

    def stop(self) -> None:
        self.runner.stop()


_live: weakref.WeakSet = weakref.WeakSet()


def running_threads() -> list:
    """RunThreads whose QThread is still running (tests fail when one is left behind)."""
    return [t for t in list(_live) if t.is_running()]


class RunThread:
    """Owns a worker and its QThread; :meth:`join` stops the run and waits for the thread to end."""

    def __init__(self, config: RunConfig, start_paused: bool = False):
        _live.add(self)
        self.thread = QThread()
        self.thread.setObjectName(f"run-{config.recipe}")
        self.worker = RunWorker(config, start_paused=start_paused)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.finished.connect(self.thread.quit)

    def start(self) -> None:
        self.thread.start()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def join(self, timeout_ms: int = 10_000) -> bool:
        self.worker.stop()
        self.worker.resume()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
